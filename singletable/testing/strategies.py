"""Hypothesis strategies for applications' entities (the ``testing`` extra).

* `instances` draws valid instances of any entity class: key fields within what their
  key codecs accept (formats, widths, datetime precisions), attribute fields within their
  pydantic constraints (lengths, ranges, patterns) and DynamoDB's number range, items
  within the item size limit, keys never empty.
* `unique_instances` draws lists whose primary keys and unique constraints never clash.
* `items` draws a mixed partition: instances of a table's entities that share one
  partition key.
* The value strategies below them (`key_text`, `key_ints`, `utc_datetimes`, ...) draw
  the edge cases of key encoding: delimiters, escape characters, boundaries.

Usable with ``@given`` in an application's own tests::

    @given(unique_instances(Order, customer="c1", max_size=5))
    def test_recent_orders(orders: list[Order]) -> None: ...
"""

from __future__ import annotations

import datetime as dt
import enum
import functools
import operator
import types
import typing
import uuid
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any, Literal, TypeVar

import annotated_types
import pydantic
import pydantic_core
import typing_extensions

try:
    from hypothesis import strategies as hs
except ImportError:  # pragma: no cover - depends on the installation
    raise ImportError(
        "singletable.testing.strategies needs hypothesis: pip install 'singletable[testing]'"
    ) from None

from singletable.attributes.size import MAX_ITEM_SIZE, item_size
from singletable.entity import Entity
from singletable.errors import SingleTableError
from singletable.keys.codec_base import KeyCodec
from singletable.keys.templates import FieldSegment
from singletable.model.plan import EntityPlan, entity_plans
from singletable.model.table import Table

__all__ = [
    "aware_datetimes",
    "fixed_ints",
    "instances",
    "items",
    "key_dates",
    "key_decimals",
    "key_floats",
    "key_ints",
    "key_text",
    "naive_datetimes",
    "plain_key_text",
    "timezones",
    "unique_instances",
    "utc_datetimes",
    "values_of",
]

E = TypeVar("E", bound=Entity)

Precision = Literal["s", "ms", "us"]

UTC = dt.timezone.utc

#: Characters that matter to key escaping: the default delimiter and escape char, the
#: neighbours of both, space, NUL, the characters right above the escape char, digits,
#: the range bound '$' (chr(ord('#') + 1)), and characters above ASCII.
SPECIAL_CHARS = "#%$\"&'! \x00\x01\x1f/-.:09AZaz~\x7f\x80\xe9\u20ac\uffff\U0001f600"


def key_text(*, max_size: int = 20) -> hs.SearchStrategy[str]:
    """Arbitrary text for a key segment: delimiter, escape char, controls, non-ASCII.

    Surrogates are excluded (they cannot be encoded as UTF-8, so cannot be stored).
    """
    return hs.text(
        hs.one_of(hs.sampled_from(SPECIAL_CHARS), hs.characters(codec="utf-8")),
        max_size=max_size,
    )


def plain_key_text(*, max_size: int = 20) -> hs.SearchStrategy[str]:
    """Text with no character at or below ``'%'``: escaping leaves it unchanged."""
    return hs.text(
        hs.characters(codec="utf-8", min_codepoint=ord("%") + 1),
        max_size=max_size,
    )


#: Boundary ints of the variable-width int codec (at most 99 digits).
INT_BOUNDARIES = [
    0,
    1,
    -1,
    9,
    10,
    -9,
    -10,
    99,
    100,
    -99,
    -100,
    10**98,
    10**98 - 1,
    -(10**98),
    -(10**98) + 1,
    10**99 - 1,
    -(10**99) + 1,
]


def key_ints() -> hs.SearchStrategy[int]:
    """Ints the variable-width int codec accepts: small, boundary and up to 99 digits."""
    return hs.one_of(
        hs.integers(min_value=-1000, max_value=1000),
        hs.integers(),
        hs.integers(min_value=-(10**99) + 1, max_value=10**99 - 1),
        hs.sampled_from(INT_BOUNDARIES),
    )


def fixed_ints(width: int) -> hs.SearchStrategy[int]:
    """Ints that fit ``KeyFormat(width=width)``, with both boundaries."""
    top = 10**width - 1
    return hs.one_of(hs.integers(min_value=0, max_value=top), hs.sampled_from([0, 1, top]))


