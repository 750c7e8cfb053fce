"""OpenTelemetry traces of answered turns: one trace per turn, one span per pipeline step.

A finished turn's trace (``chops.pipeline.trace.Trace.to_dict``) becomes spans after the fact: a root
``chops.turn`` span and a child per step (classifier, executor, verifier, chooser, commit, queue, ...)
with the model, tokens and latency as attributes. Steps run one after another, so each child starts
where the previous model call ended; a model call's span lasts its measured latency, a non-model step
is an instant. User text and replies are never exported (they may hold personal data).

Exporting is on only when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set (``Settings.otel_endpoint``); the
OTLP exporter reads that variable and the other standard ``OTEL_*`` ones itself. Otherwise
``exporter_from_settings`` returns None, nothing of OpenTelemetry is imported and a turn pays one
``is None`` check.
"""

from __future__ import annotations

import logging
import time
from typing import Any

log = logging.getLogger(__name__)

SERVICE_NAME = "chops"
# Step fields copied onto a span, by their OpenTelemetry attribute names (gen_ai.* are the semantic
# conventions for model calls; the rest are ours).
_STEP_ATTRIBUTES = {
    "model": "gen_ai.request.model",
    "prompt_tokens": "gen_ai.usage.input_tokens",
    "completion_tokens": "gen_ai.usage.output_tokens",
    "latency_s": "chops.latency_s",
    "attempts": "chops.attempts",
    "cost_usd": "chops.cost_usd",
    "iteration": "chops.iteration",
    "route": "chops.route",
    "operation": "chops.operation",
    "outcome": "chops.outcome",
    "score": "chops.verifier.score",
    "threshold": "chops.verifier.threshold",
    "passed": "chops.verifier.passed",
    "committed": "chops.committed",
    "tier": "chops.tier",
    "error": "chops.error",
}
_TURN_ATTRIBUTES = ("architecture", "route", "operation", "outcome", "passed", "chosen_iteration",
                    "stopped_early")


def _attr(value: Any) -> Any:
    """A value OpenTelemetry accepts (str, bool, int, float), or None to leave it out."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


class TurnExporter:
    """Turns finished turns into spans of ``provider`` (an SDK ``TracerProvider``)."""

    def __init__(self, provider: Any) -> None:
        self.provider = provider
        self._tracer = provider.get_tracer("chops.pipeline")

    def export(self, result: Any, seconds: float) -> None:
        """Emit the spans of one turn (``TurnResult``) that took ``seconds``; never raises."""
        try:
            self._export(result, seconds)
        except Exception:  # noqa: BLE001 - telemetry must not fail the user's turn
            log.exception("could not export the turn's spans")

    def _export(self, result: Any, seconds: float) -> None:
        trace = result.trace if isinstance(result.trace, dict) else {}
        end_ns = time.time_ns()
        start_ns = end_ns - int(seconds * 1e9)
        root = self._tracer.start_span("chops.turn", start_time=start_ns)
        for key in _TURN_ATTRIBUTES:
            if _attr(trace.get(key)) is not None:
                root.set_attribute(f"chops.{key}", _attr(trace[key]))
        for key in ("committed", "queued", "iterations", "latency_s", "cost_usd"):
            if _attr(getattr(result, key, None)) is not None:
                root.set_attribute(f"chops.{key}", _attr(getattr(result, key)))
        totals = trace.get("totals") or {}
        for key, name in (("prompt_tokens", "gen_ai.usage.input_tokens"),
                          ("completion_tokens", "gen_ai.usage.output_tokens")):
            if isinstance(totals.get(key), int):
                root.set_attribute(name, totals[key])
        from opentelemetry import trace as otel_trace

        context = otel_trace.set_span_in_context(root)
        cursor = start_ns
        for step in trace.get("steps") or []:
            if not isinstance(step, dict):
                continue
            duration = int(float(step.get("latency_s") or 0) * 1e9)
            span = self._tracer.start_span(f"chops.{step.get('role', 'step')}", context=context,
                                           start_time=min(cursor, end_ns))
            for key, name in _STEP_ATTRIBUTES.items():
                if _attr(step.get(key)) is not None:
                    span.set_attribute(name, _attr(step[key]))
            if isinstance(step.get("demonstrations"), list):
                span.set_attribute("chops.demonstrations", [str(d) for d in step["demonstrations"]])
            cursor = min(cursor + duration, end_ns)
            span.end(end_time=cursor)
        root.end(end_time=end_ns)


def exporter_from_settings(settings: Any) -> TurnExporter | None:
    """An OTLP-exporting ``TurnExporter`` when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set, else None."""
    if not settings.otel_endpoint:
        return None
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    # A provider of our own (not the global one): several apps in one process (tests) stay apart.
    provider = TracerProvider(resource=Resource.create({"service.name": SERVICE_NAME}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    log.info("exporting turn traces over OTLP to %s", settings.otel_endpoint)
    return TurnExporter(provider)
