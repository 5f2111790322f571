"""Fixtures shared by the integration tests (the backend ones are in tests/conftest.py).

Every integration test runs on the executor(s) chosen with ``--executor``: the autouse
fixture selects what `tests.integration._executors.connect` builds, and closes the async
executors it opened after the test.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration import _executors
from tests.integration.models import Models, make_models
from tests.integration.recording import RecordingClient


@pytest.fixture(autouse=True)
def _executor(executor_kind: str) -> Iterator[str]:
    _executors.use(executor_kind)
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
