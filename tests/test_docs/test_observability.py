"""The example of docs/observability.md runs and makes the trace the page shows."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.trace import SpanKind

import singletable as st
from docs_src import observability
from tests.otel_support import Otel, attrs, otel_fixture  # noqa: F401 - the fixture


@pytest.fixture
def db() -> Iterator[st.Connection]:
    with st.embedded(observability.shop) as db:
        yield db


def test_the_stream_handler_continues_the_trace_of_the_request(
    db: st.Connection, otel: Otel
) -> None:
    observability.confirmed.clear()
    out = observability.main(db, otel.tracer_provider)
    assert out["response"] == {"batchItemFailures": []}
    assert out["confirmed"] == [7]
    request = otel.one("POST /orders")
    put = otel.one("put Order")
    process = otel.one("process Order INSERT")
    assert put.parent is not None
    assert put.parent.span_id == request.context.span_id
    assert [s.name for s in otel.children(put)] == ["DynamoDB.PutItem"]
    assert process.kind is SpanKind.CONSUMER
    assert process.context.trace_id == request.context.trace_id
    assert process.parent is not None
    assert process.parent.span_id == request.context.span_id
    assert out["order"].traceparent.startswith(
        f"00-{request.context.trace_id:032x}-{request.context.span_id:016x}-"
    )
    assert attrs(process)["singletable.entity"] == "Order"
