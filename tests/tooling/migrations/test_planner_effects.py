"""The planner judged by stored items: the cases of issue 10, each a before/after model pair."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import singletable as st
from singletable.tooling.migrations.planner import ChangeClass, MigrationPlan, plan_changes
from singletable.tooling.migrations.snapshot import load_snapshot, snapshot_json

REWRITE = ChangeClass.ITEM_REWRITE


def order_model(
    *,
    status: Any = (str | None, None),
    note: Any = None,
    note_index: bool = False,
    ts_precision: str = "us",
    ttl_attribute: str | None = None,
    ttl_field: bool = False,
    num_type: type = int,
) -> st.Table:
    """A table with an Order entity whose GSI1 is keyed on its status."""
    indexes: list[Any] = [st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")]
    if note_index:
        indexes.append(st.GSI("GSI2", pk="GSI2PK", sk="GSI2SK"))
    table = st.Table("app", indexes=tuple(indexes), ttl_attribute=ttl_attribute)
    annotations: dict[str, Any] = {
        "order_id": str,
        "num": num_type,
        "ts": Annotated[datetime, st.KeyFormat(precision=ts_precision)],  # type: ignore[arg-type]
        "status": status[0],
    }
    namespace: dict[str, Any] = {"__annotations__": annotations, "status": status[1]}
    keys = {"GSI1": st.IndexKeys(pk="STATUS#{status}", sk="{ts}")}
    if note is not None:
        annotations["note"] = note[0]
        namespace["note"] = note[1]
    if note_index:
        keys["GSI2"] = st.IndexKeys(pk="NOTE#{note}", sk="{ts}")
    options: dict[str, Any] = {}
    if ttl_field:
        annotations["expires_at"] = datetime | None
        namespace["expires_at"] = None
        options["ttl"] = "expires_at"
    type(
        "Order",
        (st.Entity,),
        namespace,
        table=table,
        pk="ORDER#{order_id}",
        sk="N#{num}#{ts}",
        indexes=keys,
        **options,
    )
    return table


def plan(before: st.Table, after: st.Table) -> MigrationPlan:
    return plan_changes(after, load_snapshot(snapshot_json(before)))


def test_default_change_feeding_an_index_key_is_not_no_changes() -> None:
    # Issue 10: items stored with status None are outside GSI1; under the new default
    # they read status="new" and belong in it, under STATUS#new.
    result = plan(order_model(), order_model(status=(str | None, "new")))
    assert result.worst is REWRITE, result.to_text()
    gsi = [c for c in result.changes if c.subject.endswith("GSI1 key")]
    assert len(gsi) == 1
    assert "missing from the index" in gsi[0].reason
    assert "'new'" in gsi[0].reason
    assert result.rewrites() == [("app", "Order@1", "Order@1")]
    assert "No changes" not in result.to_text()


def test_new_index_on_a_new_field_with_a_default_needs_a_rewrite() -> None:
    result = plan(order_model(), order_model(note=(str | None, "n/a"), note_index=True))
    keyed = [c for c in result.changes if "GSI2 key" in c.subject]
    assert keyed, result.to_text()
    assert all(c.kind is REWRITE for c in keyed), result.to_text()
    assert "note is new" in keyed[0].reason


def test_new_index_on_a_new_field_defaulting_to_none_is_safe() -> None:
    result = plan(order_model(), order_model(note=(str | None, None), note_index=True))
    assert result.worst is ChangeClass.SAFE, result.to_text()
    assert any(c.subject == "GSI GSI2 added" for c in result.changes)


def test_optional_to_required_with_default_is_a_rewrite_with_no_safe_key_line() -> None:
    result = plan(order_model(), order_model(status=(str, "new")))
    assert result.worst is REWRITE, result.to_text()
    assert "stored keys are unchanged" not in result.to_text()
    assert any(c.kind is REWRITE and "GSI1 key" in c.subject for c in result.changes)


def test_default_change_without_index_still_changes_stored_items() -> None:
    # A plain attribute: reads give the new default, but the stored item lacks it, so
    # filters and conditions do not see it: not "safe".
    result = plan(order_model(note=(str | None, None)), order_model(note=(str | None, "x")))
    attribute = [c for c in result.changes if c.subject.endswith("attribute note")]
    assert [c.kind for c in attribute] == [REWRITE], result.to_text()


def test_narrowed_precision_is_flagged_as_needing_a_transform() -> None:
    result = plan(order_model(), order_model(ts_precision="ms"))
    assert result.worst is REWRITE, result.to_text()
    flagged = [c for c in result.changes if c.needs_transform]
    assert flagged, result.to_text()
    assert all("precision 'us' -> 'ms'" in c.needs_transform for c in flagged)  # type: ignore[operator]
    assert result.transforms_needed("app", "Order@1", "Order@1")
    assert result.to_dict()["changes"][0]["needs_transform"] is not None


def test_widened_precision_is_mechanical() -> None:
    result = plan(order_model(ts_precision="ms"), order_model(ts_precision="us"))
    assert result.worst is REWRITE, result.to_text()
    assert all(c.needs_transform is None for c in result.changes)


def test_key_field_type_int_to_str_needs_a_transform() -> None:
    result = plan(order_model(), order_model(num_type=str))
    assert result.worst is ChangeClass.BREAKING_READS, result.to_text()
    assert result.transforms_needed("app", "Order@1", "Order@1"), result.to_text()


def test_ttl_attribute_switch_is_described_for_the_runner() -> None:
    before = order_model(ttl_attribute="expires", ttl_field=True)
    after = order_model(ttl_attribute="ttl", ttl_field=True)
    result = plan(before, after)
    switch = [c for c in result.changes if c.subject == "setting ttl_attribute"]
    assert len(switch) == 1, result.to_text()
    assert switch[0].kind is REWRITE
    assert switch[0].action == {"op": "switch_ttl", "old": "expires", "new": "ttl"}
    assert "one TTL change per table per hour" in switch[0].reason
    entity = [c for c in result.changes if c.subject.endswith(", ttl")]
    assert [c.kind for c in entity] == [REWRITE]
    assert entity[0].action == {"op": "rewrite", "old": "Order@1", "new": "Order@1"}


def test_ttl_switch_without_items_that_expire_is_safe_but_still_acted_on() -> None:
    result = plan(order_model(ttl_attribute="expires"), order_model(ttl_attribute="ttl"))
    assert result.worst is ChangeClass.SAFE, result.to_text()
    assert result.changes[0].action == {"op": "switch_ttl", "old": "expires", "new": "ttl"}


def _counter_model(*, gsi_sk: str | None, width_in_table_key: bool = False) -> st.Table:
    """A Counter with an unkeyed int ``n`` (fixed width 3 in a key), maybe a GSI on it."""
    table = st.Table("app", indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])
    annotations: dict[str, Any] = {
        "cid": str,
        "n": Annotated[int, st.KeyFormat(width=3)],
        "seen": datetime,
    }
    options: dict[str, Any] = {}
    if gsi_sk is not None:
        options["indexes"] = {"GSI1": st.IndexKeys(pk="ALL", sk=gsi_sk)}
    sk = "N#{n}" if width_in_table_key else "C"
    type(
        "Counter",
        (st.Entity,),
        {"__annotations__": annotations},
        table=table,
        pk="C#{cid}",
        sk=sk,
        **options,
    )
    return table


def test_a_new_index_keying_an_int_at_a_fixed_width_needs_a_transform() -> None:
    # Stored as a plain attribute, n holds any int (-12 among them); the new index's key
    # stores 3 digits, 0..999: the rewrite cannot write such items mechanically.
    result = plan(_counter_model(gsi_sk=None), _counter_model(gsi_sk="{n}"))
    flagged = [c for c in result.changes if c.needs_transform]
    assert flagged, result.to_text()
    assert "int -> fixed width 3" in str(flagged[0].needs_transform)


def test_a_new_index_keying_a_field_the_table_key_already_fixes_is_mechanical() -> None:
    # The table key, written on every item, already refused values outside 0..999.
    before = _counter_model(gsi_sk=None, width_in_table_key=True)
    result = plan(before, _counter_model(gsi_sk="{n}", width_in_table_key=True))
    assert result.worst is REWRITE, result.to_text()
    assert all(c.needs_transform is None for c in result.changes), result.to_text()


def test_a_new_index_keying_a_datetime_coarser_than_stored_needs_a_transform() -> None:
    result = plan(_counter_model(gsi_sk=None), _counter_model(gsi_sk="{seen}"))
    assert all(c.needs_transform is None for c in result.changes), result.to_text()
    table = st.Table("app", indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])

    class Counter(
        st.Entity,
        table=table,
        pk="C#{cid}",
        sk="C",
        indexes={"GSI1": st.IndexKeys(pk="ALL", sk="{seen}")},
    ):
        cid: str
        n: Annotated[int, st.KeyFormat(width=3)]
        seen: Annotated[datetime, st.KeyFormat(precision="s")]

    coarse = plan(_counter_model(gsi_sk=None), table)
    flagged = [c for c in coarse.changes if c.needs_transform]
    assert flagged, coarse.to_text()
    assert "precision 'us' -> 's'" in str(flagged[0].needs_transform)


def _defaulted_model(annotation: Any, default: Any) -> st.Table:
    table = st.Table("app")
    type(
        "Doc",
        (st.Entity,),
        {"__annotations__": {"doc_id": str, "state": annotation}, "state": default},
        table=table,
        pk="D#{doc_id}",
        sk="D",
    )
    return table


def test_an_optional_field_with_a_default_made_required_breaks_items_storing_none() -> None:
    # `state: str | None = "new"` stores a None as NULL (left out, it would read "new"):
    # under `state: str = "new"` those items do not validate.
    result = plan(_defaulted_model(str | None, "new"), _defaulted_model(str, "new"))
    assert result.worst is ChangeClass.BREAKING_READS, result.to_text()
    assert any(c.needs_transform for c in result.changes), result.to_text()


def test_an_optional_field_defaulting_to_none_made_required_with_a_default_is_mechanical() -> None:
    # With default None, a None is stored by leaving the attribute out: it reads "new".
    result = plan(_defaulted_model(str | None, None), _defaulted_model(str, "new"))
    assert result.worst is not ChangeClass.BREAKING_READS, result.to_text()
    assert not any(c.needs_transform for c in result.changes), result.to_text()
