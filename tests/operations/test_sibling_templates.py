"""Sibling sort key templates: the type filter is decided on the range actually read.

Issue 16, defect 2: with ``A: sk="K#{n}#A"`` and ``B: sk="K#{n}#B"`` in one partition,
``A.query(p=...)`` reads ``begins_with(SK, "K#")``, which holds B's items too; the query
must filter by type (so ``count()`` counts A only), and a KEYS_ONLY index, which cannot
be filtered by type, must refuse. The backend half is
``tests/integration/test_sibling_templates.py``.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

import singletable as st
from singletable.keys.ranges import can_produce_key_in
from tests.strategies import (
    SiblingPair,
    build_simple_entity,
    sibling_pairs,
    sibling_queries,
    simple_entity_values,
)

TYPE_FILTER = "#n0 = :v0"  # the first placeholders of the filter are the type test


def _models(pair: SiblingPair | None = None) -> tuple[Any, Any]:
    table = st.Table("siblings")
    if pair is None:

        class A(st.Entity, table=table, pk="P#{p}", sk="K#{n}#A"):
            p: str
            n: int

        class B(st.Entity, table=table, pk="P#{p}", sk="K#{n}#B"):
            p: str
            n: int

        return A, B
    return build_simple_entity(pair.a, table), build_simple_entity(pair.b, table)


def _type_filtered(request: dict[str, Any]) -> bool:
    names = request.get("ExpressionAttributeNames", {})
    return "_et" in names.values() and "FilterExpression" in request


def test_the_quoted_siblings_are_filtered_by_type_wherever_both_are_read() -> None:
    A, _ = _models()
    for query in (A.query(p="x"), A.query(p="x").gt(n=1), A.query(p="x").lt(n=5)):
        assert _type_filtered(query.params()), query.params()
    # One exact key: B's keys never equal A's, so no filter is needed.
    assert not _type_filtered(A.query(p="x", n=3).params())


def test_templates_that_only_share_a_literal_prefix_need_no_filter() -> None:
    table = st.Table("prefixes")

    class Evt(st.Entity, table=table, pk="P#{p}", sk="EVT#{n}"):
        p: str
        n: int

    class EvtX(st.Entity, table=table, pk="P#{p}", sk="EVTX#{n}"):
        p: str
        n: int

    class Other(st.Entity, table=table, pk="Q#{p}", sk="EVT#{n}"):
        p: str
        n: int

    for query in (Evt.query(p="x"), Evt.query(p="x").ge(n=1), Evt.query(p="x").lt(n=9)):
        assert not _type_filtered(query.params())
    assert not _type_filtered(EvtX.query(p="x").between(n=(1, 5)).params())


def test_keys_only_index_refuses_when_siblings_share_the_range() -> None:
    table = st.Table(
        "siblings-keys-only",
        indexes=[st.GSI("G", pk="GPK", sk="GSK", projection=st.Projection.keys_only())],
    )

    class A(st.Entity, table=table, pk="P#{p}", sk="A", indexes={"G": ("G#{p}", "K#{n}#A")}):
        p: str
        n: int

    class B(st.Entity, table=table, pk="P#{p}", sk="B", indexes={"G": ("G#{p}", "K#{n}#B")}):
        p: str
        n: int

    with pytest.raises(st.QueryError, match=r"KEYS_ONLY and other entity types"):
        A.query(index="G", p="x").params()
    assert "FilterExpression" not in A.query(index="G", p="x", n=2).params()


def _selects(op: str | None, values: tuple[str, ...], key: str) -> bool:
    if op is None:
        return True
    first = values[0]
    return {
        "eq": lambda: key == first,
        "begins_with": lambda: key.startswith(first),
        "between": lambda: first <= key <= values[1],
        "lt": lambda: key < first,
        "le": lambda: key <= first,
        "gt": lambda: key > first,
        "ge": lambda: key >= first,
    }[op]()


@settings(max_examples=100, deadline=None)
@given(hs.data())
def test_a_sibling_key_inside_the_range_read_always_turns_the_filter_on(
    data: hs.DataObject,
) -> None:
    pair: SiblingPair = data.draw(sibling_pairs())
    A, B = _models(pair)
    a_values = data.draw(simple_entity_values(pair.a))
    query, _ = data.draw(sibling_queries(pair, a_values, A))
    condition = query._key_condition()
    op, values = (None, ()) if condition is None else (condition.op, condition.values)
    for _ in range(8):
        b_values = {**data.draw(simple_entity_values(pair.b)), "p": a_values["p"]}
        b_key = B.plan().primary.sk.format(b_values)
        if _selects(op, values, b_key):
            assert can_produce_key_in(B.plan().primary.sk, op, values)
            assert _type_filtered(query.params())
