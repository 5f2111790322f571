"""Writes of entities with uniqueness constraints: the item and its guards in one transaction.

A guard item (`singletable.model.unique`) exists for every unique value an item holds.
Every write that can change which values an item holds goes through TransactWriteItems:

* ``create``: put the item (``attribute_not_exists``) and claim each guard
  (``attribute_not_exists``, or already held by this very item);
* ``put`` over a possibly existing item, ``update`` of a unique field, ``delete``: the
  old values decide which guards to release, so they must be known. They are either
  given (``Update.known(...)``, ``Entity.delete(obj)``) or read first with a consistent
  GetItem; the transaction then puts a condition on the item that its unique fields
  still hold those values, so a concurrent change cancels it instead of orphaning a
  guard. A read-first write that loses such a race (or a ``TransactionConflict``) reads
  again and retries, a few times, with backoff.

A claim that fails raises `UniqueConstraintError` naming the entity, fields, value and,
from the guard returned by DynamoDB, the key of the item that holds the value.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from singletable.attributes.size import item_size
from singletable.errors import (
    ConditionFailedError,
    ExpressionError,
    NotFoundError,
    ServiceError,
    TransactionCanceledError,
    UniqueConstraintError,
)
from singletable.expressions.conditions import Condition, and_, or_, render_condition
from singletable.expressions.paths import Placeholders
from singletable.model.fields import FieldRefs
from singletable.model.unique import GUARD_HOLDER_PK, GUARD_HOLDER_SK, UniqueConstraint
from singletable.operations.common import key_ref
from singletable.operations.protocol import Call, ReturnCapacity, Sleep, Step
from singletable.types import AttributeValue, Item

if TYPE_CHECKING:
    from singletable.model.plan import EntityPlan
    from singletable.operations.items import Delete, Put
    from singletable.operations.update import Update

#: How often a read-first write re-reads and retries after losing a race.
MAX_ATTEMPTS = 6
_BACKOFF_BASE = 0.02
_BACKOFF_CAP = 0.5


@dataclass(frozen=True)
class GuardWrite:
    """One guard change: claim (put) or release (delete) the guard of ``values``."""

    constraint: UniqueConstraint
    claim: bool
    values: dict[str, Any]


@dataclass(frozen=True)
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


# -- what changes --------------------------------------------------------------------


def guard_writes(
    constraints: Iterable[UniqueConstraint],
    old: Mapping[str, Any] | None,
    new: Mapping[str, Any] | None,
) -> list[GuardWrite]:
    """The guards to release and claim when an item's values go from ``old`` to ``new``.

    ``None`` stands for "no item". A constraint whose guard key does not change needs
    nothing: the guard is already held by the item.
    """
    writes: list[GuardWrite] = []
    for constraint in constraints:
        before = constraint.values(old) if old is not None else None
        after = constraint.values(new) if new is not None else None
        if (
            before is not None
            and after is not None
            and constraint.guard_key(before) == constraint.guard_key(after)
        ):
            continue
        if before is not None:
            writes.append(GuardWrite(constraint, False, before))
        if after is not None:
            writes.append(GuardWrite(constraint, True, after))
    return writes


def stored_values(
    plan: EntityPlan, item: Mapping[str, AttributeValue], fields: Iterable[str]
) -> dict[str, Any]:
    """The values of ``fields`` in a stored item (``None`` where the attribute is absent)."""
    values: dict[str, Any] = plan.fields_from_keys(item)
    for name in fields:
        field = plan.fields[name]
        av = item.get(field.attribute)
        values[name] = None if av is None else field.codec.from_av(av)
    return values


def values_unchanged(plan: EntityPlan, old: Mapping[str, Any], fields: Iterable[str]) -> Condition:
    """The condition that the stored item's ``fields`` still hold the ``old`` values."""
    refs: FieldRefs[Any] = FieldRefs(plan)
    return and_(*(getattr(refs, name) == old.get(name) for name in sorted(set(fields))))


def _held_by(constraint: UniqueConstraint, holder: Item) -> Condition:
    return and_(*(key_ref(attr) == av for attr, av in constraint.holder_attributes(holder).items()))