def key_decimals() -> hs.SearchStrategy[Decimal]:
    """Finite decimals whose exponent fits the decimal codec, incl. zeros and trailing zeros."""
    coefficient = hs.one_of(
        hs.integers(min_value=-1000, max_value=1000),
        hs.integers(min_value=-(10**40), max_value=10**40),
    )
    exponent = hs.one_of(hs.integers(min_value=-5, max_value=5), hs.integers(-450, 450))
    built = hs.builds(lambda c, e: Decimal(f"{c}E{e}"), coefficient, exponent)  # exact
    zeros = hs.sampled_from([Decimal("0"), Decimal("-0"), Decimal("0E+7"), Decimal("-0.000")])
    edges = hs.sampled_from(
        [Decimal("1E+498"), Decimal("-1E+498"), Decimal("1E-499"), Decimal("-1E-499")]
    )
    return hs.one_of(built, zeros, edges)


def key_floats() -> hs.SearchStrategy[float]:
    """Finite floats, both zeros, subnormals and extremes."""
    return hs.one_of(
        hs.floats(allow_nan=False, allow_infinity=False),
        hs.sampled_from([0.0, -0.0, 5e-324, -5e-324, 1.7976931348623157e308, 0.1, -0.1]),
    )


def timezones() -> hs.SearchStrategy[dt.tzinfo]:
    """Fixed-offset timezones in -23:59..+23:59, some with seconds, and UTC.

    UTC comes as ``timezone.utc``, as a named zero offset (not that object) and as
    pydantic's own ``TzInfo``, which pydantic gives a datetime it parses from text.
    """
    minutes = hs.integers(min_value=-(24 * 60 - 1), max_value=24 * 60 - 1)
    seconds = hs.integers(-86399, 86399)
    return hs.one_of(
        hs.just(UTC),
        hs.just(dt.timezone(dt.timedelta(0), "GMT")),
        hs.builds(lambda m: dt.timezone(dt.timedelta(minutes=m)), minutes),
        hs.builds(lambda s: dt.timezone(dt.timedelta(seconds=s)), seconds),
        hs.builds(pydantic_core.TzInfo, hs.just(0) | seconds),
    )


_DIVISOR = {"s": 1_000_000, "ms": 1000, "us": 1}


def utc_datetimes(precision: Precision = "us") -> hs.SearchStrategy[dt.datetime]:
    """Aware UTC datetimes (years 1..9999) with no finer fraction than ``precision``."""
    div = _DIVISOR[precision]
    return hs.builds(
        lambda d: d.replace(microsecond=d.microsecond - d.microsecond % div, tzinfo=UTC),
        hs.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31, 23, 59)),
    )


def aware_datetimes(precision: Precision = "us") -> hs.SearchStrategy[dt.datetime]:
    """Aware datetimes in random fixed-offset timezones whose UTC instant is in range.

    The UTC instant has no finer fraction than ``precision`` (so the key codec of that
    precision accepts every one of them).
    """

    def shift(instant: dt.datetime, tz: dt.tzinfo) -> dt.datetime:
        try:
            return instant.astimezone(tz)
        except OverflowError:  # local time falls outside years 1..9999
            return instant

    return hs.builds(shift, utc_datetimes(precision), timezones())


def naive_datetimes() -> hs.SearchStrategy[dt.datetime]:
    """Naive datetimes (no tzinfo)."""
    return hs.datetimes()


def key_dates() -> hs.SearchStrategy[dt.date]:
    """Dates in years 1..9999."""
    return hs.dates()


# -- the values of one field -----------------------------------------------------------

#: DynamoDB numbers: 38 significant digits, magnitudes 1E-130 .. 9.99E+125.
_DYNAMO_INTS = hs.integers(min_value=-(10**38) + 1, max_value=10**38 - 1)
_DYNAMO_DECIMALS = hs.builds(
    lambda c, e: Decimal(f"{c}E{e}"),
    hs.integers(min_value=-(10**20), max_value=10**20),
    hs.integers(min_value=-20, max_value=20),
)
_DYNAMO_FLOATS = hs.floats(-1e100, 1e100, allow_nan=False).filter(
    lambda x: x == 0 or abs(x) > 1e-100
)
_TEXT_MAX = 20


