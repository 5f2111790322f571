"""Bulk loads: stream entity instances into their tables, with progress and exact accounting.

`load` takes any iterable of entity instances (any mix of classes and tables) and writes
them in `BatchWrite` operations of at most 25 items, so memory stays flat however long the
iterable is; the one thing that grows is the set of keys written, kept as 16-byte digests
(about 120 bytes per item) so that a key given twice is refused instead of silently
overwriting the first item with the second. Entities that a batch write cannot carry
(uniqueness constraints, whose guards need a transaction; optimistic locking, which needs a
condition) are written one by one with their own `Put`, which keeps those guarantees.

A load stops at the first problem and raises `LoadError`, which says how many items were
written, which ones it had taken and did not write, and where to resume; nothing is dropped
silently.

`JsonLines` and `check` serve ``singletable load``: one JSON object per line, parsed and
validated by pydantic (exact Decimals, datetimes, UUIDs), each line's entity named by
``--entity`` or by the table's entity attribute (``_et``) in the line. `check` is the
validation pass the command runs over the whole file before writing anything.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, NoReturn, TextIO

from pydantic import AliasChoices, AliasPath, BaseModel, ValidationError

from singletable.errors import (
    BatchWriteIncompleteError,
    LoadError,
    RequestLimitError,
    SingleTableError,
    UniqueConstraintError,
)
from singletable.model.plan import EntityPlan, entity_plans, plan_of
from singletable.model.table import Table
from singletable.model.unique import UniqueConstraint
from singletable.operations.batch import MAX_BATCH_WRITE, BatchWrite, key_identity
from singletable.operations.common import describe_key, stamp_times, utc_now
from singletable.operations.items import Put
from singletable.operations.limits import LONE_SURROGATE
from singletable.operations.protocol import Executor
from singletable.tooling.jobs.progress import Progress, Wording
from singletable.types import Item

#: How a load's progress names its counts: "1,200 of 5,000 written (24%), 0 failed".
LOAD_WORDING = Wording(done="written", others=("failed",), approximate=False)

#: How many invalid lines `check` keeps (the others are only counted).
MAX_ERRORS = 20


@dataclass
class LoadResult:
    """What a load wrote."""

    written: int = 0
    #: Items written per entity (its stored name).
    by_entity: dict[str, int] = field(default_factory=dict)
    #: Write calls: one per batch call, one per item put on its own (whose entity has
    #: unique fields: it also reads the values it replaces first, not counted here).
    calls: int = 0
    #: Batch calls resent for unprocessed items (throttling).
    retries: int = 0
    seconds: float = 0.0

    @property
    def rate(self) -> float:
        """Items written per second."""
        return self.written / self.seconds if self.seconds > 0 else 0.0


def _items_at(position: int) -> str:
    return f"items[{position}]"


@dataclass(frozen=True)
class Claim:
    """A key an item takes: its primary key, or the guard key of one of its unique values."""

    digest: bytes
    #: The uniqueness constraint whose guard this is (``None``: the primary key).
    constraint: UniqueConstraint | None
    #: How messages show it: ``entity Order: PK='O#1', SK='O'``.
    detail: str


class KeySet:
    """The keys a load writes, to refuse one given twice (the second would overwrite).

    Primary keys and uniqueness guard keys (a unique value taken twice) alike: both are
    keys of the table. Each is kept as a 16-byte digest with the position that wrote it.
    """

    def __init__(self, name: Callable[[int], str] = _items_at) -> None:
        self.name = name
        self.seen: dict[bytes, int] = {}

    @staticmethod
    def _digest(table: str, key: Item) -> bytes:
        ident = repr(key_identity(table, key))
        return hashlib.blake2b(ident.encode("utf-8", "surrogatepass"), digest_size=16).digest()

    def claims(self, plan: EntityPlan, obj: BaseModel, item: Item) -> list[Claim]:
        """The keys the item (``obj`` encoded as ``item``) takes.

        Raises:
            KeyEncodeError: A unique value cannot be written into its guard key.
        """
        key = plan.key_of_item(item)
        found = [
            Claim(self._digest(plan.table.name, key), None, f"{plan.label}: {describe_key(key)}")
        ]
        for constraint in plan.unique:
            values = constraint.values({f: getattr(obj, f) for f in constraint.fields})
            if values is not None:
                guard = constraint.guard_key(values)
                shown = ", ".join(f"{f}={v!r}" for f, v in values.items())
                found.append(
                    Claim(
                        self._digest(plan.table.name, guard), constraint, f"{plan.label}: {shown}"
                    )
                )
        return found

    def duplicate(
        self, claims: list[Claim], position: int, pending: Mapping[bytes, int] | None = None
    ) -> SingleTableError | None:
        """The error for the first key an earlier position took, else ``None``.

        ``pending``: keys of items not recorded yet (the rest of a batch), checked too.
        """
        for claim in claims:
            earlier = self.seen.get(claim.digest)
            if earlier is None and pending is not None:
                earlier = pending.get(claim.digest)
            if earlier is None or earlier == position:
                continue
            if claim.constraint is None:
                return RequestLimitError(
                    f"same primary key as {self.name(earlier)} ({claim.detail}): the later "
                    "item would silently overwrite the earlier one; give each key once"
                )
            constraint = claim.constraint
            return UniqueConstraintError(
                f"same unique {constraint.name} as {self.name(earlier)} ({claim.detail}): two "
                "items cannot hold one unique value",
                entity=constraint.entity,
                fields=constraint.fields,
                value={},
            )
        return None

    def add(self, claims: list[Claim], position: int) -> None:
        """Record the keys the item at ``position`` takes."""
        for claim in claims:
            self.seen[claim.digest] = position


class _Load:
    """One load's state: the batch being filled, the keys written, the counts."""

    def __init__(
        self,
        db: Executor,
        progress: Progress,
        name: Callable[[int], str],
        batch_size: int,
    ) -> None:
        self.db = db
        self.progress = progress
        self.name = name
        self.batch_size = batch_size
        self.keys = KeySet(name)
        self.buffer: list[tuple[int, BaseModel]] = []
        self.result = LoadResult()
        self.next_position = 0

    def take(self, position: int, obj: BaseModel) -> None:
        self.next_position = position + 1
        try:
            plan = plan_of(type(obj))
        except SingleTableError as exc:
            self.stop(position, exc, [(position, obj)])
        if plan.unique or plan.version_field is not None:
            self.single(position, obj, plan)
            return
        self.buffer.append((position, obj))
        if len(self.buffer) >= self.batch_size:
            self.flush()

    def single(self, position: int, obj: BaseModel, plan: EntityPlan) -> None:
        """Write an item a batch cannot carry with its own put (guards, version check)."""
        taken = [(position, obj)]
        try:
            op = Put(obj)
            claims = self.keys.claims(plan, op.written, op.item)
        except SingleTableError as exc:
            self.stop(position, exc, taken)
        self.check_duplicates([(position, claims)], taken)
        try:
            op.run(self.db)
        except SingleTableError as exc:
            self.stop(position, exc, taken)
        self.keys.add(claims, position)
        self.done(plan.name, 1, calls=1)

    def flush(self) -> None:
        """Write the batch being filled."""
        if not self.buffer:
            return
        batch = self.buffer
        try:
            write = BatchWrite([obj for _, obj in batch])
        except SingleTableError as exc:
            self.diagnose(exc)
        # BatchWrite keeps its requests in the order the objects were given.
        claims = [
            (position, self.keys.claims(plan_of(type(obj)), obj, request["PutRequest"]["Item"]))
            for (position, obj), (_, request) in zip(batch, write.requests, strict=True)
        ]
        self.check_duplicates(claims, batch)
        self.buffer = []  # from here on `stop` is told exactly what was not written
        try:
            result = write.run(self.db)
        except BatchWriteIncompleteError as exc:
            positions = {id(obj): position for position, obj in batch}
            self.result.written += len(exc.written_puts)
            self.progress.update(scanned=len(exc.written_puts), failed=exc.unwritten_count)
            unwritten = [(positions[id(obj)], obj) for obj in exc.unwritten_puts]
            self.stop(min(p for p, _ in unwritten), exc, unwritten)
        except SingleTableError as exc:  # the endpoint unreachable, ...: nothing known written
            self.stop(batch[0][0], exc, batch)
        for position, claim in claims:
            self.keys.add(claim, position)
        self.result.retries += result.retries
        counts: dict[str, int] = {}
        for _, obj in batch:
            entity = plan_of(type(obj)).name
            counts[entity] = counts.get(entity, 0) + 1
        for entity, n in counts.items():
            self.done(entity, n, calls=0)
        self.result.calls += result.calls

    def check_duplicates(
        self,
        claims: list[tuple[int, list[Claim]]],
        taken: list[tuple[int, BaseModel]],
    ) -> None:
        """Refuse a key that an earlier item (in an earlier batch or this one) wrote."""
        # The batch's own keys apart: copying every key written so far for each batch
        # would make a load quadratic.
        batch: dict[bytes, int] = {}
        for position, claim in claims:
            error = self.keys.duplicate(claim, position, batch)
            if error is not None:
                self.stop(position, error, taken)
            batch.update((c.digest, position) for c in claim)

    def unwritten(self, taken: list[tuple[int, BaseModel]]) -> list[tuple[int, BaseModel]]:
        """Everything taken and not written: the batch being filled, and ``taken``."""
        merged = dict(self.buffer)
        merged.update(taken)
        return sorted(merged.items(), key=lambda entry: entry[0])

    def diagnose(self, exc: SingleTableError) -> NoReturn:
        """Find which item of the batch made `BatchWrite` refuse it, and stop there."""
        claims = []
        for position, obj in self.buffer:
            try:
                write = BatchWrite([obj])
            except SingleTableError as own:
                self.stop(position, own, self.buffer)
            item = write.requests[0][1]["PutRequest"]["Item"]
            claims.append((position, self.keys.claims(plan_of(type(obj)), obj, item)))
        # Each item alone is fine: two of them share a key, which check_duplicates names.
        self.check_duplicates(claims, self.buffer)
        self.stop(self.buffer[0][0], exc, self.buffer)  # pragma: no cover - found above

    def done(self, entity: str, n: int, *, calls: int) -> None:
        self.result.written += n
        self.result.calls += calls
        self.result.by_entity[entity] = self.result.by_entity.get(entity, 0) + n
        self.progress.update(scanned=n)

    def stop(
        self, position: int, cause: SingleTableError, unwritten: list[tuple[int, BaseModel]]
    ) -> NoReturn:
        unwritten = self.unwritten(unwritten)
        resume = unwritten[0][0] if unwritten else self.next_position
        shown = ", ".join(self.name(p) for p, _ in unwritten[:5])
        more = f" and {len(unwritten) - 5} more" if len(unwritten) > 5 else ""
        not_written = f"; not written: {shown}{more}" if unwritten else ""
        again = (
            f"every item before {self.name(resume)} was written: load from there on to finish"
            if resume
            else "load again from the start"
        )
        raise LoadError(
            f"load stopped at {self.name(position)}: {cause} -- {self.result.written:,} "
            f"item(s) written{not_written}; {again}",
            written=self.result.written,
            unwritten=unwritten,
            resume_from=resume,
            next_position=self.next_position,
            cause=cause,
        ) from cause


