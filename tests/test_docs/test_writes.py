"""The write examples of docs/writes.md run and do what the page says."""

from decimal import Decimal

from docs_src import writes


def test_an_update_rewrites_the_index_key_it_feeds() -> None:
    request = writes.index_key_rewrite()
    names = request["ExpressionAttributeNames"]
    values = request["ExpressionAttributeValues"]
    assert request["UpdateExpression"] == "SET #n0 = :v0, #n1 = :v1, #n2 = :v2"
    assert [names[f"#n{i}"] for i in range(3)] == ["celsius", "GSI1PK", "GSI1SK"]
    assert values[":v0"] == {"N": "35.5"}
    assert values[":v1"] == {"S": "FLEET#2026-06-23"}
    assert values[":v2"] == {"S": "1502355#dev-7#2026-06-23T08:00:00.000000Z"}


def test_writes_conditions_batches_and_transactions() -> None:
    out = writes.main()
    assert out["create_again"] == "AlreadyExistsError"
    assert out["missing"] is None
    assert out["updated"].celsius == Decimal("35.5")
    assert [r.device_id for r in out["hot"]] == ["dev-7"]
    assert "pass their current values with .known(...)" in out["refused"]
    assert out["update_missing"] == "NotFoundError"
    assert out["batch"] == (30, 2)  # 25 + 5
    assert out["reasons"] == [
        ("entity Actor", "None"),
        ("entity AuditEvent", "None"),
        ("entity Actor", "ConditionalCheckFailed"),
    ]
    assert out["grace"] is None
    assert out["deleted"].seq == 0
