"""The signed-in traveller's profile ("basic info"): what the agent may know of them without an operation."""

from __future__ import annotations

from typing import Any

from apis.airline.uow import AirlineUnitOfWork
from apis.airline.views import method_view, person, route_text, usd
from chops.domain.profile import AccountProfile


class AirlineProfile(AccountProfile):
    """A traveller: name, email, date of birth, membership, payment methods, saved passengers, and each reservation
    in brief (``overview``: route, trip type, cabin, its flights' numbers and dates, cancelled or not), so "my trip to
    Denver" names its reservation without reading them all."""

    dob: str
    membership: str
    payment_methods: list[dict[str, Any]]  # method_view rows: id, source, balance or card
    saved_passengers: list[dict[str, str]]
    reservations: list[str]
    overview: list[dict[str, Any]] = []  # ReservationRepository.summaries_of rows, in the order of ``reservations``

    def describe(self) -> str:
        """A compact plain-text rendering for prompts (one fact per line)."""
        methods = [f"{m['id']} ({m['source'].replace('_', ' ')}, {_detail(m)})" for m in self.payment_methods]
        return "\n".join([
            f"Name: {self.full_name} (user id {self.user_id}), born {self.dob}",
            f"Email: {self.email}",
            f"Membership: {self.membership}",
            f"Payment methods: {'; '.join(methods) or 'none'}",
            f"Saved passengers: {', '.join(_person_text(p) for p in self.saved_passengers) or 'none'}",
            f"Reservations (oldest first): {self._reservations_text() or 'none'}",
        ])

    def _reservations_text(self) -> str:
        """``ZFA04Y (JFK → SFO, round trip, economy: HAT023 2024-05-26, HAT100 2024-05-28); …``."""
        parts = []
        for r in self.overview:
            flights = ", ".join(f"{f['flight_number']} {f['date']}" for f in r["flights"])
            state = ", cancelled" if r["status"] else ""
            parts.append(f"{r['reservation_id']} ({route_text(r)}{state}: {flights})")
        return "; ".join(parts) if self.overview else ", ".join(self.reservations)

    def lookup_data(self) -> dict[str, Any]:
        """The profile as ``get_user_details`` would return it (reservation ids, ``payment_methods.id``), with each
        reservation's route and flights (``trips``): the grammar offers its ids (``chops.pipeline.choices``)."""
        return {**self.model_dump(exclude={"overview"}), "trips": self.overview}

    def grounding_values(self) -> tuple[str, ...]:
        """Values an argument may take though the traveller never typed them: their reservation ids and payment
        method ids (a look-up already made), and their saved passengers' names and dates of birth (a booking for
        "my wife, as saved" takes them)."""
        saved = [v for p in self.saved_passengers for v in p.values()]
        return (*self.reservations, *(m["id"] for m in self.payment_methods), *dict.fromkeys(saved))


def _detail(method: dict[str, Any]) -> str:
    """A gift card's or certificate's balance, a card's brand and last digits."""
    return f"balance {usd(method['balance'])}" if "balance" in method else method.get("card", "")


def _person_text(p: dict[str, str]) -> str:
    return f"{p['first_name']} {p['last_name']} ({p['dob']})"


def load_profile(uow: AirlineUnitOfWork, user_id: str) -> AirlineProfile | None:
    """The traveller's profile from four indexed look-ups; ``None`` = not a traveller of the airline."""
    found = uow.users.get(user_id)
    if found is None:
        return None
    trips = uow.reservations.summaries_of(user_id)
    return AirlineProfile(**{k: found[k] for k in ("user_id", "first_name", "last_name", "email", "dob", "membership")},
                          payment_methods=[method_view(m) for m in uow.payment_methods.of_user(user_id)],
                          saved_passengers=[person(p) for p in uow.users.saved_passengers(user_id)],
                          reservations=[r["reservation_id"] for r in trips], overview=trips)
