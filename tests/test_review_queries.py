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


def _keys_only_models() -> tuple[type[st.Entity], type[st.Entity]]:
    table = st.Table(
        "review-keys-only",
        indexes=[st.GSI("ByOwner", pk="GSI1PK", sk="GSI1SK", projection=st.Projection.keys_only())],
    )

    class Doc(
        st.Entity,
        table=table,
        pk="DOC#{doc_id}",
        sk="META",
        indexes={"ByOwner": st.IndexKeys(pk="OWNER#{owner}", sk="{doc_id}")},
    ):
        doc_id: str
        owner: str

    class Sheet(
        st.Entity,
        table=table,
        pk="SHEET#{doc_id}",
        sk="META",
        indexes={"ByOwner": st.IndexKeys(pk="OWNER#{owner}", sk="{doc_id}")},
    ):
        doc_id: str
        owner: str

    return Doc, Sheet


def test_keys_only_index_shared_by_two_entities_is_refused_not_silently_empty() -> None:
    # Bug: the type filter on "_et" was sent to a KEYS_ONLY index, whose items have no
    # "_et": DynamoDB filtered out every item and the query returned [] without a word.
    Doc, _ = _keys_only_models()
    query = Doc.query(index="ByOwner", owner="ann").project("doc_id")
    with pytest.raises(st.QueryError, match=r"'ByOwner' projects KEYS_ONLY .* '_et'"):
        query.params()
    with pytest.raises(st.QueryError, match=r"'ByOwner' projects KEYS_ONLY"):
        next(query._count_stream())  # what count() sends first


def test_entity_scan_of_a_keys_only_index_is_refused_not_silently_empty() -> None:
    Doc, _ = _keys_only_models()
    with pytest.raises(st.QueryError, match=r"'ByOwner' projects KEYS_ONLY.*'_et'"):
        Doc.scan(index="ByOwner").params()
