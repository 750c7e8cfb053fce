"""The paper's Table 2 in one command: the four architectures on the same cases, side by side.

Each architecture runs (resumably) into ``OUT/<architecture>``; ``executor_only`` runs first so its
measured cost per request is the baseline of every relative cost. The model and the guide index
are loaded once and shared by the four runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eval.compare import baseline_from, load_run
from eval.config import ARCHITECTURES, EvalConfig
from eval.metrics import summarize
from eval.report import FIG_COST, ablation_markdown, plot_accuracy_vs_cost, write_report
from eval.runner import run_eval


def run_ablation(cfg: EvalConfig, dataset_dir: Path, out_dir: Path, *, architectures: tuple[str, ...] = ARCHITECTURES,
                 qa_dir: Path | None = None, base_settings: Any = None, llm: Any = None, index: Any = None,
                 progress: bool = True, **run_kwargs: Any) -> list[dict]:
    """Run every architecture in ``architectures`` on the cases of ``cfg``; returns their summaries
    and writes ``OUT/ablation.md``, ``OUT/ablation.json`` and ``OUT/accuracy_vs_cost.png``."""
    from chops.settings import get_settings

    out_dir = Path(out_dir)
    order = sorted(architectures, key=lambda a: a != "executor_only")  # the baseline first
    own_llm = llm is None
    settings = cfg.apply(base_settings or get_settings())
    if own_llm:
        from chops.llm import build_llm

        llm = build_llm(settings)
    if index is None:
        from chops.retrieval import GuideIndex

        index = GuideIndex.load_or_build(Path(dataset_dir) / "guides", settings)
    try:
        for arch in order:
            if progress:
                print(f"== {arch} ==", flush=True)
            run_eval(cfg.model_copy(update={"architecture": arch}), dataset_dir, out_dir / arch, qa_dir=qa_dir,
                     base_settings=base_settings, llm=llm, index=index, progress=progress, **run_kwargs)
    finally:
        if own_llm and hasattr(llm, "close"):
            llm.close()
    baseline = baseline_from(out_dir / "executor_only") if "executor_only" in order else None
    runs = {arch: load_run(out_dir / arch) for arch in order}
    summaries = [summarize(runs[arch][1], runs[arch][0], baseline_cost=baseline) for arch in order]
    for arch, s in zip(order, summaries):  # each run's own figure shows every architecture
        write_report(out_dir / arch, runs[arch][1], runs[arch][0], s, points=[x for x in summaries if x is not s])
    plot_accuracy_vs_cost(summaries, out_dir / FIG_COST)
    (out_dir / "ablation.json").write_text(json.dumps(summaries, indent=2, default=str), encoding="utf-8")
    text = (f"# Ablation (the paper's Table 2)\n\nSame cases for every architecture; relative cost against "
            f"{'the measured executor_only run' if baseline else 'an estimated executor-only call'}.\n\n"
            f"{ablation_markdown(summaries)}\n\n![accuracy vs relative cost]({FIG_COST})\n")
    (out_dir / "ablation.md").write_text(text, encoding="utf-8")
    return summaries
