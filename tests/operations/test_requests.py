"""Pure tests of the request layer: exact ``.params()`` of every operation, and the batch
retry generators driven by hand (no client, no network)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from pydantic import Field

import singletable as st
from singletable.operations.protocol import Call, Sleep

T0 = datetime(2026, 6, 23, 8, 0, tzinfo=timezone.utc)
STAMP = {"S": "2026-06-23T08:00:00.000000+00:00"}

table = st.Table("pure", indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")], ttl_attribute="ttl")


class Doc(
    st.Entity,
    table=table,
    pk="DOC#{doc_id}",
    sk="META",
    indexes={"GSI1": st.IndexKeys(pk="OWNER#{owner}", sk="{status}#{doc_id}")},
    version_field="version",
    created_at="created_at",
    updated_at="updated_at",
    ttl="expires_at",
):
    doc_id: str
    owner: str
    status: str = "draft"
    size: int = 0
    tags: set[str] = Field(default_factory=set)
    version: int = 0
    created_at: datetime | None = None
    updated_at: datetime | None = None
    expires_at: datetime | None = None


DOC = Doc(doc_id="d1", owner="ann", size=3, expires_at=T0)
KEY = {"PK": {"S": "DOC#d1"}, "SK": {"S": "META"}}


def stored(version: int) -> dict[str, Any]:
    return {
        **KEY,
        "GSI1PK": {"S": "OWNER#ann"},
        "GSI1SK": {"S": "draft#d1"},
        "doc_id": {"S": "d1"},
        "owner": {"S": "ann"},
        "status": {"S": "draft"},
        "size": {"N": "3"},
        "version": {"N": str(version)},
        "created_at": STAMP,
        "updated_at": STAMP,
        "expires_at": STAMP,
        "ttl": {"N": "1782201600"},
        "_et": {"S": "Doc"},
        "_ev": {"N": "1"},
    }


# --------------------------------------------------------------------------- params


def test_put_params_first_write_must_not_overwrite() -> None:
    assert st.Put(DOC, now=T0, capacity="TOTAL").params() == {
        "TableName": "pure",
        "Item": stored(1),
        "ConditionExpression": "attribute_not_exists (#n0)",
        "ExpressionAttributeNames": {"#n0": "PK"},
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        "ReturnConsumedCapacity": "TOTAL",
    }


def test_put_params_later_write_checks_version_and_condition() -> None:
    op = st.Put(DOC.model_copy(update={"version": 4}), now=T0, condition=Doc.f.size > 1)
    assert op.params() == {
        "TableName": "pure",
        "Item": stored(5),
        "ConditionExpression": "#n0 = :v0 AND #n1 > :v1",
        "ExpressionAttributeNames": {"#n0": "version", "#n1": "size"},
        "ExpressionAttributeValues": {":v0": {"N": "4"}, ":v1": {"N": "1"}},
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }


def test_create_params() -> None:
    assert st.Put(DOC, now=T0, create=True).params() == {
        "TableName": "pure",
        "Item": stored(1),
        "ConditionExpression": "attribute_not_exists (#n0)",
        "ExpressionAttributeNames": {"#n0": "PK"},
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }


def test_get_params() -> None:
    assert Doc.get(doc_id="d1").params() == {"TableName": "pure", "Key": KEY}
    assert Doc.get(doc_id="d1", consistent=True).params() == {
        "TableName": "pure",
        "Key": KEY,
        "ConsistentRead": True,
    }
    assert st.Get(Doc.plan(), {"doc_id": "d1"}, capacity="INDEXES").params() == {
        "TableName": "pure",
        "Key": KEY,
        "ReturnConsumedCapacity": "INDEXES",
    }


def test_projected_get_params() -> None:
    op = Doc.get(doc_id="d1").project("size", "status")
    assert isinstance(op, st.ProjectedGet)
    assert op.params() == {
        "TableName": "pure",
        "Key": KEY,
        "ProjectionExpression": "#n0, #n1",
        "ExpressionAttributeNames": {"#n0": "size", "#n1": "status"},
    }


def test_delete_params() -> None:
    op = Doc.delete(doc_id="d1", condition=Doc.f.status == "live", return_old=True)
    assert op.params() == {
        "TableName": "pure",
        "Key": KEY,
        "ConditionExpression": "#n0 = :v0",
        "ExpressionAttributeNames": {"#n0": "status"},
        "ExpressionAttributeValues": {":v0": {"S": "live"}},
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        "ReturnValues": "ALL_OLD",
    }
    # Deleting an object checks the version it carries.
    assert Doc.delete(DOC.model_copy(update={"version": 2})).params() == {
        "TableName": "pure",
        "Key": KEY,
        "ConditionExpression": "#n0 = :v0",
        "ExpressionAttributeNames": {"#n0": "version"},
        "ExpressionAttributeValues": {":v0": {"N": "2"}},
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }
    assert Doc.delete(doc_id="d1").params() == {"TableName": "pure", "Key": KEY}


def test_update_params_rewrite_index_keys_and_lock() -> None:
    op = (
        Doc.update(doc_id="d1")
        .set(status="live", size=4)
        .known(owner="ann")
        .add(tags={"x"})
        .where(Doc.f.size < 10)
        .expect_version(2)
        .at(T0)
    )
    assert op.params() == {
        "TableName": "pure",
        "Key": KEY,
        "UpdateExpression": "SET #n0 = :v0, #n1 = :v1, #n2 = :v2, #n3 = :v3, #n4 = :v4 "
        "ADD #n5 :v5, #n6 :v6",
        # size defaults to 0: a missing attribute reads 0, which is < 10.
        "ConditionExpression": "attribute_exists (#n7) AND #n6 = :v7 "
        "AND (attribute_not_exists (#n1) OR #n1 < :v8)",
        "ExpressionAttributeNames": {
            "#n0": "status",
            "#n1": "size",
            "#n2": "GSI1PK",
            "#n3": "GSI1SK",
            "#n4": "updated_at",
            "#n5": "tags",
            "#n6": "version",
            "#n7": "PK",
        },
        "ExpressionAttributeValues": {
            ":v0": {"S": "live"},
            ":v1": {"N": "4"},
            ":v2": {"S": "OWNER#ann"},
            ":v3": {"S": "live#d1"},
            ":v4": STAMP,
            ":v5": {"SS": ["x"]},
            ":v6": {"N": "1"},
            ":v7": {"N": "2"},
            ":v8": {"N": "10"},
        },
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        "ReturnValues": "ALL_NEW",
    }


def test_update_params_ttl_field_rewrites_the_ttl_attribute() -> None:
    params = Doc.update(doc_id="d1").set(expires_at=T0).at(T0).params()
    assert params["UpdateExpression"] == "SET #n0 = :v0, #n1 = :v1, #n2 = :v2 ADD #n3 :v3"
    assert params["ExpressionAttributeNames"] == {
        "#n0": "expires_at",
        "#n1": "ttl",
        "#n2": "updated_at",
        "#n3": "version",
        "#n4": "PK",
    }
    assert params["ExpressionAttributeValues"] == {
        ":v0": STAMP,
        ":v1": {"N": "1782201600"},
        ":v2": STAMP,
        ":v3": {"N": "1"},
    }
    cleared = Doc.update(doc_id="d1").set(expires_at=None).at(T0).params()
    assert cleared["UpdateExpression"] == "SET #n0 = :v0 REMOVE #n1, #n2 ADD #n3 :v1"
    assert cleared["ExpressionAttributeNames"] == {
        "#n0": "updated_at",
        "#n1": "expires_at",
        "#n2": "ttl",
        "#n3": "version",
        "#n4": "PK",
    }


def test_ttl_field_changed_by_a_computed_raw_action_is_refused() -> None:
    # A plain raw remove is `.remove()` (the TTL attribute goes too); a computed value
    # cannot be turned into epoch seconds before sending.
    raw_remove = Doc.update(doc_id="d1").apply(Doc.f.expires_at.remove()).at(T0).params()
    assert raw_remove == Doc.update(doc_id="d1").set(expires_at=None).at(T0).params()
    ref = Doc.f.expires_at
    with pytest.raises(
        st.ExpressionError,
        match=r"^entity Doc: field 'expires_at' feeds the TTL attribute 'ttl', so it can only "
        r"be changed with \.set\(\.\.\.\)$",
    ):
        Doc.update(doc_id="d1").apply(ref.set(ref.if_not_exists(T0))).params()


def test_upsert_params() -> None:
    up = Doc.upsert(doc_id="d1").set(owner="o", status="draft").increment("size").at(T0)
    assert up.params() == {
        "TableName": "pure",
        "Key": KEY,
        "UpdateExpression": "SET #n0 = :v0, #n1 = :v1, #n2 = #n2 + :v2, #n3 = :v3, #n4 = :v4, "
        "#n5 = :v5, #n6 = :v6, #n7 = :v7, #n8 = :v8, #n9 = if_not_exists(#n9, :v9) "
        "ADD #n10 :v10",
        "ExpressionAttributeNames": {
            "#n0": "owner",
            "#n1": "status",
            "#n2": "size",
            "#n3": "GSI1PK",
            "#n4": "GSI1SK",
            "#n5": "updated_at",
            "#n6": "_et",
            "#n7": "_ev",
            "#n8": "doc_id",
            "#n9": "created_at",
            "#n10": "version",
        },
        "ExpressionAttributeValues": {
            ":v0": {"S": "o"},
            ":v1": {"S": "draft"},
            ":v2": {"N": "1"},
            ":v3": {"S": "OWNER#o"},
            ":v4": {"S": "draft#d1"},
            ":v5": STAMP,
            ":v6": {"S": "Doc"},
            ":v7": {"N": "1"},
            ":v8": {"S": "d1"},
            ":v9": STAMP,
            ":v10": {"N": "1"},
        },
        "ReturnValues": "ALL_NEW",
    }


def test_upsert_writes_missing_defaults_with_if_not_exists() -> None:
    params = Doc.upsert(doc_id="d1").set(owner="o").known(status="draft").at(T0).params()
    names = params["ExpressionAttributeNames"]
    status = next(k for k, v in names.items() if v == "status")
    assert f"{status} = if_not_exists({status}, " in params["UpdateExpression"]
    size = next(k for k, v in names.items() if v == "size")
    assert f"{size} = if_not_exists({size}, " in params["UpdateExpression"]
    assert "tags" not in names.values()  # an empty set is stored by leaving it out


def test_batch_params() -> None:
    write = st.BatchWrite(deletes=[(Doc.plan(), {"doc_id": "d1"})], capacity="TOTAL")
    assert write.params() == {
        "RequestItems": {"pure": [{"DeleteRequest": {"Key": KEY}}]},
        "ReturnConsumedCapacity": "TOTAL",
    }
    get = st.BatchGet([(Doc.plan(), {"doc_id": "d1"})], consistent=True)
    assert get.params() == {"RequestItems": {"pure": {"Keys": [KEY], "ConsistentRead": True}}}


def test_transaction_params() -> None:
    tx = (
        st.TransactWrite(client_token="tok", capacity="TOTAL")
        .put(st.Put(DOC, now=T0, create=True, capacity="TOTAL"))
        .update(Doc.update(doc_id="d2").set(size=1).at(T0))
        .delete(Doc.delete(doc_id="d3", return_old=True))
        .check(Doc.plan(), {"doc_id": "d4"}, Doc.f.size.exists())
    )
    key = {"d2": {"PK": {"S": "DOC#d2"}, "SK": {"S": "META"}}}
    assert tx.params() == {
        "ClientRequestToken": "tok",
        "ReturnConsumedCapacity": "TOTAL",
        "TransactItems": [
            {
                "Put": {
                    "TableName": "pure",
                    "Item": stored(1),
                    "ConditionExpression": "attribute_not_exists (#n0)",
                    "ExpressionAttributeNames": {"#n0": "PK"},
                    "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                }
            },
            {
                "Update": {
                    "TableName": "pure",
                    "Key": key["d2"],
                    "UpdateExpression": "SET #n0 = :v0, #n1 = :v1 ADD #n2 :v2",
                    "ConditionExpression": "attribute_exists (#n3)",
                    "ExpressionAttributeNames": {
                        "#n0": "size",
                        "#n1": "updated_at",
                        "#n2": "version",
                        "#n3": "PK",
                    },
                    "ExpressionAttributeValues": {
                        ":v0": {"N": "1"},
                        ":v1": STAMP,
                        ":v2": {"N": "1"},
                    },
                    "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                }
            },
            {"Delete": {"TableName": "pure", "Key": {"PK": {"S": "DOC#d3"}, "SK": {"S": "META"}}}},
            {
                "ConditionCheck": {
                    "TableName": "pure",
                    "Key": {"PK": {"S": "DOC#d4"}, "SK": {"S": "META"}},
                    "ConditionExpression": "attribute_exists (#n0)",
                    "ExpressionAttributeNames": {"#n0": "size"},
                    "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                }
            },
        ],
    }
    assert st.TransactGet().get(Doc.get(doc_id="d1")).params() == {
        "TransactItems": [{"Get": {"TableName": "pure", "Key": KEY}}]
    }


def test_empty_transactions_are_refused() -> None:
    with pytest.raises(st.QueryError, match=r"^a transaction needs at least one item$"):
        st.TransactWrite().params()
    with pytest.raises(st.QueryError, match=r"^a transaction needs at least one item$"):
        st.TransactGet().params()


def test_transactions_built_by_their_constructors_take_the_same_checks() -> None:
    # Operations belong to put/update/delete/check; entries and gets given to the
    # constructor are checked as those methods check them (each item once, 100 items).
    with pytest.raises(st.ExpressionError, match=r"got a Put: add operations with \.put\(\)"):
        st.TransactWrite([st.Put(DOC)])  # type: ignore[list-item]
    built = st.TransactWrite().put(st.Put(DOC, now=T0)).delete(Doc.delete(doc_id="d3"))
    assert st.TransactWrite(entries=list(built.entries)).params() == built.params()
    with pytest.raises(st.RequestLimitError, match="appears twice"):
        st.TransactWrite(entries=[*built.entries, built.entries[0]])
    one = Doc.get(doc_id="d1")
    assert st.TransactGet([one]).params() == st.TransactGet().get(one).params()
    with pytest.raises(st.RequestLimitError, match="appears twice"):
        st.TransactGet([one, Doc.get(doc_id="d1")])
    many = [Doc.get(doc_id=f"d{i}") for i in range(101)]
    with pytest.raises(st.RequestLimitError, match="at most 100 items"):
        st.TransactGet(many)
    with pytest.raises(st.ExpressionError, match="holds Get operations, got a Put"):
        st.TransactGet([st.Put(DOC)])  # type: ignore[list-item]


# --------------------------------------------------------------------------- batch retries


class Note(st.Entity, table=table, pk="DOC#{doc_id}", sk="NOTE"):
    """Unversioned, so batch writes accept it (they cannot check versions)."""

    doc_id: str
    owner: str


def _docs(n: int) -> list[Note]:
    return [Note(doc_id=f"d{i:03d}", owner="o") for i in range(n)]


def _put_requests(call: Call) -> list[dict[str, Any]]:
    requests: list[dict[str, Any]] = call.params["RequestItems"]["pure"]
    return requests


def test_batch_write_retries_unprocessed_items_with_backoff() -> None:
    op = st.BatchWrite(puts=_docs(30), backoff_base=0.1, backoff_cap=0.15)
    steps = op.steps()
    first = next(steps)
    assert isinstance(first, Call)
    assert first.action == "batch_write_item"
    sent = _put_requests(first)
    assert len(sent) == 25
    left = sent[20:]
    pause = steps.send({"UnprocessedItems": {"pure": left}})
    assert isinstance(pause, Sleep)
    assert 0 <= pause.seconds <= 0.15  # full jitter up to min(cap, base * 2**attempt)
    retry = steps.send(None)
    assert isinstance(retry, Call)
    assert _put_requests(retry) == left
    # Half of the retry is throttled again: a second, longer-capped pause, then the rest.
    pause = steps.send({"UnprocessedItems": {"pure": left[3:]}})
    assert isinstance(pause, Sleep)
    again = steps.send(None)
    assert isinstance(again, Call)
    assert _put_requests(again) == left[3:]
    second_chunk = steps.send({"UnprocessedItems": {}})
    assert isinstance(second_chunk, Call)
    assert [r["PutRequest"]["Item"]["doc_id"]["S"] for r in _put_requests(second_chunk)] == [
        f"d{i:03d}" for i in range(25, 30)
    ]
    with pytest.raises(StopIteration) as done:
        steps.send({})
    assert done.value.value == st.BatchWriteResult(put=30, deleted=0, calls=4, retries=2)


def test_batch_write_gives_up_loudly_after_max_attempts() -> None:
    op = st.BatchWrite(puts=_docs(3), max_attempts=3)
    steps = op.steps()
    call = next(steps)
    assert isinstance(call, Call)
    stuck = {"UnprocessedItems": {"pure": _put_requests(call)[1:]}}
    calls = 1

    def drive_until_refused() -> None:
        nonlocal calls
        step: Any = steps.send(stuck)
        while True:
            assert isinstance(step, Sleep)
            step = steps.send(None)
            assert isinstance(step, Call)
            calls += 1
            step = steps.send(stuck)

    with pytest.raises(
        st.RequestLimitError,
        match=r"^batch write: 2 of 3 writes \(2 puts, 0 deletes\) still unprocessed after 3 "
        r"attempts \(throttled\); 1 were written\. Nothing was dropped: resend "
        r"e\.unwritten_puts / e\.unwritten_deletes$",
    ):
        drive_until_refused()
    assert calls == 3


def test_batch_get_retries_unprocessed_keys_and_keeps_every_item() -> None:
    docs = _docs(150)
    op = st.BatchGet([(Note.plan(), {"doc_id": d.doc_id}) for d in docs])
    items = {d.doc_id: Note.plan().to_item(d) for d in docs}
    steps = op.steps()
    call = next(steps)
    assert isinstance(call, Call)
    assert call.action == "batch_get_item"
    keys = call.params["RequestItems"]["pure"]["Keys"]
    assert len(keys) == 100
    served = [items[k["PK"]["S"][4:]] for k in keys[:60]]
    pause = steps.send(
        {"Responses": {"pure": served}, "UnprocessedKeys": {"pure": {"Keys": keys[60:]}}}
    )
    assert isinstance(pause, Sleep)
    retry = steps.send(None)
    assert isinstance(retry, Call)
    assert retry.params["RequestItems"] == {"pure": {"Keys": keys[60:]}}
    rest = [items[k["PK"]["S"][4:]] for k in keys[60:]]
    second = steps.send({"Responses": {"pure": rest}, "UnprocessedKeys": {}})
    assert isinstance(second, Call)
    tail = second.params["RequestItems"]["pure"]["Keys"]
    assert len(tail) == 50
    with pytest.raises(StopIteration) as done:
        # DynamoDB returns items in any order; the result keeps the order of the keys.
        steps.send({"Responses": {"pure": [items[k["PK"]["S"][4:]] for k in reversed(tail)]}})
    assert done.value.value == docs


def test_batch_get_gives_up_loudly_after_max_attempts() -> None:
    op = st.BatchGet([(Note.plan(), {"doc_id": d.doc_id}) for d in _docs(2)], max_attempts=2)
    steps = op.steps()
    call = next(steps)
    assert isinstance(call, Call)
    stuck = {"Responses": {}, "UnprocessedKeys": call.params["RequestItems"]}
    assert isinstance(steps.send(stuck), Sleep)
    assert isinstance(steps.send(None), Call)
    with pytest.raises(
        st.RequestLimitError,
        match=r"^batch get: 2 of 2 keys still unprocessed after 2 attempts \(throttled\); "
        r"no partial result is returned: e\.found holds the items read, e\.unread_keys the "
        r"keys to ask again$",
    ):
        steps.send(stuck)


class _ThrottlingClient:
    """A fake client: the first batch_write_item leaves two items unprocessed."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    def batch_write_item(self, **params: Any) -> dict[str, Any]:
        self.requests.append(params)
        if len(self.requests) == 1:
            return {"UnprocessedItems": {"pure": params["RequestItems"]["pure"][:2]}}
        return {"UnprocessedItems": {}}


def test_connection_sleeps_between_batch_retries() -> None:
    client = _ThrottlingClient()
    slept: list[float] = []
    db = st.Connection(client, sleep=slept.append)  # type: ignore[arg-type]
    result = st.BatchWrite(puts=_docs(5)).run(db)
    assert result == st.BatchWriteResult(put=5, deleted=0, calls=2, retries=1)
    assert len(slept) == 1
    assert (
        client.requests[1]["RequestItems"]["pure"] == client.requests[0]["RequestItems"]["pure"][:2]
    )
