"""The migration planner: one before/after model pair per change class."""

from __future__ import annotations

import enum
import json
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, Literal

import pytest

import singletable as st
from singletable.tooling.migrations.planner import ChangeClass, MigrationPlan, plan_changes
from singletable.tooling.migrations.snapshot import load_snapshot, snapshot_json

SAFE = ChangeClass.SAFE
ONLINE = ChangeClass.ONLINE_INDEX
REWRITE = ChangeClass.ITEM_REWRITE
BREAKING = ChangeClass.BREAKING_READS
TABLE = ChangeClass.TABLE_MIGRATION


def model(
    *,
    sk: str = "EVT#{ts}#{seq}",
    width: int = 6,
    precision: Literal["s", "ms", "us"] | None = None,
    delimiter: str = "#",
    table_sk: str = "SK",
    indexes: tuple[Any, ...] = (),
    event_indexes: dict[str, Any] | None = None,
    name: str = "AuditEvent",
    version: int = 1,
    extra: str | None = None,
    seq_type: type = int,
    stream: Any = None,
    with_note: bool = False,
) -> st.Table:
    """A fresh table with an AuditEvent entity; every keyword is one possible change."""
    table = st.Table("app", sk=table_sk, delimiter=delimiter, indexes=indexes, stream=stream)
    ts_meta = [st.KeyFormat(precision=precision)] if precision else []
    seq_meta = [st.KeyFormat(width=width)] if seq_type is int else []
    ts_args: Any = (datetime, *ts_meta)
    seq_args: Any = (seq_type, *seq_meta)
    namespace: dict[str, Any] = {
        "__annotations__": {
            "actor_id": str,
            "ts": Annotated[ts_args] if ts_meta else datetime,
            "seq": Annotated[seq_args] if seq_meta else seq_type,
            "action": str,
            "status": str | None,
        },
        "status": None,
    }
    if with_note:
        namespace["__annotations__"]["note"] = str | None
        namespace["note"] = None
    if extra == "required":
        namespace["__annotations__"]["owner"] = str
    type(
        "AuditEvent",
        (st.Entity,),
        namespace,
        table=table,
        # Templates are split on the delimiter, so they follow it.
        pk="ACTOR#{actor_id}".replace("#", delimiter),
        sk=sk.replace("#", delimiter),
        name=name,
        version=version,
        indexes=event_indexes or {},
    )
    return table


def plan(before: st.Table, after: st.Table) -> MigrationPlan:
    return plan_changes(after, load_snapshot(snapshot_json(before)))


def only(result: MigrationPlan, kind: ChangeClass, subject_part: str, reason_part: str) -> None:
    """Exactly one change of ``kind`` naming the subject and the reason."""
    matches = [c for c in result.changes if c.kind is kind]
    assert len(matches) == 1, result.to_text()
    assert subject_part in matches[0].subject, result.to_text()
    assert reason_part in matches[0].reason, result.to_text()
    assert result.worst is kind
    assert result.exit_code == kind.exit_code


def test_identical_models_plan_nothing() -> None:
    result = plan(model(), model())
    assert result.changes == ()
    assert result.exit_code == 0
    assert "No changes" in result.to_text()


def test_exit_codes_are_distinct_and_documented() -> None:
    codes = {k: k.exit_code for k in ChangeClass}
    assert codes == {SAFE: 0, ONLINE: 3, REWRITE: 4, BREAKING: 5, TABLE: 6}


# -- safe -------------------------------------------------------------------------------


def test_new_entity_is_safe() -> None:
    after = model()

    class Actor(st.Entity, table=after, pk="ACTOR#{actor_id}", sk="PROFILE"):
        actor_id: str

    result = plan(model(), after)
    only(result, SAFE, "entity Actor@1", "new entity")


def test_new_optional_attribute_is_safe() -> None:
    result = plan(model(), model(with_note=True))
    only(result, SAFE, "attribute note", "new optional field")
    assert result.exit_code == 0


