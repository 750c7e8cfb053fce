"""Baseline: the CPHOS system's tables (``cmf_tp_*``) as of November 2026,
exactly as ``db/schema.sql`` created them on MySQL and ``create_all`` on SQLite up to then.

Revision ID: 32e938fb4cd5
Revises: nothing (the first revision)
Create Date: 2026-11-24 15:01:26.976426
"""

from alembic import context, op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = "32e938fb4cd5"
down_revision = None
branch_labels = None
depends_on = None

# Frozen copies of the column types of the time (never imported from the live table modules, which move on).
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
    if "cmf_tp_admin" not in present:
        op.create_table('cmf_tp_admin',
            sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
            sa.Column('user_id', sa.Integer(), nullable=False),
            sa.PrimaryKeyConstraint('id'),
            **TABLE_OPTIONS,
        )
        op.create_index('ix_admin_user_id', 'cmf_tp_admin', ['user_id'], unique=False)

    if "cmf_tp_area" not in present:
        op.create_table('cmf_tp_area',
            sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
            sa.Column('area_name', sa.String(length=64), nullable=False),
            sa.PrimaryKeyConstraint('id'),
            **TABLE_OPTIONS,
        )
        op.create_index('ix_area_area_name', 'cmf_tp_area', ['area_name'], unique=False)

    if "cmf_tp_correct" not in present:
        op.create_table('cmf_tp_correct',
            sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
            sa.Column('user_id', sa.Integer(), nullable=False),
            sa.Column('p_id', sa.Integer(), nullable=False),
            sa.Column('grade', sa.Double(), nullable=True),
            sa.Column('status', sa.Integer(), server_default='1', nullable=False),
            sa.Column('create_time', sa.Integer(), server_default='0', nullable=False),
            sa.PrimaryKeyConstraint('id'),
            **TABLE_OPTIONS,
        )
        op.create_index('ix_correct_p_id', 'cmf_tp_correct', ['p_id'], unique=False)
        op.create_index('ix_correct_user_status', 'cmf_tp_correct', ['user_id', 'status'], unique=False)

    if "cmf_tp_exam" not in present:
        op.create_table('cmf_tp_exam',
            sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
            sa.Column('title', sa.String(length=128), nullable=False),
            sa.Column('status', sa.Integer(), server_default='1', nullable=False),
            sa.Column('type', sa.Integer(), server_default='1', nullable=False),
            sa.Column('show', sa.Integer(), server_default='1', nullable=False),
            sa.Column('create_time', sa.Integer(), server_default='0', nullable=False),
            sa.PrimaryKeyConstraint('id'),
            **TABLE_OPTIONS,
        )
        op.create_index('ix_exam_status', 'cmf_tp_exam', ['status'], unique=False)

    if "cmf_tp_member" not in present:
        op.create_table('cmf_tp_member',
            sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
            sa.Column('p_id', sa.Integer(), server_default='0', nullable=False),
            sa.Column('user_name', sa.String(length=64), server_default='', nullable=False),
            sa.Column('school_id', sa.Integer(), server_default='0', nullable=False),
            sa.Column('subject', sa.Integer(), server_default='0', nullable=False),
            sa.Column('status', sa.Integer(), server_default='0', nullable=False),
            sa.Column('type', sa.Integer(), server_default='1', nullable=False),
            sa.Column('limit', sa.Integer(), server_default='0', nullable=False),
            sa.Column('create_time', sa.Integer(), server_default='0', nullable=False),
            sa.Column('nickname', exact_string(64), server_default='', nullable=False),
            sa.PrimaryKeyConstraint('id'),
            **TABLE_OPTIONS,
        )
        op.create_index('ix_member_nickname', 'cmf_tp_member', ['nickname'], unique=False)
        op.create_index('ix_member_p_id', 'cmf_tp_member', ['p_id'], unique=False)
        op.create_index('ix_member_school_id', 'cmf_tp_member', ['school_id'], unique=False)
        op.create_index('ix_member_user_name', 'cmf_tp_member', ['user_name'], unique=False)

    if "cmf_tp_school" not in present:
        op.create_table('cmf_tp_school',
            sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
            sa.Column('area', sa.Integer(), nullable=False),
            sa.Column('school_name', sa.String(length=128), nullable=False),
            sa.PrimaryKeyConstraint('id'),
            **TABLE_OPTIONS,
        )
        op.create_index('ix_school_area', 'cmf_tp_school', ['area'], unique=False)
        op.create_index('ux_school_school_name', 'cmf_tp_school', ['school_name'], unique=True)

    if "cmf_tp_student" not in present:
        op.create_table('cmf_tp_student',
            sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
            sa.Column('user_id', sa.Integer(), nullable=False),
            sa.Column('name', sa.String(length=64), nullable=False),
            sa.Column('school', sa.Integer(), nullable=False),
            sa.Column('grade', sa.String(length=16), server_default='', nullable=False),
            sa.Column('prize', sa.String(length=32), server_default='', nullable=False),
            sa.PrimaryKeyConstraint('id'),
            **TABLE_OPTIONS,
        )
        op.create_index('ix_student_user_id', 'cmf_tp_student', ['user_id'], unique=False)

    if "cmf_tp_subject" not in present:
        op.create_table('cmf_tp_subject',
            sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
            sa.Column('p_id', sa.Integer(), nullable=False),
            sa.Column('subject', sa.Integer(), nullable=False),
            sa.Column('image', sa.String(length=255), server_default='', nullable=False),
            sa.Column('grade', sa.Double(), nullable=True),
            sa.Column('status', sa.Integer(), server_default='1', nullable=False),
            sa.Column('create_time', sa.Integer(), server_default='0', nullable=False),
            sa.PrimaryKeyConstraint('id'),
            **TABLE_OPTIONS,
        )
        op.create_index('ix_subject_p_id', 'cmf_tp_subject', ['p_id'], unique=False)

    if "cmf_tp_test_paper" not in present:
        op.create_table('cmf_tp_test_paper',
            sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
            sa.Column('p_id', sa.Integer(), nullable=False),
            sa.Column('user_id', sa.Integer(), nullable=False),
            sa.Column('student_id', sa.Integer(), nullable=False),
            sa.Column('score', sa.Double(), nullable=True),
            sa.Column('eight', sa.Double(), nullable=True),
            sa.Column('two', sa.Double(), nullable=True),
            sa.Column('create_time', sa.Integer(), server_default='0', nullable=False),
            sa.PrimaryKeyConstraint('id'),
            **TABLE_OPTIONS,
        )
        op.create_index('ix_test_paper_p_id', 'cmf_tp_test_paper', ['p_id'], unique=False)
        op.create_index('ix_test_paper_user_id', 'cmf_tp_test_paper', ['user_id'], unique=False)


def downgrade() -> None:
    """Never: it would drop every table with its rows."""
    raise NotImplementedError("the baseline is not downgraded: it would drop every table and its rows")
