"""The planner on native GSIs: added over stored attributes, dropped, rebuilt, moved to."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import singletable as st
from singletable.tooling.migrations.planner import ChangeClass, MigrationPlan, plan_changes
from singletable.tooling.migrations.snapshot import load_snapshot, snapshot_json

NATIVE = st.NativeGSI("ByArea", pk=["tenant", "region"], sk=["day"])
TEMPLATE = st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")


def reading(
    indexes: list[st.GSI | st.NativeGSI],
    *,
    day: Any = int,
    region: bool = True,
    template_keys: bool = False,
) -> st.Table:
    """A table of readings: tenant (required), region (optional), day; the given indexes."""
    table = st.Table("app", indexes=indexes)
    annotations: dict[str, Any] = {"rid": str, "tenant": str, "day": day}
    namespace: dict[str, Any] = {"__annotations__": annotations}
    if region:
        annotations["region"] = str | None
        namespace["region"] = None
    keys = {"GSI1": st.IndexKeys(pk="T#{tenant}#R#{region}", sk="{day}")} if template_keys else {}
    type("Reading", (st.Entity,), namespace, table=table, pk="R#{rid}", sk="R", indexes=keys)
    return table


def plan(before: st.Table, after: st.Table) -> MigrationPlan:
    return plan_changes(after, load_snapshot(snapshot_json(before)))


def test_native_gsi_over_stored_attributes_is_an_online_add_without_rewrite() -> None:
    result = plan(reading([]), reading([NATIVE]))
    [change] = result.changes
    assert change.kind is ChangeClass.ONLINE_INDEX
    assert change.action == {"op": "create_gsi", "index": "ByArea"}
    assert result.rewrites() == []
    assert "stored items already carry day, region, tenant" in change.reason
    assert "no item is rewritten" in change.reason
    # The optional part keeps some stored items out: the plan says which.
    assert "Reading@1 items whose region is None: not in it (sparse)" in change.reason
    assert "Reading@1 items whose tenant is empty: skipped (a key is never empty)" in change.reason


def test_native_gsi_every_stored_item_in_it_says_so() -> None:
    index = st.NativeGSI("ByDay", pk=["day"])
    [change] = plan(reading([]), reading([index])).changes
    assert change.kind is ChangeClass.ONLINE_INDEX
    assert "Every stored item of the entities that feed it is in it" in change.reason


def test_native_gsi_over_attributes_nobody_stores_is_safe() -> None:
    index = st.NativeGSI("ByOther", pk=[st.KeyPart("other", "S")])
    [change] = plan(reading([]), reading([index])).changes
    assert change.kind is ChangeClass.SAFE
    assert change.action == {"op": "create_gsi", "index": "ByOther"}


def test_a_part_stored_in_another_form_is_a_rewrite_and_the_note_says_why() -> None:
    # day was stored as an int; the new model reads it as Decimal: the same N attribute, but
    # another codec, so the index holds the stored form until items are rewritten.
    result = plan(reading([]), reading([NATIVE], day=Decimal))
    create = next(c for c in result.changes if c.subject == "GSI ByArea added")
    assert "Reading@1 items store day (" in create.reason
    assert "holds and orders the stored form" in create.reason
    key = next(c for c in result.changes if c.subject.endswith("ByArea key"))
    assert key.kind is ChangeClass.ITEM_REWRITE
    assert "native GSI ByArea will hold stored items by the values as stored" in key.reason
    assert result.rewrites() == [("app", "Reading@1", "Reading@1")]


def test_a_part_of_another_type_is_refused_until_transformed() -> None:
    # day stored as text, now a number: stored values do not convert; the backfill skips them.
    result = plan(reading([], day=str), reading([NATIVE]))
    assert result.worst is ChangeClass.BREAKING_READS
    create = next(c for c in result.changes if c.subject == "GSI ByArea added")
    assert "store day as S, the index key is N: skipped until rewritten" in create.reason
    assert result.transforms_needed("app", "Reading@1", "Reading@1")


def test_changing_a_part_type_of_a_live_native_index_is_a_rewrite() -> None:
    result = plan(reading([NATIVE]), reading([NATIVE], day=Decimal))
    key = next(c for c in result.changes if c.subject.endswith("ByArea key"))
    assert key.kind is ChangeClass.ITEM_REWRITE
    assert "native GSI ByArea holds stored items" in key.reason


def test_removing_a_native_gsi_drops_it() -> None:
    [change] = plan(reading([NATIVE]), reading([])).changes
    assert change.kind is ChangeClass.ONLINE_INDEX
    assert change.action == {"op": "delete_gsi", "index": "ByArea"}


def test_changing_the_parts_rebuilds_the_index() -> None:
    other = st.NativeGSI("ByArea", pk=["tenant"], sk=["region", "day"])
    [change] = plan(reading([NATIVE]), reading([other])).changes
    assert change.kind is ChangeClass.ONLINE_INDEX
    assert change.subject == "GSI ByArea key schema changed"
    assert change.action == {"op": "recreate_gsi", "index": "ByArea"}
    assert "region is None: not in it (sparse)" in change.reason


def test_a_removed_part_field_leaves_stored_items_in_the_index() -> None:
    # The new Reading has no region field, so it does not feed ByArea; stored items still
    # carry region, and DynamoDB keeps them in the index until a rewrite drops it.
    table = st.Table("app", indexes=[NATIVE, st.NativeGSI("ByTenant", pk=["tenant"])])

    class Reading(st.Entity, table=table, pk="R#{rid}", sk="R"):
        rid: str
        tenant: str
        day: int

    result = plan(reading([NATIVE]), table)
    stranded = next(c for c in result.changes if c.subject.endswith("ByArea key"))
    assert stranded.kind is ChangeClass.ITEM_REWRITE
    assert "the new model has no field region and does not feed it" in stranded.reason
    assert result.rewrites() == [("app", "Reading@1", "Reading@1")]


def test_template_to_native_under_a_new_name_adds_first_and_advises_expand_contract() -> None:
    before = reading([TEMPLATE], template_keys=True)
    result = plan(before, reading([NATIVE]))
    create, delete = result.changes
    assert create.action == {"op": "create_gsi", "index": "ByArea"}
    assert delete.action == {"op": "delete_gsi", "index": "GSI1"}
    assert "deploy the addition first, move every reader" in delete.reason
    assert result.rewrites() == []  # the template key attributes are left behind, unread
    # The expand step alone: both indexes, nothing dropped, nothing rewritten.
    expand = plan(before, reading([TEMPLATE, NATIVE], template_keys=True))
    assert [c.action for c in expand.changes] == [{"op": "create_gsi", "index": "ByArea"}]


def test_template_to_native_under_the_same_name_is_a_rebuild_with_advice() -> None:
    before = reading([TEMPLATE], template_keys=True)
    native = st.NativeGSI("GSI1", pk=["tenant", "region"], sk=["day"])
    [change] = plan(before, reading([native])).changes
    assert change.action == {"op": "recreate_gsi", "index": "GSI1"}
    assert "moves from template to native keys under the same name" in change.reason
