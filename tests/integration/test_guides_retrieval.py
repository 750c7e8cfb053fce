"""Retrieval with the real USE model over fixed corpora (our demo guides, the CPHOS guides),
and the two CLI commands end to end."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from chops.cli import main
from chops.retrieval import GuideIndex
from chops.retrieval.embedders import make_embedder
from chops.settings import REPO_ROOT, get_settings


@pytest.fixture(scope="session")
def use_embedder():
    """The real USE model, loaded once per test session."""
    embedder = make_embedder(get_settings(embedder="use-numpy"))
    embedder.embed(["load"])
    return embedder


@pytest.fixture(scope="module")
def demo_index(use_embedder, tmp_path_factory):
    settings = get_settings(data_dir=tmp_path_factory.mktemp("data"))
    return GuideIndex.load_or_build(REPO_ROOT / "guides", settings, use_embedder)


@pytest.fixture(scope="module")
def cphos_index(use_embedder, tmp_path_factory, cphos_dir):
    settings = get_settings(data_dir=tmp_path_factory.mktemp("data"))
    return GuideIndex.load_or_build(cphos_dir / "guides", settings, use_embedder)


@pytest.mark.parametrize(("question", "size", "file", "page", "phrase"), [
    ("Is there a fee for the exam?", "short", "faq.pdf", 1, "free of charge"),
    ("Is there a fee for the exam?", "long", "faq.pdf", 1, "free of charge"),
    ("Can I upload answer sheets after the deadline?", "long", "faq.pdf", 1, "late answer sheets are not accepted"),
    ("Are students allowed to mark papers?", "short", "faq.pdf", 1, "Only teachers may mark"),
    ("What is my upload limit?", "long", "user-guide.pdf", 2, "between 0 and 200"),
    ("How do I add my students?", "short", "user-guide.pdf", 2, "Add student"),
    ("How do I mark the answers assigned to me?", "long", "user-guide.pdf", 3, "Left to mark"),
    ("Who can add a new school?", "long", "user-guide.pdf", 4, "ask an administrator"),
])
def test_demo_guides_top1(demo_index, question, size, file, page, phrase):
    top = demo_index.search(question, k=1, size=size)[0]
    assert (top.file, top.page) == (file, page)
    assert phrase in top.text
    assert len(top.text) <= (get_settings().chunk_short if size == "short" else get_settings().chunk_long)


@pytest.mark.parametrize(("question", "file", "page"), [
    ("Do we have to pay to take part in the exam?", "Exam-related questions.pdf", 1),
    ("How can I open the compressed exam file?", "Exam Paper Transmission questions.pdf", 1),
    ("Can students help with grading?", "Grading-related questions.pdf", 1),
    ("How do I export scores to Excel?", "Score Release-related questions.pdf", 1),
])
@pytest.mark.parametrize("size", ["short", "long"])
def test_cphos_guides_top1(cphos_index, question, size, file, page):
    top = cphos_index.search(question, k=1, size=size)[0]
    assert (top.file, top.page) == (file, page)


def test_scores_are_ranked_cosines(demo_index):
    found = demo_index.search("Is there a fee for the exam?", k=5, size="short", mode="dense")
    cosines = [c.cosine for c in found]
    assert cosines == sorted(cosines, reverse=True) and -1.0 <= cosines[-1] < cosines[0] <= 1.0


def test_cli_build_then_retrieve_json(tmp_path):
    runner = CliRunner(env={"CHOPS_DATA_DIR": str(tmp_path)})
    built = runner.invoke(main, ["index", "build"])
    assert built.exit_code == 0, built.output
    assert "index built: 2 guide(s), 6 page(s)" in built.stdout and "version v000001" in built.stdout
    again = runner.invoke(main, ["index", "build"])
    assert "index up to date" in again.stdout

    result = runner.invoke(main, ["retrieve", "Is there a fee for the exam?", "--json", "-k", "2"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert len(rows) == 2
    assert {"file", "page", "score", "text"} <= set(rows[0])
    assert (rows[0]["file"], rows[0]["page"]) == ("faq.pdf", 1) and "free of charge" in rows[0]["text"]

    plain = runner.invoke(main, ["retrieve", "How do I add my students?", "--size", "short", "-k", "1"])
    assert plain.exit_code == 0 and plain.stdout.startswith("#1  user-guide.pdf  page 2")


def test_cli_reports_bad_guide_directories(tmp_path):
    runner = CliRunner(env={"CHOPS_DATA_DIR": str(tmp_path / "data")})
    (tmp_path / "empty").mkdir()
    result = runner.invoke(main, ["retrieve", "anything", "--guides", str(tmp_path / "empty")])
    assert result.exit_code == 1 and "holds no guide files" in result.output

    (tmp_path / "mixed").mkdir()
    (tmp_path / "mixed" / "broken.pdf").write_bytes(b"not a pdf")
    (tmp_path / "mixed" / "faq.pdf").write_bytes((REPO_ROOT / "guides" / "faq.pdf").read_bytes())
    result = runner.invoke(main, ["index", "build", "--guides", str(tmp_path / "mixed")])
    assert result.exit_code == 0
    assert "skipped broken.pdf: unreadable PDF" in result.stderr


def test_cli_guides_sync_twice_then_retrieve_and_list(tmp_path):
    from tests.integration.guide_support import MARKDOWN, write_pdf

    runner = CliRunner(env={"CHOPS_DATA_DIR": str(tmp_path / "data")})
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "badges.md").write_text(MARKDOWN)
    write_pdf(folder / "fees.pdf", "Q: Is there a fee for the exam? A: No, taking part is free.")
    write_pdf(folder / "scan.pdf", "")
    first = runner.invoke(main, ["guides", "sync", str(folder)])
    assert first.exit_code == 0, first.output
    assert first.stdout.splitlines() == ["added badges.md", "added fees.pdf",
                                         "skipped scan.pdf: no extractable text (empty or scanned)", "version v000001"]
    second = runner.invoke(main, ["guides", "sync", str(folder)])
    assert second.exit_code == 0 and second.stdout == "nothing changed (version v000001)\n"

    found = runner.invoke(main, ["retrieve", "Where is a lost badge replaced?", "--json", "-k", "1"])
    assert found.exit_code == 0, found.output
    assert [(r["file"], r["page"]) for r in json.loads(found.stdout)] == [("badges.md", 2)]

    (folder / "badges.md").unlink()
    third = runner.invoke(main, ["guides", "sync", str(folder)])
    assert third.stdout.splitlines() == ["removed badges.md", "version v000002"]
    listed = json.loads(runner.invoke(main, ["guides", "list", "--json"]).stdout)
    assert listed["version"] == "v000002" and list(listed["guides"]) == ["fees.pdf"]
    after = runner.invoke(main, ["retrieve", "Where is a lost badge replaced?", "--json", "-k", "3"])
    assert all(r["file"] != "badges.md" for r in json.loads(after.stdout))
