"""`Update`: change some attributes of an item, keeping every index key it feeds in step."""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from singletable.attributes.numbers import beyond_number_range
from singletable.attributes.size import MAX_ITEM_SIZE, attribute_value_size, item_size
from singletable.errors import (
    ConditionFailedError,
    ExpressionError,
    ItemTooLargeError,
    NotFoundError,
    ServiceError,
    SingleTableError,
    VersionConflictError,
    with_context,
)
from singletable.expressions.conditions import Condition, and_
from singletable.expressions.fields import FieldRef
from singletable.expressions.updates import (
    UpdateAction,
    plain_set_value,
    update_paths,
)
from singletable.model.fields import FieldRefs, field_refs
from singletable.model.plan import epoch_seconds
from singletable.model.unique import UniqueConstraint
from singletable.operations.common import (
    ItemRequest,
    condition_failed,
    failed_condition,
    key_ref,
    split_key_values,
    utc_now,
    version_conflict_message,
)
from singletable.operations.guarded import (
    GuardedWrite,
    TransactEntry,
    first_request,
    guarded_steps,
    known_mismatch,
    stored_values,
    write_entries,
)
from singletable.operations.protocol import Builder, Call, Operation, ReturnCapacity, Step, chain

if TYPE_CHECKING:
    from singletable.model.plan import EntityPlan, KeyPlan

R = TypeVar("R")
E = TypeVar("E", bound=BaseModel)


