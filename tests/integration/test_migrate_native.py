"""The runner adds and drops native GSIs on the live backends (issue 20).

A native GSI over attributes stored items already carry is created by UpdateTable and
backfilled by DynamoDB, no item rewritten; items whose optional part is None stay out.
The template-to-native move of docs/schema.md runs here on both backends too.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

import singletable as st
from docs_src.native_migration import expand_and_contract
from tests.integration._executors import connect
from tests.test_docs.test_native_migration import EXPECTED

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
else:
    DynamoDBClient = Any


def reading_model(name: str, *, native: bool) -> tuple[st.Table, Any]:
    indexes = [st.NativeGSI("ByArea", pk=["tenant", "region"], sk=["day", "seq"])] if native else []
    table = st.Table(name, indexes=indexes)

    class Reading(st.Entity, table=table, pk="R#{rid}", sk="R"):
        rid: str
        tenant: str
        region: str | None = None
        day: int
        seq: int

    return table, Reading


def test_native_gsi_is_added_online_without_rewriting(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    db = connect(dynamodb_client)
    table, reading = reading_model(table_name, native=False)
    db.create_table(table)
    rows = [("r0", "eu", 10, 2), ("r1", "eu", 9, 5), ("r2", None, 1, 1), ("r3", "eu", 10, 1)]
    for rid, region, day, seq in rows:
        reading.put(reading(rid=rid, tenant="acme", region=region, day=day, seq=seq)).run(db)
    snapshot = st.load_snapshot(st.snapshot_json(table))
    new_table, new = reading_model(table_name, native=True)

    plan = st.plan_changes(new_table, snapshot)
    create, empty = plan.changes
    assert create.action == {"op": "create_gsi", "index": "ByArea"}
    assert "Reading@1 items whose region is None: not in it (sparse)" in create.reason
    assert (empty.kind, empty.action) == (st.ChangeClass.SAFE, None)
    assert "whose tenant, region is empty" in empty.reason

    report = st.migrate(db, new_table, snapshot, out=io.StringIO(), poll_interval=0.2)
    assert report.index_steps == [f"create GSI ByArea on {table_name} (backfills)"]
    assert report.rewrites == {}
    [live] = dynamodb_client.describe_table(TableName=table_name)["Table"]["GlobalSecondaryIndexes"]
    assert live["KeySchema"] == [
        {"AttributeName": "tenant", "KeyType": "HASH"},
        {"AttributeName": "region", "KeyType": "HASH"},
        {"AttributeName": "day", "KeyType": "RANGE"},
        {"AttributeName": "seq", "KeyType": "RANGE"},
    ]
    # Backfilled from the stored attributes: day orders numerically across seq; r2 (no
    # region) is not in the index.
    found = new.query(index="ByArea", tenant="acme", region="eu").all(db)
    assert [r.rid for r in found] == ["r1", "r3", "r0"]
    # A second run finds the index there and does nothing.
    again = st.migrate(db, new_table, snapshot, out=io.StringIO(), poll_interval=0.2)
    assert again.index_steps == []


def test_template_to_native_expand_and_contract(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    assert expand_and_contract(connect(dynamodb_client), table_name) == EXPECTED
