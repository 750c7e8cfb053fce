"""Shared pieces of the guide tests: a fast fake embedder that counts what it embeds, and real guide
files (PDF with fpdf2, encrypted with pypdf's writer, Markdown, HTML). All text is made up."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
from fpdf import FPDF
from pypdf import PdfWriter

from chops.retrieval.embedders import l2_normalise


class HashEmbedder:
    """Bag of hashed words: fast, deterministic, enough to find exact wording. Counts its calls and
    keeps every text it embedded; ``hold`` (an Event) pauses any call that embeds a text containing
    ``hold_word`` until it is set (to hold a re-index mid-way)."""

    def __init__(self, name: str = "fake-hash"):
        self.name = name
        self.calls = 0
        self.texts: list[str] = []
        self.hold: threading.Event | None = None
        self.holding = threading.Event()
        self.hold_word = "zorkmid"

    def embed(self, texts):
        if self.hold is not None and any(self.hold_word in t for t in texts):
            self.holding.set()
            assert self.hold.wait(30), "the test never released the held re-index"
        self.calls += 1
        self.texts.extend(texts)
        rows = np.zeros((len(texts), 512), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                rows[i, sum(map(ord, word.strip(".,?!:"))) % 512] += 1
        return l2_normalise(rows)


def write_pdf(path: Path, *pages: str) -> Path:
    """A PDF with one page per string (an empty string makes a blank page)."""
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for text in pages:
        pdf.add_page()
        if text:
            pdf.multi_cell(0, 6, text)
    pdf.output(str(path))
    return path


def write_encrypted_pdf(path: Path, text: str) -> Path:
    """A PDF that needs a user password."""
    plain = write_pdf(path.with_suffix(".plain.pdf"), text)
    writer = PdfWriter(clone_from=plain)
    writer.encrypt(user_password="secret", owner_password="owner")
    with open(path, "wb") as fh:
        writer.write(fh)
    plain.unlink()
    return path


MARKDOWN = """# Badges

Every arbiter wears a green badge during the marking week.

## Lost badges

A lost badge is replaced at the front desk for free.
"""

HTML = """<!doctype html><html><head><title>ignored title</title><style>p {color: red}</style></head>
<body><h1>Parking</h1><p>Teachers park behind the gym on exam day.</p>
<script>var hidden = "never indexed";</script>
<h2>Bicycles</h2><p>Bicycles go in the shed&nbsp;by the gate.</p></body></html>
"""