def load(
    db: Executor,
    objects: Iterable[BaseModel],
    *,
    total: int | None = None,
    out: TextIO | None = None,
    progress_bar: bool | None = None,
    progress_interval: float = 1.0,
    batch_size: int = MAX_BATCH_WRITE,
    where: Callable[[int], str] | None = None,
    label: str = "load",
) -> LoadResult:
    """Write every entity instance of ``objects`` to its table.

    Items go out in batch writes of ``batch_size`` (unprocessed items retried with backoff);
    entities with uniqueness constraints or optimistic locking go one by one with their
    own put, which keeps their guards and version check. ``created_at`` / ``updated_at``
    fields are stamped as by any write. A key given twice is refused before the second
    item's batch is sent.

    Args:
        db: The executor (`singletable.Connection`).
        objects: Entity instances, any mix of classes and tables; read once, in order.
        total: How many there are, for the percentage and ETA (default: ``len(objects)``
            when it has one).
        out: Where progress goes (default: stderr).
        progress_bar: Force (True) or suppress (False) the progress bar; default: a bar
            when ``out`` is a terminal and tqdm is installed, plain lines otherwise.
        progress_interval: Seconds between plain progress lines.
        batch_size: Items per `BatchWrite` (1 to 25: one BatchWriteItem call each).
        where: How messages name a position (default ``items[N]``, 0-based).
        label: What the progress display calls the load.

    Raises:
        LoadError: The load stopped: a value that cannot be stored, a key given twice, a
            non-entity, or a write that failed (throttled past its retries, refused by
            DynamoDB, a unique value or version conflict). It holds how many items were
            written and which were not.
        RequestLimitError: ``batch_size`` is not 1 to 25.
    """
    if not 1 <= batch_size <= MAX_BATCH_WRITE:
        raise RequestLimitError(
            f"batch_size must be 1 to {MAX_BATCH_WRITE} (one BatchWriteItem call), got {batch_size}"
        )
    if total is None and isinstance(objects, Sized):
        total = len(objects)
    progress = Progress(
        label,
        total,
        out or sys.stderr,
        interval=progress_interval,
        bar=progress_bar,
        wording=LOAD_WORDING,
    )
    run = _Load(db, progress, where or _items_at, batch_size)
    started = time.monotonic()
    try:
        for position, obj in enumerate(objects):
            run.take(position, obj)
        run.flush()
    finally:
        progress.close()
        run.result.seconds = time.monotonic() - started
    return run.result