def guard_entry(plan: EntityPlan, write: GuardWrite, holder: Item) -> TransactEntry:
    """The transaction element that claims or releases one guard for the item ``holder``.

    Both are conditioned on the guard being free or already held by ``holder``: a claim
    never takes another item's value, a release never frees another item's value.
    """
    constraint = write.constraint
    table = plan.table
    key = constraint.guard_key(write.values)
    ph = Placeholders()
    condition = or_(key_ref(table.pk).not_exists(), _held_by(constraint, holder))
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
    )


def _item_entry(
    label: str, table: str, key: Item, kind: str, request: dict[str, Any]
) -> TransactEntry:
    request = dict(request)
    for name in ("ReturnValues", "ReturnConsumedCapacity"):
        request.pop(name, None)
    size = item_size(request["Item"]) if kind == "Put" else 0
    return TransactEntry(label, table, key, {kind: request}, size)


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


# -- the entries of each write ---------------------------------------------------------


def put_entries(op: Put[Any], old: Mapping[str, Any] | None, *, read: bool) -> list[TransactEntry]:
    """The transaction of a `Put`: the item, then its guard changes.

    ``old`` are the values stored under the key (``None``: no item). With ``read`` they
    were read first, and the put is conditioned on them still being there.
    """
    plan = op.plan
    holder = plan.key(op.written)
    new = op.written.__dict__
    extra: Condition | None = None
    if read:
        fields = plan.unique_fields()
        extra = (
            key_ref(plan.table.pk).not_exists()
            if old is None
            else values_unchanged(plan, old, fields)
        )
    item = _item_entry(plan.label, plan.table.name, holder, "Put", op.item_params(extra))
    writes = guard_writes(plan.unique, old, new)
    return [item, *(guard_entry(plan, w, holder) for w in writes)]


def touched_constraints(op: Update[Any]) -> list[UniqueConstraint]:
    """The constraints whose fields the update changes; refuses changes it cannot follow."""
    plan = op.plan
    changed = op.changed_fields()
    touched = [c for c in plan.unique if changed & set(c.fields)]
    for constraint in touched:
        for name in constraint.fields:
            if name in changed and name not in op.set_values():
                raise ExpressionError(
                    f"{plan.label}: field {name!r} is unique (unique {constraint.name}), so it "
                    "can only be changed with .set(...) (its new value decides the guard to "
                    "claim)"
                )
    if op.upsert:
        # An upsert may create the item, with values (defaults included) whose guards
        # must be claimed: every constraint takes part, and the item is read first.
        return list(plan.unique)
    return touched


def update_old_known(op: Update[Any], touched: Sequence[UniqueConstraint]) -> dict[str, Any] | None:
    """The stored values the update's guards depend on, when `Update.known` gives them all."""
    known = {**op.key_values, **op.known_values()}
    needed = {f for c in touched for f in c.fields}
    if needed <= set(known):
        return {f: known[f] for f in needed}
    return None


def update_entries(
    op: Update[Any], touched: Sequence[UniqueConstraint], old: Mapping[str, Any] | None
) -> list[TransactEntry]:
    """The transaction of an `Update` that changes unique fields.

    ``old`` are the stored values (``None``: no item, which only an upsert may create);
    the update is conditioned on them still being stored.
    """
    plan = op.plan
    fields = {f for c in touched for f in c.fields}
    if old is None:
        extra = key_ref(plan.table.pk).not_exists()
        model_fields = plan.model.model_fields
        defaults = {
            f: model_fields[f].get_default(call_default_factory=True)
            for f in fields
            if not model_fields[f].is_required()
        }
        new: dict[str, Any] = {**defaults, **op.key_values, **op.set_values()}
    else:
        extra = values_unchanged(plan, old, fields)
        new = {**old, **op.set_values()}
    item = _item_entry(plan.label, plan.table.name, op.key, "Update", op.item_params(extra))
    writes = guard_writes(touched, old, new)
    return [item, *(guard_entry(plan, w, op.key) for w in writes)]


def delete_entries(op: Delete[Any], old: Mapping[str, Any]) -> list[TransactEntry]:
    """The transaction of a `Delete` of an item holding the ``old`` values."""
    plan = op.plan
    extra = values_unchanged(plan, old, plan.unique_fields())
    item = _item_entry(plan.label, plan.table.name, op.key, "Delete", op.item_params(extra))
    writes = guard_writes(plan.unique, old, None)
    return [item, *(guard_entry(plan, w, op.key) for w in writes)]


