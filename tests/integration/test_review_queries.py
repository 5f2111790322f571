"""Adversarial review of how queries select items (each test names the bug it pins)."""

from __future__ import annotations

from typing import Any

import singletable as st


def test_collection_query_uses_the_shared_sort_key_fields_it_accepts(
    table_name: str, dynamodb_client: Any
) -> None:
    # Bug: Collection.query(account=..., path=...) accepted the shared sort key field and
    # then ignored it, reading (and returning) the whole partition.
    table = st.Table(table_name)

    class Folder(st.Entity, table=table, pk="D#{account}", sk="{path}"):
        account: str
        path: str

    class File(st.Entity, table=table, pk="D#{account}", sk="{path}"):
        account: str
        path: str
        size: int

    db = st.Connection(dynamodb_client)
    db.create_table(table)
    st.BatchWrite(
        [
            Folder(account="a", path="r/"),
            File(account="a", path="r/x", size=1),
            File(account="a", path="s", size=2),
        ]
    ).run(db)
    tree = st.Collection("tree", Folder, File)
    result = tree.query(account="a", path="r/x").all(db)
    assert [(type(i).__name__, i.path) for i in result] == [("File", "r/x")]
    assert tree.query(account="a", path="nope").all(db) == []
    assert [i.path for i in tree.query(account="a", path="s").all(db)] == ["s"]
