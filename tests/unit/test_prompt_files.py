"""Every prompt file — the generic set in ``prompts/`` and each domain pack's own — is filled by the real code:
the agent runs a turn of every kind (small talk, profile, guide, look-up then answer, a write to confirm, the
yes, a chooser after rejections, the one-level and executor-only architectures) over a made-up shop with a
scripted model, once per prompt directory. A misspelt placeholder is a ``KeyError`` here, a file the code never
reads (a misspelt file name) or a prompt that drops the message is a failure, and the operation list the
prompts show names every argument."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from chops import tables as ct
from chops.db import make_engine
from chops.domain.operations import operation_lines
from chops.domain.pack import available_packs, load_pack
from chops.llm import ScriptedLLM
from chops.pending import PendingChanges
from chops.pipeline import Agent, prompting
from chops.pipeline.tools import ToolRanker
from chops.records import TurnResult
from chops.settings import get_settings
from eval.grading import judge_messages
from tests.unit.pipeline_support import (FakeIndex, WordsEmbedder, call, small_talk, to_guide, to_profile, to_system,
                                         verdict)
from tests.unit.shop_fake import ShopApi

GENERIC = Path(__file__).resolve().parents[2] / "prompts"
YES = {"answer": "yes_go_ahead"}
ANSWER = {"calls": [{"operation": "AnswerDirectly", "answer": "Order #A2 is pending."}]}


def prompt_dirs() -> list[tuple[str, Path | None]]:
    """(label, directory) of the generic set (None) and of every installed pack that has its own prompts."""
    out: list[tuple[str, Path | None]] = [("generic", None)]
    for name in available_packs():
        directory = load_pack(name).prompts
        if directory is not None:
            out.append((name, directory))
    return out


class Rendered:
    """Records the name of every prompt the code renders, by wrapping the prompt reader."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.names: set[str] = set()
        real = prompting._parts
        monkeypatch.setattr(prompting, "_parts", lambda name: (self.names.add(name), real(name))[1])


class Approvals:
    """No approval policies: nothing goes to staff."""

    def needs_approval(self, operation: str) -> bool:
        return False

    def queue_approval(self, **kwargs) -> int:
        raise AssertionError("nothing is queued here")


def agent(directory: Path | None, llm: ScriptedLLM, db: Path, tools: ToolRanker | None = None,
          split_requests: bool = False, reading: str = "steps", **settings) -> Agent:
    """An agent of the made-up shop reading ``directory``'s prompts, with pending changes in SQLite ``db``."""
    engine = make_engine(f"sqlite:///{db}")
    ct.metadata.create_all(engine)
    return Agent(ShopApi(), llm, get_settings(**settings), FakeIndex(), approvals=Approvals(),
                 pending=PendingChanges(engine, ttl_s=600), prompts=directory, tools=tools,
                 split_requests=split_requests, reading=reading)


