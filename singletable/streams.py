"""Typed change streams: DynamoDB Streams records and Lambda event batches, decoded.

Pure decoding, no I/O: give it the records DynamoDB Streams returns (``GetRecords``
through boto3's ``dynamodbstreams`` client) or the ``event`` a Lambda function receives,
and the `Table` whose entities wrote them. Each record becomes a `ChangeRecord`:

* ``event``: ``"INSERT"``, ``"MODIFY"`` or ``"REMOVE"``;
* ``entity``: the entity class, from the images' identifier (``_et``/``_ev``) or, for a
  ``KEYS_ONLY`` stream, from the one entity whose key templates parse the key;
* ``old`` / ``new``: typed instances, as the stream's view type provides them
  (``NEW_IMAGE``: ``new`` only, ``OLD_IMAGE``: ``old`` only, ``NEW_AND_OLD_IMAGES``:
  both, ``KEYS_ONLY``: neither; ``key`` always holds the primary key fields);
* ``guard``: for the table's uniqueness guard items (`singletable.model.unique`), what
  they guard; they are recognised, never reported as unknown;
* ``job``: ``True`` for a job's record and leases (`singletable.model.jobs`): recognised,
  passed to no handler, never reported as unknown;
* ``unknown``: ``True`` when no entity on the table wrote the item: reported, not dropped.

`StreamRouter` dispatches records to handlers per entity and event
(``@router.on(Order, "INSERT")``) and builds the Lambda partial-batch response
(``{"batchItemFailures": [...]}``, see `batch_item_failures`).
"""

from __future__ import annotations

import base64
import binascii
import functools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, cast, get_args

from pydantic import BaseModel

from singletable.errors import KeyDecodeError, SingleTableError, StreamDecodeError
from singletable.model.guards import GuardInfo, read_guard
from singletable.model.jobs import is_job_item
from singletable.model.plan import EntityPlan, entity_plans, item_plan, plan_of
from singletable.model.table import StreamView, Table
from singletable.model.unique import is_guard_item
from singletable.types import AttributeValue, Item

__all__ = [
    "ChangeRecord",
    "DispatchReport",
    "EVENT_NAMES",
    "EventName",
    "Handler",
    "StreamRouter",
    "batch_item_failures",
    "decode_event",
    "decode_record",
    "decode_records",
]

EventName = Literal["INSERT", "MODIFY", "REMOVE"]
EVENT_NAMES: tuple[EventName, ...] = get_args(EventName)

E = TypeVar("E", bound=BaseModel)


@dataclass(frozen=True)
class ChangeRecord:
    """One decoded stream record.

    Attributes:
        event: ``INSERT``, ``MODIFY`` or ``REMOVE``.
        entity: The entity class that wrote the item; ``None`` for guards and unknown items.
        key: The primary key fields (decoded from the key attributes when the entity is
            known; empty otherwise).
        keys: The record's raw key attributes.
        old: The item before the change, when the view type carries it.
        new: The item after the change, when the view type carries it.
        view: The stream view type the record declares.
        sequence_number: The record's sequence number (the Lambda ``itemIdentifier``).
        event_id: The record's event id.
        guard: What a uniqueness guard record guards; ``None`` for other items.
        unknown: Whether no entity on the table wrote the item.
        job: Whether the item is a job's record or lease (`singletable.tooling.jobs`): the
            library's own bookkeeping, which the router passes to no handler.
        old_image: The raw old image, when present.
        new_image: The raw new image, when present.
    """

    event: EventName
    entity: type[BaseModel] | None
    key: dict[str, Any]
    keys: Item
    old: BaseModel | None
    new: BaseModel | None
    view: StreamView | None
    sequence_number: str | None
    event_id: str | None
    guard: GuardInfo | None = None
    unknown: bool = False
    job: bool = False
    old_image: Item | None = field(default=None, repr=False)
    new_image: Item | None = field(default=None, repr=False)

    @property
    def is_guard(self) -> bool:
        """Whether the record is about a uniqueness guard item."""
        return self.guard is not None

    @property
    def item(self) -> BaseModel | None:
        """The item as it is after the change (``new``), or as it was before a REMOVE."""
        return self.new if self.new is not None else self.old


