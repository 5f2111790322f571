"""Typed change streams: records read back from the backend's DynamoDB Streams API."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import boto3
import pytest

import singletable as st
from tests.conftest import LOCAL_ACCESS_KEY, LOCAL_SECRET_KEY, REGION
from tests.integration._executors import connect

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
else:
    DynamoDBClient = Any

VIEWS = ["KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES"]


def read_stream(client: DynamoDBClient, endpoint: str | None, table: str) -> list[dict[str, Any]]:
    kwargs: dict[str, Any] = {"region_name": REGION}
    if endpoint is not None:
        kwargs.update(
            endpoint_url=endpoint,
            aws_access_key_id=LOCAL_ACCESS_KEY,
            aws_secret_access_key=LOCAL_SECRET_KEY,
        )
    streams = boto3.client("dynamodbstreams", **kwargs)
    arn = client.describe_table(TableName=table)["Table"]["LatestStreamArn"]
    records: list[dict[str, Any]] = []
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        iterator = streams.get_shard_iterator(
            StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        for _ in range(20):  # a shard's iterator keeps going: stop once a read is empty
            page = streams.get_records(ShardIterator=iterator)
            records.extend(page["Records"])
            iterator = page.get("NextShardIterator")
            if not page["Records"] or iterator is None:
                break
    return records


@pytest.mark.parametrize("view", VIEWS)
def test_records_decode_into_typed_changes(
    view: str, dynamodb_client: DynamoDBClient, dynamodb_endpoint: str | None, table_name: str
) -> None:
    table = st.Table(table_name, stream=view)  # type: ignore[arg-type]

    class Customer(st.Entity, table=table, pk="CUST#{cid}", sk="PROFILE", unique="email"):
        cid: str
        email: str
        name: str = ""

    class Order(st.Entity, table=table, pk="CUST#{cid}", sk="ORDER#{oid}"):
        cid: str
        oid: int
        total: int

    db = connect(dynamodb_client)
    db.create_table(table)
    Customer.create(Customer(cid="c1", email="a@x", name="Ann")).run(db)
    Order.put(Order(cid="c1", oid=1, total=10)).run(db)
    Order.update(cid="c1", oid=1).set(total=12).run(db)
    Order.delete(cid="c1", oid=1).run(db)
    dynamodb_client.put_item(
        TableName=table_name, Item={"PK": {"S": "RAW"}, "SK": {"S": "1"}, "x": {"N": "1"}}
    )

    changes = list(
        st.decode_records(table, read_stream(dynamodb_client, dynamodb_endpoint, table_name))
    )
    by_kind = [
        ("guard" if c.is_guard else "unknown" if c.unknown else c.entity.__name__, c.event)  # type: ignore[union-attr]
        for c in changes
    ]
    assert sorted(by_kind) == sorted(
        [
            ("Customer", "INSERT"),
            ("guard", "INSERT"),
            ("Order", "INSERT"),
            ("Order", "MODIFY"),
            ("Order", "REMOVE"),
            ("unknown", "INSERT"),
        ]
    )
    assert all(c.view == view for c in changes)
    orders = [c for c in changes if c.entity is Order]
    assert [c.key for c in orders] == [{"cid": "c1", "oid": 1}] * 3
    insert, modify, remove = orders
    has_new = view in ("NEW_IMAGE", "NEW_AND_OLD_IMAGES")
    has_old = view in ("OLD_IMAGE", "NEW_AND_OLD_IMAGES")
    assert insert.new == (Order(cid="c1", oid=1, total=10) if has_new else None)
    assert insert.old is None
    assert modify.new == (Order(cid="c1", oid=1, total=12) if has_new else None)
    assert modify.old == (Order(cid="c1", oid=1, total=10) if has_old else None)
    assert remove.new is None
    assert remove.old == (Order(cid="c1", oid=1, total=12) if has_old else None)
    (guard,) = [c.guard for c in changes if c.guard is not None]
    assert (guard.entity, guard.fields, guard.values) == ("Customer", ("email",), {"email": "a@x"})
    if has_new:  # an INSERT has no old image
        assert guard.holder == {"PK": {"S": "CUST#c1"}, "SK": {"S": "PROFILE"}}

    # The router sees the same records, per entity and event.
    router = st.StreamRouter(table)
    seen: list[tuple[str, Any]] = []
    router.on(Order, "MODIFY")(lambda c: seen.append(("modify", c.key)))
    router.on(Customer)(lambda c: seen.append(("customer", c.event)))
    report = router.dispatch(read_stream(dynamodb_client, dynamodb_endpoint, table_name))
    assert seen == [("customer", "INSERT"), ("modify", {"cid": "c1", "oid": 1})]
    assert (report.handled, report.unhandled, report.guards, len(report.unknown)) == (2, 2, 1, 1)
    assert report.response() == {"batchItemFailures": []}


def test_images_with_tag_named_keys_and_empty_maps_decode(
    dynamodb_client: DynamoDBClient, dynamodb_endpoint: str | None, table_name: str
) -> None:
    # A map key spelled like a type tag is a name ({"BS": "Bahamas"}), and an empty map
    # decodes on both backends: DynamoDB Local's images show it as {} without its "M".
    table = st.Table(table_name, stream="NEW_AND_OLD_IMAGES")

    class Doc(st.Entity, table=table, pk="DOC#{did}", sk="DOC"):
        did: str
        data: dict[str, Any]

    db = connect(dynamodb_client)
    db.create_table(table)
    first = Doc(did="d", data={"BS": "Bahamas", "M": {}, "L": [{}, {"N": b"\x00"}]})
    second = Doc(did="d", data={"S": {"NULL": None}, "empty": {}})
    Doc.put(first).run(db)
    Doc.put(second).run(db)

    records = read_stream(dynamodb_client, dynamodb_endpoint, table_name)
    changes = list(st.decode_records(table, records))
    assert [(c.event, c.old, c.new) for c in changes] == [
        ("INSERT", None, first),
        ("MODIFY", first, second),
    ]
    router = st.StreamRouter(table)
    seen: list[Any] = []
    router.on(Doc)(lambda c: seen.append(c.new))
    assert router.dispatch(records).response() == {"batchItemFailures": []}
    assert seen == [first, second]
