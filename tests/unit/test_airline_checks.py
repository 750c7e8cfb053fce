"""Each of the airline policy's checks (``apis.airline.checks``), on the made-up demo airline: what it refuses, in the
words of the pack's catalog, and what it lets through. Fares of the demo: economy = base + 3 x day of May, basic
economy 40 less, business three times economy."""

from __future__ import annotations

import datetime as dt

import pytest

from apis.airline import checks
from apis.airline.checks import free_bags
from chops.domain.outcomes import PreconditionFailed
from tests.unit.airline_support import AVA, BO, CY, demo_airline

AVA_HIMSELF = [{"first_name": "Ava", "last_name": "Marchetti", "dob": "1985-02-11"}]


@pytest.fixture
def api(sqlite_url):
    engine, api = demo_airline(sqlite_url)
    yield api
    engine.dispose()


def trip(**changes) -> dict:
    """Ava's booking of DEM101 (BOS → ORD) on May 17 in economy, $171, paid with a certificate and a gift card."""
    args = {"origin": "BOS", "destination": "ORD", "flight_type": "one_way", "cabin": "economy",
            "flights": [{"flight_number": "DEM101", "date": "2024-05-17"}], "passengers": AVA_HIMSELF,
            "payment_methods": [{"payment_id": "certificate_ava", "amount": 150},
                                {"payment_id": "gift_card_ava", "amount": 21}],
            "total_baggages": 0, "insurance": "no"}
    return {**args, **changes}


def refused(result, words: str) -> None:
    assert not result.outcome.succeeded and not result.committed and words in result.message, result.message


def test_a_traveller_sees_and_changes_only_their_own_reservations(api):
    refused(api.call("get_reservation_details", AVA, {"reservation_id": "DMRCNT"}),
            "There is no reservation DMRCNT on your account.")
    refused(api.call("cancel_reservation", AVA, {"reservation_id": "DMRCNT", "reason": "other"}), "no reservation")
    assert api.call("get_reservation_details", BO, {"reservation_id": "dmrcnt"}).outcome == "ok"  # codes upper-cased


def test_not_cancelled(api):
    assert api.call("cancel_reservation", BO, {"reservation_id": "DMRCNT", "reason": "change_of_plan"}).committed
    refused(api.call("cancel_reservation", BO, {"reservation_id": "DMRCNT", "reason": "change_of_plan"}),
            "Reservation DMRCNT is already cancelled.")
    refused(api.call("update_reservation_passengers", BO, {"reservation_id": "DMRCNT", "passengers": AVA_HIMSELF}),
            "already cancelled")


def test_nothing_flown(api):
    refused(api.call("cancel_reservation", AVA, {"reservation_id": "DMFLWN", "reason": "health"}),
            "Reservation DMFLWN cannot be cancelled: flight DEM101 has already been flown")
    flights = [{"flight_number": "DEM101", "date": "2024-05-14"}, {"flight_number": "DEM102", "date": "2024-05-19"}]
    refused(api.call("update_reservation_flights", AVA, {"reservation_id": "DMFLWN", "cabin": "economy",
                                                         "flights": flights, "payment_id": "credit_card_ava"}),
            "The cabin of reservation DMFLWN cannot change: flight DEM101 has already been flown.")


def test_may_cancel(api):
    recent = api.call("cancel_reservation", BO, {"reservation_id": "DMRCNT", "reason": "change_of_plan"})
    assert recent.committed and "booked within 24 hours" in recent.message and recent.money == 174
    refused(api.call("cancel_reservation", BO, {"reservation_id": "DMOLDE", "reason": "change_of_plan"}),
            "it is not business, and it has no travel insurance")
    assert "cancelled by the airline" in api.call("cancel_reservation", BO, {"reservation_id": "DMBOCX",
                                                                            "reason": "other"}).message
    assert "business cabin" in api.call("cancel_reservation", CY, {"reservation_id": "DMBUSN",
                                                                  "reason": "change_of_plan"}).message
    refused(api.call("cancel_reservation", CY, {"reservation_id": "DMINSR", "reason": "change_of_plan"}),
            "its travel insurance covers only health or weather reasons, not 'change of plan'")
    insured = api.call("cancel_reservation", CY, {"reservation_id": "DMINSR", "reason": "weather"})
    assert insured.committed and "travel insurance; reason: weather" in insured.message
    refused(api.call("cancel_reservation", CY, {"reservation_id": "DMCYCX"}), "needs reason")


