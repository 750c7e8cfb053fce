"""The versioned guide library on real files: PDF, Markdown and HTML guides; incremental re-index;
refused files change nothing; a question during a re-index sees one whole version; a second library
object on the same directory (another worker, a restart, ``chops retrieve``) sees the same version."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from chops.pipeline.context import TurnContext
from chops.pipeline.retrieval import Retriever
from chops.pipeline.trace import Trace
from chops.retrieval import DocumentError, GuideError, GuideLibrary
from chops.retrieval.library import prepare
from chops.settings import get_settings
from tests.integration.guide_support import HTML, MARKDOWN, HashEmbedder, write_encrypted_pdf, write_pdf


@pytest.fixture
def settings(tmp_path):
    return get_settings(data_dir=tmp_path / "data", guides_dir=tmp_path / "no-demo-guides")


@pytest.fixture
def files(tmp_path) -> Path:
    folder = tmp_path / "files"
    folder.mkdir()
    write_pdf(folder / "fees.pdf", "Q: Is there a fee for the exam? A: No, taking part is free.")
    (folder / "badges.md").write_text(MARKDOWN)
    (folder / "parking.html").write_text(HTML)
    return folder


def library(settings, embedder=None) -> GuideLibrary:
    return GuideLibrary.for_service(settings, embedder or HashEmbedder())


def add(lib: GuideLibrary, *paths: Path):
    return lib.apply([prepare(p.name, p) for p in paths])


def top(lib_or_index, question: str, size: str = "long"):
    found = lib_or_index.search(question, k=1, size=size)
    return found[0] if found else None


def state(lib: GuideLibrary) -> tuple:
    """The live version, its manifest and the stored files: "the index is unchanged" compares these."""
    version = lib.store.pointer()
    manifest = (lib.root / "versions" / version / "manifest.json").read_text() if version else None
    return version, manifest, sorted(p.name for p in (lib.root / "files").glob("*"))


def test_pdf_markdown_and_html_guides_are_found_with_file_and_page(settings, files):
    lib = library(settings)
    assert lib.current().version == "v000001" and lib.current().chunks["long"] == []  # no demo guides: empty
    update = add(lib, *sorted(files.iterdir()))
    assert update.added == ["badges.md", "fees.pdf", "parking.html"] and update.version == "v000002"
    assert (top(lib, "Is there a fee for the exam?").file, top(lib, "Is there a fee for the exam?").page) == \
        ("fees.pdf", 1)
    lost = top(lib, "where is a lost badge replaced")
    assert (lost.file, lost.page) == ("badges.md", 2) and "front desk" in lost.text  # section 2 of the Markdown
    bikes = top(lib, "where do bicycles go")
    assert (bikes.file, bikes.page) == ("parking.html", 2) and "shed by the gate" in bikes.text
    texts = " ".join(c.text for c in lib.current().chunks["long"])
    assert "never indexed" not in texts and "ignored title" not in texts and "color" not in texts
    docs = lib.current().manifest["documents"]
    assert {n: d["type"] for n, d in docs.items()} == {"badges.md": "markdown", "fees.pdf": "pdf",
                                                       "parking.html": "html"}
    assert docs["badges.md"]["size"] == len(MARKDOWN.encode()) and docs["badges.md"]["version"] == "v000002"


def test_replace_embeds_only_the_replaced_guide_and_the_old_text_is_gone(settings, files):
    embedder = HashEmbedder()
    lib = library(settings, embedder)
    add(lib, *sorted(files.iterdir()))
    before = {n: d for n, d in lib.current().manifest["documents"].items()}
    embedder.texts.clear()
    (files / "badges.md").write_text("# Badges\n\nBadges are blue from now on.\n")
    update = add(lib, files / "badges.md", files / "fees.pdf")  # fees.pdf unchanged: skipped
    assert update.changed == ["badges.md"] and update.added == []
    new_chunks = [c.text for size in ("short", "long") for c in lib.current().chunks[size] if c.file == "badges.md"]
    assert embedder.texts == new_chunks == ["Badges Badges are blue from now on."] * 2
    assert "green" not in " ".join(c.text for c in lib.current().chunks["long"])
    docs = lib.current().manifest["documents"]
    assert docs["fees.pdf"] == before["fees.pdf"]  # kept as it was, with its upload time and version
    assert docs["badges.md"]["version"] == update.version != before["badges.md"]["version"]


def test_delete_is_never_retrieved_again_and_old_versions_are_cleaned(settings, files):
    lib = library(settings)
    add(lib, *sorted(files.iterdir()))
    lib.apply([], {"parking.html"})
    assert all(c.file != "parking.html" for size in ("short", "long") for c in lib.current().chunks[size])
    assert all(c.file != "parking.html" for c in lib.search("where do bicycles go", k=10))
    lib.apply([], {"fees.pdf"})
    versions = sorted(p.name for p in (lib.root / "versions").iterdir())
    assert versions == ["v000003", "v000004"]  # the live one and the one before
    stored = {p.name for p in (lib.root / "files").iterdir()}
    wanted = {f"{d['sha256']}{Path(n).suffix}" for v in versions
              for n, d in json.loads((lib.root / "versions" / v / "manifest.json").read_text())["documents"].items()}
    assert stored == wanted and len(stored) == 2  # badges.md and fees.pdf (still used by v000003)


@pytest.mark.parametrize(("make", "code"), [
    (lambda d: write_encrypted_pdf(d / "locked.pdf", "A secret page."), "encrypted"),
    (lambda d: write_pdf(d / "blank.pdf", "", ""), "no_text"),
    (lambda d: (d / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf") and d / "broken.pdf",
     "unreadable"),
    (lambda d: (d / "empty.md").write_text("   \n") and d / "empty.md", "no_text"),
    (lambda d: (d / "notes.txt").write_text("plain text") and d / "notes.txt", "unsupported_type"),
    (lambda d: (d / "latin1.html").write_bytes("<p>caf\xe9</p>".encode("latin-1")) and d / "latin1.html",
     "unreadable"),
])
def test_a_refused_file_has_a_stable_code_and_changes_nothing(settings, files, tmp_path, make, code):
    lib = library(settings)
    add(lib, files / "fees.pdf")
    before = state(lib)
    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    with pytest.raises(DocumentError) as refused:
        prepare(make(bad_dir).name, make(bad_dir))
    assert refused.value.code == code
    assert state(lib) == before


def test_too_large_is_refused_before_parsing(settings, files):
    with pytest.raises(DocumentError) as refused:
        prepare("fees.pdf", files / "fees.pdf", max_bytes=100)
    assert refused.value.code == "too_large"
    with pytest.raises(DocumentError) as named:
        prepare("../fees.pdf", files / "fees.pdf")
    assert named.value.code == "invalid_field"


def test_sync_makes_the_set_match_a_folder_and_is_idempotent(settings, files):
    embedder = HashEmbedder()
    lib = library(settings, embedder)
    write_pdf(files / "broken-scan.pdf", "")
    first = lib.sync(files)
    assert first.added == ["badges.md", "fees.pdf", "parking.html"]
    assert [(s.file, s.reason) for s in first.skipped] == [("broken-scan.pdf", "no extractable text (empty or scanned)")]
    calls = embedder.calls
    second = lib.sync(files)
    assert not second.published and (second.added, second.changed, second.removed, second.skipped) == ([], [], [], [])
    assert embedder.calls == calls and second.version == first.version
    (files / "parking.html").unlink()
    write_pdf(files / "fees.pdf", "Q: Is there a fee for the exam? A: Yes, 5 zorkmids.")
    third = lib.sync(files)
    assert (third.changed, third.removed) == (["fees.pdf"], ["parking.html"])
    assert "zorkmids" in top(lib, "Is there a fee for the exam?").text
    (files / "empty").mkdir()
    with pytest.raises(GuideError, match="holds no guide files"):
        lib.sync(files / "empty")
    assert lib.current().version == third.version


def test_a_question_during_a_reindex_sees_one_whole_version(settings, files):
    embedder = HashEmbedder()
    lib = library(settings, embedder)
    add(lib, files / "fees.pdf", files / "badges.md")
    old = lib.current()
    write_pdf(files / "fees.pdf", "Q: Is there a fee for the exam? A: Yes, 5 zorkmids per student.")
    embedder.hold = threading.Event()
    worker = threading.Thread(target=add, args=(lib, files / "fees.pdf", files / "parking.html"))
    worker.start()
    try:
        assert embedder.holding.wait(10)  # the re-index is mid-way: new chunks being embedded
        during = lib.current()
        assert during is old and "free" in top(lib, "Is there a fee for the exam?").text
        assert top(lib, "where do bicycles go").file != "parking.html"
        # A turn takes its version at its first search and keeps it for every later one.
        ctx = TurnContext(nickname="someone", text="Is there a fee for the exam?", profile=None, history=[],
                          trace=Trace())
        retriever = Retriever(lib, settings)
        assert "free" in retriever.search(ctx, "short")[0].text
    finally:
        embedder.hold.set()
        worker.join(10)
    new = lib.current()
    assert new.version != old.version and "zorkmids" in top(lib, "Is there a fee for the exam?").text
    assert top(lib, "where do bicycles go").file == "parking.html"
    assert "free" in retriever.search(ctx, "long")[0].text and ctx.guides is old  # the turn's own version
    assert "free" in top(old, "Is there a fee for the exam?").text  # a held version never changes


def test_another_process_and_a_restart_see_the_new_version(settings, files):
    worker_a, worker_b = library(settings), library(settings)
    assert worker_a.current().version == worker_b.current().version
    add(worker_a, files / "badges.md")
    assert worker_b.current().version == worker_a.current().version
    assert top(worker_b, "where is a lost badge replaced").file == "badges.md"
    embedder = HashEmbedder()
    restarted = library(settings, embedder)
    assert restarted.current().version == worker_a.current().version and embedder.calls == 0  # loaded, not rebuilt


def test_two_reindexes_at_once_both_land(settings, files):
    a, b = library(settings), library(settings)
    threads = [threading.Thread(target=add, args=(a, files / "fees.pdf")),
               threading.Thread(target=add, args=(b, files / "badges.md"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert set(a.current().manifest["documents"]) == {"fees.pdf", "badges.md"}


def test_another_embedder_rebuilds_from_the_stored_files(settings, files):
    add(library(settings), files / "fees.pdf", files / "badges.md")
    (files / "fees.pdf").unlink()  # the library keeps its own copy of every guide
    other = HashEmbedder("another-model")
    lib = library(settings, other)
    index = lib.current()
    assert index.rebuilt and index.manifest["embedder"] == "another-model"
    assert set(index.manifest["documents"]) == {"fees.pdf", "badges.md"}
    assert top(lib, "Is there a fee for the exam?").file == "fees.pdf"
