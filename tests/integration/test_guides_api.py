"""The staff guide API and the console's guides page over a real guide library and real files: upload,
replace, delete, refusals with stable codes that leave the index as it was, a guide uploaded
mid-conversation and then cited (scripted model), a restart on the same data directory."""

from __future__ import annotations

import io
import re
import time
from pathlib import Path

import pytest

from chops.llm import ScriptedLLM
from chops.retrieval import GuideLibrary
from chops.settings import get_settings
from chops.web.app import create_app
from tests.integration.guide_support import HTML, MARKDOWN, HashEmbedder, write_encrypted_pdf, write_pdf
from tests.unit.pipeline_support import demo_engine, to_guide, verdict
from tests.unit.web_support import SECRET, STAFF_KEY, STAFF_PASSWORD, add_staff, script_profile_answer, start

STAFF = {"X-Staff-Key": STAFF_KEY}


def guide_app(url: str, data_dir: Path, embedder=None, **overrides):
    """(app, scripted llm, library) with the service's guide library in ``data_dir`` (no demo guides)."""
    settings = get_settings(**{"secret_key": SECRET, "staff_api_key": STAFF_KEY, "data_dir": data_dir,
                               "guides_dir": data_dir / "no-demo-guides", **overrides})
    library = GuideLibrary.for_service(settings, embedder or HashEmbedder())
    llm = ScriptedLLM()
    app = create_app(settings, llm=llm, engine=demo_engine(url), index=library)
    app.config["TESTING"] = True
    return app, llm, library


@pytest.fixture
def web(sqlite_url, tmp_path):
    app, llm, library = guide_app(sqlite_url, tmp_path / "data")
    add_staff(app)
    return app.test_client(), llm, library


def send(client, method: str, path: str, name: str, content: bytes, headers=STAFF, **form):
    return client.open(path, method=method, headers=headers, content_type="multipart/form-data",
                       data={"file": (io.BytesIO(content), name), **form})


def upload(client, name: str, content: bytes, **kw):
    return send(client, "POST", "/v1/staff/guides", name, content, **kw)


def pdf_bytes(tmp_path: Path, *pages: str) -> bytes:
    return write_pdf(tmp_path / "made.pdf", *pages).read_bytes()


def state(library: GuideLibrary) -> tuple:
    version = library.store.pointer()
    manifest = (library.root / "versions" / version / "manifest.json").read_text()
    return version, manifest, sorted(p.name for p in (library.root / "files").iterdir()), \
        sorted(p.name for p in (library.root / "incoming").glob("*"))


def test_upload_list_replace_delete(web, tmp_path):
    client, _, library = web
    assert client.get("/v1/staff/guides", headers=STAFF).get_json() == {"version": "v000001", "guides": []}
    created = upload(client, "fees.pdf", pdf_bytes(tmp_path, "Q: Is there a fee for the exam? A: No, it is free."))
    assert created.status_code == 201, created.get_json()
    body = created.get_json()
    assert body["version"] == "v000002" and body["guide"]["name"] == "fees.pdf" and body["guide"]["type"] == "pdf"
    assert upload(client, "badges.md", MARKDOWN.encode()).status_code == 201
    assert upload(client, "parking.html", HTML.encode()).status_code == 201
    listed = client.get("/v1/staff/guides", headers=STAFF).get_json()
    assert listed["version"] == "v000004"
    assert [(g["name"], g["type"], g["pages"]) for g in listed["guides"]] == [
        ("badges.md", "markdown", 2), ("fees.pdf", "pdf", 1), ("parking.html", "html", 2)]
    assert all(len(g["sha256"]) == 64 and g["chunks"]["long"] >= 1 and g["uploaded_at"] for g in listed["guides"])
    assert library.search("where is a lost badge replaced", k=1)[0].file == "badges.md"

    again = upload(client, "badges.md", b"# Badges\n\nBadges are blue.\n")
    assert again.status_code == 409 and again.get_json()["error"]["code"] == "guide_exists"
    replaced = send(client, "PUT", "/v1/staff/guides/badges.md", "anything.md", b"# Badges\n\nBadges are blue.\n")
    assert replaced.status_code == 200 and replaced.get_json()["guide"]["size"] == 27
    assert all("green" not in c.text for c in library.current().chunks["long"])

    deleted = client.delete("/v1/staff/guides/parking.html", headers=STAFF)
    assert deleted.status_code == 200 and deleted.get_json()["deleted"] == "parking.html"
    assert all(c.file != "parking.html" for c in library.search("where do bicycles go", k=10))
    for resp in (client.delete("/v1/staff/guides/parking.html", headers=STAFF),
                 send(client, "PUT", "/v1/staff/guides/nothing.md", "nothing.md", b"# x\n\ny\n")):
        assert resp.status_code == 404 and resp.get_json()["error"]["code"] == "guide_not_found"


