"""Recording what singletable sends: a client wrapper shared by the integration tests."""

from __future__ import annotations

from typing import Any

import singletable as st


class RecordingClient:
    """Wraps a boto3 DynamoDB client and records every query/scan request and response.

    `singletable.Connection` calls ``getattr(client, action)(**params)``, so the wrapper
    sees exactly what singletable sent and what the backend returned.
    """

    def __init__(self, client: Any) -> None:
        self._client = client
        self.calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if name not in ("query", "scan"):
            return attr

        def recorded(**params: Any) -> Any:
            response = attr(**params)
            self.calls.append((name, params, response))
            return response

        return recorded

    def reset(self) -> None:
        self.calls.clear()

    def raw_items(self) -> list[dict[str, Any]]:
        """Every item the backend returned, across all recorded calls."""
        return [item for _, _, response in self.calls for item in response.get("Items", [])]


def recorded_connection(recorder: RecordingClient, table: st.Table) -> st.Connection:
    """A `singletable.Connection` through ``recorder``, with ``table`` created."""
    # Imported here: _executors imports RecordingClient from this module.
    from tests.integration._executors import connect

    connection = connect(recorder)
    connection.create_table(table)
    return connection
