"""The synchronous executor: the only module that calls boto3.

A `Connection` wraps a DynamoDB low-level client and drives the pure operations and
streams built by the request layer: it sends each `Call`, hands the response (or a
`ServiceError`) back, sleeps for `Sleep`, and meters the consumed capacity DynamoDB
reports. It holds no operation-specific code: what each operation does is its
``steps()``, shared with `singletable.AsyncConnection` (see `singletable.io.common`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import boto3
from botocore.exceptions import NoRegionError

# The lean transport and table lifecycle are reached through the packages' lazy names
# (``io.lean``, ``operations.tables``): loaded on first use (issue 24, cold start).
from singletable import io, operations
from singletable.errors import ConfigurationError, ServiceError
from singletable.io.common import (
    REQUEST_ERRORS,
    CapacityMeter,
    Outcome,
    RequestListener,
    client_config,
    no_region_error,
    request_error,
    resume,
)
from singletable.io.telemetry import OperationTrace, observe_throttles, operation_trace
from singletable.model.table import Table
from singletable.operations.protocol import Call, Operation, Sleep
from singletable.operations.stream import Emit, Stream

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

__all__ = ["CapacityMeter", "Connection"]

R = TypeVar("R")
T = TypeVar("T")

#: How a `Connection` sends its calls: ``"boto3"`` through the client's methods, or
#: ``"lean"`` through `singletable.io.lean.LeanTransport` (data-plane calls only).
TransportName = Literal["boto3", "lean"]
_TRANSPORTS: tuple[TransportName, ...] = ("boto3", "lean")
#: The environment variable that picks the transport when `Connection` is not told.
TRANSPORT_VARIABLE = "SINGLETABLE_TRANSPORT"


def _transport_name(transport: str | None) -> TransportName:
    """The transport asked for: the argument, else ``$SINGLETABLE_TRANSPORT``, else boto3."""
    name = transport if transport is not None else os.environ.get(TRANSPORT_VARIABLE) or "boto3"
    for known in _TRANSPORTS:
        if name == known:
            return known
    where = "transport" if transport is not None else f"${TRANSPORT_VARIABLE}"
    raise ConfigurationError(f"{where} must be one of {_TRANSPORTS}, got {name!r}")


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
        transport: ``"boto3"`` calls the client's methods; ``"lean"`` sends the
            data-plane calls over the client's credentials, signing, endpoint, HTTP
            session and retry handler but serialises and parses DynamoDB's JSON itself
            (see `singletable.io.lean`). A client that is not a botocore DynamoDB client
            keeps the boto3 path; `transport` says which one is in use. Default: the
            environment variable ``SINGLETABLE_TRANSPORT``, else ``"boto3"``.

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
        transport: TransportName | None = None,
    ) -> None:
        if client is None:
            session = session or boto3.Session()
            try:
                client = session.client(
                    "dynamodb",
                    region_name=region_name,
                    endpoint_url=endpoint_url,
                    config=client_config(max_attempts),
                )
            except NoRegionError:
                raise no_region_error() from None
        self.client = client
        self._send: Any = self._send_boto3
        #: How the operations may hand over items already serialised (lean transport only).
        self._fragment: Callable[[bytes], Any] | None = None
        #: The transport actually in use (``"lean"`` may fall back to ``"boto3"``).
        self.transport: TransportName = "boto3"
        if _transport_name(transport) == "lean":
            # Its modules load here (`singletable.io`'s lazy names), not at import: the
            # default transport never needs them (issue 24, cold start).
            lean_path = io.lean.lean_transport(client)
            if lean_path is not None:
                self._send = io.lean_spans.lean_sender(lean_path.send, lean_path.supports, client)
                self.transport = "lean"
                self._fragment = io.lean.FRAGMENT
        observe_throttles(client)
        self.meter = CapacityMeter()
        #: Watch every request sent (`singletable.testing.record` adds one while it records).
        self.listeners: list[RequestListener] = []
        self._sleep = sleep

    # -- the transport: the one place a request is sent ------------------------------

    def call(self, action: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request; DynamoDB errors become `ServiceError` (with the error response).

        Raises:
            ServiceError: DynamoDB answered with an error.
            EndpointError: The endpoint could not be reached (after botocore's retries).
            ConfigurationError: No credentials were found.
        """
        return self._request(action, params, None)

    def _request(
        self,
        action: str,
        params: dict[str, Any],
        decode_body: Callable[[bytes], dict[str, Any] | None] | None,
    ) -> dict[str, Any]:
        # ``decode_body`` (`Call.decode_body`) decodes a successful response's body where
        # the transport is the lean one and no listener watches the responses.
        client = self.client
        sent = params
        for listener in self.listeners:
            sent = listener.sending(action, sent)
        try:
            response: dict[str, Any] = self._send(
                action, sent, None if self.listeners else decode_body
            )
        except REQUEST_ERRORS as exc:
            error = request_error(exc, client)
            if error is None:
                raise
            for listener in self.listeners:
                listener.answered(action, params, None, error)
            raise error from exc
        self.meter.record(action, response)
        for listener in self.listeners:
            listener.answered(action, params, response, None)
        return response

    def _call(self, step: Call) -> dict[str, Any]:
        # A subclass's own `call` (a test double, a recorder) gets the responses as
        # DynamoDB sent them, as the listeners do: it is given no body decoder.
        if step.decode_body is None or type(self).call is not Connection.call:
            return self.call(step.action, step.params)
        return self._request(step.action, step.params, step.decode_body)

    def _send_boto3(
        self, action: str, params: dict[str, Any], decode_body: object = None
    ) -> dict[str, Any]:
        response: dict[str, Any] = getattr(self.client, action)(**params)
        return response

    def _perform(self, step: Call | Sleep, trace: OperationTrace | None) -> Outcome:
        if isinstance(step, Sleep):
            if trace is not None:
                trace.sleep(step)
            self._sleep(step.seconds)
            return None
        if trace is None:
            try:
                return self._call(step)
            except ServiceError as exc:
                return exc
        outcome: Outcome = None
        trace.before(step)
        try:
            outcome = self._call(step)
        except ServiceError as exc:
            outcome = exc
        finally:
            trace.after(step, outcome)
        return outcome

    # -- operations and streams ------------------------------------------------------

    def execute(self, operation: Operation[R]) -> R:
        """Run an operation to completion and return its result."""
        # The listeners see every request as dicts, so they get the dict form.
        fragment = None if self.listeners else self._fragment
        steps = operation.steps() if fragment is None else operation.wire_steps(fragment)
        trace = operation_trace("sync", self.transport)
        try:
            step = next(steps)
            while True:
                step = resume(steps, self._perform(step, trace))
        except StopIteration as done:
            if trace is not None:
                trace.end()
            return done.value  # type: ignore[no-any-return]
        except BaseException as exc:
            if trace is not None:
                trace.end(exc)
            raise

    def stream(self, stream: Stream[T]) -> Iterator[T]:
        """Drive a query/scan stream, yielding what it emits (lazily, page by page)."""
        trace = operation_trace("sync", self.transport)
        error: BaseException | None = None
        try:
            out = next(stream)
            while True:
                if isinstance(out, Emit):
                    yield out.value
                    out = stream.send(None)
                else:
                    out = resume(stream, self._perform(out, trace))
        except StopIteration:
            return
        except BaseException as exc:
            error = exc
            raise
        finally:
            stream.close()
            if trace is not None:
                trace.end(error)

    # -- table lifecycle (development and tests) -------------------------------------

    def create_table(self, table: Table, *, wait: bool = True) -> dict[str, Any]:
        """Create the physical table from the model (see `CreateTable`)."""
        return self.execute(operations.tables.CreateTable(table, wait=wait))

    def delete_table(self, table: Table | str, *, wait: bool = True) -> None:
        """Delete the physical table (and wait until it is gone)."""
        self.execute(operations.tables.DeleteTable(table, wait=wait))

    def table_exists(self, table: Table | str) -> bool:
        """Whether the physical table exists."""
        return self.execute(operations.tables.TableExists(table))
