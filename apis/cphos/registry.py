"""The CPHOS operations the agent (and staff, and scripts) may call: the pack's one registry."""

from __future__ import annotations

from apis.cphos import operations as ops
from chops.domain.operations import Operation
from chops.i18n import N_

# What a reply lists of a user row a look-up returned, in order, and the column whose values are words of the catalog.
COLUMNS = (("user_name", N_("name")), ("role", N_("role")), ("school_name", N_("school")), ("area_name", N_("area")),
           ("team_leader_name", N_("team leader")), ("subject", N_("marking subject")), ("limit", N_("upload limit")))
WORDED = ("role",)  # its values: "team leader", "arbiter", "vice team leader"

_OPS = [
    Operation("ChangeAllTypesMarkingSubject", "Change the user's marking subject (viewing problem, 1-10).",
              ops.SubjectArgs, True, False, ops.change_marking_subject, title=N_("change your marking subject")),
    Operation("VerifyTeacherUserToBeSupTeacher",
              "Complete a pending user's own application with their real name and marking subject "
              "(both required); not for merely changing the marking subject.",
              ops.ApprovalArgs, True, False, ops.approve_application, title=N_("complete your application")),
    Operation("MakeAllTypesToBeArbiter", "Make the user an arbiter; no arguments.",
              ops.NoArgs, True, False, ops.make_arbiter, title=N_("make you an arbiter")),
    Operation("MakeAllTypesToBeSupTeacher", "Make the user a team leader; no arguments.",
              ops.NoArgs, True, False, ops.make_team_leader, title=N_("make you a team leader")),
    Operation("MakeAllTypesToBeSubCoach", "Make the user vice team leader of the team leader with the given name.",
              ops.TeamLeaderArgs, True, False, ops.make_vice_leader, title=N_("make you a vice team leader")),
    Operation("ChangeAllTypesUploadLimit", "Change the user's upload limit (0-200).",
              ops.LimitArgs, True, False, ops.change_upload_limit, title=N_("change your upload limit")),
    Operation("ChangeAllTypesSchool", "Change the user's school to the school with the given name.",
              ops.SchoolArgs, True, False, ops.change_school, title=N_("change your school")),
    Operation("AddNewSchoolByName", "Admin only: add a new school with the given name to the given area.",
              ops.NewSchoolArgs, True, True, ops.add_school, title=N_("add a new school")),
    Operation("GetTeacherInfoByName",
              "Admin only: look up users by real name (role, school, area, team leader, upload limit, marking subject).",
              ops.TeacherArgs, False, True, ops.teacher_info_by_name, title=N_("look up users by name"),
              columns=COLUMNS, worded=WORDED),
    Operation("GetTeacherInfoBySchoolName",
              "Admin only: list the users of a school (role, team leader, upload limit, marking subject).",
              ops.SchoolArgs, False, True, ops.teacher_info_by_school, title=N_("list the users of a school"),
              columns=COLUMNS, worded=WORDED),
]

OPERATIONS: dict[str, Operation] = {op.name: op for op in _OPS}
