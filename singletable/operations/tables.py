"""Table lifecycle as operations: create (and wait, TTL, PITR), delete, exists.

These are the steps behind ``Connection.create_table`` and its async twin, written once as
sans-I/O generators. Waiting is polling ``DescribeTable`` with `Sleep` between attempts
(what botocore's ``table_exists`` / ``table_not_exists`` waiters do), so each executor
waits its own way (``time.sleep`` or ``asyncio.sleep``).
"""

from __future__ import annotations

from typing import Any

from singletable.errors import ServiceError, SingleTableError
from singletable.model.definition import create_table_request
from singletable.model.table import Table
from singletable.operations.protocol import Call, Operation, Sleep, Step

#: Polling while waiting for a table: the delay and attempts of the botocore waiters
#: singletable used before (0.2 s, 300 attempts = one minute).
POLL_DELAY = 0.2
POLL_ATTEMPTS = 300


def _table_name(table: Table | str) -> str:
    return table if isinstance(table, str) else table.name


def _wait_until(name: str, *, exists: bool) -> Step[None]:
    for _ in range(POLL_ATTEMPTS):
        try:
            response = yield Call("describe_table", {"TableName": name})
        except ServiceError as exc:
            if exc.code != "ResourceNotFoundException":
                raise
            if not exists:
                return
        else:
            if exists and response.get("Table", {}).get("TableStatus") == "ACTIVE":
                return
        yield Sleep(POLL_DELAY)
    state = "ACTIVE" if exists else "deleted"
    raise SingleTableError(
        f"table {name!r} was not {state} after {POLL_ATTEMPTS} checks {POLL_DELAY} s apart"
    )


class CreateTable(Operation[dict[str, Any]]):
    """Create the physical table from the model (and wait until it is ACTIVE).

    With ``wait``, TTL and point-in-time recovery are switched on as the model says
    (PITR where the endpoint implements backups; DynamoDB Local does not). Returns the
    ``CreateTable`` response.
    """

    action = "create_table"

    def __init__(self, table: Table, *, wait: bool = True) -> None:
        self.table = table
        self.wait = wait

    def params(self) -> dict[str, Any]:
        """The ``CreateTable`` request derived from the model."""
        return create_table_request(self.table)

    def steps(self) -> Step[dict[str, Any]]:
        """Create, then (with ``wait``) poll until ACTIVE and switch on TTL and PITR."""
        table = self.table
        response: dict[str, Any] = yield Call(self.action, self.params())
        if not self.wait:
            return response
        yield from _wait_until(table.name, exists=True)
        if table.ttl_attribute:
            yield Call(
                "update_time_to_live",
                {
                    "TableName": table.name,
                    "TimeToLiveSpecification": {
                        "Enabled": True,
                        "AttributeName": table.ttl_attribute,
                    },
                },
            )
        if table.point_in_time_recovery:
            try:
                yield Call(
                    "update_continuous_backups",
                    {
                        "TableName": table.name,
                        "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
                    },
                )
            except ServiceError as exc:
                # DynamoDB Local implements no backups at all (it answers that the
                # operation is unknown); there is nothing to enable there. Every other
                # error is real.
                if exc.code != "UnknownOperationException":
                    raise
        return response


class DeleteTable(Operation[None]):
    """Delete the physical table (and wait until it is gone)."""

    action = "delete_table"

    def __init__(self, table: Table | str, *, wait: bool = True) -> None:
        self.name = _table_name(table)
        self.wait = wait

    def params(self) -> dict[str, Any]:
        """The ``DeleteTable`` request."""
        return {"TableName": self.name}

    def steps(self) -> Step[None]:
        """Delete, then (with ``wait``) poll until the table is gone."""
        yield Call(self.action, self.params())
        if self.wait:
            yield from _wait_until(self.name, exists=False)


class DescribeTable(Operation[dict[str, Any]]):
    """The physical table's description (``DescribeTable``'s ``Table``: status, item count...).

    Raises ``ServiceError`` (``ResourceNotFoundException``) when the table does not exist.
    """

    action = "describe_table"

    def __init__(self, table: Table | str) -> None:
        self.name = _table_name(table)

    def params(self) -> dict[str, Any]:
        """The ``DescribeTable`` request."""
        return {"TableName": self.name}

    def parse(self, response: dict[str, Any]) -> dict[str, Any]:
        """The ``Table`` part of the response."""
        table: dict[str, Any] = response.get("Table", {})
        return table


class TableExists(Operation[bool]):
    """Whether the physical table exists (``DescribeTable``)."""

    action = "describe_table"

    def __init__(self, table: Table | str) -> None:
        self.name = _table_name(table)

    def params(self) -> dict[str, Any]:
        """The ``DescribeTable`` request."""
        return {"TableName": self.name}

    def steps(self) -> Step[bool]:
        """One ``DescribeTable``: a missing table is ``False``, any other error raises."""
        try:
            yield Call(self.action, self.params())
        except ServiceError as exc:
            if exc.code == "ResourceNotFoundException":
                return False
            raise
        return True