@pytest.mark.parametrize(("name", "make", "status", "code"), [
    ("locked.pdf", lambda d: write_encrypted_pdf(d / "locked.pdf", "A secret page.").read_bytes(), 422, "encrypted"),
    ("blank.pdf", lambda d: write_pdf(d / "blank.pdf", "").read_bytes(), 422, "no_text"),
    ("broken.pdf", lambda d: b"%PDF-1.4 truncated garbage", 422, "unreadable"),
    ("notes.txt", lambda d: b"plain text", 415, "unsupported_type"),
    ("big.md", lambda d: b"# Big\n\n" + b"word " * 1000, 413, "too_large"),
    ("huge.md", lambda d: b"x" * (1 << 20) + b"x" * 5000, 413, "too_large"),  # over the body limit itself
    (".hidden.md", lambda d: b"# Hidden\n\ntext\n", 400, "invalid_field"),
])
def test_a_refused_upload_answers_its_code_and_the_index_stays_as_it_was(sqlite_url, tmp_path, name, make,
                                                                          status, code):
    app, _, library = guide_app(sqlite_url, tmp_path / "data", guide_max_bytes=4000)
    client = app.test_client()
    good = {".pdf": pdf_bytes(tmp_path, "Marking starts on Monday."), ".md": MARKDOWN.encode()}
    for suffix, content in good.items():
        assert upload(client, f"target{suffix}", content).status_code == 201
    before = state(library)
    resp = upload(client, name, make(tmp_path))
    assert resp.status_code == status and resp.get_json()["error"]["code"] == code, resp.get_json()
    assert state(library) == before
    if code not in ("unsupported_type", "invalid_field"):  # the same file as a replacement: refused alike
        target = f"target{Path(name).suffix}"
        replace = send(client, "PUT", f"/v1/staff/guides/{target}", name, make(tmp_path))
        assert replace.get_json()["error"]["code"] == code and state(library) == before


def test_staff_only_and_a_console_session_needs_its_csrf_token(web):
    client, _, _ = web
    for resp in (client.get("/v1/staff/guides"), client.get("/v1/staff/guides", headers={"X-Staff-Key": "wrong"}),
                 upload(client, "a.md", b"# A\n\ntext\n", headers={})):
        assert resp.status_code == 401 and resp.get_json()["error"]["code"] == "staff_required"
    assert client.post("/console/login", data={"name": "sam", "password": STAFF_PASSWORD}).status_code == 302
    assert client.get("/v1/staff/guides").status_code == 200  # reading with the session is fine
    refused = upload(client, "a.md", b"# A\n\ntext\n", headers={})
    assert refused.status_code == 403 and refused.get_json()["error"]["code"] == "csrf_failed"
    token = re.search(r'name="csrf" value="([^"]+)"', client.get("/console/guides").get_data(as_text=True)).group(1)
    assert upload(client, "a.md", b"# A\n\ntext\n", headers={"X-CSRF-Token": token}).status_code == 201


def test_the_console_page_lists_uploads_replaces_and_deletes(web, tmp_path):
    client, _, library = web
    client.post("/console/login", data={"name": "sam", "password": STAFF_PASSWORD})
    page = client.get("/console/guides").get_data(as_text=True)
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    assert "No guides" in page
    no_token = client.post("/console/guides", content_type="multipart/form-data",
                           data={"file": (io.BytesIO(MARKDOWN.encode()), "badges.md")})
    assert no_token.status_code == 400 and library.current().manifest["documents"] == {}
    posted = client.post("/console/guides", content_type="multipart/form-data", follow_redirects=True,
                         data={"csrf": csrf, "file": (io.BytesIO(MARKDOWN.encode()), "badges.md")})
    html = posted.get_data(as_text=True)
    assert "badges.md uploaded: live in version v000002" in html and 'data-guide="badges.md"' in html
    refused = client.post("/console/guides", content_type="multipart/form-data", follow_redirects=True,
                          data={"csrf": csrf, "file": (io.BytesIO(b"%PDF-1.4 junk"), "junk.pdf")})
    assert "refused (unreadable)" in refused.get_data(as_text=True)
    replaced = client.post("/console/guides/badges.md/replace", content_type="multipart/form-data",
                           follow_redirects=True,
                           data={"csrf": csrf, "file": (io.BytesIO(b"# Badges\n\nBadges are blue.\n"), "x.md")})
    assert "badges.md replaced" in replaced.get_data(as_text=True)
    assert [c.text for c in library.current().chunks["long"]] == ["Badges Badges are blue."]
    deleted = client.post("/console/guides/badges.md/delete", data={"csrf": csrf}, follow_redirects=True)
    assert "badges.md deleted" in deleted.get_data(as_text=True) and library.current().manifest["documents"] == {}


