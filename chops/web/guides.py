"""Staff API over the guide library: list, upload, replace and delete guides (``/v1/staff/guides``).

Staff authenticate as on the console (``chops.web.console.current_staff``: the ``X-Staff-Key`` header,
or a console session, which must then also send its CSRF token as ``X-CSRF-Token``). A file is checked
and parsed in the request, so a refused file answers at once with a stable code and changes nothing;
the re-index itself runs on the library's background thread (one at a time; later uploads queue), and
the request waits for it up to ``guide_wait_s`` (then 202: it goes on and is swapped in when done).
"""

from __future__ import annotations

import tempfile
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

from flask import Blueprint, jsonify, request
from pydantic import BaseModel, Field
from werkzeug.datastructures import FileStorage
from werkzeug.exceptions import RequestEntityTooLarge

from chops.web.errors import ApiError
from chops.web.staff_auth import require_staff_api
from chops.web.services import services

bp = Blueprint("guides", __name__, url_prefix="/v1/staff/guides")

# HTTP status of each refusal code of chops.retrieval.DocumentError.
REFUSED = {"invalid_field": 400, "unsupported_type": 415, "too_large": 413, "encrypted": 422, "no_text": 422,
           "unreadable": 422}
UPLOAD_PATHS = ("/v1/staff/guides", "/console/guides")
MULTIPART_OVERHEAD = 1 << 20


@bp.before_app_request
def _allow_guide_sized_bodies():
    # The app's body cap fits chat messages; guide uploads (API and console form) may be larger.
    if request.path.startswith(UPLOAD_PATHS):
        request.max_content_length = services().settings.guide_max_bytes + MULTIPART_OVERHEAD


@bp.before_request
def _require_staff():
    require_staff_api()
    if services().guides is None:
        raise ApiError(503, "not_configured", "this service runs without a guide library")


class GuideChunks(BaseModel):
    """Chunks of a guide per size."""

    short: int
    long: int


class GuideOut(BaseModel):
    """One indexed guide."""

    name: str = Field(description="the file name answers cite")
    type: str = Field(description="pdf, markdown or html")
    size: int = Field(description="bytes")
    sha256: str
    pages: int = Field(description="pages (PDF) or sections (Markdown/HTML, split at level-1/2 headings)")
    chunks: GuideChunks
    uploaded_at: str = Field(description="when this content was indexed (ISO 8601)")
    version: str = Field(description="the index version this content entered in")


class GuideList(BaseModel):
    """The live index version and its guides."""

    version: str | None = Field(description="the live version (every worker answers from it)")
    guides: list[GuideOut]


class GuideChange(BaseModel):
    """The result of an upload, replacement or deletion."""

    version: str | None = Field(None, description="the live version with the change (absent while indexing)")
    guide: GuideOut | None = None
    deleted: str | None = None
    name: str | None = None
    status: str | None = Field(None, description="`indexing` (202): the re-index goes on; it is swapped in "
                                                 "when done")


def library():
    """The service's guide library."""
    return services().guides


def guide_list() -> dict:
    """The live version and its guides: name, type, size, sha256, chunks, uploaded_at, version."""
    index = library().current()
    guides = [GuideOut(name=name, **meta) for name, meta in index.manifest.get("documents", {}).items()]
    return GuideList(version=index.version, guides=guides).model_dump()


def _exists(name: str) -> bool:
    return name in library().current().manifest.get("documents", {})


def _wait(future, name: str, status: int) -> tuple[dict, int]:
    """The finished re-index's result, or 202 when it is still running after ``guide_wait_s``."""
    from chops.retrieval.embedders import EmbedderError

    try:
        update = future.result(timeout=services().settings.guide_wait_s)
    except FutureTimeout:
        return GuideChange(name=name, status="indexing").model_dump(exclude_none=True), 202
    except EmbedderError as exc:
        raise ApiError(503, "embedder_unavailable", f"the guides were not changed: {exc}") from exc
    meta = (library().store.manifest(update.version) or {}).get("documents", {}).get(name)
    guide = GuideOut(name=name, **meta) if meta else None
    return GuideChange(version=update.version, guide=guide, name=name).model_dump(exclude_none=True), status


def upload(file: FileStorage | None, name: str | None, *, replace: bool) -> tuple[dict, int]:
    """Check, store and index one uploaded guide as ``name`` (default: the file's name)."""
    from chops.retrieval import DocumentError
    from chops.retrieval.library import check_name, prepare

    if file is None or not (name or file.filename):
        raise ApiError(400, "missing_field", "send the guide as the multipart field 'file'")
    name = name or Path(file.filename).name
    try:
        check_name(name)
    except DocumentError as exc:
        raise ApiError(REFUSED[exc.code], exc.code, str(exc)) from exc
    if replace and not _exists(name):
        raise ApiError(404, "guide_not_found", f"no guide {name!r}")
    if not replace and _exists(name):
        raise ApiError(409, "guide_exists", f"{name!r} exists; replace it with PUT /v1/staff/guides/<name>")
    incoming_dir = library().root / "incoming"
    incoming_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=incoming_dir)
    with open(fd, "wb") as fh:
        file.save(fh)
    try:
        inc = prepare(name, Path(tmp), services().settings.guide_max_bytes)
    except DocumentError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise ApiError(REFUSED[exc.code], exc.code, f"{name}: {exc}") from exc
    return _wait(library().submit([inc], discard_sources=True), name, 200 if replace else 201)


def delete(name: str) -> tuple[dict, int]:
    """Remove guide ``name`` from the index (a new version without it)."""
    if not _exists(name):
        raise ApiError(404, "guide_not_found", f"no guide {name!r}")
    body, status = _wait(library().submit([], {name}), name, 200)
    return ({**body, "deleted": name} if status == 200 else body), status


def _file() -> FileStorage | None:
    try:
        return request.files.get("file")
    except RequestEntityTooLarge as exc:
        raise ApiError(413, "too_large", f"the limit is {services().settings.guide_max_bytes} bytes") from exc


@bp.get("")
def list_guides():
    """Every guide of the live version."""
    return jsonify(guide_list())


@bp.post("")
def create_guide():
    """Upload a new guide (multipart field ``file``; optional field ``name``)."""
    file = _file()
    body, status = upload(file, request.form.get("name") or None, replace=False)
    return jsonify(body), status


@bp.put("/<name>")
def replace_guide(name: str):
    """Replace guide ``name`` with the uploaded file."""
    body, status = upload(_file(), name, replace=True)
    return jsonify(body), status


@bp.delete("/<name>")
def delete_guide(name: str):
    """Delete guide ``name``: it is never retrieved or cited again."""
    body, status = delete(name)
    return jsonify(body), status
