"""The generated create_table request creates a working table on both backends."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import singletable as st
from tests.integration._executors import connect
from tests.schema_models import full_table

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
else:
    DynamoDBClient = Any


def test_create_table_request_makes_a_working_table(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    table = full_table(table_name)

    class Order(
        st.Entity,
        table=table,
        pk="CUST#{customer}",
        sk="ORDER#{order_id}",
        indexes={
            "ByCustomer": st.IndexKeys(pk="C#{customer}", sk="{total}"),
            "ByDate": st.IndexKeys(sk="D#{order_id}"),
        },
    ):
        customer: str
        order_id: int
        total: int

    dynamodb_client.create_table(**st.create_table_request(table))
    try:
        dynamodb_client.get_waiter("table_exists").wait(
            TableName=table_name, WaiterConfig={"Delay": 1, "MaxAttempts": 60}
        )
        check_table(dynamodb_client, table_name, Order)
    finally:
        # Deletion protection is on: lift it so the fixture can drop the table.
        dynamodb_client.update_table(TableName=table_name, DeletionProtectionEnabled=False)


def check_table(dynamodb_client: DynamoDBClient, table_name: str, Order: Any) -> None:
    described = dynamodb_client.describe_table(TableName=table_name)["Table"]
    assert sorted(i["IndexName"] for i in described["GlobalSecondaryIndexes"]) == [
        "ByCustomer",
        "ByRegion",
        "ByStatus",
    ]
    native = next(i for i in described["GlobalSecondaryIndexes"] if i["IndexName"] == "ByRegion")
    assert [(k["AttributeName"], k["KeyType"]) for k in native["KeySchema"]] == [
        ("region", "HASH"),
        ("tier", "HASH"),
        ("placed", "RANGE"),
        ("seq", "RANGE"),
        ("tag", "RANGE"),
    ]
    assert [i["IndexName"] for i in described["LocalSecondaryIndexes"]] == ["ByDate"]
    db = connect(dynamodb_client)
    Order.put(Order(customer="c1", order_id=7, total=42)).run(db)
    got = Order.get(customer="c1", order_id=7).run(db)
    assert got == Order(customer="c1", order_id=7, total=42)
    by_total = Order.query(index="ByCustomer", customer="c1").all(db)
    assert [o.order_id for o in by_total] == [7]
