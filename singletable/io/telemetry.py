"""Traces, metrics and logs of what the executors run (OpenTelemetry, optional).

Both executors hand every operation and stream they drive to `operation_trace`, and every
request to the trace it returns; that is all they know of telemetry. What is recorded:

* **a span per singletable operation** (``put Order``, ``query Order``, ``collection
  CustomerOrders``...), the parent of the DynamoDB client spans: botocore's (and
  aiobotocore's) when ``opentelemetry-instrumentation-botocore`` instruments them, and on
  the lean transport, which bypasses botocore's ``_make_api_call``, the span that
  instrumentation would have made, made here (`lean_sender`) with the same name, kind and
  attributes, so that a dashboard cannot tell the transports apart;
* **metrics** on the ``singletable`` meter: consumed capacity (read/write, by table,
  index, entity and operation), throttles, retries, operation duration;
* **logs** under ``singletable.io``: retries, throttles, unprocessed items, failed
  conditions (DEBUG), throttling that exhausted the retries (WARNING). A successful
  request that needed no retry logs nothing.

Attribute names follow the OpenTelemetry semantic conventions **v1.44.0** (`SEMCONV`):
database client spans (``db.system.name = "aws.dynamodb"``, ``db.operation.name``,
``db.collection.name``, ``error.type``; stable) and AWS DynamoDB (``aws.dynamodb.*``;
in development, so they may change); what they have no name for is ``singletable.*``.
The client spans of the lean transport copy what ``opentelemetry-instrumentation-botocore``
0.66b2 emits, which still uses the older names (``db.system = "dynamodb"``,
``db.operation``, ``net.peer.name``): equal to botocore's is the point.

Cost: until the program imports ``opentelemetry-api`` (the ``otel`` extra; an SDK or an
auto-instrumentation does) `operation_trace` returns ``None`` after one ``sys.modules``
look-up, and nothing of OpenTelemetry is imported; with the API but no SDK (the API's own
proxy or no-op providers) it returns ``None`` after a clock read: the providers are looked
up at most once a second (`LOOK_UP_EVERY`; `refresh` makes the next operation look). Spans,
instruments and attribute work exist only when a real SDK provider is set
(``benchmarks/bench_telemetry.py`` measures all three).
"""

from __future__ import annotations

import logging
import re
import sys
import time
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

from singletable.errors import ServiceError
from singletable.operations.protocol import Call, Sleep

# OpenTelemetry's API, once the program has loaded it (`_api_loaded`): importing it costs
# tens of milliseconds, which `import singletable` does not pay for a program that never
# sets up OpenTelemetry.
otel_context: Any = None
trace: Any = None
metrics: Any = None
SpanKind: Any = None
Status: Any = None
StatusCode: Any = None

__all__ = [
    "SEMCONV",
    "OperationTrace",
    "observe_throttles",
    "operation_trace",
    "refresh",
    "resolve",
    "throttle_observer",
]

#: The version of OpenTelemetry's semantic conventions the attribute names follow.
SEMCONV = "1.44.0"
SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV}"

logger = logging.getLogger("singletable.io")

#: The singletable operation each action's calls belong to, when no Call names another.
OPERATION_NAMES: dict[str, str] = {
    "get_item": "get",
    "put_item": "put",
    "update_item": "update",
    "delete_item": "delete",
    "query": "query",
    "scan": "scan",
    "batch_get_item": "batch get",
    "batch_write_item": "batch write",
    "transact_get_items": "transaction get",
    "transact_write_items": "transaction write",
    "create_table": "create table",
    "delete_table": "delete table",
    "describe_table": "describe table",
    "update_table": "update table",
    "update_time_to_live": "update ttl",
}
_READS = frozenset(("get_item", "query", "scan", "batch_get_item", "transact_get_items"))
WIRE_NAMES = {action: "".join(w.title() for w in action.split("_")) for action in OPERATION_NAMES}
WIRE_NAMES["update_time_to_live"] = "UpdateTimeToLive"
THROTTLE_CODES = frozenset(
    (
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "TransactionInProgressException",
    )
)

#: The trace of the operation whose request is being sent (read by `throttle_observer`).
_current: ContextVar[OperationTrace | None] = ContextVar("singletable_trace", default=None)


