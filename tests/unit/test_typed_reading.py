"""The typed reading (chops.pipeline.read) through the agent, for a made-up business whose write takes nested records
and dates (a ferry company: a booking's legs and travellers), in English and in Chinese. Only the model is scripted."""

from __future__ import annotations

import copy
import json
import datetime as dt
from collections.abc import Collection, Sequence
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

from chops.domain.operations import Operation
from chops.domain.outcomes import (Change, DomainError, NotInSystem, OperationResult, Outcome, PlanResult,
                                   PreconditionFailed)
from chops.domain.values import kind
from chops.llm import ScriptedLLM
from chops.pipeline import Agent
from chops.settings import get_settings
from tests.unit.pipeline_support import FakeIndex, to_system, verdict
from tests.unit.test_domain_seam import Approvals

NOW = dt.datetime(2031, 7, 9, 10, 0)  # a Wednesday


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Leg(Strict):
    sailing: str = Field(description="the sailing code, e.g. 'FR12'", json_schema_extra=kind("id", from_=["sailings"]))
    day: str = Field(title="the day of the crossing", description="the day, YYYY-MM-DD",
                     json_schema_extra=kind("date"))


class Traveller(Strict):
    first_name: str = Field(title="the traveller's first name", description="first name",
                            json_schema_extra=kind("text"))
    last_name: str = Field(title="the traveller's last name", description="last name", json_schema_extra=kind("text"))


class BookArgs(Strict):
    legs: list[Leg] = Field(min_length=1, description="the crossings")
    travellers: list[Traveller] = Field(min_length=1, description="who travels")


class NoArgs(Strict):
    pass


class Born(Traveller):
    dob: str = Field(title="the traveller's date of birth", description="YYYY-MM-DD", json_schema_extra=kind("date"))


class TravellerArgs(Strict):
    booking: str = Field(description="the booking code", json_schema_extra=kind("id"))
    traveller: Born = Field(description="the traveller after the change")


class BookingArgs(Strict):
    booking: str = Field(description="the booking code", json_schema_extra=kind("id"))


class CancelArgs(Strict):
    booking: str = Field(description="the booking code", json_schema_extra=kind("id"))
    reason: Literal["change_of_plan", "health", "weather"] = Field(
        title="the reason for cancelling", description="why", json_schema_extra=kind("choice", said=True))


class Passenger(BaseModel):
    user_id: str
    names: tuple[str, ...]

    def describe(self) -> str:
        return f"Customer {self.user_id}"

    def lookup_data(self) -> dict:
        return {"user_id": self.user_id}

    def grounding_values(self) -> tuple[str, ...]:
        return ()


def list_sailings(state: dict, user: str, args: NoArgs) -> tuple[str, Any]:
    return "The sailings.", {"sailings": sorted(state["sailings"])}


class WordyCancelArgs(Strict):
    booking: str = Field(description="the booking code", json_schema_extra=kind("id"))
    reason: Literal["change_of_plan", "health", "weather"] = Field(
        title="the reason for cancelling", description="why",
        json_schema_extra=kind("choice", said=True, words={"health": ["flu", "sick", "生病"]}))


def cancel(state: dict, user: str, args: CancelArgs) -> tuple[str, Any]:
    state["bookings"].append({"cancelled": args.booking, "reason": args.reason})
    return f"Cancelled {args.booking}.", None


def get_booking(state: dict, user: str, args: BookingArgs) -> tuple[str, Any]:
    if args.booking != "BK7":
        raise NotInSystem(f"There is no booking {args.booking} on your account.")
    return "The booking.", {"booking": args.booking, "traveller": {"first_name": "Kim", "last_name": "Osei",
                                                                   "dob": "1990-02-03"}}


def change_traveller(state: dict, user: str, args: TravellerArgs) -> tuple[str, Any]:
    if args.traveller.model_dump() != {"first_name": "Kim", "last_name": "Osei", "dob": "1990-02-03"}:
        state["bookings"].append({"changed": args.booking, "traveller": args.traveller.model_dump()})
    return "Changed.", None


def book(state: dict, user: str, args: BookArgs) -> tuple[str, Any]:
    for leg in args.legs:
        if leg.sailing not in state["sailings"]:
            raise PreconditionFailed(f"There is no sailing {leg.sailing}.")
    state["bookings"].append({"user": user, **args.model_dump()})
    return f"Booked {len(args.legs)} crossing(s) for {len(args.travellers)} traveller(s).", None


