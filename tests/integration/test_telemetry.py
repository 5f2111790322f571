"""Traces and metrics of operations against a real backend, read back from the SDK.

Each test runs on the executor, transport and backend the suite runs with (sync or async,
boto3 or lean, moto or DynamoDB Local), with OpenTelemetry's SDK and botocore's (and
aiobotocore's) instrumentation set up as an application would (`tests.otel_support`).
Whatever the combination, the trees must be the same: a singletable span per operation,
its DynamoDB client spans as children, and the same attributes on both.
"""

from __future__ import annotations

import io
import logging
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse, HTTPHeaders
from botocore.config import Config

import singletable as st
from tests.integration._executors import connect
from tests.integration.models import Models, bulk_models
from tests.otel_support import Otel, attrs, otel_fixture  # noqa: F401 - the fixture

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
else:
    DynamoDBClient = Any

THROTTLE_BODY = (
    b'{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",'
    b'"message":"The level of configured provisioned throughput for the table was exceeded."}'
)


def is_async(db: Any) -> bool:
    """Whether ``db`` is the suite's async executor (behind the sync interface)."""
    return hasattr(db, "adb")


def client_span(otel: Otel, parent: Any, wire: str) -> list[Any]:
    """The DynamoDB client spans ``wire`` (``"DynamoDB.GetItem"``) under ``parent``."""
    return [s for s in otel.children(parent) if s.name == wire]


def test_put_get_spans_parent_the_client_spans(m: Models, otel: Otel) -> None:
    otel.clear()
    m.Thing.put(m.Thing(box="b", thing_id="t1", name="n")).run(m.db)
    got = m.Thing.get(box="b", thing_id="t1").run(m.db)
    assert got is not None
    put, get = otel.one("put Thing"), otel.one("get Thing")
    for span, written, returned in ((put, 1, 0), (get, 0, 1)):
        attributes = attrs(span)
        assert span.parent is None
        assert attributes["db.system.name"] == "aws.dynamodb"
        assert attributes["db.collection.name"] == m.table.name
        assert attributes["singletable.entity"] == "Thing"
        assert attributes["singletable.calls"] == 1
        assert attributes["singletable.items.written"] == written
        assert attributes["singletable.items.returned"] == returned
        assert attributes["singletable.executor"] == ("async" if is_async(m.db) else "sync")
        # The async executor's aiobotocore serialises and parses as boto3 does.
        assert attributes["singletable.transport"] == getattr(m.db, "transport", "boto3")
    (put_call,) = client_span(otel, put, "DynamoDB.PutItem")
    (get_call,) = client_span(otel, get, "DynamoDB.GetItem")
    for call in (put_call, get_call):
        attributes = attrs(call)
        assert attributes["rpc.system"] == "aws-api"
        assert attributes["db.system"] == "dynamodb"
        assert attributes["aws.dynamodb.table_names"] == (m.table.name,)
        assert attributes["http.status_code"] == 200


def test_a_query_span_counts_pages_items_and_capacity(m: Models, otel: Otel) -> None:
    for i in range(5):
        m.Thing.put(m.Thing(box="b", thing_id=f"t{i}", name="n")).run(m.db)
    otel.clear()
    things = m.Thing.query(box="b").page_size(2).capacity("INDEXES").all(m.db)
    assert len(things) == 5
    query = otel.one("query Thing")
    attributes = attrs(query)
    assert attributes["singletable.pages"] == 3
    assert attributes["singletable.calls"] == 3
    assert attributes["singletable.items.returned"] == 5
    assert float(attributes["singletable.capacity.read_units"]) > 0
    assert len(client_span(otel, query, "DynamoDB.Query")) == 3
    capacity = otel.points("singletable.capacity.consumed")
    assert {a["singletable.capacity"] for a, _ in capacity} == {"read"}
    assert all(a["singletable.entity"] == "Thing" for a, _ in capacity)
    assert sum(v for _, v in capacity) == attributes["singletable.capacity.read_units"]
    durations = otel.points("singletable.operation.duration")
    assert [(a["db.operation.name"], n) for a, n in durations] == [("query", 1)]


def test_a_lazy_iteration_is_one_span_that_ends_when_the_reader_stops(
    m: Models, otel: Otel
) -> None:
    for i in range(4):
        m.Thing.put(m.Thing(box="b", thing_id=f"t{i}", name="n")).run(m.db)
    otel.clear()
    it = m.Thing.query(box="b").page_size(1).iter(m.db)
    assert next(it).thing_id == "t0"
    assert otel.named("query Thing") == []  # still reading
    it.close()
    query = otel.one("query Thing")
    attributes = attrs(query)
    assert attributes["singletable.abandoned"] is True
    assert attributes["singletable.pages"] == 1
    assert query.status.is_ok


def test_a_collection_query_span_is_named_after_the_collection(m: Models, otel: Otel) -> None:
    m.Doc.put(m.Doc(doc_id="d1", owner="o")).run(m.db)
    collection = st.Collection("docs", m.Doc)
    otel.clear()
    assert len(collection.query(doc_id="d1").all(m.db)) == 1
    span = otel.one("query docs")
    assert attrs(span)["singletable.entity"] == "docs"