def test_may_cancel_counts_24_hours_from_the_booking_to_the_airlines_clock():
    booking = {"reservation_id": "X", "created_at": "2024-05-14T15:00:00", "flights": [], "cabin": "economy",
               "insurance": "no"}
    assert checks.may_cancel(booking, {}, "other", checks.now()) == "booked within 24 hours"
    with pytest.raises(PreconditionFailed):
        checks.may_cancel({**booking, "created_at": "2024-05-14T14:59:59"}, {}, "other", checks.now())
    assert checks.now() == dt.datetime(2024, 5, 15, 15, 0)


def test_flights_changeable(api):
    moved = [{"flight_number": "DEM301", "date": "2024-05-18"}, {"flight_number": "DEM302", "date": "2024-05-20"}]
    refused(api.call("update_reservation_flights", AVA, {"reservation_id": "DMBASC", "cabin": "basic_economy",
                                                         "flights": moved, "payment_id": "credit_card_ava"}),
            "Reservation DMBASC is basic economy: its flights cannot be changed (its cabin can).")
    same = [{"flight_number": "DEM301", "date": "2024-05-17"}, {"flight_number": "DEM302", "date": "2024-05-20"}]
    upgraded = api.call("update_reservation_flights", AVA, {"reservation_id": "DMBASC", "cabin": "economy",
                                                            "flights": same, "payment_id": "credit_card_ava"})
    assert upgraded.committed and upgraded.money == -80  # 261 + 260 at today's economy fares, 441 paid


def test_flown_kept(api):
    sunday = {"flight_number": "DEM102", "date": "2024-05-19"}
    monday = {**sunday, "date": "2024-05-20"}
    refused(api.call("update_reservation_flights", AVA, {
        "reservation_id": "DMFLWN", "cabin": "business", "payment_id": "gift_card_ava",
        "flights": [{"flight_number": "DEM101", "date": "2024-05-16"}, sunday]}),
        "Flight DEM101 on 2024-05-14 has already been flown; it stays in the reservation.")
    later = api.call("update_reservation_flights", AVA, {
        "reservation_id": "DMFLWN", "cabin": "business", "payment_id": "gift_card_ava",
        "flights": [{"flight_number": "DEM101", "date": "2024-05-14"}, monday]})
    assert later.committed and later.money == -18  # the flown flight kept at its fare; (510 - 501) x 2 passengers


def test_same_trip(api):
    refused(api.call("update_reservation_flights", AVA, {
        "reservation_id": "DMECON", "cabin": "economy", "payment_id": "gift_card_ava",
        "flights": [{"flight_number": "DEM101", "date": "2024-05-18"}]}),
        "These flights (BOS-ORD) are not a one way trip from BOS to DEN.")
    via_chicago = api.call("update_reservation_flights", AVA, {
        "reservation_id": "DMECON", "cabin": "economy", "payment_id": "gift_card_ava",
        "flights": [{"flight_number": "DEM101", "date": "2024-05-18"},
                    {"flight_number": "DEM201", "date": "2024-05-18"}]})
    assert via_chicago.committed and via_chicago.money == -208  # (174 + 194 - 264) x 2 passengers
    assert "gift_card_ava (it now holds $92)" in via_chicago.message
    refused(api.call("book_reservation", AVA, trip(destination="DEN")), "not a one way trip from BOS to DEN")


def test_bookable(api):
    refused(api.call("book_reservation", BO, {**trip(origin="ORD", destination="DEN"),
                                              "flights": [{"flight_number": "DEM201", "date": "2024-05-16"}]}),
            "Flight DEM201 on 2024-05-16 cannot be booked: it is cancelled.")
    two = AVA_HIMSELF + [{"first_name": "Leo", "last_name": "Marchetti", "dob": "2012-07-30"}]
    refused(api.call("book_reservation", AVA, {**trip(origin="DEN", destination="BOS", cabin="business",
                                                      passengers=two),
                                               "flights": [{"flight_number": "DEM302", "date": "2024-05-20"}]}),
            "Flight DEM302 on 2024-05-20 has 1 business seat(s) left, fewer than the 2 passenger(s).")
    refused(api.call("book_reservation", AVA, trip(flights=[{"flight_number": "DEM101", "date": "2024-06-02"}])),
            "There is no flight DEM101 on 2024-06-02.")


