"""The ten CPHOS operations: typed argument models and the functions that run them.

Semantics follow the upstream ``db_api`` (restated in the CPHOS README), with its bugs fixed:

* ``VerifyTeacherUserToBeSupTeacher`` tests ``status`` (upstream tested ``type``, column -4): an
  approved user gets a clear "already approved" no-op; a pending user (status 0) is approved.
* A pending user may call nothing else (``apis.cphos.service`` enforces it; upstream never let a pending
  user act at all, so they could not even complete their application).

Each function takes the unit of work, the acting member row (resolved from the caller's nickname,
never from arguments) and its validated arguments. It raises a ``DomainError`` to refuse, and
returns ``(message, data)``; the changes it made are in ``uow.changes`` (none = ``ok_noop``).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from apis.cphos.uow import AbstractUnitOfWork
from chops.domain.outcomes import InvalidArgument, PreconditionFailed
from chops.i18n import N_

Member = dict[str, Any]
Reply = tuple[str, Any]

APPROVAL_SCHOOL_ID = 3  # upstream's fixed school for a newly approved user (kept as upstream)
APPROVAL_LIMIT = 1  # upstream's fixed upload limit for a newly approved user
SUBJECTS = (1, 10)
LIMITS = (0, 200)


def _no_bool(value: Any) -> Any:
    # pydantic's lax mode would turn True into 1; a boolean is never a meaningful index or limit.
    if isinstance(value, bool):
        raise ValueError("expected an integer, got a boolean")
    return value


Int = Annotated[int, BeforeValidator(_no_bool)]
Name = Annotated[str, Field(max_length=64)]
SchoolName = Annotated[str, Field(max_length=128)]


class Args(BaseModel):
    """Base of every argument model: CPHOS names as aliases, unknown keys refused."""

    model_config = ConfigDict(extra="forbid", validate_by_name=True, validate_by_alias=True,
                              serialize_by_alias=True)


class NoArgs(Args):
    """This operation takes no arguments."""


class SubjectArgs(Args):
    """Arguments of ChangeAllTypesMarkingSubject."""

    subject_index: Int = Field(alias="SubjectIndex", title=N_("the new marking subject (problem index, 1 to 10)"),
                               description="the new marking subject (problem index), 1 to 10")


class ApprovalArgs(Args):
    """Arguments of VerifyTeacherUserToBeSupTeacher."""

    name: Name = Field(alias="Name", title=N_("your real name, as it should be registered"),
                      description="the user's real name, as it should be registered")
    view_problem: Int = Field(alias="ViewProblem", title=N_("your marking subject (problem index, 1 to 10)"),
                               description="the marking subject (problem index), 1 to 10")


class TeamLeaderArgs(Args):
    """Arguments of MakeAllTypesToBeSubCoach."""

    team_leader_name: Name = Field(alias="TeamLeaderName", title=N_("the exact real name of the team leader"),
                                   description="the exact real name of the team leader to become vice of")


class LimitArgs(Args):
    """Arguments of ChangeAllTypesUploadLimit."""

    limit: Int = Field(alias="Limit", title=N_("the new upload limit (0 to 200)"),
                      description="the new upload limit, 0 to 200")


class SchoolArgs(Args):
    """A school given by its exact name."""

    school_name: SchoolName = Field(alias="SchoolName", title=N_("the exact name of the school"),
                                   description="the exact name of the school")


class NewSchoolArgs(Args):
    """Arguments of AddNewSchoolByName."""

    school_name: SchoolName = Field(alias="SchoolName", title=N_("the exact name of the school"),
                                   description="the exact name of the school to add")
    area_name: Name = Field(alias="AreaName", title=N_("the exact name of the area"),
                           description="the exact name of the area the school belongs to")


class TeacherArgs(Args):
    """Arguments of GetTeacherInfoByName."""

    teacher_name: Name = Field(alias="TeacherName", title=N_("the exact real name of the user to look up"),
                              description="the exact real name of the user to look up")


def _in_range(value: int, bounds: tuple[int, int], arg: str) -> None:
    lo, hi = bounds
    if not lo <= value <= hi:
        raise InvalidArgument(f"{arg} must be between {lo} and {hi}, got {value}.")


def _require_marking_done(uow: AbstractUnitOfWork, actor: Member, what: str) -> None:
    """Upstream rule: a team leader with unmarked problems in the current exam may not ``what``."""
    if actor["type"] == 1:
        left = uow.marking.problems_left(actor["id"])
        if left > 0:
            raise PreconditionFailed(f"You cannot {what}: you have not finished marking "
                                     f"({left} problem(s) left in the current exam).")


def _one(rows: list[dict], what: str) -> dict:
    if not rows:
        raise InvalidArgument(f"There is no {what}.")
    if len(rows) > 1:
        raise InvalidArgument(f"There is more than one {what}; ask staff to resolve it.")
    return rows[0]


def change_marking_subject(uow: AbstractUnitOfWork, actor: Member, a: SubjectArgs) -> Reply:
    """Set the acting user's marking subject (1-10); a team leader must have finished marking."""
    _in_range(a.subject_index, SUBJECTS, "SubjectIndex")
    _require_marking_done(uow, actor, "change your marking subject")
    done = uow.members.update(actor, {"subject": a.subject_index})
    msg = "Your marking subject is now" if done else "Your marking subject already is"
    return f"{msg} {a.subject_index}.", {"subject": a.subject_index}


