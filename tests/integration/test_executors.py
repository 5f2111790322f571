"""The executor parametrisation: a test marked executor_independent cannot reach one."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

import singletable as st
from tests.integration._executors import BlockingAsyncConnection, connect

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


@pytest.mark.executor_independent("checks that connect() refuses it")
def test_connect_under_the_marker_fails_the_test(
    dynamodb_client: DynamoDBClient, request: pytest.FixtureRequest
) -> None:
    # Run once, unparametrised, whatever --executor says.
    assert not hasattr(request.node, "callspec")
    with pytest.raises(AssertionError, match="marked executor_independent"):
        connect(dynamodb_client)


def test_an_unmarked_test_gets_the_executor_it_is_parametrised_with(
    dynamodb_client: DynamoDBClient, executor_kind: str
) -> None:
    db: object = connect(dynamodb_client)
    expected = st.Connection if executor_kind == "sync" else BlockingAsyncConnection
    assert type(db) is expected
