"""The airline's read operations. Each takes the unit of work, the acting traveller (the signed-in user, never an
argument) and its validated arguments, and returns ``(message, data)`` or raises a ``DomainError``.

Differences from tau2 on purpose: a traveller reads only their own details and reservations (another's reservation
"does not exist" for them), a one-stop search reads the next day properly when the first flight lands after
midnight, and the airport list is the airports the flights serve.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from apis.airline import args as a
from apis.airline import checks as c
from apis.airline.checks import refuse
from apis.airline.uow import AirlineUnitOfWork
from apis.airline.views import airport_view, flight_view, reservation_view, user_view
from chops.domain.outcomes import NotInSystem
from chops.i18n import N_

Row = dict[str, Any]
Reply = tuple[str, Any]
MAX_CONNECTIONS = 30  # one-stop pairs listed: the executor's prompt clips a long result anyway


class NotFound(NotInSystem):
    """A record named by id does not exist, or not for this traveller (their own reservations only)."""


def own_reservation(uow: AirlineUnitOfWork, actor: Row, reservation_id: str) -> Row:
    """The acting traveller's reservation; another traveller's is refused exactly like a missing one."""
    found = uow.reservations.get(reservation_id, actor["user_id"])
    if found is None:
        refuse(NotFound, N_("There is no reservation {reservation_id} on your account."), reservation_id=reservation_id)
    return found


def get_user_details(uow: AirlineUnitOfWork, actor: Row, args: a.NoArgs) -> Reply:
    """The traveller's own profile: name, email, membership, payment methods, saved passengers, reservations."""
    ids = [s["reservation_id"] for s in uow.reservations.summaries_of(actor["user_id"])]
    view = user_view(actor, uow.payment_methods.of_user(actor["user_id"]), uow.users.saved_passengers(actor["user_id"]),
                     ids)
    return (f"Your details: {actor['membership']} member, {len(view['payment_methods'])} payment method(s), "
            f"{len(ids)} reservation(s).", view)


def get_reservation_details(uow: AirlineUnitOfWork, actor: Row, args: a.ReservationArgs) -> Reply:
    """One of the traveller's reservations, each flight with its status."""
    found = own_reservation(uow, actor, args.reservation_id)
    view = reservation_view(found, uow.flights.statuses(found["flights"]))
    # The free checked bags, computed (membership x cabin x passengers): asked how many bags the reservation allows,
    # the 1.5B guessed a number from the counts it saw.
    view["free_baggage_allowance"] = c.free_bags(actor["membership"], found["cabin"], len(found["passengers"]))
    state = " (cancelled)" if found["status"] else ""
    return (f"Reservation {found['reservation_id']}{state}: {found['origin']} to {found['destination']}, "
            f"{found['flight_type'].replace('_', ' ')}, {found['cabin'].replace('_', ' ')}, "
            f"{len(found['passengers'])} passenger(s).", view)


def get_flight_status(uow: AirlineUnitOfWork, actor: Row, args: a.FlightStatusArgs) -> Reply:
    """A flight's status on a date, with its actual or estimated times where it has them."""
    day = uow.flights.date(args.flight_number, args.date)
    if day is None:
        refuse(NotFound, N_("There is no flight {flight} on {date}."), flight=args.flight_number, date=args.date)
    data = {"flight_number": day["flight_number"], "date": day["date"], "status": day["status"],
            **{k: day[k] for k in ("actual_departure_time_est", "actual_arrival_time_est",
                                   "estimated_departure_time_est", "estimated_arrival_time_est") if day[k]}}
    return f"Flight {day['flight_number']} on {day['date']} is {day['status']}.", data


def search_direct_flight(uow: AirlineUnitOfWork, actor: Row, args: a.SearchArgs) -> Reply:
    """The direct flights between two airports that can be booked on a date, with seats and prices per cabin."""
    found = [flight_view(f, args.date) for f in uow.flights.available(args.date, args.origin, args.destination)]
    return (f"{len(found)} direct flight(s) from {args.origin} to {args.destination} on {args.date}.",
            {"flights": found})


def search_onestop_flight(uow: AirlineUnitOfWork, actor: Row, args: a.SearchArgs) -> Reply:
    """Pairs of flights through one airport that can be booked, the second leaving after the first lands (the next
    day when the first lands after midnight), with each cabin's total price."""
    onward: dict[tuple[str, str], list[Row]] = {}  # (day, airport) -> its bookable flights to the destination
    pairs = []
    for first in uow.flights.available(args.date, args.origin):
        if first["destination"] == args.destination:
            continue  # a direct flight
        arrival = first["scheduled_arrival_time_est"]
        day = _next_day(args.date) if arrival.endswith("+1") else args.date
        key = (day, first["destination"])
        if key not in onward:
            onward[key] = uow.flights.available(day, first["destination"], args.destination)
        for second in onward[key]:
            if second["scheduled_departure_time_est"] >= arrival.removesuffix("+1"):
                legs = [flight_view(first, args.date), flight_view(second, day)]
                pairs.append({"flights": legs, "total_prices": {c: legs[0]["prices"][c] + legs[1]["prices"][c]
                                                                for c in legs[0]["prices"]}})
    shown = pairs[:MAX_CONNECTIONS]
    more = f" (the first {len(shown)} listed)" if len(pairs) > len(shown) else ""
    return (f"{len(pairs)} one-stop connection(s) from {args.origin} to {args.destination} on {args.date}{more}.",
            {"connections": shown})


def list_all_airports(uow: AirlineUnitOfWork, actor: Row, args: a.NoArgs) -> Reply:
    """Every airport the airline flies to, with its city."""
    airports = [airport_view(code) for code in uow.flights.airports()]
    return f"{len(airports)} airports.", {"airports": airports}


def _next_day(day: str) -> str:
    return (dt.date.fromisoformat(day) + dt.timedelta(days=1)).isoformat()
