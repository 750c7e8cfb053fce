"""Guide files (PDF, Markdown, HTML) → pages → chunks, each chunk tagged with its file name and
1-based page. A Markdown or HTML guide has no pages: its "pages" are its sections, a new one at
every level-1 or level-2 heading, so a citation still points at a findable place.

Chunks never cross a page boundary, so page attribution is exact. A FAQ entry ("Q: … A: …")
is never split from its question: entries that fit are kept whole, and when an answer is too
long for the chunk size every piece of it repeats the question.
"""

from __future__ import annotations

import logging
import re
from dataclasses import asdict, dataclass
from html.parser import HTMLParser
from pathlib import Path

from langchain_text_splitters import RecursiveCharacterTextSplitter

log = logging.getLogger(__name__)

# A FAQ entry starts at "Q:"; the lookahead keeps the marker with the entry it opens.
_FAQ_START = re.compile(r"(?=(?<!\S)Q:\s)")
# The question of an entry runs up to its "A:" marker.
_FAQ_QUESTION = re.compile(r"^(Q:\s.*?)\s+A:\s", re.DOTALL)
# Prose is split at sentence and clause ends first, so a chunk rarely stops mid-sentence.
_SEPARATORS = [". ", "? ", "; ", ", ", " ", ""]
# Goes into the index manifest: bump it whenever the chunking rules change, so saved
# indexes built by the old rules are rebuilt instead of served.
CHUNKER_VERSION = 2
# The guide types by file suffix (lower case).
GUIDE_TYPES = {".pdf": "pdf", ".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html"}


class GuideError(Exception):
    """A guide directory that cannot be used at all (missing, empty, nothing readable)."""

    code = "guides_unusable"


