"""The airline's writes to a reservation: cancel it, change its flights or cabin, add bags, change passengers, and
compensate a disruption with a certificate. Each runs inside the unit of work (a dry run is the same code without
the commit), checks the policy first (``checks``: nothing is written when one refuses), then writes tau2's effects
exactly, and returns ``(message, data, money)``: money seen from the traveller, a refund or credit positive and a
charge negative (``(message, data)`` where no money moves). The message says the whole change: a confirmation shows it.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from apis.airline import args as a
from apis.airline import checks as c
from apis.airline.reads import own_reservation
from apis.airline.uow import AirlineUnitOfWork
from apis.airline.views import reservation_view, usd
from chops.domain.outcomes import Said
from chops.i18n import N_

# How a reply names a reason and a cabin: words of the pack's catalog, said in the customer's language.
REASONS = {"change_of_plan": N_("change of plan"), "airline_cancelled": N_("flight cancelled by the airline"),
           "health": N_("health"), "weather": N_("weather"), "other": N_("other reason")}
CABIN_WORDS = {"basic_economy": N_("basic economy"), "economy": N_("economy"), "business": N_("business")}

Row = dict[str, Any]
ZERO = Decimal(0)
CERTIFICATE_BASE = 3221322  # the ids tau2 gives the certificates it sends: certificate_3221322, …323, …324


def methods_of(uow: AirlineUnitOfWork, actor: Row) -> dict[str, Row]:
    """The traveller's payment methods by id (locked in a write unit of work)."""
    return {m["payment_id"]: m for m in uow.payment_methods.of_user(actor["user_id"])}


def new_leg(uow: AirlineUnitOfWork, ref: a.FlightRef, cabin: str, passengers: int) -> tuple[Row, Row]:
    """``(the reservation's flight, its flight date)`` for a flight booked anew at today's fare of ``cabin``, once
    ``checks.bookable`` allows it."""
    day = uow.flights.date(ref.flight_number, ref.date)
    c.bookable(day, ref.flight_number, ref.date, cabin, passengers)
    return ({"flight_number": day["flight_number"], "date": day["date"], "origin": day["origin"],
             "destination": day["destination"], "price": day[f"price_{cabin}"]}, day)


def settle(uow: AirlineUnitOfWork, reservation: Row, method: Row, amount: Decimal) -> str:
    """Charge ``amount`` (negative: refund it) to ``method`` for a change: a payment entry when it is not zero, and a
    gift card's balance moved at once both ways (tau2's rule). What the message says of it."""
    if not amount:
        return N_("nothing to pay")
    uow.reservations.add_payment(reservation, method["payment_id"], amount)
    said = f"{usd(abs(amount))} {'charged to' if amount > 0 else 'refunded to'} {method['payment_id']}"
    if method["source"] == "gift_card":
        uow.payment_methods.set_amount(method, method["amount"] - amount)
        said += f" (it now holds {usd(method['amount'])})"
    return said


def cancel_reservation(uow: AirlineUnitOfWork, actor: Row, args: a.CancelArgs) -> tuple[str, Row, Decimal]:
    """Cancel a whole reservation the policy allows cancelling; every payment is refunded to its method."""
    r = own_reservation(uow, actor, args.reservation_id)
    c.not_cancelled(r)
    statuses = uow.flights.statuses(r["flights"])
    c.nothing_flown(r, statuses, cancelling=True)
    why = c.may_cancel(r, statuses, args.reason, c.now())
    paid = list(r["payments"])
    for p in paid:  # tau2 reverses every entry of the history, refunds of earlier changes included
        uow.reservations.add_payment(r, p["payment_id"], -p["amount"])
    uow.reservations.update(r, {"status": "cancelled"})
    refund = sum((p["amount"] for p in paid), ZERO)
    to = "; ".join(f"{usd(p['amount'])} to {p['payment_id']}" for p in paid if p["amount"]) or "nothing was paid"
    return (Said(N_("Reservation {reservation_id} is cancelled ({why}; reason: {reason}). Refund of {refund}: {to}, to "
                    "the original payment methods within 5 to 7 business days."),
                 reservation_id=r["reservation_id"], why=why, reason=REASONS[args.reason], refund=usd(refund), to=to),
            reservation_view(r, statuses), refund)