def approve_application(uow: AbstractUnitOfWork, actor: Member, a: ApprovalArgs) -> Reply:
    """Complete a pending user's application (bug fixed: tests ``status``, not ``type``).

    A pending user gets ``user_name``, ``subject``, ``school_id``=3, ``limit``=1 and ``status``=1 as
    upstream; ``type`` is unchanged. An already approved user gets an "already approved" no-op.
    """
    _in_range(a.view_problem, SUBJECTS, "ViewProblem")
    if actor["status"] != 0:
        return "Your application is already approved; nothing was changed.", None
    uow.members.update(actor, {"user_name": a.name, "subject": a.view_problem,
                               "school_id": APPROVAL_SCHOOL_ID, "limit": APPROVAL_LIMIT, "status": 1})
    return "Your application is approved.", None


def make_arbiter(uow: AbstractUnitOfWork, actor: Member, a: NoArgs) -> Reply:
    """Make the acting user an arbiter (type 2, no team leader); a team leader must have finished marking."""
    _require_marking_done(uow, actor, "become an arbiter")
    done = uow.members.update(actor, {"type": 2, "p_id": 0})
    return ("You are now an arbiter." if done else "You already are an arbiter."), None


def make_team_leader(uow: AbstractUnitOfWork, actor: Member, a: NoArgs) -> Reply:
    """Make the acting user a team leader (type 1, no team leader of their own). No precondition."""
    done = uow.members.update(actor, {"type": 1, "p_id": 0})
    return ("You are now a team leader." if done else "You already are a team leader."), None


def make_vice_leader(uow: AbstractUnitOfWork, actor: Member, a: TeamLeaderArgs) -> Reply:
    """Make the acting user vice team leader of the named (approved, unique) team leader.

    The target is checked first (no such user / several / oneself / not a team leader are invalid
    arguments), then a team leader acting must have finished marking.
    """
    leader = _one(uow.members.active_by_user_name(a.team_leader_name), f"approved user named {a.team_leader_name!r}")
    if leader["id"] == actor["id"]:
        raise InvalidArgument("You cannot become vice team leader of yourself.")
    if leader["type"] != 1:
        raise InvalidArgument(f"{a.team_leader_name} is not a team leader.")
    _require_marking_done(uow, actor, "become a vice team leader")
    done = uow.members.update(actor, {"type": 3, "p_id": leader["id"]})
    msg = "You are now vice team leader of" if done else "You already are vice team leader of"
    return f"{msg} {a.team_leader_name}.", {"team_leader_id": leader["id"]}


def change_upload_limit(uow: AbstractUnitOfWork, actor: Member, a: LimitArgs) -> Reply:
    """Set the acting user's upload limit (0-200)."""
    _in_range(a.limit, LIMITS, "Limit")
    done = uow.members.update(actor, {"limit": a.limit})
    return (f"Your upload limit is now {a.limit}." if done else f"Your upload limit already is {a.limit}."), None


def change_school(uow: AbstractUnitOfWork, actor: Member, a: SchoolArgs) -> Reply:
    """Move the acting user to the school with this exact (unique) name."""
    school = _one(uow.schools.by_name(a.school_name), f"school named {a.school_name!r}")
    done = uow.members.update(actor, {"school_id": school["id"]})
    msg = "Your school is now" if done else "Your school already is"
    return f"{msg} {a.school_name}.", {"school_id": school["id"]}


def add_school(uow: AbstractUnitOfWork, actor: Member, a: NewSchoolArgs) -> Reply:
    """Admin: add a school to an area (exact names). An existing school in that area is a no-op that
    returns its id; the same name in another area is refused (school names are unique)."""
    area = _one(uow.areas.by_name(a.area_name), f"area named {a.area_name!r}")
    existing = uow.schools.by_name(a.school_name)
    if existing:
        if existing[0]["area"] != area["id"]:
            raise InvalidArgument(f"A school named {a.school_name!r} already exists in another area.")
        return f"{a.school_name} already exists in {a.area_name}.", {"school_id": existing[0]["id"]}
    row = uow.schools.add(area["id"], a.school_name)
    return f"Added {a.school_name} to {a.area_name}.", {"school_id": row["id"]}


def teacher_info_by_name(uow: AbstractUnitOfWork, actor: Member, a: TeacherArgs) -> Reply:
    """Admin: approved users with this exact real name (an empty list means no such user)."""
    rows = uow.members.info(user_name=a.teacher_name)
    return (f"{len(rows)} user(s) named {a.teacher_name}." if rows else f"No user named {a.teacher_name}."), rows


def teacher_info_by_school(uow: AbstractUnitOfWork, actor: Member, a: SchoolArgs) -> Reply:
    """Admin: approved users of the school with this exact name (unknown school: empty list)."""
    schools = uow.schools.by_name(a.school_name)
    if not schools:
        return f"No school named {a.school_name}.", []
    rows = [r for s in schools for r in uow.members.info(school_id=s["id"])]
    return f"{len(rows)} user(s) at {a.school_name}.", rows
