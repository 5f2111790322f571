"""Operations as values: every read and write is a pure object before it is an action.

Each operation builds the exact boto3 request (`Operation.params`) without a network, and
describes its execution as a *sans-I/O* generator (`Operation.steps`): it yields `Call`
(and `Sleep`, for backoff) and receives the parsed responses. The execution layer drives
the generator; it is the only code that talks to boto3, so a second (async) executor needs
no change here.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, Protocol, TypeVar

from singletable._attributes import item_size
from singletable._entity import _epoch_seconds
from singletable._errors import (
    AlreadyExistsError,
    ConditionFailedError,
    ExpressionError,
    ItemDecodeError,
    KeyEncodeError,
    NotFoundError,
    QueryError,
    RequestLimitError,
    ServiceError,
    TransactionCanceledError,
    VersionConflictError,
)
from singletable._expressions import (
    Condition,
    FieldRef,
    Placeholders,
    UpdateAction,
    and_,
    render_condition,
    render_projection,
    render_update,
    update_paths,
)
from singletable._types import AttributeValue, Item

if TYPE_CHECKING:
    from singletable._entity import Entity, EntityPlan, KeyPlan

R = TypeVar("R")
E = TypeVar("E", bound="Entity")

ReturnCapacity = Literal["TOTAL", "INDEXES"]

#: DynamoDB's request limits.
MAX_BATCH_WRITE = 25
MAX_BATCH_GET = 100
MAX_TRANSACT_ITEMS = 100
#: DynamoDB's limit on the aggregate size of the items of one transaction (4 MB).
MAX_TRANSACT_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class Call:
    """One DynamoDB API call: the boto3 client method name and its keyword arguments."""

    action: str
    params: dict[str, Any]


@dataclass(frozen=True)
class Sleep:
    """A pause the executor must take (backoff before retrying unprocessed items)."""

    seconds: float


Step = Generator["Call | Sleep", Any, R]


class Executor(Protocol):
    """What runs operations: `singletable.Connection` is the synchronous one."""

    def execute(self, operation: Operation[R]) -> R:
        """Run ``operation`` and return its result."""
        ...


class Operation(ABC, Generic[R]):
    """A pure description of one operation (possibly several calls, e.g. batch retries)."""

    action: ClassVar[str]

    @abstractmethod
    def params(self) -> dict[str, Any]:
        """The exact keyword arguments of the (first) boto3 client call."""

    def steps(self) -> Step[R]:
        """The calls this operation makes, as a generator the executor drives."""
        response = yield Call(self.action, self.params())
        return self.parse(response)

    def parse(self, response: dict[str, Any]) -> R:
        """Turn the boto3 response into the operation's result."""
        raise NotImplementedError

    def run(self, db: Executor) -> R:
        """Execute with ``db`` (a `singletable.Connection`) and return the result."""
        return db.execute(self)


def _key_ref(attribute: str) -> FieldRef:
    """A reference to a key or bookkeeping attribute, compared with ready key values."""
    return FieldRef((attribute,), _passthrough, label=attribute)


def _passthrough(value: Any) -> AttributeValue:
    if isinstance(value, dict):
        return value
    return {"S": value} if isinstance(value, str) else {"N": str(value)}


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _check_identity(plan: EntityPlan, item: Item) -> None:
    """Refuse to decode an item that another entity (or registered version) wrote."""
    table = plan.table
    name = item.get(table.entity_attribute, {}).get("S")
    version = item.get(table.version_attribute, {}).get("N")
    if name is None:
        return  # not written by singletable; decoding will say what is missing
    registered_other = (
        version is not None
        and version != str(plan.version)
        and table.entity_plan(name, int(version)) is not None
    )
    if name != plan.name or registered_other:
        raise ItemDecodeError(
            f"{plan.label}: the item at this key was written by entity {name!r} version "
            f"{version}; read it with that entity's class"
        )


def _stamp_times(plan: EntityPlan, obj: E, now: datetime) -> E:
    """``obj`` with its updated_at (and, if unset, created_at) fields set to ``now``."""
    changes: dict[str, Any] = {}
    if plan.updated_at_field is not None:
        changes[plan.updated_at_field] = now
    if plan.created_at_field is not None and getattr(obj, plan.created_at_field) is None:
        changes[plan.created_at_field] = now
    return obj.model_copy(update=changes) if changes else obj


def _split_key_values(plan: EntityPlan, values: Mapping[str, Any], *, what: str) -> dict[str, Any]:
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


def _apply_condition(
    request: dict[str, Any], condition: Condition | None, ph: Placeholders
) -> None:
    if condition is not None:
        request["ConditionExpression"] = render_condition(condition, ph)


def _capacity(request: dict[str, Any], capacity: ReturnCapacity | None) -> None:
    if capacity is not None:
        request["ReturnConsumedCapacity"] = capacity