# -- JSON Lines --------------------------------------------------------------------------


class LineError(SingleTableError, ValueError):
    """A line of a JSON Lines file that cannot be loaded (``line``: its 1-based number)."""

    def __init__(self, message: str, *, line: int = 0) -> None:
        super().__init__(message)
        self.line = line


def _input_keys(model: type[BaseModel]) -> frozenset[str]:
    """The top-level keys pydantic reads for ``model``'s fields (names and aliases)."""
    keys: set[str] = set()
    for name, info in model.model_fields.items():
        keys.add(name)
        for alias in (info.alias, info.validation_alias):
            choices = alias.choices if isinstance(alias, AliasChoices) else [alias]
            for choice in choices:
                if isinstance(choice, str):
                    keys.add(choice)
                elif isinstance(choice, AliasPath) and isinstance(choice.path[0], str):
                    keys.add(choice.path[0])
    return frozenset(keys)


# pydantic 2.12+ can ignore undeclared keys per call: a model that forbids extra fields
# then still validates a line that names its entity (``_et``). Undeclared keys are refused
# by `JsonLines` itself, with the entity's field list.
_IGNORE_EXTRA: dict[str, Any] = (
    {"extra": "ignore"}
    if "extra" in inspect.signature(BaseModel.model_validate_json).parameters
    else {}
)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            # JSON parsers keep one of the two values: the other would be lost silently.
            raise LineError(f"the key {key!r} appears twice in one object")
        seen.add(key)
    return dict(pairs)


