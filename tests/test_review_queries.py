"""Pure checks from the adversarial query review (requests built, nothing sent)."""

from __future__ import annotations

import pytest

import singletable as st


def _tree() -> tuple[type[st.Entity], st.Collection]:
    table = st.Table("review")

    class Node(st.Entity, table=table, pk="D#{account}", sk="N#{kind}#{name}"):
        account: str
        kind: str
        name: str

    class Leaf(st.Entity, table=table, pk="D#{account}", sk="N#{kind}#{name}"):
        account: str
        kind: str
        name: str
        size: int = 0

    return Node, st.Collection("tree", Node, Leaf)


def test_collection_sort_key_fields_become_the_key_condition() -> None:
    _, tree = _tree()
    eq = tree.query(account="a", kind="k", name="x y").params()
    assert eq["KeyConditionExpression"] == "#n0 = :v0 AND #n1 = :v1"
    assert eq["ExpressionAttributeValues"][":v1"] == {"S": "N#k#x%20y"}
    prefix = tree.query(account="a", kind="k#1").params()
    assert prefix["KeyConditionExpression"] == "#n0 = :v0 AND begins_with (#n1, :v1)"
    assert prefix["ExpressionAttributeValues"][":v1"] == {"S": "N#k%231#"}


def test_collection_sort_key_fields_out_of_order_are_refused() -> None:
    _, tree = _tree()
    with pytest.raises(st.QueryError, match=r"'name' was given without 'kind'"):
        tree.query(account="a", name="x")