# -- providers: resolved once per pair of providers ------------------------------------


class Instruments:
    """The tracer and instruments of one (tracer provider, meter provider) pair."""

    def __init__(self, tracer_provider: Any, meter_provider: Any) -> None:
        self.tracer_provider = tracer_provider
        self.meter_provider = meter_provider
        self.tracer = tracer_provider.get_tracer("singletable", schema_url=SCHEMA_URL)
        meter = meter_provider.get_meter("singletable", schema_url=SCHEMA_URL)
        self.capacity = meter.create_counter(
            "singletable.capacity.consumed",
            unit="{capacity_unit}",
            description="Capacity units DynamoDB reported consumed (ReturnConsumedCapacity)",
        )
        self.throttles = meter.create_counter(
            "singletable.throttles", unit="{request}", description="Requests DynamoDB throttled"
        )
        self.retries = meter.create_counter(
            "singletable.retries",
            unit="{retry}",
            description="Requests sent again: botocore's retries and batch backoffs",
        )
        self.job_items = meter.create_counter(
            "singletable.job.items",
            unit="{item}",
            description="Progress of bulk jobs: items scanned, rewritten, written, skipped, failed",
        )
        self.duration = meter.create_histogram(
            "singletable.operation.duration",
            unit="s",
            description="Duration of singletable operations, requests and backoff included",
        )


_instruments: Instruments | None = None
#: When the providers were last looked up (`time.monotonic`), and what was found then.
_looked_up = float("-inf")
_found: Instruments | None = None
#: How long what was found holds. The API's provider getters read the environment on
#: every call while no SDK is set (about a microsecond each, twice per operation: a few
#: per cent of a lean GetItem's client CPU in benchmarks/bench_telemetry.py), so they are
#: asked at most once a second; an SDK set up later is seen within that second.
LOOK_UP_EVERY = 1.0


def refresh() -> None:
    """Look at OpenTelemetry's providers again at the next operation (not a second later).

    For a program (or a test) that sets or replaces the providers after singletable has
    run operations and wants the very next one recorded with them.
    """
    global _looked_up
    _looked_up = float("-inf")


def _api_provider(provider: Any, package: str) -> bool:
    # The API's own providers (the proxy before an SDK is set, the no-op) record nothing.
    return type(provider).__module__.startswith(package)


def _api_loaded() -> bool:
    """Whether the program has loaded OpenTelemetry's API (then it is bound here).

    No SDK can have been set up by a program that has not imported the API, so until it
    has, nothing is imported and nothing is recorded.
    """
    global otel_context, trace, metrics, SpanKind, Status, StatusCode
    if trace is not None:
        return True
    if "opentelemetry.trace" not in sys.modules and "opentelemetry.metrics" not in sys.modules:
        return False
    try:
        from opentelemetry import context as api_context
        from opentelemetry import metrics as api_metrics
        from opentelemetry import trace as api_trace
    except ImportError:  # pragma: no cover - a broken installation
        return False
    otel_context, metrics = api_context, api_metrics
    SpanKind, Status, StatusCode = api_trace.SpanKind, api_trace.Status, api_trace.StatusCode
    trace = api_trace
    return True


def resolve() -> Instruments | None:
    """The instruments to record with, or ``None`` when nothing would be recorded."""
    global _looked_up, _found
    if trace is None and not _api_loaded():
        return None
    now = time.monotonic()
    if now - _looked_up < LOOK_UP_EVERY:
        return _found
    _found = _look_up()
    _looked_up = now
    return _found


def _look_up() -> Instruments | None:
    global _instruments
    tracer_provider = trace.get_tracer_provider()
    meter_provider = metrics.get_meter_provider()
    cached = _instruments
    if (
        cached is not None
        and cached.tracer_provider is tracer_provider
        and cached.meter_provider is meter_provider
    ):
        return cached
    if _api_provider(tracer_provider, "opentelemetry.trace") and _api_provider(
        meter_provider, "opentelemetry.metrics"
    ):
        return None
    cached = _instruments = Instruments(tracer_provider, meter_provider)
    return cached