def _entity_of_keys(table: Table, keys: Mapping[str, AttributeValue]) -> EntityPlan | None:
    """The one entity (latest version per name) whose key templates parse ``keys``."""
    latest: dict[str, EntityPlan] = {}
    for plan in entity_plans(table):
        if plan.name not in latest or latest[plan.name].version < plan.version:
            latest[plan.name] = plan
    matches = []
    for plan in latest.values():
        try:
            for template in plan.primary.templates():
                av = keys.get(template.attribute)
                if av is None or template.key_type not in av:
                    raise KeyDecodeError("missing key attribute")
                template.parse(av[template.key_type])
        except KeyDecodeError:
            continue
        matches.append(plan)
    return matches[0] if len(matches) == 1 else None


def _primary_key_fields(plan: EntityPlan, keys: Mapping[str, AttributeValue]) -> dict[str, Any]:
    key: dict[str, Any] = {}
    for template in plan.primary.templates():
        av = keys.get(template.attribute)
        if av is not None and template.key_type in av:
            key.update(template.parse(av[template.key_type]))
    return key


def _same(value: Any) -> Any:
    return value


def _from_base64(value: Any) -> bytes:
    if not isinstance(value, str):
        raise StreamDecodeError(f"a binary value is {type(value).__name__}, not base64 text")
    try:
        return base64.b64decode(value, validate=True)
    except binascii.Error as exc:
        raise StreamDecodeError(f"a binary value is not base64 text ({exc})") from None


def _attribute(value: Any, binary: Callable[[Any], Any]) -> AttributeValue:
    """One AttributeValue of a record, read by its structure: its one key is its type tag.

    Only the value at a tag is walked as a value again (the members of ``M`` and ``L``); a
    map's own keys are names, whatever they spell (``{"M": {"BS": {"S": "Bahamas"}}}``).
    """
    if value.__class__ is not dict or len(value) != 1:
        if value == {}:
            # DynamoDB Local 3.3's stream images drop the tag of an empty map (``{}`` for
            # ``{"M": {}}``, at any depth; an empty list keeps its ``L``). No valid
            # AttributeValue is empty, so the shape can only mean that.
            return {"M": {}}
        raise StreamDecodeError(f"not an AttributeValue (one type tag and its value): {value!r}")
    ((tag, inner),) = value.items()
    if tag == "M" and isinstance(inner, dict):
        return {"M": {name: _attribute(member, binary) for name, member in inner.items()}}
    if tag == "L" and isinstance(inner, list):
        return {"L": [_attribute(member, binary) for member in inner]}
    if tag == "B":
        return {"B": binary(inner)}
    if tag == "BS" and isinstance(inner, list):
        return {"BS": [binary(member) for member in inner]}
    if tag in ("M", "L", "BS"):
        raise StreamDecodeError(f"the value of a {tag!r} attribute is {type(inner).__name__}")
    return {tag: inner}


def _image(raw: Any, binary: Callable[[Any], Any], what: str) -> Item:
    """A record's key or image, each attribute read by `_attribute`."""
    if not isinstance(raw, Mapping):
        raise StreamDecodeError(f"the record's {what} is {type(raw).__name__}, not a map")
    image: Item = {}
    for name, value in raw.items():
        try:
            image[name] = _attribute(value, binary)
        except StreamDecodeError as exc:
            raise StreamDecodeError(f"the record's {what}, attribute {name!r}: {exc}") from None
    return image


