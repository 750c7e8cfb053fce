"""``chops eval``: batch evaluation on the CPHOS-dataset.

``chops eval --dataset DIR [...]`` runs the evaluation itself (the group is invoked without a
sub-command), and is the same as ``chops eval run --dataset DIR [...]``. ``chops eval compare A B``
prints the differences of two runs; ``chops eval ablate --dataset DIR`` runs the four
architectures side by side; ``chops eval regrade RUN`` re-judges a finished run. Re-running the same
command with the same ``--out`` resumes.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import click

ARCHS = ("executor_only", "ce_1level", "cev_1level", "cev_2level")


def run_options(fn):
    """The options shared by ``eval``, ``eval run`` and ``eval ablate``."""
    opts = [
        click.option("--dataset", type=click.Path(exists=True, file_okay=False, path_type=Path),
                     help="CPHOS-shaped directory: database/, guides/, qa/"),
        click.option("--qa", "qa_dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
                     help="take system.csv / guide.csv from here instead of DATASET/qa"),
        click.option("--config", "config_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                     help="EvalConfig as .json or .toml (flags override it)"),
        click.option("--only", type=click.Choice(["system", "guide"]), help="one QA file only"),
        click.option("--limit", type=click.IntRange(min=1), help="first N rows of each QA file"),
        click.option("--per-group", type=click.IntRange(min=1),
                     help="first N rows of each intent (group_id): every intent, fewer paraphrases"),
        click.option("--trials", type=click.IntRange(min=1), help="K trials per case (pass^k)"),
        click.option("--workers", type=click.IntRange(min=1), help="cases run in parallel"),
        click.option("--architecture", type=click.Choice(ARCHS), help="override the pipeline architecture"),
        click.option("--dedupe/--no-dedupe", default=None,
                     help="drop guide.csv rows repeating an earlier row (default: on)"),
        click.option("--judge/--no-judge", default=None, help="grade guide rows with the LLM judge (default: on)"),
        click.option("--shuffle-seed", type=int, help="run the cases in the order this seed shuffles them to "
                     "(matters when the solution memory is on: it fills as the cases go)"),
        click.option("--retry-errors", is_flag=True, help="on resume, re-run cases that crashed"),
        click.option("--quiet", is_flag=True, help="no progress bar"),
    ]
    return functools.reduce(lambda f, o: o(f), reversed(opts), fn)


def _config(config_file, **flags):
    from eval.config import load_config

    try:
        return load_config(config_file, **flags)
    except Exception as exc:  # pydantic / json / toml errors: one clear line
        raise click.ClickException(f"bad evaluation config: {exc}") from None


def _guarded(fn):
    """Turn the evaluation's own errors into clean CLI errors; Ctrl-C leaves a resumable run."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except KeyboardInterrupt:
            click.echo("interrupted: results so far are saved; re-run the same command to resume", err=True)
            sys.exit(130)
        except Exception as exc:
            code = getattr(exc, "code", None)
            if isinstance(code, str) and code.startswith("eval_"):
                raise click.ClickException(f"[{exc.code}] {exc}") from None
            raise
    return wrapper


def _do_run(dataset, qa_dir, config_file, only, limit, per_group, trials, workers, architecture, dedupe, judge,
            shuffle_seed, retry_errors, quiet, out, baseline):
    from eval.compare import baseline_from, finalize_run
    from eval.report import summary_markdown
    from eval.runner import run_eval

    if dataset is None:
        raise click.UsageError("--dataset DIR is required (e.g. --dataset ../shared/cphos)")
    cfg = _config(config_file, only=only, limit=limit, per_group=per_group, trials=trials, workers=workers,
                  architecture=architecture, dedupe=dedupe, judge=judge, shuffle_seed=shuffle_seed)
    out = out or Path("runs") / (cfg.architecture or _default_arch())
    click.echo(f"run directory: {out}", err=True)
    run_eval(cfg, dataset, out, qa_dir=qa_dir, retry_errors=retry_errors, progress=not quiet)
    summary = finalize_run(out, baseline_cost=baseline_from(baseline) if baseline else None)
    click.echo(summary_markdown(summary))
    click.echo(f"\nreport: {out / 'report.md'}")


def _default_arch() -> str:
    from chops.settings import get_settings

    return get_settings().architecture


_out_option = click.option("--out", type=click.Path(file_okay=False, path_type=Path),
                           help="run directory (default runs/<architecture>); the same --out resumes")
_baseline_option = click.option("--baseline", type=click.Path(exists=True, file_okay=False, path_type=Path),
                                help="an executor_only run whose measured cost is the relative-cost baseline")


@click.group(name="eval", invoke_without_command=True)
@run_options
@_out_option
@_baseline_option
@click.pass_context
@_guarded
def eval_group(ctx, **opts) -> None:
    """Batch evaluation on the CPHOS-dataset (without a sub-command: the same as ``eval run``)."""
    if ctx.invoked_subcommand is None:
        if opts["dataset"] is None:
            click.echo(ctx.get_help())
            ctx.exit(2)
        _do_run(**opts)


@eval_group.command(name="run")
@run_options
@_out_option
@_baseline_option
@_guarded
def run_cmd(**opts) -> None:
    """Run (or resume) one evaluation and write report.md, summary.json and plots into --out."""
    _do_run(**opts)


@eval_group.command(name="compare")
@click.argument("run_a", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("run_b", type=click.Path(exists=True, file_okay=False, path_type=Path))
@_guarded
def compare_cmd(run_a: Path, run_b: Path) -> None:
    """Print the metric differences of two runs and the cases whose grade flipped."""
    from eval.compare import compare_runs

    click.echo(compare_runs(run_a, run_b))


@eval_group.command(name="ablate")
@run_options
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("runs/ablation"),
              show_default=True, help="one sub-directory per architecture; the same --out resumes")
