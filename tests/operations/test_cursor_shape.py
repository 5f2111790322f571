"""A cursor's start key must have the full shape of the query's keys (issue 16, defect 5).

Attribute names AND types (per the table's and the index's key schema), and values
DynamoDB accepts as keys (a non-empty string within the key size limit, a valid number),
are checked before anything is sent: an edited unsigned cursor is refused with
`CursorError`, never sent to fail as a raw ``TypeError`` (moto) or ``ValidationException``.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

import singletable as st
from singletable.operations.cursor import make_cursor
from tests.strategies import (
    SimpleEntitySpec,
    build_simple_entity,
    simple_entity_specs,
    simple_entity_table,
    simple_entity_values,
)


def _cursor(query: Any, start_key: dict[str, Any]) -> str:
    return make_cursor(query._fingerprint(), start_key)


def test_a_start_key_whose_sort_key_changed_type_is_refused() -> None:
    table = st.Table("cursor-shape")

    class Thing(st.Entity, table=table, pk="P#{p}", sk="T#{n}"):
        p: str
        n: int

    query = Thing.query(p="a")
    good = {"PK": {"S": "P#a"}, "SK": {"S": "T#5"}}
    assert query.params(_cursor(query, good))["ExclusiveStartKey"] == good
    with pytest.raises(st.CursorError, match=r"'SK' must be of type S, got N"):
        query.params(_cursor(query, {**good, "SK": {"N": "1"}}))


def test_a_number_sort_key_must_hold_a_valid_number() -> None:
    table = st.Table("cursor-number", sk_type="N")

    class Reading(st.Entity, table=table, pk="D#{d}", sk="{seq}"):
        d: str
        seq: int

    query = Reading.query(d="x")
    good = {"PK": {"S": "D#x"}, "SK": {"N": "12"}}
    assert query.params(_cursor(query, good))["ExclusiveStartKey"] == good
    for bad in ({"S": "12"}, {"N": "twelve"}, {"N": "NaN"}, {"N": "1e999"}):
        with pytest.raises(st.CursorError, match=r"'SK'"):
            query.params(_cursor(query, {**good, "SK": bad}))


def _mutations(key: dict[str, Any]) -> list[dict[str, Any]]:
    """Start keys of the wrong shape derived from a valid one, one change each."""
    out: list[dict[str, Any]] = []
    for name, av in key.items():
        ((kind, value),) = av.items()
        other = "N" if kind == "S" else "S"
        out.append({**key, name: {other: "1"}})
        out.append({**key, name: {"B": b"x"}})
        out.append({k: v for k, v in key.items() if k != name})
        if kind == "S":
            out.append({**key, name: {"S": ""}})
            out.append({**key, name: {"S": value + "x" * 2100}})
    out.append({**key, "extra": {"S": "x"}})
    return out


@settings(max_examples=40, deadline=None)
@given(hs.data())
def test_only_start_keys_of_the_query_key_schema_are_sent(data: hs.DataObject) -> None:
    spec: SimpleEntitySpec = data.draw(simple_entity_specs())
    cls = build_simple_entity(spec, simple_entity_table(f"t-{spec.name}"))
    obj = cls(**data.draw(simple_entity_values(spec)))
    plan = cls.plan()
    for index in (None, *plan.indexes):
        key_plan = plan.key_plan(index)
        query = cls.query(index=index, **{f: getattr(obj, f) for f in key_plan.pk.fields})
        item = plan.to_item(obj)
        start = query._start_key(item)
        assert query.params(_cursor(query, start))["ExclusiveStartKey"] == start
        for bad in _mutations(start):
            with pytest.raises(st.CursorError):
                query.params(_cursor(query, bad))
