"""AsyncConnection: what is specific to the asyncio executor.

The behaviours of every operation are checked for the async executor by the integration
suite (``pytest tests/integration --executor async``, see tests/conftest.py). Here:

* each operation's behaviour is defined once: both executors send the same calls and
  return the same results for the same operations (driven against one in-process moto
  through a sync and an async face of the same client), and the executors hold no
  operation-specific code;
* what only an async executor has: lazy ``async for`` that stops sending, concurrent
  tasks on one connection, ``asyncio.sleep`` backoff, the client lifecycle, and the
  client it builds (against a moto server on a loopback port).
"""

from __future__ import annotations

import ast
import asyncio
import inspect
from collections.abc import Coroutine
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest
from moto import mock_aws

import singletable as st
import singletable.io.async_connection
import singletable.io.connection
from singletable.examples import T0, Actor, AuditEvent, activity, demo, sample_audit_log

R = TypeVar("R")
ACTOR = "u_8814"


def run(coroutine: Coroutine[Any, Any, R]) -> R:
    return asyncio.run(coroutine)


# -- one definition per operation ---------------------------------------------------------


class RecordingSyncClient:
    """A boto3 client that records every call (action, params) it is asked to make."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.client, name)

        def call(**params: Any) -> Any:
            self.calls.append((name, params))
            return method(**params)

        return call


class AsyncFace(RecordingSyncClient):
    """The same client behind coroutine methods, as aiobotocore's client presents it."""

    def __getattr__(self, name: str) -> Any:
        call = super().__getattr__(name)

        async def acall(**params: Any) -> Any:
            await asyncio.sleep(0)  # a real suspension point, as a network call has
            return call(**params)

        return acall


def scenario() -> list[tuple[str, Any]]:
    """(name, operation) pairs covering every kind of operation and query terminal."""
    events = [e for e in sample_audit_log() if isinstance(e, AuditEvent)]
    query = AuditEvent.query(actor_id=ACTOR).descending()
    later = T0 + timedelta(hours=6)
    return [
        ("batch write", st.BatchWrite(sample_audit_log())),
        ("get", Actor.get(actor_id=ACTOR)),
        ("put", Actor.put(Actor(actor_id="u_2", display_name="Bo"))),
        ("create exists", Actor.create(Actor(actor_id="u_2", display_name="again"))),
        ("update", Actor.update(actor_id="u_2").set(display_name="Bob")),
        ("update missing", Actor.update(actor_id="nobody").set(display_name="x")),
        ("delete", Actor.delete(Actor(actor_id="u_2", display_name="Bob"))),
        (
            "batch get",
            st.BatchGet(
                [
                    (Actor.plan(), {"actor_id": ACTOR}),
                    (AuditEvent.plan(), {"actor_id": ACTOR, "ts": events[3].ts, "seq": 3}),
                ]
            ),
        ),
        (
            "transact write",
            st.TransactWrite().put(Actor.put(Actor(actor_id="u_3", display_name="C"))),
        ),
        ("transact get", st.TransactGet().get(Actor.get(actor_id="u_3"))),
        ("all", query.page_size(5).all_operation()),
        ("first", query.gt(ts=later).first_operation()),
        ("count", query.count_operation()),
        ("page", query.page_size(4).limit(5).page_operation()),
        ("collection", activity.query(actor_id=ACTOR).all_operation()),
        ("scan", AuditEvent.scan().page_size(7).all_operation()),
    ]


def outcome(execute: Any, operation: Any) -> Any:
    try:
        return ("ok", execute(operation))
    except st.SingleTableError as exc:
        return ("error", type(exc).__name__, str(exc))


def test_both_executors_send_the_same_calls_and_return_the_same_results() -> None:
    runs = []
    for kind in ("sync", "async"):
        with mock_aws():
            raw = RecordingSyncClient(None)
            import boto3

            raw.client = boto3.client(
                "dynamodb",
                region_name="us-east-1",
                aws_access_key_id="testing",
                aws_secret_access_key="testing",
            )
            st.Connection(raw.client).create_table(demo)
            results: list[tuple[str, Any]] = []
            if kind == "sync":
                db = st.Connection(raw)  # type: ignore[arg-type]
                for name, operation in scenario():
                    results.append((name, outcome(db.execute, operation)))
            else:
                face = AsyncFace(raw.client)
                face.calls = raw.calls

                async def drive(face: AsyncFace, results: list[Any]) -> None:
                    adb = st.AsyncConnection(face)
                    for name, operation in scenario():
                        value: tuple[Any, ...]
                        try:
                            value = ("ok", await adb.execute(operation))
                        except st.SingleTableError as exc:
                            value = ("error", type(exc).__name__, str(exc))
                        results.append((name, value))

                run(drive(face, results))
            runs.append((results, raw.calls))
    (sync_results, sync_calls), (async_results, async_calls) = runs
    assert [name for name, _ in sync_results] == [name for name, _ in scenario()]
    assert async_calls == sync_calls
    assert async_results == sync_results
    # The scenario did exercise the error paths (thrown into the steps by both executors).
    errors = {name: value[1] for name, value in sync_results if value[0] == "error"}
    assert errors == {"create exists": "AlreadyExistsError", "update missing": "NotFoundError"}


