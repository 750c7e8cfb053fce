"""The body of ``chops eval conversations`` (the options are declared in ``chops/cli/eval_cmd.py``)."""

from __future__ import annotations

from pathlib import Path

import click


def default_dump(tasks: Path) -> Path:
    """The dump a task file goes with by the data pack's layout: ``<pack>/tasks/x.json`` → ``<pack>/database``."""
    return Path(tasks).resolve().parent.parent / "database"


def run_command(domain: str | None, tasks: Path, users: Path | None, dump: Path | None, guides: Path | None,
                trials: int, workers: int, user_model: str | None, user_model_name: str | None, limit: int | None,
                task_ids: str | None, end_states: str, retry_errors: bool, quiet: bool, out: Path,
                max_turns: int | None = None) -> None:
    """Run (or resume) the conversation eval and write its report; prints the headline table."""
    from chops.domain.pack import UnknownDomain, load_pack
    from chops.settings import get_settings
    from eval.conversations.report import markdown, write_report
    from eval.conversations.runner import ConversationEvalConfig, run_conversations
    from eval.conversations.wiring import agent_service_factory

    if users is None and user_model is None:
        raise click.UsageError("give --users FILE (scripted users) or --user-model URL (an LLM plays the user)")
    if user_model and not user_model_name:
        raise click.UsageError("--user-model needs --user-model-name (the model's name at that endpoint)")
    settings = get_settings(domain=domain)  # the run's business, as CHOPS_DOMAIN would name it
    domain = settings.domain
    dump = dump or default_dump(tasks)
    if not dump.is_dir():
        raise click.UsageError(f"no dump at {dump}; give --dump DIR (what `chops db load --domain {domain}` reads)")
    try:
        pack = load_pack(domain)
    except UnknownDomain as exc:
        raise click.UsageError(str(exc)) from None
    ids = [i.strip() for i in task_ids.split(",") if i.strip()] if task_ids else None
    cfg = ConversationEvalConfig(domain=domain, tasks=tasks, users=users, dump=dump, trials=trials, workers=workers,
                                 user_model_url=user_model, user_model_name=user_model_name, limit=limit,
                                 task_ids=ids, end_states=end_states, max_turns=max_turns)
    click.echo(f"run directory: {out}", err=True)
    try:
        make_service, closer = agent_service_factory(settings, pack, guides_dir=guides, work_dir=out / "work")
    except FileNotFoundError as exc:
        raise click.UsageError(str(exc)) from None
    try:
        records = run_conversations(cfg, out, pack=pack, make_service=make_service, settings=settings,
                                    retry_errors=retry_errors, progress=not quiet)
    except ValueError as exc:  # a task id or a script missing: the files do not fit the request
        raise click.UsageError(str(exc)) from None
    finally:
        if closer is not None:
            closer()
    summary = write_report(out, records, trials)
    click.echo(markdown(summary, []).split("\n\n## Per task")[0])
    click.echo(f"\nreport: {out / 'report.md'}")