def _json_type(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _unreadable(value: Any, path: tuple[str | int, ...]) -> str | None:
    """What in a parsed line cannot be stored as written (and where), else ``None``.

    A number that a 64-bit float does not hold exactly (pydantic reads JSON numbers as
    floats), or text with a lone surrogate (an escaped half of a surrogate pair).
    """
    where = ".".join(map(str, path))
    if isinstance(value, Decimal):
        if value.is_finite() and Decimal(repr(float(value))) == value:
            return None
        return (
            f"field {where!r}: the JSON number {value} cannot be read exactly (pydantic "
            f"reads JSON numbers as 64-bit floats: it would become {float(value)!r}); write "
            f'it as a string, "{value}", to keep every digit'
        )
    if isinstance(value, str):
        lone = LONE_SURROGATE.search(value)
        if lone is None:
            return None
        return (
            f"field {where!r}: the text holds the lone surrogate U+{ord(lone.group()):04X} "
            f"at index {lone.start()} (an escape without its pair), which UTF-8 cannot encode"
        )
    if isinstance(value, dict):
        for key, inner in value.items():
            found = _unreadable(key, (*path, "<key>")) or _unreadable(inner, (*path, key))
            if found is not None:
                return found
    if isinstance(value, list):
        for index, inner in enumerate(value):
            found = _unreadable(inner, (*path, index))
            if found is not None:
                return found
    return None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _validation_message(plan: EntityPlan, exc: ValidationError) -> str:
    parts = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(p) for p in error["loc"])
        got = "" if error["type"] == "missing" else f" (got {_shown(error['input'])})"
        parts.append(f"field {where!r}: {error['msg']}{got}" if where else error["msg"] + got)
    return f"{plan.label}: " + "; ".join(parts)