def _text(metadata: Sequence[Any]) -> hs.SearchStrategy[str]:
    for item in metadata:
        pattern = getattr(item, "pattern", None)
        if isinstance(pattern, str):
            return hs.from_regex(pattern, fullmatch=True).filter(
                lambda s: not any("\ud800" <= c <= "\udfff" for c in s)
            )
    low = max([m.min_length for m in metadata if isinstance(m, annotated_types.MinLen)] or [0])
    highs = [m.max_length for m in metadata if isinstance(m, annotated_types.MaxLen)]
    high = min(highs) if highs else None
    # Surrogates cannot be encoded as UTF-8, so DynamoDB cannot store them.
    chars = hs.one_of(hs.sampled_from(SPECIAL_CHARS), hs.characters(codec="utf-8"))
    top = high if high is not None else max(low, _TEXT_MAX)
    return hs.text(chars, min_size=low, max_size=min(top, max(low, _TEXT_MAX)))


def _multiple(x: Any, b: Any) -> bool:
    return bool(x % b == 0)


_COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "ge": operator.ge,
    "gt": operator.gt,
    "le": operator.le,
    "lt": operator.lt,
    "multiple_of": _multiple,
}


def _holds(test: Callable[[Any, Any], Any], bound: Any, value: Any) -> bool:
    return bool(test(value, bound))


def _bounded(base: hs.SearchStrategy[Any], metadata: Sequence[Any]) -> hs.SearchStrategy[Any]:
    """``base`` kept within the ``Ge``/``Gt``/``Le``/``Lt``/``MultipleOf`` metadata."""
    checks = [
        functools.partial(_holds, test, getattr(item, name))
        for item in metadata
        for name, test in _COMPARISONS.items()
        if getattr(item, name, None) is not None
    ]
    if not checks:
        return base
    return base.filter(lambda x: all(check(x) for check in checks))


def _int_values(metadata: Sequence[Any]) -> hs.SearchStrategy[int]:
    low = high = None
    for item in metadata:
        if isinstance(item, annotated_types.Ge):
            low = int(item.ge)  # type: ignore[call-overload]
        elif isinstance(item, annotated_types.Gt):
            low = int(item.gt) + 1  # type: ignore[call-overload]
        elif isinstance(item, annotated_types.Le):
            high = int(item.le)  # type: ignore[call-overload]
        elif isinstance(item, annotated_types.Lt):
            high = int(item.lt) - 1  # type: ignore[call-overload]
    if low is None and high is None:
        return hs.one_of(hs.integers(-1000, 1000), _DYNAMO_INTS)
    return _bounded(
        hs.integers(
            min_value=max(low, -(10**38) + 1) if low is not None else -(10**38) + 1,
            max_value=min(high, 10**38 - 1) if high is not None else 10**38 - 1,
        ),
        metadata,
    )


def _strip(annotation: Any) -> tuple[Any, list[Any]]:
    metadata: list[Any] = []
    while typing_extensions.get_origin(annotation) in (
        typing.Annotated,
        typing_extensions.Annotated,
    ):
        metadata.extend(annotation.__metadata__)
        annotation = annotation.__origin__
    while hasattr(annotation, "__supertype__"):  # typing.NewType
        annotation = annotation.__supertype__
    return annotation, metadata


