"""Queries on a KEYS_ONLY index: key fields come back from the keys, other fields are refused."""

from __future__ import annotations

from typing import Any

import pytest

import singletable as st
from tests.integration._executors import connect


@pytest.fixture
def models(dynamodb_client: Any, table_name: str) -> Any:
    table = st.Table(
        table_name,
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
        body: str = ""

    db = connect(dynamodb_client)
    db.create_table(table)
    for doc_id in ("d2", "d1"):
        Doc.put(Doc(doc_id=doc_id, owner="ann", body="hello")).run(db)
    return Doc, db


def test_key_fields_are_recovered_from_the_index_keys(models: Any) -> None:
    Doc, db = models
    rows = Doc.query(index="ByOwner", owner="ann").project("doc_id", "owner").all(db)
    assert rows == [{"doc_id": "d1", "owner": "ann"}, {"doc_id": "d2", "owner": "ann"}]


def test_whole_objects_are_refused_rather_than_filled_with_defaults(models: Any) -> None:
    Doc, db = models
    with pytest.raises(st.QueryError, match=r"'ByOwner' projects KEYS_ONLY, so field 'body'"):
        Doc.query(index="ByOwner", owner="ann").all(db)
    with pytest.raises(st.QueryError, match=r"field 'body' is not in its items"):
        Doc.query(index="ByOwner", owner="ann").project("doc_id", "body").params()


def test_count_on_a_keys_only_index(table_name: str, dynamodb_client: Any) -> None:
    # Bug: count() on a KEYS_ONLY index was refused because whole objects cannot be
    # decoded from its items, although a count decodes nothing.
    table = st.Table(
        table_name,
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
        body: str = ""

    db = connect(dynamodb_client)
    db.create_table(table)
    st.BatchWrite([Doc(doc_id=d, owner="ann", body="b") for d in ("d1", "d2", "d3")]).run(db)
    assert Doc.query(index="ByOwner", owner="ann").count(db) == 3
    assert Doc.query(index="ByOwner", owner="ann").lt(doc_id="d3").count(db) == 2