def update_reservation_flights(uow: AirlineUnitOfWork, actor: Row, args: a.UpdateFlightsArgs
                               ) -> tuple[str, Row, Decimal | None]:
    """Change a reservation's flights or cabin (same origin, destination and trip type); a kept flight keeps its
    fare unless the cabin changes, a new one costs today's fare, and the difference is paid or refunded."""
    r = own_reservation(uow, actor, args.reservation_id)
    c.not_cancelled(r)
    statuses = uow.flights.statuses(r["flights"])
    cabin_changes = args.cabin != r["cabin"]
    if cabin_changes:
        c.nothing_flown(r, statuses, cancelling=False)
    refs = [{"flight_number": f.flight_number, "date": f.date} for f in args.flights]
    c.flights_changeable(r, refs)
    c.flown_kept(r, statuses, refs)
    pax = len(r["passengers"])
    legs = []
    for ref in args.flights:
        kept = next((f for f in r["flights"] if (f["flight_number"], f["date"]) == (ref.flight_number, ref.date)),
                    None)
        legs.append({k: kept[k] for k in ("flight_number", "date", "origin", "destination", "price")}
                    if kept is not None and not cabin_changes else new_leg(uow, ref, args.cabin, pax)[0])
    c.same_trip(r["origin"], r["destination"], r["flight_type"], legs)
    method = c.change_method(methods_of(uow, actor), args.payment_id)
    difference = (sum((f["price"] for f in legs), ZERO) - sum((f["price"] for f in r["flights"]), ZERO)) * pax
    c.covers(method, difference)
    delayed = any(statuses.get((f["flight_number"], f["date"])) == "delayed" for f in r["flights"])
    paid = settle(uow, r, method, difference)
    uow.reservations.replace_flights(r, legs)
    uow.reservations.update(r, {"cabin": args.cabin, **({"delay_rebooked": True} if delayed else {})})
    flights = ", ".join(f"{f['flight_number']} on {f['date']} ({usd(f['price'])})" for f in legs)
    return (Said(N_("Reservation {reservation_id} now flies {cabin}: {flights}, for {passengers} passenger(s); "
                    "{paid}."), reservation_id=r["reservation_id"], cabin=CABIN_WORDS[args.cabin], flights=flights,
                 passengers=pax, paid=paid), reservation_view(r), -difference or None)


def update_reservation_baggages(uow: AirlineUnitOfWork, actor: Row, args: a.BaggageArgs
                                ) -> tuple[str, Row, Decimal | None]:
    """Add checked bags: those over the free allowance (membership x cabin, per passenger) cost $50 each."""
    r = own_reservation(uow, actor, args.reservation_id)
    c.not_cancelled(r)
    c.bags_added(r, args.total_baggages)
    allowance = c.free_bags(actor["membership"], r["cabin"], len(r["passengers"]))
    free_left = max(0, allowance - (r["total_baggages"] - r["nonfree_baggages"]))
    added = args.total_baggages - r["total_baggages"]
    nonfree = c.nonfree_bags(args.nonfree_baggages, r["nonfree_baggages"] + max(0, added - free_left))
    method = c.change_method(methods_of(uow, actor), args.payment_id)
    fee = c.BAG_FEE * (nonfree - r["nonfree_baggages"])
    c.covers(method, fee)
    paid = settle(uow, r, method, fee)
    uow.reservations.update(r, {"total_baggages": args.total_baggages, "nonfree_baggages": nonfree})
    return (Said(N_("Reservation {reservation_id} now has {bags} checked bag(s), {paid_bags} of them paid (free "
                    "allowance {allowance}); {paid}."), reservation_id=r["reservation_id"], bags=args.total_baggages,
                 paid_bags=nonfree, allowance=allowance, paid=paid), reservation_view(r), -fee or None)


def update_reservation_passengers(uow: AirlineUnitOfWork, actor: Row, args: a.PassengersArgs) -> tuple[str, Row]:
    """Replace a reservation's passengers by as many others."""
    r = own_reservation(uow, actor, args.reservation_id)
    c.not_cancelled(r)
    c.same_passenger_count(r, len(args.passengers))
    uow.reservations.replace_passengers(r, [p.model_dump() for p in args.passengers])
    names = ", ".join(f"{p.first_name} {p.last_name} ({p.dob})" for p in args.passengers)
    return (Said(N_("Reservation {reservation_id}'s passengers are now {names}."), reservation_id=r["reservation_id"],
                 names=names), reservation_view(r))


def send_certificate(uow: AirlineUnitOfWork, actor: Row, args: a.CertificateArgs) -> tuple[str, Row, Decimal]:
    """Compensate a cancelled or delayed flight of a reservation with a travel certificate of the policy's amount."""
    r = own_reservation(uow, actor, args.reservation_id)
    statuses = uow.flights.statuses(r["flights"])
    amount = c.compensation(actor, r, statuses, args.disruption,
                            uow.reservations.compensated(r["reservation_id"]))
    held = methods_of(uow, actor)
    payment_id = next(f"certificate_{n}" for n in range(CERTIFICATE_BASE, CERTIFICATE_BASE + len(held) + 1)
                      if f"certificate_{n}" not in held)
    uow.payment_methods.add_certificate(actor["user_id"], payment_id, amount)
    uow.reservations.compensate(r, args.disruption, payment_id, amount)
    return (Said(N_("A travel certificate {certificate} of {amount} ({each} for each of {passengers} passenger(s), "
                    "for the {disruption} flight of reservation {reservation_id}) is added to your payment methods."),
                 certificate=payment_id, amount=usd(amount), each=usd(c.COMPENSATION[args.disruption]),
                 passengers=len(r["passengers"]), disruption=args.disruption, reservation_id=r["reservation_id"]),
            {"certificate": payment_id, "amount": float(amount), "reservation_id": r["reservation_id"]}, amount)
