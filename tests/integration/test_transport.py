"""The integration tier runs on the transport it was asked for, not a silent fallback."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

import singletable as st

pytestmark = pytest.mark.executor_independent(
    "the sync Connection's transport, built here; the async executor has none"
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


def test_connections_use_the_selected_transport(
    dynamodb_client: DynamoDBClient, transport_name: str, table_name: str
) -> None:
    db = st.Connection(dynamodb_client)
    assert db.transport == transport_name
    # A data-plane call goes through it and its error comes back mapped.
    with pytest.raises(st.ServiceError) as info:
        db.call("get_item", {"TableName": table_name, "Key": {"PK": {"S": "x"}}})
    assert info.value.code == "ResourceNotFoundException"