OPERATION_WORDS = {
    # DynamoDB actions: an executor that names one holds operation-specific code.
    "get_item", "put_item", "update_item", "delete_item", "query", "scan",
    "batch_get_item", "batch_write_item", "transact_get_items", "transact_write_items",
    "create_table", "delete_table", "describe_table", "update_table",
    "update_time_to_live", "update_continuous_backups",
    "UnprocessedItems", "UnprocessedKeys", "LastEvaluatedKey", "Items", "Item",
    "ConditionalCheckFailedException", "ResourceNotFoundException", "TableStatus",
}  # fmt: skip


@pytest.mark.parametrize("module", [singletable.io.connection, singletable.io.async_connection])
def test_executors_hold_no_operation_specific_code(module: Any) -> None:
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    strings = {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    named = {word for word in OPERATION_WORDS if word in strings}
    assert not named, f"{module.__name__} names DynamoDB specifics {sorted(named)}"
    imported = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and "operations" in node.module
    }
    # Only the protocol (step types), streams and the table-lifecycle operations.
    assert imported <= {
        "singletable.operations.protocol",
        "singletable.operations.stream",
        "singletable.operations.tables",
    }


def test_the_two_executors_offer_the_same_interface() -> None:
    def public(obj: object) -> set[str]:
        return {n for n in dir(obj) if not n.startswith("_")}

    sync_names = public(st.Connection(region_name="us-east-1"))
    async_names = public(st.AsyncConnection()) - {"open", "close"}
    assert "client" in sync_names
    assert sync_names == async_names
    for name in sync_names - {"client", "listeners", "meter", "stream", "transport"}:
        assert inspect.iscoroutinefunction(getattr(st.AsyncConnection, name)), name
    assert inspect.isasyncgenfunction(st.AsyncConnection.stream)


# -- async-only behaviour, against a moto server ------------------------------------------


@pytest.fixture
def endpoint(moto_server: str, monkeypatch: pytest.MonkeyPatch) -> str:
    from tests.conftest import reset_moto_server

    for var in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    reset_moto_server(moto_server)
    return moto_server


