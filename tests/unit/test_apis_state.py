"""``apis.cphos.state`` on the demo data in SQLite: the snapshot diff (update, insert, delete) and the typed
comparison the oracle tests and the evaluation both use."""

from __future__ import annotations

from apis.cphos import tables as t
from apis.cphos.loaders import seed_demo
from apis.cphos.state import diff_snapshots, effect_set, match_effect, parse_effect, snapshot
from chops.db import make_engine
from chops.domain.outcomes import Change


def test_diff_finds_updates_inserts_and_deletes_in_a_stable_order(sqlite_url):
    engine = make_engine(sqlite_url)
    seed_demo(engine)
    before = snapshot(engine)
    with engine.begin() as conn:
        conn.execute(t.member.update().where(t.member.c.nickname == "demo_leader").values(limit=40))
        new_id = conn.execute(t.school.insert().values(area=1, school_name="Harbor School")).inserted_primary_key[0]
        gone = conn.execute(t.admin.select()).first()
        conn.execute(t.admin.delete().where(t.admin.c.id == gone.id))
    changes = diff_snapshots(before, snapshot(engine))
    engine.dispose()
    assert [(c.table, c.field) for c in changes] == [("cmf_tp_admin", None), ("cmf_tp_member", "limit"),
                                                    ("cmf_tp_school", None)]
    assert changes[0].before == {"id": gone.id, "user_id": gone.user_id} and changes[0].after is None
    assert changes[1].after == 40 and changes[1].before != 40
    assert changes[2].key == {"id": new_id} and changes[2].after == {"id": new_id, "area": 1, "school_name": "Harbor School"}


def test_annotation_values_compare_by_column_type():
    # school_id is INT: the annotation's "3" and the dump's string "3" are the value 3.
    expected = parse_effect("cmf_tp_member[id=5].school_id=3")
    assert effect_set(expected) == effect_set([Change(table="cmf_tp_member", key={"id": "5"}, field="school_id",
                                                      before="7", after="3")])
    missing, unexpected = match_effect(expected, [Change(table="cmf_tp_member", key={"id": 5}, field="school_id",
                                                         before=7, after=4)])
    assert missing == [("update", "cmf_tp_member", (("id", 5),), "school_id", 3)]
    assert unexpected == [("update", "cmf_tp_member", (("id", 5),), "school_id", 4)]
