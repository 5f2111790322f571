"""Fixtures shared by the integration tests (the backend ones are in tests/conftest.py).

Every integration test runs on the executor(s) chosen with ``--executor``: the autouse
fixture selects what `tests.integration._executors.connect` builds, and closes the async
executors it opened after the test.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from singletable.tooling.jobs.workers import ConnectionSettings
from tests.conftest import LOCAL_ACCESS_KEY, LOCAL_SECRET_KEY, REGION
from tests.integration import _executors
from tests.integration.models import Models, make_models
from tests.integration.recording import RecordingClient


@pytest.fixture(autouse=True)
def _executor(executor_kind: str, request: pytest.FixtureRequest) -> Iterator[str]:
    independent = request.node.get_closest_marker("executor_independent") is not None
    _executors.use("none" if independent else executor_kind)
    try:
        yield executor_kind
    finally:
        _executors.close_all()
        _executors.use("sync")


@pytest.fixture
def recorder(dynamodb_client: Any) -> RecordingClient:
    """The backend's client, recording every query and scan request and response."""
    return RecordingClient(dynamodb_client)


@pytest.fixture
def m(dynamodb_client: Any, table_name: str) -> Models:
    """The operations test models (tests/integration/models.py) on a fresh table."""
    return make_models(dynamodb_client, table_name)


@pytest.fixture
def process_settings(
    backend_name: str,
    dynamodb_endpoint: str | None,
    request: pytest.FixtureRequest,
    table_name: str,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[ConnectionSettings]:
    """Connection settings that every process reaches the backend with (worker processes).

    DynamoDB Local, or on the moto backend a moto server (``moto_server``); credentials
    and region in the environment, which worker processes inherit. On moto the test's
    table is deleted afterwards (the server outlives the test).
    """
    endpoint = dynamodb_endpoint or request.getfixturevalue("moto_server")
    key, secret = (
        (LOCAL_ACCESS_KEY, LOCAL_SECRET_KEY) if backend_name == "dynamodb-local" else ("t", "t")
    )
    for name, value in (
        ("AWS_ACCESS_KEY_ID", key),
        ("AWS_SECRET_ACCESS_KEY", secret),
        ("AWS_DEFAULT_REGION", REGION),
    ):
        monkeypatch.setenv(name, value)
    yield ConnectionSettings(endpoint_url=endpoint, region_name=REGION, max_attempts=3)
    if backend_name != "dynamodb-local":
        client = boto3.client(
            "dynamodb",
            endpoint_url=endpoint,
            region_name=REGION,
            aws_access_key_id=key,
            aws_secret_access_key=secret,
        )
        for name in client.list_tables()["TableNames"]:
            if name.startswith(table_name):
                client.delete_table(TableName=name)