def transaction_entries(op: Put[Any] | Update[Any] | Delete[Any]) -> list[TransactEntry]:
    """The entries ``op`` adds to a user's `TransactWrite` (where nothing can be read first).

    Raises:
        ExpressionError: The write would need the stored values, which a transaction
            cannot read: a ``put`` (use ``create``), an update without ``.known(...)`` of
            the old values, a delete by key (delete the object).
    """
    from_put = getattr(op, "written", None) is not None
    plan = op.plan
    if from_put:
        put: Put[Any] = op  # type: ignore[assignment]
        if not put.create:
            raise ExpressionError(
                f"{plan.label} has unique fields, so a put inside a transaction must know "
                "whether it replaces an item and which values it held: use create() for a "
                "new item, or update().set(...).known(...) for an existing one"
            )
        return put_entries(put, None, read=False)
    if hasattr(op, "changed_fields"):
        update: Update[Any] = op  # type: ignore[assignment]
        touched = touched_constraints(update)
        if not touched:
            return []
        old = update_old_known(update, touched)
        if old is None:
            needed = sorted({f for c in touched for f in c.fields} - set(update.key_values))
            raise ExpressionError(
                f"{plan.label}: this update changes unique fields, so a transaction needs "
                f"their stored values to move the guards: pass .known({', '.join(needed)}=...)"
            )
        return update_entries(update, touched, old)
    delete: Delete[Any] = op  # type: ignore[assignment]
    if delete.unique_values is None:
        raise ExpressionError(
            f"{plan.label} has unique fields, so a delete inside a transaction needs their "
            "values to release the guards: delete the object (Entity.delete(obj))"
        )
    return delete_entries(delete, delete.unique_values)


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


def raise_cancellation(
    plans: EntityPlan | Sequence[EntityPlan | None],
    exc: ServiceError,
    entries: Sequence[TransactEntry],
) -> None:
    """Raise the typed error of a cancelled transaction whose guards failed, if any did.

    ``plans`` is the entity of every entry (or one entity for all of them). A failed claim
    is a `UniqueConstraintError`; a failed release means another item
    holds the guard this item should hold (guards out of step with items, e.g. after
    writes that bypassed singletable): a `ConditionFailedError` saying so.
    """
    for failure in _failures(exc, entries):
        write = failure.entry.guard
        if write is None or failure.code != "ConditionalCheckFailed":
            continue
        plan = plans if not isinstance(plans, Sequence) else plans[entries.index(failure.entry)]
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


def put_steps(op: Put[Any]) -> Step[Any]:
    """Run a `Put` of an entity with unique fields (see the module docs)."""
    plan = op.plan
    key = plan.key(op.written)
    for attempt in range(MAX_ATTEMPTS):
        old: dict[str, Any] | None = None
        if not op.create:
            response = yield Call("get_item", read_request(plan, key, op.capacity))
            stored = response.get("Item")
            old = stored_values(plan, stored, plan.unique_fields()) if stored else None
        entries = put_entries(op, old, read=not op.create)
        try:
            yield Call("transact_write_items", transact_request(entries, op.capacity))
        except ServiceError as exc:
            if exc.code != "TransactionCanceledException":
                raise
            failed_item = _item_failure(exc, entries)
            if failed_item is not None and op.create:
                raise op.condition_error(_as_condition_failure(failed_item)) from None
            if failed_item is not None and not _changed(plan, old, failed_item.item):
                raise op.condition_error(_as_condition_failure(failed_item)) from None
            if failed_item is None:
                raise_cancellation(plan, exc, entries)
                if not _conflicted(exc, entries):
                    raise _cancelled(exc, entries) from None
            # Else the item changed after it was read: the guard conditions built from that
            # read can fail for that reason alone (a guard it released, claimed since by
            # another item). Read again and retry.
            yield _sleep(attempt)
            continue
        return op.written
    raise _gave_up(plan, "put")


