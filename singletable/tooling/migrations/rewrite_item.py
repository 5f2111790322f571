"""One stored item's rewrite, built from the library's own operations.

`RewriteItem` is the rewrite of one scanned item as an `Operation` (a sans-I/O
generator), so any executor runs it: converted and conditioned by its entity's
`EntityRewrite`, written as the new model writes it, with its uniqueness guards moved in
the same transaction. A refused write (a concurrent ``update().add(...)``, a put) makes
the rewrite read the item again, consistently, and start over, so no concurrent write is
lost.

* Same key, no guard to move: a conditional PutItem replaces the item (dropping the
  attributes the new model no longer writes).
* New key, or guards to move: one TransactWriteItems of the put (on a new key: on
  condition that it is free), the conditional delete of the old key, and the guard
  entries; an item the new model already writes identically is only condition-checked.

Guards follow the item: a value that changes (a transform), an entity name that changes
(a rename), a codec that changes (the snapshot records each constraint's codecs) or a key
that moves releases the old guard and claims the new one (or claims the same guard again,
naming the new key). A constraint new to the model claims its guard (a backfill). Where
the item itself stays as it is (a backfill, a codec change) the guards are read first: one
the item already holds is counted as in place, not written again (a re-run writes
nothing). Where the item changes, the guard entries' conditions decide, and a refused
transaction reads the guards before it retries. Either way a value another item holds is
a duplicate: listed, and the item left as it was.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from singletable.attributes.size import item_size
from singletable.errors import RequestLimitError, ServiceError
from singletable.expressions.conditions import Condition, render_condition
from singletable.expressions.paths import Placeholders
from singletable.model.table import Table
from singletable.model.unique import GUARD_HOLDER_PK, GUARD_HOLDER_SK
from singletable.operations.batch import BatchWrite
from singletable.operations.common import ItemRequest, key_ref
from singletable.operations.guarded import (
    GuardWrite,
    TransactEntry,
    guard_entry,
    item_entry,
    read_request,
    transact_request,
)
from singletable.operations.protocol import Call, Operation, Sleep, Step, capacity_entries
from singletable.operations.transactions import TransactWrite
from singletable.tooling.cost.capacity import estimate_capacity
from singletable.tooling.cost.sizes import read_units
from singletable.tooling.migrations.rewrite import EntityRewrite, Unconvertible
from singletable.types import Item

#: Called with the capacity a write is about to use, before it is sent (the job's rate limit).
Spend = Callable[..., None]


@dataclass
class Outcome:
    """What the rewrite of one item did (or, in a dry run, would do)."""

    status: str = "unchanged"  # rewritten, unchanged, gone, failed
    moved: bool = False
    conflicts: int = 0
    error: str | None = None
    claimed: int = 0
    released: int = 0
    present: int = 0
    #: Per constraint new to the model (a backfill): guards claimed, already in place,
    #: and 1 when the item leaves a constrained field unset (not guarded).
    backfill_claimed: dict[str, int] = field(default_factory=dict)
    backfill_present: dict[str, int] = field(default_factory=dict)
    backfill_unguarded: dict[str, int] = field(default_factory=dict)
    #: (guard key, values, holders' keys, the new constraint's name or None) of a value
    #: another item holds.
    duplicate: tuple[str, dict[str, Any], list[Item], str | None] | None = None
    #: The item as the new model stores it (None: not converted).
    after: Item | None = None
    read_units: float = 0.0
    write_units: float = 0.0
    #: Per new constraint, the write units of its guard claims (part of write_units).
    backfill_write_units: dict[str, float] = field(default_factory=dict)
    reported_read_units: float = 0.0
    reported_write_units: float = 0.0


def _holder(table: Table, guard: Item | None) -> Item | None:
    if not guard or GUARD_HOLDER_PK not in guard:
        return None
    holder = {table.pk: guard[GUARD_HOLDER_PK]}
    if table.sk is not None and GUARD_HOLDER_SK in guard:
        holder[table.sk] = guard[GUARD_HOLDER_SK]
    return holder


def consumed_split(response: Mapping[str, Any]) -> tuple[float, float]:
    """A write's reported (read, write) units: a transaction's condition checks are reads.

    Where the response does not split them, the whole figure counts as written.
    """
    read = write = 0.0
    for entry in capacity_entries(response):
        if "ReadCapacityUnits" in entry or "WriteCapacityUnits" in entry:
            read += float(entry.get("ReadCapacityUnits", 0.0))
            write += float(entry.get("WriteCapacityUnits", 0.0))
        else:
            write += float(entry.get("CapacityUnits", 0.0))
    return read, write


def consumed(response: Mapping[str, Any]) -> float:
    """The capacity units a response (or a failed request's error response) reports."""
    return sum(consumed_split(response))


class _Conflict(Exception):
    """The item (or a guard it claims) changed since it was read: read again, retry."""


class _KeyTaken(Exception):
    """A moved item's new key already holds an item."""


@dataclass
class DryRunClaims:
    """The guards a dry run would claim (shared by the units of one process).

    So that two items of one run claiming one value are found without writing anything.
    """

    holders: dict[str, Item] = field(default_factory=dict)

    def claim(self, guard_pk: str, holder: Item) -> Item | None:
        """Record the claim; the holder of an earlier claim of the same guard, if any."""
        earlier = self.holders.setdefault(guard_pk, holder)
        return None if earlier == holder else earlier


class RewriteItem(Operation[Outcome]):
    """The rewrite of one scanned item (see the module docs), as an operation."""

    action = "transact_write_items"

    def __init__(
        self,
        rewrite: EntityRewrite,
        item: Item,
        *,
        dry_run: bool,
        max_attempts: int,
        spend: Spend | None = None,
        dry_claims: DryRunClaims | None = None,
    ) -> None:
        self.rewrite = rewrite
        self.subject = rewrite.plan.name
        self.item = item
        self.dry_run = dry_run
        self.max_attempts = max_attempts
        self.spend = spend
        self.dry_claims = dry_claims if dry_claims is not None else DryRunClaims()

    def _call(self, action: str, params: dict[str, Any]) -> Call:
        # Named for telemetry: a span "rewrite <entity>" whatever the first request is.
        return Call(action, params, operation="rewrite", subject=self.subject)

    def params(self) -> dict[str, Any]:
        """The first request: the rewrite's own write (with no guard read before it)."""
        new_item = self.rewrite.bumped(self.rewrite.convert(self.item))
        entries, single = self._entries(self.item, new_item, [], changed=True)
        if single is not None:
            return single
        return transact_request(entries, "INDEXES")

    def steps(self) -> Step[Outcome]:
        """Read guards, write, and on a conflict read the item again and start over."""
        r = self.rewrite
        out = Outcome()
        current: Item | None = self.item
        old_key = r.key_of(self.item)
        retried = False
        for attempt in range(self.max_attempts):
            if current is None or not r.ours(current):
                out.status = "gone"  # deleted (or rewritten by the new code) meanwhile
                return out
            try:
                new_item = r.convert(current)
                out.after = new_item
                self._unguarded(out, new_item)
                moves = r.guard_moves(current, new_item)
                moved = r.key_of(new_item) != old_key
                changed = new_item != current
                # An item that changes is written anyway, and its guard entries' conditions
                # decide: the guards are read first only where that changes what is
                # written or counted (an item that stays as it is: a backfill, a codec
                # change), after a refused write (to tell a duplicate), and in a dry run
                # (which writes nothing, but finds the duplicates; it bills those reads
                # only where the run would make them).
                if moves and (self.dry_run or retried or not (changed or moved)):
                    billed = retried or not (changed or moved)
                    moves = yield from self._checked(moves, current, new_item, out, billed)
                if out.duplicate is not None:
                    out.status = "failed"
                    return out
                if not changed and not moves:
                    out.status = "unchanged"
                    return out
                written = r.bumped(new_item) if changed else new_item
                entries, single = self._entries(current, written, moves, changed=changed)
                if attempt == 0 or self.dry_run:
                    self._estimate(out, current, new_item, entries, single, moves)
                if not self.dry_run:
                    yield from self._send(entries, single, out, moved=moved)
            except Unconvertible as exc:
                return self._failed(out, current, str(exc))
            except _KeyTaken:
                # The new key is taken. By this very item, when another worker moved it
                # meanwhile (one that took the unit over, a second run): read it again
                # before calling it a clash; only an old item still there as it was is one.
                response = yield self._call("get_item", read_request(r.plan, old_key, "INDEXES"))
                out.reported_read_units += consumed(response)
                fresh = response.get("Item")
                if fresh is not None and fresh == current:
                    return self._failed(
                        out,
                        current,
                        "its new key already holds an item (two old keys map to one new key?)",
                    )
                current = fresh
                retried = True
                continue
            except _Conflict:
                out.conflicts += 1
                retried = True
                yield Sleep(random.uniform(0, 0.005 * min(attempt + 1, 10)))
                response = yield self._call("get_item", read_request(r.plan, old_key, "INDEXES"))
                out.reported_read_units += consumed(response)
                current = response.get("Item")
                continue
            except ServiceError as exc:
                return self._failed(out, current, str(exc))
            self._count(out, moves, changed, moved)
            return out
        return self._failed(
            out,
            self.item,
            f"changed by other writers {self.max_attempts} times while being rewritten; "
            "run migrate again",
        )

    # -- the steps --------------------------------------------------------------------------

    def _unguarded(self, out: Outcome, new_item: Item) -> None:
        r = self.rewrite
        for c in r.plan.unique:
            if c.name not in r.old_constraints:
                values = c.values(r.decoded(new_item, c.fields))
                out.backfill_unguarded[c.name] = int(values is None)

    def _failed(self, out: Outcome, item: Item, reason: str) -> Outcome:
        out.status = "failed"
        out.error = f"{self.rewrite.key_text(item)}: {reason}"
        return out

    def _checked(
        self,
        moves: list[GuardWrite],
        current: Item,
        new_item: Item,
        out: Outcome,
        billed: bool,
    ) -> Step[list[GuardWrite]]:
        """The moves left once each guard is read: in place, someone else's, or to write."""
        r = self.rewrite
        table = r.table
        old_key, new_key = r.key_of(current), r.key_of(new_item)
        out.present = 0
        out.backfill_present = {}
        kept: list[GuardWrite] = []
        for move in moves:
            guard_key = move.constraint.guard_key(move.values)
            response = yield self._call("get_item", read_request(r.plan, guard_key, "INDEXES"))
            out.reported_read_units += consumed(response)
            if billed:
                out.read_units += read_units(_size(response.get("Item")) or 1, consistent=True)
            holder = _holder(table, response.get("Item"))
            if not move.claim:
                if holder == old_key:
                    kept.append(move)  # else: nothing of this item's to release
                continue
            name = move.constraint.name if self.rewrite.is_backfill(move) else None
            if holder == new_key and move.moved_from is None:
                if name is not None:
                    out.backfill_present[name] = 1
                else:
                    out.present += 1
                continue
            if holder == new_key:
                # Claimed for the key this item moves to: the item was moved there
                # meanwhile (by a worker that took its unit over, whose move committed
                # between this item's read and this guard's), or another item sits there.
                # The key check tells the two apart; neither is a duplicate value.
                raise _KeyTaken()
            if holder is not None and holder != old_key:
                out.duplicate = (guard_key[table.pk]["S"], move.values, [holder, new_key], name)
                return kept
            if holder is None and self.dry_run:
                earlier = self.dry_claims.claim(guard_key[table.pk]["S"], new_key)
                if earlier is not None:
                    out.duplicate = (
                        guard_key[table.pk]["S"],
                        move.values,
                        [earlier, new_key],
                        name,
                    )
                    return kept
            kept.append(move)
        return kept

    def _entries(
        self, current: Item, new_item: Item, moves: list[GuardWrite], *, changed: bool
    ) -> tuple[list[TransactEntry], dict[str, Any] | None]:
        """The transaction's entries, or the single PutItem request when that is all."""
        r = self.rewrite
        table = r.table
        old_key, new_key = r.key_of(current), r.key_of(new_item)
        unchanged = r.unchanged(current)
        if old_key == new_key and not moves:
            put = ItemRequest(
                "Put", table.name, new_key, new_item, condition=unchanged, capacity="INDEXES"
            )
            return [], put.params()
        entries: list[TransactEntry] = []
        if old_key != new_key:
            # The new key must be free: two old items the new template maps to one key
            # cannot overwrite each other.
            free = key_ref(table.pk).not_exists()
            put = ItemRequest("Put", table.name, new_key, new_item, condition=free)
            entries.append(item_entry(r.plan, put, None))
            delete = ItemRequest("Delete", table.name, old_key, condition=unchanged)
            entries.append(item_entry(r.plan, delete, None))
        elif changed:
            put = ItemRequest("Put", table.name, new_key, new_item, condition=unchanged)
            entries.append(item_entry(r.plan, put, None))
        else:
            label = r.plan.label
            check = _request({"TableName": table.name, "Key": old_key}, unchanged)
            entries.append(TransactEntry(label, table.name, old_key, {"ConditionCheck": check}))
        for move in moves:
            entries.append(guard_entry(r.plan, move, new_key if move.claim else old_key))
        return entries, None

    def _estimate(
        self,
        out: Outcome,
        current: Item,
        new_item: Item,
        entries: list[TransactEntry],
        single: dict[str, Any] | None,
        moves: list[GuardWrite],
    ) -> None:
        """The write's capacity, from the estimator; spent before the write is sent."""
        table = self.rewrite.table
        if single is not None:
            # A PutItem is billed as a batch put of the same item (1 WCU per 1 KB of the
            # larger of the items before and after, plus each index entry written).
            batch = BatchWrite()
            batch.requests.append((table.name, {"PutRequest": {"Item": single["Item"]}}))
            estimate = estimate_capacity(batch, existing=[current], tables=[table])
            out.write_units = estimate.wcu
        else:
            existing: list[Item | None] = []
            for entry in entries:
                if entry.guard is not None:
                    existing.append(None)
                elif "Put" in entry.request and entry.key != self.rewrite.key_of(current):
                    existing.append(None)  # a moved item's new key: free
                else:
                    existing.append(current)
            operation = TransactWrite(entries=list(entries))
            estimate = estimate_capacity(operation, existing=existing, tables=[table])
            out.write_units = estimate.wcu
            out.read_units += estimate.rcu
            out.backfill_write_units = {}
            for i, entry in enumerate(entries):
                if entry.guard is not None and self.rewrite.is_backfill(entry.guard):
                    name = entry.guard.constraint.name
                    units = sum(line.units for line in estimate.lines if line.item == i)
                    out.backfill_write_units[name] = out.backfill_write_units.get(name, 0) + units
        if self.spend is not None and not self.dry_run:
            self.spend(wcu=out.write_units)

    def _send(
        self,
        entries: list[TransactEntry],
        single: dict[str, Any] | None,
        out: Outcome,
        *,
        moved: bool,
    ) -> Step[None]:
        try:
            if single is not None:
                response = yield self._call("put_item", single)
            else:
                response = yield self._call(
                    "transact_write_items", transact_request(entries, "INDEXES")
                )
        except ServiceError as exc:
            self._reported(out, exc.response)
            _raise_conflict(exc, moved=moved)
            raise
        except RequestLimitError as exc:
            raise Unconvertible(str(exc)) from None
        self._reported(out, response)

    @staticmethod
    def _reported(out: Outcome, response: Mapping[str, Any]) -> None:
        read, write = consumed_split(response)
        out.reported_read_units += read
        out.reported_write_units += write

    def _count(self, out: Outcome, moves: list[GuardWrite], changed: bool, moved: bool) -> None:
        out.status = "rewritten" if changed else "unchanged"
        out.moved = moved
        for move in moves:
            if move.claim and self.rewrite.is_backfill(move):
                out.backfill_claimed[move.constraint.name] = 1
            elif move.claim:
                out.claimed += 1
            else:
                out.released += 1


def _size(item: Item | None) -> int:
    return 0 if item is None else item_size(item)


def _request(request: dict[str, Any], condition: Condition) -> dict[str, Any]:
    ph = Placeholders()
    request["ConditionExpression"] = render_condition(condition, ph)
    ph.apply(request)
    return request


def _raise_conflict(exc: ServiceError, *, moved: bool) -> None:
    """Turn a refused conditional write into `_Conflict` / `_KeyTaken`; else return."""
    if exc.code in ("ConditionalCheckFailedException", "TransactionConflictException"):
        raise _Conflict() from None
    if exc.code != "TransactionCanceledException":
        return
    reasons = exc.response.get("CancellationReasons")
    if reasons:
        codes = [r.get("Code") for r in reasons]
    else:
        # Some backends leave the reasons out of the parsed response; DynamoDB always
        # lists them in the message: "... reasons [ConditionalCheckFailed, None]".
        listed = exc.message.rpartition("[")[2].rstrip("]")
        codes = [c.strip() for c in listed.split(",")]
    if moved and codes and codes[0] == "ConditionalCheckFailed":
        raise _KeyTaken() from None
    # The item's condition, or a guard's (claimed meanwhile by another item: the next
    # attempt reads it and reports the duplicate), or a transaction in flight.
    if any(c in ("ConditionalCheckFailed", "TransactionConflict") for c in codes):
        raise _Conflict() from None
