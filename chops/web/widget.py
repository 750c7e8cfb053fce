"""The chat widget: a page to try it (``GET /widget``) and the embeddable script (``GET /widget.js``)."""

from __future__ import annotations

from flask import Blueprint, render_template, request, send_from_directory

from chops.web.services import services

bp = Blueprint("widget", __name__)


@bp.get("/widget")
def page():
    """The widget page: ``?token=`` chats as the token's user; in demo mode a nickname form."""
    settings = services().settings
    return render_template("widget.html", token=request.args.get("token"), demo_mode=settings.demo_mode,
                           nickname=request.args.get("nickname", ""))


@bp.get("/widget.js")
def script():
    """The embeddable script (plain JavaScript, no build step)."""
    resp = send_from_directory(bp.root_path + "/static", "widget.js", mimetype="text/javascript")
    resp.headers["Access-Control-Allow-Origin"] = "*"  # a host site may load it from another origin
    return resp