_SCALARS: dict[Any, hs.SearchStrategy[Any]] = {
    bool: hs.booleans(),
    float: _DYNAMO_FLOATS,
    Decimal: _DYNAMO_DECIMALS,
    bytes: hs.binary(max_size=16),
    dt.datetime: aware_datetimes(),
    dt.date: key_dates(),
    dt.time: hs.times(),
    uuid.UUID: hs.uuids(),
    type(None): hs.none(),
}
_JSON_LEAVES = hs.none() | hs.booleans() | hs.integers(-1000, 1000) | hs.text(max_size=8)
_ANY = hs.recursive(
    _JSON_LEAVES,
    lambda inner: (
        hs.lists(inner, max_size=3) | hs.dictionaries(hs.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


def values_of(annotation: Any, metadata: Sequence[Any] = ()) -> hs.SearchStrategy[Any]:
    """Values of a field's type that DynamoDB can store (attribute fields).

    Honours pydantic's constraints given as ``Annotated`` metadata (``Field(max_length=,
    ge=, pattern=...)``) and DynamoDB's number range; falls back to hypothesis's
    ``from_type`` for other types.
    """
    annotation, more = _strip(annotation)
    metadata = [*metadata, *more]
    origin = typing_extensions.get_origin(annotation)
    args = typing_extensions.get_args(annotation)
    if origin is typing.Union or origin is types.UnionType:
        return hs.one_of(*(values_of(arg, metadata) for arg in args))
    if origin in (Literal, typing_extensions.Literal):
        return hs.sampled_from(args)
    if annotation is Any:
        return _ANY
    if annotation is str:
        return _text(metadata)
    if annotation is int:
        return _int_values(metadata)
    if annotation in _SCALARS:
        return _bounded(_SCALARS[annotation], metadata)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return hs.sampled_from(annotation)
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return _models(annotation)
    if origin in (list, Sequence) or annotation is list:
        return hs.lists(values_of(args[0] if args else Any), max_size=3)
    if origin in (set, frozenset):
        kind = hs.sets if origin is set else hs.frozensets
        return kind(values_of(args[0]), max_size=3)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return hs.lists(values_of(args[0]), max_size=3).map(tuple)
        return hs.tuples(*(values_of(arg) for arg in args))
    if origin in (dict, Mapping) or annotation is dict:
        key, value = args or (str, Any)
        return hs.dictionaries(values_of(key).filter(bool), values_of(value), max_size=3)
    return hs.from_type(annotation)


def _key_values(
    codec: KeyCodec[Any], annotation: Any, metadata: Sequence[Any]
) -> hs.SearchStrategy[Any]:
    """Values a key field's codec accepts, that are also storable attributes."""
    params = codec.params()
    kind = params["kind"]
    if kind == "fixed_int":
        return fixed_ints(int(params["width"]))
    if kind == "datetime":
        return aware_datetimes(params.get("precision", "us"))
    base, _ = _strip(annotation)
    if kind == "int":
        return _int_values(metadata)
    return values_of(base, metadata)


def _key_codecs(plan: EntityPlan) -> dict[str, KeyCodec[Any]]:
    codecs: dict[str, KeyCodec[Any]] = {}
    for key_plan in (plan.primary, *plan.indexes.values()):
        for template in key_plan.templates():
            for segment in template.segments:
                if isinstance(segment, FieldSegment):
                    codecs.setdefault(segment.name, segment.codec)
    for constraint in plan.unique:
        for name, codec in constraint.codecs().items():
            codecs.setdefault(name, codec)
    return codecs


def _field_strategies(
    model: type[pydantic.BaseModel], codecs: Mapping[str, KeyCodec[Any]]
) -> tuple[dict[str, hs.SearchStrategy[Any]], dict[str, hs.SearchStrategy[Any]]]:
    required: dict[str, hs.SearchStrategy[Any]] = {}
    optional: dict[str, hs.SearchStrategy[Any]] = {}
    for name, info in model.model_fields.items():
        if name in codecs:
            values = _key_values(codecs[name], info.annotation, info.metadata)
        else:
            values = values_of(info.annotation, info.metadata)
        (required if info.is_required() or name in codecs else optional)[name] = values
    return required, optional


_MODELS: dict[type[pydantic.BaseModel], hs.SearchStrategy[Any]] = {}


def _models(model: type[pydantic.BaseModel]) -> hs.SearchStrategy[Any]:
    # Deferred and cached: a recursive model (a tree) refers to its own strategy.
    if model not in _MODELS:

        def build() -> hs.SearchStrategy[Any]:
            required, optional = _field_strategies(model, {})
            return (
                hs.fixed_dictionaries(required, optional=optional)
                .map(lambda values: _validated(model, values))
                .filter(lambda built: built is not None)
            )

        _MODELS[model] = hs.deferred(build)
    return _MODELS[model]


def _validated(model: type[pydantic.BaseModel], values: Mapping[str, Any]) -> Any:
    try:
        return model.model_validate(values, by_name=True)
    except (pydantic.ValidationError, SingleTableError, ValueError, TypeError):
        return None


def _storable(entity: Any) -> bool:
    """Whether DynamoDB would take ``entity``'s item: it encodes, keys not empty, size fits."""
    try:
        item = entity.to_item()
    except (SingleTableError, ValueError, TypeError, OverflowError):
        return False
    table = type(entity).plan().table
    for attribute in (table.pk, table.sk):
        if attribute is not None and item.get(attribute) in ({"S": ""}, {"B": b""}):
            return False
    return item_size(item) <= MAX_ITEM_SIZE


# -- entities ------------------------------------------------------------------------------


def instances(entity: type[E], **fixed: Any) -> hs.SearchStrategy[E]:
    """Valid instances of ``entity``: ``to_item`` encodes every one, DynamoDB stores it.

    Args:
        entity: Any entity class.
        fixed: Field values (or strategies) to use instead of drawn ones, e.g. the
            partition key field of the access pattern under test.
    """
    plan = entity.plan()
    required, optional = _field_strategies(entity, _key_codecs(plan))
    for name, value in fixed.items():
        if name not in entity.model_fields:
            raise SingleTableError(f"instances({entity.__name__}): no field {name!r}")
        optional.pop(name, None)
        required[name] = value if isinstance(value, hs.SearchStrategy) else hs.just(value)
    return (
        hs.fixed_dictionaries(required, optional=optional)
        .map(lambda values: _validated(entity, values))
        .filter(lambda built: built is not None and _storable(built))
    )


def _identities(entity: type[Entity]) -> tuple[Callable[[Any], Any], ...]:
    """What must differ between two stored instances: the primary key, each unique value."""

    def key(obj: Any) -> Any:
        return tuple(sorted((k, repr(v)) for k, v in obj.key().items()))

    def guard(constraint: Any) -> Callable[[Any], Any]:
        def identity(obj: Any) -> Any:
            values = constraint.values(obj.__dict__)
            # Unset values are not guarded: any number of items may leave them unset.
            return object() if values is None else repr(constraint.guard_key(values))

        return identity

    return (key, *(guard(c) for c in entity.plan().unique))


def unique_instances(
    entity: type[E], *, min_size: int = 0, max_size: int = 5, **fixed: Any
) -> hs.SearchStrategy[list[E]]:
    """Lists of instances that can all be stored at once.

    Primary keys differ, and so do the values of every unique constraint (as their guard
    keys compare: two values that encode alike clash).
    """
    return hs.lists(
        instances(entity, **fixed),
        min_size=min_size,
        max_size=max_size,
        unique_by=_identities(entity),
    )


@hs.composite
def items(draw: hs.DrawFn, table: Table, *, max_size: int = 8) -> list[Entity]:
    """A mixed partition of ``table``: instances of its entities under one partition key.

    One entity's instance sets the partition key; every entity of the table whose
    partition key template then formats the same text joins it (none: a partition of one
    entity). Primary keys and unique values never clash, so all can be stored together.
    """
    plans = entity_plans(table)
    if not plans:
        raise SingleTableError(f"items({table.name!r}): no entity is stored in this table")
    anchor = draw(hs.sampled_from(plans))
    first = draw(instances(_entity_class(anchor)))
    partition = first.key()[table.pk]
    members: list[tuple[EntityPlan, dict[str, Any]]] = []
    for plan in plans:
        pk_fields = plan.primary.pk.fields
        if not all(name in first.__dict__ for name in pk_fields):
            continue
        shared = {name: first.__dict__[name] for name in pk_fields}
        try:
            same = plan.primary.pk.attribute_value(plan.primary.pk.format(shared)) == partition
        except SingleTableError:
            same = False
        if same:
            members.append((plan, shared))
    result: list[Entity] = [first]
    seen: set[Any] = {repr(sorted(first.key().items()))}
    for plan, shared in members:
        size = max(1, max_size // len(members))
        drawn = draw(unique_instances(_entity_class(plan), max_size=size, **shared))
        for obj in drawn:
            identity = repr(sorted(obj.key().items()))
            if identity not in seen and _unique_free(obj, result):
                seen.add(identity)
                result.append(obj)
    return result


def _entity_class(plan: EntityPlan) -> type[Entity]:
    model = plan.model
    if not issubclass(model, Entity):  # pragma: no cover - plans are compiled from entities
        raise SingleTableError(f"{plan.label} is not an Entity class")
    return model


def _unique_free(obj: Entity, taken: Sequence[Entity]) -> bool:
    same_kind = [other for other in taken if type(other) is type(obj)]
    for identity in _identities(type(obj))[1:]:
        mine = identity(obj)
        if any(identity(other) == mine for other in same_kind):
            return False
    return True
