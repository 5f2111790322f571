"""Sibling sort key templates on a backend: ``count()`` == ``len(all())`` == Python's selection.

Issue 16, defect 2. Generated entities ``A``/``B`` share a partition and a sort key head
(``"K#{n0}#A"`` / ``"K#{n0}#B"``, ...). For random items of both and a random query of A
(equality prefix, then maybe a range), the backend must count and return exactly the A
items a Python filter selects, and a KEYS_ONLY index must refuse or return the same.

Each example uses a fresh `Table` object (its own entity registry) over one physical
table, and its own partition.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import singletable as st
from tests.integration._executors import connect
from tests.strategies import (
    SiblingPair,
    build_simple_entity,
    sibling_pairs,
    sibling_queries,
    simple_entity_values,
)

_partitions = itertools.count()


def _table(name: str) -> st.Table:
    keys_only = st.Projection.keys_only()
    return st.Table(name, indexes=[st.GSI("ByG", pk="GPK", sk="GSK", projection=keys_only)])


@pytest.fixture
def db(dynamodb_client: Any, table_name: str) -> st.Connection:
    connection = connect(dynamodb_client)
    connection.create_table(_table(table_name))
    return connection


def _with_index(spec: Any) -> Any:
    # The same templates on the KEYS_ONLY index (partition "G#{p}").
    from dataclasses import replace

    return replace(spec, gsi=("G#{p}", spec.sk))


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(hs.data())
def test_count_all_and_python_agree_for_sibling_templates(
    db: st.Connection, table_name: str, data: hs.DataObject
) -> None:
    pair: SiblingPair = data.draw(sibling_pairs())
    table = _table(table_name)
    a_spec, b_spec = _with_index(pair.a), _with_index(pair.b)
    # build_simple_entity names the index GSI1; this table's KEYS_ONLY index is "G".
    A = build_simple_entity(a_spec, table, index_name="ByG")
    B = build_simple_entity(b_spec, table, index_name="ByG")
    partition = f"p{next(_partitions)}"
    a_items = {}
    for values in data.draw(hs.lists(simple_entity_values(pair.a), min_size=1, max_size=4)):
        obj = A(**{**values, "p": partition})
        a_items[A.plan().primary.sk.format_object(obj)] = obj
    b_items = {}
    for values in data.draw(hs.lists(simple_entity_values(pair.b), min_size=1, max_size=4)):
        obj = B(**{**values, "p": partition})
        b_items[B.plan().primary.sk.format_object(obj)] = obj
    st.BatchWrite([*a_items.values(), *b_items.values()]).run(db)

    some_a = next(iter(a_items.values())).model_dump()
    query, selects = data.draw(sibling_queries(pair, some_a, A))
    expected = sorted(
        (o for o in a_items.values() if selects(o.model_dump())),
        key=lambda o: A.plan().primary.sk.format_object(o),
    )
    got = query.all(db)
    assert all(isinstance(o, A) for o in got)
    assert sorted(got, key=lambda o: A.plan().primary.sk.format_object(o)) == expected
    assert query.count(db) == len(got)

    # The KEYS_ONLY index holds the same keys: refuse (no type to filter on), or agree.
    on_index = query_on_index(A, query, partition)
    if on_index._needs_type_filter():
        with pytest.raises(st.QueryError, match=r"KEYS_ONLY and other entity types"):
            on_index.all(db)
    else:
        rows = on_index.all(db)
        assert sorted(rows, key=lambda o: A.plan().primary.sk.format_object(o)) == expected
        assert on_index.count(db) == len(rows)


def query_on_index(A: Any, query: Any, partition: str) -> Any:
    """The same key condition as ``query``, on index ByG (whose templates are the table's)."""
    sk_values = {f: v for f, v in query._values.items() if f != "p"}
    on_index = A.query(index="ByG", p=partition, **sk_values)
    if query._range is not None:
        op, args = query._range
        name, *bounds = args
        value = tuple(bounds) if op == "between" else bounds[0]
        on_index = getattr(on_index, op)(**{name: value})
    return on_index
