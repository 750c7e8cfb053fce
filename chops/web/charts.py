"""The dashboard's charts: matplotlib figures rendered to inline SVG on the server, so the page needs
nothing from the internet (no chart library, no fonts: text stays SVG ``<text>`` in the page's font).

matplotlib's object API (``Figure``, no pyplot) keeps no global figure state; the rc settings used for
SVG output are global, so rendering is serialised with a lock.
"""

from __future__ import annotations

import io
import re
import threading
from typing import Any

from chops.outcomes import OUTCOMES

_LOCK = threading.Lock()
_COLOURS = {"resolved_by_agent": "#2b8a3e", "resolved_by_staff": "#1c7ed6", "abandoned": "#868e96",
            "failed": "#e03131", "waiting": "#f59f00"}
_BAR = "#4263eb"
_LABEL_MAX = 48  # characters of a guide question shown on an axis


def _svg(fig: Any, name: str) -> str:
    """The figure as an ``<svg>`` element for inlining (no XML prolog, no DOCTYPE, no metadata)."""
    import matplotlib

    out = io.StringIO()
    # hashsalt: the ids inside each chart are unique per chart name, so several inline charts never clash.
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": name}):
        fig.savefig(out, format="svg", bbox_inches="tight",
                    metadata={"Creator": None, "Date": None, "Format": None, "Type": None})
    svg = out.getvalue()
    svg = svg[svg.index("<svg"):]
    return re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)


def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=96)
    return fig, fig.add_subplot()


def _plain(label: str) -> str:
    """A label shortened, with ``$`` escaped: user text between dollars would be parsed as mathtext."""
    short = label if len(label) <= _LABEL_MAX else label[:_LABEL_MAX - 1] + "…"
    return short.replace("$", r"\$")


def _hbars(name: str, labels: list[str], values: list[float], colours: list[str] | None = None,
           xlabel: str = "", xmax: float | None = None) -> str:
    fig, ax = _figure(6, 0.45 * max(len(labels), 1) + 0.9)
    if not labels:
        ax.text(0.5, 0.5, "no data in this range", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return _svg(fig, name)
    y = list(range(len(labels)))[::-1]
    bars = ax.barh(y, values, color=colours or _BAR)
    ax.set_yticks(y, [_plain(lb) for lb in labels])
    ax.bar_label(bars, labels=[f"{v:g}" for v in values], padding=3)
    ax.set_xlabel(xlabel)
    ax.set_xlim(0, xmax if xmax is not None else max(max(values), 1) * 1.15)
    if xmax is None:  # counts: whole-number ticks
        ax.xaxis.get_major_locator().set_params(integer=True)
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig, name)


def _per_day(figures: dict) -> str:
    days = list(figures["by_day"])
    fig, ax = _figure(7, 3)
    bottom = [0] * len(days)
    for outcome in OUTCOMES:
        counts = [figures["by_day"][d][outcome] for d in days]
        ax.bar(range(len(days)), counts, bottom=bottom, color=_COLOURS[outcome], label=outcome.replace("_", " "))
        bottom = [b + c for b, c in zip(bottom, counts)]
    step = max(1, len(days) // 10)
    ax.set_xticks(range(0, len(days), step), [d[5:] for d in days[::step]])
    ax.set_ylabel("conversations")
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.legend(loc="upper left", fontsize=8, frameon=False, ncols=3)
    ax.set_ylim(0, max(max(bottom, default=0), 1) * 1.35)
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig, "per-day")


def render_charts(figures: dict) -> dict[str, str]:
    """``{chart name: inline <svg>}`` for the figures of ``chops.analytics.compute``."""
    rates = {"auto-resolved": figures["auto_resolution_rate"], "handed over": figures["handoff_rate"],
             "thumbs up": figures["thumbs_up_rate"]}
    known = {k: v for k, v in rates.items() if v is not None}
    outcomes = figures["outcomes"]
    operations = list(figures["operations"].items())[:10]
    gaps = figures["guide_gaps"][:10]
    with _LOCK:
        return {
            "per_day": _per_day(figures),
            "outcomes": _hbars("outcomes", [o.replace("_", " ") for o in outcomes], list(outcomes.values()),
                               [_COLOURS[o] for o in outcomes], "conversations"),
            "rates": _hbars("rates", list(known), [round(100 * v, 1) for v in known.values()], xlabel="%", xmax=110),
            "routes": _hbars("routes", list(figures["routes"]), list(figures["routes"].values()), xlabel="answers"),
            "operations": _hbars("operations", [k for k, _ in operations], [v for _, v in operations],
                                 xlabel="answers"),
            "guide_gaps": _hbars("guide-gaps", [g["question"] for g in gaps], [g["count"] for g in gaps],
                                 xlabel="times asked"),
        }
