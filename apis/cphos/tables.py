"""The CPHOS system's tables (SQLAlchemy Core, their own ``MetaData``). A change here comes with a migration
(``apis/cphos/migrations``: ``chops db revision cphos -m ...``) and an edit of ``db/schema.sql`` (tests
compare the three).

The nine ``cmf_tp_*`` tables mirror the CPHOS MySQL system (column names as upstream; the member
column ``limit`` and the exam column ``show`` are reserved words, SQLAlchemy quotes them). The agent's
own ``chops_*`` tables live in ``chops.tables``. No foreign keys on ``cmf_tp_*``: the upstream data has
orphans (papers of deleted users).
"""

from __future__ import annotations

import sqlalchemy as sa

from chops.tables import exact_string

metadata = sa.MetaData()


member = sa.Table(
    "cmf_tp_member", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("p_id", sa.Integer, nullable=False, server_default="0"),
    sa.Column("user_name", sa.String(64), nullable=False, server_default=""),
    sa.Column("school_id", sa.Integer, nullable=False, server_default="0"),
    sa.Column("subject", sa.Integer, nullable=False, server_default="0"),
    sa.Column("status", sa.Integer, nullable=False, server_default="0"),
    sa.Column("type", sa.Integer, nullable=False, server_default="1"),
    sa.Column("limit", sa.Integer, nullable=False, server_default="0"),
    sa.Column("create_time", sa.Integer, nullable=False, server_default="0"),
    sa.Column("nickname", exact_string(64), nullable=False, server_default=""),
    sa.Index("ix_member_nickname", "nickname"),
    sa.Index("ix_member_user_name", "user_name"),
    sa.Index("ix_member_school_id", "school_id"),
    sa.Index("ix_member_p_id", "p_id"),
)

admin = sa.Table(
    "cmf_tp_admin", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("user_id", sa.Integer, nullable=False),
    sa.Index("ix_admin_user_id", "user_id"),
)

area = sa.Table(
    "cmf_tp_area", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("area_name", sa.String(64), nullable=False),
    sa.Index("ix_area_area_name", "area_name"),
)

school = sa.Table(
    "cmf_tp_school", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("area", sa.Integer, nullable=False),
    sa.Column("school_name", sa.String(128), nullable=False),
    sa.Index("ix_school_area", "area"),
    sa.Index("ux_school_school_name", "school_name", unique=True),
)

exam = sa.Table(
    "cmf_tp_exam", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("title", sa.String(128), nullable=False),
    sa.Column("status", sa.Integer, nullable=False, server_default="1"),
    sa.Column("type", sa.Integer, nullable=False, server_default="1"),
    sa.Column("show", sa.Integer, nullable=False, server_default="1"),
    sa.Column("create_time", sa.Integer, nullable=False, server_default="0"),
    sa.Index("ix_exam_status", "status"),
)

student = sa.Table(
    "cmf_tp_student", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("user_id", sa.Integer, nullable=False),
    sa.Column("name", sa.String(64), nullable=False),
    sa.Column("school", sa.Integer, nullable=False),
    sa.Column("grade", sa.String(16), nullable=False, server_default=""),
    sa.Column("prize", sa.String(32), nullable=False, server_default=""),
    sa.Index("ix_student_user_id", "user_id"),
)

test_paper = sa.Table(
    "cmf_tp_test_paper", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("p_id", sa.Integer, nullable=False),
    sa.Column("user_id", sa.Integer, nullable=False),
    sa.Column("student_id", sa.Integer, nullable=False),
    sa.Column("score", sa.Double, nullable=True),
    sa.Column("eight", sa.Double, nullable=True),
    sa.Column("two", sa.Double, nullable=True),
    sa.Column("create_time", sa.Integer, nullable=False, server_default="0"),
    sa.Index("ix_test_paper_p_id", "p_id"),
    sa.Index("ix_test_paper_user_id", "user_id"),
)

subject = sa.Table(
    "cmf_tp_subject", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("p_id", sa.Integer, nullable=False),
    sa.Column("subject", sa.Integer, nullable=False),
    sa.Column("image", sa.String(255), nullable=False, server_default=""),
    sa.Column("grade", sa.Double, nullable=True),
    sa.Column("status", sa.Integer, nullable=False, server_default="1"),
    sa.Column("create_time", sa.Integer, nullable=False, server_default="0"),
    sa.Index("ix_subject_p_id", "p_id"),
)

correct = sa.Table(
    "cmf_tp_correct", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("user_id", sa.Integer, nullable=False),
    sa.Column("p_id", sa.Integer, nullable=False),
    sa.Column("grade", sa.Double, nullable=True),
    sa.Column("status", sa.Integer, nullable=False, server_default="1"),
    sa.Column("create_time", sa.Integer, nullable=False, server_default="0"),
    sa.Index("ix_correct_user_status", "user_id", "status"),
    sa.Index("ix_correct_p_id", "p_id"),
)

CPHOS_TABLES = (member, admin, area, school, exam, student, test_paper, subject, correct)
