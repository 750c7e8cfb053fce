"""A guide folder's saved index and its manifest: reuse when current, re-embed only what changed,
rebuild when the embedder, the chunk sizes or the saved files changed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from chops.retrieval import GuideIndex, index_dir_for
from chops.settings import REPO_ROOT, get_settings
from tests.integration.guide_support import HashEmbedder, write_pdf


@pytest.fixture
def guides(tmp_path) -> Path:
    folder = tmp_path / "guides"
    shutil.copytree(REPO_ROOT / "guides", folder, ignore=shutil.ignore_patterns("src"))
    return folder


@pytest.fixture
def settings(tmp_path):
    return get_settings(data_dir=tmp_path / "data")


def live(where: Path) -> Path:
    """The live version's directory of the library at ``where``."""
    return where / "versions" / (where / "CURRENT").read_text()


def test_build_saves_then_reuses(guides, settings):
    first = GuideIndex.load_or_build(guides, settings, HashEmbedder())
    where = index_dir_for(guides, settings)
    manifest = json.loads((live(where) / "manifest.json").read_text())
    assert first.rebuilt and where.parent == settings.data_dir / "indexes"
    assert manifest["embedder"] == "fake-hash" and manifest["version"] == first.version == "v000001"
    assert manifest["chunk_sizes"] == {"short": settings.chunk_short, "long": settings.chunk_long}
    assert set(manifest["documents"]) == {"faq.pdf", "user-guide.pdf"}
    assert all(len(d["sha256"]) == 64 and d["type"] == "pdf" for d in manifest["documents"].values())

    embedder = HashEmbedder()
    second = GuideIndex.load_or_build(guides, settings, embedder)
    assert not second.rebuilt and embedder.calls == 0
    assert [c.text for c in second.chunks["long"]] == [c.text for c in first.chunks["long"]]
    assert second.search("Is there a fee for the exam?", k=1, size="short")[0].file == "faq.pdf"


def test_changed_guide_is_the_only_one_embedded_again(guides, settings):
    first = GuideIndex.load_or_build(guides, settings, HashEmbedder())
    write_pdf(guides / "faq.pdf", "Q: Is there a fee for the exam? A: Yes, a fee of 5 zorkmids per student.")
    embedder = HashEmbedder()
    index = GuideIndex.load_or_build(guides, settings, embedder)
    assert index.rebuilt and index.version == "v000002"
    faq_chunks = [c.text for size in ("short", "long") for c in index.chunks[size] if c.file == "faq.pdf"]
    assert embedder.texts == faq_chunks  # user-guide.pdf was not parsed or embedded again
    assert [c.text for c in index.chunks["long"] if c.file == "user-guide.pdf"] == \
        [c.text for c in first.chunks["long"] if c.file == "user-guide.pdf"]
    top = index.search("Is there a fee for the exam?", k=1, size="short")[0]
    assert "zorkmids" in top.text and (top.file, top.page) == ("faq.pdf", 1)


def test_added_and_removed_guides_rebuild(guides, settings):
    GuideIndex.load_or_build(guides, settings, HashEmbedder())
    write_pdf(guides / "extra.pdf", "Arbiters settle disputed marks.")
    added = GuideIndex.load_or_build(guides, settings, HashEmbedder())
    assert added.rebuilt and "extra.pdf" in added.manifest["documents"]
    (guides / "extra.pdf").unlink()
    removed = GuideIndex.load_or_build(guides, settings, HashEmbedder())
    assert removed.rebuilt and "extra.pdf" not in {c.file for c in removed.chunks["short"]}


@pytest.mark.parametrize("change", ["embedder", "chunk_size"])
def test_other_embedder_or_chunk_size_rebuilds(guides, settings, change):
    GuideIndex.load_or_build(guides, settings, HashEmbedder())
    if change == "embedder":
        index = GuideIndex.load_or_build(guides, settings, HashEmbedder("another-model"))
    else:
        index = GuideIndex.load_or_build(guides, settings.model_copy(update={"chunk_short": 200}), HashEmbedder())
    assert index.rebuilt
    assert max(len(c.text) for c in index.chunks["short"]) <= (200 if change == "chunk_size" else 300)


def test_damaged_index_rebuilds(guides, settings):
    GuideIndex.load_or_build(guides, settings, HashEmbedder())
    where = index_dir_for(guides, settings)
    np.save(live(where) / "long.vectors.npy", np.zeros((1, 512), dtype=np.float32))  # wrong row count
    assert GuideIndex.load_or_build(guides, settings, HashEmbedder()).rebuilt
    (live(where) / "short.chunks.json").write_text("{not json")
    assert GuideIndex.load_or_build(guides, settings, HashEmbedder()).rebuilt
    again = GuideIndex.load_or_build(guides, settings, HashEmbedder())
    assert not again.rebuilt and again.search("Is there a fee for the exam?", k=1, size="short")[0].file == "faq.pdf"
    assert len(list((where / "versions").iterdir())) == 2  # older versions are cleaned up


def test_skipped_file_is_recorded_and_its_repair_rebuilds(guides, settings):
    (guides / "broken.pdf").write_bytes(b"not a pdf")
    index = GuideIndex.load_or_build(guides, settings, HashEmbedder())
    assert [s.file for s in index.skipped] == ["broken.pdf"]
    write_pdf(guides / "broken.pdf", "Scores are final after the review week.")
    repaired = GuideIndex.load_or_build(guides, settings, HashEmbedder())
    assert repaired.rebuilt and repaired.skipped == []
    assert any(c.file == "broken.pdf" for c in repaired.chunks["long"])


def test_two_guide_directories_get_two_indexes(guides, settings, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    write_pdf(other / "only.pdf", "Only this text.")
    assert index_dir_for(guides, settings) != index_dir_for(other, settings)
    GuideIndex.load_or_build(guides, settings, HashEmbedder())
    GuideIndex.load_or_build(other, settings, HashEmbedder())
    assert not GuideIndex.load_or_build(guides, settings, HashEmbedder()).rebuilt
