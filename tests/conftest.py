"""Fixtures shared by every test: the dataset, databases, and the network switched off."""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

MARIADB_ADMIN_URL = os.environ.get("CHOPS_TEST_MARIADB_URL", "mysql+pymysql://root@127.0.0.1:3306")


@pytest.fixture(autouse=True)
def _network_off(monkeypatch):
    """Refuse any connection that leaves this machine: tests never touch the network."""
    real_connect = socket.socket.connect

    def guarded(sock, address):
        host = address[0] if isinstance(address, tuple) else None
        if host is not None and host != "localhost":
            try:
                ip = ipaddress.ip_address(host)
            except ValueError:
                raise RuntimeError(f"test tried to reach {host!r}: the network is off in tests") from None
            if not ip.is_loopback:
                raise RuntimeError(f"test tried to reach {host}: the network is off in tests")
        return real_connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture(autouse=True)
def _one_reasoned_verdict(request, monkeypatch):
    """Scripted models script one verdict (reason and score) per verification: the paper's single reasoned
    call. The default asks an operation for a score alone first (``verifier_reason=operations``), which
    ``tests/unit/test_verifier_cascade.py`` scripts explicitly; tests of the real model run the default."""
    if request.node.get_closest_marker("local_model") is None:
        monkeypatch.setenv("CHOPS_VERIFIER_REASON", "first")


@pytest.fixture(scope="session")
def cphos_dir() -> Path:
    """The CPHOS-dataset; a test that needs it fails loudly when it is missing."""
    path = Path(os.environ.get("CHOPS_CPHOS_DIR", Path(__file__).resolve().parents[1].parent / "shared" / "cphos"))
    if not (path / "database" / "cmf_tp_member.json").is_file():
        pytest.fail(f"CPHOS-dataset not found at {path}; set CHOPS_CPHOS_DIR", pytrace=False)
    return path


@contextmanager
def mariadb_database() -> Iterator[str]:
    """A fresh, empty MariaDB database (utf8mb4): yields its URL and drops it on exit.

    For fixtures of any scope; a test fails loudly when MariaDB is not reachable.
    """
    import sqlalchemy as sa

    name = f"chops_test_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(MARIADB_ADMIN_URL)
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"))
    except sa.exc.OperationalError as exc:
        admin.dispose()
        pytest.fail(f"MariaDB is not reachable at {MARIADB_ADMIN_URL}: {exc}", pytrace=False)
    try:
        yield f"{MARIADB_ADMIN_URL}/{name}?charset=utf8mb4"
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f"DROP DATABASE IF EXISTS `{name}`"))
        admin.dispose()


@pytest.fixture
def mariadb_url():
    """A fresh, empty MariaDB database for one test, dropped afterwards."""
    with mariadb_database() as url:
        yield url


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    """A fresh SQLite database file for one test."""
    return f"sqlite:///{tmp_path / 'chops.db'}"


@pytest.fixture
def frequent_thread_switches() -> Iterator[None]:
    """Switch Python threads every microsecond instead of every 5 ms, so that tests of parallel
    conversations interleave them inside each turn (where a shared-state race would show) on any machine."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


@pytest.fixture(params=["sqlite", pytest.param("mariadb", marks=pytest.mark.mariadb)])
def db_url(request) -> str:
    """The same test on SQLite and on real MariaDB."""
    return request.getfixturevalue(f"{request.param}_url")


@pytest.fixture(autouse=True)
def _router_off(monkeypatch):
    """Tests script the model classifier's replies: the embedding router (which would decide many routes
    without asking it) is on only where a test turns it on (``CHOPS_ROUTER_ENABLED`` or ``router=``)."""
    monkeypatch.setenv("CHOPS_ROUTER_ENABLED", "0")


@pytest.fixture(autouse=True)
def _real_llm_off(request, monkeypatch):
    """The real local model loads only in tests marked ``local_model``; elsewhere use ScriptedLLM."""
    from chops.llm import engine

    marked = request.node.get_closest_marker("local_model") is not None
    if "local_llm" in request.fixturenames and not marked:
        pytest.fail("a test using the local_llm fixture must be marked @pytest.mark.local_model", pytrace=False)
    if not marked:
        monkeypatch.setattr(engine, "LOAD_ALLOWED", False)


@pytest.fixture(scope="session")
def local_llm():
    """One ``LLM`` on the real embedded model (every role local), loaded once per session.

    Fails (never skips) when the model is not installed: `make test` runs `chops model install` first.
    """
    from chops.llm import LLMError, build_llm
    from chops.settings import Roles, get_settings

    llm = build_llm(get_settings(roles=Roles()))  # all roles local, whatever the environment says
    try:
        llm.load()
    except LLMError as exc:
        pytest.fail(f"the local model is required here: {exc}", pytrace=False)
    return llm


def _data_pack(env: str, folder: str, *files: str) -> Path:
    """A tau2 data pack: the folder ``env`` names, else ``shared/<folder>`` beside the checkout or beside its worktrees'
    folder, holding ``files``; a test that needs it fails loudly when it is missing."""
    here = Path(__file__).resolve().parents[1]
    candidates = [Path(os.environ[env])] if os.environ.get(env) else \
        [here.parent / "shared" / folder, here.parent.parent / "shared" / folder]
    for path in candidates:
        if all((path / f).is_file() for f in files):
            return path
    pytest.fail(f"{folder} data pack not found at {candidates[0]}; set {env}", pytrace=False)


@pytest.fixture(scope="session")
def retail_dir() -> Path:
    """The tau2-retail data pack (``CHOPS_RETAIL_DIR``)."""
    return _data_pack("CHOPS_RETAIL_DIR", "tau2-retail", "database/db.json", "users/train.json")


@pytest.fixture(scope="session")
def airline_dir() -> Path:
    """The tau2-airline data pack (``CHOPS_AIRLINE_DIR``)."""
    return _data_pack("CHOPS_AIRLINE_DIR", "tau2-airline", "database/db.json", "tasks/train.json", "policy.md")
