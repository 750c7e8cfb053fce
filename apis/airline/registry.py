"""The airline's operations: the pack's one registry. tau2's names; every write is confirmed by the traveller before
it commits (``confirm``), every read is a look-up the executor reads before its next step (``observe``).
``transfer_to_human_agents`` is not here: the agent's hand-off route does that."""

from __future__ import annotations

from apis.airline import args as a
from apis.airline import booking as b
from apis.airline import reads as r
from apis.airline import writes as w
from chops.domain.calc import calculate_operation
from chops.domain.operations import Operation
from chops.i18n import N_

# What each operation does, as the traveller would say it (``Operation.title``: a confirmation's lines, "Not done: …").
TITLES = {
    "get_user_details": N_("look up your profile"),
    "get_reservation_details": N_("look up your reservation"),
    "get_flight_status": N_("check a flight's status"),
    "search_direct_flight": N_("search direct flights"),
    "search_onestop_flight": N_("search one-stop flights"),
    "list_all_airports": N_("list our airports"),
    "calculate": N_("calculate"),
    "book_reservation": N_("book a trip"),
    "cancel_reservation": N_("cancel your reservation"),
    "update_reservation_flights": N_("change your flights or cabin"),
    "update_reservation_baggages": N_("add checked bags"),
    "update_reservation_passengers": N_("change the passengers"),
    "send_certificate": N_("compensate you with a travel certificate"),
}

# The look-ups whose results a write's arguments come from (``Operation.needs``): the reservation (its flights,
# passengers, payments), the profile (reservation ids, payment methods, membership) and, for new flights, a search.
RESERVATION = ("get_reservation_details", "get_user_details")
NEW_FLIGHTS = (*RESERVATION, "search_direct_flight", "search_onestop_flight")


def _read(name: str, description: str, args: type, run) -> Operation:
    return Operation(name, description, args, writes=False, admin_only=False, run=run, observe=True,
                     title=TITLES[name])


def _write(name: str, description: str, args: type, run, needs: tuple[str, ...]) -> Operation:
    # Each write's message names the flights, passengers, amounts and payment methods: a confirmation shows it.
    return Operation(name, description, args, writes=True, admin_only=False, run=run, confirm=True, needs=needs,
                     title=TITLES[name], tells=True)


_OPS = [
    _read("get_user_details", "Look up the traveller's own profile (membership, payment methods and balances, saved "
          "passengers, reservation ids).", a.NoArgs, r.get_user_details),
    _read("get_reservation_details", "Look up one of the traveller's reservations (flights with their status, "
          "cabin, passengers, payments, bags, insurance).", a.ReservationArgs, r.get_reservation_details),
    _read("get_flight_status", "Look up a flight's status on a date (available, on time, delayed, flying, landed, "
          "cancelled).", a.FlightStatusArgs, r.get_flight_status),
    _read("search_direct_flight", "Search bookable direct flights between two airports on a date, with seats and "
          "prices per cabin.", a.SearchArgs, r.search_direct_flight),
    _read("search_onestop_flight", "Search bookable one-stop connections between two airports on a date, with "
          "seats and prices per cabin.", a.SearchArgs, r.search_onestop_flight),
    _read("list_all_airports", "List the airports the airline flies to, with their cities.", a.NoArgs,
          r.list_all_airports),
    calculate_operation(TITLES["calculate"]),
    _write("book_reservation", "Book flights for up to five passengers, paid with the traveller's own payment "
           "methods whose amounts add up to the total.", a.BookArgs, b.book_reservation,
           ("get_user_details", "search_direct_flight", "search_onestop_flight")),
    _write("cancel_reservation", "Cancel a whole reservation where the policy allows it, with the traveller's reason; "
           "payments are refunded.", a.CancelArgs, w.cancel_reservation, RESERVATION),
    _write("update_reservation_flights", "Change the flights or the cabin class of a reservation (an upgrade is for "
           "everyone; same origin, destination and trip type); the difference is paid or refunded.",
           a.UpdateFlightsArgs,
           w.update_reservation_flights, NEW_FLIGHTS),
    _write("update_reservation_baggages", "Add checked bags to a reservation; bags over the free allowance cost $50 "
           "each.", a.BaggageArgs, w.update_reservation_baggages, RESERVATION),
    _write("update_reservation_passengers", "Change the name or date of birth of passengers of a reservation (not "
           "their number, not the cabin).",
           a.PassengersArgs, w.update_reservation_passengers, RESERVATION),
    _write("send_certificate", "Compensate a cancelled or delayed flight of a reservation with a travel certificate, "
           "only when the traveller asks for it.", a.CertificateArgs, w.send_certificate, RESERVATION),
]

OPERATIONS: dict[str, Operation] = {op.name: op for op in _OPS}