def operation_trace(executor: str, transport: str) -> OperationTrace | None:
    """A trace for one operation or stream, or ``None`` when telemetry is off (the fast path)."""
    instruments = resolve()
    if instruments is None:
        return None
    return OperationTrace(instruments, executor, transport)


# -- what the requests of one operation add up to --------------------------------------


def _tables(params: Mapping[str, Any]) -> list[str]:
    if "TableName" in params:
        return [params["TableName"]]
    if "RequestItems" in params:
        return list(params["RequestItems"])
    names: list[str] = []
    for entry in params.get("TransactItems", ()):
        for request in entry.values():
            if request.get("TableName") not in names:
                names.append(request["TableName"])
    return names


def _items_returned(action: str, response: Mapping[str, Any]) -> int:
    if action in ("query", "scan"):
        return int(response.get("Count", 0))
    if action == "get_item":
        return 1 if response.get("Item") is not None else 0
    if action == "batch_get_item":
        return sum(len(items) for items in (response.get("Responses") or {}).values())
    if action == "transact_get_items":
        return sum(1 for r in response.get("Responses") or () if r.get("Item") is not None)
    return 0


def _unprocessed(response: Mapping[str, Any]) -> int:
    left = response.get("UnprocessedItems") or response.get("UnprocessedKeys") or {}
    return sum(len(r.get("Keys", ())) if isinstance(r, dict) else len(r) for r in left.values())


def _items_written(action: str, params: Mapping[str, Any], unprocessed: int) -> int:
    if action in ("put_item", "update_item", "delete_item"):
        return 1
    if action == "batch_write_item":
        return sum(len(r) for r in params["RequestItems"].values()) - unprocessed
    if action == "transact_write_items":
        return len(params["TransactItems"])
    return 0


_PLACEHOLDER = re.compile(r"#[A-Za-z0-9_]+")


def failed_condition(call: Call, error: ServiceError) -> str | None:
    """The condition a failed request was refused on, names resolved (values left out).

    A transaction's is the condition of the first item whose cancellation reason is a
    failed condition. Values stay placeholders: they can be personal data.
    """
    params = call.params
    if error.code == "TransactionCanceledException":
        reasons = (error.response or {}).get("CancellationReasons") or []
        for reason, entry in zip(reasons, params.get("TransactItems", ()), strict=False):
            if reason.get("Code") == "ConditionalCheckFailed":
                params = next(iter(entry.values()))
                break
        else:
            return None
    elif error.code != "ConditionalCheckFailedException":
        return None
    text = params.get("ConditionExpression")
    if text is None:
        return None
    names: Mapping[str, str] = params.get("ExpressionAttributeNames") or {}
    # One pass over the placeholders: #n1 is not replaced inside #n10, nor a name that
    # looks like a placeholder once it is in the text.
    return _PLACEHOLDER.sub(lambda m: names.get(m.group(0), m.group(0)), str(text))


