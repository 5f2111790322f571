"""A batch stopped part-way reports, against a real backend, what it did write.

The backend's client is wrapped so that its second BatchWriteItem fails as a throttle
that outlasted botocore's retries would; the error must list the 25 items the first call
stored (they are in the table) and the 50 it did not (they are not).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

import singletable as st
from tests.integration.models import make_models

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
else:
    DynamoDBClient = Any


class _ThrottledAfter:
    """Delegates to a real client; batch calls after the first ``ok`` raise a throttle."""

    def __init__(self, client: DynamoDBClient, ok: int) -> None:
        self._client = client
        self._ok = ok

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def _throttle(self, action: str) -> None:
        if self._ok <= 0:
            raise ClientError(
                {"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, action
            )
        self._ok -= 1

    def batch_write_item(self, **params: Any) -> Any:
        self._throttle("BatchWriteItem")
        return self._client.batch_write_item(**params)

    def batch_get_item(self, **params: Any) -> Any:
        self._throttle("BatchGetItem")
        return self._client.batch_get_item(**params)


def test_a_batch_write_stopped_by_a_throttle_names_what_is_stored(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    m = make_models(dynamodb_client, table_name)
    things = [m.Thing(box="b", thing_id=f"t{i:03d}", name="n") for i in range(75)]
    throttled = st.Connection(_ThrottledAfter(dynamodb_client, ok=1))  # type: ignore[arg-type]
    try:
        st.BatchWrite(puts=things).run(throttled)
    except st.BatchWriteIncompleteError as exc:
        error = exc
    else:
        raise AssertionError("the throttle did not stop the batch")
    assert error.code == "ThrottlingException"
    assert error.written_count == 25
    assert error.unwritten_count == 50
    stored = m.Thing.query(box="b").all(m.db)
    assert stored == error.written_puts == things[:25]
    # Resending exactly the unwritten items completes the batch.
    st.BatchWrite(puts=error.unwritten_puts).run(m.db)
    assert m.Thing.query(box="b").all(m.db) == things


def test_a_batch_get_stopped_by_a_throttle_returns_what_it_read(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    m = make_models(dynamodb_client, table_name)
    things = [m.Thing(box="b", thing_id=f"t{i:03d}", name="n") for i in range(120)]
    st.BatchWrite(puts=things).run(m.db)
    plan = m.Thing.plan()
    keys = [(plan, {"box": "b", "thing_id": t.thing_id}) for t in things]
    throttled = st.Connection(_ThrottledAfter(dynamodb_client, ok=1))  # type: ignore[arg-type]
    try:
        st.BatchGet(keys).run(throttled)
    except st.BatchGetIncompleteError as exc:
        error = exc
    else:
        raise AssertionError("the throttle did not stop the batch")
    assert error.found == things[:100]
    assert error.unread_keys == keys[100:]
    assert st.BatchGet(error.unread_keys).run(m.db) == things[100:]