def run_every_kind_of_turn(directory: Path | None, tmp_path: Path) -> list[tuple[tuple[str, ...], list]]:
    """Every kind of turn through the real agent; per turn, (the texts its calls may carry, the turn's first, and
    the model calls it made)."""
    turns: list[tuple[tuple[str, ...], list]] = []

    def turn(a: Agent, llm: ScriptedLLM, text: str, key: str, history: tuple = (), carried: tuple = ()) -> TurnResult:
        """``carried``: the texts a call may carry instead of ``text`` (a request split off it, an agenda's next)."""
        before = len(llm.calls)
        result = a.handle("ann", text, history=history, turn_key=key, conversation_id="c1")
        assert llm.pending() == {}, (key, llm.pending())
        turns.append(((text, *carried), llm.calls[before:]))
        return result

    llm = ScriptedLLM()
    two = agent(directory, llm, tmp_path / "two.db", max_iterations=2)
    small_talk(llm, "greeting")
    turn(two, llm, "hello there", "t:1")
    to_profile(llm)
    llm.enqueue("executor", {"answer": "You are ann."}).enqueue("verifier", verdict(9))
    turn(two, llm, "which orders do I have?", "t:2")
    # the guide route, rejected twice with different answers: feedback, then the chooser
    to_guide(llm)
    llm.enqueue("executor", {"source": 1, "answer": "Within a month."}).enqueue("verifier", verdict(2))
    to_guide(llm, fresh=False)
    llm.enqueue("executor", {"source": 2, "answer": "Ask staff."}).enqueue("verifier", verdict(2))
    llm.enqueue("chooser", {"attempt": 1})
    turn(two, llm, "how long do returns take?", "t:3")
    # look up, then answer from the look-up
    to_system(llm)
    llm.enqueue("executor", call("GetOrder", order_id="#A2")).enqueue("executor", ANSWER)
    llm.enqueue("verifier", verdict(9))
    turn(two, llm, "what is the status of #A2?", "t:4")
    # look up, then a write the customer must confirm, then the yes
    to_system(llm)
    llm.enqueue("executor", call("GetOrder", order_id="#A1")).enqueue("executor", call("GetVariants", item_id="i-blue"))
    llm.enqueue("executor", call("Exchange", order_id="#A1", item_id="i-blue", new_item_id="i-red"))
    llm.enqueue("verifier", verdict(9))
    turn(two, llm, "swap the lamp in #A1 for the red one", "t:5")
    llm.enqueue("classifier", YES)
    turn(two, llm, "yes, go ahead", "t:6")

    # a message that may hold several requests is split first (here it holds one)
    llm = ScriptedLLM()
    split = agent(directory, llm, tmp_path / "split.db", split_requests=True)
    llm.enqueue("executor", {"requests": ["What is the status of #A2?"]})
    to_system(llm)
    llm.enqueue("executor", call("GetOrder", order_id="#A2")).enqueue("executor", ANSWER)
    llm.enqueue("verifier", verdict(9))
    turn(split, llm, "hi again, what is the status of #A2, and is it still on its way to me?", "s:1")
    # a request of several refused: the reply asks whether to go on, and the answer is read
    llm = ScriptedLLM()
    stop = agent(directory, llm, tmp_path / "stop.db", split_requests=True)
    first, second = "Swap the red lamp in #A2 for i-green.", "What is the status of #A2?"
    llm.enqueue("executor", {"requests": [first, second]})
    to_system(llm)
    llm.enqueue("executor", call("GetOrder", order_id="#A2"))
    llm.enqueue("executor", call("Exchange", order_id="#A2", item_id="i-red", new_item_id="i-green"))
    to_system(llm, fresh=False)
    llm.enqueue("executor", ANSWER).enqueue("verifier", verdict(9))
    both = f"{first} And then, what is the status of #A2? Thanks a lot for your help."
    refused = turn(stop, llm, both, "r:1", carried=(first,))
    llm.enqueue("classifier", {"answer": "go_on"})
    to_system(llm)
    llm.enqueue("executor", call("GetOrder", order_id="#A2")).enqueue("executor", ANSWER)
    llm.enqueue("verifier", verdict(9))
    assert refused.trace.get("go_on") == second
    turn(stop, llm, "ok, go on", "r:2", (refused.to_record(both),), carried=(second,))

    # the typed reading: a look-up, then the answer
    llm = ScriptedLLM()
    typed = agent(directory, llm, tmp_path / "typed.db", reading="typed")
    to_system(llm)
    llm.enqueue("executor", call("GetOrder", order_id="#A2")).enqueue("executor", ANSWER)
    llm.enqueue("verifier", verdict(9))
    turn(typed, llm, "what is the status of #A2?", "y:1")

    llm = ScriptedLLM()
    one = agent(directory, llm, tmp_path / "one.db", architecture="cev_1level")
    llm.enqueue("classifier", {"route": "answer_from_guide"})
    llm.enqueue("executor", {"source": 1, "answer": "Within a month."}).enqueue("verifier", verdict(9))
    turn(one, llm, "how long do returns take?", "o:1")

    llm = ScriptedLLM()
    only = agent(directory, llm, tmp_path / "only.db", architecture="executor_only")
    llm.enqueue("executor", {"call": {"operation": "AnswerDirectly", "answer": "Within a month."}})
    turn(only, llm, "how long do returns take?", "x:1")
    return turns


