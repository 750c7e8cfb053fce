"""The support desk around the agent (DESIGN.md "Around the agent"): conversation states, the event
log, staff presence, the staff queue and the wake-ups of the widget's event stream."""

from chops.desk.hub import EventHub
from chops.desk.presence import Presence
from chops.desk.states import HELD_STATES, Desk, DeskError, State

__all__ = ["HELD_STATES", "Desk", "DeskError", "EventHub", "Presence", "State"]