def test_batch_and_transaction_spans_count_what_they_wrote(m: Models, otel: Otel) -> None:
    things = [m.Thing(box="b", thing_id=f"t{i:02d}", name="n") for i in range(30)]
    otel.clear()
    st.BatchWrite(puts=things).run(m.db)
    batch = otel.one("batch write")
    assert attrs(batch)["singletable.items.written"] == 30
    assert len(client_span(otel, batch, "DynamoDB.BatchWriteItem")) == 2
    st.TransactWrite().put(m.Thing.put(m.Thing(box="c", thing_id="x", name="n"))).run(m.db)
    transaction = otel.one("transaction write")
    assert attrs(transaction)["singletable.items.written"] == 1
    assert len(client_span(otel, transaction, "DynamoDB.TransactWriteItems")) == 1


def test_a_failed_condition_is_on_the_span_names_resolved(m: Models, otel: Otel) -> None:
    thing = m.Thing(box="b", thing_id="t1", name="n")
    m.Thing.put(thing).run(m.db)
    otel.clear()
    with pytest.raises(st.ConditionFailedError):
        m.Thing.create(thing).run(m.db)
    span = otel.one("put Thing")
    attributes = attrs(span)
    assert "attribute_not_exists" in attributes["singletable.condition"]
    assert "PK" in attributes["singletable.condition"]
    assert "#" not in attributes["singletable.condition"]
    assert attributes["error.type"] == "AlreadyExistsError"
    assert not span.status.is_ok
    (call,) = client_span(otel, span, "DynamoDB.PutItem")
    assert attrs(call)["http.status_code"] == 400


def test_a_version_conflict_is_logged_with_its_fields(
    m: Models, otel: Otel, caplog: pytest.LogCaptureFixture
) -> None:
    doc = m.Doc.put(m.Doc(doc_id="d1", owner="o")).run(m.db)
    m.Doc.put(doc).run(m.db)
    caplog.set_level(logging.DEBUG, logger="singletable")
    with pytest.raises(st.VersionConflictError):
        m.Doc.put(doc).run(m.db)  # stale version
    (record,) = [r for r in caplog.records if r.getMessage().startswith("version conflict")]
    assert record.levelno == logging.INFO
    assert record.__dict__["entity"] == "Doc"
    assert record.__dict__["operation"] == "put"


def test_a_successful_request_logs_nothing_at_info(
    m: Models, otel: Otel, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="singletable")
    m.Thing.put(m.Thing(box="b", thing_id="t1", name="n")).run(m.db)
    m.Thing.query(box="b").all(m.db)
    assert [r for r in caplog.records if r.name.startswith("singletable")] == []


# -- throttles: a canned answer ahead of the backend --------------------------------------


class _AsyncBody:
    def __init__(self, body: bytes) -> None:
        self.body = body

    async def read(self) -> bytes:
        return self.body


class _SyncBody:
    def __init__(self, body: bytes) -> None:
        self.body = body

    def stream(self, **_: Any) -> Any:
        yield self.body


class Throttle:
    """A ``before-send`` handler answering the first ``times`` requests with a throttle."""

    def __init__(self, times: int, *, aio: bool) -> None:
        self.times = times
        self.aio = aio
        self.sent = 0

    def __call__(self, request: Any, **_: Any) -> Any:
        self.sent += 1
        if self.sent > self.times:
            return None  # the backend answers
        headers = {"content-type": "application/x-amz-json-1.0", "x-amzn-requestid": "throttle"}
        if self.aio:
            from aiobotocore.awsrequest import AioAWSResponse

            return AioAWSResponse(request.url, 400, headers, _AsyncBody(THROTTLE_BODY))
        return AWSResponse(
            request.url, 400, HTTPHeaders.from_dict(headers), _SyncBody(THROTTLE_BODY)
        )


def throttled_db(client: DynamoDBClient, times: int, attempts: int = 2) -> tuple[Any, Throttle]:
    """An executor like the suite's over a client allowed ``attempts`` tries, throttled first."""
    credentials = client._request_signer._credentials  # type: ignore[attr-defined]
    fresh = boto3.client(
        "dynamodb",
        endpoint_url=client.meta.endpoint_url,
        region_name=client.meta.region_name,
        aws_access_key_id=credentials.access_key,
        aws_secret_access_key=credentials.secret_key,
        config=Config(retries={"mode": "standard", "total_max_attempts": attempts}),
    )
    db: Any = connect(fresh)
    aio = is_async(db)
    events = (db.adb.client if aio else fresh).meta.events
    throttle = Throttle(times, aio=aio)
    events.register_first("before-send.dynamodb", throttle)
    return db, throttle


