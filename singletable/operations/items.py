"""Operations as values: every read and write is a pure object before it is an action.

Each operation builds the exact boto3 request (`Operation.params`) without a network, and
describes its execution as a *sans-I/O* generator (`Operation.steps`): it yields `Call`
(and `Sleep`, for backoff) and receives the parsed responses. The execution layer drives
the generator; it is the only code that talks to boto3, so a second (async) executor needs
no change here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

# `operations.guarded` (the writes of entities with unique fields) is read from the
# package's lazy names: it loads on first use, and most programs never load it (issue 24,
# cold start).
from singletable import operations
from singletable.errors import (
    AlreadyExistsError,
    ConditionFailedError,
    ExpressionError,
    ServiceError,
    VersionConflictError,
)
from singletable.expressions.conditions import Condition, and_
from singletable.expressions.paths import Placeholders
from singletable.expressions.projections import render_projection
from singletable.model.fields import field_refs
from singletable.model.plan import plan_of
from singletable.operations.common import (
    ItemRequest,
    condition_failed,
    failed_condition,
    key_ref,
    request_capacity,
    split_key_values,
    stamp_times,
    utc_now,
    version_conflict_message,
)
from singletable.operations.protocol import Call, Operation, ReturnCapacity, Step

if TYPE_CHECKING:
    from singletable.model.plan import EntityPlan
    from singletable.operations.guarded import GuardedWrite, TransactEntry


R = TypeVar("R")
E = TypeVar("E", bound=BaseModel)


# -- writes ---------------------------------------------------------------------------


class Put(Operation[E]):
    """Write a whole item (``put`` overwrites; ``create`` refuses an existing key).

    With a ``version_field`` the write is optimistic: it only succeeds if the stored
    version is the one the object carries, and writes the next version. Returns the
    object as written (new version, stamped timestamps).

    ``keep_version=True`` writes a stored object back as it was read (a load of exported
    items): an object at version ``v >= 1`` is written at ``v``, where no item is stored
    or the stored item is at that same ``v`` (so loading it again changes nothing), and
    refused with `VersionConflictError` over any other version. An object at version 0
    has never been stored: it is written at version 1 where no item is, as by any put.
    """

    action = "put_item"

    def __init__(
        self,
        obj: E,
        *,
        create: bool = False,
        condition: Condition | None = None,
        capacity: ReturnCapacity | None = None,
        now: datetime | None = None,
        keep_version: bool = False,
    ) -> None:
        self.plan = plan_of(type(obj))
        self.subject = self.plan.name
        self.create = create
        version_field = self.plan.version_field
        #: The version written is the object's own (see the class docs), not the next one.
        self.kept = (
            keep_version and version_field is not None and (getattr(obj, version_field) or 0) > 0
        )
        self.condition = condition
        self.capacity = capacity
        self.written = self._stamp(obj, now or utc_now())
        self.item = self.plan.to_item(self.written)

    def _stamp(self, obj: E, now: datetime) -> E:
        plan = self.plan
        if plan.version_field is not None and not self.kept:
            current = getattr(obj, plan.version_field) or 0
            obj = obj.model_copy(update={plan.version_field: current + 1})
        return stamp_times(plan, obj, now)

    def _full_condition(self) -> Condition | None:
        plan = self.plan
        parts: list[Condition] = []
        pk = key_ref(plan.table.pk)
        if self.create:
            parts.append(pk.not_exists())
        elif plan.version_field is not None:
            version_ref = getattr(field_refs(plan), plan.version_field)
            if self.kept:
                # Absent, or the very version written: a repeated load changes nothing.
                parts.append(pk.not_exists() | (version_ref == self._expected_version()))
            else:
                expected = self._expected_version()
                # A first write (version 0) must not overwrite anything; later writes must
                # find the version they started from.
                parts.append(pk.not_exists() if expected == 0 else version_ref == expected)
        if self.condition is not None:
            parts.append(self.condition)
        return and_(*parts) if parts else None

    def params(self) -> dict[str, Any]:
        """The exact ``PutItem`` request.

        For an entity with unique fields, the first request of the write: a ``create``'s
        TransactWriteItems (item and guards), or a ``put``'s consistent GetItem of the
        values it replaces (see `singletable.operations.guarded`).
        """
        if self.plan.unique:
            return operations.guarded.first_request(self.guarded())
        return self.item_params()

    def request(self) -> ItemRequest:
        """The ``PutItem`` of the item alone, as a value."""
        return ItemRequest(
            "Put",
            self.plan.table.name,
            self.plan.key(self.written),
            item=self.item,
            condition=self._full_condition(),
            capacity=self.capacity,
        )

    def item_params(self, extra: Condition | None = None) -> dict[str, Any]:
        """The ``PutItem`` request of the item alone, its condition joined with ``extra``."""
        return self.request().params(extra)

    def guarded(self) -> GuardedWrite:
        """The put with the guards of the entity's unique fields (see `guarded_steps`)."""
        return operations.guarded.GuardedWrite(
            self.plan,
            self.request(),
            self.plan.unique,
            self.written.__dict__,
            absent=self.create,
        )

    def steps(self) -> Step[E]:
        """Put, translating a failed condition into a typed error."""
        try:
            if self.plan.unique:
                yield from operations.guarded.guarded_steps(self.guarded())
            else:
                yield Call(self.action, self.params(), subject=self.subject)
        except ServiceError as exc:
            if exc.code != "ConditionalCheckFailedException":
                raise
            raise self.condition_error(exc) from None
        return self.written

    def condition_error(self, exc: ServiceError) -> ConditionFailedError:
        """The typed error for this put's failed condition (``exc`` may carry the item)."""
        label = self.plan.label
        if self.create:
            return condition_failed(
                self.plan, exc, AlreadyExistsError, f"{label}: an item with this key exists"
            )
        if self.plan.version_field is not None and self._version_moved(exc):
            return condition_failed(
                self.plan,
                exc,
                VersionConflictError,
                version_conflict_message(
                    self.plan, exc, self._expected_version(), or_absent=self.kept
                ),
            )
        return condition_failed(
            self.plan, exc, ConditionFailedError, failed_condition(label, "put", self.condition)
        )

    def _expected_version(self) -> int:
        """The stored version this put starts from (its own version minus one).

        With ``keep_version``: the version it writes, which may also be stored already.
        """
        assert self.plan.version_field is not None
        version: int = getattr(self.written, self.plan.version_field)
        return version if self.kept else version - 1

    def _version_moved(self, exc: ServiceError) -> bool:
        """Whether the stored item is not at the version this write started from.

        With a user condition as well, the stored item (returned on failure) tells which
        of the two failed.
        """
        if self.condition is None:
            return True
        field = self.plan.version_field
        assert field is not None
        expected = self._expected_version()
        stored = exc.response.get("Item")
        if not stored:
            return expected != 0 and not self.kept
        version = stored.get(self.plan.fields[field].attribute, {}).get("N")
        return version is None or int(version) != expected


