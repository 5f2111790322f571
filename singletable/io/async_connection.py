"""The asyncio executor: the only module that calls aiobotocore.

`AsyncConnection` drives the very same operation and stream generators as
`singletable.Connection`; only sending a request (``await client.<action>(...)``) and
sleeping (``asyncio.sleep``) differ. Client configuration, error mapping, the capacity
meter and the table lifecycle steps are shared (`singletable.io.common`,
`singletable.operations.tables`).

aiobotocore is an optional dependency: ``pip install 'singletable[async]'``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from types import TracebackType
from typing import Any, Literal, TypeVar

from botocore.exceptions import NoRegionError

from singletable.errors import ServiceError, SingleTableError
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
from singletable.operations.tables import CreateTable, DeleteTable, TableExists

__all__ = ["AsyncConnection"]

R = TypeVar("R")
T = TypeVar("T")


class AsyncConnection:
    """Runs singletable operations on an asyncio event loop (aiobotocore).

    The same builders as with `singletable.Connection`, awaited::

        async with AsyncConnection(region_name="eu-west-1") as adb:
            order = await Order.get(order_id="o1").run(adb)
            recent = await Order.query(customer="c1").descending().limit(10).all(adb)
            async for order in Order.query(customer="c1").iter(adb):
                ...

    Args:
        client: An open aiobotocore DynamoDB client to use as it is configured (its
            owner closes it).
        session: An ``aiobotocore.session.AioSession`` to build the client from (default:
            a new one).
        region_name: Region for a client built here.
        endpoint_url: Endpoint for a client built here (DynamoDB Local, LocalStack, ...).
        max_attempts: botocore's retry attempts (throttling, transient errors) for a
            client built here, with the ``standard`` retry mode's backoff.
        sleep: The coroutine function used to wait between batch retries (injectable for
            tests).

    A client built here is created when the connection is opened (``async with``, or
    `open`) and closed by `close`; like `singletable.Connection`'s it uses standard
    retries and skips botocore's parameter validation.
    """

    def __init__(
        self,
        client: Any = None,
        *,
        session: Any = None,
        region_name: str | None = None,
        endpoint_url: str | None = None,
        max_attempts: int = 10,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self._client: Any = client
        if client is not None:
            observe_throttles(client)
        self._session = session
        self._region_name = region_name
        self._endpoint_url = endpoint_url
        self._max_attempts = max_attempts
        self._exit_stack: AsyncExitStack | None = None
        self._sleep = sleep
        self.meter = CapacityMeter()
        #: Watch every request sent (`singletable.testing.record` adds one while it records).
        self.listeners: list[RequestListener] = []
        #: As `Connection.transport`: aiobotocore serialises and parses as botocore does
        #: (the lean transport is the synchronous executor's only).
        self.transport: Literal["boto3"] = "boto3"

    # -- lifecycle -------------------------------------------------------------------

    @property
    def client(self) -> Any:
        """The aiobotocore DynamoDB client (once open)."""
        if self._client is None:
            raise SingleTableError(
                "AsyncConnection is not open: use `async with AsyncConnection(...) as adb:` "
                "or `await adb.open()` first"
            )
        return self._client

    async def open(self) -> AsyncConnection:
        """Create the aiobotocore client (no-op when one was given or is already open)."""
        if self._client is not None:
            return self
        try:
            from aiobotocore.session import get_session
        except ImportError:  # pragma: no cover - depends on the installation
            raise SingleTableError(
                "AsyncConnection needs aiobotocore: pip install 'singletable[async]'"
            ) from None
        session = self._session or get_session()
        stack = AsyncExitStack()
        try:
            self._client = await stack.enter_async_context(
                session.create_client(
                    "dynamodb",
                    region_name=self._region_name,
                    endpoint_url=self._endpoint_url,
                    config=client_config(self._max_attempts),
                )
            )
        except NoRegionError:
            raise no_region_error() from None
        observe_throttles(self._client)
        self._exit_stack = stack
        return self

    async def close(self) -> None:
        """Close the client this connection created (a client given to it is left open)."""
        stack, self._exit_stack = self._exit_stack, None
        if stack is not None:
            self._client = None
            await stack.aclose()

    async def __aenter__(self) -> AsyncConnection:
        return await self.open()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # -- the transport: the one place a request is sent ------------------------------

    async def call(self, action: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request; DynamoDB errors become `ServiceError` (with the error response).

        Raises:
            ServiceError: DynamoDB answered with an error.
            EndpointError: The endpoint could not be reached (after botocore's retries).
            ConfigurationError: No credentials were found.
        """
        client = self.client
        sent = params
        for listener in self.listeners:
            sent = listener.sending(action, sent)
        try:
            response: dict[str, Any] = await getattr(client, action)(**sent)
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

    async def _perform(self, step: Call | Sleep, trace: OperationTrace | None) -> Outcome:
        if isinstance(step, Sleep):
            if trace is not None:
                trace.sleep(step)
            await self._sleep(step.seconds)
            return None
        if trace is None:
            try:
                return await self.call(step.action, step.params)
            except ServiceError as exc:
                return exc
        outcome: Outcome = None
        trace.before(step)
        try:
            outcome = await self.call(step.action, step.params)
        except ServiceError as exc:
            outcome = exc
        finally:
            trace.after(step, outcome)
        return outcome

    # -- operations and streams ------------------------------------------------------

    async def execute(self, operation: Operation[R]) -> R:
        """Run an operation to completion and return its result."""
        steps = operation.steps()
        trace = operation_trace("async", self.transport)
        try:
            step = next(steps)
            while True:
                step = resume(steps, await self._perform(step, trace))
        except StopIteration as done:
            if trace is not None:
                trace.end()
            return done.value  # type: ignore[no-any-return]
        except BaseException as exc:
            if trace is not None:
                trace.end(exc)
            raise

    async def stream(self, stream: Stream[T]) -> AsyncIterator[T]:
        """Drive a query/scan stream, yielding what it emits (lazily, page by page).

        A request is sent only when the consumer asks for a value past the last page
        received: leaving the ``async for`` sends nothing more.
        """
        trace = operation_trace("async", self.transport)
        error: BaseException | None = None
        try:
            out = next(stream)
            while True:
                if isinstance(out, Emit):
                    yield out.value
                    out = stream.send(None)
                else:
                    out = resume(stream, await self._perform(out, trace))
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

    async def create_table(self, table: Table, *, wait: bool = True) -> dict[str, Any]:
        """Create the physical table from the model (see `CreateTable`)."""
        return await self.execute(CreateTable(table, wait=wait))

    async def delete_table(self, table: Table | str, *, wait: bool = True) -> None:
        """Delete the physical table (and wait until it is gone)."""
        await self.execute(DeleteTable(table, wait=wait))

    async def table_exists(self, table: Table | str) -> bool:
        """Whether the physical table exists."""
        return await self.execute(TableExists(table))