def test_throttled_then_answered(
    m: Models, otel: Otel, caplog: pytest.LogCaptureFixture, dynamodb_client: DynamoDBClient
) -> None:
    m.Thing.put(m.Thing(box="b", thing_id="t1", name="n")).run(m.db)
    db, throttle = throttled_db(dynamodb_client, times=1, attempts=3)
    otel.clear()
    caplog.set_level(logging.DEBUG, logger="singletable")
    assert m.Thing.get(box="b", thing_id="t1").run(db) is not None
    assert throttle.sent == 2
    span = otel.one("get Thing")
    attributes = attrs(span)
    assert attributes["singletable.retries"] == 1
    assert attributes["singletable.throttles"] == 1
    assert span.status.is_ok
    (call,) = client_span(otel, span, "DynamoDB.GetItem")
    assert attrs(call)["retry_attempts"] == 1
    assert [v for _, v in otel.points("singletable.throttles")] == [1]
    assert [v for _, v in otel.points("singletable.retries")] == [1]
    throttles = [r for r in caplog.records if r.__dict__.get("error_code")]
    assert [(r.levelno, r.__dict__["entity"]) for r in throttles] == [(logging.INFO, "Thing")]


def test_throttled_until_the_retries_ran_out(
    m: Models, otel: Otel, caplog: pytest.LogCaptureFixture, dynamodb_client: DynamoDBClient
) -> None:
    db, throttle = throttled_db(dynamodb_client, times=99, attempts=2)
    otel.clear()
    caplog.set_level(logging.DEBUG, logger="singletable")
    with pytest.raises(st.ServiceError) as info:
        m.Thing.get(box="b", thing_id="t1").run(db)
    assert info.value.code == "ProvisionedThroughputExceededException"
    # Every try was throttled (the async executor's client allows its own number of tries).
    tries = throttle.sent
    assert tries >= 2
    span = otel.one("get Thing")
    attributes = attrs(span)
    assert attributes["error.type"] == "ProvisionedThroughputExceededException"
    assert attributes["singletable.throttles"] == tries
    assert attributes["singletable.retries"] == tries - 1
    assert not span.status.is_ok
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.__dict__["retries"] for r in warnings] == [tries - 1]


# -- bulk jobs --------------------------------------------------------------------------


def test_an_export_is_a_span_per_segment_over_its_scans(
    dynamodb_client: DynamoDBClient, table_name: str, otel: Otel
) -> None:
    table, Thing, _, _ = bulk_models(table_name)
    db = connect(dynamodb_client)
    db.create_table(table)
    st.load(db, [Thing(box=f"b{i % 3}", n=i) for i in range(30)], out=io.StringIO())
    otel.clear()
    result = st.export(db, Thing, io.StringIO(), segments=3, progress_out=io.StringIO())
    assert result.written == 30
    segments = otel.named("export segment")
    assert sorted(attrs(s)["aws.dynamodb.segment"] for s in segments) == [0, 1, 2]
    for segment in segments:
        assert attrs(segment)["db.collection.name"] == table_name
        scans = [s for s in otel.children(segment) if s.name.startswith("scan")]
        assert scans, "each segment's scan pages are its children"
    scanned = sum(
        attrs(s)["singletable.items.returned"] for s in otel.spans() if s.name.startswith("scan")
    )
    assert scanned == 30
    progress = otel.points("singletable.job.items")
    written = [n for a, n in progress if a["singletable.job.count"] == "written"]
    assert sum(written) == 30


def tree(otel: Otel, root: Any, depth: int = 0) -> list[str]:
    """The span tree under ``root`` as indented names, children in start order."""
    lines = ["  " * depth + root.name]
    for child in sorted(otel.children(root), key=lambda s: s.start_time or 0):
        lines += tree(otel, child, depth + 1)
    return lines


def test_a_migration_is_one_trace_of_segments_scans_and_rewrites(
    dynamodb_client: DynamoDBClient,
    table_name: str,
    otel: Otel,
    caplog: pytest.LogCaptureFixture,
) -> None:
    table_a = st.Table(table_name, indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])

    class Counter(st.Entity, table=table_a, pk="C#{cid}", sk="C"):
        cid: str
        hits: int = 0

    db = connect(dynamodb_client)
    db.create_table(table_a)
    for i in range(4):
        Counter.put(Counter(cid=f"c{i}")).run(db)
    snapshot = st.load_snapshot(st.snapshot_json(table_a))
    table_b = st.Table(table_name, indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])

    class Moved(st.Entity, table=table_b, pk="C#{cid}", sk="CNT", name="Counter"):
        cid: str
        hits: int = 0

    otel.clear()
    caplog.set_level(logging.INFO, logger="singletable.migrations")
    report = st.migrate(db, table_b, snapshot, segments=2, out=io.StringIO())
    [stats] = report.rewrites.values()
    assert stats.rewritten == 4
    (root,) = otel.named("migrate")
    assert root.parent is None
    shape = tree(otel, root)
    assert (
        sorted(line for line in shape if line.strip() == "migrate segment")
        == ["  migrate segment"] * 2
    )
    assert all(s.context.trace_id == root.context.trace_id for s in otel.spans())
    assert sum(1 for line in shape if line.strip().startswith("scan")) >= 2
    assert [line.strip() for line in shape].count("rewrite Counter") == 4
    rewrites = [r for r in caplog.records if r.__dict__.get("phase") == "rewrite"]
    assert [(r.__dict__["rewritten"], r.__dict__["failed"]) for r in rewrites] == [(4, 0)]
