"""The registry: CPHOS names, argument aliases, descriptions everywhere, prompt lines, outcomes."""

from __future__ import annotations

import csv
import json

from apis.cphos.registry import OPERATIONS
from chops.domain.operations import operation_lines
from chops.domain.outcomes import Change, Outcome

CPHOS_ARG_NAMES = {"SubjectIndex", "Name", "ViewProblem", "TeamLeaderName", "Limit", "SchoolName", "AreaName",
                   "TeacherName"}


def test_operation_names_are_the_cphos_names(cphos_dir):
    names = [line.split(":", 1)[0].strip() for line in (cphos_dir / "operations.txt").read_text().splitlines()
             if line.strip()]
    assert len(names) == 10
    assert sorted(OPERATIONS) == sorted(names)


def test_every_field_has_a_description_and_a_cphos_alias():
    for op in OPERATIONS.values():
        assert op.description and "\n" not in op.description, op.name
        for name, field in op.args_model.model_fields.items():
            assert field.description, f"{op.name}.{name} has no description"
            assert field.alias in CPHOS_ARG_NAMES, f"{op.name}.{name} alias {field.alias}"


def test_gold_args_keys_fit_the_models(cphos_dir):
    with open(cphos_dir / "qa" / "system.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        model = OPERATIONS[row["gold_api"]].args_model
        aliases = {f.alias for f in model.model_fields.values()}
        assert set(json.loads(row["gold_args"])) == aliases, row["src_row"]


def test_flags():
    writes = {n for n, op in OPERATIONS.items() if op.writes}
    admin = {n for n, op in OPERATIONS.items() if op.admin_only}
    assert writes == set(OPERATIONS) - {"GetTeacherInfoByName", "GetTeacherInfoBySchoolName"}
    assert admin == {"AddNewSchoolByName", "GetTeacherInfoByName", "GetTeacherInfoBySchoolName"}


def test_json_schema_uses_cphos_names_and_forbids_extra_keys():
    schema = OPERATIONS["AddNewSchoolByName"].json_schema()
    assert set(schema["properties"]) == {"SchoolName", "AreaName"}
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["SchoolName", "AreaName"]
    # No numeric bounds in the schema: an out-of-range request must reach the API to be refused.
    assert "maximum" not in OPERATIONS["ChangeAllTypesMarkingSubject"].json_schema()["properties"]["SubjectIndex"]


def test_operation_lines():
    lines = operation_lines(OPERATIONS)
    assert len(lines) == 10
    assert "ChangeAllTypesMarkingSubject(SubjectIndex: int) — " in lines[0]
    assert any(line.startswith("MakeAllTypesToBeArbiter() — ") for line in lines)
    assert any(line.startswith("AddNewSchoolByName(SchoolName: str, AreaName: str) — ") for line in lines)


def test_outcome_codes_and_succeeded():
    assert [o.value for o in Outcome] == ["ok", "ok_noop", "refused_missing_args", "refused_invalid_arg",
                                          "refused_precondition", "refused_permission", "not_in_system",
                                          "refused_other_person"]
    assert {o for o in Outcome if o.succeeded} == {Outcome.OK, Outcome.OK_NOOP}


def test_change_effect_notation():
    upd = Change(table="cmf_tp_member", key={"id": 706}, field="subject", before=5, after=9)
    ins = Change(table="cmf_tp_school", key={"id": 313}, after={"id": 313, "area": 8, "school_name": "X"})
    assert upd.effect() == "cmf_tp_member[id=706].subject=9"
    assert ins.effect() == "cmf_tp_school+{id=313,area=8,school_name=X}"
