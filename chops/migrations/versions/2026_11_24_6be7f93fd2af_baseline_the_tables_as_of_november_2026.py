"""Baseline: the agent's own tables (``chops_*``) as of November 2026,
exactly as ``db/schema.sql`` created them on MySQL and ``create_all`` on SQLite up to then.

Revision ID: 6be7f93fd2af
Revises: nothing (the first revision)
Create Date: 2026-11-24 15:01:26.946055
"""

from alembic import context, op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = "6be7f93fd2af"
down_revision = None
branch_labels = None
depends_on = None

# Frozen copies of the column types of the time (never imported from the live table modules, which move on).
LONGTEXT = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")  # MySQL TEXT stops at 64 KiB
BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")  # SQLite autoincrements INTEGER keys only
TABLE_OPTIONS = {"mysql_engine": "InnoDB", "mysql_charset": "utf8mb4", "mysql_collate": "utf8mb4_unicode_ci"}


def exact_string(length: int) -> sa.types.TypeEngine:
    """A VARCHAR compared byte-exactly on MySQL (``utf8mb4_bin``), as SQLite compares."""
    return sa.String(length).with_variant(mysql.VARCHAR(length, collation="utf8mb4_bin"), "mysql", "mariadb")


def upgrade() -> None:
    """Create the tables of the baseline that are missing.

    A database made before migrations existed (``chops db init`` ran ``CREATE TABLE IF NOT EXISTS``) has
    these tables already, or some of them (an older release had fewer): only the missing ones are
    created, so on such a database this revision changes nothing and is merely recorded.
    """
    present = set() if context.is_offline_mode() else set(sa.inspect(op.get_bind()).get_table_names())
    if "chops_admission_ticket" not in present:
        op.create_table('chops_admission_ticket',
            sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
            sa.Column('conversation_id', sa.String(length=64), nullable=False),
            sa.Column('created_at', sa.DateTime(), nullable=False),
            sa.Column('admitted_at', sa.DateTime(), nullable=True),
            sa.Column('expires_at', sa.DateTime(), nullable=False),
            sa.PrimaryKeyConstraint('id'),
            **TABLE_OPTIONS,
        )
        op.create_index('ix_admission_expires', 'chops_admission_ticket', ['expires_at'], unique=False)

    if "chops_approval" not in present:
        op.create_table('chops_approval',
            sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
            sa.Column('created_at', sa.DateTime(), nullable=False),
            sa.Column('decided_at', sa.DateTime(), nullable=True),
            sa.Column('conversation_id', sa.String(length=36), nullable=True),
            sa.Column('turn_id', sa.Integer(), nullable=True),
            sa.Column('nickname', sa.String(length=64), nullable=False),
            sa.Column('operation', sa.String(length=64), nullable=False),
            sa.Column('args_json', sa.Text(), nullable=False),
            sa.Column('idempotency_key', exact_string(191), nullable=False),
            sa.Column('dry_run_json', LONGTEXT, nullable=True),
            sa.Column('status', sa.String(length=16), server_default='pending', nullable=False),
            sa.Column('decided_by', sa.String(length=64), nullable=True),
            sa.Column('note', sa.Text(), nullable=True),
            sa.Column('result_json', LONGTEXT, nullable=True),
            sa.PrimaryKeyConstraint('id'),
            **TABLE_OPTIONS,
        )
        op.create_index('ix_approval_status', 'chops_approval', ['status'], unique=False)
        op.create_index('ux_approval_idempotency_key', 'chops_approval', ['idempotency_key'], unique=True)

    if "chops_approval_step" not in present:
        op.create_table('chops_approval_step',
            sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
            sa.Column('approval_id', sa.Integer(), nullable=False),
            sa.Column('position', sa.Integer(), nullable=False),
            sa.Column('operation', sa.String(length=64), nullable=False),
            sa.Column('args_json', sa.Text(), nullable=False),
            sa.PrimaryKeyConstraint('id'),
            **TABLE_OPTIONS,
        )
        op.create_index('ux_approval_step_position', 'chops_approval_step', ['approval_id', 'position'], unique=True)

    if "chops_audit_log" not in present:
        op.create_table('chops_audit_log',
            sa.Column('id', BIG_ID, autoincrement=True, nullable=False),
            sa.Column('created_at', sa.DateTime(), nullable=False),
            sa.Column('request_id', sa.String(length=64), nullable=True),
            sa.Column('idempotency_key', exact_string(191), nullable=True),
            sa.Column('nickname', sa.String(length=64), nullable=False),
            sa.Column('user_id', sa.Integer(), nullable=True),
            sa.Column('operation', sa.String(length=64), nullable=False),
            sa.Column('args_json', sa.Text(), nullable=False),
            sa.Column('outcome', sa.String(length=32), nullable=False),
            sa.Column('message', sa.Text(), nullable=False),
            sa.Column('diff_json', sa.Text(), nullable=False),
            sa.Column('result_json', LONGTEXT, nullable=False),
            sa.PrimaryKeyConstraint('id'),
            **TABLE_OPTIONS,
        )
        op.create_index('ix_audit_created_at', 'chops_audit_log', ['created_at'], unique=False)
        op.create_index('ix_audit_nickname', 'chops_audit_log', ['nickname'], unique=False)
        op.create_index('ux_audit_idempotency_key', 'chops_audit_log', ['idempotency_key'], unique=True)

    if "chops_conversation" not in present:
        op.create_table('chops_conversation',
            sa.Column('id', sa.String(length=36), nullable=False),
            sa.Column('nickname', sa.String(length=64), nullable=False),
            sa.Column('created_at', sa.DateTime(), nullable=False),
            sa.Column('updated_at', sa.DateTime(), nullable=False),
            sa.Column('channel', sa.String(length=16), server_default='widget', nullable=False),
            sa.PrimaryKeyConstraint('id'),
            **TABLE_OPTIONS,
        )
        op.create_index('ix_conversation_nickname', 'chops_conversation', ['nickname'], unique=False)
        op.create_index('ix_conversation_updated_at', 'chops_conversation', ['updated_at'], unique=False)

    if "chops_operation_policy" not in present:
        op.create_table('chops_operation_policy',
            sa.Column('operation', sa.String(length=64), nullable=False),
            sa.Column('always_needs_approval', sa.Boolean(), server_default=sa.text('0'), nullable=False),
            sa.Column('updated_at', sa.DateTime(), nullable=True),
            sa.PrimaryKeyConstraint('operation'),
            **TABLE_OPTIONS,
        )

    if "chops_signin_attempt" not in present:
        op.create_table('chops_signin_attempt',
            sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
            sa.Column('at', sa.DateTime(), nullable=False),
            sa.Column('account', sa.String(length=64), nullable=False),
            sa.Column('address', sa.String(length=64), nullable=False),
            sa.Column('outcome', sa.String(length=16), nullable=False),
            sa.PrimaryKeyConstraint('id'),
            **TABLE_OPTIONS,
        )
        op.create_index('ix_signin_attempt_at', 'chops_signin_attempt', ['at'], unique=False)

    if "chops_solution" not in present:
        op.create_table('chops_solution',
            sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
            sa.Column('created_at', sa.DateTime(), nullable=False),
            sa.Column('request', sa.Text(), nullable=False),
            sa.Column('route', sa.String(length=32), nullable=False),
            sa.Column('operation', sa.String(length=64), nullable=True),
            sa.Column('args_json', sa.Text(), nullable=True),
            sa.Column('answer', sa.Text(), nullable=True),
            sa.Column('source', sa.String(length=255), nullable=True),
            sa.Column('fingerprint', sa.String(length=64), nullable=False),
            sa.Column('embedder', sa.String(length=128), nullable=False),
            sa.Column('embedding', sa.LargeBinary(), nullable=False),
            sa.Column('status', sa.String(length=16), server_default='live', nullable=False),
            sa.Column('deleted_at', sa.DateTime(), nullable=True),
            sa.Column('deleted_by', sa.String(length=64), nullable=True),
            sa.PrimaryKeyConstraint('id'),
            **TABLE_OPTIONS,
        )
        op.create_index('ix_solution_status', 'chops_solution', ['status'], unique=False)
        op.create_index('ux_solution_fingerprint', 'chops_solution', ['fingerprint'], unique=True)

    if "chops_staff_account" not in present:
        op.create_table('chops_staff_account',
            sa.Column('name', exact_string(64), nullable=False),
            sa.Column('display_name', sa.String(length=128), nullable=False),
            sa.Column('password_hash', sa.String(length=255), nullable=False),
            sa.Column('created_at', sa.DateTime(), nullable=False),
            sa.Column('disabled', sa.Boolean(), server_default=sa.text('0'), nullable=False),
            sa.PrimaryKeyConstraint('name'),
            **TABLE_OPTIONS,
        )

    if "chops_staff_presence" not in present:
        op.create_table('chops_staff_presence',
            sa.Column('name', exact_string(64), nullable=False),
            sa.Column('last_seen_at', sa.DateTime(), nullable=False),
            sa.PrimaryKeyConstraint('name'),
            **TABLE_OPTIONS,
        )
        op.create_index('ix_staff_presence_seen', 'chops_staff_presence', ['last_seen_at'], unique=False)

    if "chops_audit_actor" not in present:
        op.create_table('chops_audit_actor',
            sa.Column('audit_id', BIG_ID, autoincrement=False, nullable=False),
            sa.Column('actor', sa.String(length=64), nullable=False),
            sa.ForeignKeyConstraint(['audit_id'], ['chops_audit_log.id'], name='fk_audit_actor_audit'),
            sa.PrimaryKeyConstraint('audit_id'),
            **TABLE_OPTIONS,
        )
        op.create_index('ix_audit_actor_actor', 'chops_audit_actor', ['actor'], unique=False)

    if "chops_conversation_event" not in present:
        op.create_table('chops_conversation_event',
            sa.Column('id', BIG_ID, autoincrement=True, nullable=False),
            sa.Column('conversation_id', sa.String(length=36), nullable=False),
            sa.Column('created_at', sa.DateTime(), nullable=False),
            sa.Column('kind', sa.String(length=16), nullable=False),
            sa.Column('actor', sa.String(length=64), nullable=False),
            sa.Column('turn_id', sa.Integer(), nullable=True),
            sa.Column('body_json', LONGTEXT, nullable=True),
            sa.ForeignKeyConstraint(['conversation_id'], ['chops_conversation.id'], name='fk_event_conversation'),
            sa.PrimaryKeyConstraint('id'),
            **TABLE_OPTIONS,
        )
        op.create_index('ix_event_conversation', 'chops_conversation_event', ['conversation_id', 'id'], unique=False)
        op.create_index('ix_event_created_at', 'chops_conversation_event', ['created_at'], unique=False)

    if "chops_conversation_state" not in present:
        op.create_table('chops_conversation_state',
            sa.Column('conversation_id', sa.String(length=36), nullable=False),
            sa.Column('state', sa.String(length=16), server_default='agent', nullable=False),
            sa.Column('staff', sa.String(length=64), nullable=True),
            sa.Column('changed_by', sa.String(length=64), nullable=False),
            sa.Column('changed_at', sa.DateTime(), nullable=False),
            sa.ForeignKeyConstraint(['conversation_id'], ['chops_conversation.id'], name='fk_state_conversation'),
            sa.PrimaryKeyConstraint('conversation_id'),
            **TABLE_OPTIONS,
        )
        op.create_index('ix_conversation_state_state', 'chops_conversation_state', ['state', 'changed_at'],
                        unique=False)

    if "chops_turn" not in present:
        op.create_table('chops_turn',
            sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
            sa.Column('conversation_id', sa.String(length=36), nullable=False),
            sa.Column('seq', sa.Integer(), nullable=False),
            sa.Column('created_at', sa.DateTime(), nullable=False),
            sa.Column('user_text', sa.Text(), nullable=False),
            sa.Column('reply', sa.Text(), nullable=True),
            sa.Column('route', sa.String(length=32), nullable=True),
            sa.Column('operation', sa.String(length=64), nullable=True),
            sa.Column('args_json', sa.Text(), nullable=True),
            sa.Column('outcome', sa.String(length=32), nullable=True),
            sa.Column('committed', sa.Boolean(), server_default=sa.text('0'), nullable=False),
            sa.Column('queued', sa.Boolean(), server_default=sa.text('0'), nullable=False),
            sa.Column('trace_json', LONGTEXT, nullable=True),
            sa.ForeignKeyConstraint(['conversation_id'], ['chops_conversation.id'], name='fk_turn_conversation'),
            sa.PrimaryKeyConstraint('id'),
            **TABLE_OPTIONS,
        )
        op.create_index('ux_turn_conversation_seq', 'chops_turn', ['conversation_id', 'seq'], unique=True)

    if "chops_turn_rating" not in present:
        op.create_table('chops_turn_rating',
            sa.Column('turn_id', sa.Integer(), nullable=False),
            sa.Column('thumbs', sa.String(length=8), nullable=False),
            sa.Column('comment', sa.Text(), nullable=True),
            sa.Column('rated_at', sa.DateTime(), nullable=False),
            sa.ForeignKeyConstraint(['turn_id'], ['chops_turn.id'], name='fk_rating_turn'),
            sa.PrimaryKeyConstraint('turn_id'),
            **TABLE_OPTIONS,
        )
        op.create_index('ix_rating_rated_at', 'chops_turn_rating', ['rated_at'], unique=False)


def downgrade() -> None:
    """Never: it would drop every table with its rows."""
    raise NotImplementedError("the baseline is not downgraded: it would drop every table and its rows")