class DocumentError(ValueError):
    """One guide file that cannot be indexed; ``code`` is stable: ``unsupported_type``, ``encrypted``,
    ``no_text`` or ``unreadable``."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Page:
    """The normalised text of one PDF page."""

    file: str
    page: int
    text: str


@dataclass(frozen=True)
class Skipped:
    """A guide file that was left out, and why (``sha256``: of the bytes that failed)."""

    file: str
    reason: str
    sha256: str | None = None


@dataclass
class Chunk:
    """A retrievable piece of a guide. ``score`` ranks results (higher is better); ``cosine``
    is the dense similarity to the query, comparable across queries (for thresholds)."""

    file: str
    page: int
    text: str
    score: float = 0.0
    cosine: float | None = None

    def to_dict(self) -> dict:
        """A JSON-ready dict."""
        return asdict(self)


def normalise(text: str) -> str:
    """Collapse every run of whitespace (PDF line wraps, tabs, NBSP) into one space."""
    return re.sub(r"\s+", " ", text.replace("\u00a0", " ")).strip()


def read_pdf(path: Path, name: str | None = None) -> list[Page]:
    """The non-empty pages of one PDF (cited as ``name``, default the file's name). Raises
    ``DocumentError`` when the file is unreadable, encrypted with a password, or holds no text."""
    from pypdf import PdfReader

    name = name or path.name
    try:
        reader = PdfReader(path)
        if reader.is_encrypted:
            # Owner-password-only PDFs open with an empty user password; anything else we cannot read.
            try:
                ok = reader.decrypt("")
            except Exception:  # noqa: BLE001 - pypdf raises several types for unsupported crypto
                ok = 0
            if not ok:
                raise DocumentError("encrypted", "encrypted (needs a password)")
        pages = [Page(name, number, normalise(page.extract_text() or ""))
                 for number, page in enumerate(reader.pages, start=1)]
    except DocumentError:
        raise
    except Exception as exc:  # noqa: BLE001 - a broken guide must not stop the others from loading
        raise DocumentError("unreadable", f"unreadable PDF ({type(exc).__name__}: {exc})") from exc
    return _with_text(pages)


def _with_text(pages: list[Page]) -> list[Page]:
    pages = [p for p in pages if p.text]
    if not pages:
        raise DocumentError("no_text", "no extractable text (empty or scanned)")
    return pages


class _Sections(HTMLParser):
    """HTML → text per section; a level-1 or level-2 heading starts a new section."""

    _SKIP = {"script", "style", "head", "template", "noscript"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.sections: list[list[str]] = [[]]
        self._skipping = 0

    def handle_starttag(self, tag, attrs):
        if tag in self._SKIP:
            self._skipping += 1
        elif tag in ("h1", "h2") and any(t.strip() for t in self.sections[-1]):
            self.sections.append([])
        self.sections[-1].append(" ")  # every tag separates words ("a<br>b", "</td><td>")

    def handle_endtag(self, tag):
        if tag in self._SKIP and self._skipping:
            self._skipping -= 1
        self.sections[-1].append(" ")

    def handle_data(self, data):
        if not self._skipping:
            self.sections[-1].append(data)


def html_pages(name: str, html: str) -> list[Page]:
    """The sections of an HTML text as pages (1-based), empty ones dropped."""
    parser = _Sections()
    parser.feed(html)
    parser.close()
    return _with_text([Page(name, n, normalise("".join(parts))) for n, parts in enumerate(parser.sections, 1)])


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError("unreadable", f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc


def guide_type(name: str) -> str:
    """``pdf``, ``markdown`` or ``html`` by the name's suffix; another suffix is ``unsupported_type``."""
    suffix = Path(name).suffix.lower()
    if suffix not in GUIDE_TYPES:
        raise DocumentError("unsupported_type", f"{suffix or 'no suffix'}: guides are PDF (.pdf), Markdown "
                            "(.md) or HTML (.html)")
    return GUIDE_TYPES[suffix]


def read_document(path: Path, name: str | None = None) -> list[Page]:
    """The pages of one guide file, cited as ``name`` (default the file's name), whose suffix says its
    type (``GUIDE_TYPES``). Raises ``DocumentError`` when it cannot be indexed."""
    name = name or path.name
    kind = guide_type(name)
    if kind == "pdf":
        return read_pdf(path, name)
    if kind == "markdown":
        from markdown_it import MarkdownIt

        # CommonMark with tables; raw HTML inside the Markdown is parsed as HTML like the rest.
        return html_pages(name, MarkdownIt("commonmark").enable("table").render(_read_text(path)))
    return html_pages(name, _read_text(path))


def guide_files(guides_dir: Path) -> list[Path]:
    """The guide files (PDF, Markdown, HTML) of a guide directory, sorted; a missing directory or
    one without guide files is a ``GuideError``."""
    guides_dir = Path(guides_dir)
    if not guides_dir.is_dir():
        raise GuideError(f"guide directory {guides_dir} does not exist")
    files = sorted(p for p in guides_dir.iterdir() if p.is_file() and p.suffix.lower() in GUIDE_TYPES)
    if not files:
        raise GuideError(f"guide directory {guides_dir} holds no guide files (PDF, Markdown, HTML)")
    return files


def load_guides(guides_dir: Path) -> tuple[list[Page], list[Skipped]]:
    """Read every guide file in ``guides_dir``. Bad files are logged by name and returned as skipped;
    if no file is usable the directory is a ``GuideError``."""
    pages: list[Page] = []
    skipped: list[Skipped] = []
    files = guide_files(guides_dir)
    for path in files:
        try:
            pages.extend(read_document(path))
        except DocumentError as exc:
            log.warning("skipping guide %s: %s", path.name, exc)
            skipped.append(Skipped(path.name, str(exc)))
    if not pages:
        reasons = "; ".join(f"{s.file}: {s.reason}" for s in skipped)
        raise GuideError(f"none of the {len(files)} guide files in {guides_dir} could be read ({reasons})")
    return pages, skipped


def _splitter(size: int) -> RecursiveCharacterTextSplitter:
    # A little overlap so a fact cut at a boundary still appears whole in one of the two chunks.
    return RecursiveCharacterTextSplitter(
        chunk_size=size, chunk_overlap=size // 10, separators=_SEPARATORS, keep_separator="end"
    )


def _units(text: str, size: int) -> list[str]:
    """Cut a page into pieces no longer than ``size`` (bar a repeated question), FAQ-aware."""
    units: list[str] = []
    for block in (b.strip() for b in _FAQ_START.split(text)):
        if not block:
            continue
        if len(block) <= size:
            units.append(block)
            continue
        match = _FAQ_QUESTION.match(block)
        question = match.group(1) if match else ""
        if question and len(question) < size // 2:
            # Every piece of a long answer carries its question: retrieval then finds the
            # answer by the question's words, and the executor sees what the piece answers.
            body = block[len(question):].strip()
            budget = size - len(question) - len(" A: ... ")
            for piece in _splitter(budget).split_text(body):
                units.append(f"{question} {piece if piece.startswith('A:') else 'A: ... ' + piece}")
        else:
            units.extend(_splitter(size).split_text(block))
    return units


def chunk_pages(pages: list[Page], size: int) -> list[Chunk]:
    """Chunks of at most ``size`` characters, never crossing a page; consecutive small prose
    pieces of a page are packed together, FAQ entries get a chunk each."""
    if size < 50:
        raise ValueError(f"chunk size {size} is too small (minimum 50 characters)")
    chunks: list[Chunk] = []
    for page in pages:
        current, has_entry = "", False
        for unit in _units(page.text, size):
            is_entry = unit.startswith("Q:")
            # One FAQ entry per chunk: packing several questions into one vector blurs them all
            # (measured: our FAQ page then out-ranked the guide page holding the answer). Only
            # prose before the first entry (a page's intro) is packed with it.
            fits = bool(current) and len(current) + 1 + len(unit) <= size
            if fits and not (is_entry and has_entry):
                current = f"{current} {unit}"
                has_entry = has_entry or is_entry
            else:
                if current:
                    chunks.append(Chunk(page.file, page.page, current))
                current, has_entry = unit, is_entry
        if current:
            chunks.append(Chunk(page.file, page.page, current))
    return chunks
