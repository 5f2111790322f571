"""Fixtures shared by the integration tests (the backend ones are in tests/conftest.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.models import Models, make_models
from tests.integration.recording import RecordingClient


@pytest.fixture
def recorder(dynamodb_client: Any) -> RecordingClient:
    """The backend's client, recording every query and scan request and response."""
    return RecordingClient(dynamodb_client)


@pytest.fixture
def m(dynamodb_client: Any, table_name: str) -> Models:
    """The operations test models (tests/integration/models.py) on a fresh table."""
    return make_models(dynamodb_client, table_name)