def test_a_slow_reindex_answers_202_and_goes_live_when_done(sqlite_url, tmp_path):
    embedder = HashEmbedder()
    app, _, library = guide_app(sqlite_url, tmp_path / "data", embedder, guide_wait_s=0)
    embedder.hold = __import__("threading").Event()
    client = app.test_client()
    resp = upload(client, "money.md", b"# Money\n\nThe fee is 5 zorkmids.\n")
    assert resp.status_code == 202 and resp.get_json() == {"name": "money.md", "status": "indexing"}
    assert client.get("/v1/staff/guides", headers=STAFF).get_json()["guides"] == []
    embedder.hold.set()
    deadline = time.monotonic() + 10
    while not library.current().manifest["documents"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [g["name"] for g in client.get("/v1/staff/guides", headers=STAFF).get_json()["guides"]] == ["money.md"]
    assert list((library.root / "incoming").iterdir()) == []  # the upload's temporary file is gone


def test_a_guide_uploaded_mid_conversation_is_cited_then_never_after_its_deletion(mariadb_url, tmp_path):
    app, llm, _ = guide_app(mariadb_url, tmp_path / "data")
    client = app.test_client()
    cid, auth = start(client)
    script_profile_answer(llm)
    assert client.post(f"/v1/conversations/{cid}/messages", json={"text": "What is my upload limit?"},
                       headers=auth).status_code == 200
    assert upload(client, "badges.md", MARKDOWN.encode()).status_code == 201

    prompts = []

    def answer_from_first_excerpt(messages, schema):
        prompts.append("\n".join(content for _, content in messages))
        return {"source": 1, "answer": "At the front desk, for free."}

    to_guide(llm)
    llm.enqueue("executor", answer_from_first_excerpt).enqueue("verifier", verdict(9))
    cited = client.post(f"/v1/conversations/{cid}/messages", json={"text": "Where is a lost badge replaced?"},
                        headers=auth).get_json()
    assert cited["route"] == "guide" and "(Source: badges.md, page 2)" in cited["reply"]

    assert client.delete("/v1/staff/guides/badges.md", headers=STAFF).status_code == 200
    to_guide(llm)
    llm.enqueue("executor", answer_from_first_excerpt).enqueue("verifier", verdict(9))
    after = client.post(f"/v1/conversations/{cid}/messages", json={"text": "Where is a lost badge replaced?"},
                        headers=auth).get_json()
    assert "[1] badges.md, page 2: Lost badges" in prompts[0]
    assert "] badges.md, page" not in prompts[1] and "(no guide excerpts available)" in prompts[1]
    assert "badges.md" not in after["reply"]


def test_a_restarted_service_on_the_same_data_directory_serves_the_new_version(sqlite_url, tmp_path):
    first, _, _ = guide_app(sqlite_url, tmp_path / "data")
    version = upload(first.test_client(), "badges.md", MARKDOWN.encode()).get_json()["version"]
    embedder = HashEmbedder()
    restarted, _, library = guide_app(f"sqlite:///{tmp_path / 'other.db'}", tmp_path / "data", embedder)
    listed = restarted.test_client().get("/v1/staff/guides", headers=STAFF).get_json()
    assert listed["version"] == version and [g["name"] for g in listed["guides"]] == ["badges.md"]
    assert library.search("where is a lost badge replaced", k=1)[0].file == "badges.md"
    assert [t for t in embedder.texts if "front desk" in t] == []  # loaded from disk, not embedded again


def test_an_embedder_outage_is_503_and_changes_nothing(sqlite_url, tmp_path):
    from chops.retrieval.embedders import EmbedderError

    class DownEmbedder(HashEmbedder):
        def embed(self, texts):
            if any("badge" in t for t in texts):
                raise EmbedderError("embedding endpoint failed: connection refused")
            return super().embed(texts)

    app, _, library = guide_app(sqlite_url, tmp_path / "data", DownEmbedder())
    client = app.test_client()
    assert upload(client, "fees.md", b"# Fees\n\nTaking part is free.\n").status_code == 201
    before = state(library)
    resp = upload(client, "badges.md", MARKDOWN.encode())
    assert resp.status_code == 503 and resp.get_json()["error"]["code"] == "embedder_unavailable"
    assert state(library) == before
