"""``chops pack new NAME``: a working skeleton of a domain pack, written from the templates in ``pack_template/``.

The skeleton is a made-up business whose users hold records with due dates: its tables (``NAME_user``,
``NAME_record``) and their baseline migration, the data as one JSON document with load, export and demo data, a unit
of work and repositories on the kit, one look-up and one confirmed write whose arguments declare their value kinds,
the policy's checks, a profile, the ``DomainPack``, its Chinese catalog, router examples of its own routes, an empty
prompts folder and its own tests. It installs, migrates, seeds and answers as it is; an author then replaces the
records with the business's own (docs/packs.md).

A template is the file it becomes with ``.tmpl`` added; ``{{name}}``, ``{{Name}}``, ``{{revision}}`` and
``{{created}}`` are replaced. Everything the pack imports of itself is relative, so the same files work as
``apis.NAME`` in this repository and as a top-level ``NAME`` package of a business's own repository.
"""

from __future__ import annotations

import datetime as dt
import keyword
import re
import sys
import uuid
from pathlib import Path

TEMPLATES = Path(__file__).resolve().with_name("pack_template")
SUFFIX = ".tmpl"
NAME = re.compile(r"[a-z][a-z0-9_]{1,31}")
# Names a pack may not take: the project's own top-level packages (a pack of that name would shadow them).
TAKEN = frozenset({"chops", "apis", "eval", "bench", "tests", "prompts", "guides", "db"})


class PackExists(FileExistsError):
    """The pack's folder is there already: nothing is written over it."""


def check_name(name: str) -> None:
    """Raise ``ValueError`` saying why ``name`` cannot name a pack: it must be a lower-case Python identifier of 2 to 32
    characters (it prefixes the tables and names the package, the entry point and the catalog), not a keyword, not a
    module of Python's own library, and not one of the project's packages."""
    if not NAME.fullmatch(name):
        raise ValueError(f"{name!r} is no pack name: 2 to 32 characters, lower-case letters, digits and '_', "
                         "starting with a letter")
    if keyword.iskeyword(name) or name in sys.stdlib_module_names or name in TAKEN:
        raise ValueError(f"{name!r} is taken (a Python keyword, a standard module or one of the project's packages)")


def class_prefix(name: str) -> str:
    """The pack's class names start with this: ``city_library`` -> ``CityLibrary``."""
    return "".join(part.capitalize() for part in name.split("_") if part)


def templates() -> list[Path]:
    """Every template file, in a stable order."""
    return sorted(p for p in TEMPLATES.rglob(f"*{SUFFIX}") if p.is_file())


def target_path(template: Path, name: str, revision: str, today: dt.date) -> Path:
    """Where ``template`` goes inside the pack's folder: its path less ``.tmpl``; the tests file is named after the
    pack, and the baseline migration as ``chops db revision`` names revisions (date, revision id, slug)."""
    relative = template.relative_to(TEMPLATES)
    relative = relative.with_name(relative.name[:-len(SUFFIX)])
    if relative == Path("tests/test_pack.py"):
        return relative.with_name(f"test_{name}_pack.py")
    if relative == Path("migrations/versions/baseline.py"):
        return relative.with_name(f"{today:%Y_%m_%d}_{revision}_baseline_the_{name}_tables.py")
    return relative


def render(text: str, fields: dict[str, str]) -> str:
    """``text`` with each ``{{key}}`` of ``fields`` replaced by its value (no other syntax: the templates are code)."""
    for key, value in fields.items():
        text = text.replace("{{" + key + "}}", value)
    leftover = re.search(r"\{\{\w+\}\}", text)
    if leftover:
        raise ValueError(f"a template names {leftover.group()}, which is not one of {sorted(fields)}")
    return text


def new_pack(name: str, directory: Path, *, now: dt.datetime | None = None) -> list[Path]:
    """Write the skeleton pack ``directory/name`` (``directory`` is made when missing); the files written, in order.
    ``ValueError`` for a name that cannot be a pack's (``check_name``), ``PackExists`` when the folder is there."""
    check_name(name)
    target = Path(directory) / name
    if target.exists():
        raise PackExists(f"{target} exists already; choose another name or remove it")
    now = now or dt.datetime.now()
    revision = uuid.uuid4().hex[:12]
    fields = {"name": name, "Name": class_prefix(name), "revision": revision, "created": now.isoformat(sep=" ")}
    written = []
    for template in templates():
        path = target / target_path(template, name, revision, now.date())
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(template.read_text(encoding="utf-8"), fields), encoding="utf-8")
        written.append(path)
    return written


def module_of(name: str, directory: Path) -> str:
    """The import path of the pack written into ``directory``: ``apis.NAME`` where the folder is a package (this
    repository's ``apis/``), else ``NAME`` (the folder is on ``sys.path``, a business's own repository)."""
    directory = Path(directory)
    return f"{directory.resolve().name}.{name}" if (directory / "__init__.py").is_file() else name
