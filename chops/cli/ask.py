"""``chops ask``: one turn with the agent as a given user, from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import click

from chops.cli.db import database_url_option


def _echo_event(name: str, payload: dict) -> None:
    """Progress on stderr (``--verbose``): one line per pipeline step."""
    shown = {k: v for k, v in payload.items() if k not in ("reply",) and v not in (None, "", [], {})}
    click.echo(f"  [{name}] {json.dumps(shown, ensure_ascii=False, default=str)}", err=True)


@click.command()
@click.argument("text")
@click.option("--as", "nickname", required=True, metavar="NICKNAME", help="the user asking (their nickname)")
@click.option("--json", "as_json", is_flag=True, help="print the whole turn, trace included, as JSON")
@click.option("--conversation", "conversation_id", default=None, metavar="ID",
              help="continue this conversation (default: start a new one and print its id)")
@click.option("--guides", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="guide PDF directory (default: CHOPS_GUIDES_DIR, the demo guides/)")
@database_url_option
@click.option("-v", "--verbose", is_flag=True, help="print each pipeline step on stderr as it happens")
def ask(text: str, nickname: str, as_json: bool, conversation_id: str | None, guides: Path | None,
        database_url: str | None, verbose: bool) -> None:
    """Ask the agent TEXT as user NICKNAME; prints the reply (and the conversation id to continue)."""
    import sqlalchemy as sa

    from chops.conversation import ConversationService
    from chops.db import make_engine
    from chops.desk import DeskError
    from chops.domain.pack import load_pack
    from chops.llm import LLMError, build_llm
    from chops.memory import build_memory
    from chops.bootstrap import build_agent
    from chops.settings import get_settings
    from chops.store import ConversationStore

    settings = get_settings(guides_dir=guides, database_url=database_url)
    if len(text) > settings.max_message_chars:
        raise click.UsageError(f"the message is longer than {settings.max_message_chars} characters")
    engine = make_engine(settings.resolved_database_url)
    pack = load_pack(settings.domain)
    api = pack.api(engine)
    store = ConversationStore(engine, api=api)
    try:
        if conversation_id:
            conv = store.get(conversation_id)
            if conv is None:
                raise click.ClickException(f"no conversation {conversation_id!r}")
            if conv.nickname != nickname:  # a conversation belongs to the user who started it
                raise click.ClickException(f"conversation {conversation_id} belongs to another user")
        else:
            conversation_id = store.create(nickname, "cli")
    except sa.exc.DBAPIError as exc:
        raise click.ClickException(f"database not ready ({exc.orig}); run `chops db init` and "
                                   "`chops db seed-demo` first") from None
    memory = build_memory(settings, engine) if settings.memory_enabled else None
    index = _LazyIndex(settings)
    agent = build_agent(settings, pack, api, build_llm(settings), index, engine=engine, approvals=store,
                        memory=memory)
    service = ConversationService(store, agent)
    try:
        held = service.hold(conversation_id, nickname, text)
        if held is not None:  # staff have the conversation: stored for them, no model is called
            click.echo(f"held for staff (conversation {conversation_id} is {held[1].state})")
            return
        turn = service.run_turn(conversation_id, nickname, text, on_event=_echo_event if verbose else None)
    except DeskError as exc:
        raise click.ClickException(f"{exc.code}: {exc.message}") from None
    except LLMError as exc:  # nothing was written; the conversation can be continued
        raise click.ClickException(f"model_unavailable: the model could not answer ({exc.code}: {exc}); "
                                   f"nothing was changed (conversation {conversation_id})") from None
    except sa.exc.DBAPIError as exc:
        raise click.ClickException(f"database_unavailable: {exc.orig}; nothing was changed") from None
    result, turn_id, seq = turn.result, turn.turn_id, turn.seq
    if as_json:
        out = {"conversation_id": conversation_id, "turn_id": turn_id, "seq": seq,
               **result.model_dump(exclude={"trace"}), "cost": result.cost_usd, "trace": result.trace}
        click.echo(json.dumps(out, indent=2, ensure_ascii=False, default=str))
        return
    click.echo(result.reply)
    click.echo(f"(conversation {conversation_id}; continue with --conversation {conversation_id})", err=True)


class _LazyIndex:
    """Loads the guide index on first use (``current()``): a profile question or an unknown user then
    never pays for loading the embedder. A failure is reported once and searches return nothing."""

    def __init__(self, settings) -> None:
        self.settings = settings
        self._index = None
        self._failed = False

    version = None  # the version of "no index"

    def current(self):
        """The loaded ``GuideIndex`` (the retriever's ``GuideSource``), or this empty stand-in when it
        cannot be loaded."""
        from chops.retrieval import GuideError, GuideIndex
        from chops.retrieval.embedders import EmbedderError

        if self._index is None and not self._failed:
            try:
                self._index = GuideIndex.load_or_build(self.settings.guides_dir, self.settings)
            except (GuideError, EmbedderError, FileNotFoundError) as exc:
                self._failed = True
                click.echo(f"warning: no guide index ({exc}); guide questions cannot be answered", err=True)
        return self._index if self._index is not None else self

    def search(self, query: str, k: int = 3, size: str = "long") -> list:
        """Nothing: only the stand-in for a guide index that could not be loaded is searched here."""
        return []