def test_passenger_count(api):
    six = [{"first_name": f"P{i}", "last_name": "Marchetti", "dob": "1990-01-01"} for i in range(6)]
    refused(api.call("book_reservation", AVA, trip(passengers=six)), "A reservation has 1 to 5 passengers, not 6.")


def test_same_passenger_count(api):
    refused(api.call("update_reservation_passengers", AVA, {"reservation_id": "DMECON", "passengers": AVA_HIMSELF}),
            "Reservation DMECON has 2 passenger(s); the passengers can be changed but not their number (1 given).")
    swapped = AVA_HIMSELF + [{"first_name": "Nora", "last_name": "Marchetti", "dob": "2014-04-02"}]
    done = api.call("update_reservation_passengers", AVA, {"reservation_id": "DMECON", "passengers": swapped})
    assert done.committed and "Nora Marchetti" in done.message and done.money is None


def test_bags_added(api):
    refused(api.call("update_reservation_baggages", AVA, {"reservation_id": "DMECON", "total_baggages": 2,
                                                          "payment_id": "credit_card_ava"}),
            "Reservation DMECON has 3 checked bag(s); bags can be added but not removed (2 given).")


def test_free_bags_by_membership_and_cabin():
    table = {m: [free_bags(m, c, 1) for c in ("basic_economy", "economy", "business")]
             for m in ("regular", "silver", "gold")}
    assert table == {"regular": [0, 1, 2], "silver": [1, 2, 3], "gold": [2, 3, 4]}
    assert free_bags("gold", "economy", 2) == 6


def test_nonfree_bags_are_the_bags_over_the_allowance(api):
    refused(api.call("update_reservation_baggages", BO, {"reservation_id": "DMOLDE", "total_baggages": 2,
                                                         "nonfree_baggages": 0, "payment_id": "credit_card_bo"}),
            "0 bag(s) to pay for were given, but 1 are over the free allowance.")
    added = api.call("update_reservation_baggages", BO, {"reservation_id": "DMOLDE", "total_baggages": 2,
                                                         "payment_id": "credit_card_bo"})
    assert added.committed and added.money == -50 and "1 of them paid (free allowance 1)" in added.message
    gold = api.call("update_reservation_baggages", AVA, {"reservation_id": "DMECON", "total_baggages": 7,
                                                         "payment_id": "credit_card_ava"})
    assert gold.money == -50  # six free for two gold economy passengers
    booked = api.call("book_reservation", AVA, trip(total_baggages=5, payment_methods=[
        {"payment_id": "credit_card_ava", "amount": 271}]))
    assert booked.committed and booked.money == -271  # 171 + two bags over the three free


def test_payment_mix(api):
    refused(api.call("book_reservation", AVA, trip(payment_methods=[
        {"payment_id": "certificate_ava", "amount": 150}, {"payment_id": "certificate_ava2", "amount": 21}])),
        "at most one travel certificate, one credit card and three gift cards (2 certificate given)")
    refused(api.call("book_reservation", AVA, trip(payment_methods=[
        {"payment_id": p, "amount": a} for p, a in (("gift_card_ava", 150), ("gift_card_ava2", 10),
                                                    ("gift_card_ava3", 6), ("gift_card_ava4", 5))])),
        "(4 gift card given)")
    refused(api.call("book_reservation", AVA, trip(payment_methods=[{"payment_id": "credit_card_bo", "amount": 171}])),
            "credit_card_bo is not one of your payment methods.")
    refused(api.call("book_reservation", AVA, trip(payment_methods=[
        {"payment_id": "gift_card_ava", "amount": 100}, {"payment_id": "gift_card_ava", "amount": 71}])),
        "gift_card_ava is given twice")


