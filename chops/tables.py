"""The agent's own tables (``chops_*``): audit log (and its staff actors), conversations, turns, approvals,
policies, staff accounts and sign-in attempts, the support desk's states and events, ratings, solution
memory, admission tickets. They belong to the agent, whatever business it serves, and have their own
``MetaData``; a domain pack's tables have theirs (CPHOS: ``apis.cphos.tables``). A change here comes with a
migration (``chops/migrations``, history ``chops``: ``chops db revision chops -m ...``, README "Schema
changes"); ``db/schema.sql`` holds the MySQL DDL of both (tests compare the three).
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import mysql

metadata = sa.MetaData()

# Long JSON blobs (traces) exceed MySQL TEXT's 64 KiB.
LongText = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")


def exact_string(length: int) -> sa.types.TypeEngine:
    """A VARCHAR compared byte-exactly on MySQL (``utf8mb4_bin``), as SQLite compares: identities
    (nicknames, idempotency keys) must not match case-insensitively on one backend only."""
    return sa.String(length).with_variant(mysql.VARCHAR(length, collation="utf8mb4_bin"), "mysql", "mariadb")


audit_log = sa.Table(
    "chops_audit_log", metadata,
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True, autoincrement=True),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("request_id", sa.String(64), nullable=True),
    sa.Column("idempotency_key", exact_string(191), nullable=True),
    sa.Column("nickname", sa.String(64), nullable=False),
    sa.Column("user_id", sa.Integer, nullable=True),
    sa.Column("operation", sa.String(64), nullable=False),
    sa.Column("args_json", sa.Text, nullable=False),
    sa.Column("outcome", sa.String(32), nullable=False),
    sa.Column("message", sa.Text, nullable=False),
    sa.Column("diff_json", sa.Text, nullable=False),
    sa.Column("result_json", LongText, nullable=False),
    sa.Index("ux_audit_idempotency_key", "idempotency_key", unique=True),
    sa.Index("ix_audit_nickname", "nickname"),
    sa.Index("ix_audit_created_at", "created_at"),
)

conversation = sa.Table(
    "chops_conversation", metadata,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("nickname", sa.String(64), nullable=False),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("updated_at", sa.DateTime, nullable=False),
    sa.Column("channel", sa.String(16), nullable=False, server_default="widget"),
    sa.Index("ix_conversation_nickname", "nickname"),
    sa.Index("ix_conversation_updated_at", "updated_at"),
)

turn = sa.Table(
    "chops_turn", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("conversation_id", sa.String(36), sa.ForeignKey("chops_conversation.id", name="fk_turn_conversation"),
              nullable=False),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("user_text", sa.Text, nullable=False),
    sa.Column("reply", sa.Text, nullable=True),
    sa.Column("route", sa.String(32), nullable=True),
    sa.Column("operation", sa.String(64), nullable=True),
    sa.Column("args_json", sa.Text, nullable=True),
    sa.Column("outcome", sa.String(32), nullable=True),
    sa.Column("committed", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("queued", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("trace_json", LongText, nullable=True),
    sa.Index("ux_turn_conversation_seq", "conversation_id", "seq", unique=True),
)

approval = sa.Table(
    "chops_approval", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("decided_at", sa.DateTime, nullable=True),
    sa.Column("conversation_id", sa.String(36), nullable=True),
    sa.Column("turn_id", sa.Integer, nullable=True),
    sa.Column("nickname", sa.String(64), nullable=False),
    sa.Column("operation", sa.String(64), nullable=False),
    sa.Column("args_json", sa.Text, nullable=False),
    sa.Column("idempotency_key", exact_string(191), nullable=False),
    sa.Column("dry_run_json", LongText, nullable=True),
    sa.Column("status", sa.String(16), nullable=False, server_default="pending"),
    sa.Column("decided_by", sa.String(64), nullable=True),
    sa.Column("note", sa.Text, nullable=True),
    sa.Column("result_json", LongText, nullable=True),
    sa.Index("ux_approval_idempotency_key", "idempotency_key", unique=True),
    sa.Index("ix_approval_status", "status"),
)

# The further steps (2, 3, ...) of a queued plan; step 1 is the approval row's own operation and args.
# A table of its own rather than columns on chops_approval: existing deployments get new tables.
approval_step = sa.Table(
    "chops_approval_step", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("approval_id", sa.Integer, nullable=False),
    sa.Column("position", sa.Integer, nullable=False),
    sa.Column("operation", sa.String(64), nullable=False),
    sa.Column("args_json", sa.Text, nullable=False),
    sa.Index("ux_approval_step_position", "approval_id", "position", unique=True),
)

operation_policy = sa.Table(
    "chops_operation_policy", metadata,
    sa.Column("operation", sa.String(64), primary_key=True),
    sa.Column("always_needs_approval", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("updated_at", sa.DateTime, nullable=True),
)

# The support desk (DESIGN.md "Around the agent"): a conversation's current state, and one ordered
# event log per conversation (agent turns, user messages for staff, staff messages, state changes).
# The log's ids are global and increasing: the widget's event stream resumes from one (Last-Event-ID).
CONVERSATION_STATES = ("agent", "waiting", "staff", "closed")
EVENT_KINDS = ("turn", "user", "staff", "state")

conversation_state = sa.Table(
    "chops_conversation_state", metadata,
    sa.Column("conversation_id", sa.String(36),
              sa.ForeignKey("chops_conversation.id", name="fk_state_conversation"), primary_key=True),
    sa.Column("state", sa.String(16), nullable=False, server_default="agent"),
    sa.Column("staff", sa.String(64), nullable=True),  # the member who claimed it (state "staff")
    sa.Column("changed_by", sa.String(64), nullable=False),
    sa.Column("changed_at", sa.DateTime, nullable=False),
    sa.Index("ix_conversation_state_state", "state", "changed_at"),
)

conversation_event = sa.Table(
    "chops_conversation_event", metadata,
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True, autoincrement=True),
    sa.Column("conversation_id", sa.String(36),
              sa.ForeignKey("chops_conversation.id", name="fk_event_conversation"), nullable=False),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),  # one of EVENT_KINDS
    sa.Column("actor", sa.String(64), nullable=False),  # the user's nickname, a staff name, or "agent"
    sa.Column("turn_id", sa.Integer, nullable=True),  # kind "turn": the chops_turn row
    sa.Column("body_json", LongText, nullable=True),  # text, display name, {"from","to"} of a state change
    sa.Index("ix_event_conversation", "conversation_id", "id"),
    sa.Index("ix_event_created_at", "created_at"),
)

# Named staff accounts (console sign-in) and who committed an audited write on a user's behalf.
# A new table rather than a column on chops_audit_log: existing deployments get it from
# CREATE TABLE IF NOT EXISTS. No row = the user's own request (through the agent, the CLI or a script).
staff_account = sa.Table(
    "chops_staff_account", metadata,
    sa.Column("name", exact_string(64), primary_key=True),
    sa.Column("display_name", sa.String(128), nullable=False),
    sa.Column("password_hash", sa.String(255), nullable=False),  # werkzeug.security scrypt hash
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("disabled", sa.Boolean, nullable=False, server_default=sa.false()),
)

audit_actor = sa.Table(
    "chops_audit_actor", metadata,
    sa.Column("audit_id", sa.BigInteger().with_variant(sa.Integer, "sqlite"),
              sa.ForeignKey("chops_audit_log.id", name="fk_audit_actor_audit"), primary_key=True,
              autoincrement=False),
    sa.Column("actor", sa.String(64), nullable=False),  # the staff member; the subject is the audit row's nickname
    sa.Index("ix_audit_actor_actor", "actor"),
)

# The user's thumbs up/down on one agent answer (issue 17, outcomes); rating it again replaces the row.
RATING_THUMBS = ("up", "down")
RATING_COMMENT_MAX = 1000

turn_rating = sa.Table(
    "chops_turn_rating", metadata,
    sa.Column("turn_id", sa.Integer, sa.ForeignKey("chops_turn.id", name="fk_rating_turn"), primary_key=True),
    sa.Column("thumbs", sa.String(8), nullable=False),  # one of RATING_THUMBS
    sa.Column("comment", sa.Text, nullable=True),  # at most RATING_COMMENT_MAX characters
    sa.Column("rated_at", sa.DateTime, nullable=False),
    sa.Index("ix_rating_rated_at", "rated_at"),
)

# When each staff member was last active (an authenticated staff request): a user handed over while
# nobody was active recently is told that a person will answer later.
staff_presence = sa.Table(
    "chops_staff_presence", metadata,
    sa.Column("name", exact_string(64), primary_key=True),
    sa.Column("last_seen_at", sa.DateTime, nullable=False),
    sa.Index("ix_staff_presence_seen", "last_seen_at"),
)

# EcoAssistant's solution memory: verified solutions shown to later, similar requests as demonstrations.
# Never a read's result data nor a profile answer (personal data): for those only route and operation.
solution = sa.Table(
    "chops_solution", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("request", sa.Text, nullable=False),
    sa.Column("route", sa.String(32), nullable=False),
    sa.Column("operation", sa.String(64), nullable=True),
    sa.Column("args_json", sa.Text, nullable=True),
    sa.Column("answer", sa.Text, nullable=True),
    sa.Column("source", sa.String(255), nullable=True),
    sa.Column("fingerprint", sa.String(64), nullable=False),
    sa.Column("embedder", sa.String(128), nullable=False),
    sa.Column("embedding", sa.LargeBinary, nullable=False),
    sa.Column("status", sa.String(16), nullable=False, server_default="live"),
    sa.Column("deleted_at", sa.DateTime, nullable=True),
    sa.Column("deleted_by", sa.String(64), nullable=True),
    sa.Index("ux_solution_fingerprint", "fingerprint", unique=True),
    sa.Index("ix_solution_status", "status"),
)

# Admission control (chops.admission): one row per turn waiting for, or running on, the model. Every worker
# reads the same queue, so the first ``capacity`` live tickets by id run and the rest wait in order. A
# ticket of a worker that died stops counting at ``expires_at`` (a waiting ticket pushes it forward).
admission_ticket = sa.Table(
    "chops_admission_ticket", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("conversation_id", sa.String(64), nullable=False),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("admitted_at", sa.DateTime, nullable=True),
    sa.Column("expires_at", sa.DateTime, nullable=False),
    sa.Index("ix_admission_expires", "expires_at"),
)

# Staff sign-in attempts that failed or were throttled (chops.web.signin): the audit of password guessing.
# ``account`` is the name as typed (it may name no account: nothing tells the two apart elsewhere).
signin_attempt = sa.Table(
    "chops_signin_attempt", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("at", sa.DateTime, nullable=False),
    sa.Column("account", sa.String(64), nullable=False),
    sa.Column("address", sa.String(64), nullable=False),
    sa.Column("outcome", sa.String(16), nullable=False),  # failed | throttled
    sa.Index("ix_signin_attempt_at", "at"),
)

# Changes described to the user and waiting for their "yes" (chops.pending): the exact plan (operation calls),
# the dry run's diff it was described from, and the idempotency key its commit uses. One open row per
# conversation at most; the next message commits it (yes), or drops it (no, or another request).
pending_change = sa.Table(
    "chops_pending_change", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("conversation_id", sa.String(36), nullable=False),
    sa.Column("nickname", sa.String(64), nullable=False),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("expires_at", sa.DateTime, nullable=False),
    sa.Column("idempotency_key", exact_string(191), nullable=False),
    sa.Column("steps_json", sa.Text, nullable=False),
    sa.Column("diff_json", LongText, nullable=False),
    sa.Column("description", sa.Text, nullable=False),
    sa.Column("state", sa.String(16), nullable=False, server_default="open"),  # open / committed / declined / dropped / lapsed / refused / superseded
    sa.Column("resolved_at", sa.DateTime, nullable=True),
    sa.Index("ix_pending_conversation_state", "conversation_id", "state"),
)

PROJECT_TABLES = (audit_log, conversation, turn, approval, approval_step, operation_policy, conversation_state,
                  conversation_event, staff_account, audit_actor, turn_rating, staff_presence, solution,
                  admission_ticket, signin_attempt, pending_change)
