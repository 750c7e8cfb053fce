"""Hostile arguments on SQLite and MariaDB: each gets a clear refusal (reads: nothing found) and the
database stays byte-for-byte the same (a checksum of every table before and after)."""

from __future__ import annotations

from apis.cphos.service import Api
from apis.cphos.state import checksums
from chops.domain.outcomes import Outcome

INJECTIONS = ["x' OR '1'='1", "'; DROP TABLE cmf_tp_member; --", "Lena Leader' -- ", "\" OR 1=1 #",
              "1; UPDATE cmf_tp_member SET type=2", "%", "_", "Lena%", "' UNION SELECT nickname FROM cmf_tp_member --"]
UNICODE = ["学校🏫", "Ｌｅｎａ Ｌｅａｄｅｒ", "Lena\u200bLeader", "Lena Leader\x00", "Łódź ✓", "\U0001F600" * 10]
LONG = ["A" * 65, "A" * 10_000, "é" * 200]

CASES: list[tuple[str, str, dict, set[Outcome]]] = []
for s in INJECTIONS + UNICODE + LONG:
    CASES += [
        ("ChangeAllTypesSchool", "demo_leader", {"SchoolName": s}, {Outcome.REFUSED_INVALID_ARG}),
        ("MakeAllTypesToBeSubCoach", "demo_other_leader", {"TeamLeaderName": s}, {Outcome.REFUSED_INVALID_ARG}),
        ("AddNewSchoolByName", "demo_admin", {"SchoolName": "Harbor School", "AreaName": s},
         {Outcome.REFUSED_INVALID_ARG}),
        ("ChangeAllTypesSchool", s, {"SchoolName": "Lakeside Academy"}, {Outcome.NOT_IN_SYSTEM}),
    ]
for v in [-1, -10**18, 10**18, 2**64, 10**100, 3.5, "nine", "", [], {}, [9], {"value": 9}, True, False, float("nan"),
          "9; DROP TABLE cmf_tp_member"]:
    CASES += [
        ("ChangeAllTypesUploadLimit", "demo_leader", {"Limit": v},
         {Outcome.REFUSED_INVALID_ARG, Outcome.REFUSED_MISSING_ARGS}),
        ("ChangeAllTypesMarkingSubject", "demo_leader", {"SubjectIndex": v},
         {Outcome.REFUSED_INVALID_ARG, Outcome.REFUSED_MISSING_ARGS}),
    ]
# Somebody else's identity in the arguments: the acting user is only ever the caller.
CASES += [
    ("ChangeAllTypesUploadLimit", "demo_leader", {"Limit": 50, "nickname": "demo_admin"}, {Outcome.REFUSED_INVALID_ARG}),
    ("ChangeAllTypesUploadLimit", "demo_leader", {"Limit": 50, "Nickname": "demo_vice"}, {Outcome.REFUSED_INVALID_ARG}),
    ("MakeAllTypesToBeArbiter", "demo_leader", {"user_id": 1}, {Outcome.REFUSED_INVALID_ARG}),
    ("AddNewSchoolByName", "demo_leader", {"SchoolName": "X", "AreaName": "Lakeside", "as": "demo_admin"},
     {Outcome.REFUSED_INVALID_ARG}),
    ("AddNewSchoolByName", "demo_leader", {"SchoolName": "X", "AreaName": "Lakeside"}, {Outcome.REFUSED_PERMISSION}),
    ("MakeAllTypesToBeSubCoach", "demo_other_leader", {"TeamLeaderName": "demo_leader"}, {Outcome.REFUSED_INVALID_ARG}),
    ("VerifyTeacherUserToBeSupTeacher", "demo_pending", {"Name": "Pat", "ViewProblem": 3, "nickname": "demo_leader"},
     {Outcome.REFUSED_INVALID_ARG}),
    ("ChangeAllTypesUploadLimit", "demo_leader", ["Limit", 5], {Outcome.REFUSED_INVALID_ARG}),
    ("ChangeAllTypesUploadLimit", "demo_leader", "{'Limit': 5}", {Outcome.REFUSED_INVALID_ARG}),
    ("ChangeAllTypesUploadLimit", "demo_leader' OR '1'='1", {"Limit": 5}, {Outcome.NOT_IN_SYSTEM}),
    ("ChangeAllTypesUploadLimit", "", {"Limit": 5}, {Outcome.NOT_IN_SYSTEM}),
    ("ChangeAllTypesUploadLimit", None, {"Limit": 5}, {Outcome.NOT_IN_SYSTEM}),
    ("ChangeAllTypesUploadLimit", "demo_leader ", {"Limit": 5}, {Outcome.NOT_IN_SYSTEM}),
    ("ChangeAllTypesUploadLimit; DROP TABLE cmf_tp_member", "demo_leader", {"Limit": 5}, {Outcome.REFUSED_INVALID_ARG}),
]
READS = [("GetTeacherInfoByName", {"TeacherName": s}) for s in INJECTIONS + UNICODE] + \
        [("GetTeacherInfoBySchoolName", {"SchoolName": s}) for s in INJECTIONS + UNICODE]


def test_hostile_writes_are_refused_and_change_nothing(engine):
    api, sums = Api(engine), checksums(engine)
    for i, (op, nick, args, allowed) in enumerate(CASES):
        for dry in (True, False):
            res = api.call(op, nick, args, dry_run=dry, idempotency_key=f"hostile-{i}")
            assert res.outcome in allowed, f"{op} as {nick!r} {args!r}: {res.outcome} {res.message}"
            assert res.message and not res.committed and res.diff == []
        assert checksums(engine) == sums, f"{op} as {nick!r} {args!r} changed the database"


def test_hostile_reads_find_nothing_and_change_nothing(engine):
    api, sums = Api(engine), checksums(engine)
    for op, args in READS:
        res = api.call(op, "demo_admin", args)
        assert res.outcome == Outcome.OK and res.data == [], f"{op} {args!r}: {res.data}"
    for op, args in READS[:3]:
        assert api.call(op, "demo_leader", args).outcome == Outcome.REFUSED_PERMISSION
    assert checksums(engine) == sums


def test_unicode_is_stored_faithfully(engine):
    """Not hostile, just non-ASCII: a valid unicode name round-trips through MySQL utf8mb4 and SQLite."""
    api = Api(engine)
    res = api.call("AddNewSchoolByName", "demo_admin", {"SchoolName": "Łódź 学校 🏫", "AreaName": "Lakeside"})
    assert res.outcome == Outcome.OK
    moved = api.call("ChangeAllTypesSchool", "demo_leader", {"SchoolName": "Łódź 学校 🏫"})
    assert moved.outcome == Outcome.OK and api.profile("demo_leader").school_name == "Łódź 学校 🏫"