class Get(Operation["E | None"]):
    """Read one item by its primary key; ``None`` when there is none."""

    action = "get_item"

    def __init__(
        self,
        plan: EntityPlan,
        key: Mapping[str, Any],
        *,
        consistent: bool = False,
        capacity: ReturnCapacity | None = None,
    ) -> None:
        self.plan = plan
        self.subject = plan.name
        self.key_values = split_key_values(plan, key, what="get")
        self.key = plan.key_from_values(self.key_values)
        self.consistent = consistent
        self.capacity = capacity

    def params(self) -> dict[str, Any]:
        """The exact ``GetItem`` request."""
        request: dict[str, Any] = {"TableName": self.plan.table.name, "Key": self.key}
        if self.consistent:
            request["ConsistentRead"] = True
        request_capacity(request, self.capacity)
        return request

    def parse(self, response: dict[str, Any]) -> E | None:
        """The decoded item, or ``None``."""
        item = response.get("Item")
        if item is None:
            return None
        return self.plan.from_item(item, check=True)  # type: ignore[return-value]

    def project(self, *fields: str) -> ProjectedGet:
        """Read only these fields; the result is a ``dict`` of decoded values."""
        return ProjectedGet(self, fields)


class ProjectedGet(Operation["dict[str, Any] | None"]):
    """A `Get` that reads only some fields (and so returns a dict, not a model)."""

    action = "get_item"

    def __init__(self, get: Get[Any], fields: Sequence[str]) -> None:
        self.get = get
        self.subject = get.subject
        self.fields = tuple(fields)
        for name in self.fields:
            if name not in get.plan.fields:
                raise ExpressionError(f"{get.plan.label}: cannot project unknown field {name!r}")

    def params(self) -> dict[str, Any]:
        """The exact ``GetItem`` request with its ``ProjectionExpression``."""
        request = self.get.params()
        ph = Placeholders()
        request["ProjectionExpression"] = render_projection(
            [self.get.plan.fields[f].attribute for f in self.fields], ph
        )
        ph.apply(request)
        return request

    def parse(self, response: dict[str, Any]) -> dict[str, Any] | None:
        """The projected fields, decoded by their attribute codecs."""
        item = response.get("Item")
        if item is None:
            return None
        result: dict[str, Any] = {}
        for name in self.fields:
            plan = self.get.plan.fields[name]
            av = item.get(plan.attribute)
            if av is not None:
                result[name] = plan.codec.from_av(av)
        return result