def test_covers(api):
    refused(api.call("book_reservation", AVA, trip(payment_methods=[
        {"payment_id": "gift_card_ava4", "amount": 50}, {"payment_id": "credit_card_ava", "amount": 121}])),
        "gift_card_ava4 holds $5, less than the $50 it would pay.")
    refused(api.call("update_reservation_baggages", BO, {"reservation_id": "DMOLDE", "total_baggages": 2,
                                                         "payment_id": "gift_card_bo"}),
            "gift_card_bo holds $25, less than the $50 it would pay.")


def test_adds_up(api):
    refused(api.call("book_reservation", AVA, trip(insurance="yes")),
            "The payments add up to $171, but the reservation costs $201.")
    booked = api.call("book_reservation", AVA, trip())
    assert booked.committed and booked.money == -171 and "Reservation HATHAT is booked" in booked.message
    assert "certificate_ava" not in [m["id"] for m in api.profile(AVA).payment_methods]  # its $150 used up whole


def test_change_method(api):
    same = [{"flight_number": "DEM301", "date": "2024-05-17"}, {"flight_number": "DEM302", "date": "2024-05-20"}]
    refused(api.call("update_reservation_flights", AVA, {"reservation_id": "DMBASC", "cabin": "economy",
                                                         "flights": same, "payment_id": "certificate_ava"}),
            "A travel certificate cannot pay for a change")
    refused(api.call("update_reservation_flights", AVA, {"reservation_id": "DMBASC", "cabin": "economy",
                                                         "flights": same, "payment_id": "gift_card_cy"}),
            "gift_card_cy is not one of your payment methods.")


def test_compensation(api):
    refused(api.call("send_certificate", BO, {"reservation_id": "DMBOCX", "disruption": "cancelled"}),
            "No compensation is due for reservation DMBOCX")
    given = api.call("send_certificate", CY, {"reservation_id": "DMCYCX", "disruption": "cancelled"})
    assert given.committed and given.money == 200 and "certificate_3221322 of $200" in given.message
    assert {"id": "certificate_3221322", "source": "certificate", "balance": 200.0} in api.profile(CY).payment_methods
    refused(api.call("send_certificate", CY, {"reservation_id": "DMCYCX", "disruption": "cancelled"}),
            "Reservation DMCYCX was compensated already ($200).")
    refused(api.call("send_certificate", CY, {"reservation_id": "DMINSR", "disruption": "cancelled"}),
            "No flight of reservation DMINSR was cancelled by the airline.")
    refused(api.call("send_certificate", CY, {"reservation_id": "DMINSR", "disruption": "delayed"}),
            "No flight of reservation DMINSR is delayed.")
    refused(api.call("send_certificate", CY, {"reservation_id": "DMDLAY", "disruption": "delayed"}),
            "A delay is compensated only after reservation DMDLAY is changed or cancelled.")
    refused(api.call("send_certificate", CY, {"reservation_id": "DMDLAY", "disruption": "delayed", "amount": 500}),
            "Unexpected argument(s) amount")


def test_a_delay_is_compensated_after_the_change(api):
    moved = api.call("update_reservation_flights", CY, {
        "reservation_id": "DMDLAY", "cabin": "economy", "payment_id": "credit_card_cy",
        "flights": [{"flight_number": "DEM301", "date": "2024-05-17"}]})
    assert moved.committed
    given = api.call("send_certificate", CY, {"reservation_id": "DMDLAY", "disruption": "delayed"})
    assert given.committed and given.money == 50


def test_a_dry_run_checks_and_describes_but_writes_nothing(api):
    before = api.profile(AVA).model_dump()
    trial = api.call("book_reservation", AVA, trip(), dry_run=True)
    assert trial.outcome == "ok" and not trial.committed and trial.diff
    assert api.profile(AVA).model_dump() == before


def test_a_reservations_look_up_says_its_free_bag_allowance(tmp_path):
    _, api = demo_airline(f"sqlite:///{tmp_path / 'air.db'}")
    found = api.call("get_reservation_details", BO, {"reservation_id": "DMRCNT"}).data
    # A regular member: per passenger 0 / 1 / 2 free bags in basic economy / economy / business.
    per_passenger = {"basic_economy": 0, "economy": 1, "business": 2}[found["cabin"]]
    assert found["free_baggage_allowance"] == per_passenger * len(found["passengers"])