class Update(Builder, Operation[E]):
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
    _containers = ("_sets", "_known", "_actions")

    def __init__(
        self,
        plan: EntityPlan,
        key: Mapping[str, Any],
        *,
        upsert: bool = False,
        capacity: ReturnCapacity | None = None,
    ) -> None:
        self.plan = plan
        self.subject = plan.name
        self.key_values = split_key_values(plan, key, what="update")
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

    def _ref(self, name: str) -> FieldRef[Any]:
        """The reference of a field this update may write; every write path asks it.

        Refuses the table's key and bookkeeping attributes (written from the templates and
        the entity, never directly), unknown fields and primary key fields.
        """
        table = self.plan.table
        if name in table.bookkeeping_attributes():
            raise ExpressionError(
                f"{self.plan.label}: {name!r} is a key or bookkeeping attribute of table "
                f"{table.name!r}; it is written from the key templates and the entity, so "
                "change the fields it is built from with .set(...)"
            )
        if name not in self.plan.fields:
            raise ExpressionError(f"{self.plan.label}: update of unknown field {name!r}")
        if name in self.plan.primary.fields:
            raise ExpressionError(
                f"{self.plan.label}: field {name!r} is part of the primary key and cannot be "
                "updated; delete the item and put it under its new key"
            )
        ref: FieldRef[Any] = getattr(field_refs(self.plan), name)
        return ref

    @chain
    def set(self, **values: Any) -> Update[E]:
        """Set fields to values (``None`` is stored as a put stores it).

        Each value is validated as the model's field would validate it (type, coercion,
        constraints), so an update stores what a put would.
        """
        for name, value in values.items():
            ref = self._ref(name)  # refuses unknown, key and bookkeeping names first
            field = self.plan.fields[name]
            if value is not None:
                value = self.plan.validate_field(name, value)
                if field.attribute in self.plan.native_text_parts():
                    stored = field.codec.to_av(value)
                    if stored is not None:
                        self.plan.check_native_parts({field.attribute: stored})
            elif field.required and not field.nullable:
                raise ExpressionError(
                    f"{self.plan.label}: field {name!r} is required; removing it (None) "
                    "would make the item undecodable"
                )
            # None is stored as a put stores it: by leaving the attribute out, or as NULL
            # where an absent attribute would read back as the field's non-None default.
            self._assign(ref, name, value, remove=value is None and not field.stores_none)
        return self

    def _assign(self, ref: FieldRef[Any], name: str, value: Any, *, remove: bool) -> None:
        self._sets[name] = value
        self._actions.append(ref.remove() if remove else ref.set(value))

    @chain
    def remove(self, *names: str) -> Update[E]:
        """Remove attributes (the fields must be optional or have defaults)."""
        refs = []
        for name in names:
            refs.append(self._ref(name))
            if self.plan.fields[name].required:
                raise ExpressionError(
                    f"{self.plan.label}: field {name!r} is required; removing it would make "
                    "the item undecodable"
                )
        for name in names:
            field = self.plan.fields[name]
            native = [
                i.name
                for i in self.plan.table.native_indexes.values()
                if field.attribute in (p.attribute for p in i.parts)
            ]
            if native and not field.nullable:
                # The attribute gone, the item leaves the index, yet reads back as the
                # default: membership would no longer follow the value.
                raise ExpressionError(
                    f"{self.plan.label}: field {name!r} is a key attribute of native GSI "
                    f"{native[0]!r} and not Optional; removing it would take the item out of "
                    "the index while it reads back as its default; set a value instead"
                )
        for ref, name in zip(refs, names, strict=True):
            # The item then reads the field's default: index keys, the TTL and unique
            # guards follow that value, as they would after a put of the item as read.
            default = self.plan.model.model_fields[name].get_default(call_default_factory=True)
            self._assign(ref, name, default, remove=True)
        return self

    @chain
    def add(self, **values: Any) -> Update[E]:
        """DynamoDB ``ADD``: add to a number, or add elements to a set."""
        for name, value in values.items():
            self._actions.append(self._ref(name).add(value))
        return self

    @chain
    def increment(self, name: str, by: int | float = 1) -> Update[E]:
        """``SET name = name + by`` (fails if the attribute is missing; see `add`)."""
        self._actions.append(self._ref(name).increment(by))
        return self

    @chain
    def delete_from(self, **values: Any) -> Update[E]:
        """DynamoDB ``DELETE``: remove elements from a set."""
        for name, value in values.items():
            self._actions.append(self._ref(name).delete(value))
        return self

    @chain
    def append(self, **values: Any) -> Update[E]:
        """Append elements to a list attribute."""
        for name, value in values.items():
            self._actions.append(self._ref(name).append(value))
        return self

    @chain
    def prepend(self, **values: Any) -> Update[E]:
        """Prepend elements to a list attribute."""
        for name, value in values.items():
            self._actions.append(self._ref(name).prepend(value))
        return self

    @chain
    def set_if_not_exists(self, **values: Any) -> Update[E]:
        """Set fields only where the stored item has no value yet."""
        for name, value in values.items():
            ref = self._ref(name)
            self._actions.append(ref.set(ref.if_not_exists(value)))
        return self

    @chain
    def apply(self, *actions: UpdateAction) -> Update[E]:
        """Raw actions on nested paths, e.g. ``Order.f.meta["k"].set(1)``.

        Raw actions follow the rules of the other methods: a top-level ``set`` of a plain
        value is `set` (validated, index keys and TTL rewritten) and a top-level ``remove``
        is `remove`; no action may write a primary key field or a key or bookkeeping
        attribute of the table, and one that computes a field feeding an index key (an
        increment, ``if_not_exists``) is refused, as the new key cannot be known.
        """
        # ``self`` is this call's own copy; set() and remove() return further copies.
        update = self
        for action in actions:
            if not isinstance(action, UpdateAction):
                raise ExpressionError(
                    f"{self.plan.label}: apply() takes UpdateActions, got {type(action).__name__}"
                )
            name = str(action.path[0])
            self._ref(name)
            if len(action.path) == 1 and action.clause == "REMOVE":
                update = update.remove(name)
                continue
            value = plain_set_value(action) if len(action.path) == 1 else None
            if value is None:
                update._actions.append(action)
                continue
            field = self.plan.fields[name]
            try:
                decoded = None if "NULL" in value else field.codec.from_av(value)
            except SingleTableError as exc:
                raise ExpressionError(
                    with_context(
                        f"{action.label}: cannot be set to {value!r}", exc, named=action.label
                    )
                ) from None
            update = update.set(**{name: decoded})
        return update

    @chain
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

    @chain
    def where(self, condition: Condition) -> Update[E]:
        """Only update when ``condition`` holds on the stored item."""
        self._condition = condition if self._condition is None else self._condition & condition
        return self

    @chain
    def expect_version(self, version: int) -> Update[E]:
        """Optimistic locking: only update if the stored version is ``version``."""
        if self.plan.version_field is None:
            raise ExpressionError(f"{self.plan.label} declares no version_field")
        self._expected_version = version
        return self

    @chain
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
        unique = plan.unique_fields()
        for name, value in self._known.items():
            # For a unique field, known() is the stored value the guard moves away from.
            if name in sets and sets[name] != value and name not in unique:
                raise ExpressionError(
                    f"{plan.label}: field {name!r} is given both to .set(...) ({sets[name]!r}) "
                    f"and to .known(...) ({value!r}); the index keys cannot follow both"
                )
        known = {**dict.fromkeys(self._assumed_none()), **self.key_values, **self._known, **sets}
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
                    actions.append(key_ref(template.attribute).remove())
                continue
            missing = [f for f in index.fields if f not in known]
            if missing and not touched:
                raise ExpressionError(
                    f"{plan.label}: upsert may create the item, which must carry the key of "
                    f"index {index.index!r}, whose templates need {missing}; pass their "
                    f"values with .set(...), e.g. {self._example('set', missing)} (or use "
                    "update() with .known(...) when the item exists)"
                )
            if missing:
                raise ExpressionError(
                    f"{plan.label}: changing {sorted(touched)[0]!r} rewrites the key of index "
                    f"{index.index!r}, whose templates also need {missing}; pass their "
                    f"current values with .known(...) or .set(...), e.g. "
                    f"{self._example('known', missing)}"
                )
            for template in templates:
                values = {f: known[f] for f in template.fields}
                actions.append(
                    key_ref(template.attribute).set(
                        template.attribute_value(template.format(values))
                    )
                )
        return actions

    def _example(self, method: str, names: Sequence[str]) -> str:
        """The update in an error message, given ``names`` with ``method``."""
        key = ", ".join(f"{k}={v!r}" for k, v in self.key_values.items())
        sets = "".join(f".set({name}=...)" for name in self._sets)
        given = ", ".join(f"{name}=<stored value>" for name in names)
        kind = "upsert" if self.upsert and method == "set" else "update"
        return f"{self.plan.model.__name__}.{kind}({key}){sets}.{method}({given})"

    def _assumed_none(self) -> list[str]:
        """Sparse index fields an upsert does not give, taken at their ``None`` default.

        An item the upsert creates holds that default, so the index keys follow it; an
        item already stored may hold another value, which the keys would have to follow
        instead. The upsert is therefore conditioned on the stored item holding none of
        them (`_full_condition`): the index keys are right either way, or the upsert
        fails and `condition_error` names the stored value to give.
        """
        if not self.upsert:
            return []
        plan = self.plan
        changed = self.changed_fields()
        given = {*self.key_values, *self._known, *self._sets}
        if plan.updated_at_field is not None:  # stamped by every update
            changed.add(plan.updated_at_field)
            given.add(plan.updated_at_field)
        model_fields = plan.model.model_fields
        assumed: list[str] = []
        for index in plan.indexes.values():
            if not changed & set(index.fields):
                continue
            for name in index.fields:
                if (
                    name not in given
                    and name not in assumed
                    and name in index.optional_fields
                    and model_fields[name].get_default(call_default_factory=True) is None
                ):
                    assumed.append(name)
        return assumed

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
            return [key_ref(attribute).remove()]
        return [key_ref(attribute).set({"N": str(epoch_seconds(value))})]

    def _all_actions(self) -> list[UpdateAction]:
        plan = self.plan
        actions = list(self._actions)
        if not actions:
            raise ExpressionError(f"{plan.label}: an update needs at least one change")
        now = self._now or utc_now()
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
            actions.append(key_ref(table.entity_attribute).set({"S": plan.name}))
            actions.append(key_ref(table.version_attribute).set({"N": str(plan.version)}))
            # A put stores key fields as attributes too; an upsert that creates the item
            # must as well, or filters and projections on those fields miss it.
            for name, value in self.key_values.items():
                # As in a put, a value beyond the Number range stays in the key only.
                if not beyond_number_range(value):
                    actions.append(getattr(field_refs(plan), name).set(value))
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
            if field_plan.attribute in touched or name in self.key_values:
                continue  # key fields are in the key (and, within range, set above)
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

    def _check_written_size(self, actions: list[UpdateAction]) -> None:
        """Refuse an update whose result is certainly over DynamoDB's 400 KB item limit.

        The item after the update holds at least the key and every plain value the update
        SETs (index keys and bookkeeping included): their size is a lower bound, and
        over the limit the update cannot succeed. What the stored item already holds
        (attributes the update leaves alone), and values computed by DynamoDB (``ADD``,
        arithmetic, ``if_not_exists``, ``list_append``) cannot be known here; an update
        that crosses the limit through them is refused by DynamoDB (`ServiceError`,
        ``ValidationException``).
        """
        top: dict[str, int] = {name: item_size({name: av}) for name, av in self.key.items()}
        nested = 0
        for action in actions:
            value = plain_set_value(action)
            if value is None:
                continue
            name = str(action.path[0])
            if len(action.path) == 1:
                top[name] = item_size({name: value})
            else:
                nested += attribute_value_size(value)
        size = sum(top.values()) + nested
        if size > MAX_ITEM_SIZE:
            raise ItemTooLargeError(
                f"{self.plan.label}: the update writes at least {size} bytes (key and values "
                f"set), over DynamoDB's item size limit of {MAX_ITEM_SIZE} bytes (400 KB); "
                "move large values to S3 or split the item",
                size=size,
                limit=MAX_ITEM_SIZE,
            )

    def _full_condition(self) -> Condition | None:
        parts: list[Condition] = []
        if not self.upsert:
            parts.append(key_ref(self.plan.table.pk).exists())
        if self._expected_version is not None:
            assert self.plan.version_field is not None
            parts.append(
                getattr(field_refs(self.plan), self.plan.version_field) == self._expected_version
            )
        refs: FieldRefs[Any] = field_refs(self.plan)
        parts.extend(getattr(refs, name) == None for name in self._assumed_none())  # noqa: E711
        if self._condition is not None:
            parts.append(self._condition)
        return and_(*parts) if parts else None

    # -- uniqueness (see `singletable.operations.guarded`) ---------------------------------

    def changed_fields(self) -> builtins.set[str]:
        """The fields this update changes (by any action)."""
        paths = update_paths(self._actions)
        return {name for name, f in self.plan.fields.items() if f.attribute in paths}

    def set_values(self) -> dict[str, Any]:
        """The fields given to `set`, validated, and to `remove`, as their defaults."""
        return dict(self._sets)

    def known_values(self) -> dict[str, Any]:
        """The values given to `known`."""
        return dict(self._known)

    def guarded(self, touched: Sequence[UniqueConstraint]) -> GuardedWrite:
        """The update with the guards of the ``touched`` constraints (see `guarded_steps`).

        The stored values are read first, unless `known` gives them all.
        """
        model_fields = self.plan.model.model_fields
        # An item an upsert creates starts from the defaults of the constrained fields.
        defaults = {
            f: model_fields[f].get_default(call_default_factory=True)
            for c in touched
            for f in c.fields
            if not model_fields[f].is_required()
        }
        return GuardedWrite(
            self.plan,
            self.request(),
            tuple(touched),
            self.set_values(),
            partial=True,
            created={**defaults, **self.key_values},
            known=update_old_known(self, touched),
            missing="write" if self.upsert else "fail",
            read_back=True,
        )

    def params(self) -> dict[str, Any]:
        """The exact ``UpdateItem`` request.

        When the update changes a unique field, the first request of the write: the
        TransactWriteItems that also moves the guard when `known` gives the stored
        values, else the consistent GetItem that reads them.
        """
        touched = touched_constraints(self) if self.plan.unique else []
        if touched:
            return first_request(self.guarded(touched))
        return self.item_params()

    def request(self) -> ItemRequest:
        """The ``UpdateItem`` of the item alone, as a value."""
        actions = self._all_actions()
        self._check_written_size(actions)
        return ItemRequest(
            "Update",
            self.plan.table.name,
            self.key,
            actions=tuple(actions),
            condition=self._full_condition(),
            return_values="ALL_NEW",
            capacity=self.capacity,
        )

    def item_params(self, extra: Condition | None = None) -> dict[str, Any]:
        """The ``UpdateItem`` request of the item alone, its condition joined with ``extra``."""
        return self.request().params(extra)

    def steps(self) -> Step[E]:
        """Update, translating failed conditions into typed errors."""
        touched = touched_constraints(self) if self.plan.unique else []
        try:
            if touched:
                stored = yield from guarded_steps(self.guarded(touched))
            else:
                response = yield Call(self.action, self.params(), subject=self.subject)
                stored = response["Attributes"]
        except ServiceError as exc:
            if exc.code != "ConditionalCheckFailedException":
                raise
            if touched:
                self._check_known(exc, touched)
            raise self.condition_error(exc) from None
        if stored is None:
            raise NotFoundError(
                f"{self.plan.label}: the item {self.key_values} was deleted right after the update"
            )
        return self.plan.from_item(stored)  # type: ignore[return-value]

    def _check_known(self, exc: ServiceError, touched: Sequence[UniqueConstraint]) -> None:
        """Refuse the stored values of unique fields that are not the ones `known` gave."""
        known = update_old_known(self, touched)
        mismatch = known_mismatch(self.plan, known or {}, exc.response.get("Item"))
        if known is not None and mismatch is not None:
            raise mismatch from None

    def condition_error(self, exc: ServiceError) -> ConditionFailedError:
        """The typed error for this update's failed condition (``exc`` may carry the item)."""
        label = self.plan.label
        stored = exc.response.get("Item")
        if not stored and not self.upsert:
            return NotFoundError(f"{label}: no item with key {self.key_values}")
        assumed = self._assumed_none()
        held = {
            name: value
            for name, value in (stored_values(self.plan, stored, assumed) if stored else {}).items()
            if name in assumed and value is not None
        }
        if held:
            return ConditionFailedError(
                f"{label}: this upsert does not give {sorted(held)}, which feed index keys it "
                f"rewrites; it took {', '.join(f'{n}=None' for n in held)} (the default an item "
                f"it creates holds), but the stored item holds "
                f"{', '.join(f'{n}={v!r}' for n, v in held.items())}; give the stored value "
                f"(e.g. {self._example('known', list(held))}) or set a new one",
                item=stored,
            )
        if self._expected_version is not None:
            return condition_failed(
                self.plan,
                exc,
                VersionConflictError,
                version_conflict_message(self.plan, exc, self._expected_version),
            )
        return condition_failed(
            self.plan, exc, ConditionFailedError, failed_condition(label, "update", self._condition)
        )


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
    return write_entries(op.guarded(touched), old)