def _condition_failed(
    plan: EntityPlan, exc: ServiceError, kind: type[ConditionFailedError], message: str
) -> ConditionFailedError:
    raw = exc.response.get("Item")
    item = None
    if raw:
        try:
            item = plan.from_item(raw)
        except Exception:  # a stored item we cannot decode is still worth showing raw
            item = raw
    return kind(message, item=item)


# -- writes ---------------------------------------------------------------------------


class Put(Operation[E]):
    """Write a whole item (``put`` overwrites; ``create`` refuses an existing key).

    With a ``version_field`` the write is optimistic: it only succeeds if the stored
    version is the one the object carries, and writes the next version. Returns the
    object as written (new version, stamped timestamps).
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
    ) -> None:
        self.plan = type(obj).plan()
        self.create = create
        self.condition = condition
        self.capacity = capacity
        self.written = self._stamp(obj, now or _now())
        self.item = self.plan.to_item(self.written)

    def _stamp(self, obj: E, now: datetime) -> E:
        plan = self.plan
        if plan.version_field is not None:
            current = getattr(obj, plan.version_field) or 0
            obj = obj.model_copy(update={plan.version_field: current + 1})
        return _stamp_times(plan, obj, now)

    def _full_condition(self) -> Condition | None:
        plan = self.plan
        parts: list[Condition] = []
        pk = _key_ref(plan.table.pk)
        if self.create:
            parts.append(pk.not_exists())
        elif plan.version_field is not None:
            expected = getattr(self.written, plan.version_field) - 1
            version_ref = getattr(type(self.written).f, plan.version_field)
            # A first write (version 0) must not overwrite anything; later writes must find
            # the version they started from.
            parts.append(pk.not_exists() if expected == 0 else version_ref == expected)
        if self.condition is not None:
            parts.append(self.condition)
        return and_(*parts) if parts else None

    def params(self) -> dict[str, Any]:
        """The exact ``PutItem`` request."""
        request: dict[str, Any] = {"TableName": self.plan.table.name, "Item": self.item}
        ph = Placeholders()
        condition = self._full_condition()
        _apply_condition(request, condition, ph)
        if condition is not None:
            request["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        ph.apply(request)
        _capacity(request, self.capacity)
        return request

    def steps(self) -> Step[E]:
        """Put, translating a failed condition into a typed error."""
        try:
            yield Call(self.action, self.params())
        except ServiceError as exc:
            if exc.code != "ConditionalCheckFailedException":
                raise
            label = self.plan.label
            if self.create:
                raise _condition_failed(
                    self.plan, exc, AlreadyExistsError, f"{label}: an item with this key exists"
                ) from None
            if self.plan.version_field is not None and self._version_moved(exc):
                raise _condition_failed(
                    self.plan,
                    exc,
                    VersionConflictError,
                    f"{label}: the stored item is not at the version this write expected",
                ) from None
            raise _condition_failed(
                self.plan, exc, ConditionFailedError, f"{label}: the put condition failed"
            ) from None
        return self.written

    def _version_moved(self, exc: ServiceError) -> bool:
        """Whether the stored item is not at the version this write started from.

        With a user condition as well, the stored item (returned on failure) tells which
        of the two failed.
        """
        if self.condition is None:
            return True
        field = self.plan.version_field
        assert field is not None
        expected: int = getattr(self.written, field) - 1
        stored = exc.response.get("Item")
        if not stored:
            return expected != 0
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
        self.key_values = _split_key_values(plan, key, what="get")
        self.key = plan.key_from_values(self.key_values)
        self.consistent = consistent
        self.capacity = capacity

    def params(self) -> dict[str, Any]:
        """The exact ``GetItem`` request."""
        request: dict[str, Any] = {"TableName": self.plan.table.name, "Key": self.key}
        if self.consistent:
            request["ConsistentRead"] = True
        _capacity(request, self.capacity)
        return request

    def parse(self, response: dict[str, Any]) -> E | None:
        """The decoded item, or ``None``."""
        item = response.get("Item")
        if item is None:
            return None
        _check_identity(self.plan, item)
        return self.plan.from_item(item)  # type: ignore[return-value]

    def project(self, *fields: str) -> ProjectedGet:
        """Read only these fields; the result is a ``dict`` of decoded values."""
        return ProjectedGet(self, fields)


class ProjectedGet(Operation["dict[str, Any] | None"]):
    """A `Get` that reads only some fields (and so returns a dict, not a model)."""

    action = "get_item"

    def __init__(self, get: Get[Any], fields: Sequence[str]) -> None:
        self.get = get
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
    ) -> None:
        self.plan = plan
        self.key = plan.key_from_values(_split_key_values(plan, key, what="delete"))
        self.condition = condition
        self.return_old = return_old
        self.expected_version = expected_version
        self.capacity = capacity

    def params(self) -> dict[str, Any]:
        """The exact ``DeleteItem`` request."""
        request: dict[str, Any] = {"TableName": self.plan.table.name, "Key": self.key}
        condition = self.condition
        if self.expected_version is not None and self.plan.version_field is not None:
            lock = getattr(self.plan.model.f, self.plan.version_field) == self.expected_version
            condition = lock if condition is None else lock & condition
        ph = Placeholders()
        _apply_condition(request, condition, ph)
        if condition is not None:
            request["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        ph.apply(request)
        if self.return_old:
            request["ReturnValues"] = "ALL_OLD"
        _capacity(request, self.capacity)
        return request

    def steps(self) -> Step[E | None]:
        """Delete, translating a failed condition into a typed error."""
        try:
            response = yield Call(self.action, self.params())
        except ServiceError as exc:
            if exc.code != "ConditionalCheckFailedException":
                raise
            kind = (
                VersionConflictError if self.expected_version is not None else ConditionFailedError
            )
            raise _condition_failed(
                self.plan, exc, kind, f"{self.plan.label}: the delete condition failed"
            ) from None
        old = response.get("Attributes")
        return self.plan.from_item(old) if old else None  # type: ignore[return-value]


class Update(Operation[E]):
    """Change some attributes of an existing item (``upsert=True``: create it if missing).

    An upsert must be able to create a complete item: it refuses to run without a value
    for every required field, and writes the defaults of the fields it does not set with
    ``if_not_exists`` (so an existing item keeps its values).

    Setting a field that feeds an index key template rewrites that index's key attributes
    in the same request; the template's other fields must be known (primary key fields
    are; pass others with `Update.set` or `Update.known`). Primary key fields cannot be
    updated. Returns the item as stored after the update.
    """

    action = "update_item"

    def __init__(
        self,
        plan: EntityPlan,
        key: Mapping[str, Any],
        *,
        upsert: bool = False,
        capacity: ReturnCapacity | None = None,
    ) -> None:
        self.plan = plan
        self.key_values = _split_key_values(plan, key, what="update")
        self.key = plan.key_from_values(self.key_values)
        self.upsert = upsert
        self.capacity = capacity
        self._sets: dict[str, Any] = {}
        self._known: dict[str, Any] = {}
        self._actions: list[UpdateAction] = []
        self._condition: Condition | None = None
        self._expected_version: int | None = None
        self._now: datetime | None = None

    # -- builder -------------------------------------------------------------------------

    def _ref(self, name: str) -> FieldRef:
        if name not in self.plan.fields:
            raise ExpressionError(f"{self.plan.label}: update of unknown field {name!r}")
        if name in self.plan.primary.fields:
            raise ExpressionError(
                f"{self.plan.label}: field {name!r} is part of the primary key and cannot be "
                "updated; delete the item and put it under its new key"
            )
        ref: FieldRef = getattr(self.plan.model.f, name)
        return ref

    def set(self, **values: Any) -> Update[E]:
        """Set fields to values (``None`` removes the attribute).

        Each value is validated as the model's field would validate it (type, coercion,
        constraints), so an update stores what a put would.
        """
        for name, value in values.items():
            ref = self._ref(name)
            field = self.plan.fields[name]
            if value is not None:
                value = self.plan.validate_field(name, value)
            elif field.required and not field.nullable:
                raise ExpressionError(
                    f"{self.plan.label}: field {name!r} is required; removing it (None) "
                    "would make the item undecodable"
                )
            self._sets[name] = value
            self._actions.append(ref.remove() if value is None else ref.set(value))
        return self

    def remove(self, *names: str) -> Update[E]:
        """Remove attributes (the fields must be optional or have defaults)."""
        for name in names:
            if self.plan.fields.get(name) is not None and self.plan.fields[name].required:
                raise ExpressionError(
                    f"{self.plan.label}: field {name!r} is required; removing it would make "
                    "the item undecodable"
                )
        return self.set(**dict.fromkeys(names))

    def add(self, **values: Any) -> Update[E]:
        """DynamoDB ``ADD``: add to a number, or add elements to a set."""
        for name, value in values.items():
            self._actions.append(self._ref(name).add(value))
        return self

    def increment(self, name: str, by: int | float = 1) -> Update[E]:
        """``SET name = name + by`` (fails if the attribute is missing; see `add`)."""
        self._actions.append(self._ref(name).increment(by))
        return self

    def delete_from(self, **values: Any) -> Update[E]:
        """DynamoDB ``DELETE``: remove elements from a set."""
        for name, value in values.items():
            self._actions.append(self._ref(name).delete(value))
        return self

    def append(self, **values: Any) -> Update[E]:
        """Append elements to a list attribute."""
        for name, value in values.items():
            self._actions.append(self._ref(name).append(value))
        return self

    def prepend(self, **values: Any) -> Update[E]:
        """Prepend elements to a list attribute."""
        for name, value in values.items():
            self._actions.append(self._ref(name).prepend(value))
        return self

    def set_if_not_exists(self, **values: Any) -> Update[E]:
        """Set fields only where the stored item has no value yet."""
        for name, value in values.items():
            ref = self._ref(name)
            self._actions.append(ref.set(ref.if_not_exists(value)))
        return self

    def apply(self, *actions: UpdateAction) -> Update[E]:
        """Raw actions on nested paths, e.g. ``Order.f.meta["k"].set(1)``."""
        self._actions.extend(actions)
        return self

    def known(self, **values: Any) -> Update[E]:
        """Current values of unchanged fields that an index key being rewritten needs."""
        for name, value in values.items():
            if name not in self.plan.fields:
                raise ExpressionError(f"{self.plan.label}: known() of unknown field {name!r}")
            if name in self.key_values and self.key_values[name] != value:
                raise ExpressionError(
                    f"{self.plan.label}: known({name}={value!r}) contradicts the key being "
                    f"updated ({name}={self.key_values[name]!r}); primary key fields are known"
                )
        self._known.update(values)
        return self

    def where(self, condition: Condition) -> Update[E]:
        """Only update when ``condition`` holds on the stored item."""
        self._condition = condition if self._condition is None else self._condition & condition
        return self

    def expect_version(self, version: int) -> Update[E]:
        """Optimistic locking: only update if the stored version is ``version``."""
        if self.plan.version_field is None:
            raise ExpressionError(f"{self.plan.label} declares no version_field")
        self._expected_version = version
        return self

    def at(self, now: datetime) -> Update[E]:
        """Use ``now`` for the updated_at stamp (default: the current time)."""
        self._now = now
        return self

    # -- rendering -----------------------------------------------------------------------

    def _index_key_actions(self, stamps: Mapping[str, Any]) -> list[UpdateAction]:
        """Rewrite (or remove) the key attributes of every index fed by a changed field.

        ``stamps`` are the values the update writes on its own (the updated_at stamp): an
        index keyed on them changes like one keyed on a field set with `set`.
        """
        plan = self.plan
        paths = update_paths(self._actions) | set(stamps)
        changed = {name for name in plan.fields if name in paths}
        actions: list[UpdateAction] = []
        sets = {**self._sets, **stamps}
        for name, value in self._known.items():
            if name in sets and sets[name] != value:
                raise ExpressionError(
                    f"{plan.label}: field {name!r} is given both to .set(...) ({sets[name]!r}) "
                    f"and to .known(...) ({value!r}); the index keys cannot follow both"
                )
        known = {**self.key_values, **self._known, **sets}
        for index in plan.indexes.values():
            touched = changed & set(index.fields)
            if not touched and (not self.upsert or self._created_outside(index, known)):
                continue
            # (Untouched, in an upsert: an item it creates must carry this index's key, as
            # a put of the same item would.)
            raw = touched - set(sets)
            if raw:
                raise ExpressionError(
                    f"{plan.label}: field {sorted(raw)[0]!r} feeds the key of index "
                    f"{index.index!r}, so it can only be changed with .set(...) (its new value "
                    "must be known to rewrite the index key)"
                )
            # An LSI's partition key is the table's own key attribute, which DynamoDB
            # refuses to SET or REMOVE (even to its current value).
            own_keys = {plan.table.pk, plan.table.sk}
            templates = [t for t in index.templates() if t.attribute not in own_keys]
            if any(known.get(f, ...) is None for f in index.optional_fields if f in known):
                # A sparse index field became None: the item leaves the index.
                for template in templates:
                    actions.append(_key_ref(template.attribute).remove())
                continue
            missing = [f for f in index.fields if f not in known]
            if missing and not touched:
                raise ExpressionError(
                    f"{plan.label}: upsert may create the item, which must carry the key of "
                    f"index {index.index!r}, whose templates need {missing}; pass their "
                    "values with .set(...) (or .known(...) when the item exists)"
                )
            if missing:
                raise ExpressionError(
                    f"{plan.label}: changing {sorted(touched)[0]!r} rewrites the key of index "
                    f"{index.index!r}, whose templates also need {missing}; pass their "
                    "current values with .known(...) or .set(...)"
                )
            for template in templates:
                values = {f: known[f] for f in template.fields}
                actions.append(
                    _key_ref(template.attribute).set(
                        template.attribute_value(template.format(values))
                    )
                )
        return actions

    def _created_outside(self, index: KeyPlan, known: Mapping[str, Any]) -> bool:
        """Whether an item this upsert creates holds no key for ``index``.

        Decided by the index fields the upsert does not give: a sparse field left to a
        None default, or a required field left out (which `_upsert_defaults` refuses).
        """
        model_fields = self.plan.model.model_fields
        for name in index.fields:
            if name in known:
                continue
            info = model_fields[name]
            if info.is_required():
                return True
            if (
                name in index.optional_fields
                and info.get_default(call_default_factory=True) is None
            ):
                return True
        return False

    def _ttl_actions(self) -> list[UpdateAction]:
        """Rewrite (or remove) the table's TTL attribute when the ttl field changes."""
        plan = self.plan
        ttl_field, attribute = plan.ttl_field, plan.table.ttl_attribute
        if ttl_field is None or attribute is None or ttl_field not in update_paths(self._actions):
            return []
        if ttl_field not in self._sets:
            raise ExpressionError(
                f"{plan.label}: field {ttl_field!r} feeds the TTL attribute {attribute!r}, so it "
                "can only be changed with .set(...)"
            )
        value = self._sets[ttl_field]
        if value is None:
            return [_key_ref(attribute).remove()]
        return [_key_ref(attribute).set({"N": str(_epoch_seconds(value))})]

    def _all_actions(self) -> list[UpdateAction]:
        plan = self.plan
        actions = list(self._actions)
        if not actions:
            raise ExpressionError(f"{plan.label}: an update needs at least one change")
        now = self._now or _now()
        stamps: dict[str, Any] = {}
        if plan.updated_at_field is not None and plan.updated_at_field not in self._sets:
            stamps[plan.updated_at_field] = now
        actions.extend(self._index_key_actions(stamps))
        actions.extend(self._ttl_actions())
        for name, value in stamps.items():
            actions.append(self._ref(name).set(value))
        if plan.version_field is not None:
            ref = self._ref(plan.version_field)
            actions.append(ref.add(1))  # ADD starts a missing version at 1
        if self.upsert:
            table = plan.table
            actions.append(_key_ref(table.entity_attribute).set({"S": plan.name}))
            actions.append(_key_ref(table.version_attribute).set({"N": str(plan.version)}))
            # A put stores key fields as attributes too; an upsert that creates the item
            # must as well, or filters and projections on those fields miss it.
            for name, value in self.key_values.items():
                actions.append(getattr(plan.model.f, name).set(value))
            # A created_at the caller writes (set(created_at=...)) is theirs to choose.
            if plan.created_at_field is not None and plan.created_at_field not in update_paths(
                self._actions
            ):
                ref = self._ref(plan.created_at_field)
                actions.append(ref.set(ref.if_not_exists(now)))
            actions.extend(self._upsert_defaults(actions))
        return actions

    def _upsert_defaults(self, actions: list[UpdateAction]) -> list[UpdateAction]:
        """What an upsert must write so that an item it creates decodes and filters right.

        A required field the upsert does not set would leave a created item undecodable:
        refuse it. Fields with a (non-None) default are written with ``if_not_exists``,
        so a created item holds them as a put would, and an existing one keeps its values.
        """
        plan = self.plan
        touched = update_paths(actions)
        defaults: list[UpdateAction] = []
        for name, field_plan in plan.fields.items():
            if field_plan.attribute in touched:
                continue
            if field_plan.required:
                raise ExpressionError(
                    f"{plan.label}: upsert may create the item, and required field {name!r} "
                    "would be missing; set it, or use update() for existing items only"
                )
            default = plan.model.model_fields[name].get_default(call_default_factory=True)
            if default is None or field_plan.codec.to_av(default) is None:
                continue  # None and empty sets are stored by leaving the attribute out
            ref = self._ref(name)
            defaults.append(ref.set(ref.if_not_exists(default)))
        return defaults

    def _full_condition(self) -> Condition | None:
        parts: list[Condition] = []
        if not self.upsert:
            parts.append(_key_ref(self.plan.table.pk).exists())
        if self._expected_version is not None:
            assert self.plan.version_field is not None
            parts.append(
                getattr(self.plan.model.f, self.plan.version_field) == self._expected_version
            )
        if self._condition is not None:
            parts.append(self._condition)
        return and_(*parts) if parts else None

    def params(self) -> dict[str, Any]:
        """The exact ``UpdateItem`` request."""
        request: dict[str, Any] = {"TableName": self.plan.table.name, "Key": self.key}
        ph = Placeholders()
        request["UpdateExpression"] = render_update(self._all_actions(), ph)
        condition = self._full_condition()
        _apply_condition(request, condition, ph)
        if condition is not None:
            request["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        ph.apply(request)
        request["ReturnValues"] = "ALL_NEW"
        _capacity(request, self.capacity)
        return request

    def steps(self) -> Step[E]:
        """Update, translating failed conditions into typed errors."""
        try:
            response = yield Call(self.action, self.params())
        except ServiceError as exc:
            if exc.code != "ConditionalCheckFailedException":
                raise
            label = self.plan.label
            if not exc.response.get("Item") and not self.upsert:
                raise NotFoundError(f"{label}: no item with key {self.key_values}") from None
            if self._expected_version is not None:
                raise _condition_failed(
                    self.plan,
                    exc,
                    VersionConflictError,
                    f"{label}: the stored item is not at version {self._expected_version}",
                ) from None
            raise _condition_failed(
                self.plan, exc, ConditionFailedError, f"{label}: the update condition failed"
            ) from None
        return self.plan.from_item(response["Attributes"])  # type: ignore[return-value]


# -- batches --------------------------------------------------------------------------


def _backoff(attempt: int, base: float, cap: float) -> float:
    # "Full jitter": a random pause up to an exponentially growing ceiling.
    return random.uniform(0, min(cap, base * (2**attempt)))


@dataclass
class BatchWriteResult:
    """What a batch write did: items put and keys deleted, and the calls it took."""

    put: int = 0
    deleted: int = 0
    calls: int = 0
    retries: int = 0


class BatchWrite(Operation[BatchWriteResult]):
    """Put and delete many items: 25 per call, unprocessed items retried with backoff.

    Raises `RequestLimitError` if items are still unprocessed after ``max_attempts``;
    nothing is dropped silently.
    """

    action = "batch_write_item"

    def __init__(
        self,
        puts: Iterable[Entity] = (),
        deletes: Iterable[tuple[EntityPlan, Mapping[str, Any]]] = (),
        *,
        max_attempts: int = 8,
        backoff_base: float = 0.05,
        backoff_cap: float = 5.0,
        capacity: ReturnCapacity | None = None,
    ) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        seen: set[tuple[str, str]] = set()
        self.n_put = 0
        self.n_delete = 0
        now = _now()
        for obj in puts:
            plan = type(obj).plan()
            if plan.version_field is not None:
                # BatchWriteItem carries no conditions, so it cannot check versions:
                # writing such an item unchecked could silently undo a concurrent write.
                raise RequestLimitError(
                    f"{plan.label} uses optimistic locking (version_field="
                    f"{plan.version_field!r}), which a batch write cannot check; write it "
                    "with put() or in a TransactWrite"
                )
            obj = _stamp_times(plan, obj, now)
            item = plan.to_item(obj)
            self._add(plan, plan.key(obj), {"PutRequest": {"Item": item}}, seen)
            self.n_put += 1
        for plan, key in deletes:
            key_item = plan.key_from_values(_split_key_values(plan, key, what="batch delete"))
            self._add(plan, key_item, {"DeleteRequest": {"Key": key_item}}, seen)
            self.n_delete += 1
        self.max_attempts = max_attempts
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.capacity = capacity

    def _add(
        self, plan: EntityPlan, key: Item, request: dict[str, Any], seen: set[tuple[str, str]]
    ) -> None:
        ident = (plan.table.name, repr(sorted(key.items())))
        if ident in seen:
            raise RequestLimitError(
                f"{plan.label}: the same key appears twice in one batch write "
                "(DynamoDB rejects the whole batch); write it once"
            )
        seen.add(ident)
        self.requests.append((plan.table.name, request))

    def _chunk_params(self, chunk: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
        items: dict[str, list[dict[str, Any]]] = {}
        for table, write in chunk:
            items.setdefault(table, []).append(write)
        request: dict[str, Any] = {"RequestItems": items}
        _capacity(request, self.capacity)
        return request

    def chunks(self) -> list[dict[str, Any]]:
        """The requests of every call, 25 writes each (before any retry)."""
        return [
            self._chunk_params(self.requests[i : i + MAX_BATCH_WRITE])
            for i in range(0, len(self.requests), MAX_BATCH_WRITE)
        ]

    def params(self) -> dict[str, Any]:
        """The first call's request (see `chunks` for all of them)."""
        chunks = self.chunks()
        return chunks[0] if chunks else {"RequestItems": {}}

    def steps(self) -> Step[BatchWriteResult]:
        """Send each chunk; resend unprocessed items with exponential backoff and jitter."""
        result = BatchWriteResult(put=self.n_put, deleted=self.n_delete)
        for request in self.chunks():
            attempt = 0
            while True:
                response = yield Call(self.action, request)
                result.calls += 1
                unprocessed = response.get("UnprocessedItems") or {}
                if not any(unprocessed.values()):
                    break
                attempt += 1
                if attempt >= self.max_attempts:
                    left = sum(len(v) for v in unprocessed.values())
                    raise RequestLimitError(
                        f"batch write: {left} items still unprocessed after {attempt} "
                        "attempts (throttled); nothing was dropped, retry them later"
                    )
                result.retries += 1
                yield Sleep(_backoff(attempt, self.backoff_base, self.backoff_cap))
                request = {**request, "RequestItems": unprocessed}
        return result


class BatchGet(Operation["list[Entity]"]):
    """Read many items by key: 100 keys per call, unprocessed keys retried with backoff.

    Returns the items found, in the order their keys were given (missing keys are
    skipped); raises `RequestLimitError` rather than return a partial result.
    """

    action = "batch_get_item"

    def __init__(
        self,
        keys: Iterable[tuple[EntityPlan, Mapping[str, Any]]],
        *,
        consistent: bool = False,
        max_attempts: int = 8,
        backoff_base: float = 0.05,
        backoff_cap: float = 5.0,
        capacity: ReturnCapacity | None = None,
    ) -> None:
        self.keys: list[tuple[EntityPlan, Item]] = []
        seen: set[tuple[str, str]] = set()
        for plan, values in keys:
            key = plan.key_from_values(_split_key_values(plan, values, what="batch get"))
            ident = (plan.table.name, repr(sorted(key.items())))
            if ident in seen:
                raise RequestLimitError(
                    f"{plan.label}: the same key appears twice in one batch get "
                    "(DynamoDB rejects the whole batch); ask once"
                )
            seen.add(ident)
            self.keys.append((plan, key))
        self.consistent = consistent
        self.max_attempts = max_attempts
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.capacity = capacity

    def chunks(self) -> list[dict[str, Any]]:
        """The requests of every call, 100 keys each (before any retry)."""
        result = []
        for i in range(0, len(self.keys), MAX_BATCH_GET):
            tables: dict[str, dict[str, Any]] = {}
            for plan, key in self.keys[i : i + MAX_BATCH_GET]:
                entry = tables.setdefault(plan.table.name, {"Keys": []})
                if self.consistent:
                    entry["ConsistentRead"] = True
                entry["Keys"].append(key)
            request: dict[str, Any] = {"RequestItems": tables}
            _capacity(request, self.capacity)
            result.append(request)
        return result

    def params(self) -> dict[str, Any]:
        """The first call's request (see `chunks` for all of them)."""
        chunks = self.chunks()
        return chunks[0] if chunks else {"RequestItems": {}}

    def steps(self) -> Step[list[Entity]]:
        """Fetch every chunk, retrying unprocessed keys; decode in key order."""
        found: dict[tuple[str, str], Item] = {}
        for request in self.chunks():
            attempt = 0
            while True:
                response = yield Call(self.action, request)
                for table, items in (response.get("Responses") or {}).items():
                    for item in items:
                        found[self._ident(table, item)] = item
                unprocessed = response.get("UnprocessedKeys") or {}
                if not any(v.get("Keys") for v in unprocessed.values()):
                    break
                attempt += 1
                if attempt >= self.max_attempts:
                    left = sum(len(v.get("Keys", [])) for v in unprocessed.values())
                    raise RequestLimitError(
                        f"batch get: {left} keys still unprocessed after {attempt} attempts "
                        "(throttled); no partial result is returned"
                    )
                yield Sleep(_backoff(attempt, self.backoff_base, self.backoff_cap))
                request = {**request, "RequestItems": unprocessed}
        result = []
        for plan, key in self.keys:
            item = found.get((plan.table.name, repr(sorted(key.items()))))
            if item is not None:
                result.append(plan.from_item(item))
        return result

    def _ident(self, table: str, item: Item) -> tuple[str, str]:
        plan = next(p for p, _ in self.keys if p.table.name == table)
        attrs = [plan.table.pk] + ([plan.table.sk] if plan.table.sk else [])
        return (table, repr(sorted((a, item[a]) for a in attrs)))


# -- transactions ---------------------------------------------------------------------


@dataclass
class _TransactEntry:
    label: str
    table: str
    key: Item
    request: dict[str, Any]
    #: The bytes the entry is known to write (a put's item), toward the 4 MB limit.
    size: int = 0


@dataclass
class TransactWrite(Operation[None]):
    """Up to 100 puts, updates, deletes and condition checks that succeed or fail together.

    A cancelled transaction raises `TransactionCanceledError` with one reason per item
    (``{"index", "entity", "code", "message"}``).
    """

    action: ClassVar[str] = "transact_write_items"
    entries: list[_TransactEntry] = field(default_factory=list)
    client_token: str | None = None
    capacity: ReturnCapacity | None = None

    def _add(
        self, label: str, table: str, key: Item, request: dict[str, Any], size: int = 0
    ) -> TransactWrite:
        for entry in self.entries:
            if entry.table == table and entry.key == key:
                raise RequestLimitError(
                    f"{label}: an item appears twice in one transaction; DynamoDB allows each "
                    "item once"
                )
        if len(self.entries) >= MAX_TRANSACT_ITEMS:
            raise RequestLimitError(
                f"a transaction holds at most {MAX_TRANSACT_ITEMS} items; split the work"
            )
        total = size + sum(entry.size for entry in self.entries)
        if total > MAX_TRANSACT_BYTES:
            raise RequestLimitError(
                f"{label}: the items put in this transaction total {total} bytes, over "
                f"DynamoDB's transaction limit of {MAX_TRANSACT_BYTES} bytes (4 MB); split the work"
            )
        self.entries.append(_TransactEntry(label, table, key, request, size))
        return self

    def put(self, op: Put[Any]) -> TransactWrite:
        """Add a `Put` (its condition included)."""
        params = op.params()
        params.pop("ReturnConsumedCapacity", None)
        return self._add(
            op.plan.label,
            op.plan.table.name,
            op.plan.key(op.written),
            {"Put": params},
            item_size(op.item),
        )

    def update(self, op: Update[Any]) -> TransactWrite:
        """Add an `Update` (its condition included)."""
        params = op.params()
        params.pop("ReturnValues", None)
        params.pop("ReturnConsumedCapacity", None)
        return self._add(op.plan.label, op.plan.table.name, op.key, {"Update": params})

    def delete(self, op: Delete[Any]) -> TransactWrite:
        """Add a `Delete` (its condition included)."""
        params = op.params()
        params.pop("ReturnValues", None)
        params.pop("ReturnConsumedCapacity", None)
        return self._add(op.plan.label, op.plan.table.name, op.key, {"Delete": params})

    def check(
        self, plan: EntityPlan, key: Mapping[str, Any], condition: Condition
    ) -> TransactWrite:
        """Add a condition check on an item that the transaction does not write."""
        key_item = plan.key_from_values(_split_key_values(plan, key, what="condition check"))
        ph = Placeholders()
        request: dict[str, Any] = {
            "TableName": plan.table.name,
            "Key": key_item,
            "ConditionExpression": render_condition(condition, ph),
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
        ph.apply(request)
        return self._add(plan.label, plan.table.name, key_item, {"ConditionCheck": request})

    def params(self) -> dict[str, Any]:
        """The exact ``TransactWriteItems`` request."""
        if not self.entries:
            raise QueryError("a transaction needs at least one item")
        request: dict[str, Any] = {"TransactItems": [e.request for e in self.entries]}
        if self.client_token is not None:
            request["ClientRequestToken"] = self.client_token
        _capacity(request, self.capacity)
        return request

    def steps(self) -> Step[None]:
        """Run the transaction; a cancellation names the reason of each item."""
        try:
            yield Call(self.action, self.params())
        except ServiceError as exc:
            if exc.code != "TransactionCanceledException":
                raise
            reasons = []
            raw_reasons = exc.response.get("CancellationReasons") or []
            for i, (entry, reason) in enumerate(zip(self.entries, raw_reasons, strict=False)):
                reasons.append(
                    {
                        "index": i,
                        "entity": entry.label,
                        "code": reason.get("Code", "None"),
                        "message": reason.get("Message", ""),
                        "item": reason.get("Item"),
                    }
                )
            failed = [r for r in reasons if r["code"] not in ("None", None)]
            summary = "; ".join(f"#{r['index']} {r['entity']}: {r['code']}" for r in failed)
            raise TransactionCanceledError(
                f"transaction cancelled: {summary or exc.message}", reasons=reasons
            ) from None
        return None


@dataclass
class TransactGet(Operation["list[Entity | None]"]):
    """Up to 100 consistent reads in one snapshot; ``None`` where an item is missing."""

    action: ClassVar[str] = "transact_get_items"
    gets: list[Get[Any]] = field(default_factory=list)
    capacity: ReturnCapacity | None = None

    def get(self, op: Get[Any]) -> TransactGet:
        """Add a `Get`."""
        if len(self.gets) >= MAX_TRANSACT_ITEMS:
            raise RequestLimitError(
                f"a transaction holds at most {MAX_TRANSACT_ITEMS} items; split the work"
            )
        for other in self.gets:
            if other.plan.table.name == op.plan.table.name and other.key == op.key:
                raise RequestLimitError(
                    f"{op.plan.label}: an item appears twice in one transaction; DynamoDB "
                    "allows each item once"
                )
        self.gets.append(op)
        return self

    def params(self) -> dict[str, Any]:
        """The exact ``TransactGetItems`` request."""
        if not self.gets:
            raise QueryError("a transaction needs at least one item")
        request: dict[str, Any] = {
            "TransactItems": [
                {"Get": {"TableName": g.plan.table.name, "Key": g.key}} for g in self.gets
            ]
        }
        _capacity(request, self.capacity)
        return request

    def parse(self, response: dict[str, Any]) -> list[Entity | None]:
        """The decoded items, in request order."""
        result: list[Entity | None] = []
        for get, entry in zip(self.gets, response.get("Responses", []), strict=False):
            item = entry.get("Item")
            result.append(None if item is None else get.plan.from_item(item))
        return result