def update_steps(op: Update[Any], touched: Sequence[UniqueConstraint]) -> Step[Any]:
    """Run an `Update` that changes unique fields, then read the item back."""
    plan = op.plan
    known = update_old_known(op, touched)
    for attempt in range(MAX_ATTEMPTS):
        old = known
        if known is None:
            response = yield Call("get_item", read_request(plan, op.key, op.capacity))
            stored = response.get("Item")
            if stored is None and not op.upsert:
                raise NotFoundError(f"{plan.label}: no item with key {op.key_values}")
            old = stored_values(plan, stored, plan.unique_fields()) if stored else None
        entries = update_entries(op, touched, old)
        try:
            yield Call("transact_write_items", transact_request(entries, op.capacity))
        except ServiceError as exc:
            if exc.code != "TransactionCanceledException":
                raise
            failed_item = _item_failure(exc, entries)
            if failed_item is not None and (
                known is not None or not _changed(plan, old, failed_item.item)
            ):
                if known is not None and failed_item.item:
                    stored_now = stored_values(plan, failed_item.item, plan.unique_fields())
                    if any(stored_now.get(f) != v for f, v in known.items()):
                        raise ConditionFailedError(
                            f"{plan.label}: the stored values of {sorted(known)} are not the "
                            f"ones given to .known(...) ({known})",
                            item=failed_item.item,
                        ) from None
                raise op.condition_error(_as_condition_failure(failed_item)) from None
            if failed_item is None:
                raise_cancellation(plan, exc, entries)
                if not _conflicted(exc, entries):
                    raise _cancelled(exc, entries) from None
            # Else the item changed after it was read: the guard conditions built from that
            # read can fail for that reason alone (a guard it released, claimed since by
            # another item). Read again and retry.
            yield _sleep(attempt)
            continue
        # A transaction returns no item: read back what it stored.
        response = yield Call("get_item", read_request(plan, op.key, op.capacity))
        stored = response.get("Item")
        if stored is None:
            raise NotFoundError(
                f"{plan.label}: the item {op.key_values} was deleted right after the update"
            )
        return plan.from_item(stored)
    raise _gave_up(plan, "update")


def delete_steps(op: Delete[Any]) -> Step[Any]:
    """Run a `Delete` of an entity with unique fields, releasing its guards."""
    plan = op.plan
    known = None if op.return_old else op.unique_values
    for attempt in range(MAX_ATTEMPTS):
        old = known
        stored: Item | None = None
        if known is None:
            response = yield Call("get_item", read_request(plan, op.key, op.capacity))
            stored = response.get("Item")
            if stored is None:
                # Nothing holds guards here. A conditional delete of a missing item still
                # reports its condition, as a plain DeleteItem would; it can never delete.
                if op.has_condition():
                    params = op.item_params(key_ref(plan.table.pk).not_exists())
                    try:
                        yield Call("delete_item", params)
                    except ServiceError as exc:
                        if exc.code != "ConditionalCheckFailedException":
                            raise
                        raise op.condition_error(exc) from None
                return None
            old = stored_values(plan, stored, plan.unique_fields())
        assert old is not None
        entries = delete_entries(op, old)
        try:
            yield Call("transact_write_items", transact_request(entries, op.capacity))
        except ServiceError as exc:
            if exc.code != "TransactionCanceledException":
                raise
            failed_item = _item_failure(exc, entries)
            if failed_item is not None and known is not None and not failed_item.item:
                return None  # already deleted (and its guards released) by someone else
            if failed_item is not None and (
                known is not None or not _changed(plan, old, failed_item.item)
            ):
                raise op.condition_error(_as_condition_failure(failed_item)) from None
            if failed_item is None:
                raise_cancellation(plan, exc, entries)
                if not _conflicted(exc, entries):
                    raise _cancelled(exc, entries) from None
            # Else the item changed after it was read: the guard conditions built from that
            # read can fail for that reason alone (a guard it released, claimed since by
            # another item). Read again and retry.
            yield _sleep(attempt)
            continue
        return plan.from_item(stored) if op.return_old and stored else None
    raise _gave_up(plan, "delete")


def _as_condition_failure(failure: _Failure) -> ServiceError:
    """A failed transaction element as the error its single-item request would raise."""
    response: dict[str, Any] = {"Item": failure.item} if failure.item else {}
    return ServiceError(
        "ConditionalCheckFailedException", "the conditional request failed", response=response
    )


def _gave_up(plan: EntityPlan, what: str) -> TransactionCanceledError:
    return TransactionCanceledError(
        f"{plan.label}: the {what} lost the race against concurrent writes of the same item "
        f"{MAX_ATTEMPTS} times; retry it later",
        reasons=[],
    )
