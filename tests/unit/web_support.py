"""Shared pieces of the web tests: the app over a real database with the demo seed, a scripted model,
signed tokens, and scripts for the common turns (a profile answer, a queued write)."""

from __future__ import annotations

import re
import time

import jwt

from chops.llm import ScriptedLLM
from chops.pipeline.schemas import SmallTalkGate
from chops.settings import get_settings
from chops.web.app import create_app
from tests.unit.pipeline_support import ABOUT_PLATFORM, FakeIndex, call, demo_engine, to_system, verdict

SECRET = "test-secret-shared-with-the-host"
STAFF_KEY = "test-staff-key"
STAFF_PASSWORD = "a long staff passphrase"


def add_staff(app, name: str = "sam", display_name: str | None = None, password: str = STAFF_PASSWORD) -> None:
    """Create the named staff account ``name`` in the app's database (as ``chops staff add`` does)."""
    from chops.staff_accounts import StaffAccounts

    StaffAccounts(app.extensions["chops"].engine).add(name, password, display_name)


def make_app(url: str, **overrides):
    """(app, scripted llm, engine) over a fresh demo database at ``url``."""
    engine = demo_engine(url)
    llm = ScriptedLLM()
    settings = get_settings(**{"secret_key": SECRET, "staff_api_key": STAFF_KEY, **overrides})
    app = create_app(settings, llm=llm, engine=engine, index=FakeIndex())
    app.config["TESTING"] = True
    return app, llm, engine


def user_token(nickname: str, ttl: float = 600, secret: str = SECRET) -> str:
    """A token as the host site mints it: a stock PyJWT HS256 JWT with ``sub`` and ``exp``."""
    return jwt.encode({"sub": nickname, "exp": int(time.time() + ttl)}, secret, algorithm="HS256")


def start(client, nickname: str = "demo_leader") -> tuple[str, dict]:
    """Start a conversation as ``nickname``: (conversation id, the Authorization header)."""
    resp = client.post("/v1/conversations", json={"token": user_token(nickname)})
    assert resp.status_code == 201, resp.get_json()
    body = resp.get_json()
    return body["id"], {"Authorization": f"Bearer {body['token']}"}


_NICK = re.compile(r"\(nickname ([^)]+)\)")
_QUESTION = re.compile(r"Question: (.*)", re.S)


def echo_answer(messages, schema) -> dict:
    """An executor reply computed from the prompt: whose profile it saw and what was asked."""
    text = messages[-1][1]
    return {"answer": f"{_NICK.search(text).group(1)} asked: {_QUESTION.search(text).group(1).strip()}"}


def profile_route(messages, schema) -> dict:
    """A classifier reply computed from the question asked: the gate says platform, level 1 basic info."""
    return ABOUT_PLATFORM if schema is SmallTalkGate else {"route": "own_fact"}


def script_profile_answer(llm: ScriptedLLM, times: int = 1) -> None:
    """Script ``times`` profile-route turns whose answer echoes the asker and the question.

    Every reply is computed from its prompt, so conversations running in parallel may take them in any
    order (a fixed gate-then-route sequence would hand one thread's route answer to another's gate)."""
    for _ in range(times):
        llm.enqueue("classifier", profile_route).enqueue("classifier", profile_route)
        llm.enqueue("executor", echo_answer)
        llm.enqueue("verifier", verdict(9))


def script_passed_write(llm: ScriptedLLM, limit: int = 40) -> None:
    """Script a write of the upload limit that the verifier passes (committed unless policy says no)."""
    to_system(llm)
    llm.enqueue("executor", call("ChangeAllTypesUploadLimit", Limit=limit))
    llm.enqueue("verifier", verdict(9))


def script_queued_write(llm: ScriptedLLM, limit: int = 40, rounds: int = 5) -> None:
    """Script a write the verifier never passes: the chooser picks it and it goes to staff."""
    # Each round proposes something different: the pipeline reuses the verdict of a repeated proposal
    # and stops early when it can never pass, so identical rounds would not reach the chooser.
    decoys = [call("MakeAllTypesToBeArbiter"), call("MakeAllTypesToBeSupTeacher"),
              call("MakeAllTypesToBeSubCoach", TeamLeaderName=None),
              call("VerifyTeacherUserToBeSupTeacher", Name=None, ViewProblem=None)]
    for proposal in [call("ChangeAllTypesUploadLimit", Limit=limit)] + decoys[:rounds - 1]:
        to_system(llm)
        llm.enqueue("executor", proposal)
        llm.enqueue("verifier", verdict(2, "not sure the user wants this"))
    llm.enqueue("chooser", {"attempt": 1})


def sse_events(raw: str) -> list[tuple[str, dict]]:
    """Parse a text/event-stream body into (event, data) pairs (comments skipped)."""
    import json

    out = []
    for block in raw.split("\n\n"):
        event, data = None, ""
        for line in block.splitlines():
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data += line[5:].strip()
        if event:
            out.append((event, json.loads(data)))
    return out


class LiveServer:
    """The app on a real HTTP server on 127.0.0.1 (an ephemeral port), in a background thread."""

    def __init__(self, app):
        from werkzeug.serving import make_server

        self.server = make_server("127.0.0.1", 0, app, threaded=True)
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def __enter__(self) -> "LiveServer":
        import threading

        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.thread.join(timeout=10)
        self.server.server_close()


def http_json(method: str, url: str, body: dict | None = None, headers: dict | None = None) -> tuple[int, dict]:
    """One JSON request with the standard library: (status, parsed body)."""
    import json
    import urllib.error
    import urllib.request

    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())
