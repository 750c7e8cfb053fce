"""Prometheus metrics of one app: HTTP requests and latency by route, LLM use, verifier, writes.

Each app gets its own ``CollectorRegistry`` so several apps (tests) never clash over metric names.
Under gunicorn every worker process keeps its own counters; scrape each worker, or run one worker
with threads (the documented command), so that the numbers are the service's.
"""

from __future__ import annotations

import time
from typing import Any

from flask import Flask, g, request
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from chops.pipeline.events import Verify, events_of

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


class Metrics:
    """The service's counters and histograms, registered in a private registry."""

    def __init__(self, turn_exporter: Any = None) -> None:
        """Create every metric in a fresh registry; ``turn_exporter`` (``chops.telemetry``) also
        sends each turn as an OpenTelemetry trace, when OTLP export is configured."""
        self.turn_exporter = turn_exporter
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("chops_http_requests_total", "HTTP requests", ["route", "method", "status"],
                                registry=r)
        self.latency = Histogram("chops_http_request_seconds", "HTTP request latency by route", ["route"],
                                 buckets=_LATENCY_BUCKETS, registry=r)
        self.turns = Counter("chops_turns_total", "answered chat messages", ["route", "outcome"], registry=r)
        self.turn_latency = Histogram("chops_turn_seconds", "time to answer one chat message",
                                      buckets=_LATENCY_BUCKETS, registry=r)
        self.llm_calls = Counter("chops_llm_calls_total", "model calls", ["role"], registry=r)
        self.llm_chars = Counter("chops_llm_chars_total", "characters sent to / received from models",
                                 ["role", "direction"], registry=r)
        self.llm_cost = Counter("chops_llm_cost_usd_total", "model cost in USD", ["role"], registry=r)
        self.verifier = Counter("chops_verifier_total", "verifier verdicts", ["result"], registry=r)
        self.writes = Counter("chops_writes_total", "write operations by what happened to them", ["state"],
                              registry=r)
        self.approvals = Counter("chops_approvals_total", "staff decisions on queued writes", ["decision"],
                                 registry=r)
        self.refusals = Counter("chops_refusals_total", "requests refused for load or abuse (busy, rate_limited, "
                                "too_many_conversations, signin_throttled)", ["code"], registry=r)

    def render(self) -> bytes:
        """The Prometheus text exposition of every metric."""
        return generate_latest(self.registry)

    def observe_refusal(self, code: str) -> None:
        """Count one request refused for load or abuse, by its error code."""
        self.refusals.labels(code=code).inc()

    def observe_turn(self, result: Any, seconds: float) -> None:
        """Count one answered message: route/outcome, its model calls, verifier verdicts and writes."""
        self.turns.labels(route=str(result.route or "none"), outcome=str(result.outcome or "none")).inc()
        self.turn_latency.observe(seconds)
        trace = result.trace if isinstance(result.trace, dict) else {}
        for rec in trace.get("ledger") or []:  # one CallRecord dict per model-call attempt
            role = str(rec.get("role", "unknown"))
            self.llm_calls.labels(role=role).inc()
            self.llm_chars.labels(role=role, direction="in").inc(rec.get("chars_in") or 0)
            self.llm_chars.labels(role=role, direction="out").inc(rec.get("chars_out") or 0)
            self.llm_cost.labels(role=role).inc(rec.get("cost_usd") or 0.0)
        for verdict in events_of(trace, Verify):
            self.verifier.labels(result="pass" if verdict.passed else "fail").inc()
        if result.committed:
            self.writes.labels(state="committed").inc()
        if result.queued:
            self.writes.labels(state="queued").inc()
        if self.turn_exporter is not None:
            self.turn_exporter.export(result, seconds)


def install_request_metrics(app: Flask, metrics: Metrics) -> None:
    """Time every request and count it by route template (never the raw path: ids would explode labels)."""

    @app.before_request
    def _start_timer() -> None:
        g._chops_t0 = time.perf_counter()

    @app.after_request
    def _count(response):
        t0 = g.pop("_chops_t0", None)
        route = request.url_rule.rule if request.url_rule is not None else "unmatched"
        metrics.requests.labels(route=route, method=request.method, status=str(response.status_code)).inc()
        if t0 is not None:
            metrics.latency.labels(route=route).observe(time.perf_counter() - t0)
        return response
