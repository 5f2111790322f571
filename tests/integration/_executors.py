"""The executor the integration tests run on: sync `Connection` or the asyncio executor.

Integration tests get their executor from `connect(client)` instead of building
``st.Connection(client)`` themselves. With ``--executor async`` (or ``both``, which
parametrises every integration test as ``[sync]`` / ``[async]``) `connect` returns a
`BlockingAsyncConnection`: a real `singletable.AsyncConnection` with its own aiobotocore
client to the same endpoint as ``client``, run on an event loop in a background thread and
called through the synchronous executor's interface. So every behaviour the suite checks
(results, conditions, pagination, cursors, batches, transactions, migrations, errors) is
checked through aiobotocore's HTTP and the async driving loop, with one copy of each test.

A `RecordingClient` given to `connect` keeps recording: its query/scan calls are recorded
from the aiobotocore client.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import AsyncExitStack
from typing import Any, TypeVar, cast

import singletable as st
from singletable.operations.protocol import Operation
from singletable.operations.stream import Stream
from tests.integration.recording import RecordingClient

T = TypeVar("T")
R = TypeVar("R")

EXECUTORS = ("sync", "async")


_SESSIONS: dict[tuple[str, str], Any] = {}


class _State:
    kind = "sync"
    opened: list[BlockingAsyncConnection] = []  # noqa: RUF012 - closed after each test


def use(kind: str) -> None:
    """Select the executor kind `connect` builds (set per test by the conftest fixture).

    ``"none"`` for a test marked ``executor_independent``: it runs once, so a `connect`
    from it would check one executor where the marker claims it checks none.
    """
    _State.kind = kind


def close_all() -> None:
    """Close every async executor `connect` opened (after each test)."""
    while _State.opened:
        _State.opened.pop().close()


def connect(client: Any) -> st.Connection:
    """The executor for ``client``'s endpoint: `st.Connection` or `BlockingAsyncConnection`."""
    if _State.kind == "none":
        raise AssertionError(
            "this test is marked executor_independent but asks connect() for the executor "
            "under test: remove the marker so that it runs on every executor"
        )
    if _State.kind == "sync":
        return st.Connection(client)
    bridge = BlockingAsyncConnection(client)
    _State.opened.append(bridge)
    # Typed as what it stands in for: the tests call the synchronous executor's interface.
    return cast(st.Connection, bridge)


class _AsyncRecorder:
    """Records an aiobotocore client's query/scan calls into a `RecordingClient`."""

    def __init__(self, client: Any, recorder: RecordingClient) -> None:
        self._client = client
        self._recorder = recorder

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if name not in ("query", "scan"):
            return attr

        async def recorded(**params: Any) -> Any:
            response = await attr(**params)
            self._recorder.calls.append((name, params, response))
            return response

        return recorded


class BlockingAsyncConnection:
    """`singletable.AsyncConnection` behind the synchronous executor's interface.

    The event loop runs in its own thread, so code that calls the executor from worker
    threads (the migration runner's parallel scan segments) works as with `Connection`.
    """

    def __init__(self, client: Any) -> None:
        raw = client._client if isinstance(client, RecordingClient) else client
        self.raw_client = raw
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._stack = AsyncExitStack()
        credentials = raw._request_signer._credentials
        self.adb = self._run(self._open(client, raw, credentials))

    async def _open(self, client: Any, raw: Any, credentials: Any) -> st.AsyncConnection:
        from aiobotocore.session import get_session

        # One session per credentials for the whole run: a new session loads the service
        # model again (~0.3 s); a client from a warm one takes milliseconds.
        key = (credentials.access_key, credentials.secret_key)
        session = _SESSIONS.get(key)
        if session is None:
            session = _SESSIONS[key] = get_session()
            session.set_credentials(*key)
        where = {"endpoint_url": raw.meta.endpoint_url, "region_name": raw.meta.region_name}
        if not isinstance(client, RecordingClient):
            # The client AsyncConnection builds itself (its own config) is the one tested.
            adb = st.AsyncConnection(session=session, max_attempts=3, **where)
            await self._stack.enter_async_context(adb)
            return adb
        aio_client = await self._stack.enter_async_context(
            session.create_client("dynamodb", **where)
        )
        return st.AsyncConnection(_AsyncRecorder(aio_client, client))

    def _run(self, coroutine: Coroutine[Any, Any, R]) -> R:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def close(self) -> None:
        try:
            self._run(self._stack.aclose())
            self._run(self._loop.shutdown_asyncgens())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._loop.close()

    # -- the synchronous executor's interface -----------------------------------------

    @property
    def meter(self) -> st.CapacityMeter:
        return self.adb.meter

    def call(self, action: str, params: dict[str, Any]) -> dict[str, Any]:
        return self._run(self.adb.call(action, params))

    def execute(self, operation: Operation[R]) -> R:
        return self._run(self.adb.execute(operation))

    def stream(self, stream: Stream[T]) -> Iterator[T]:
        agen = self.adb.stream(stream)

        async def step() -> tuple[bool, Any]:
            try:
                return True, await agen.__anext__()
            except StopAsyncIteration:
                return False, None

        try:
            while True:
                more, value = self._run(step())
                if not more:
                    return
                yield value
        finally:
            self._run(_aclose(agen))

    def create_table(self, table: Any, *, wait: bool = True) -> dict[str, Any]:
        return self._run(self.adb.create_table(table, wait=wait))

    def delete_table(self, table: Any, *, wait: bool = True) -> None:
        self._run(self.adb.delete_table(table, wait=wait))

    def table_exists(self, table: Any) -> bool:
        return self._run(self.adb.table_exists(table))


async def _aclose(agen: Any) -> None:
    close: Callable[[], Awaitable[None]] = agen.aclose
    await close()
