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

The JSON Lines input of ``singletable load`` is read and checked by
`singletable.tooling.bulk.lines`; a file is loaded as units of a job by
`singletable.tooling.bulk.load_units`, whose units write with the same `Loading`.
"""

from __future__ import annotations

import hashlib
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sized
from dataclasses import dataclass, field
from typing import Any, NoReturn, TextIO

from pydantic import BaseModel

from singletable.errors import (
    AlreadyExistsError,
    BatchWriteIncompleteError,
    LoadError,
    RequestLimitError,
    SingleTableError,
    UniqueConstraintError,
)
from singletable.model.jobs import is_reserved_item
from singletable.model.plan import EntityPlan, plan_of
from singletable.model.table import Table
from singletable.model.unique import UniqueConstraint
from singletable.model.wire import key_identity
from singletable.operations.batch import MAX_BATCH_WRITE, BatchWrite
from singletable.operations.common import describe_key
from singletable.operations.items import Put
from singletable.operations.protocol import Executor
from singletable.operations.scan import Scan
from singletable.tooling.cost.capacity import estimate_capacity
from singletable.tooling.jobs.progress import Progress, Wording
from singletable.types import Item

#: How a load's progress names its counts: "1,200 of 5,000 written (24%), 0 failed".
LOAD_WORDING = Wording(done="written", others=("failed",), approximate=False)


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


class Loading:
    """One load's state: the batch being filled, the keys written, the counts.

    What `load` runs over its iterable, and each unit of a file's load
    (`singletable.tooling.bulk.load_units.LoadWork`) over its lines.

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
        """Write ``obj`` (the item at ``position``) on its own, or add it to the batch."""
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
        """Count ``n`` items of ``entity`` written, in ``calls`` write calls."""
        self.result.written += n
        self.result.calls += calls
        self.result.by_entity[entity] = self.result.by_entity.get(entity, 0) + n
        self.progress.update(scanned=n)

    def stop(
        self, position: int, cause: SingleTableError, unwritten: list[tuple[int, BaseModel]]
    ) -> NoReturn:
        """Raise the `LoadError` of a load stopped at ``position``: what was and was not written."""
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
    check_batch_size(batch_size)
    if total is None and isinstance(objects, Sized):
        total = len(objects)
    progress = load_progress(label, total, out, progress_bar, progress_interval)
    empty = EmptyTables() if first_import else None
    run = Loading(
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


def check_batch_size(batch_size: int) -> None:
    """Refuse a ``batch_size`` that is not 1 to 25 (one BatchWriteItem call).

    Raises:
        RequestLimitError: It is not.
    """
    if not 1 <= batch_size <= MAX_BATCH_WRITE:
        raise RequestLimitError(
            f"batch_size must be 1 to {MAX_BATCH_WRITE} (one BatchWriteItem call), got {batch_size}"
        )


def load_progress(
    label: str, total: int | None, out: TextIO | None, bar: bool | None, interval: float
) -> Progress:
    """A load's progress display (on stderr by default), worded by `LOAD_WORDING`."""
    return Progress(
        label, total, out or sys.stderr, interval=interval, bar=bar, wording=LOAD_WORDING
    )
