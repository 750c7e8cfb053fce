"""Every error code documented in ``chops.web.errors`` is raised by the service and asserted by a test."""

from __future__ import annotations

import re
from pathlib import Path

import chops.web.errors as errors

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTED = sorted({code for line in errors.__doc__.splitlines() if line.startswith("|")
                     for code in re.findall(r"``(\w+)``", line)} - {"max_message_chars", "CHOPS_SECRET_KEY", "nickname"})  # table words that are not codes


def _text(folder: str, skip: Path | None = None) -> str:
    return "\n".join(p.read_text() for p in (ROOT / folder).rglob("*.py") if p != skip)


def test_every_documented_code_is_raised_and_tested():
    assert len(DOCUMENTED) >= 19 and "database_unavailable" in DOCUMENTED
    source = _text("chops", skip=ROOT / "chops/web/errors.py") + errors._HTTP_CODES.__repr__() + \
        re.sub(r'""".*?"""', "", Path(errors.__file__).read_text(), flags=re.S)
    tests = _text("tests", skip=Path(__file__))
    assert [c for c in DOCUMENTED if f'"{c}"' not in source] == []
    assert [c for c in DOCUMENTED if c not in tests] == []


def test_the_readme_documents_the_same_codes():
    readme = (ROOT / "README.md").read_text()
    assert [c for c in DOCUMENTED if f"`{c}`" not in readme] == []
