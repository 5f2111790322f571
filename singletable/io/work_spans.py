"""Spans beyond single operations: stream records, units of bulk jobs, their progress.

What `singletable.streams` and the tooling rooms use, kept in the io layer with the rest of
the telemetry (`singletable.io.telemetry`), and no-ops as cheap as it when nothing records:

* `traceparent` and `stream_tracing`: the trace of the request that wrote an item,
  stored in the item and continued by a `singletable.StreamRouter`'s handlers (DynamoDB
  Streams carries no trace context of its own);
* `task_span` and `unit_span`: a migration, a unit of a job (``migrate segment``,
  ``load unit``...), the parent of their operations' spans;
* `job_progress`: a bulk task's counts on the ``singletable.job.items`` counter.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from singletable.io import telemetry

__all__ = [
    "TRACEPARENT_ATTRIBUTE",
    "job_progress",
    "stream_tracing",
    "task_span",
    "traceparent",
    "unit_span",
]


#: The attribute `stream_tracing` reads a W3C ``traceparent`` from, by default.
TRACEPARENT_ATTRIBUTE = "traceparent"


def traceparent() -> str | None:
    """The current span's W3C ``traceparent``, to store in an item a stream handler will see.

    ``None`` when nothing is traced (no API loaded, no SDK, no current span).
    """
    if telemetry.resolve() is None:
        return None
    context = telemetry.trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{context.trace_flags:02x}"


def _carried_context(image: Mapping[str, Any] | None, attribute: str) -> Any:
    value = (image or {}).get(attribute)
    text = value.get("S") if isinstance(value, Mapping) else None
    if not isinstance(text, str):
        return None
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    carried = TraceContextTextMapPropagator().extract({"traceparent": text})
    # A malformed value extracts to an empty context: start a trace of its own then.
    return (
        carried if telemetry.trace.get_current_span(carried).get_span_context().is_valid else None
    )


def stream_tracing(
    attribute: str = TRACEPARENT_ATTRIBUTE,
) -> Callable[[Any, Callable[[], None]], None]:
    """A `singletable.StreamRouter` ``around`` hook: each record's handlers in a span.

    The span (kind CONSUMER, ``process <entity> <event>``) continues the trace whose W3C
    ``traceparent`` the record's new image (else its old image) holds in ``attribute``,
    a string field the writer set with `traceparent`; without one it starts a trace.
    DynamoDB Streams carries no trace context of its own: the item is where it travels.
    """

    def around(record: Any, run: Callable[[], None]) -> None:
        instruments = telemetry.resolve()
        if instruments is None:
            run()
            return
        entity = record.entity.__name__ if record.entity is not None else "record"
        parent = _carried_context(record.new_image, attribute)
        if parent is None:
            parent = _carried_context(record.old_image, attribute)
        attributes: dict[str, Any] = {
            "db.system.name": "aws.dynamodb",
            "singletable.entity": entity,
            "singletable.stream.event": record.event,
        }
        if record.event_id is not None:
            attributes["messaging.message.id"] = record.event_id
        with instruments.tracer.start_as_current_span(
            f"process {entity} {record.event}",
            context=parent,
            kind=telemetry.SpanKind.CONSUMER,
            attributes=attributes,
        ):
            run()

    return around


# -- bulk jobs: a span per unit, progress through the meter ------------------------------


@contextmanager
def task_span(name: str, attributes: Mapping[str, Any]) -> Iterator[None]:
    """A span around a piece of tooling work (a migration, a unit of a job); a no-op when off.

    The operations run inside it are its children; an exception leaving it is recorded.
    """
    instruments = telemetry.resolve()
    if instruments is None:
        yield
        return
    with instruments.tracer.start_as_current_span(name, attributes=dict(attributes)):
        yield


def unit_span(
    kind: str, job_id: str, index: int, total: int, spec: Mapping[str, Any]
) -> AbstractContextManager[None]:
    """A span around one unit of a job (``migrate segment``, ``load unit``...).

    A scan segment (``spec`` has ``segment``) is named ``<kind> segment``, any other unit
    ``<kind> unit``.
    """
    attributes: dict[str, Any] = {
        "singletable.job.id": job_id,
        "singletable.job.kind": kind,
        "singletable.unit.index": index,
        "singletable.unit.total": total,
    }
    if isinstance(spec.get("table"), str):
        attributes["db.collection.name"] = spec["table"]
    if isinstance(spec.get("segment"), int):
        attributes["aws.dynamodb.segment"] = spec["segment"]
        attributes["aws.dynamodb.total_segments"] = spec.get("segments", total)
    what = "segment" if "segment" in spec else "unit"
    return task_span(f"{kind} {what}", attributes)


def job_progress(task: str, counts: Mapping[str, int]) -> None:
    """Add a bulk task's progress to the ``singletable.job.items`` counter (by count name)."""
    instruments = telemetry.resolve()
    if instruments is None:
        return
    for name, n in counts.items():
        if n:
            instruments.job_items.add(
                n, {"singletable.job.task": task, "singletable.job.count": name}
            )