def decode_record(
    table: Table, record: Mapping[str, Any], *, lambda_json: bool = False
) -> ChangeRecord:
    """Decode one stream record (as ``GetRecords`` or a Lambda event holds it).

    Args:
        table: The table whose entities wrote the items.
        record: The record (with its ``eventName`` and ``dynamodb`` sections).
        lambda_json: Binary values are base64 text (records of a Lambda event).

    Raises:
        StreamDecodeError: The record is malformed.
        ItemDecodeError: An image of a known entity does not decode (a model mismatch).
    """
    event = record.get("eventName")
    change = record.get("dynamodb")
    if event not in EVENT_NAMES or not isinstance(change, Mapping):
        raise StreamDecodeError(
            f"not a DynamoDB stream record (eventName {event!r}, dynamodb section "
            f"{'present' if isinstance(change, Mapping) else 'missing'})"
        )
    # One decoder for both sources: only the form of a binary value differs (base64 text
    # in a Lambda event's JSON, bytes from boto3's ``dynamodbstreams`` client).
    binary = _from_base64 if lambda_json else _same
    keys = _image(change.get("Keys") or {}, binary, "Keys")
    old_image = change.get("OldImage")
    new_image = change.get("NewImage")
    old_raw = None if old_image is None else _image(old_image, binary, "OldImage")
    new_raw = None if new_image is None else _image(new_image, binary, "NewImage")
    view = change.get("StreamViewType")
    common: dict[str, Any] = {
        "event": cast(EventName, event),
        "keys": keys,
        "view": view,
        "sequence_number": change.get("SequenceNumber"),
        "event_id": record.get("eventID"),
        "old_image": old_raw,
        "new_image": new_raw,
    }
    if is_guard_item(table, keys):
        guard = read_guard(table, new_raw or old_raw or keys)
        return ChangeRecord(entity=None, key={}, old=None, new=None, guard=guard, **common)
    if is_job_item(table, keys):
        return ChangeRecord(entity=None, key={}, old=None, new=None, job=True, **common)
    plan = None
    for image in (new_raw, old_raw):
        if image is not None:
            plan = item_plan(table, image)
            break
    else:
        plan = _entity_of_keys(table, keys)
    if plan is None:
        return ChangeRecord(entity=None, key={}, old=None, new=None, unknown=True, **common)
    return ChangeRecord(
        entity=plan.model,
        key=_primary_key_fields(plan, keys),
        old=None if old_raw is None else plan.from_item(old_raw),
        new=None if new_raw is None else plan.from_item(new_raw),
        **common,
    )


def decode_records(table: Table, records: Iterable[Mapping[str, Any]]) -> Iterator[ChangeRecord]:
    """Decode the records of a ``GetRecords`` response (``response["Records"]``), in order."""
    for record in records:
        yield decode_record(table, record)


def decode_event(table: Table, event: Mapping[str, Any]) -> Iterator[ChangeRecord]:
    """Decode the records of a Lambda event from a DynamoDB stream, in order."""
    records = event.get("Records")
    if not isinstance(records, list):
        raise StreamDecodeError("not a Lambda stream event: it has no 'Records' list")
    for record in records:
        yield decode_record(table, record, lambda_json=True)


def batch_item_failures(sequence_numbers: Iterable[str]) -> dict[str, list[dict[str, str]]]:
    """The Lambda partial-batch response that retries the given records.

    For a stream, Lambda retries the batch from the lowest sequence number reported (the
    function needs ``FunctionResponseTypes: ["ReportBatchItemFailures"]``); an empty list
    reports the whole batch as processed.
    """
    return {"batchItemFailures": [{"itemIdentifier": n} for n in sequence_numbers]}


Handler = Callable[[ChangeRecord], None]
H = TypeVar("H", bound=Handler)


@dataclass
class DispatchReport:
    """What `StreamRouter.dispatch` did with a batch.

    Attributes:
        handled: Records at least one handler received.
        unhandled: Records of known entities no handler subscribed to.
        guards: Uniqueness guard records (passed to ``on_guard`` handlers, if any).
        unknown: Records of items no entity on the table wrote.
        failed: The sequence number of the record whose handler (or decoding) raised;
            later records were not processed.
        error: That exception.
    """

    handled: int = 0
    unhandled: int = 0
    guards: int = 0
    unknown: list[ChangeRecord] = field(default_factory=list)
    failed: str | None = None
    error: BaseException | None = None

    def response(self) -> dict[str, list[dict[str, str]]]:
        """The Lambda partial-batch response for this batch."""
        return batch_item_failures([] if self.failed is None else [self.failed])


