"""Bulk loads: stream entity instances into their tables, with progress and exact accounting.

`load` takes any iterable of entity instances (any mix of classes and tables) and writes
them in `BatchWrite` operations of at most 25 items, so memory stays flat however long the
iterable is; the one thing that grows is the set of keys written, kept as 16-byte digests
(about 120 bytes per item) so that a key given twice is refused instead of silently
overwriting the first item with the second. Entities that a batch write cannot carry
(uniqueness constraints, whose guards need a transaction; optimistic locking, which needs a
condition) are written one by one with their own `Put`, which keeps those guarantees.

A versioned item is loaded as it was exported: at its own version (``Put(...,
keep_version=True)``), where no item is stored or the stored one is at that same version
(so a load repeated or resumed changes nothing), and refused as a version conflict over
any other version. ``first_import=True`` trades that check for speed on a table that holds
nothing yet: versioned entities go in batch writes too, unchecked (see `load`).

A load stops at the first problem and raises `LoadError`, which says how many items were
written, which ones it had taken and did not write, and where to resume; nothing is dropped
silently.

`JsonLines` and `check` serve ``singletable load``: one JSON object per line, parsed and
validated by pydantic (exact Decimals, datetimes, UUIDs), each line's entity named by
``--entity`` or by the table's entity attribute (``_et``) in the line. `check` is the
validation pass the command runs over the whole file before writing anything.

A file is loaded as units of a job (`file_units`: chunks of whole lines; `LoadWork`: one
chunk, checkpointed after each page): `load_file` runs them in this process, and
`LOAD_KIND` lets the job engine's workers run them anywhere.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import io
import json
import os
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, NoReturn, TextIO

from pydantic import AliasChoices, AliasPath, BaseModel, ValidationError

from singletable.errors import (
    AlreadyExistsError,
    BatchWriteIncompleteError,
    JobError,
    LoadError,
    RequestLimitError,
    SingleTableError,
    UniqueConstraintError,
)
from singletable.model.jobs import is_reserved_item
from singletable.model.plan import EntityPlan, entity_plans, plan_of
from singletable.model.table import Table
from singletable.model.unique import UniqueConstraint
from singletable.operations.batch import MAX_BATCH_WRITE, BatchWrite, key_identity
from singletable.operations.common import describe_key, stamp_times, utc_now
from singletable.operations.items import Put
from singletable.operations.limits import LONE_SURROGATE
from singletable.operations.protocol import Executor
from singletable.operations.scan import Scan
from singletable.tooling.cost.capacity import estimate_capacity
from singletable.tooling.jobs.local import run_units
from singletable.tooling.jobs.progress import Progress, Wording
from singletable.tooling.jobs.units import JsonValue, UnitContext, WorkUnit
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


class StoredItems(Scan[Item]):
    """A scan that hands out the stored items as they are (guard items included).

    For reads that must see every item, whether or not an entity decodes it: an export
    (which counts and sets aside what no entity decodes), the emptiness check of a first
    import.
    """

    def _decode(self, item: Item) -> Any:
        return item


def require_empty(db: Executor, table: Table) -> None:
    """Refuse a first import into ``table`` unless it holds no item at all.

    The table's own bookkeeping does not count: job records and leases (a load run as a
    job keeps its record in the table it loads) and uniqueness guards. One scan request
    of 25 items, more only while the pages hold nothing else.

    Raises:
        LoadError: The table holds an item (its key is named); nothing was written.
    """
    scan = StoredItems(table).page_size(25).limit(25)
    cursor: str | None = None
    while True:
        page = scan.page(db, cursor)
        found = next((i for i in page.items if not is_reserved_item(table, i)), None)
        if found is not None or page.cursor is None:
            break
        cursor = page.cursor
    if found is None:
        return
    key = {a: found[a] for a in (table.pk, table.sk) if a is not None and a in found}
    cause = RequestLimitError(
        f"table {table.name} is not empty (it holds the item {describe_key(key)}): a first "
        "import batch-writes versioned items without their version check, which is only "
        "safe into an empty table; load without first_import (--first-import), which checks "
        "each versioned item, or load into an empty table"
    )
    raise LoadError(
        f"load refused: {cause} -- nothing was written",
        written=0,
        unwritten=[],
        resume_from=0,
        next_position=0,
        cause=cause,
    )


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


class EmptyTables:
    """The tables a first import found empty, checked once each (shared by its units).

    A table is checked when the first item for it comes, before anything is written to
    it; units that run at once wait for one check, so no write of the load precedes it.
    """

    def __init__(self) -> None:
        self.checked: set[str] = set()
        self.lock = threading.Lock()

    def require(self, db: Executor, table: Table) -> None:
        """`require_empty` once per table."""
        with self.lock:
            if table.name not in self.checked:
                require_empty(db, table)
                self.checked.add(table.name)


class _Load:
    """One load's state: the batch being filled, the keys written, the counts.

    Args:
        empty: With ``first_import``: the tables checked empty so far (``None``: check
            none, as the units of a job that resumes must not).
        spend: Told the capacity (from the estimator) of each write before it is sent:
            a unit's `UnitContext.spend`, which holds a job under its capacity budget.
        since: The first position of a unit that runs beside others: what it stops with
            says which of its own items were written (earlier units may not be done).
    """

    def __init__(
        self,
        db: Executor,
        progress: Progress,
        name: Callable[[int], str],
        batch_size: int,
        *,
        first_import: bool = False,
        empty: EmptyTables | None = None,
        spend: Callable[..., None] | None = None,
        since: int | None = None,
    ) -> None:
        self.db = db
        self.progress = progress
        self.name = name
        self.batch_size = batch_size
        self.first_import = first_import
        self.empty = empty
        self.spend = spend
        self.since = since
        self.keys = KeySet(name)
        self.buffer: list[tuple[int, BaseModel]] = []
        self.result = LoadResult()
        self.next_position = 0
        #: Items written before this run began (by earlier units), for messages.
        self.before = 0

    def take(self, position: int, obj: BaseModel) -> None:
        self.next_position = position + 1
        try:
            plan = plan_of(type(obj))
        except SingleTableError as exc:
            self.stop(position, exc, [(position, obj)])
        if self.empty is not None and plan.table.name not in self.empty.checked:
            # When the table's first item comes: no earlier write of this load is in it.
            self.flush()
            try:
                self.empty.require(self.db, plan.table)
            except LoadError as refused:
                self.stop(position, refused.cause, [(position, obj)])
        if plan.unique or (plan.version_field is not None and not self.first_import):
            self.single(position, obj, plan)
            return
        self.buffer.append((position, obj))
        if len(self.buffer) >= self.batch_size:
            self.flush()

    def single(self, position: int, obj: BaseModel, plan: EntityPlan) -> None:
        """Write an item a batch cannot carry with its own put (guards, version check).

        A first import creates (no read of the values replaced: there is no item), claiming
        the guards in the same transaction. Where the key is taken after all (a page
        repeated after a unit was taken over, or a concurrent writer, which a first import
        gives up on) it falls back to the guarded put, at the item's own version.
        """
        taken = [(position, obj)]
        try:
            op = Put(obj, keep_version=True, create=self.first_import)
            claims = self.keys.claims(plan, op.written, op.item)
        except SingleTableError as exc:
            self.stop(position, exc, taken)
        self.check_duplicates([(position, claims)], taken)
        try:
            self.spent(op)
            try:
                op.run(self.db)
            except AlreadyExistsError:
                if not op.create:
                    raise
                op = Put(obj, keep_version=True)
                self.spent(op)
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
            write = BatchWrite([obj for _, obj in batch], unchecked_versions=self.first_import)
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
            self.spent(
                write, {id(t): t for t in (plan_of(type(o)).table for _, o in batch)}.values()
            )
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

    def spent(self, op: Put[Any] | BatchWrite, tables: Iterable[Table] = ()) -> None:
        """Tell ``spend`` what ``op`` will cost, as the capacity estimator has it.

        The items are taken to be new (a load's usual case); one that replaces a stored
        item costs the larger of the two sizes, which the estimate cannot know unread.
        """
        if self.spend is None:
            return
        if isinstance(op, BatchWrite):
            cost = estimate_capacity(op, existing=[None] * len(op.requests), tables=tables)
        else:
            cost = estimate_capacity(op, existing=None)
        self.spend(rcu=cost.rcu, wcu=cost.wcu)

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
                write = BatchWrite([obj], unchecked_versions=self.first_import)
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
        if self.since is not None:
            again = (
                f"every item of this unit from {self.name(self.since)} to before "
                f"{self.name(resume)} was written (the units beside it stop at their next page)"
            )
        elif resume:
            again = (
                f"every item before {self.name(resume)} was written: load from there on to finish"
            )
        else:
            again = "load again from the start"
        written = self.before + self.result.written
        raise LoadError(
            f"load stopped at {self.name(position)}: {cause} -- {written:,} "
            f"item(s) written{not_written}; {again}",
            written=written,
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
    first_import: bool = False,
) -> LoadResult:
    """Write every entity instance of ``objects`` to its table.

    Items go out in batch writes of ``batch_size`` (unprocessed items retried with backoff);
    entities with uniqueness constraints or optimistic locking go one by one with their
    own put, which keeps their guards and version check. ``created_at`` / ``updated_at``
    fields are stamped as by any write. A key given twice is refused before the second
    item's batch is sent.

    A versioned object is written at its own version (as exported; version 0, never
    stored, becomes 1): where no item is stored, or the stored item is at that same
    version (loading it again changes nothing); a stored item at another version is not
    overwritten: the load stops there with a `VersionConflictError` naming both versions.

    ``first_import=True`` is for a table that holds nothing yet: each table is checked
    empty when its first item comes (one scan request), and versioned entities then go in
    batch writes like the others, at their own version. What is given up: BatchWriteItem
    takes no condition, so those writes check no version, and an item a concurrent writer
    puts under the same key meanwhile is overwritten without a word. Entities with unique
    fields keep their guards: each is created on its own in one transaction with its
    guards, which refuses a value or key already taken.

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
        first_import: Batch-write versioned entities too, into tables that must be empty
            (see above).

    Raises:
        LoadError: The load stopped: a value that cannot be stored, a key given twice, a
            non-entity, or a write that failed (throttled past its retries, refused by
            DynamoDB, a unique value or version conflict), or a first import into a table
            that is not empty. It holds how many items were written and which were not.
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
    empty = EmptyTables() if first_import else None
    run = _Load(
        db, progress, where or _items_at, batch_size, first_import=first_import, empty=empty
    )
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


# -- loads as units of a job ------------------------------------------------------------

#: Bytes of input per unit of a load: a chunk of whole lines that one worker writes.
CHUNK_BYTES = 8 * 1024 * 1024

#: Item lines per page of a unit: written (the batches flushed), then checkpointed.
PAGE_LINES = 100

_BOM = b"\xef\xbb\xbf"


def model_tables(ref: str) -> list[Table]:
    """The tables an import path names, as a job's spec holds it.

    ``"pkg.mod:attr"``: a `Table`, an entity class (its table) or a list of tables;
    ``"pkg.mod"``: every `Table` the module defines.

    Raises:
        JobError: The module does not import, or the path names no model.
    """
    module_name, _, attribute = ref.partition(":")
    try:
        value: Any = importlib.import_module(module_name)
        for part in attribute.split(".") if attribute else ():
            value = getattr(value, part)
    except (ImportError, AttributeError) as exc:
        raise JobError(f"model {ref!r}: {type(exc).__name__}: {exc}") from None
    if not attribute:
        tables = {id(v): v for v in vars(value).values() if isinstance(v, Table)}
        if not tables:
            raise JobError(f"module {module_name!r} defines no Table; name one as MODULE:ATTR")
        return list(tables.values())
    if isinstance(value, Table):
        return [value]
    if isinstance(value, type) and issubclass(value, BaseModel):
        return [plan_of(value).table]
    if isinstance(value, list | tuple) and value and all(isinstance(v, Table) for v in value):
        return list(value)
    raise JobError(f"{ref} is a {type(value).__name__}, not a Table, entity class or tables")


def local_path(ref: str) -> str:
    """The file a job's spec names: a path, or a ``file://`` URL (every worker reads it).

    Raises:
        JobError: Another kind of URL (the file must be readable by every worker as a
            file: a shared volume).
    """
    parsed = urllib.parse.urlparse(ref)
    if parsed.scheme == "file":
        return urllib.parse.unquote(parsed.path)
    if parsed.scheme and len(parsed.scheme) > 1:  # "C:\\..." is a path
        raise JobError(
            f"cannot read {ref!r}: a load job reads a path or a file:// URL that every "
            "worker can open (copy the file to a shared volume first)"
        )
    return ref


def file_units(
    path: str, *, chunk_bytes: int = CHUNK_BYTES, job_id: str = "load"
) -> list[WorkUnit]:
    """The units of a load of ``path``: chunks of about ``chunk_bytes`` of whole lines.

    Each chunk ends where a line ends (the line that crosses a boundary belongs to the
    chunk it starts in), so a unit reads from its ``start`` to its ``end`` byte and no
    line is split or read twice. ``line`` is the number of its first line (1-based), for
    messages. Reads the file once, ``chunk_bytes`` at a time.
    """
    if chunk_bytes < 1:
        raise RequestLimitError(f"chunk_bytes must be at least 1, got {chunk_bytes}")
    size = os.path.getsize(path)
    spans: list[dict[str, JsonValue]] = []
    with open(path, "rb") as stream:
        start, line = 0, 1
        while start < size:
            chunk = stream.read(chunk_bytes)
            if not chunk.endswith(b"\n"):
                chunk += stream.readline()  # the rest of the line that crosses the boundary
            spans.append({"start": start, "end": start + len(chunk), "line": line})
            start += len(chunk)
            line += chunk.count(b"\n")
    return [WorkUnit(job_id, "load", index, len(spans), span) for index, span in enumerate(spans)]


class LoadWork:
    """The work of a load's units (`UnitWork`): the lines of one chunk, page by page.

    A unit starts at its checkpoint (``{"offset": byte, "line": number}``, where the
    last page it saved ended) or at its chunk's start; it reads up to ``page_lines`` item
    lines, writes them as `load` does (batches, single guarded puts, versions kept),
    and saves the checkpoint with the page's count (``written``). Every write is
    conditional or idempotent, so a page repeated after a takeover changes nothing: a
    batch puts the same items again, a versioned put finds its own version stored.
    Before each write it calls ``ctx.spend`` with the estimator's figure.

    Args:
        db: The executor.
        path: The JSON Lines file (every worker of a job reads the same file).
        reader: The parser of its lines (the model, the entity).
        first_import: As `load`'s; with ``empty`` the tables are checked when their first
            item comes (``None``: not checked, as for a job's units, whose tables are
            checked by whoever starts the job).
        batch_size: Items per `BatchWrite`.
        page_lines: Item lines per page (between two checkpoints).
        progress: The display the units share (``None``: a silent one).
        parallel: Units run beside each other: a unit that stops names its own lines
            as written, not every line before it.
    """

    def __init__(
        self,
        db: Executor,
        path: str,
        reader: JsonLines,
        *,
        first_import: bool = False,
        empty: EmptyTables | None = None,
        batch_size: int = MAX_BATCH_WRITE,
        page_lines: int = PAGE_LINES,
        progress: Progress | None = None,
        parallel: bool = False,
    ) -> None:
        self.db = db
        self.path = path
        self.reader = reader
        self.first_import = first_import
        self.empty = empty
        self.batch_size = batch_size
        self.page_lines = page_lines
        self.progress = progress or Progress("load", None, _Discard(), bar=False)
        self.parallel = parallel
        #: The counts of every unit run so far (summed as each ends or stops).
        self.result = LoadResult()
        self._lock = threading.Lock()

    def __call__(self, unit: WorkUnit, ctx: UnitContext) -> None:
        """Run ``unit`` from its checkpoint to its end."""
        spec, checkpoint = unit.spec, ctx.checkpoint or {}
        offset = int(checkpoint.get("offset", spec["start"]))
        line = int(checkpoint.get("line", spec["line"]))
        end = int(spec["end"])
        run = _Load(
            self.db,
            self.progress,
            _line_named,
            self.batch_size,
            first_import=self.first_import,
            empty=self.empty,
            spend=ctx.spend,
            since=line if self.parallel else None,
        )
        # Messages count what earlier units wrote too (exact when units run in order).
        run.before = self.result.written
        written = 0
        started = time.monotonic()
        try:
            with open(self.path, "rb") as stream:
                stream.seek(offset)
                while offset < end:
                    taken = 0
                    while offset < end and taken < self.page_lines:
                        raw = stream.readline()
                        offset += len(raw)
                        number, line = line, line + 1
                        if number == 1 and raw.startswith(_BOM):
                            raw = raw[len(_BOM) :]
                        if not raw.strip():
                            continue
                        try:
                            obj = self.reader.parse(raw)
                        except LineError as exc:
                            exc.line = number
                            run.stop(number, exc, [])
                        run.take(number, obj)
                        taken += 1
                    run.flush()
                    page, written = run.result.written - written, run.result.written
                    if offset < end:
                        ctx.save({"offset": offset, "line": line}, {"written": page})
                    else:
                        ctx.finish({"written": page})
        finally:
            self._add(run.result, time.monotonic() - started)

    def _add(self, result: LoadResult, seconds: float) -> None:
        with self._lock:
            total = self.result
            total.written += result.written
            total.calls += result.calls
            total.retries += result.retries
            total.seconds += seconds
            for entity, n in result.by_entity.items():
                total.by_entity[entity] = total.by_entity.get(entity, 0) + n


def load_file(
    db: Executor,
    path: str,
    reader: JsonLines,
    *,
    total: int | None = None,
    first_import: bool = False,
    workers: int = 1,
    chunk_bytes: int = CHUNK_BYTES,
    page_lines: int = PAGE_LINES,
    batch_size: int = MAX_BATCH_WRITE,
    max_wcu: float | None = None,
    out: TextIO | None = None,
    progress_bar: bool | None = None,
    progress_interval: float = 1.0,
    label: str | None = None,
) -> LoadResult:
    """Load a JSON Lines file as units (`file_units`) run in this process.

    The same units and work (`LoadWork`) a load job's workers run, here on ``workers``
    threads with in-memory checkpoints (`singletable.tooling.jobs.local.run_units`).
    With one worker the units run in file order, and a load that stops has written every
    item before the line it names, as `load` says. Lines are read as `JsonLines` reads
    them; run `check` over the file first to list every invalid line and find keys
    given twice across chunks (each unit refuses keys given twice within its chunk).

    Args:
        db: The executor.
        path: The JSON Lines file.
        reader: The parser of its lines (the model, the entity).
        total: Item lines in the file, for the percentage and ETA.
        first_import: As `load`'s: versioned entities in batch writes, each table
            checked empty when its first item comes (before any unit writes to it).
        workers: Units run at once (threads).
        chunk_bytes: Bytes of input per unit.
        page_lines: Item lines per page, between two checkpoints.
        batch_size: Items per `BatchWrite` (1 to 25).
        max_wcu: Write capacity per second for the whole load (``None``: unlimited).
        out: Where progress goes (default: stderr).
        progress_bar: As `load`'s.
        progress_interval: Seconds between plain progress lines.
        label: What the progress display calls the load (default ``load PATH``).

    Raises:
        LoadError: A unit stopped (see `load`); lines are named ``line N``, and with
            more than one worker the message says which lines of its unit were written.
    """
    if not 1 <= batch_size <= MAX_BATCH_WRITE:
        raise RequestLimitError(
            f"batch_size must be 1 to {MAX_BATCH_WRITE} (one BatchWriteItem call), got {batch_size}"
        )
    units = file_units(path, chunk_bytes=chunk_bytes)
    progress = Progress(
        label or f"load {path}",
        total,
        out or sys.stderr,
        interval=progress_interval,
        bar=progress_bar,
        wording=LOAD_WORDING,
    )
    work = LoadWork(
        db,
        path,
        reader,
        first_import=first_import,
        empty=EmptyTables() if first_import else None,
        batch_size=batch_size,
        page_lines=page_lines,
        progress=progress,
        parallel=workers > 1,
    )
    started = time.monotonic()
    try:
        run_units(units, work, workers=workers, max_wcu=max_wcu)
    finally:
        progress.close()
        work.result.seconds = time.monotonic() - started
    return work.result


@dataclass(frozen=True)
class LoadKind:
    """The ``load`` `JobKind`: a JSON Lines file in chunks, rebuilt anywhere from its spec.

    Spec (JSON): ``model`` (import path of the tables, ``"pkg.mod:attr"`` or
    ``"pkg.mod"``, see `model_tables`), ``file`` (a path or ``file://`` URL every worker
    can read), and optionally ``entity``, ``first_import``, ``chunk_bytes``,
    ``page_lines``, ``batch_size``, ``job_id``.

    Planning (`units`) reads the whole file once: every line is validated and keys
    given twice are found (`check`), so a job never starts on a file a load would refuse
    half-way. A first import's emptiness check needs a connection, which planning does
    not have: whoever starts the job checks the tables (`require_empty`) first.
    """

    name: str = "load"

    def units(self, spec: Mapping[str, JsonValue]) -> list[WorkUnit]:
        """The file's chunks, once every line is known to be valid."""
        path = local_path(str(spec["file"]))
        with open(path, "rb") as stream:
            report = check(_spec_reader(spec), stream)
        if report.error_count:
            first = report.errors[0]
            raise LineError(
                f"{report.error_count:,} invalid line(s) in {path}, nothing planned; the "
                f"first: line {first.line}: {first}",
                line=first.line,
            )
        chunk_bytes = int(spec.get("chunk_bytes", CHUNK_BYTES))
        return file_units(path, chunk_bytes=chunk_bytes, job_id=str(spec.get("job_id", "load")))

    def work(self, spec: Mapping[str, JsonValue], executor: Any) -> LoadWork:
        """The work of the job's units, writing through ``executor``."""
        return LoadWork(
            executor,
            local_path(str(spec["file"])),
            _spec_reader(spec),
            first_import=bool(spec.get("first_import", False)),
            batch_size=int(spec.get("batch_size", MAX_BATCH_WRITE)),
            page_lines=int(spec.get("page_lines", PAGE_LINES)),
            parallel=True,
        )


def _spec_reader(spec: Mapping[str, JsonValue]) -> JsonLines:
    entity = spec.get("entity")
    return JsonLines(
        model_tables(str(spec["model"])), entity=None if entity is None else str(entity)
    )


#: The ``load`` job kind, for the job engine's registry.
LOAD_KIND = LoadKind()


def _line_named(number: int) -> str:
    return f"line {number}"


class _Discard(io.StringIO):
    """A stream that keeps nothing (the progress of units no one watches)."""

    def write(self, text: str) -> int:
        return len(text)