class JsonLines:
    """Entity instances from JSON Lines: one JSON object per line, holding an entity's fields.

    Which entity a line holds: ``entity`` for every line, or else the line's entity
    attribute (the table's ``entity_attribute``, ``_et`` by default) naming it. An entity
    is named by its stored name (``Order``), optionally qualified as ``TABLE/NAME`` and
    ``NAME@VERSION`` when that alone is ambiguous.

    Lines are UTF-8; a byte order mark before the first line, CR LF line ends and blank
    lines (skipped) are accepted. A top-level key that is no field of the entity is an
    error (it would be dropped silently otherwise), and so is a key given twice in one
    object. Values are validated by pydantic from the JSON text (``model_validate_json``:
    datetimes, UUIDs, enums as pydantic reads JSON). pydantic reads a JSON number with a
    fraction or an exponent as a 64-bit float, so a number that a float does not hold
    exactly (``12345678901234567890.10``, ``1e400``) is an error rather than a silent
    rounding: write such a Decimal as a string (``"12345678901234567890.10"``).
    """

    def __init__(self, tables: Sequence[Table], *, entity: str | None = None) -> None:
        self.plans = [plan for table in tables for plan in entity_plans(table)]
        self.attributes = sorted({table.entity_attribute for table in tables})
        self._keys: dict[int, frozenset[str]] = {}
        self._named: dict[str, EntityPlan | str] = {}
        self.entity: EntityPlan | None = None
        if entity is not None:
            found = self.resolve(entity)
            if isinstance(found, str):
                raise LineError(found)
            self.entity = found

    def resolve(self, name: str) -> EntityPlan | str:
        """The entity ``name`` names, or the message saying why none or several."""
        cached = self._named.get(name)
        if cached is not None:
            return cached
        table, _, rest = name.rpartition("/")
        entity, _, version = rest.partition("@")
        found = [
            p
            for p in self.plans
            if p.name == entity
            and (not table or p.table.name == table)
            and (not version or str(p.version) == version)
        ]
        known = ", ".join(sorted({p.name for p in self.plans})) or "none"
        if not found:
            result: EntityPlan | str = f"unknown entity {name!r} (the model's entities: {known})"
        elif len(found) > 1:
            listed = ", ".join(f"{p.table.name}/{p.name}@{p.version}" for p in found)
            result = f"entity {name!r} is ambiguous ({listed}); name one as TABLE/NAME@VERSION"
        else:
            result = found[0]
        self._named[name] = result
        return result

    def parse(self, raw: bytes | str) -> BaseModel:
        """The entity instance one line holds.

        Raises:
            LineError: The line is not UTF-8, not a JSON object, names an unknown entity,
                holds a key that is no field, or a value pydantic refuses.
        """
        try:
            text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        except UnicodeDecodeError as exc:
            raise LineError(
                f"not UTF-8: byte 0x{exc.object[exc.start]:02X} at column {exc.start + 1}"
            ) from None
        try:
            # Exact numbers (Decimal for every literal with a fraction or exponent), to
            # find the ones pydantic would read inexactly (below); a key twice refused.
            envelope = json.loads(text, parse_float=Decimal, object_pairs_hook=_unique_keys)
        except ValueError as exc:
            raise LineError(f"invalid JSON: {exc}") from None
        if not isinstance(envelope, dict):
            raise LineError(f"expected a JSON object, got {_json_type(envelope)}")
        plan = self._plan_of(envelope)
        keys = self._keys.get(id(plan))
        if keys is None:
            keys = self._keys[id(plan)] = _input_keys(plan.model)
        unknown = [k for k in envelope if k not in keys and k not in self.attributes]
        if unknown:
            fields = ", ".join(plan.model.model_fields)
            raise LineError(
                f"{plan.label}: unknown field {unknown[0]!r}"
                + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else "")
                + f"; its fields: {fields}"
            )
        unreadable = _unreadable(envelope, ())
        if unreadable is not None:
            raise LineError(f"{plan.label}: {unreadable}")
        try:
            # Field names as well as aliases: an export writes a field that has only a
            # validation alias under its name.
            return plan.model.model_validate_json(text, by_name=True, **_IGNORE_EXTRA)
        except ValidationError as exc:
            raise LineError(_validation_message(plan, exc)) from None

    def _plan_of(self, envelope: dict[str, Any]) -> EntityPlan:
        named = {envelope[a] for a in self.attributes if a in envelope}
        if len(named) > 1:
            raise LineError(f"the line names several entities: {sorted(map(str, named))}")
        if self.entity is not None:
            if named and named != {self.entity.name}:
                raise LineError(
                    f"the line names entity {named.pop()!r}, not {self.entity.name!r} (--entity)"
                )
            return self.entity
        if not named:
            attrs = " or ".join(repr(a) for a in self.attributes)
            raise LineError(f"no entity: give --entity NAME, or name it in the line as {attrs}")
        name = named.pop()
        if not isinstance(name, str):
            raise LineError(f"the entity name must be a string, got {_shown(name)}")
        found = self.resolve(name)
        if isinstance(found, str):
            raise LineError(found)
        return found

    def read(self, lines: Iterable[bytes]) -> Iterator[tuple[int, BaseModel | LineError | None]]:
        """``(line number, instance or error)`` for every line; ``None`` for a blank line."""
        for number, raw in enumerate(lines, 1):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw.strip():
                yield number, None
                continue
            try:
                yield number, self.parse(raw)
            except LineError as exc:
                exc.line = number
                yield number, exc

    def objects(self, lines: Iterable[bytes]) -> Iterator[BaseModel]:
        """The instances of every line, blank lines skipped.

        Raises:
            LineError: A line is not valid (run `check` first to see them all).
        """
        for number, parsed in self.read(lines):
            if isinstance(parsed, LineError):
                raise LineError(f"line {number}: {parsed}", line=number)
            if parsed is not None:
                yield parsed