class FerryApi:
    """An in-memory ``SystemApi``: sailings and bookings; plans all or nothing."""

    operations = {op.name: op for op in (
        Operation("list_sailings", "List the sailings.", NoArgs, False, False, list_sailings, observe=True),
        Operation("book_crossing", "Book crossings for travellers.", BookArgs, True, False, book, title="book"),
        Operation("cancel_booking", "Cancel a booking.", CancelArgs, True, False, cancel, title="cancel"),
        Operation("get_booking", "Look up a booking.", BookingArgs, False, False, get_booking, observe=True),
        Operation("refund_booking", "Cancel a booking for a refund.", WordyCancelArgs, True, False, cancel),
        Operation("change_traveller", "Change a booking's traveller.", TravellerArgs, True, False, change_traveller,
                  needs=("get_booking",)))}

    def __init__(self) -> None:
        self.state = {"sailings": {"FR12", "FR14"}, "bookings": [], "people": {"kim_9": ("Kim Osei",)}}

    def profile(self, user: str) -> Passenger | None:
        return Passenger(user_id=user, names=(user,)) if user == "ana_1" else None

    def people_named(self, names: Collection[str]) -> list[tuple[Any, tuple[str, ...]]]:
        return [(u, n) for u, n in self.state["people"].items() if any(x in names for x in n)]

    def call(self, name: str, user: str, args: dict, **kw: Any) -> OperationResult:
        return self.call_plan(user, [(name, args)], **kw).steps[0]

    def call_plan(self, user: str, steps: Sequence[tuple[str, dict]], *, dry_run: bool = False,
                  **kw: Any) -> PlanResult:
        work, results = copy.deepcopy(self.state), []
        for name, args in steps:
            op = self.operations[name]
            try:
                if user != "ana_1":
                    raise NotInSystem("not a customer")
                before = len(work["bookings"])
                message, data = op.run(work, user, op.args_model.model_validate(args))
                diff = [Change(table="booking", key={"n": len(work["bookings"])}, field=None, before=None,
                               after=work["bookings"][-1])] if len(work["bookings"]) > before else []
                results.append(OperationResult(operation=name, outcome=Outcome.OK if diff or not op.writes
                                               else Outcome.OK_NOOP, message=message, data=data, diff=diff,
                                               dry_run=dry_run and op.writes))
            except DomainError as exc:
                results.append(OperationResult(operation=name, outcome=exc.outcome, message=exc.message))
        commit = all(r.outcome.succeeded for r in results) and not dry_run and any(
            self.operations[n].writes for n, _ in steps)
        if commit:
            self.state = work
        return PlanResult(operation=results[0].operation, outcome=results[0].outcome, message=results[0].message,
                          diff=[c for r in results for c in r.diff], dry_run=dry_run, committed=commit,
                          steps=results)


def agent() -> tuple[Agent, FerryApi, ScriptedLLM]:
    llm, api = ScriptedLLM(), FerryApi()
    return Agent(api, llm, get_settings(), FakeIndex(), approvals=Approvals(), reading="typed",
                 clock=lambda: NOW), api, llm


def reading(operation: str, **args: Any) -> dict:
    return {"calls": [{"operation": operation, "args": args}]}


def booking(legs: Any = None, travellers: Any = None) -> dict:
    return reading("book_crossing", legs=legs, travellers=travellers)


MIRA = [{"first_name": "Mira", "last_name": "Lee"}]


def test_a_booking_in_one_message_is_read_grounded_and_committed():
    ferry, api, llm = agent()
    to_system(llm)
    llm.enqueue("executor", booking([{"sailing": "FR12", "day": "2031-07-14"}], MIRA)).enqueue("verifier", verdict(9))
    result = ferry.handle("ana_1", "Book FR12 next Monday for Mira Lee", turn_key="f:1")
    assert result.committed and api.state["bookings"][0]["legs"] == [{"sailing": "FR12", "day": "2031-07-14"}]
    prompt = next(m for role, m, _ in llm.calls if role == "executor")
    assert "2031-07-09 10:00, Wednesday" in prompt[1][1]  # the reading is told what today is
    assert "legs: list[{sailing: str, day: str}]" in prompt[0][1]  # nested records shown inline