class OperationTrace:
    """The span, counts and metrics of one operation (or stream) on one executor.

    The span starts with the first request (its name comes from that `Call`) and is the
    current span while each request is sent, never in between: a stream's consumer runs
    in its own context.
    """

    def __init__(self, instruments: Instruments, executor: str, transport: str) -> None:
        self._instruments = instruments
        self._executor = executor
        self._transport = transport
        self._span: Any = None
        self._token: Any = None
        self._trace_token: Any = None
        self._started = 0.0
        self._operation = ""
        self._subject: str | None = None
        self._table = ""
        self._index: str | None = None
        self.calls = 0
        self.pages = 0
        self.items = 0
        self.written = 0
        self.read_units = 0.0
        self.write_units = 0.0
        self.retries = 0
        self.throttles = 0
        self.unprocessed = 0
        self.condition: str | None = None

    # -- around each request -----------------------------------------------------------

    def before(self, call: Call) -> None:
        """A request is about to be sent: start the span if needed, make it current."""
        if self._span is None:
            self._start(call)
        elif self._subject is None and call.subject is not None:
            self._subject = call.subject
            self._span.set_attribute("singletable.entity", call.subject)
        self.calls += 1
        self._token = otel_context.attach(trace.set_span_in_context(self._span))
        self._trace_token = _current.set(self)

    def after(self, call: Call, outcome: Mapping[str, Any] | ServiceError | None) -> None:
        """The request ended: its response, its `ServiceError`, or ``None`` (it raised)."""
        _current.reset(self._trace_token)
        otel_context.detach(self._token)
        if isinstance(outcome, ServiceError):
            self._failed_call(call, outcome)
        elif outcome is not None:
            self._answered(call, outcome)

    def sleep(self, step: Sleep) -> None:
        """The operation backs off before sending again (a batch's unprocessed items)."""
        self.retries += 1
        self._instruments.retries.add(1, self._metric_attributes())

    def throttled(self, code: str, attempt: int) -> None:
        """The client's retry handler saw a throttling answer (`throttle_observer`)."""
        self.throttles += 1
        self._instruments.throttles.add(1, self._metric_attributes())
        logger.info(
            "DynamoDB throttled a request (attempt %d)",
            attempt,
            extra={**self._log_fields(), "error_code": code, "attempt": attempt},
        )

    def _start(self, call: Call) -> None:
        action = call.operation or call.action
        self._operation = OPERATION_NAMES.get(action, action)
        self._subject = call.subject
        tables = _tables(call.params)
        self._table = tables[0] if len(tables) == 1 else ",".join(tables)
        self._index = call.params.get("IndexName")
        name = self._operation if self._subject is None else f"{self._operation} {self._subject}"
        attributes: dict[str, Any] = {
            "db.system.name": "aws.dynamodb",
            "db.operation.name": self._operation,
            "singletable.executor": self._executor,
            "singletable.transport": self._transport,
        }
        if tables:
            attributes["db.collection.name"] = self._table
            attributes["aws.dynamodb.table_names"] = tables
        if self._subject is not None:
            attributes["singletable.entity"] = self._subject
        if self._index is not None:
            attributes["aws.dynamodb.index_name"] = self._index
        self._started = time.perf_counter()
        self._span = self._instruments.tracer.start_span(
            name, kind=SpanKind.INTERNAL, attributes=attributes
        )

    def _answered(self, call: Call, response: Mapping[str, Any]) -> None:
        action = call.action
        if action in ("query", "scan"):
            self.pages += 1
        self.items += _items_returned(action, response)
        unprocessed = _unprocessed(response)
        self.written += _items_written(action, call.params, unprocessed)
        retried = int((response.get("ResponseMetadata") or {}).get("RetryAttempts") or 0)
        if retried:
            self.retries += retried
            self._instruments.retries.add(retried, self._metric_attributes())
            logger.info(
                "%s sent %d more time(s) before DynamoDB answered",
                WIRE_NAMES.get(action, action),
                retried,
                extra={**self._log_fields(), "action": action, "retries": retried},
            )
        if unprocessed:
            self.unprocessed += unprocessed
            logger.info(
                "%d item request(s) left unprocessed, sent again after a backoff",
                unprocessed,
                extra={**self._log_fields(), "action": action, "unprocessed": unprocessed},
            )
        consumed = response.get("ConsumedCapacity")
        if consumed is not None:
            self._record_capacity(action, call.params, consumed)

    def _failed_call(self, call: Call, error: ServiceError) -> None:
        retried = int(
            ((error.response or {}).get("ResponseMetadata") or {}).get("RetryAttempts") or 0
        )
        if retried:
            self.retries += retried
            self._instruments.retries.add(retried, self._metric_attributes())
        condition = failed_condition(call, error)
        if condition is not None:
            self.condition = condition
            logger.debug(
                "condition failed: %s",
                condition,
                extra={**self._log_fields(), "condition": condition, "error_code": error.code},
            )
        if error.code in THROTTLE_CODES:
            logger.warning(
                "DynamoDB kept throttling %s: gave up after %d retries",
                WIRE_NAMES.get(call.action, call.action),
                retried,
                extra={**self._log_fields(), "error_code": error.code, "retries": retried},
            )

    def _record_capacity(self, action: str, params: Mapping[str, Any], consumed: Any) -> None:
        kind = "read" if action in _READS else "write"
        base = self._metric_attributes()
        for entry in consumed if isinstance(consumed, list) else [consumed]:
            table = entry.get("TableName", self._table)
            shares: list[tuple[str | None, float]] = []
            if "Table" in entry:
                shares.append((None, float(entry["Table"].get("CapacityUnits", 0.0))))
                for group in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes"):
                    for index, figures in (entry.get(group) or {}).items():
                        shares.append((index, float(figures.get("CapacityUnits", 0.0))))
            else:
                shares.append((params.get("IndexName"), float(entry.get("CapacityUnits", 0.0))))
            for index, units in shares:
                if kind == "read":
                    self.read_units += units
                else:
                    self.write_units += units
                attributes = {**base, "db.collection.name": table, "singletable.capacity": kind}
                if index is not None:
                    attributes["aws.dynamodb.index_name"] = index
                self._instruments.capacity.add(units, attributes)

    # -- the end -----------------------------------------------------------------------

    def end(self, error: BaseException | None = None) -> None:
        """End the span (with ``error``, what the operation raised) and record its duration."""
        span = self._span
        if span is None:
            return
        self._span = None
        counts: dict[str, Any] = {
            "singletable.calls": self.calls,
            "singletable.items.returned": self.items,
            "singletable.items.written": self.written,
            "singletable.retries": self.retries,
        }
        if self.pages:
            counts["singletable.pages"] = self.pages
        if self.throttles:
            counts["singletable.throttles"] = self.throttles
        if self.unprocessed:
            counts["singletable.unprocessed"] = self.unprocessed
        if self.read_units or self.write_units:
            counts["singletable.capacity.read_units"] = self.read_units
            counts["singletable.capacity.write_units"] = self.write_units
        if self.condition is not None:
            counts["singletable.condition"] = self.condition
        span.set_attributes(counts)
        attributes = self._metric_attributes()
        if isinstance(error, GeneratorExit):
            # The consumer of a stream stopped reading: not an error.
            span.set_attribute("singletable.abandoned", True)
        elif error is not None:
            code = getattr(error, "code", None)
            error_type = code if isinstance(code, str) else type(error).__name__
            if isinstance(code, str):
                span.set_attribute("db.response.status_code", code)
            span.set_attribute("error.type", error_type)
            span.record_exception(error)
            span.set_status(Status(StatusCode.ERROR, str(error)))
            attributes["error.type"] = error_type
            self._log_error(error)
        self._instruments.duration.record(time.perf_counter() - self._started, attributes)
        span.end()

    def _log_error(self, error: BaseException) -> None:
        if type(error).__name__ == "VersionConflictError":
            logger.info(
                "version conflict: %s", error, extra={**self._log_fields(), "error": "version"}
            )

    def _metric_attributes(self) -> dict[str, Any]:
        attributes: dict[str, Any] = {
            "db.system.name": "aws.dynamodb",
            "db.operation.name": self._operation,
            "db.collection.name": self._table,
        }
        if self._subject is not None:
            attributes["singletable.entity"] = self._subject
        if self._index is not None:
            attributes["aws.dynamodb.index_name"] = self._index
        return attributes

    def _log_fields(self) -> dict[str, Any]:
        return {
            "operation": self._operation,
            "entity": self._subject,
            "table": self._table,
            "index": self._index,
        }


# -- throttles, seen by botocore's retry handler ---------------------------------------


def observe_throttles(client: Any) -> None:
    """Register `throttle_observer` on a client's events (once per client)."""
    events = getattr(getattr(client, "meta", None), "events", None)
    if events is not None:
        events.register(
            "needs-retry.dynamodb", throttle_observer, unique_id="singletable-throttles"
        )


def throttle_observer(response: Any = None, attempts: int = 0, **_: Any) -> None:
    """A ``needs-retry`` handler that counts throttling answers on the current operation.

    It returns ``None``, so it never changes botocore's decision; registered on each
    client an executor builds or is given, it sees every attempt, including those
    botocore retries without the caller ever knowing (the lean transport asks the same
    handlers).
    """
    current = _current.get()
    if current is None or response is None:
        return
    code = (response[1] or {}).get("Error", {}).get("Code")
    if code in THROTTLE_CODES:
        current.throttled(code, attempts)
