"""The project's own small demo data set (not CPHOS data): three areas, four schools, two team
leaders (one still marking), a vice team leader, an arbiter, an admin, a pending applicant, and an
exam in progress with marking assignments.

Demo nicknames: ``demo_leader`` (team leader, nothing left to mark), ``demo_busy_leader`` (team
leader with problems left), ``demo_vice`` (vice of demo_leader's user), ``demo_arbiter``,
``demo_admin`` (listed in ``cmf_tp_admin``), ``demo_pending`` (status 0, waiting for approval).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from apis.cphos import tables as t

T0 = 1717200000  # 2024-06-01, the demo's "now"-ish creation time
CURRENT_EXAM = 2
MARKED, UNMARKED = 2, 1


def _member(id_, nickname, user_name, type_, school, subject, limit, p_id=0, status=1):
    return {"id": id_, "p_id": p_id, "user_name": user_name, "school_id": school, "subject": subject,
            "status": status, "type": type_, "limit": limit, "create_time": T0 + id_, "nickname": nickname}


def demo_rows() -> dict[sa.Table, list[dict[str, Any]]]:
    """Rows per ``cmf_tp_*`` table for the demo deployment."""
    areas = [{"id": 1, "area_name": "Northbridge"}, {"id": 2, "area_name": "Lakeside"},
             {"id": 3, "area_name": "Hill Valley"}]
    schools = [{"id": 1, "area": 1, "school_name": "Northbridge High School"},
               {"id": 2, "area": 2, "school_name": "Lakeside Academy"},
               {"id": 3, "area": 3, "school_name": "Hill Valley College"},
               {"id": 4, "area": 1, "school_name": "Riverside School"}]
    members = [
        _member(1, "demo_admin", "Alice Admin", 1, 1, 1, 100),
        _member(2, "demo_leader", "Lena Leader", 1, 1, 2, 20),
        _member(3, "demo_busy_leader", "Bruno Busy", 1, 2, 3, 30),
        _member(4, "demo_vice", "Vera Vice", 3, 1, 4, 10, p_id=2),
        _member(5, "demo_arbiter", "Arto Arbiter", 2, 3, 5, 0),
        _member(6, "demo_pending", "Pat Pending", 1, 4, 1, 1, status=0),
        _member(7, "demo_second_vice", "Sam Second", 3, 2, 6, 10, p_id=3),
        _member(8, "demo_other_leader", "Olga Other", 1, 3, 7, 50),
    ]
    exams = [{"id": 1, "title": "Spring Physics Mock 2024", "status": 3, "type": 2, "show": 1, "create_time": T0},
             {"id": CURRENT_EXAM, "title": "Autumn Physics Mock 2024", "status": 2, "type": 2, "show": 1,
              "create_time": T0 + 86400}]
    students = [{"id": i, "user_id": 2 if i <= 3 else 3, "name": f"Demo Student {i}", "school": 1 if i <= 3 else 2,
                 "grade": "2026", "prize": "Other"} for i in range(1, 7)]
    papers = [{"id": i, "p_id": CURRENT_EXAM if i <= 6 else 1, "user_id": students[(i - 1) % 6]["user_id"],
               "student_id": (i - 1) % 6 + 1, "score": None if i <= 6 else 40.0 + i,
               "eight": None if i <= 6 else 32.0 + i, "two": None if i <= 6 else 8.0, "create_time": T0 + i}
              for i in range(1, 10)]
    # Marking in the current exam: demo_leader (subject 2) has marked everything, demo_busy_leader
    # (subject 3) has 3 problems left, demo_arbiter (subject 5) has 2 left.
    plan = [(2, 2, MARKED, [1, 2, 3]), (3, 3, UNMARKED, [4, 5, 6]), (5, 5, UNMARKED, [1, 4])]
    subjects, corrects = [], []
    for user_id, problem, status, paper_ids in plan:
        for paper_id in paper_ids:
            sid = len(subjects) + 1
            grade = 6.0 if status == MARKED else None
            subjects.append({"id": sid, "p_id": paper_id, "subject": problem, "image": f"demo/{paper_id}-{problem}.png",
                             "grade": grade, "status": status, "create_time": T0 + 2 * 86400})
            corrects.append({"id": sid, "user_id": user_id, "p_id": sid, "grade": grade, "status": status,
                             "create_time": T0 + 2 * 86400})
    return {t.member: members, t.admin: [{"id": 1, "user_id": 1}], t.area: areas, t.school: schools,
            t.exam: exams, t.student: students, t.test_paper: papers, t.subject: subjects, t.correct: corrects}
