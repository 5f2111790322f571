"""What the executors share, apart from the I/O itself.

`Connection` (boto3) and `AsyncConnection` (aiobotocore) differ only in how they send a
request and how they sleep. Everything else lives here, once: the client configuration
singletable builds a client with, the mapping of botocore's ``ClientError`` to
`ServiceError`, the capacity meter, and resuming an operation's generator with a response
or an error.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import field
from typing import Any, Protocol, TypeVar

from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    HTTPClientError,
    NoCredentialsError,
    PartialCredentialsError,
)
from botocore.exceptions import ConnectionError as BotocoreConnectionError

from singletable.errors import ConfigurationError, EndpointError, ServiceError, SingleTableError
from singletable.operations.protocol import capacity_entries
from singletable.types import mutable_dataclass

Y = TypeVar("Y")

#: An outcome handed back to an operation: the response, ``None`` after a sleep, or the
#: `ServiceError` the call raised (thrown into the generator).
Outcome = dict[str, Any] | ServiceError | None


class RequestListener(Protocol):
    """Watches each request an executor sends (`singletable.testing.record` is one).

    Both executors call their listeners from ``call``, the one place a request goes out,
    whatever the transport (boto3, lean, aiobotocore).
    """

    def sending(self, action: str, params: dict[str, Any]) -> dict[str, Any]:
        """The parameters to send for ``params`` (``params`` itself to change nothing)."""
        ...

    def answered(
        self,
        action: str,
        params: dict[str, Any],
        response: dict[str, Any] | None,
        error: SingleTableError | None,
    ) -> None:
        """The request's answer: its response, or the error sending it raised."""
        ...


def client_config(max_attempts: int) -> Config:
    """The botocore configuration of a client singletable builds itself.

    Standard retries (throttling, transient errors) with ``max_attempts``; no parameter
    validation, because every request comes from singletable's request layer, which has
    already validated it, so checking it again only costs CPU on every call.
    """
    return Config(
        parameter_validation=False,
        retries={"mode": "standard", "max_attempts": max_attempts},
    )


def service_error(exc: ClientError) -> ServiceError:
    """The `ServiceError` for a botocore ``ClientError`` (with the error response)."""
    error = exc.response.get("Error", {})
    return ServiceError(
        str(error.get("Code", "Unknown")),
        str(error.get("Message", "")),
        response=dict(exc.response),
    )


#: What a call can raise that `request_error` maps (anything else propagates as it is).
REQUEST_ERRORS = (ClientError, BotoCoreError)


def no_region_error() -> ConfigurationError:
    """The error for a client built without any region configured."""
    return ConfigurationError(
        "no AWS region: pass region_name (CLI: --region), or set AWS_REGION / "
        "AWS_DEFAULT_REGION or a profile's region"
    )


def request_error(exc: Exception, client: Any) -> SingleTableError | None:
    """The singletable error for what sending a request raised (``None``: not ours to map).

    DynamoDB's answers become `ServiceError`; an endpoint that cannot be reached (after
    botocore's retries: refused, DNS, timeouts) `EndpointError`; missing credentials
    `ConfigurationError`.
    """
    if isinstance(exc, ClientError):
        return service_error(exc)
    if isinstance(exc, (BotocoreConnectionError, HTTPClientError)):
        endpoint = client.meta.endpoint_url
        return EndpointError(f"cannot reach DynamoDB at {endpoint}: {exc}")
    if isinstance(exc, (NoCredentialsError, PartialCredentialsError)):
        return ConfigurationError(
            f"no usable AWS credentials ({exc}): configure a profile or set "
            "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY"
        )
    return None


def resume(steps: Generator[Y, Any, Any], outcome: Outcome) -> Y:
    """Resume an operation or stream with an outcome; returns its next step.

    Raises:
        StopIteration: The generator finished (its value is the operation's result).
    """
    if isinstance(outcome, ServiceError):
        return steps.throw(outcome)
    return steps.send(outcome)


@mutable_dataclass
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
        if response.get("ConsumedCapacity") is None:
            return
        self.calls += 1
        self.last_units = 0.0
        for entry in capacity_entries(response):
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
