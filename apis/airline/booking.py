"""``book_reservation``: a new reservation for the signed-in traveller, checked against the policy first (trip,
passengers, seats, bags, payment methods and their amounts), then written as tau2 writes it: the id HATHAT (then
HATHAU, HATHAV, …), ``created_at`` the airline's clock, the seats taken, gift cards debited and every certificate used
deleted whatever it did not pay (the policy: a certificate's remainder is not refundable).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from apis.airline import args as a
from apis.airline import checks as c
from apis.airline.uow import AirlineUnitOfWork
from apis.airline.views import reservation_view, usd
from apis.airline.writes import methods_of, new_leg

Row = dict[str, Any]
FIRST_ID = "HATHAT"  # tau2's first new reservation id; the next ones count on from it in letters
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def nth_id(n: int) -> str:
    """The ``n``-th new reservation id: HATHAT, HATHAU, HATHAV, … HATHAZ, HATHBA, … (six letters, as tau2's)."""
    value = 0
    for ch in FIRST_ID:
        value = value * 26 + LETTERS.index(ch)
    value += n
    out = ""
    for _ in FIRST_ID:
        value, digit = divmod(value, 26)
        out = LETTERS[digit] + out
    return out


def book_reservation(uow: AirlineUnitOfWork, actor: Row, args: a.BookArgs) -> tuple[str, Row, Decimal]:
    """Book flights for up to five passengers, paid exactly with the traveller's own payment methods."""
    pax = len(args.passengers)
    c.passenger_count(pax)
    booked = [new_leg(uow, ref, args.cabin, pax) for ref in args.flights]
    legs = [leg for leg, _ in booked]
    c.same_trip(args.origin, args.destination, args.flight_type, legs)
    methods = methods_of(uow, actor)
    c.payment_mix(methods, [p.payment_id for p in args.payment_methods])
    for p in args.payment_methods:
        c.covers(methods[p.payment_id], p.amount)
    allowance = c.free_bags(actor["membership"], args.cabin, pax)
    nonfree = c.nonfree_bags(args.nonfree_baggages, max(0, args.total_baggages - allowance))
    fares = sum((leg["price"] for leg in legs), Decimal(0)) * pax
    total = fares + (c.INSURANCE_FEE * pax if args.insurance == "yes" else 0) + c.BAG_FEE * nonfree
    c.adds_up(total, sum((p.amount for p in args.payment_methods), Decimal(0)))
    taken = uow.reservations.taken(FIRST_ID[:3])
    reservation_id = next(nth_id(n) for n in range(len(taken) + 1) if nth_id(n) not in taken)
    for p in args.payment_methods:
        method = methods[p.payment_id]
        if method["source"] == "gift_card":
            uow.payment_methods.set_amount(method, method["amount"] - p.amount)
        elif method["source"] == "certificate":
            uow.payment_methods.remove(method)
    for _, day in booked:
        uow.flights.take_seats(day, args.cabin, pax)
    reservation = uow.reservations.add(
        {"reservation_id": reservation_id, "user_id": actor["user_id"], "origin": args.origin,
         "destination": args.destination, "flight_type": args.flight_type, "cabin": args.cabin,
         "created_at": c.now().isoformat(timespec="seconds"), "total_baggages": args.total_baggages,
         "nonfree_baggages": nonfree, "insurance": args.insurance},
        legs, [p.model_dump() for p in args.passengers],
        [{"payment_id": p.payment_id, "amount": p.amount} for p in args.payment_methods])
    paid = "; ".join(f"{usd(p.amount)} with {p.payment_id}" for p in args.payment_methods)
    flights = ", ".join(f"{leg['flight_number']} on {leg['date']} ({usd(leg['price'])})" for leg in legs)
    extras = [f"insurance {usd(c.INSURANCE_FEE * pax)}"] if args.insurance == "yes" else []
    extras += [f"{nonfree} paid bag(s) {usd(c.BAG_FEE * nonfree)}"] if nonfree else []
    return (f"Reservation {reservation_id} is booked: {args.origin} to {args.destination}, "
            f"{args.flight_type.replace('_', ' ')}, {args.cabin.replace('_', ' ')}, {pax} passenger(s), {flights}; "
            f"{args.total_baggages} checked bag(s) ({allowance} free); total {usd(total)}"
            f"{' with ' + ', '.join(extras) if extras else ''}, paid {paid}.", reservation_view(reservation), -total)
