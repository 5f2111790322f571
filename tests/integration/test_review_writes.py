"""Adversarial review of the write path, on the selected backend."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import singletable as st
from tests.integration._executors import connect

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
else:
    DynamoDBClient = Any

T0 = datetime(2026, 6, 23, 8, 0, tzinfo=timezone.utc)
T1 = datetime(2026, 6, 24, 9, 30, tzinfo=timezone.utc)


def _models(client: DynamoDBClient, table_name: str) -> tuple[st.Connection, Any]:
    table = st.Table(
        table_name,
        indexes=[
            st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK"),
            st.GSI("GSI2", pk="GSI2PK", sk="GSI2SK"),
        ],
    )

    class Rec(
        st.Entity,
        table=table,
        pk="R#{rid}",
        sk="META",
        indexes={
            "GSI1": st.IndexKeys(pk="RECENT", sk="{updated_at}"),
            "GSI2": st.IndexKeys(pk="BYID#{rid}", sk="REC"),
        },
        updated_at="updated_at",
    ):
        rid: str
        title: str = ""
        updated_at: datetime | None = None

    db = connect(client)
    db.create_table(table)
    return db, Rec


def _raw(client: DynamoDBClient, table_name: str, pk: str) -> dict[str, Any]:
    item: dict[str, Any] = client.get_item(
        TableName=table_name, Key={"PK": {"S": pk}, "SK": {"S": "META"}}, ConsistentRead=True
    )["Item"]
    return item


def test_update_keeps_updated_at_index_in_step(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    db, Rec = _models(dynamodb_client, table_name)
    st.Put(Rec(rid="a"), now=T0).run(db)
    Rec.update(rid="a").set(title="x").at(T1).run(db)
    raw = _raw(dynamodb_client, table_name, "R#a")
    assert raw["GSI1SK"] == st.Put(Rec(rid="a"), now=T1).params()["Item"]["GSI1SK"]
    newest = Rec.query(index="GSI1").descending().first(db)
    assert newest is not None
    assert newest.updated_at == T1


def test_upsert_created_item_is_in_every_index_a_put_fills(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    db, Rec = _models(dynamodb_client, table_name)
    Rec.upsert(rid="a").set(title="x").at(T0).run(db)
    raw = _raw(dynamodb_client, table_name, "R#a")
    put_item = st.Put(Rec(rid="a", title="x"), now=T0).params()["Item"]
    assert {a: raw[a] for a in ("GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK")} == {
        a: put_item[a] for a in ("GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK")
    }
    found = Rec.query(index="GSI2", rid="a").first(db)
    assert found is not None
    assert found.title == "x"
    # Upserting again (the item exists) keeps it in step.
    Rec.upsert(rid="a").set(title="y").at(T1).run(db)
    newest = Rec.query(index="GSI1").descending().first(db)
    assert newest is not None
    assert (newest.title, newest.updated_at) == ("y", T1)