@dataclass
class CheckReport:
    """What the validation pass found in a JSON Lines file."""

    lines: int = 0
    #: Line numbers of blank lines (skipped).
    blank: list[int] = field(default_factory=list)
    #: Valid items per entity (stored name).
    by_entity: dict[str, int] = field(default_factory=dict)
    #: The tables the valid items go to, by name.
    tables: dict[str, Table] = field(default_factory=dict)
    #: The first invalid lines (up to ``MAX_ERRORS``), each naming its line and problem.
    errors: list[LineError] = field(default_factory=list)
    #: How many lines are invalid in all.
    error_count: int = 0

    @property
    def items(self) -> int:
        """Valid items."""
        return sum(self.by_entity.values())

    def line_of(self, position: int) -> int:
        """The line number of the item at ``position`` (0-based, blank lines skipped)."""
        line = position + 1
        for blank in self.blank:
            if blank > line:
                break
            line += 1
        return line


def check(
    reader: JsonLines, lines: Iterable[bytes], *, max_errors: int = MAX_ERRORS
) -> CheckReport:
    """Parse, validate and encode every line, and find keys given twice; write nothing.

    Each item is encoded as a write would encode it, so key sizes, item size and
    unstorable values are checked too.
    """
    report = CheckReport()
    keys = KeySet(lambda line: f"line {line}")
    now = utc_now()

    def bad(error: LineError) -> None:
        report.error_count += 1
        if len(report.errors) < max_errors:
            report.errors.append(error)

    for number, parsed in reader.read(lines):
        report.lines = number
        if parsed is None:
            report.blank.append(number)
            continue
        if isinstance(parsed, LineError):
            bad(parsed)
            continue
        plan = plan_of(type(parsed))
        try:
            stamped = stamp_times(plan, parsed, now)
            claims = keys.claims(plan, stamped, plan.to_item(stamped))
        except SingleTableError as exc:
            bad(LineError(str(exc), line=number))
            continue
        duplicate = keys.duplicate(claims, number)
        if duplicate is not None:
            bad(LineError(str(duplicate), line=number))
            continue
        keys.add(claims, number)
        report.by_entity[plan.name] = report.by_entity.get(plan.name, 0) + 1
        report.tables[plan.table.name] = plan.table
    return report