#: What runs each record's handlers (``run()``) around them, e.g. in a span that continues
#: the trace the record's item carries (`singletable.io.stream_tracing`).
Around = Callable[["ChangeRecord", Callable[[], None]], None]


def _run(handlers: Sequence[Handler], record: ChangeRecord) -> None:
    for handler in handlers:
        handler(record)


class StreamRouter:
    """Dispatch decoded stream records to handlers per entity and event.

    ::

        router = StreamRouter(app)

        @router.on(Order, "INSERT")
        def order_placed(change: ChangeRecord) -> None: ...

        def handler(event, context):  # the Lambda function
            return router.handle(event)

    Records are processed in order; at the first record whose handler raises, processing
    stops and the response names that record, so Lambda retries it and the records after
    it, keeping each item's changes in order.

    ``around``, when given, runs each record's handlers (``around(record, run)`` calls
    ``run()``): `singletable.io.stream_tracing` makes it a span per record that
    continues the trace the record's item carries.
    """

    def __init__(self, table: Table, *, around: Around | None = None) -> None:
        self.table = table
        self._around = around
        self._handlers: dict[tuple[type[BaseModel], EventName], list[Handler]] = {}
        self._unknown: list[Handler] = []
        self._guard: list[Handler] = []

    def on(self, entity: type[BaseModel], *events: EventName) -> Callable[[H], H]:
        """Subscribe the decorated function to ``events`` (default: all) of ``entity``."""
        plan = plan_of(entity)
        if plan.table is not self.table:
            raise SingleTableError(
                f"{plan.label} is stored on table {plan.table.name!r}, not on this router's "
                f"table {self.table.name!r}"
            )
        for event in events:
            if event not in EVENT_NAMES:
                raise SingleTableError(
                    f"unknown stream event {event!r}; use one of {', '.join(EVENT_NAMES)}"
                )

        def register(handler: H) -> H:
            for event in events or EVENT_NAMES:
                self._handlers.setdefault((entity, event), []).append(handler)
            return handler

        return register

    def on_unknown(self, handler: H) -> H:
        """Subscribe to records of items no entity on the table wrote."""
        self._unknown.append(handler)
        return handler

    def on_guard(self, handler: H) -> H:
        """Subscribe to records of uniqueness guard items (ignored otherwise)."""
        self._guard.append(handler)
        return handler

    def _targets(self, record: ChangeRecord) -> Sequence[Handler]:
        if record.guard is not None:
            return self._guard
        if record.job:
            return ()
        if record.entity is None:
            return self._unknown
        return self._handlers.get((record.entity, record.event), [])

    def dispatch(
        self, records: Iterable[Mapping[str, Any]], *, lambda_json: bool = False
    ) -> DispatchReport:
        """Decode and dispatch raw records, stopping at the first failure."""
        report = DispatchReport()
        for raw in records:
            try:
                record = decode_record(self.table, raw, lambda_json=lambda_json)
                targets = self._targets(record)
                if targets and self._around is not None:
                    self._around(record, functools.partial(_run, targets, record))
                else:
                    _run(targets, record)
            except Exception as exc:  # reported to Lambda for a retry, not lost
                report.failed = str((raw.get("dynamodb") or {}).get("SequenceNumber", ""))
                report.error = exc
                return report
            if record.guard is not None:
                report.guards += 1
            elif record.job:
                continue
            elif record.entity is None:
                report.unknown.append(record)
            elif targets:
                report.handled += 1
            else:
                report.unhandled += 1
        return report

    def handle(self, event: Mapping[str, Any]) -> dict[str, list[dict[str, str]]]:
        """Process a Lambda event; returns the partial-batch response to return to Lambda."""
        records = event.get("Records")
        if not isinstance(records, list):
            raise StreamDecodeError("not a Lambda stream event: it has no 'Records' list")
        return self.dispatch(records, lambda_json=True).response()