@click.option("--architectures", default=",".join(ARCHS), show_default=True,
              help="comma-separated subset of the four architectures")
@click.option("--configurations", help="instead of architectures, EcoAssistant's model configurations, "
              "comma-separated: 1.5b, 0.5b, 0.5b+demos, hierarchy, hierarchy+demos")
@click.option("--orders", type=click.IntRange(min=1), default=1, show_default=True,
              help="with --configurations: shuffled orders (seeds 1..N) each configuration runs in")
@_guarded
def ablate_cmd(dataset, qa_dir, config_file, only, limit, per_group, trials, workers, architecture, dedupe, judge,
               shuffle_seed, retry_errors, quiet, out, architectures, configurations, orders) -> None:
    """Run the four architectures on the same cases side by side (the paper's Table 2), or with
    ``--configurations`` EcoAssistant's model configurations as streams (its Table 3)."""
    from eval.ablation import run_ablation

    if dataset is None:
        raise click.UsageError("--dataset DIR is required")
    if architecture:
        raise click.UsageError("ablate runs every architecture; use --architectures to pick some")
    if configurations:
        _ablate_configurations(dataset, qa_dir, config_file, configurations, orders, out, retry_errors, quiet,
                               only=only, limit=limit, per_group=per_group, trials=trials, workers=workers,
                               dedupe=dedupe, judge=judge, shuffle_seed=shuffle_seed)
        return
    archs = tuple(a.strip() for a in architectures.split(",") if a.strip())
    unknown = [a for a in archs if a not in ARCHS]
    if unknown or not archs:
        raise click.UsageError(f"unknown architecture(s) {unknown}; choose from {', '.join(ARCHS)}")
    cfg = _config(config_file, only=only, limit=limit, per_group=per_group, trials=trials, workers=workers,
                  dedupe=dedupe, judge=judge, shuffle_seed=shuffle_seed)
    run_ablation(cfg, dataset, out, architectures=archs, qa_dir=qa_dir, retry_errors=retry_errors,
                 progress=not quiet)
    click.echo((out / "ablation.md").read_text(encoding="utf-8"))


def _ablate_configurations(dataset, qa_dir, config_file, configurations, orders, out, retry_errors, quiet, **flags):
    from eval.stream import CONFIGURATIONS, run_configurations

    names = tuple(c.strip() for c in configurations.split(",") if c.strip())
    unknown = [c for c in names if c not in CONFIGURATIONS]
    if unknown or not names:
        raise click.UsageError(f"unknown configuration(s) {unknown}; choose from {', '.join(CONFIGURATIONS)}")
    run_configurations(_config(config_file, **flags), dataset, out, names=names, orders=orders, qa_dir=qa_dir,
                       retry_errors=retry_errors, progress=not quiet)
    click.echo((out / "ecoassistant.md").read_text(encoding="utf-8"))


@eval_group.command(name="regrade")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--config", "config_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="EvalConfig whose [roles.judge] picks the judge (default: the settings' judge role)")
@click.option("--quiet", is_flag=True, help="no progress bar")
@_guarded
def regrade_cmd(run_dir: Path, config_file: Path | None, quiet: bool) -> None:
    """Re-judge the guide / basic-info answers of a finished run with the current judge, then rewrite its report."""
    from chops.settings import get_settings
    from eval.compare import finalize_run
    from eval.regrade import regrade_run
    from eval.report import summary_markdown

    regrade_run(run_dir, _config(config_file).apply(get_settings()), progress=not quiet)
    click.echo(summary_markdown(finalize_run(run_dir)))


_file = click.Path(exists=True, dir_okay=False, path_type=Path)
_dir = click.Path(exists=True, file_okay=False, path_type=Path)


@eval_group.command(name="conversations")
@click.option("--domain", help="the domain pack (default: CHOPS_DOMAIN)")
@click.option("--tasks", type=_file, required=True, help="tasks in tau2's format (scenario, reference actions)")
@click.option("--users", type=_file, help="scripted users for those tasks (the scripted-user format)")
@click.option("--dump", type=_dir, help="the data the pack loads (default: the tasks file's ../database)")
@click.option("--guides", type=_dir,
              help="the guides the agent answers from (default: the pack's policy, else CHOPS_GUIDES_DIR)")
@click.option("--trials", type=click.IntRange(min=1), default=1, show_default=True, help="K trials per task (pass^k)")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True, help="conversations at once")
@click.option("--user-model", help="an OpenAI-compatible endpoint URL: an LLM plays the user instead of the scripts")
@click.option("--user-model-name", help="the user model's name at that endpoint")
@click.option("--limit", type=click.IntRange(min=1), help="the first N tasks")
@click.option("--task-ids", help="only these tasks, comma-separated")
@click.option("--end-states", type=click.Choice(["first", "all", "none"]), default="first", show_default=True,
              help="which trials' end states to keep in OUT/end_states (each is a whole database)")
@click.option("--max-turns", type=click.IntRange(min=1),
              help="at most N customer messages a conversation (default: the script's, 20): a conversation that "
                   "loops costs minutes a turn on two cores")
@click.option("--retry-errors", is_flag=True, help="on resume, re-run conversations that crashed")
@click.option("--quiet", is_flag=True, help="no progress bar")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="run directory; the same --out resumes")
@_guarded
def conversations_cmd(**opts) -> None:
    """Whole conversations with a simulated customer per task, graded by the database's end state (tau2's way):
    summary.json, report.md, report.png and end_states/ in --out."""
    from eval.conversations.cli import run_command

    run_command(**opts)
