"""Rules shared by the item operations.

Key references, identity checks, time stamps, conditions and the errors a failed condition
becomes.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel

from singletable.errors import ConditionFailedError, KeyEncodeError, ServiceError
from singletable.expressions.conditions import Condition, and_, condition_text, render_condition
from singletable.expressions.fields import FieldRef
from singletable.expressions.paths import Placeholders
from singletable.expressions.updates import UpdateAction, render_update
from singletable.operations.protocol import ReturnCapacity
from singletable.types import AttributeValue, Item, frozen_dataclass

if TYPE_CHECKING:
    from singletable.model.plan import EntityPlan

R = TypeVar("R")
E = TypeVar("E", bound=BaseModel)


def key_ref(attribute: str) -> FieldRef[Any]:
    """A reference to a key or bookkeeping attribute, compared with ready key values."""
    return FieldRef((attribute,), _passthrough, label=attribute)


def _passthrough(value: Any) -> AttributeValue:
    if isinstance(value, dict):
        return value
    return {"S": value} if isinstance(value, str) else {"N": str(value)}


def utc_now() -> datetime:
    """The current time, aware, in UTC (the stamp of ``created_at`` / ``updated_at``)."""
    return datetime.now(timezone.utc)


def stamp_times(plan: EntityPlan, obj: E, now: datetime) -> E:
    """``obj`` with its updated_at (and, if unset, created_at) fields set to ``now``."""
    changes: dict[str, Any] = {}
    if plan.updated_at_field is not None:
        changes[plan.updated_at_field] = now
    if plan.created_at_field is not None and getattr(obj, plan.created_at_field) is None:
        changes[plan.created_at_field] = now
    return obj.model_copy(update=changes) if changes else obj


def split_key_values(plan: EntityPlan, values: Mapping[str, Any], *, what: str) -> dict[str, Any]:
    """Check that ``values`` are exactly the primary key fields, as ``what`` needs them."""
    fields = plan.primary.fields
    unknown = [k for k in values if k not in plan.fields]
    if unknown:
        raise KeyEncodeError(f"{plan.label}: {what}: unknown field {unknown[0]!r}")
    extra = [k for k in values if k not in fields]
    if extra:
        raise KeyEncodeError(
            f"{plan.label}: {what}: {extra[0]!r} is not a primary key field "
            f"(the key is {', '.join(fields)})"
        )
    missing = [f for f in fields if f not in values]
    if missing:
        raise KeyEncodeError(f"{plan.label}: {what}: missing key field {missing[0]!r}")
    return dict(values)


def apply_condition(request: dict[str, Any], condition: Condition | None, ph: Placeholders) -> None:
    """Add ``condition`` (if any) to ``request`` as its ConditionExpression."""
    if condition is not None:
        request["ConditionExpression"] = render_condition(condition, ph)


def request_capacity(request: dict[str, Any], capacity: ReturnCapacity | None) -> None:
    """Ask for ConsumedCapacity in ``request`` when ``capacity`` is set."""
    if capacity is not None:
        request["ReturnConsumedCapacity"] = capacity


_ACTIONS = {"Put": "put_item", "Update": "update_item", "Delete": "delete_item"}


@frozen_dataclass
class ItemRequest:
    """One item's PutItem, UpdateItem or DeleteItem as a value, before it is rendered.

    A single write renders it alone; a transaction, or a write with uniqueness guards
    (`singletable.operations.guarded`), joins a condition of its own to the item's.

    Attributes:
        kind: ``"Put"``, ``"Update"`` or ``"Delete"`` (its TransactWriteItems element name).
        table: The table name.
        key: The item's primary key (a put's too: the key its guards name as holder).
        item: The item a put writes.
        actions: The actions of an update.
        condition: The item's own condition (version lock, user condition, create).
        return_values: ``ReturnValues`` of the single-item request, if any.
        capacity: ``ReturnConsumedCapacity``, if asked for.
    """

    kind: Literal["Put", "Update", "Delete"]
    table: str
    key: Item
    item: Item | None = None
    actions: tuple[UpdateAction, ...] = ()
    condition: Condition | None = None
    return_values: str | None = None
    capacity: ReturnCapacity | None = None

    # Written out (frozen_dataclass keeps a class's own __init__): one per item written,
    # and the general __init__ it builds costs about 1 µs more a call.
    def __init__(
        self,
        kind: Literal["Put", "Update", "Delete"],
        table: str,
        key: Item,
        item: Item | None = None,
        actions: tuple[UpdateAction, ...] = (),
        condition: Condition | None = None,
        return_values: str | None = None,
        capacity: ReturnCapacity | None = None,
    ) -> None:
        assign = object.__setattr__
        assign(self, "kind", kind)
        assign(self, "table", table)
        assign(self, "key", key)
        assign(self, "item", item)
        assign(self, "actions", actions)
        assign(self, "condition", condition)
        assign(self, "return_values", return_values)
        assign(self, "capacity", capacity)

    @property
    def action(self) -> str:
        """The client method of the single-item request (``"put_item"``, ...)."""
        return _ACTIONS[self.kind]

    def params(self, extra: Condition | None = None) -> dict[str, Any]:
        """The single-item request, its condition joined with ``extra``."""
        request: dict[str, Any] = {"TableName": self.table}
        if self.item is not None:
            request["Item"] = self.item
        else:
            request["Key"] = self.key
        ph = Placeholders()
        if self.actions:
            request["UpdateExpression"] = render_update(self.actions, ph)
        condition = self.condition
        if extra is not None:
            condition = extra if condition is None else and_(condition, extra)
        apply_condition(request, condition, ph)
        if condition is not None:
            request["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        ph.apply(request)
        if self.return_values is not None:
            request["ReturnValues"] = self.return_values
        request_capacity(request, self.capacity)
        return request


def condition_failed(
    plan: EntityPlan, exc: ServiceError, kind: type[ConditionFailedError], message: str
) -> ConditionFailedError:
    """The typed error for a failed condition, carrying the stored item when DynamoDB sent it."""
    raw = exc.response.get("Item")
    item = None
    if raw:
        try:
            item = plan.from_item(raw)
        except Exception:  # a stored item we cannot decode is still worth showing raw
            item = raw
    return kind(message, item=item)


def failed_condition(label: str, write: str, condition: Condition | None) -> str:
    """The message of a write whose own condition failed, naming the condition."""
    if condition is None:
        return f"{label}: the {write} condition failed"
    return f"{label}: the {write} condition failed: {condition_text(condition)}"


def version_conflict_message(
    plan: EntityPlan, exc: ServiceError, expected: int, *, or_absent: bool = False
) -> str:
    """A version conflict's message: the version this write expected and the stored one.

    ``or_absent``: the write also accepted no stored item (a put that keeps its version).
    """
    assert plan.version_field is not None
    stored = exc.response.get("Item")
    if not stored:
        found = "no item is stored at this key"
    else:
        number = stored.get(plan.fields[plan.version_field].attribute, {}).get("N")
        found = (
            f"the stored item is at version {number}"
            if number is not None
            else f"the stored item has no {plan.version_field!r}"
        )
    wanted = "no stored item" if expected == 0 else f"version {expected}"
    if or_absent:
        wanted = f"no stored item or one at version {expected}"
    return f"{plan.label}: version conflict: this write expected {wanted}, but {found}"


def describe_key(key: Item) -> str:
    """A stored key as messages show it: ``PK='BOX#b', SK='T#1'`` (names every attribute)."""
    return ", ".join(f"{name}={next(iter(value.values()))!r}" for name, value in key.items())
