"""Adversarial review of how queries select items (each test names the bug it pins)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import singletable as st
from tests.integration._executors import connect


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

    db = connect(dynamodb_client)
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


def test_projected_count_is_a_valid_request(table_name: str, dynamodb_client: Any) -> None:
    # Bug: count() kept the ProjectionExpression of .project(...) next to Select=COUNT
    # (or, with a strict lt, left its names unused): DynamoDB refuses both.
    table = st.Table(table_name)

    class Ev(st.Entity, table=table, pk="A#{a}", sk="E#{n}"):
        a: str
        n: int
        note: str = ""

    db = connect(dynamodb_client)
    db.create_table(table)
    st.BatchWrite([Ev(a="x", n=n, note="hi") for n in range(5)]).run(db)
    query = Ev.query(a="x").project("note")
    assert query.count(db) == 5
    assert query.lt(n=3).count(db) == 3
    assert len(query.lt(n=3).all(db)) == 3


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


def test_cursor_of_a_decimal_number_partition_resumes(
    table_name: str, dynamodb_client: Any
) -> None:
    # Bug: a Number partition key was sent as str(Decimal) ("1.50"); DynamoDB returns
    # keys normalised ("1.5"), so the cursor's start key failed the partition check.
    table = st.Table(table_name, pk_type="N", sk_type="N")

    class Price(st.Entity, table=table, pk="{price}", sk="{n}"):
        price: Decimal
        n: int

    db = connect(dynamodb_client)
    db.create_table(table)
    st.BatchWrite([Price(price=Decimal("1.50"), n=n) for n in range(5)]).run(db)
    query = Price.query(price=Decimal("1.50")).limit(2)
    seen: list[int] = []
    cursor = None
    while True:
        page = query.page(db, cursor)
        seen += [p.n for p in page.items]
        cursor = page.cursor
        if cursor is None:
            break
    assert seen == [0, 1, 2, 3, 4]
    assert Price.query(price=Decimal("1.5")).count(db) == 5


def test_another_version_of_the_entity_is_reported_not_misdecoded(
    table_name: str, dynamodb_client: Any
) -> None:
    # Bug: the type filter tests the entity name only, and decoding ignored "_ev": a
    # query or scan of version 2 returned version 1 items as version 2 objects (and
    # version 1 read version 2 items, dropping their new fields) without a word.
    table = st.Table(table_name)

    class EvV1(st.Entity, table=table, pk="A#{a}", sk="E#{n}", name="Ev", version=1):
        a: str
        n: int

    class EvV2(st.Entity, table=table, pk="A#{a}", sk="E#{n}", name="Ev", version=2):
        a: str
        n: int
        label: str = "default"

    db = connect(dynamodb_client)
    db.create_table(table)
    st.BatchWrite([EvV1(a="x", n=1), EvV2(a="x", n=2, label="real")]).run(db)
    page = EvV2.query(a="x").limit(5).page(db)
    assert page.items == [EvV2(a="x", n=2, label="real")]
    assert [i["_ev"] for i in page.unknown] == [{"N": "1"}]
    assert EvV1.query(a="x").all(db) == [EvV1(a="x", n=1)]
    assert EvV2.scan().all(db) == [EvV2(a="x", n=2, label="real")]