def test_a_missing_nested_value_is_asked_for_then_filled_from_the_answer_in_chinese():
    ferry, api, llm = agent()
    to_system(llm)
    llm.enqueue("executor", booking([{"sailing": "FR14", "day": None}], MIRA))
    first = ferry.handle("ana_1", "帮我订FR14，乘客Mira Lee", turn_key="f:2")
    assert first.outcome == "refused_missing_args" and not first.committed
    assert llm.pending() == {}  # code asks: no verifier call
    assert "crossing" in first.reply  # the missing value by its own title
    assert api.state["bookings"] == []
    # The answer gives the day alone; the request keeps the sailing and the traveller.
    # An answer to the question goes back to the reading: no classifier call.
    llm.enqueue("executor", booking([{"sailing": None, "day": "2031-07-20"}], None)).enqueue("verifier", verdict(9))
    second = ferry.handle("ana_1", "7月20日", history=[first.to_record("帮我订FR14，乘客Mira Lee")],
                          turn_key="f:3")
    assert second.committed, second.reply
    assert api.state["bookings"][0]["legs"] == [{"sailing": "FR14", "day": "2031-07-20"}]
    assert api.state["bookings"][0]["travellers"] == MIRA


def test_a_day_the_customer_never_named_is_not_booked():
    ferry, api, llm = agent()
    to_system(llm)
    # The model writes a day nobody said; the check drops it and the retry is told so.
    llm.enqueue("executor", booking([{"sailing": "FR12", "day": "2031-07-15"}], MIRA))
    llm.enqueue("verifier", verdict(2, "the day is not the one the customer said"))
    to_system(llm, fresh=False)
    llm.enqueue("executor", booking([{"sailing": "FR12", "day": "2031-07-14"}], MIRA)).enqueue("verifier", verdict(9))
    result = ferry.handle("ana_1", "Book FR12 for Mira Lee on 14 July", turn_key="f:4")
    assert [b["legs"][0]["day"] for b in api.state["bookings"]] == ["2031-07-14"]
    assert result.committed


def test_a_traveller_who_is_another_customer_is_the_bookings_not_someone_else_acted_for():
    ferry, api, llm = agent()
    to_system(llm)
    kim = [{"first_name": "Kim", "last_name": "Osei"}]
    llm.enqueue("executor", booking([{"sailing": "FR12", "day": "2031-07-14"}], kim)).enqueue("verifier", verdict(9))
    result = ferry.handle("ana_1", "Book FR12 on July 14 for my friend Kim Osei", turn_key="f:5")
    assert result.committed and api.state["bookings"][0]["travellers"] == kim


def test_a_question_is_looked_up_then_answered():
    ferry, api, llm = agent()
    to_system(llm)
    llm.enqueue("executor", reading("list_sailings"))
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "Sailings FR12 and FR14 run."}]})
    llm.enqueue("verifier", verdict(9))
    result = ferry.handle("ana_1", "Which sailings are there?", turn_key="f:6")
    assert "FR12 and FR14" in result.reply and api.state["bookings"] == []
    second = [m for role, m, _ in llm.calls if role == "executor"][1]
    assert "FR14" in second[1][1]  # the look-up's result is shown to the next reading


def test_an_id_a_look_up_listed_is_chosen_among_them_not_written_freely():
    ferry, api, llm = agent()
    to_system(llm)
    llm.enqueue("executor", reading("list_sailings"))
    llm.enqueue("executor", booking([{"sailing": "FR14", "day": "2031-07-14"}], MIRA)).enqueue("verifier", verdict(9))
    ferry.handle("ana_1", "Book the Monday sailing, July 14, for Mira Lee", turn_key="f:7")
    first, second = [schema for role, _, schema in llm.calls if role == "executor"]
    assert "FR14" not in str(first.model_json_schema())  # nothing listed yet: free
    assert '"enum": ["FR12", "FR14"]' in json.dumps(second.model_json_schema())


@pytest.mark.parametrize("first, answer, reason", [
    ("Please cancel booking BK7", "I've come down with the flu", "health"),
    ("请取消预订BK7", "我生病了，去不了", "health"),
])
def test_a_choice_the_customer_must_name_is_asked_for_and_their_answer_taken_as_read(first, answer, reason):
    ferry, api, llm = agent()
    to_system(llm)
    # The model guesses a reason nobody gave: it is dropped, and the customer is asked.
    llm.enqueue("executor", reading("cancel_booking", booking="BK7", reason="change_of_plan"))
    llm.enqueue("verifier", verdict(9))
    asked = ferry.handle("ana_1", first, turn_key="f:8")
    assert asked.outcome == "refused_missing_args" and api.state["bookings"] == []
    # An answer to the question goes back to the reading: no classifier call.
    llm.enqueue("executor", reading("cancel_booking", booking=None, reason=reason)).enqueue("verifier", verdict(9))
    done = ferry.handle("ana_1", answer, history=[asked.to_record(first)], turn_key="f:9")
    assert done.committed and api.state["bookings"] == [{"cancelled": "BK7", "reason": reason}]


