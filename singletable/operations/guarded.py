"""Guarded writes: an item write and its uniqueness guards in one transaction.

A guard item (`singletable.model.unique`) exists for every unique value an item holds.
Every write that can change which values an item holds goes through TransactWriteItems,
built here from a `GuardedWrite`: the item's own request (a plain `ItemRequest` value,
whatever operation made it) and what the write does to the unique values.

* a create: put the item (``attribute_not_exists``) and claim each guard
  (``attribute_not_exists``, or already held by this very item);
* a put over a possibly existing item, an update of a unique field, a delete: the old
  values decide which guards to release, so they must be known. They are either given
  (``Update.known(...)``, ``Entity.delete(obj)``) or read first with a consistent
  GetItem; the transaction then puts a condition on the item that its unique fields
  still hold those values, so a concurrent change cancels it instead of orphaning a
  guard. A read-first write that loses such a race (or a ``TransactionConflict``) reads
  again and retries, a few times, with backoff (`guarded_steps`).

A claim that fails raises `UniqueConstraintError` naming the entity, fields, value and,
from the guard returned by DynamoDB, the key of the item that holds the value. A failed
condition of the item itself is raised as the ``ConditionalCheckFailedException``
`ServiceError` its single-item request would raise, so each operation turns it into its
typed error exactly as it does without guards.

Bulk work replaces items wholesale (a migration that changes a unique value, the entity
name or the key): `replacement_entries` gives the guard changes of such a replacement.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal

from singletable.attributes.size import item_size
from singletable.errors import (
    ConditionFailedError,
    ServiceError,
    TransactionCanceledError,
    UniqueConstraintError,
)
from singletable.expressions.conditions import Condition, and_, or_, render_condition
from singletable.expressions.paths import Placeholders
from singletable.model.fields import FieldRefs, field_refs
from singletable.model.unique import GUARD_HOLDER_PK, GUARD_HOLDER_SK, UniqueConstraint
from singletable.operations.common import ItemRequest, key_ref
from singletable.operations.protocol import Call, ReturnCapacity, Sleep, Step
from singletable.types import AttributeValue, Item, frozen_dataclass

if TYPE_CHECKING:
    from singletable.model.plan import EntityPlan

#: How often a read-first write re-reads and retries after losing a race.
MAX_ATTEMPTS = 6
_BACKOFF_BASE = 0.02
_CHECK_FAILED = "ConditionalCheckFailed"
_BACKOFF_CAP = 0.5


@frozen_dataclass
class GuardWrite:
    """One guard change: claim (put) or release (delete) the guard of ``values``."""

    constraint: UniqueConstraint
    claim: bool
    values: dict[str, Any]
    #: For a claim of a guard the item already holds under its old key (the item moves to
    #: a new key): that old key, which the guard may still name as its holder.
    moved_from: Item | None = None


@frozen_dataclass
class TransactEntry:
    """One element of a TransactWriteItems request, with what it is for."""

    label: str
    table: str
    key: Item
    request: dict[str, Any]
    #: The bytes the entry is known to write (a put's item), toward the 4 MB limit.
    size: int = 0
    #: The uniqueness guard this entry claims or releases, if it is one.
    guard: GuardWrite | None = None
    #: The entity the entry writes (set by `TransactWrite`; ``None`` for condition checks
    #: of its own making), so a cancellation reason can be told per entity.
    plan: EntityPlan | None = None
    #: For a guard entry: the key of the item whose write it belongs to, so that a failed
    #: guard condition can be told from the failed condition of that item.
    holder: Item | None = None


@frozen_dataclass
class GuardedWrite:
    """A write of an entity with unique fields, as the guard mechanism needs to know it.

    Attributes:
        plan: The entity.
        request: The item's own request (its key, its condition).
        constraints: The constraints the write may move (all of the entity's, or those
            whose fields an update changes).
        values: What the item holds after the write: all its field values (a put), the
            fields the write sets (``partial``: an update), or ``None`` (a delete).
        partial: ``values`` are changes over the stored values.
        created: For a partial write that may create the item (an upsert): the values
            it starts from (defaults of the constrained fields, the key fields).
        known: The stored values of the constrained fields, when given instead of read.
        absent: The item is known not to exist (a create: its own condition says so).
        missing: What a read that finds no item means: ``"write"`` it anyway (a put, an
            upsert), ``"fail"`` (an update: its condition failed, for want of an item),
            ``"done"`` (a delete: nothing to release; a conditional one still sends its
            request, so that its condition is reported as a plain delete's would be).
        read_back: Read the item after the write (a transaction returns none).
    """

    plan: EntityPlan
    request: ItemRequest
    constraints: tuple[UniqueConstraint, ...]
    values: Mapping[str, Any] | None
    partial: bool = False
    created: Mapping[str, Any] = field(default_factory=dict)
    known: Mapping[str, Any] | None = None
    absent: bool = False
    missing: Literal["write", "fail", "done"] = "write"
    read_back: bool = False

    @property
    def reads_first(self) -> bool:
        """Whether the stored values must be read before the transaction."""
        return self.known is None and not self.absent

    def after(self, old: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
        """The values the item holds after the write, over the stored ``old`` ones."""
        if self.values is None or not self.partial:
            return self.values
        return {**(old if old is not None else self.created), **self.values}


# -- what changes --------------------------------------------------------------------


def guard_writes(
    constraints: Iterable[UniqueConstraint],
    old: Mapping[str, Any] | None,
    new: Mapping[str, Any] | None,
    *,
    old_constraints: Iterable[UniqueConstraint] | None = None,
    moved_from: Item | None = None,
) -> list[GuardWrite]:
    """The guards to release and claim when an item's values go from ``old`` to ``new``.

    ``None`` stands for "no item". A constraint whose guard key does not change needs
    nothing: the guard is already held by the item; unless the item moves from the key
    ``moved_from``: the guard is then claimed for the new key, from the old one.
    ``old_constraints`` are the ones the old values were guarded by, when they differ
    (another entity name); constraints are paired by their fields.
    """
    after_by_name = {c.name: c for c in constraints}
    before_list = list(after_by_name.values() if old_constraints is None else old_constraints)
    before_names = {c.name for c in before_list}
    pairs: list[tuple[UniqueConstraint | None, UniqueConstraint | None]] = [
        (c, after_by_name.get(c.name)) for c in before_list
    ]
    pairs += [(None, c) for name, c in after_by_name.items() if name not in before_names]
    writes: list[GuardWrite] = []
    for before_c, after_c in pairs:
        before = before_c.values(old) if before_c is not None and old is not None else None
        after = after_c.values(new) if after_c is not None and new is not None else None
        if (
            before is not None
            and after is not None
            and before_c is not None
            and after_c is not None
            and before_c.guard_key(before) == after_c.guard_key(after)
        ):
            if moved_from is not None:
                writes.append(GuardWrite(after_c, True, after, moved_from))
            continue
        if before_c is not None and before is not None:
            writes.append(GuardWrite(before_c, False, before))
        if after_c is not None and after is not None:
            writes.append(GuardWrite(after_c, True, after))
    return writes


def stored_values(
    plan: EntityPlan, item: Mapping[str, AttributeValue], fields: Iterable[str]
) -> dict[str, Any]:
    """The values of ``fields`` in a stored item (``None`` where the attribute is absent)."""
    values: dict[str, Any] = plan.fields_from_keys(item)
    for name in fields:
        plan_field = plan.fields[name]
        av = item.get(plan_field.attribute)
        values[name] = None if av is None else plan_field.codec.from_av(av)
    return values


def values_unchanged(plan: EntityPlan, old: Mapping[str, Any], fields: Iterable[str]) -> Condition:
    """The condition that the stored item's ``fields`` still hold the ``old`` values."""
    refs: FieldRefs[Any] = field_refs(plan)
    return and_(*(getattr(refs, name) == old.get(name) for name in sorted(set(fields))))


def _held_by(constraint: UniqueConstraint, holder: Item) -> Condition:
    return and_(*(key_ref(attr) == av for attr, av in constraint.holder_attributes(holder).items()))


def guard_entry(plan: EntityPlan, write: GuardWrite, holder: Item) -> TransactEntry:
    """The transaction element that claims or releases one guard for the item ``holder``.

    Both are conditioned on the guard being free or already held by ``holder`` (or, for
    a claim that moves the guard to a new key, by the old key): a claim never takes
    another item's value, a release never frees another item's value.
    """
    constraint = write.constraint
    table = plan.table
    key = constraint.guard_key(write.values)
    ph = Placeholders()
    holders = [_held_by(constraint, holder)]
    if write.moved_from is not None:
        holders.append(_held_by(constraint, write.moved_from))
    condition = or_(key_ref(table.pk).not_exists(), *holders)
    request: dict[str, Any] = {"TableName": table.name}
    if write.claim:
        guard = constraint.guard_item(write.values, holder)
        request["Item"] = guard
        size = item_size(guard)
    else:
        request["Key"] = key
        size = 0
    request["ConditionExpression"] = render_condition(condition, ph)
    request["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    ph.apply(request)
    verb = "claim" if write.claim else "release"
    return TransactEntry(
        f"{plan.label} unique {constraint.name} ({verb})",
        table.name,
        key,
        {"Put" if write.claim else "Delete": request},
        size,
        write,
        holder=holder,
    )


def item_entry(plan: EntityPlan, request: ItemRequest, extra: Condition | None) -> TransactEntry:
    """The transaction element of an item's own request, its condition joined with ``extra``."""
    params = request.params(extra)
    for name in ("ReturnValues", "ReturnConsumedCapacity"):
        params.pop(name, None)
    size = item_size(params["Item"]) if request.kind == "Put" else 0
    return TransactEntry(plan.label, plan.table.name, request.key, {request.kind: params}, size)


def transact_request(
    entries: Sequence[TransactEntry], capacity: ReturnCapacity | None
) -> dict[str, Any]:
    """The TransactWriteItems request of ``entries``."""
    request: dict[str, Any] = {"TransactItems": [e.request for e in entries]}
    if capacity is not None:
        request["ReturnConsumedCapacity"] = capacity
    return request


def read_request(plan: EntityPlan, key: Item, capacity: ReturnCapacity | None) -> dict[str, Any]:
    """The consistent GetItem that reads the values a write must release."""
    request: dict[str, Any] = {"TableName": plan.table.name, "Key": key, "ConsistentRead": True}
    if capacity is not None:
        request["ReturnConsumedCapacity"] = capacity
    return request


# -- the entries of a write --------------------------------------------------------------


def write_entries(write: GuardedWrite, old: Mapping[str, Any] | None) -> list[TransactEntry]:
    """The transaction of ``write``: the item, then its guard changes.

    ``old`` are the stored values of the constrained fields (``None``: no item). Unless
    the item is known to be absent (a create), the item's request is conditioned on them
    still being stored.
    """
    plan = write.plan
    fields = {f for c in write.constraints for f in c.fields}
    extra: Condition | None
    if old is None:
        extra = None if write.absent else key_ref(plan.table.pk).not_exists()
    else:
        extra = values_unchanged(plan, old, fields)
    holder = write.request.key
    writes = guard_writes(write.constraints, old, write.after(old))
    item = item_entry(plan, write.request, extra)
    return [item, *(guard_entry(plan, w, holder) for w in writes)]


def first_request(write: GuardedWrite) -> dict[str, Any]:
    """The first request `guarded_steps` sends: the read, or the transaction itself."""
    capacity = write.request.capacity
    if write.reads_first:
        return read_request(write.plan, write.request.key, capacity)
    return transact_request(write_entries(write, write.known), capacity)


def replacement_entries(
    plan: EntityPlan,
    old: Item | None,
    new: Item | None,
    *,
    old_plan: EntityPlan | None = None,
) -> list[TransactEntry]:
    """The guard changes of replacing the stored item ``old`` by the item ``new``.

    For bulk rewrites (a migration): each is one transaction of the item writes and these
    entries. ``old`` is the item as stored (written by ``old_plan``, by default ``plan``:
    give the old entity's plan when the rewrite changes the entity name or version),
    ``new`` the item ``plan`` writes in its place; ``None`` on either side stands for no
    item (a new item, a removed one). Both are stored items (AttributeValues).

    The entries release the guards of the values only ``old`` holds (each conditioned on
    the guard being free or held by ``old``'s key) and claim those of the values only
    ``new`` holds (free or held by ``new``'s key). A guard both hold stays, unless the key
    changes: it is then claimed again, naming ``new``'s key, on condition that it is free
    or held by either key (one entry: a transaction may write each item once).

    The entries do not write the items themselves: the caller adds them, for instance
    `item_entry` of an ``ItemRequest("Delete", ...)`` of the old key when it changes and
    of an ``ItemRequest("Put", ...)`` of ``new``, with the conditions it needs (such as
    `values_unchanged` for the old item). A failed claim in the cancelled transaction is
    told by `raise_cancellation`.
    """
    before = old_plan or plan
    old_key = before.key_of_item(old) if old is not None else None
    new_key = plan.key_of_item(new) if new is not None else None
    old_values = stored_values(before, old, before.unique_fields()) if old is not None else None
    new_values = stored_values(plan, new, plan.unique_fields()) if new is not None else None
    moved = old_key is not None and new_key is not None and old_key != new_key
    writes = guard_writes(
        plan.unique,
        old_values,
        new_values,
        old_constraints=before.unique,
        moved_from=old_key if moved else None,
    )
    entries: list[TransactEntry] = []
    for write in writes:
        holder = new_key if write.claim else old_key
        assert holder is not None
        entries.append(guard_entry(plan if write.claim else before, write, holder))
    return entries


# -- running them ----------------------------------------------------------------------


class _Failure:
    # A plain class: a dataclass costs ~0.3 ms of import time to generate (issue 13).
    __slots__ = ("code", "entry", "item")

    def __init__(self, entry: TransactEntry, code: str, item: Item | None) -> None:
        self.entry = entry
        self.code = code
        self.item = item


def _failures(exc: ServiceError, entries: Sequence[TransactEntry]) -> list[_Failure]:
    reasons = exc.response.get("CancellationReasons") or []
    result = []
    for entry, reason in zip(entries, reasons, strict=False):
        code = reason.get("Code")
        if code not in (None, "None"):
            result.append(_Failure(entry, str(code), reason.get("Item")))
    return result


def unique_error(plan: EntityPlan, write: GuardWrite, guard: Item | None) -> UniqueConstraintError:
    """The error for a claim that failed because another item holds the value."""
    constraint = write.constraint
    holder: dict[str, Any] | None = None
    if guard and GUARD_HOLDER_PK in guard:
        table = plan.table
        key = {table.pk: guard[GUARD_HOLDER_PK]}
        if table.sk is not None and GUARD_HOLDER_SK in guard:
            key[table.sk] = guard[GUARD_HOLDER_SK]
        holder = plan.fields_from_keys(key) or {k: v for k, v in key.items()}
    shown = ", ".join(f"{k}={v!r}" for k, v in write.values.items())
    by = f" by the item with key {holder}" if holder else " by another item"
    return UniqueConstraintError(
        f"{plan.label}: unique {constraint.name} ({shown}) is already held{by}",
        entity=plan.name,
        fields=constraint.fields,
        value=dict(write.values),
        holder=holder,
    )


def known_mismatch(
    plan: EntityPlan, known: Mapping[str, Any], stored: Item | None, given: str = ".known(...)"
) -> ConditionFailedError | None:
    """The error for a write whose stored values of unique fields were given wrong.

    ``known`` are the values the write was told are stored (by ``given``: `Update.known`,
    a deleted object): the guards it moves were chosen from them, and the item's condition
    checks them. ``stored`` is the item as it is stored (``None``: not read back).
    """
    if not stored:
        return None
    now = stored_values(plan, stored, plan.unique_fields())
    if all(now.get(name) == value for name, value in known.items()):
        return None
    return ConditionFailedError(
        f"{plan.label}: the stored values of {sorted(known)} are not the ones given to "
        f"{given} ({dict(known)}); stored: { ({name: now.get(name) for name in known}) }",
        item=stored,
    )


def _released_values(entries: Sequence[TransactEntry], item: TransactEntry) -> dict[str, Any]:
    """The stored values the guard releases of ``item``'s write were built from."""
    known: dict[str, Any] = {}
    for entry in entries:
        write = entry.guard
        if write is not None and not write.claim and entry.holder == item.key:
            known.update(write.values)
    return known


def raise_cancellation(
    plans: EntityPlan | Sequence[EntityPlan | None],
    exc: ServiceError,
    entries: Sequence[TransactEntry],
) -> None:
    """Raise the typed error of a cancelled transaction whose guards failed, if any did.

    ``plans`` is the entity of every entry (or one entity for all of them). The guards a
    write releases are chosen from the stored values it was given: when its item's
    condition failed because those values are not stored, that is the cause named (a
    `ConditionFailedError`), not the guards that failed for the same reason. Otherwise a
    failed claim is a `UniqueConstraintError`; a failed release means another item
    holds the guard this item should hold (guards out of step with items, e.g. after
    writes that bypassed singletable): a `ConditionFailedError` saying so.
    """

    def plan_of(entry: TransactEntry) -> EntityPlan | None:
        return plans if not isinstance(plans, Sequence) else plans[entries.index(entry)]

    failures = _failures(exc, entries)
    for failure in failures:
        plan = plan_of(failure.entry)
        if failure.entry.guard is None and plan is not None and failure.code == _CHECK_FAILED:
            known = _released_values(entries, failure.entry)
            given = "the deleted object" if "Delete" in failure.entry.request else ".known(...)"
            mismatch = known_mismatch(plan, known, failure.item, given)
            if known and mismatch is not None:
                raise mismatch from None
    for failure in failures:
        write = failure.entry.guard
        if write is None or failure.code != _CHECK_FAILED:
            continue
        plan = plan_of(failure.entry)
        if plan is None:
            continue
        if write.claim:
            raise unique_error(plan, write, failure.item) from None
        raise ConditionFailedError(
            f"{plan.label}: the guard of unique {write.constraint.name} {write.values} is held "
            "by another item, so this item's value cannot be released; the guards are out of "
            "step with the items (see docs/uniqueness.md, backfill)"
        ) from None


def _cancelled(exc: ServiceError, entries: Sequence[TransactEntry]) -> TransactionCanceledError:
    failures = _failures(exc, entries)
    summary = "; ".join(f"{f.entry.label}: {f.code}" for f in failures)
    reasons = [
        {"index": entries.index(f.entry), "entity": f.entry.label, "code": f.code, "item": f.item}
        for f in failures
    ]
    return TransactionCanceledError(
        f"transaction cancelled: {summary or exc.message}", reasons=reasons
    )


def _sleep(attempt: int) -> Sleep:
    # "Full jitter", as batch retries: concurrent writers of one value spread out.
    return Sleep(random.uniform(0, min(_BACKOFF_CAP, _BACKOFF_BASE * (2**attempt))))


def _item_failure(exc: ServiceError, entries: Sequence[TransactEntry]) -> _Failure | None:
    for failure in _failures(exc, entries):
        if failure.entry.guard is None and failure.code == "ConditionalCheckFailed":
            return failure
    return None


def _conflicted(exc: ServiceError, entries: Sequence[TransactEntry]) -> bool:
    return any(f.code == "TransactionConflict" for f in _failures(exc, entries))


def _changed(plan: EntityPlan, old: Mapping[str, Any] | None, stored: Item | None) -> bool:
    """Whether the stored item no longer holds what a read-first write read."""
    if old is None or not stored:
        return (old is None) != (not stored)
    now = stored_values(plan, stored, plan.unique_fields())
    for constraint in plan.unique:
        before, after = constraint.values(old), constraint.values(now)
        if (before is None) != (after is None):
            return True
        if (
            before is not None
            and after is not None
            and constraint.guard_key(before) != constraint.guard_key(after)
        ):
            return True
    return False


def condition_failure(item: Item | None) -> ServiceError:
    """A failed item condition as the error its single-item request would raise."""
    response: dict[str, Any] = {"Item": item} if item else {}
    return ServiceError(
        "ConditionalCheckFailedException", "the conditional request failed", response=response
    )


def guarded_steps(write: GuardedWrite) -> Step[Item | None]:
    """Run ``write``: read (unless the old values are known), transact, retry on a lost race.

    Raises:
        ServiceError: ``ConditionalCheckFailedException`` when the item's own condition
            failed (its ``response`` carries the stored item, if any), as the plain
            single-item request would: the operation makes it its typed error.
        UniqueConstraintError: A value is held by another item.
        TransactionCanceledError: The transaction failed otherwise, or kept losing races.

    Returns:
        With ``read_back``, the item as stored after the write (``None``: deleted in the
        meantime); else the item read before the write (``None`` if none was read).
    """
    plan, request = write.plan, write.request
    read = write.reads_first
    for attempt in range(MAX_ATTEMPTS):
        old = write.known
        stored: Item | None = None
        if read:
            response = yield Call(
                "get_item",
                read_request(plan, request.key, request.capacity),
                operation=request.action,
                subject=plan.name,
            )
            stored = response.get("Item")
            if stored is None and write.missing == "fail":
                raise condition_failure(None)
            if stored is None and write.missing == "done":
                # Nothing holds guards here. A conditional write of a missing item still
                # reports its condition, as the plain request would; it can never write.
                if request.condition is not None:
                    not_there = key_ref(plan.table.pk).not_exists()
                    yield Call(request.action, request.params(not_there), subject=plan.name)
                return None
            old = stored_values(plan, stored, plan.unique_fields()) if stored else None
        entries = write_entries(write, old)
        try:
            yield Call(
                "transact_write_items",
                transact_request(entries, request.capacity),
                operation=request.action,
                subject=plan.name,
            )
        except ServiceError as exc:
            if exc.code != "TransactionCanceledException":
                raise
            failed_item = _item_failure(exc, entries)
            if failed_item is not None and not read:
                if write.values is None and not failed_item.item:
                    return None  # already deleted (and its guards released) by someone else
                raise condition_failure(failed_item.item) from None
            if failed_item is not None and not _changed(plan, old, failed_item.item):
                raise condition_failure(failed_item.item) from None
            if failed_item is None:
                raise_cancellation(plan, exc, entries)
                if not _conflicted(exc, entries):
                    raise _cancelled(exc, entries) from None
            # Else the item changed after it was read: the guard conditions built from that
            # read can fail for that reason alone (a guard it released, claimed since by
            # another item). Read again and retry.
            yield _sleep(attempt)
            continue
        if write.read_back:
            response = yield Call(
                "get_item",
                read_request(plan, request.key, request.capacity),
                operation=request.action,
                subject=plan.name,
            )
            after: Item | None = response.get("Item")
            return after
        return stored
    raise TransactionCanceledError(
        f"{plan.label}: the {request.kind.lower()} lost the race against concurrent writes of "
        f"the same item {MAX_ATTEMPTS} times; retry it later",
        reasons=[],
    )
