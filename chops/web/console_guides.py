"""The console's guides page: list, upload, replace and delete guides, through the same functions as
the staff API (``chops.web.guides``). Its routes join the console blueprint, so the console's sign-in
and CSRF checks guard them."""

from __future__ import annotations

from flask import flash, redirect, render_template, request, url_for

from chops.web.console import bp
from chops.web.errors import ApiError
from chops.web.guides import delete, guide_list, upload
from chops.web.services import services


def _done(what: str, body: dict, status: int) -> None:
    if status == 202:
        flash(f"{what}: still indexing; it goes live when done", "ok")
    else:
        flash(f"{what}: live in version {body['version']}", "ok")


@bp.route("/guides", methods=["GET", "POST"])
def guides():
    """The guides of the live version, and the upload form (an existing name is replaced only when
    "replace" is ticked)."""
    if services().guides is None:
        return render_template("console/guides.html", library=None)
    if request.method == "POST":
        file = request.files.get("file")
        replace = request.form.get("replace") == "1"
        try:
            body, status = upload(file, request.form.get("name") or None, replace=replace)
            _done(f"{(body.get('guide') or body)['name']} {'replaced' if replace else 'uploaded'}", body, status)
        except ApiError as exc:
            flash(f"refused ({exc.code}): {exc.message}", "error")
        return redirect(url_for("console.guides"))
    return render_template("console/guides.html", library=guide_list(),
                           max_mb=services().settings.guide_max_bytes / 1024 / 1024)


@bp.post("/guides/<name>/replace")
def replace_guide(name: str):
    """Replace one guide with the uploaded file."""
    try:
        _done(f"{name} replaced", *upload(request.files.get("file"), name, replace=True))
    except ApiError as exc:
        flash(f"{name}: refused ({exc.code}): {exc.message}", "error")
    return redirect(url_for("console.guides"))


@bp.post("/guides/<name>/delete")
def delete_guide(name: str):
    """Delete one guide."""
    try:
        _done(f"{name} deleted", *delete(name))
    except ApiError as exc:
        flash(f"{name}: {exc.message}", "error")
    return redirect(url_for("console.guides"))