def test_a_request_the_pack_refuses_is_answered_with_its_refusal_not_read_again():
    ferry, api, llm = agent()
    to_system(llm)
    llm.enqueue("executor", booking([{"sailing": "FR99", "day": "2031-07-14"}], MIRA)).enqueue("verifier", verdict(8))
    result = ferry.handle("ana_1", "Book FR99 on July 14 for Mira Lee", turn_key="f:10")
    assert "There is no sailing FR99" in result.reply and api.state["bookings"] == []
    assert [role for role, _, _ in llm.calls].count("executor") == 1 and llm.pending() == {}


@pytest.mark.parametrize("first, then", [
    ("Book FR14 for Mira Lee", "Never mind the booking, which sailings are there?"),
    ("帮我订FR14，乘客Mira Lee", "先不订了，有哪些航班？"),
])
def test_a_message_that_answers_nothing_asked_is_read_as_a_new_request(first, then):
    ferry, api, llm = agent()
    to_system(llm)
    llm.enqueue("executor", booking([{"sailing": "FR14", "day": None}], MIRA))
    asked = ferry.handle("ana_1", first, turn_key="f:11")
    # An answer to the question goes back to the reading: no classifier call.
    # Shown the request so far, the model repeats it with nothing new: the message is read again without it.
    llm.enqueue("executor", booking(None, None)).enqueue("executor", reading("list_sailings"))
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "FR12 and FR14."}]})
    llm.enqueue("verifier", verdict(9))
    result = ferry.handle("ana_1", then, history=[asked.to_record(first)], turn_key="f:12")
    assert result.reply == "FR12 and FR14." and api.state["bookings"] == []
    prompts = [m[1][1] for role, m, _ in llm.calls if role == "executor"]
    assert "Request so far" in prompts[1] and "Request so far" not in prompts[2]


def test_the_same_look_up_again_makes_the_next_reading_answer():
    ferry, api, llm = agent()
    to_system(llm)
    llm.enqueue("executor", reading("list_sailings")).enqueue("executor", reading("list_sailings"))
    llm.enqueue("executor", {"calls": [{"operation": "AnswerDirectly", "answer": "FR12 and FR14 sail."}]})
    llm.enqueue("verifier", verdict(9))
    result = ferry.handle("ana_1", "what sails this week?", turn_key="f:13")
    assert result.reply == "FR12 and FR14 sail."
    third = [schema for role, _, schema in llm.calls if role == "executor"][2]
    offered = json.dumps(third.model_json_schema())
    assert "list_sailings" not in offered and "book_crossing" not in offered  # the answer alone


@pytest.mark.parametrize("answer", ["I'm sick", "我生病了"])
def test_an_answer_to_the_readings_question_goes_back_to_it_without_a_classifier_call(answer):
    ferry, api, llm = agent()
    to_system(llm)
    llm.enqueue("executor", reading("cancel_booking", booking="BK7", reason=None))
    asked = ferry.handle("ana_1", "Cancel BK7", turn_key="f:14")
    llm.enqueue("executor", reading("cancel_booking", booking=None, reason="health")).enqueue("verifier", verdict(9))
    done = ferry.handle("ana_1", answer, history=[asked.to_record("Cancel BK7")], turn_key="f:15")
    assert done.committed and llm.pending() == {}
    assert not [role for role, _, _ in llm.calls[-2:] if role == "classifier"]


@pytest.mark.parametrize("said", ["On BK7, change Kim Osei to Kim Mensah; her date of birth stays the same",
                                  "把BK7上的Kim Osei改成Kim Mensah，出生日期不变"])
def test_the_record_a_write_is_about_is_read_first_and_its_people_are_the_customers(said):
    ferry, api, llm = agent()
    to_system(llm)
    new = {"first_name": "Kim", "last_name": "Mensah"}
    # The first reading leaves the birth date open; the booking is read; the second copies it from the look-up.
    llm.enqueue("executor", reading("change_traveller", booking="BK7", traveller={**new, "dob": None}))
    llm.enqueue("executor", reading("change_traveller", booking="BK7", traveller={**new, "dob": "1990-02-03"}))
    llm.enqueue("verifier", verdict(9))
    result = ferry.handle("ana_1", said, turn_key="f:16")
    # Kim Osei, another customer, is the booking's traveller: the change is the sender's to make.
    assert result.committed, result.reply
    assert api.state["bookings"] == [{"changed": "BK7", "traveller": {**new, "dob": "1990-02-03"}}]
    second_prompt, second_schema = [(m, schema) for role, m, schema in llm.calls if role == "executor"][1]
    assert "Kim Osei" in second_prompt[1][1]
    # The reading after the record was read completes the same write: no other operation is offered.
    assert "book_crossing" not in json.dumps(second_schema.model_json_schema())