class CountingClient:
    """Counts the requests an aiobotocore client is asked to send, by action."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.sent: list[str] = []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.client, name)

        async def call(**params: Any) -> Any:
            self.sent.append(name)
            return await method(**params)

        return call


async def _seeded(endpoint: str) -> st.AsyncConnection:
    adb = await st.AsyncConnection(endpoint_url=endpoint).open()
    await adb.create_table(demo)
    await st.BatchWrite(sample_audit_log()).run(adb)
    return adb


def test_async_for_fetches_lazily_and_stops_sending_when_the_loop_stops(endpoint: str) -> None:
    async def main() -> tuple[list[int], list[str], list[int]]:
        seeded = await _seeded(endpoint)
        counting = CountingClient(seeded.client)
        adb = st.AsyncConnection(counting)
        seen = []
        async for event in AuditEvent.query(actor_id=ACTOR).page_size(3).iter(adb):
            seen.append(event.seq)
            if len(seen) == 4:  # in the second page of three
                break
        sent_at_break = list(counting.sent)
        await asyncio.sleep(0.05)
        everything = await AuditEvent.query(actor_id=ACTOR).page_size(3).all(adb)
        await seeded.close()
        return seen, sent_at_break, [e.seq for e in everything]

    seen, sent, everything = run(main())
    assert len(everything) == 14
    assert seen == everything[:4]
    assert sent == ["query", "query"]  # two pages read, the third never asked for


def test_concurrent_tasks_share_one_connection(endpoint: str) -> None:
    async def main() -> tuple[list[Any], int, list[int]]:
        adb = await _seeded(endpoint)
        events = await AuditEvent.query(actor_id=ACTOR).all(adb)
        gets = [AuditEvent.get(actor_id=ACTOR, ts=e.ts, seq=e.seq).run(adb) for e in events]
        expected = events
        queries = [AuditEvent.query(actor_id=ACTOR).page_size(5).count(adb) for _ in range(8)]
        got = await asyncio.gather(*gets)
        counts = await asyncio.gather(*queries)
        await adb.close()
        assert got == expected  # each task got its own item back
        return got, len(events), counts

    got, n, counts = run(main())
    assert n == 14
    assert all(g is not None for g in got)
    assert counts == [14] * 8


def test_batch_retries_sleep_with_the_injected_coroutine() -> None:
    class Throttling:
        """Leaves half the items unprocessed on the first call."""

        def __init__(self) -> None:
            self.requests: list[int] = []

        async def batch_write_item(self, RequestItems: Any, **_: Any) -> dict[str, Any]:
            writes = RequestItems[demo.name]
            self.requests.append(len(writes))
            if len(self.requests) == 1:
                return {"UnprocessedItems": {demo.name: writes[len(writes) // 2 :]}}
            return {"UnprocessedItems": {}}

    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    client = Throttling()
    result = run(st.BatchWrite(sample_audit_log()).run(st.AsyncConnection(client, sleep=sleep)))
    n = len(sample_audit_log())
    assert client.requests == [n, n - n // 2]  # the unprocessed half is sent again
    assert (result.calls, result.retries) == (2, 1)
    assert len(slept) == 1
    assert 0 < slept[0] <= 5.0


def test_service_errors_are_service_errors(endpoint: str) -> None:
    async def main() -> st.ServiceError:
        async with st.AsyncConnection(endpoint_url=endpoint) as adb:
            with pytest.raises(st.ServiceError) as raised:
                await Actor.get(actor_id="a").run(adb)
            assert not await adb.table_exists(demo)
            return raised.value

    error = run(main())
    assert error.code == "ResourceNotFoundException"
    assert error.response is not None
    assert error.response["Error"]["Code"] == error.code


def test_the_client_it_builds_is_configured_like_connections(endpoint: str) -> None:
    from botocore.validate import ParamValidationDecorator

    async def main() -> tuple[Any, Any, float]:
        async with st.AsyncConnection(endpoint_url=endpoint, max_attempts=4) as adb:
            client = adb.client
            await adb.create_table(demo)
            await Actor.put(Actor(actor_id="a", display_name="A"), capacity="TOTAL").run(adb)
            return client.meta.config.retries, client._serializer, adb.meter.calls

    retries, serializer, metered = run(main())
    sync_client: Any = st.Connection(region_name="us-east-1", max_attempts=4).client
    # Standard retries with the attempts asked for; no parameter validation (botocore
    # wraps the serializer in a validator when it validates).
    expected = {"mode": "standard", "total_max_attempts": 5}
    assert retries == sync_client.meta.config.retries == expected
    assert not isinstance(serializer, ParamValidationDecorator)
    assert not isinstance(sync_client._serializer, ParamValidationDecorator)
    assert metered == 1  # the capacity meter records what the response reports


def test_lifecycle_open_close_and_a_given_client_left_open(endpoint: str) -> None:
    adb = st.AsyncConnection(endpoint_url=endpoint)
    with pytest.raises(st.SingleTableError, match="not open"):
        run(Actor.get(actor_id="a").run(adb))

    async def main() -> None:
        async with st.AsyncConnection(endpoint_url=endpoint) as owner:
            borrowed = st.AsyncConnection(owner.client)
            await borrowed.create_table(demo)
            await borrowed.close()  # not its client: still usable by its owner
            assert await owner.table_exists(demo)
        with pytest.raises(st.SingleTableError, match="not open"):
            owner.client  # noqa: B018 - closed again

    run(main())


def test_an_unreachable_endpoint_is_an_endpoint_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with socket.socket() as s:  # a loopback port nothing listens on once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    async def main() -> None:
        url = f"http://127.0.0.1:{port}"
        async with st.AsyncConnection(
            endpoint_url=url, region_name="us-east-1", max_attempts=1
        ) as adb:
            await Actor.get(actor_id="a").run(adb)

    with pytest.raises(st.EndpointError, match=f"cannot reach DynamoDB at http://127.0.0.1:{port}"):
        run(main())


def test_no_region_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_CONFIG_FILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")

    async def main() -> None:
        async with st.AsyncConnection():
            pass

    with pytest.raises(st.ConfigurationError, match="no AWS region"):
        run(main())
