"""What every pack's profile of a signed-in person starts from (``chops.domain.system.Profile``): their id, their name
and email; the names a request may call them by (``names``: a request naming them is about themself)."""

from __future__ import annotations

from pydantic import BaseModel


class AccountProfile(BaseModel):
    """A person's account as a pack's profile holds it; a pack's profile adds its own facts and ``describe``."""

    user_id: str
    first_name: str
    last_name: str
    email: str

    @property
    def full_name(self) -> str:
        """"First Last"."""
        return f"{self.first_name} {self.last_name}"

    @property
    def names(self) -> tuple[str, ...]:
        """The user id and the full name: a request naming either is about the person themself."""
        return (self.user_id, self.full_name)