def test_a_typed_write_that_changes_nothing_is_read_again():
    ferry, api, llm = agent()
    to_system(llm)
    same = {"first_name": "Kim", "last_name": "Osei", "dob": "1990-02-03"}
    new = {"first_name": "Kim", "last_name": "Mensah", "dob": "1990-02-03"}
    llm.enqueue("executor", reading("change_traveller", booking="BK7", traveller=same))
    llm.enqueue("executor", reading("change_traveller", booking="BK7", traveller=same))
    to_system(llm, fresh=False)
    llm.enqueue("executor", reading("change_traveller", booking="BK7", traveller=new)).enqueue("verifier", verdict(9))
    result = ferry.handle("ana_1", "On BK7 make Kim Osei Kim Mensah, born 1990-02-03", turn_key="f:19")
    assert result.committed and api.state["bookings"] == [{"changed": "BK7", "traveller": new}]


@pytest.mark.parametrize("answer, grounded", [("I've got the flu", True), ("my cousin is getting married that week", False),
                                              ("我生病了", True), ("那周我表哥结婚", False)])
def test_a_choice_the_pack_gives_words_for_is_grounded_by_them_even_when_asked(answer, grounded):
    ferry, api, llm = agent()
    to_system(llm)
    llm.enqueue("executor", reading("refund_booking", booking="BK7", reason=None))
    asked = ferry.handle("ana_1", "Refund BK7", turn_key="f:17")
    llm.enqueue("executor", reading("refund_booking", booking=None, reason="health"))
    if not grounded:  # an answer that fills nothing is read again as a new request, and asked about again
        llm.enqueue("executor", reading("refund_booking", booking="BK7", reason="health"))
    llm.enqueue("verifier", verdict(9))
    result = ferry.handle("ana_1", answer, history=[asked.to_record("Refund BK7")], turn_key="f:18")
    assert result.committed is grounded and llm.pending() == {}
    assert (api.state["bookings"] == []) is not grounded


def test_the_same_question_a_third_time_hands_the_conversation_to_a_person():
    ferry, api, llm = agent()
    history = []
    for n, text in enumerate(["Book FR14 for Mira Lee", "whenever", "whenever suits you"]):
        if n == 0:
            to_system(llm)
        llm.enqueue("executor", booking([{"sailing": "FR14", "day": None}], MIRA))
        if n:  # the answer fills nothing: read again as a new request, the same question
            llm.enqueue("executor", booking([{"sailing": "FR14", "day": None}], MIRA))
        result = ferry.handle("ana_1", text, history=history, turn_key=f"f:2{n}")
        history.append(result.to_record(text))
    assert [t.outcome for t in history[:2]] == ["refused_missing_args"] * 2
    assert history[2].route == "handoff" and api.state["bookings"] == [] and llm.pending() == {}



@pytest.mark.parametrize("said", ["On BK9, change Kim Osei to Kim Mensah, born 1990-02-03",
                                  "把BK9上的Kim Osei改成Kim Mensah，1990-02-03出生"])
def test_a_write_about_a_record_the_customer_does_not_have_is_refused_not_asked_about(said):
    ferry, api, llm = agent()
    to_system(llm)
    llm.enqueue("executor", reading("change_traveller", booking="BK9", traveller=None)).enqueue("verifier", verdict(8))
    result = ferry.handle("ana_1", said, turn_key="f:30")
    assert result.outcome == "not_in_system" and api.state["bookings"] == [] and llm.pending() == {}
    assert [role for role, _, _ in llm.calls].count("executor") == 1


@pytest.mark.parametrize("answer", ["I've got the flu", "我生病了"])
def test_an_answer_read_as_another_write_is_read_again_held_to_the_request_asked_about(answer):
    ferry, api, llm = agent()
    to_system(llm)
    llm.enqueue("executor", reading("refund_booking", booking="BK7", reason=None))
    asked = ferry.handle("ana_1", "Refund BK7", turn_key="f:40")
    # The model drifts to another write; read again, held to the refund, it gives the reason.
    llm.enqueue("executor", booking([{"sailing": "FR12", "day": None}], None))
    llm.enqueue("executor", reading("refund_booking", booking=None, reason="health")).enqueue("verifier", verdict(9))
    done = ferry.handle("ana_1", answer, history=[asked.to_record("Refund BK7")], turn_key="f:41")
    assert done.committed and api.state["bookings"] == [{"cancelled": "BK7", "reason": "health"}]
    held = [schema for role, _, schema in llm.calls if role == "executor"][-1]
    assert "book_crossing" not in json.dumps(held.model_json_schema())
