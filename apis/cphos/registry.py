"""The CPHOS operations the agent (and staff, and scripts) may call: the pack's one registry."""

from __future__ import annotations

from apis.cphos import operations as ops
from chops.domain.operations import Operation

_OPS = [
    Operation("ChangeAllTypesMarkingSubject", "Change the user's marking subject (viewing problem, 1-10).",
              ops.SubjectArgs, True, False, ops.change_marking_subject),
    Operation("VerifyTeacherUserToBeSupTeacher",
              "Complete a pending user's own application with their real name and marking subject "
              "(both required); not for merely changing the marking subject.",
              ops.ApprovalArgs, True, False, ops.approve_application),
    Operation("MakeAllTypesToBeArbiter", "Make the user an arbiter; no arguments.",
              ops.NoArgs, True, False, ops.make_arbiter),
    Operation("MakeAllTypesToBeSupTeacher", "Make the user a team leader; no arguments.",
              ops.NoArgs, True, False, ops.make_team_leader),
    Operation("MakeAllTypesToBeSubCoach", "Make the user vice team leader of the team leader with the given name.",
              ops.TeamLeaderArgs, True, False, ops.make_vice_leader),
    Operation("ChangeAllTypesUploadLimit", "Change the user's upload limit (0-200).",
              ops.LimitArgs, True, False, ops.change_upload_limit),
    Operation("ChangeAllTypesSchool", "Change the user's school to the school with the given name.",
              ops.SchoolArgs, True, False, ops.change_school),
    Operation("AddNewSchoolByName", "Admin only: add a new school with the given name to the given area.",
              ops.NewSchoolArgs, True, True, ops.add_school),
    Operation("GetTeacherInfoByName",
              "Admin only: look up users by real name (role, school, area, team leader, upload limit, marking subject).",
              ops.TeacherArgs, False, True, ops.teacher_info_by_name),
    Operation("GetTeacherInfoBySchoolName",
              "Admin only: list the users of a school (role, team leader, upload limit, marking subject).",
              ops.SchoolArgs, False, True, ops.teacher_info_by_school),
]

OPERATIONS: dict[str, Operation] = {op.name: op for op in _OPS}
