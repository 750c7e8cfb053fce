"""Build the demo guide PDFs in ``guides/`` from their text sources in ``guides/src/*.md``.

The sources use a tiny markdown subset: ``# title``, ``## heading``, ``- item``, ``Q:``/``A:``
lines, plain paragraphs, and a line ``\\pagebreak`` for a new page. Run:

    python scripts/build_guides.py [--src guides/src] [--out guides]

The output is byte-for-byte reproducible (fixed creation date), so rebuilding unchanged
sources does not change the sha256 the index manifest records.
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

from fpdf import FPDF

REPO_ROOT = Path(__file__).resolve().parents[1]
# A fixed date keeps rebuilt PDFs identical, so the guide index is not rebuilt for nothing.
FIXED_DATE = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def render(markdown: str) -> bytes:
    """Render one guide source to PDF bytes."""
    pdf = FPDF(format="A4")
    pdf.set_creation_date(FIXED_DATE)
    pdf.set_auto_page_break(auto=True, margin=18)
    pdf.set_margins(20, 18, 20)
    pdf.add_page()
    for raw in markdown.splitlines():
        line = raw.rstrip()
        if line == "\\pagebreak":
            pdf.add_page()
        elif line.startswith("# "):
            pdf.set_font("Helvetica", "B", 16)
            pdf.multi_cell(0, 9, line[2:], new_x="LMARGIN", new_y="NEXT")
            pdf.ln(3)
        elif line.startswith("## "):
            pdf.set_font("Helvetica", "B", 13)
            pdf.multi_cell(0, 8, line[3:], new_x="LMARGIN", new_y="NEXT")
            pdf.ln(1)
        elif line.startswith("Q: "):
            pdf.set_font("Helvetica", "B", 11)
            pdf.multi_cell(0, 6, line, new_x="LMARGIN", new_y="NEXT")
        elif line.startswith("- "):
            pdf.set_font("Helvetica", "", 11)
            pdf.set_x(pdf.l_margin + 4)
            pdf.multi_cell(0, 6, line, new_x="LMARGIN", new_y="NEXT")
        elif line:
            pdf.set_font("Helvetica", "", 11)
            pdf.multi_cell(0, 6, line, new_x="LMARGIN", new_y="NEXT")
        else:
            pdf.ln(3)
    return bytes(pdf.output())


def build(src: Path, out: Path) -> list[Path]:
    """Render every ``src/*.md`` to ``out/<stem>.pdf``; returns the written paths."""
    written = []
    for source in sorted(src.glob("*.md")):
        target = out / f"{source.stem}.pdf"
        target.write_bytes(render(source.read_text(encoding="utf-8")))
        written.append(target)
    return written


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=REPO_ROOT / "guides" / "src")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "guides")
    args = parser.parse_args()
    for path in build(args.src, args.out):
        print(path)


if __name__ == "__main__":
    main()
