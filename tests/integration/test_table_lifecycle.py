"""Connection.create_table applies the table settings a create_table request cannot carry."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

import singletable as st
from tests.integration._executors import connect


def test_ttl_and_point_in_time_recovery_are_switched_on(
    dynamodb_client: Any, table_name: str, backend_name: str
) -> None:
    table = st.Table(table_name, ttl_attribute="expires", point_in_time_recovery=True)
    connect(dynamodb_client).create_table(table)
    ttl = dynamodb_client.describe_time_to_live(TableName=table_name)["TimeToLiveDescription"]
    assert ttl["AttributeName"] == "expires"
    assert ttl["TimeToLiveStatus"] in ("ENABLED", "ENABLING")
    if backend_name == "moto":
        backups = dynamodb_client.describe_continuous_backups(TableName=table_name)
        pitr = backups["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]
        assert pitr["PointInTimeRecoveryStatus"] == "ENABLED"


@pytest.mark.dynamodb_local_only("DynamoDB Local implements no backup operations")
def test_dynamodb_local_has_no_backups_to_enable(dynamodb_client: Any, table_name: str) -> None:
    with pytest.raises(ClientError, match="UnknownOperationException"):
        dynamodb_client.describe_continuous_backups(TableName=table_name)
