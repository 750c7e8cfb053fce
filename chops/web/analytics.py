"""Outcomes over HTTP: the user rates an answer (``POST /v1/conversations/<id>/turns/<turn_id>/rating``,
from the widget), staff read the figures (``GET /v1/staff/analytics``, JSON or CSV) and the console
dashboard (``/console/analytics``, the same figures as server-rendered SVG charts), and ``/metrics``
carries outcome gauges computed from the database at scrape time.

The gauges are read from the database, not counted in the process, because an outcome can change after
the fact (a waiting conversation becomes abandoned) and every gunicorn worker must report the same.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timedelta, timezone

from flask import Blueprint, Response, jsonify, redirect, render_template, request, url_for
from prometheus_client.core import GaugeMetricFamily

from chops.analytics import DateRange, RangeError, compute, to_csv
from chops.outcomes import OUTCOMES, outcomes
from chops.ratings import RatingError, rate_turn
from chops.web.chat import authorized_conversation, json_body
from chops.web.chat import allow_cross_origin
from chops.web.console import current_staff
from chops.web.staff_auth import require_staff_api
from chops.web.errors import ApiError
from chops.web.schemas import RateTurn, parse_body
from chops.web.services import Services, services

log = logging.getLogger(__name__)

# The rating is called by the widget on the host site's origin, like the rest of the chat API.
ratings_bp = Blueprint("ratings", __name__, url_prefix="/v1")
ratings_bp.after_request(allow_cross_origin)
bp = Blueprint("analytics", __name__, url_prefix="/v1/staff")
dashboard_bp = Blueprint("dashboard", __name__, url_prefix="/console")  # HTML, not in the OpenAPI document


def _utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)  # naive UTC, as the tables store it


@ratings_bp.post("/conversations/<conversation_id>/turns/<int:turn_id>/rating")
def rate(conversation_id: str, turn_id: int):
    """Store the user's thumbs up/down (and optional comment) on one agent answer of their conversation."""
    svc = services()
    authorized_conversation(svc, conversation_id)
    body = parse_body(RateTurn, json_body())
    try:
        rate_turn(svc.engine, conversation_id, turn_id, body.thumbs, body.comment)
    except RatingError as exc:
        raise ApiError(404, exc.code, exc.message) from None
    return jsonify(turn_id=turn_id, thumbs=body.thumbs, comment=body.comment or None)


def _embedder(svc: Services):
    """The guide index's embedder (the same vectors as retrieval), else the configured one."""
    from chops.retrieval.embedders import make_embedder

    return getattr(svc.index, "embedder", None) or make_embedder(svc.settings)


def figures_for(svc: Services, span: DateRange) -> dict:
    """Every analytics figure of ``span`` (``chops.analytics.compute``) as of now."""
    return compute(svc.engine, span, _utcnow(), _embedder(svc), timedelta(seconds=svc.settings.abandon_after_s))


def _span() -> DateRange:
    return DateRange.parse(request.args.get("from"), request.args.get("to"), _utcnow().date())


@bp.get("/analytics")
def staff_analytics():
    """Figures over conversations started ``from``..``to`` (``YYYY-MM-DD``, both included; default: the last
    7 days); ``format=csv`` for CSV. Staff only: ``X-Staff-Key`` or a console session."""
    require_staff_api()
    fmt = request.args.get("format", "json")
    if fmt not in ("json", "csv"):
        raise ApiError(400, "invalid_field", "format is json or csv", field="format")
    try:
        span = _span()
    except RangeError as exc:
        raise ApiError(400, "invalid_date_range", str(exc)) from None
    figures = figures_for(services(), span)
    if fmt == "csv":
        name = f"chops-analytics-{span.start}-{span.end}.csv"
        return Response(to_csv(figures), mimetype="text/csv",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})
    return jsonify(figures)


@dashboard_bp.get("/analytics")
def dashboard():
    """The console dashboard: the figures of a date range as charts, with the numbers beside them."""
    from chops.web.charts import render_charts

    if current_staff() is None:
        return redirect(url_for("console.login", next=request.full_path))
    try:
        span = _span()
    except RangeError as exc:
        today = _utcnow().date()
        return render_template("console/analytics.html", error=str(exc), figures=None, charts={},
                               span=DateRange(today - timedelta(days=6), today)), 400
    figures = figures_for(services(), span)
    return render_template("console/analytics.html", error=None, figures=figures, charts=render_charts(figures),
                           span=span)


class OutcomeGauges:
    """A Prometheus collector: conversations started in the last 24 hours by outcome, and their answers'
    ratings, read from the database when scraped (at most once per ``ttl_s``; the last good values are
    kept when the database does not answer)."""

    WINDOW = timedelta(hours=24)

    def __init__(self, engine, abandon_after: timedelta, ttl_s: float = 15.0) -> None:
        self.engine, self.abandon_after, self.ttl_s = engine, abandon_after, ttl_s
        self._lock = threading.Lock()
        self._at, self._values = 0.0, ({o: 0 for o in OUTCOMES}, {"up": 0, "down": 0})

    def _read(self) -> tuple[dict, dict]:
        with self._lock:
            if time.monotonic() - self._at >= self.ttl_s:
                now = _utcnow()
                try:
                    convs = outcomes(self.engine, now - self.WINDOW, now + timedelta(seconds=1), now,
                                     self.abandon_after)
                except Exception:  # noqa: BLE001 - a scrape must not fail with the database; log and go on
                    log.exception("outcome gauges: the database did not answer")
                else:
                    counts = {o: sum(c.outcome == o for c in convs) for o in OUTCOMES}
                    thumbs = [tf.thumbs for c in convs for tf in c.turns if tf.thumbs]
                    self._values = (counts, {k: thumbs.count(k) for k in ("up", "down")})
                    self._at = time.monotonic()
            return self._values

    def describe(self):
        """The metric names, without a database read (the registry asks at registration)."""
        return self._families({}, {})

    def collect(self):
        """The current values."""
        return self._families(*self._read())

    @staticmethod
    def _families(counts: dict, thumbs: dict) -> list:
        conv = GaugeMetricFamily("chops_conversation_outcomes", "conversations started in the last 24 hours "
                                 "by outcome (computed from the database)", labels=["outcome"])
        for outcome, n in counts.items():
            conv.add_metric([outcome], n)
        rated = GaugeMetricFamily("chops_answer_ratings", "ratings of the answers in conversations started in "
                                  "the last 24 hours", labels=["thumbs"])
        for key, n in thumbs.items():
            rated.add_metric([key], n)
        return [conv, rated]


def register_outcome_gauges(registry, engine, abandon_after_s: float) -> OutcomeGauges:
    """Add the outcome gauges to an app's Prometheus ``registry``."""
    gauges = OutcomeGauges(engine, timedelta(seconds=abandon_after_s))
    registry.register(gauges)
    return gauges