def test_new_gsi_on_fresh_attributes_is_safe_but_has_an_action() -> None:
    result = plan(model(), model(indexes=(st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK"),)))
    only(result, SAFE, "GSI GSI1 added", "nothing to backfill")
    assert result.changes[0].action == {"op": "create_gsi", "index": "GSI1"}


def test_table_setting_change_is_safe() -> None:
    result = plan(model(), model(stream="NEW_IMAGE"))
    only(result, SAFE, "setting stream", "'NEW_IMAGE'")


# -- online index change -----------------------------------------------------------------


def test_gsi_over_key_attributes_items_already_carry_backfills() -> None:
    # Renaming an index: the new GSI reads the GSI1PK/GSI1SK attributes stored items carry.
    keys = st.IndexKeys(pk="ACT#{action}", sk="{ts}")
    before = model(
        indexes=(st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK"),), event_indexes={"GSI1": keys}
    )
    after = model(
        indexes=(st.GSI("ByAction", pk="GSI1PK", sk="GSI1SK"),), event_indexes={"ByAction": keys}
    )
    result = plan(before, after)
    added = [c for c in result.changes if c.subject == "GSI ByAction added"]
    assert len(added) == 1
    assert added[0].kind is ONLINE
    assert "already carry GSI1PK, GSI1SK" in added[0].reason
    assert [c.subject for c in result.of(ONLINE)] == ["GSI ByAction added", "GSI GSI1 removed"]
    # The entity's stored keys are exactly what the new index reads: no rewrite.
    assert result.of(REWRITE) == []
    entity = [c for c in result.changes if "ByAction key" in c.subject]
    assert entity[0].kind is SAFE
    assert "without a rewrite" in entity[0].reason
    assert result.exit_code == 3


def test_removed_gsi_is_an_online_index_change() -> None:
    gsi = st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")
    result = plan(model(indexes=(gsi,)), model())
    only(result, ONLINE, "GSI GSI1 removed", "deletes the index")
    assert result.changes[0].action == {"op": "delete_gsi", "index": "GSI1"}


def test_projection_change_rebuilds_the_index() -> None:
    before = st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")
    after = st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK", projection=st.Projection.keys_only())
    result = plan(model(indexes=(before,)), model(indexes=(after,)))
    only(result, ONLINE, "GSI GSI1 projection changed", "cannot change in place")
    assert result.changes[0].action == {"op": "recreate_gsi", "index": "GSI1"}


# -- item rewrite ------------------------------------------------------------------------


def test_changed_sort_key_template_rewrites_items() -> None:
    result = plan(model(), model(sk="EVENT#{ts}#{seq}"))
    only(
        result,
        REWRITE,
        "entity AuditEvent@1, <table> key",
        "'EVT#{ts}#{seq}' -> 'EVENT#{ts}#{seq}'",
    )
    assert result.rewrites() == [("app", "AuditEvent@1", "AuditEvent@1")]


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"width": 8}, "field seq: width 6 -> 8"),
        ({"precision": "ms"}, "field ts: precision 'us' -> 'ms'"),
        ({"delimiter": "!"}, "delimiter '#' -> '!'"),
    ],
)
def test_codec_parameter_changes_rewrite_items(changes: dict[str, Any], reason: str) -> None:
    result = plan(model(), model(**changes))
    assert result.worst is REWRITE, result.to_text()
    keyed = [c for c in result.changes if "<table> key" in c.subject and reason in c.reason]
    assert keyed, result.to_text()


def test_entity_identifier_change_rewrites_items() -> None:
    result = plan(model(), model(version=2))
    only(result, REWRITE, "entity AuditEvent@1 -> AuditEvent@2", "stored identifier changes")
    assert result.rewrites() == [("app", "AuditEvent@1", "AuditEvent@2")]


def test_entity_starting_to_write_an_index_rewrites_items() -> None:
    gsi = st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")
    before = model(indexes=(gsi,))
    after = model(
        indexes=(gsi,), event_indexes={"GSI1": st.IndexKeys(pk="ACT#{action}", sk="{ts}")}
    )
    result = plan(before, after)
    assert result.worst is REWRITE, result.to_text()
    keyed = [c for c in result.changes if "GSI1 key" in c.subject]
    assert len(keyed) == 1, result.to_text()
    assert "GSI1PK, GSI1SK" in keyed[0].reason
    assert "missing from the index until rewritten" in keyed[0].reason


def test_sparse_index_on_a_new_optional_field_needs_no_rewrite() -> None:
    gsi = st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")
    before = model(indexes=(gsi,))
    after = model(
        indexes=(gsi,),
        with_note=True,
        event_indexes={"GSI1": st.IndexKeys(pk="NOTE#{note}", sk="{ts}")},
    )
    result = plan(before, after)
    keyed = [c for c in result.changes if "GSI1 key" in c.subject]
    assert [c.kind for c in keyed] == [SAFE], result.to_text()
    assert "no stored item belongs in GSI1" in keyed[0].reason
    assert all(c.kind is SAFE for c in result.changes)


# -- breaking for reads ------------------------------------------------------------------


def test_required_field_without_default_breaks_reads() -> None:
    result = plan(model(), model(extra="required"))
    only(result, BREAKING, "attribute owner", "new required field without a default")


def test_int_to_decimal_reads_every_value_and_rewrites_the_key() -> None:
    # Every stored int reads as a Decimal, but the key text of the Decimal codec differs.
    result = plan(model(), model(seq_type=Decimal))
    assert {c.kind for c in result.changes} == {REWRITE}, result.to_text()
    assert any(c.subject.endswith("<table> key") for c in result.changes)
    assert all(c.needs_transform is None for c in result.changes)


