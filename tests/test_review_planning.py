"""Review of the planner, snapshot and CLI: classifications found too lenient or too harsh."""

from __future__ import annotations

import enum
import io
from pathlib import Path
from typing import Any

import pytest

import singletable as st
from singletable.cli import main
from singletable.tooling.planner import ChangeClass, MigrationPlan, plan_changes
from singletable.tooling.snapshot import load_snapshot, snapshot_json


def model(
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


def plan(before: st.Table, after: st.Table) -> MigrationPlan:
    return plan_changes(after, load_snapshot(snapshot_json(before)))


def test_include_projection_order_is_not_a_change() -> None:
    # DynamoDB keeps NonKeyAttributes as a set: listing them in another order must not
    # delete and rebuild the index.
    result = plan(model(projection=("b", "a")), model(projection=("a", "b")))
    assert result.changes == (), result.to_text()


def test_renamed_entity_attribute_rebuilds_an_include_gsi() -> None:
    # An INCLUDE index also projects the entity/version attributes (index_projection):
    # after a rename the live index lacks the new one, and entity queries on it find
    # nothing, unless the index is rebuilt.
    result = plan(model(), model(entity_attribute="_type"))
    gsi = [c for c in result.changes if c.subject.startswith("GSI GSI1")]
    assert len(gsi) == 1, result.to_text()
    assert gsi[0].kind is ChangeClass.ONLINE_INDEX
    assert gsi[0].action == {"op": "recreate_gsi", "index": "GSI1"}


def test_renamed_entity_attribute_changes_an_include_lsi() -> None:
    result = plan(model(lsi=True), model(lsi=True, entity_attribute="_type"))
    assert result.worst is ChangeClass.TABLE_MIGRATION, result.to_text()


def test_new_enum_member_in_a_key_is_safe() -> None:
    # Stored keys and values are all still valid: nothing to rewrite, nothing breaks.
    result = plan(model(), model(colors=("red", "blue", "green")))
    assert result.worst is ChangeClass.SAFE, result.to_text()
    assert result.rewrites() == []


def test_reordered_enum_members_are_safe() -> None:
    result = plan(model(), model(colors=("blue", "red")))
    assert result.worst is ChangeClass.SAFE, result.to_text()


def test_removed_enum_member_still_breaks_reads() -> None:
    result = plan(model(), model(colors=("red",)))
    assert result.worst is ChangeClass.BREAKING_READS, result.to_text()
    assert any(c.kind is ChangeClass.ITEM_REWRITE for c in result.changes)


def test_changed_enum_value_still_breaks_reads() -> None:
    result = plan(model(), model(colors=("red", "navy")))
    assert result.worst is ChangeClass.BREAKING_READS, result.to_text()


def test_snapshot_that_is_not_utf8_is_a_bad_snapshot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "binary.json"
    bad.write_bytes(b"\xff\xfe{\x00")
    code = main(["plan", "singletable.examples:demo", str(bad)], out=io.StringIO())
    assert code == 7  # ExitCode.BAD_SNAPSHOT
    err = capsys.readouterr().err
    assert "binary.json" in err
    assert "UTF-8" in err
