"""Execution: the only module that calls boto3.

A `Connection` wraps a DynamoDB low-level client and drives the pure operations and
streams built by the request layer: it sends each `Call`, hands the response (or a
`ServiceError`) back, sleeps for `Sleep`, and meters the consumed capacity DynamoDB
reports.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import boto3
from botocore.config import Config
from botocore.exceptions import (
    ClientError,
    HTTPClientError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
)
from botocore.exceptions import ConnectionError as BotocoreConnectionError

from singletable.errors import ConfigurationError, EndpointError, ServiceError
from singletable.model.definition import create_table_request
from singletable.model.table import Table
from singletable.operations.protocol import Call, Operation, Sleep
from singletable.operations.stream import Emit, Stream

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

R = TypeVar("R")
T = TypeVar("T")


@dataclass
class CapacityMeter:
    """A running total of the capacity DynamoDB reported (``ReturnConsumedCapacity``)."""

    read_units: float = 0.0
    write_units: float = 0.0
    total_units: float = 0.0
    calls: int = 0
    by_table: dict[str, float] = field(default_factory=dict)
    #: Units per index, from ``ReturnConsumedCapacity="INDEXES"`` responses only.
    by_index: dict[str, float] = field(default_factory=dict)
    #: The last response's total (``CapacityUnits`` summed over its entries).
    last_units: float = 0.0

    def record(self, action: str, response: dict[str, Any]) -> None:
        """Add what one response reports (a dict, or a list for batches/transactions)."""
        consumed = response.get("ConsumedCapacity")
        if consumed is None:
            return
        self.calls += 1
        self.last_units = 0.0
        for entry in consumed if isinstance(consumed, list) else [consumed]:
            units = float(entry.get("CapacityUnits", 0.0))
            self.total_units += units
            read = entry.get("ReadCapacityUnits")
            write = entry.get("WriteCapacityUnits")
            if read is None and write is None:
                # TOTAL mode reports only CapacityUnits: classify by the operation.
                if action in ("get_item", "query", "scan", "batch_get_item", "transact_get_items"):
                    read = units
                else:
                    write = units
            self.read_units += float(read or 0.0)
            self.write_units += float(write or 0.0)
            table = entry.get("TableName", "?")
            self.by_table[table] = self.by_table.get(table, 0.0) + units
            self.last_units += units
            for group in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
                for index, figures in (entry.get(group) or {}).items():
                    index_units = float(figures.get("CapacityUnits", 0.0))
                    self.by_index[index] = self.by_index.get(index, 0.0) + index_units

    def reset(self) -> None:
        """Start counting from zero."""
        self.read_units = self.write_units = self.total_units = self.last_units = 0.0
        self.calls = 0
        self.by_table.clear()
        self.by_index.clear()


class Connection:
    """Runs singletable operations against DynamoDB (or any compatible endpoint).

    Args:
        client: A boto3 DynamoDB client to use as it is configured.
        session: A boto3 Session to build the client from (default: a new one).
        region_name: Region for a client built here.
        endpoint_url: Endpoint for a client built here (DynamoDB Local, LocalStack, ...).
        max_attempts: botocore's retry attempts (throttling, transient errors) for a
            client built here, with the ``standard`` retry mode's backoff.
        sleep: The function used to wait between batch retries (injectable for tests).

    A client built here skips botocore's parameter validation: every request comes from
    singletable's request layer, which has already validated it, so checking it again
    only costs CPU on every call.
    """

    def __init__(
        self,
        client: DynamoDBClient | None = None,
        *,
        session: boto3.Session | None = None,
        region_name: str | None = None,
        endpoint_url: str | None = None,
        max_attempts: int = 10,
        sleep: Any = time.sleep,
    ) -> None:
        if client is None:
            config = Config(
                parameter_validation=False,
                retries={"mode": "standard", "max_attempts": max_attempts},
            )
            session = session or boto3.Session()
            try:
                client = session.client(
                    "dynamodb", region_name=region_name, endpoint_url=endpoint_url, config=config
                )
            except NoRegionError:
                raise ConfigurationError(
                    "no AWS region: pass region_name (CLI: --region), or set AWS_REGION / "
                    "AWS_DEFAULT_REGION or a profile's region"
                ) from None
        self.client = client
        self.meter = CapacityMeter()
        self._sleep = sleep

    # -- raw calls -------------------------------------------------------------------

    def call(self, action: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request; DynamoDB errors become `ServiceError` (with the error response).

        Raises:
            ServiceError: DynamoDB answered with an error.
            EndpointError: The endpoint could not be reached (after botocore's retries).
            ConfigurationError: No credentials were found.
        """
        try:
            response: dict[str, Any] = getattr(self.client, action)(**params)
        except (BotocoreConnectionError, HTTPClientError) as exc:
            # Connection refused, DNS failure, timeouts: nothing reached DynamoDB.
            endpoint = self.client.meta.endpoint_url
            raise EndpointError(f"cannot reach DynamoDB at {endpoint}: {exc}") from exc
        except (NoCredentialsError, PartialCredentialsError) as exc:
            raise ConfigurationError(
                f"no usable AWS credentials ({exc}): configure a profile or set "
                "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY"
            ) from None
        except ClientError as exc:
            error = exc.response.get("Error", {})
            raw = dict(exc.response)
            raise ServiceError(
                str(error.get("Code", "Unknown")), str(error.get("Message", "")), response=raw
            ) from exc
        self.meter.record(action, response)
        return response

    def _drive(self, step: Call | Sleep) -> tuple[dict[str, Any] | None, ServiceError | None]:
        if isinstance(step, Sleep):
            self._sleep(step.seconds)
            return None, None
        try:
            return self.call(step.action, step.params), None
        except ServiceError as exc:
            return None, exc

    # -- operations and streams ------------------------------------------------------

    def execute(self, operation: Operation[R]) -> R:
        """Run an operation to completion and return its result."""
        steps = operation.steps()
        try:
            step = next(steps)
            while True:
                response, error = self._drive(step)
                step = steps.throw(error) if error is not None else steps.send(response)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]

    def stream(self, stream: Stream[T]) -> Iterator[T]:
        """Drive a query/scan stream, yielding what it emits (lazily, page by page)."""
        try:
            out = next(stream)
            while True:
                if isinstance(out, Emit):
                    yield out.value
                    out = stream.send(None)
                    continue
                response, error = self._drive(out)
                out = stream.throw(error) if error is not None else stream.send(response)
        except StopIteration:
            return

    # -- table lifecycle (development and tests) -------------------------------------

    def create_table(self, table: Table, *, wait: bool = True) -> dict[str, Any]:
        """Create the physical table from the model (and wait until it is ACTIVE).

        With ``wait``, TTL and point-in-time recovery are switched on as the model says
        (PITR where the endpoint implements backups; DynamoDB Local does not).
        """
        response = self.call("create_table", create_table_request(table))
        if wait:
            self.client.get_waiter("table_exists").wait(
                TableName=table.name,
                WaiterConfig={"Delay": 0.2, "MaxAttempts": 300},  # type: ignore[typeddict-item]
            )
            if table.ttl_attribute:
                self.call(
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
                self._enable_point_in_time_recovery(table)
        return response

    def _enable_point_in_time_recovery(self, table: Table) -> None:
        try:
            self.call(
                "update_continuous_backups",
                {
                    "TableName": table.name,
                    "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
                },
            )
        except ServiceError as exc:
            # DynamoDB Local implements no backups at all (it answers that the operation
            # is unknown); there is nothing to enable there. Every other error is real.
            if exc.code != "UnknownOperationException":
                raise

    def delete_table(self, table: Table | str, *, wait: bool = True) -> None:
        """Delete the physical table (and wait until it is gone)."""
        name = table if isinstance(table, str) else table.name
        self.call("delete_table", {"TableName": name})
        if wait:
            self.client.get_waiter("table_not_exists").wait(
                TableName=name,
                WaiterConfig={"Delay": 0.2, "MaxAttempts": 300},  # type: ignore[typeddict-item]
            )

    def table_exists(self, table: Table | str) -> bool:
        """Whether the physical table exists."""
        name = table if isinstance(table, str) else table.name
        try:
            self.call("describe_table", {"TableName": name})
        except ServiceError as exc:
            if exc.code == "ResourceNotFoundException":
                return False
            raise
        return True
