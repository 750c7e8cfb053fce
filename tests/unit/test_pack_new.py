"""``chops pack new NAME``: the skeleton pack it writes imports, implements every member of the ``DomainPack``
Protocol, passes its own tests (migrated SQLite, demo data, the look-up, the confirmed write, one scripted agent
conversation, its catalog) and, once its entry point is registered, is migrated, seeded, exported and called by the
``chops`` commands; a name that cannot be a pack's, or a folder there already, is refused; the templates ship as
package data."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from chops.cli import main
from chops.domain.pack import DomainPack
from chops.domain.scaffold import TEMPLATES, check_name, class_prefix, module_of, templates

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def shelf(tmp_path, monkeypatch):
    """The pack ``shelf`` written into ``tmp_path/packs`` by the command, importable as ``shelf``."""
    packs = tmp_path / "packs"
    result = CliRunner().invoke(main, ["pack", "new", "shelf", "--dir", str(packs)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert 'shelf = "shelf.pack:pack"' in result.output  # the entry point to register
    monkeypatch.syspath_prepend(str(packs))
    yield packs / "shelf"
    for module in [m for m in sys.modules if m == "shelf" or m.startswith("shelf.")]:
        del sys.modules[module]


def test_the_skeleton_implements_every_member_of_the_domain_pack_protocol(shelf):
    pack = importlib.import_module("shelf.pack").pack
    members = set(DomainPack.__annotations__) | {n for n, v in vars(DomainPack).items()
                                                 if callable(v) and not n.startswith("_")}
    assert {"policy_path", "now", "reading", "router_examples", "migrations"} <= members
    assert [m for m in sorted(members) if not hasattr(pack, m)] == []
    assert pack.name == "shelf" and pack.policy_path().is_file() and pack.now().year >= 2024
    assert type(pack).__name__ == "ShelfPack" and pack.metadata.tables.keys() == {"shelf_user", "shelf_record"}
    assert len(list((shelf / "migrations" / "versions").glob("*_baseline_the_shelf_tables.py"))) == 1


def test_the_skeleton_passes_its_own_tests(shelf, tmp_path):
    module = importlib.import_module("shelf.tests.test_shelf_pack")
    tests = {name: f for name, f in vars(module).items() if name.startswith("test_") and inspect.isfunction(f)}
    assert {"test_the_migrations_give_exactly_the_tables", "test_the_demo_loads_and_exports_as_the_same_document",
            "test_the_look_up_reads_the_users_own_records",
            "test_the_write_is_dry_run_committed_and_refused_by_its_checks",
            "test_the_agent_looks_up_proposes_and_commits_on_the_users_yes"} <= set(tests)
    for name, test in tests.items():
        work = tmp_path / name
        work.mkdir()
        test(**({"tmp_path": work} if "tmp_path" in inspect.signature(test).parameters else {}))


def test_the_skeletons_code_is_small_and_says_what_each_function_does(shelf):
    for path in shelf.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert len(text.splitlines()) <= 300, path
        if path.parent.name == "tests":
            continue
        undocumented = [node.name for node in ast.walk(ast.parse(text)) if isinstance(node, ast.FunctionDef)
                        and not node.name.startswith("_") and ast.get_docstring(node) is None]
        assert undocumented == [], path


def test_the_skeleton_once_registered_is_served_by_the_chops_commands(shelf, tmp_path, monkeypatch):
    """As installed: an entry point in the ``chops.domains`` group (a distribution's metadata on ``sys.path``, the
    ``shelf`` fixture's folder) makes ``--domain shelf`` migrate, seed, export and call it."""
    info = shelf.parent / "shelf_pack-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shelf-pack\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[chops.domains]\nshelf = shelf.pack:pack\n", encoding="utf-8")
    url = ["--database-url", f"sqlite:///{tmp_path / 'cli.db'}"]

    def chops(*args: str) -> str:
        result = CliRunner().invoke(main, list(args), catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output

    assert "shelf    created at" in chops("db", "upgrade", "--domain", "shelf", *url)
    assert re.search(r"shelf_record +3 rows", chops("db", "seed-demo", "--domain", "shelf", *url))
    assert '"R-2001"' in chops("db", "export", "--domain", "shelf", *url)
    monkeypatch.setenv("CHOPS_DOMAIN", "shelf")
    moved = chops("api", "call", "reschedule_record", "--as", "ann_demo", *url, "--args",
                  '{"record_id": "R-1001", "due": "2031-05-20"}', "--dry-run")
    assert '"outcome": "ok"' in moved and '"dry_run": true' in moved
    nothing = CliRunner().invoke(main, ["db", "revision", "shelf", "-m", "nothing"])
    assert "nothing to write" in nothing.output  # the baseline revision gives the tables exactly


@pytest.mark.parametrize("name", ["Shelf", "x", "2shelves", "shelf-life", "class", "json", "chops", "a" * 33])
def test_a_name_that_cannot_be_a_pack_is_refused(tmp_path, name):
    with pytest.raises(ValueError):
        check_name(name)
    result = CliRunner().invoke(main, ["pack", "new", name, "--dir", str(tmp_path)])
    assert result.exit_code != 0 and "Error:" in result.output and not any(tmp_path.iterdir())


def test_an_existing_folder_is_never_written_over(tmp_path):
    (tmp_path / "shelf").mkdir()
    (tmp_path / "shelf" / "mine.txt").write_text("keep", encoding="utf-8")
    result = CliRunner().invoke(main, ["pack", "new", "shelf", "--dir", str(tmp_path)])
    assert result.exit_code != 0 and "exists already" in result.output
    assert [p.name for p in (tmp_path / "shelf").iterdir()] == ["mine.txt"]


def test_names_and_import_paths(tmp_path):
    assert class_prefix("city_library") == "CityLibrary"
    assert module_of("shelf", tmp_path) == "shelf"
    (tmp_path / "__init__.py").write_text("", encoding="utf-8")
    assert module_of("shelf", tmp_path) == f"{tmp_path.name}.shelf"  # apis/ of this repository: apis.shelf


def test_the_templates_ship_as_package_data():
    globs = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"]["chops.domain"]
    shipped = {p for g in globs for p in TEMPLATES.parent.glob(g)}
    assert set(templates()) <= shipped and len(templates()) >= 15
