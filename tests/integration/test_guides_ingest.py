"""Reading real PDFs: the demo guides, the CPHOS guides, and broken files."""

from __future__ import annotations

import importlib.util

import pytest
from pypdf import PdfReader, PdfWriter

from chops.retrieval.ingest import GuideError, chunk_pages, load_guides, read_pdf
from chops.settings import REPO_ROOT
from tests.integration.guide_support import write_encrypted_pdf, write_pdf

GUIDES = REPO_ROOT / "guides"


def test_demo_guides_pages_files_and_faq(tmp_path):
    pages, skipped = load_guides(GUIDES)
    assert skipped == []
    assert {(p.file, p.page) for p in pages} == {("faq.pdf", 1)} | {("user-guide.pdf", n) for n in range(1, 6)}
    long_chunks = chunk_pages(pages, 1200)
    fee = [c for c in chunk_pages(pages, 300) if "Is there a fee for the exam?" in c.text]
    assert len(fee) == 1 and (fee[0].file, fee[0].page) == ("faq.pdf", 1)
    assert "free of charge" in fee[0].text  # the answer travels with its question
    marking = [c for c in long_chunks if "Left to mark" in c.text]
    assert {(c.file, c.page) for c in marking} == {("user-guide.pdf", 3)}
    assert all("\n" not in c.text and "  " not in c.text for c in long_chunks)


def test_committed_guide_pdfs_match_their_sources(tmp_path):
    spec = importlib.util.spec_from_file_location("build_guides", REPO_ROOT / "scripts" / "build_guides.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    built = module.build(GUIDES / "src", tmp_path)
    assert [p.name for p in built] == sorted(p.name for p in GUIDES.glob("*.pdf"))
    for path in built:
        assert path.read_bytes() == (GUIDES / path.name).read_bytes(), \
            f"guides/{path.name} is out of date: run python scripts/build_guides.py"


def test_cphos_guides_read_with_page_numbers(cphos_dir):
    pages, skipped = load_guides(cphos_dir / "guides")
    assert skipped == []
    by_file = {}
    for page in pages:
        by_file.setdefault(page.file, []).append(page.page)
    assert by_file["LeaderGuide_Eng.pdf"] == [1, 2, 3, 4, 5, 6]
    assert len(by_file) == 6 and all(v == [1] for k, v in by_file.items() if k != "LeaderGuide_Eng.pdf")
    chunks = chunk_pages(pages, 300)
    # Every FAQ chunk of a FAQ file starts with its question (or is the file's short intro).
    faq = [c for c in chunks if c.file != "LeaderGuide_Eng.pdf" and "Q:" in c.text]
    assert faq and all(c.text.startswith("Q:") or c.text.index("Q:") < 120 for c in faq)
    assert all("A:" in c.text for c in faq)
    marking_center = {(c.file, c.page) for c in chunks if "Marking Center" in c.text and c.file == "LeaderGuide_Eng.pdf"}
    assert marking_center == {("LeaderGuide_Eng.pdf", 3), ("LeaderGuide_Eng.pdf", 5)}


def test_bad_pdfs_are_skipped_by_name(tmp_path):
    write_pdf(tmp_path / "good.pdf", "Uploads close at the deadline.")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    write_pdf(tmp_path / "blank.pdf", "", "")
    write_encrypted_pdf(tmp_path / "locked.pdf", "A secret page.")
    (tmp_path / "notes.txt").write_text("not a guide")

    pages, skipped = load_guides(tmp_path)
    assert [(p.file, p.page, p.text) for p in pages] == [("good.pdf", 1, "Uploads close at the deadline.")]
    reasons = {s.file: s.reason for s in skipped}
    assert set(reasons) == {"blank.pdf", "broken.pdf", "locked.pdf"}
    assert "encrypted" in reasons["locked.pdf"]
    assert "no extractable text" in reasons["blank.pdf"]
    assert "unreadable" in reasons["broken.pdf"]


def test_owner_only_encryption_is_readable(tmp_path):
    writer = PdfWriter(clone_from=write_pdf(tmp_path / "src.pdf", "Marking starts on Monday."))
    writer.encrypt(user_password="", owner_password="owner")
    with open(tmp_path / "owner.pdf", "wb") as fh:
        writer.write(fh)
    assert PdfReader(tmp_path / "owner.pdf").is_encrypted
    assert [p.text for p in read_pdf(tmp_path / "owner.pdf")] == ["Marking starts on Monday."]


def test_empty_or_missing_or_useless_directory_is_an_error(tmp_path):
    with pytest.raises(GuideError, match="holds no guide files"):
        load_guides(tmp_path)
    with pytest.raises(GuideError, match="does not exist"):
        load_guides(tmp_path / "missing")
    (tmp_path / "broken.pdf").write_bytes(b"garbage")
    with pytest.raises(GuideError, match="none of the 1 guide files.*broken.pdf"):
        load_guides(tmp_path)


def test_page_attribution_on_a_multi_page_pdf(tmp_path):
    write_pdf(tmp_path / "multi.pdf", "First page talks about uploads.", "", "Third page talks about marking.")
    pages, _ = load_guides(tmp_path)
    assert [(p.page, p.text) for p in pages] == [(1, "First page talks about uploads."),
                                                 (3, "Third page talks about marking.")]
