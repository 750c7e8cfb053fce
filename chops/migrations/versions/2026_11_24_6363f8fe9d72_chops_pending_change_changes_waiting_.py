"""chops_pending_change: changes described to the user and waiting for their yes (chops.pending).

Revision ID: 6363f8fe9d72
Revises: 6be7f93fd2af
Create Date: 2026-11-24 15:11:10.685173

Written by `chops db revision`, then made to adopt the table where it exists: releases between the baseline
and the arrival of migrations (main b933ff1 .. 96dfe7e) created it with ``CREATE TABLE IF NOT EXISTS``.
"""

from alembic import context, op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = "6363f8fe9d72"
down_revision = "6be7f93fd2af"
branch_labels = None
depends_on = None

LONGTEXT = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")  # MySQL TEXT stops at 64 KiB


def upgrade() -> None:
    """Create chops_pending_change, unless a release before migrations did."""
    if not context.is_offline_mode() and sa.inspect(op.get_bind()).has_table("chops_pending_change"):
        return
    op.create_table(
        "chops_pending_change",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("conversation_id", sa.String(length=36), nullable=False),
        sa.Column("nickname", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        # Byte-exact on MySQL like every idempotency key: keys differing only in case are different keys.
        sa.Column("idempotency_key", sa.String(length=191).with_variant(
            mysql.VARCHAR(191, collation="utf8mb4_bin"), "mysql", "mariadb"), nullable=False),
        sa.Column("steps_json", sa.Text(), nullable=False),
        sa.Column("diff_json", LONGTEXT, nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("state", sa.String(length=16), server_default="open", nullable=False),
        sa.Column("resolved_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        mysql_charset="utf8mb4",
        mysql_collate="utf8mb4_unicode_ci",
        mysql_engine="InnoDB",
    )
    op.create_index("ix_pending_conversation_state", "chops_pending_change", ["conversation_id", "state"],
                    unique=False)


def downgrade() -> None:
    """Drop chops_pending_change (its open changes with it)."""
    op.drop_index("ix_pending_conversation_state", table_name="chops_pending_change")
    op.drop_table("chops_pending_change")
