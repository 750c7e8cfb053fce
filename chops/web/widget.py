"""The chat widget: a page to try it (``GET /widget``) and the embeddable script (``GET /widget.js``)."""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response, render_template, request

from chops.web.services import services

bp = Blueprint("widget", __name__)

# The embeddable script is these static files, served as one (a host site adds one script tag); the
# parts that extend the widget (ratings, the staff desk) come before widget.js, which calls them.
SCRIPT_PARTS = ("widget_rating.js", "widget_desk.js", "widget.js")


@bp.get("/widget")
def page():
    """The widget page: ``?token=`` chats as the token's user; in demo mode a nickname form."""
    settings = services().settings
    return render_template("widget.html", token=request.args.get("token"), demo_mode=settings.demo_mode,
                           nickname=request.args.get("nickname", ""))


def _script_text() -> str:
    static = Path(bp.root_path) / "static"
    return "\n".join((static / name).read_text(encoding="utf-8") for name in SCRIPT_PARTS)


@bp.get("/widget.js")
def script():
    """The embeddable script (plain JavaScript, no build step): the parts in ``SCRIPT_PARTS`` as one file."""
    resp = Response(_script_text(), mimetype="text/javascript")
    resp.headers["Access-Control-Allow-Origin"] = "*"  # a host site may load it from another origin
    resp.headers["Cache-Control"] = "no-cache"  # revalidate (ETag): a new deployment's widget is seen at once
    resp.add_etag()
    return resp.make_conditional(request)