@pytest.mark.parametrize("label,directory", prompt_dirs(), ids=[label for label, _ in prompt_dirs()])
def test_every_prompt_file_is_filled_by_the_code_and_carries_the_message(label, directory, tmp_path, monkeypatch):
    rendered = Rendered(monkeypatch)
    with prompting.pack_prompts(directory):  # the eval judge is read outside an agent: the generic one
        judge_messages(SimpleNamespace(text="how long do returns take?", reference="30 days"), "Thirty days.")
    turns = run_every_kind_of_turn(directory, tmp_path)
    # Every pipeline prompt of the generic set was rendered (so the turns above reach every role) ...
    generic = {f.stem for f in GENERIC.glob("pipeline_*.txt")} - {"pipeline_fragments"} | {"eval_judge"}
    assert generic - rendered.names == set()
    # ... and every file of this directory is one the code reads (a misspelt file name would be ignored).
    own = {f.stem for f in directory.glob("*.txt")} if directory is not None else generic
    assert own - rendered.names == set()
    # Every call's user part carries the message it was made for (no prompt lost its $request).
    for texts, calls in turns:
        for role, msgs, _ in calls:
            assert any(text in msgs[-1][1] for text in texts), (label, role, msgs[0][1][:80])


@pytest.mark.parametrize("label,directory", prompt_dirs(), ids=[label for label, _ in prompt_dirs()])
def test_every_executor_prompt_shows_the_inline_short_list(label, directory, tmp_path):
    """With tool retrieval's inline layout the short list is in the user part (a prompt file without
    ``${shortlist}`` would show the model no operation at all) and the system part has none."""
    line = dict(zip(ShopApi().operations, operation_lines(ShopApi().operations), strict=True))["GetOrder"]
    for arch in ("cev_2level", "executor_only"):
        llm = ScriptedLLM()
        tools = ToolRanker(ShopApi().operations, WordsEmbedder(), top_k=1)
        a = agent(directory, llm, tmp_path / f"{arch}.db", tools=tools, architecture=arch, tool_layout="inline")
        if arch == "cev_2level":
            to_system(llm)
            llm.enqueue("executor", call("GetOrder", order_id="#A2")).enqueue("executor", ANSWER)
            llm.enqueue("verifier", verdict(9))
        else:
            llm.enqueue("executor", {"call": {"operation": "AnswerDirectly", "answer": "It is pending."}})
        a.handle("ann", "please look up my order #A2", turn_key=f"{arch}:1", conversation_id="c1")
        executor = [msgs for role, msgs, _ in llm.calls if role == "executor"]
        assert executor and llm.pending() == {}
        for (_, system), (_, user) in executor:
            assert line in user and line not in system, (label, arch)


def test_a_misspelt_placeholder_fails(tmp_path):
    (tmp_path / "pipeline_classify_small_talk.txt").write_text("Sort it.\n---USER---\nMessage: $reqest\n", "utf-8")
    with pytest.raises(KeyError, match="reqest"):
        run_every_kind_of_turn(tmp_path, tmp_path)


@pytest.mark.parametrize("name", available_packs())
def test_the_operation_list_names_every_argument(name):
    operations = load_pack(name).api(None).operations
    lines = operation_lines(operations)
    assert len(lines) == len(operations)
    for line, op in zip(lines, operations.values()):
        for field, info in op.args_model.model_fields.items():
            assert f"{info.alias or field}: " in line, line
        assert "None:" not in line, line