class Delete(Operation["E | None"]):
    """Delete one item by key; returns the deleted item when ``return_old`` is set."""

    action = "delete_item"

    def __init__(
        self,
        plan: EntityPlan,
        key: Mapping[str, Any],
        *,
        condition: Condition | None = None,
        return_old: bool = False,
        expected_version: int | None = None,
        capacity: ReturnCapacity | None = None,
        unique_values: Mapping[str, Any] | None = None,
    ) -> None:
        self.plan = plan
        self.subject = plan.name
        self.key = plan.key_from_values(split_key_values(plan, key, what="delete"))
        #: The unique fields' stored values, when known (a delete of an object): the
        #: guards to release without reading the item first.
        self.unique_values = None if unique_values is None else dict(unique_values)
        self.condition = condition
        self.return_old = return_old
        self.expected_version = expected_version
        self.capacity = capacity

    def params(self) -> dict[str, Any]:
        """The exact ``DeleteItem`` request.

        For an entity with unique fields, the first request of the delete: the
        TransactWriteItems that also releases the guards when the values are known (a
        delete of an object), else the consistent GetItem that reads them.
        """
        if self.plan.unique:
            return operations.guarded.first_request(self.guarded())
        return self.item_params()

    def request(self) -> ItemRequest:
        """The ``DeleteItem`` of the item alone, as a value."""
        condition = self.condition
        if self.expected_version is not None and self.plan.version_field is not None:
            lock = getattr(field_refs(self.plan), self.plan.version_field) == self.expected_version
            condition = lock if condition is None else lock & condition
        return ItemRequest(
            "Delete",
            self.plan.table.name,
            self.key,
            condition=condition,
            return_values="ALL_OLD" if self.return_old else None,
            capacity=self.capacity,
        )

    def item_params(self, extra: Condition | None = None) -> dict[str, Any]:
        """The ``DeleteItem`` request of the item alone, its condition joined with ``extra``."""
        return self.request().params(extra)

    def guarded(self) -> GuardedWrite:
        """The delete with the release of its guards (see `guarded_steps`).

        The known values are used unless the old item is to be returned: it is read then.
        """
        return operations.guarded.GuardedWrite(
            self.plan,
            self.request(),
            self.plan.unique,
            None,
            known=None if self.return_old else self.unique_values,
            missing="done",
        )

    def steps(self) -> Step[E | None]:
        """Delete, translating a failed condition into a typed error."""
        try:
            if self.plan.unique:
                stored = yield from operations.guarded.guarded_steps(self.guarded())
                old = stored if self.return_old else None
            else:
                response = yield Call(self.action, self.params(), subject=self.subject)
                old = response.get("Attributes")
        except ServiceError as exc:
            if exc.code != "ConditionalCheckFailedException":
                raise
            raise self.condition_error(exc) from None
        return self.plan.from_item(old) if old else None  # type: ignore[return-value]

    def condition_error(self, exc: ServiceError) -> ConditionFailedError:
        """The typed error for this delete's failed condition."""
        if self.expected_version is not None and self._version_moved(exc):
            return condition_failed(
                self.plan,
                exc,
                VersionConflictError,
                version_conflict_message(self.plan, exc, self.expected_version),
            )
        return condition_failed(
            self.plan,
            exc,
            ConditionFailedError,
            failed_condition(self.plan.label, "delete", self.condition),
        )

    def _version_moved(self, exc: ServiceError) -> bool:
        """Whether the stored item (returned on failure) is not at the expected version."""
        assert self.plan.version_field is not None
        stored = exc.response.get("Item")
        if not stored:
            return True
        version = stored.get(self.plan.fields[self.plan.version_field].attribute, {}).get("N")
        return version is None or int(version) != self.expected_version


def put_entries(op: Put[Any], old: Mapping[str, Any] | None, *, read: bool) -> list[TransactEntry]:
    """The transaction of a guarded `Put` over the stored values ``old`` (``None``: no item).

    With ``read`` they were read first, and the put is conditioned on them still being
    there (else the put is a create, conditioned by its own request).
    """
    return operations.guarded.write_entries(replace(op.guarded(), absent=not read), old)


def delete_entries(op: Delete[Any], old: Mapping[str, Any]) -> list[TransactEntry]:
    """The transaction of a `Delete` of an item holding the ``old`` values."""
    return operations.guarded.write_entries(op.guarded(), old)
