"""The planner on native GSIs: added over stored attributes, dropped, rebuilt, moved to."""

from __future__ import annotations

import io
from decimal import Decimal
from typing import Any

import singletable as st
from singletable.model.plan import entity_plans
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
    change, empty = result.changes
    assert result.worst is ChangeClass.ONLINE_INDEX
    assert change.kind is ChangeClass.ONLINE_INDEX
    assert change.action == {"op": "create_gsi", "index": "ByArea"}
    assert result.rewrites() == []
    assert "stored items already carry day, region, tenant" in change.reason
    assert "no item is rewritten" in change.reason
    # The optional part keeps some stored items out: the plan says which.
    assert "Reading@1 items whose region is None: not in it (sparse)" in change.reason
    assert "Reading@1 items whose tenant is empty: skipped (a key is never empty)" in change.reason
    # Stored empty strings cannot be written into the new key: a warning (the snapshot
    # cannot say whether any are stored), not a rewrite of every item.
    assert (empty.kind, empty.action, empty.subject) == (
        ChangeClass.SAFE,
        None,
        "entity Reading@1, ByArea key, empty values",
    )
    assert empty.needs_transform is None  # migrate would refuse to run at all
    assert empty.reason.startswith("stored items whose tenant, region is empty")


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


def test_a_live_native_index_warns_of_empty_values_no_more() -> None:
    # The old model already keyed tenant and region natively: it never stored them empty.
    assert plan(reading([NATIVE]), reading([NATIVE])).changes == ()


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


def test_leftover_part_attributes_are_dropped_by_the_rewrite() -> None:
    # On the embedded backend: the stranded item is in the index until migrate rewrites it.
    def model(region: bool) -> tuple[st.Table, Any]:
        index = st.NativeGSI("ByArea", pk=["tenant", st.KeyPart("region", "S")])
        table = reading([index], region=region)
        return table, entity_plans(table)[0].model

    old_table, old = model(region=True)
    new_table, _ = model(region=False)
    with st.embedded() as db:
        db.create_table(old_table)
        old.put(old(rid="r1", tenant="acme", region="eu", day=1)).run(db)
        snapshot = load_snapshot(snapshot_json(old_table))

        def in_index() -> int:
            return len(
                db.client.query(
                    TableName="app",
                    IndexName="ByArea",
                    KeyConditionExpression="tenant = :t AND #r = :r",
                    ExpressionAttributeNames={"#r": "region"},
                    ExpressionAttributeValues={":t": {"S": "acme"}, ":r": {"S": "eu"}},
                )["Items"]
            )

        assert in_index() == 1
        assert plan_changes(new_table, snapshot).rewrites() == [("app", "Reading@1", "Reading@1")]
        report = st.migrate(db, new_table, snapshot, segments=1, out=io.StringIO())
        assert report.rewrites["app/Reading@1->Reading@1"].rewritten == 1
        assert in_index() == 0


def test_template_to_native_under_a_new_name_adds_first_and_advises_expand_contract() -> None:
    before = reading([TEMPLATE], template_keys=True)
    result = plan(before, reading([NATIVE]))
    create, delete = (c for c in result.changes if c.action is not None)
    assert create.action == {"op": "create_gsi", "index": "ByArea"}
    assert delete.action == {"op": "delete_gsi", "index": "GSI1"}
    assert "deploy the addition first, move every reader" in delete.reason
    assert result.rewrites() == []  # the template key attributes are left behind, unread
    # The expand step alone: both indexes, nothing dropped, nothing rewritten.
    expand = plan(before, reading([TEMPLATE, NATIVE], template_keys=True))
    actions = [c.action for c in expand.changes if c.action is not None]
    assert actions == [{"op": "create_gsi", "index": "ByArea"}]


def test_template_to_native_under_the_same_name_is_a_rebuild_with_advice() -> None:
    before = reading([TEMPLATE], template_keys=True)
    native = st.NativeGSI("GSI1", pk=["tenant", "region"], sk=["day"])
    [change] = [c for c in plan(before, reading([native])).changes if c.action is not None]
    assert change.action == {"op": "recreate_gsi", "index": "GSI1"}
    assert "moves from template to native keys under the same name" in change.reason


def test_empty_values_are_noted_for_an_entity_that_does_not_feed_the_index() -> None:
    # Found by the generative test (seed 20): a is removed, so the entity does not feed
    # N2, yet the new model refuses to write an empty b, a part attribute of N2.
    def model(fields: tuple[str, ...], native: bool) -> st.Table:
        indexes = [st.NativeGSI("N2", pk=[st.KeyPart("a", "S")], sk=["b"])] if native else []
        table = st.Table("app", indexes=indexes)
        annotations: dict[str, Any] = {"id": str, **dict.fromkeys(fields, str)}
        type(
            "Item", (st.Entity,), {"__annotations__": annotations}, table=table, pk="E#{id}", sk="S"
        )
        return table

    result = plan(model(("a", "b", "c"), native=False), model(("b", "c"), native=True))
    empty = next(c for c in result.changes if c.subject.endswith("N2 key, empty values"))
    assert empty.reason.startswith("stored items whose b is empty")
    stranded = next(c for c in result.changes if c.subject.endswith("N2 key"))
    assert stranded.kind is ChangeClass.ITEM_REWRITE  # a and b keep the items in N2
