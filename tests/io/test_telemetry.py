"""singletable.io.telemetry: its off paths, the lean client span, async cancellation, streams.

The operations against a live backend are in tests/integration/test_telemetry.py; here are
what needs no backend, or both transports in one test (moto in-process).
"""

from __future__ import annotations

import asyncio
import contextlib
import string
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from hypothesis import given
from hypothesis import strategies as hs
from moto import mock_aws
from opentelemetry import trace

import singletable as st
from singletable.io import telemetry, work_spans
from singletable.operations.protocol import Call
from tests.otel_support import Otel, attrs, otel_fixture  # noqa: F401 - the fixture

REGION = "eu-west-1"


# -- off ----------------------------------------------------------------------------------


def test_nothing_is_imported_or_recorded_before_the_program_loads_the_api() -> None:
    script = textwrap.dedent(
        """
        import sys
        import singletable
        from singletable.io import telemetry, work_spans
        assert telemetry.operation_trace("sync", "boto3") is None
        assert work_spans.traceparent() is None
        loaded = sorted(m for m in sys.modules if m.startswith("opentelemetry"))
        assert loaded == [], loaded
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, cwd=".")


def test_the_api_without_an_sdk_records_nothing() -> None:
    # This process has loaded the API (the SDK too) but set no provider: the API's proxies.
    assert type(trace.get_tracer_provider()).__name__ == "ProxyTracerProvider"
    assert telemetry.operation_trace("sync", "boto3") is None
    assert work_spans.traceparent() is None


# -- the lean transport's client span --------------------------------------------------------


@pytest.fixture
def moto_client() -> Iterator[Any]:
    with mock_aws():
        yield boto3.client(
            "dynamodb",
            region_name=REGION,
            aws_access_key_id="t",
            aws_secret_access_key="t",
        )


def _workload(table: st.Table) -> Callable[[st.Connection], None]:
    class Order(
        st.Entity,
        table=table,
        pk="C#{c}",
        sk="O#{o}",
        indexes={"GSI1": st.IndexKeys(pk="S#{status}", sk="{o}")},
    ):
        c: str
        o: int
        status: str = "new"

    def run(db: st.Connection) -> None:
        orders = [Order(c="a", o=i) for i in range(5)]
        Order.put(orders[0], capacity="INDEXES").run(db)
        st.BatchWrite(puts=orders[1:]).run(db)
        Order.get(c="a", o=1, consistent=True).run(db)
        Order.query(c="a").page_size(2).capacity("TOTAL").all(db)
        Order.query(index="GSI1", status="new").descending().all(db)
        Order.scan().segment(0, 2).all(db)
        Order.update(c="a", o=1).set(status="paid").run(db)
        st.BatchGet([(Order.plan(), {"c": "a", "o": i}) for i in range(3)]).run(db)
        st.TransactWrite().put(Order.put(Order(c="b", o=1))).run(db)
        Order.delete(c="a", o=4).run(db)
        with contextlib.suppress(st.ConditionFailedError):
            Order.create(orders[0]).run(db)

    return run


def _client_spans(otel: Otel) -> list[tuple[str, Any, dict[str, Any]]]:
    spans = []
    for span in otel.spans():
        if span.kind is trace.SpanKind.CLIENT:
            attributes = attrs(span)
            attributes.pop("aws.request_id", None)  # moto makes a new one per request
            spans.append((span.name, span.status.status_code, attributes))
    return spans


def test_the_lean_transport_makes_the_client_spans_botocore_makes(
    moto_client: Any, otel: Otel
) -> None:
    table = st.Table("orders", indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])
    run = _workload(table)
    seen = []
    for transport in ("boto3", "lean"):
        db = st.Connection(moto_client, transport=transport)
        assert db.transport == transport
        db.create_table(table)
        otel.clear()
        run(db)
        seen.append(_client_spans(otel))
        db.delete_table(table)
    boto3_spans, lean_spans = seen
    assert len(boto3_spans) >= 12
    assert lean_spans == boto3_spans
    # Each is the child of singletable's span, on both transports.
    for span in otel.spans():
        if span.kind is trace.SpanKind.CLIENT:
            assert span.parent is not None


def test_no_client_span_on_the_lean_transport_when_botocore_is_not_instrumented(
    moto_client: Any, otel: Otel
) -> None:
    from opentelemetry.instrumentation.botocore import BotocoreInstrumentor

    BotocoreInstrumentor().uninstrument()  # type: ignore[no-untyped-call]
    table = st.Table("orders", indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])
    run = _workload(table)
    names = []
    for transport in ("boto3", "lean"):
        db = st.Connection(moto_client, transport=transport)
        db.create_table(table)
        otel.clear()
        run(db)
        names.append([s.name for s in otel.spans()])
        db.delete_table(table)
    assert names[0] == names[1]
    assert "put Order" in names[0]
    assert not any(name.startswith("DynamoDB.") for name in names[0])


# -- the async executor: an iteration cancelled or left -------------------------------------


class _ScriptedClient:
    """An aiobotocore stand-in: each query answers the next page; ``None`` never answers."""

    def __init__(self, pages: list[dict[str, Any] | None]) -> None:
        self.pages = pages
        self.sent = 0
        self.waiting = asyncio.Event()

    async def query(self, **params: Any) -> dict[str, Any]:
        page = self.pages[self.sent]
        self.sent += 1
        if page is None:
            self.waiting.set()
            await asyncio.Event().wait()  # until cancelled
        assert page is not None
        return page


def _page(table: st.Table, entity: Any, n: int, more: bool) -> dict[str, Any]:
    items = [entity.plan().to_item(entity(c="a", o=n))]
    page: dict[str, Any] = {"Items": items, "Count": 1, "ScannedCount": 1}
    if more:
        page["LastEvaluatedKey"] = {"PK": {"S": "C#a"}, "SK": {"S": f"O#{n}"}}
    return page


def _entity(table: st.Table) -> Any:
    class Order(st.Entity, table=table, pk="C#{c}", sk="O#{o}"):
        c: str
        o: int

    return Order


def test_an_async_iteration_left_early_ends_its_span(otel: Otel) -> None:
    table = st.Table("orders")
    Order = _entity(table)
    client = _ScriptedClient([_page(table, Order, i, more=True) for i in range(3)])

    async def main() -> None:
        adb = st.AsyncConnection(client)
        stream = Order.query(c="a").page_size(1).iter(adb)
        async for order in stream:
            assert order.o == 0
            break
        await stream.aclose()

    asyncio.run(main())
    assert client.sent == 1
    span = otel.one("query Order")
    attributes = attrs(span)
    assert attributes["singletable.abandoned"] is True
    assert attributes["singletable.pages"] == 1
    assert attributes["singletable.executor"] == "async"
    assert span.status.is_unset


def test_an_async_iteration_cancelled_mid_request_ends_its_span_as_cancelled(
    otel: Otel,
) -> None:
    table = st.Table("orders")
    Order = _entity(table)
    client = _ScriptedClient([_page(table, Order, 0, more=True), None])

    async def main() -> None:
        adb = st.AsyncConnection(client)
        task = asyncio.ensure_future(Order.query(c="a").page_size(1).all(adb))
        await client.waiting.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    span = otel.one("query Order")
    attributes = attrs(span)
    assert attributes["error.type"] == "CancelledError"
    assert attributes["singletable.pages"] == 1
    assert attributes["singletable.calls"] == 2
    assert not span.status.is_ok
    # The context was detached: nothing of the operation is current afterwards.
    assert not trace.get_current_span().get_span_context().is_valid


# -- streams: the trace an item carries --------------------------------------------------


def _record(image: dict[str, Any], event: str = "INSERT") -> dict[str, Any]:
    return {
        "eventID": "e1",
        "eventName": event,
        "dynamodb": {
            "Keys": {"PK": image["PK"], "SK": image["SK"]},
            "NewImage": image,
            "SequenceNumber": "100",
            "StreamViewType": "NEW_IMAGE",
        },
    }


def test_a_stream_handler_continues_the_trace_its_item_carries(otel: Otel) -> None:
    table = st.Table("orders", stream="NEW_IMAGE")

    class Order(st.Entity, table=table, pk="C#{c}", sk="O#{o}"):
        c: str
        o: int
        traceparent: str | None = None

    seen: list[Any] = []
    router = st.StreamRouter(table, around=work_spans.stream_tracing())

    @router.on(Order, "INSERT")
    def placed(change: st.ChangeRecord) -> None:
        seen.append(trace.get_current_span().get_span_context())

    tracer = otel.tracer_provider.get_tracer("app")
    with tracer.start_as_current_span("checkout") as producer:
        carried = work_spans.traceparent()
    assert carried is not None
    item = Order.plan().to_item(Order(c="a", o=1, traceparent=carried))
    plain = Order.plan().to_item(Order(c="a", o=2))
    report = router.dispatch([_record(item), _record(plain)])
    assert report.handled == 2
    spans = otel.named("process Order INSERT")
    assert len(spans) == 2
    continued, fresh = spans
    assert continued.context.trace_id == producer.get_span_context().trace_id
    assert continued.parent is not None
    assert continued.parent.span_id == producer.get_span_context().span_id
    assert continued.kind is trace.SpanKind.CONSUMER
    assert fresh.parent is None
    assert fresh.context.trace_id != producer.get_span_context().trace_id
    assert [c.span_id for c in seen] == [continued.context.span_id, fresh.context.span_id]


def test_a_failing_stream_handler_span_records_the_error(otel: Otel) -> None:
    table = st.Table("orders", stream="NEW_IMAGE")

    class Order(st.Entity, table=table, pk="C#{c}", sk="O#{o}"):
        c: str
        o: int

    router = st.StreamRouter(table, around=work_spans.stream_tracing())

    @router.on(Order)
    def fails(change: st.ChangeRecord) -> None:
        raise RuntimeError("boom")

    report = router.dispatch([_record(Order.plan().to_item(Order(c="a", o=1)))])
    assert report.failed == "100"
    span = otel.one("process Order INSERT")
    assert not span.status.is_ok
    assert [e.name for e in span.events] == ["exception"]


# -- the failed condition, names resolved ------------------------------------------------


@given(
    names=hs.lists(
        hs.text(alphabet=string.ascii_letters + string.digits + "_#", min_size=1, max_size=8),
        min_size=1,
        max_size=14,
    )
)
def test_a_failed_condition_reads_with_every_name_resolved(names: list[str]) -> None:
    # Up to 14 placeholders: #n1 must not be replaced inside #n10, nor a name such as
    # "#n1" be taken for a placeholder once it is in the text.
    text = " AND ".join(f"#n{i} = :v{i}" for i in range(len(names)))
    params = {
        "TableName": "t",
        "ConditionExpression": text,
        "ExpressionAttributeNames": {f"#n{i}": name for i, name in enumerate(names)},
    }
    error = st.ServiceError("ConditionalCheckFailedException", "failed")
    resolved = telemetry.failed_condition(Call("put_item", params), error)
    assert resolved == " AND ".join(f"{name} = :v{i}" for i, name in enumerate(names))


def test_a_cancelled_transaction_names_the_condition_of_the_item_that_failed() -> None:
    params = {
        "TransactItems": [
            {
                "Put": {
                    "TableName": "t",
                    "Item": {},
                    "ConditionExpression": "attribute_exists(#a)",
                    "ExpressionAttributeNames": {"#a": "PK"},
                }
            },
            {
                "Delete": {
                    "TableName": "t",
                    "Key": {},
                    "ConditionExpression": "#v = :v",
                    "ExpressionAttributeNames": {"#v": "version"},
                }
            },
        ]
    }
    reasons = [{"Code": "None"}, {"Code": "ConditionalCheckFailed"}]
    error = st.ServiceError(
        "TransactionCanceledException", "cancelled", response={"CancellationReasons": reasons}
    )
    call = Call("transact_write_items", params)
    assert telemetry.failed_condition(call, error) == "version = :v"
    throttled = st.ServiceError("ThrottlingException", "slow down")
    assert telemetry.failed_condition(call, throttled) is None