def test_changed_attribute_type_breaks_reads_and_needs_a_transform() -> None:
    result = plan(model(), model(seq_type=str))
    breaking = result.of(BREAKING)
    assert len(breaking) == 1, result.to_text()
    assert "attribute seq" in breaking[0].subject
    assert "stored type changes" in breaking[0].reason
    assert breaking[0].needs_transform is not None
    assert breaking[0].action == {"op": "rewrite", "old": "AuditEvent@1", "new": "AuditEvent@1"}
    assert result.transforms_needed("app", "AuditEvent@1", "AuditEvent@1")
    assert "cannot be done mechanically" in result.to_text()
    assert result.exit_code == 5


def test_removed_entity_breaks_reads() -> None:
    before = model()

    class Actor(st.Entity, table=before, pk="ACTOR#{actor_id}", sk="PROFILE"):
        actor_id: str

    only(plan(before, model()), BREAKING, "entity Actor@1", "no longer decode")


# -- table migration ---------------------------------------------------------------------


def test_table_sort_key_rename_needs_a_table_migration() -> None:
    result = plan(model(), model(table_sk="SK2"))
    assert result.worst is TABLE
    assert result.exit_code == 6
    table_changes = result.of(TABLE)
    assert [c.subject for c in table_changes] == ["table sk"]
    assert "SK (S) to SK2 (S)" in table_changes[0].reason


def test_adding_an_lsi_needs_a_table_migration() -> None:
    result = plan(model(), model(indexes=(st.LSI("LSI1", sk="LSI1SK"),)))
    only(result, TABLE, "LSI LSI1", "local secondary index added")


# -- output ------------------------------------------------------------------------------


def test_text_and_json_output_list_every_change() -> None:
    result = plan(model(), model(sk="EVENT#{ts}#{seq}", with_note=True))
    text = result.to_text()
    assert text.startswith("2 change(s); worst: item-rewrite (exit code 4)")
    assert "[safe] entity AuditEvent@1, attribute note" in text
    data = json.loads(result.to_json())
    assert data["exit_code"] == 4
    assert [c["class"] for c in data["changes"]] == ["item-rewrite", "safe"]
    assert data["changes"][0]["action"] == {
        "op": "rewrite",
        "old": "AuditEvent@1",
        "new": "AuditEvent@1",
    }


def enum_model(
    *,
    projection: tuple[str, ...] = ("b", "a"),
    entity_attribute: str = "_et",
    colors: tuple[str, ...] = ("red", "blue"),
    lsi: bool = False,
) -> st.Table:
    """A fresh table with one entity keyed (and indexed) on an enum and str fields."""
    color = enum.Enum("Color", {v.upper(): v for v in colors})  # type: ignore[misc]
    index: Any = (
        st.LSI("LSI1", sk="LSI1SK", projection=st.Projection.include(*projection))
        if lsi
        else st.GSI("GSI1", pk="GSI1PK", projection=st.Projection.include(*projection))
    )
    table = st.Table("app", entity_attribute=entity_attribute, indexes=(index,))
    keys = {"LSI1": st.IndexKeys(sk="{a}")} if lsi else {"GSI1": st.IndexKeys(pk="{a}")}
    namespace: dict[str, Any] = {"__annotations__": {"id": str, "color": color, "a": str, "b": str}}
    type("E", (st.Entity,), namespace, table=table, pk="E#{id}", sk="C#{color}", indexes=keys)
    return table


def test_include_projection_order_is_not_a_change() -> None:
    # DynamoDB keeps NonKeyAttributes as a set: listing them in another order must not
    # delete and rebuild the index.
    result = plan(enum_model(projection=("b", "a")), enum_model(projection=("a", "b")))
    assert result.changes == (), result.to_text()


def test_renamed_entity_attribute_rebuilds_an_include_gsi() -> None:
    # An INCLUDE index also projects the entity/version attributes (index_projection):
    # after a rename the live index lacks the new one, and entity queries on it find
    # nothing, unless the index is rebuilt.
    result = plan(enum_model(), enum_model(entity_attribute="_type"))
    gsi = [c for c in result.changes if c.subject.startswith("GSI GSI1")]
    assert len(gsi) == 1, result.to_text()
    assert gsi[0].kind is ChangeClass.ONLINE_INDEX
    assert gsi[0].action == {"op": "recreate_gsi", "index": "GSI1"}


def test_renamed_entity_attribute_changes_an_include_lsi() -> None:
    result = plan(enum_model(lsi=True), enum_model(lsi=True, entity_attribute="_type"))
    assert result.worst is ChangeClass.TABLE_MIGRATION, result.to_text()


def test_new_enum_member_in_a_key_is_safe() -> None:
    # Stored keys and values are all still valid: nothing to rewrite, nothing breaks.
    result = plan(enum_model(), enum_model(colors=("red", "blue", "green")))
    assert result.worst is ChangeClass.SAFE, result.to_text()
    assert result.rewrites() == []


def test_reordered_enum_members_are_safe() -> None:
    result = plan(enum_model(), enum_model(colors=("blue", "red")))
    assert result.worst is ChangeClass.SAFE, result.to_text()


def test_removed_enum_member_still_breaks_reads() -> None:
    result = plan(enum_model(), enum_model(colors=("red",)))
    assert result.worst is ChangeClass.BREAKING_READS, result.to_text()
    # Items holding the removed value do not decode: a rewrite needs a user transform.
    breaking = result.of(ChangeClass.BREAKING_READS)
    assert breaking[0].needs_transform is not None
    assert "'blue'" in breaking[0].needs_transform
    assert result.rewrites() == [("app", "E@1", "E@1")]


def test_changed_enum_value_still_breaks_reads() -> None:
    result = plan(enum_model(), enum_model(colors=("red", "navy")))
    assert result.worst is ChangeClass.BREAKING_READS, result.to_text()


class _Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (Literal["todo", "done"], str),  # issue 26: planned as a rewrite, listed twice
        (Literal["todo", "done"], Literal["todo", "done", "void"]),
        (Literal[1, 2], int),
        (_Priority, int),
        (list[Literal["todo", "done"]], list[str]),
        (Literal["todo", "done"] | None, str | None),
    ],
)
def test_widening_a_non_key_field_is_safe_and_listed_once(before: Any, after: Any) -> None:
    def tasks(annotation: Any) -> st.Table:
        table = st.Table("widen")

        class Task(st.Entity, table=table, pk="T#{tid}", sk="TASK"):
            tid: str
            state: annotation

        return table

    result = plan_changes(tasks(after), load_snapshot(snapshot_json(tasks(before))))
    assert result.worst is SAFE, result.to_text()
    assert [c.subject for c in result.changes] == ["entity Task@1, attribute state"]


def test_a_narrowing_still_plans_a_breaking_change() -> None:
    def tasks(annotation: Any) -> st.Table:
        table = st.Table("narrow")

        class Task(st.Entity, table=table, pk="T#{tid}", sk="TASK"):
            tid: str
            state: annotation

        return table

    result = plan_changes(tasks(Literal["todo"]), load_snapshot(snapshot_json(tasks(str))))
    assert result.worst is BREAKING, result.to_text()
    assert len(result.changes) == 1


@pytest.mark.parametrize(("values", "fits"), [((5, -12, 12345678), False), ((0, 5, 999), True)])
def test_a_literal_of_ints_moved_into_a_fixed_width_key_is_checked_value_by_value(
    values: tuple[int, ...], fits: bool
) -> None:
    # Found by the generative test (seed 1, 4,000 pairs): the values a Literal allows
    # were not checked against the width of the key it moved into, so a rewrite that
    # fails on -12 was planned as a mechanical item rewrite, with no transform asked for.
    def events(in_key: bool) -> st.Table:
        table = st.Table("literal-into-key")
        allowed: Any = Literal[values]
        if in_key:

            class Event(st.Entity, table=table, pk="E#{eid}", sk="S#{b}"):
                eid: str
                b: Annotated[int, st.KeyFormat(width=3)]

        else:

            class Event(st.Entity, table=table, pk="E#{eid}", sk="S"):  # type: ignore[no-redef]
                eid: str
                b: allowed

        return table

    result = plan_changes(events(True), load_snapshot(snapshot_json(events(False))))
    assert result.worst is ChangeClass.ITEM_REWRITE, result.to_text()
    needs = [c.needs_transform for c in result.changes if c.needs_transform]
    assert bool(needs) is not fits, result.to_text()


def test_widening_a_native_gsi_part_is_no_rewrite() -> None:
    # Found after merging the widening rule with native GSIs: the part's codec changed
    # (Literal -> str), so the index was said to hold the items out of order, though
    # every stored value is stored alike and the index orders the stored values.
    def tasks(annotation: Any) -> st.Table:
        table = st.Table("widen-native", indexes=[st.NativeGSI("ByState", pk=["state"])])

        class Task(st.Entity, table=table, pk="T#{tid}", sk="TASK"):
            tid: str
            state: annotation

        return table

    before, after = tasks(Literal["todo", "done"]), tasks(str)
    result = plan_changes(after, load_snapshot(snapshot_json(before)))
    assert result.worst is SAFE, result.to_text()
