"""Shared hypothesis strategies: key values, templates, and whole generated entity classes.

Import as ``from tests.strategies import ...``. `entity_specs` draws the shape of an entity
class (table delimiter/escape, pk/sk template shapes over every key field kind, attribute
fields of every attribute kind, optional and defaulted fields, GSIs incl. sparse ones);
`build_entity` turns a spec into a real `Entity` subclass on a fresh table, and
`entity_instances` draws valid instances of it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import itertools
import types
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any, Literal

import pydantic
from hypothesis import assume
from hypothesis import strategies as hs

import singletable as st
from singletable.keys.codecs import KeyFormat
from singletable.testing.strategies import (
    aware_datetimes,
    fixed_ints,
    key_dates,
    key_decimals,
    key_floats,
    key_ints,
    key_text,
    naive_datetimes,
    timezones,
    utc_datetimes,
)

# --------------------------------------------------------------------------------------
# Composite key templates (tests/test_templates.py, tests/test_entity.py)
#
# A `FieldKind` is a key field type with a strategy for its values and an *order image*:
# a function whose results compare the way DynamoDB must order the field's keys (str by
# UTF-8 bytes, enums by value, everything else by its own order). A composite template
# of random kinds must then order its keys like the tuples of images.


class Shade(str, enum.Enum):
    """A str enum whose values hold the delimiter, the escape char and chars below them."""

    EMPTY = ""
    SPACE = " "
    HASH = "#"
    PERCENT = "%"
    A = "a"
    A_HASH = "a#"
    E_ACUTE = "\xe9"


class Level(enum.IntEnum):
    """An int enum with negative, zero and big values."""

    LOW = -5
    MID = 0
    HIGH = 7
    BIG = 10**20


def _utf8(value: str) -> bytes:
    return value.encode("utf-8")


def _same(value: Any) -> Any:
    return value


def _enum_value(member: enum.Enum) -> Any:
    value = member.value
    return _utf8(value) if isinstance(value, str) else value


@dataclass(frozen=True)
class FieldKind:
    """A key field type: its annotation, a strategy for its values and its order image."""

    name: str
    annotation: Any
    values: hs.SearchStrategy[Any]
    image: Callable[[Any], Any] = _same


def _near_text() -> hs.SearchStrategy[str]:
    # A small alphabet of the characters that matter, so that prefixes, equal values and
    # neighbours ('a' / 'a#' / 'a%' / 'a\x00') come up often.
    return hs.text(hs.sampled_from("#%$! \x00a\xe9"), max_size=4)


FIELD_KINDS: tuple[FieldKind, ...] = (
    FieldKind("str", str, hs.one_of(_near_text(), key_text(max_size=6)), _utf8),
    FieldKind("int", int, key_ints()),
    FieldKind("decimal", Decimal, key_decimals()),
    FieldKind("datetime", dt.datetime, aware_datetimes()),
    FieldKind("fixed", Annotated[int, KeyFormat(width=6)], fixed_ints(6)),
    FieldKind("shade", Shade, hs.sampled_from(Shade), _enum_value),
    FieldKind("level", Level, hs.sampled_from(Level), _enum_value),
    FieldKind("date", dt.date, key_dates()),
    FieldKind("uuid", uuid.UUID, hs.uuids()),
    FieldKind("bool", bool, hs.booleans()),
    FieldKind("float", float, key_floats()),
    FieldKind("literal", Literal["b", "a#", "", "a"], hs.sampled_from(["b", "a#", "", "a"]), _utf8),
)

#: (delimiter, escape) pairs a Table accepts; '-'/'.' and '#'/'/' escape the output of
#: the int, decimal and datetime codecs too, '#'/'%' (the default) escapes only text.
ESCAPERS: tuple[tuple[str, str], ...] = (("#", "%"), ("!", '"'), ("-", "."), ("$", "%"), ("#", "/"))

#: Literal segments; a template uses those whose characters are all above its escape char.
LITERALS: tuple[str, ...] = ("EVT", "A", "\xe9~", "Z0", "x.y", "a-b")


@dataclass(frozen=True)
class TemplateShape:
    """A random composite template: its source text, escaping and field kinds, in order."""

    source: str
    delimiter: str
    escape: str
    fields: tuple[tuple[str, FieldKind], ...]

    def images(self, values: Mapping[str, Any]) -> tuple[Any, ...]:
        """The tuple of order images of ``values``, in template order."""
        return tuple(kind.image(values[name]) for name, kind in self.fields)


# Strategies are built once here: a strategy built inside a test is validated again
# on every example, which costs more than the property itself.
_KINDS = hs.lists(hs.sampled_from(FIELD_KINDS), min_size=1, max_size=4)
_ESCAPER = hs.sampled_from(ESCAPERS)
_LITERALS_ABOVE = {
    escape: hs.sampled_from([lit for lit in LITERALS if min(lit) > escape])
    for escape in {e for _, e in ESCAPERS}
}
_KEEP = hs.integers(0, 2)


@hs.composite
def template_shapes(draw: hs.DrawFn, *, max_fields: int = 4) -> TemplateShape:
    """Composite templates of 1..max_fields mixed-type fields with optional literals."""
    delimiter, escape = draw(_ESCAPER)
    literal = _LITERALS_ABOVE[escape]
    kinds = draw(_KINDS)[:max_fields]
    segments: list[str] = []
    fields: list[tuple[str, FieldKind]] = []
    for i, kind in enumerate(kinds):
        for _ in range(draw(hs.integers(0, 1 if i else 2))):
            segments.append(draw(literal))
        name = f"f{i}"
        segments.append("{" + name + "}")
        fields.append((name, kind))
    if draw(hs.booleans()):
        segments.append(draw(literal))
    return TemplateShape(delimiter.join(segments), delimiter, escape, tuple(fields))


def _key_not_empty(shape: TemplateShape, values: Mapping[str, Any]) -> bool:
    # A lone '{f0}' template with an empty text value makes an empty key, which DynamoDB
    # refuses (tested on its own); every other template and value makes a non-empty key.
    if shape.source != "{f0}":
        return True
    name, kind = shape.fields[0]
    return bool(kind.image(values[name]) != b"")


@hs.composite
def shape_values(draw: hs.DrawFn, shape: TemplateShape) -> dict[str, Any]:
    """Values for every field of ``shape`` (never an empty key)."""
    values = {name: draw(kind.values) for name, kind in shape.fields}
    assume(_key_not_empty(shape, values))
    return values


@hs.composite
def near_values(draw: hs.DrawFn, shape: TemplateShape, base: Mapping[str, Any]) -> dict[str, Any]:
    """Values for ``shape`` that often share a leading run of fields with ``base``."""
    values = {name: base[name] if draw(_KEEP) else draw(kind.values) for name, kind in shape.fields}
    assume(_key_not_empty(shape, values))
    return values


# -- generated entity classes ---------------------------------------------------------


class Inner(pydantic.BaseModel):
    """A nested model for attribute fields."""

    name: str
    score: Decimal = Decimal("0")
    labels: set[str] = pydantic.Field(default_factory=set)


class Outer(pydantic.BaseModel):
    """A nested model holding nested models, lists of them and optional fields."""

    inner: Inner | None = None
    lines: list[Inner] = pydantic.Field(default_factory=list)
    note: str | None = None
    when: dt.date | None = None


class Tree(pydantic.BaseModel):
    """A recursive nested model: generated encoders expand one level, then call the codec."""

    label: str
    children: list[Tree] = pydantic.Field(default_factory=list)


class Holder(pydantic.BaseModel):
    """A nested model holding ``Any``: its depth is the values', not its type's."""

    meta: dict[str, Any] = pydantic.Field(default_factory=dict)
    rows: list[Any] = pydantic.Field(default_factory=list)


def _texts() -> hs.SearchStrategy[str]:
    return hs.text(hs.characters(codec="utf-8"), max_size=8)


_NUMBERS_38 = hs.decimals(
    min_value=Decimal("-1e20"), max_value=Decimal("1e20"), allow_nan=False, places=6
)


_WIDE_INTS = hs.one_of(hs.integers(-1000, 1000), hs.integers(-(10**40), 10**40))
_INNERS = hs.builds(
    Inner, name=_texts(), score=_NUMBERS_38, labels=hs.sets(hs.text(max_size=3), max_size=2)
)
#: Map keys: mostly non-empty, sometimes empty (refused by both paths alike).
_MAP_KEYS = hs.text(max_size=4)
_STR_SETS = hs.sets(hs.text(max_size=3), max_size=2)
_STR_MAPS = hs.dictionaries(_MAP_KEYS, _texts(), max_size=3)
_INT_LISTS = hs.lists(_WIDE_INTS, max_size=3)
#: JSON-like values that read back equal (no floats: they read back as Decimal).
_JSONISH = hs.recursive(
    hs.none() | hs.booleans() | _WIDE_INTS | _texts() | hs.binary(max_size=3) | _STR_SETS,
    lambda inner: hs.lists(inner, max_size=3) | hs.dictionaries(_MAP_KEYS, inner, max_size=3),
    max_leaves=6,
)
_OUTERS = hs.builds(
    Outer,
    inner=hs.none() | _INNERS,
    lines=hs.lists(_INNERS, max_size=2),
    note=hs.none() | _texts(),
    when=hs.none() | hs.dates(),
)
_TREES = hs.recursive(
    hs.builds(Tree, label=_texts()),
    lambda inner: hs.builds(Tree, label=_texts(), children=hs.lists(inner, max_size=2)),
    max_leaves=5,
)


def nesting(value: Any) -> int:
    """Levels of lists and maps (a model is a map) ``value`` holds: DynamoDB stores 31 at most."""
    if isinstance(value, pydantic.BaseModel):
        children: Any = [getattr(value, name) for name in type(value).model_fields]
    elif isinstance(value, dict):
        children = value.values()
    elif isinstance(value, (list, tuple)):
        children = value
    else:
        return 0  # a scalar or a set: a value, not a level
    return 1 + max((nesting(child) for child in children), default=0)


@hs.composite
def deep_values(draw: hs.DrawFn, low: int = 27, high: int = 34) -> Any:
    """A chain of maps and lists around a leaf, about DynamoDB's 31 levels deep.

    The leaf may be a container itself (an empty map or list counts a level), a set (it
    does not) or a scalar; some levels hold a scalar or a small container beside the chain.
    """
    value: Any = draw(
        hs.sampled_from([{}, [], "leaf", None, 7, frozenset({"s"})]).map(
            lambda leaf: set(leaf) if isinstance(leaf, frozenset) else leaf
        )
    )
    for _ in range(draw(hs.integers(low, high))):
        beside = draw(hs.sampled_from([None, "x", [1], {"b": True}]))
        if draw(hs.booleans()):
            value = {"k": value} if beside is None else {"a": beside, "k": value}
        else:
            value = [value] if beside is None else [beside, value]
    return value


def _deep_trees() -> hs.SearchStrategy[Tree]:
    """Tree chains about 31 levels deep (a tree is a map, its children a list: two each)."""

    def chain(levels: int) -> Tree:
        tree = Tree(label="leaf")
        for _ in range(levels - 1):
            tree = Tree(label="t", children=[tree])
        return tree

    return hs.integers(14, 17).map(chain)


@dataclass(frozen=True)
class AttributeKind:
    """An attribute (non-key) field type and a strategy for its values."""

    name: str
    annotation: Any
    values: hs.SearchStrategy[Any]


ATTRIBUTE_KINDS: tuple[AttributeKind, ...] = (
    AttributeKind("str", str, _texts()),
    AttributeKind("int", int, hs.integers(-(10**30), 10**30)),
    AttributeKind("decimal", Decimal, _NUMBERS_38),
    AttributeKind(
        "float",
        float,
        hs.floats(-1e100, 1e100, allow_nan=False).filter(lambda x: x == 0 or abs(x) > 1e-100),
    ),
    AttributeKind("bool", bool, hs.booleans()),
    AttributeKind("bytes", bytes, hs.binary(max_size=8)),
    AttributeKind("datetime", dt.datetime, aware_datetimes()),
    AttributeKind("date", dt.date, key_dates()),
    AttributeKind("uuid", uuid.UUID, hs.uuids()),
    AttributeKind("shade", Shade, hs.sampled_from(Shade)),
    AttributeKind("level", Level, hs.sampled_from(Level)),
    AttributeKind("literal", Literal["x", "y#"], hs.sampled_from(["x", "y#"])),
    AttributeKind("list", list[str], hs.lists(_texts(), max_size=3)),
    AttributeKind("dict_str", dict[str, str], _STR_MAPS),
    AttributeKind(
        "dict",
        dict[str, int],
        hs.dictionaries(hs.text(min_size=1, max_size=4), hs.integers(-1000, 1000), max_size=3),
    ),
    AttributeKind("set", set[str], hs.sets(hs.text(max_size=4), max_size=3)),
    AttributeKind(
        "inner",
        Inner,
        hs.builds(
            Inner, name=_texts(), score=_NUMBERS_38, labels=hs.sets(hs.text(max_size=3), max_size=2)
        ),
    ),
    AttributeKind(
        "any",
        Any,
        hs.one_of(
            hs.none(), hs.integers(-100, 100), _texts(), hs.lists(hs.integers(0, 9), max_size=2)
        ),
    ),
    # Values off the fast paths too: out of DynamoDB's number range, naive or offset
    # datetimes, subclasses; both paths must refuse or convert them alike.
    AttributeKind("decimal_wide", Decimal, key_decimals()),
    AttributeKind("float_wide", float, key_floats()),
    AttributeKind("naive_datetime", dt.datetime, naive_datetimes()),
    AttributeKind("time", dt.time, hs.times(timezones=hs.none() | timezones())),
    AttributeKind("set_int", set[int], hs.sets(_WIDE_INTS, max_size=3)),
    AttributeKind("frozenset", frozenset[str], hs.frozensets(hs.text(max_size=4), max_size=3)),
    AttributeKind("set_bytes", set[bytes], hs.sets(hs.binary(max_size=4), max_size=3)),
    AttributeKind("list_inner", list[Inner], hs.lists(_INNERS, max_size=3)),
    AttributeKind("list_optional", list[int | None], hs.lists(hs.none() | _WIDE_INTS, max_size=3)),
    AttributeKind("list_shade", list[Shade], hs.lists(hs.sampled_from(Shade), max_size=3)),
    AttributeKind("list_dict", list[dict[str, str]], hs.lists(_STR_MAPS, max_size=2)),
    AttributeKind("dict_list", dict[str, list[int]], hs.dictionaries(_MAP_KEYS, _INT_LISTS)),
    AttributeKind("dict_inner", dict[str, Inner], hs.dictionaries(_MAP_KEYS, _INNERS, max_size=2)),
    AttributeKind("dict_any", dict[str, Any], hs.dictionaries(_MAP_KEYS, _JSONISH, max_size=3)),
    AttributeKind("tuple", tuple[int, str], hs.tuples(hs.integers(), _texts())),
    AttributeKind("outer", Outer, _OUTERS),
    AttributeKind("tree", Tree, _TREES),
    # Values about DynamoDB's nesting limit (31 levels in an attribute), on each side of
    # it: counted while converting (Any, dict[str, Any], list[Any]), or walked once built
    # (a recursive model, a model holding Any).
    AttributeKind("deep_any", Any, deep_values()),
    AttributeKind("deep_dict_any", dict[str, Any], deep_values().map(lambda v: {"d": v})),
    AttributeKind("deep_list_any", list[Any], deep_values().map(lambda v: [v])),
    AttributeKind("deep_tree", Tree, _deep_trees()),
    AttributeKind(
        "deep_holder",
        list[Holder],
        hs.builds(Holder, meta=deep_values(25, 31).map(lambda v: {"m": v})).map(lambda h: [h]),
    ),
)


@dataclass(frozen=True)
class AttributeSpec:
    """One attribute field: its kind and how it may be left out."""

    name: str
    kind: AttributeKind
    optional: bool  # ``X | None = default``
    #: The optional field's default: ``None``, or a value of the kind (then a ``None``
    #: written must be stored as NULL: left out, it would read back as this default).
    default: Any = None
    #: ``Field(alias=...)`` or ``Field(validation_alias=...)`` (stored items still name
    #: the attribute after the field), or neither.
    alias: Literal["alias", "validation_alias"] | None = None


@dataclass(frozen=True)
class EntitySpec:
    """The shape of a generated entity class."""

    delimiter: str
    escape: str
    pk: TemplateShape
    sk: TemplateShape
    attributes: tuple[AttributeSpec, ...]
    #: (pk template, sk template, sparse field or None) of GSI1, or None.
    gsi: tuple[str, str, str | None] | None
    #: Optimistic locking: an int field ``version`` named by ``version_field=``.
    versioned: bool = False

    def key_fields(self) -> tuple[tuple[str, FieldKind], ...]:
        """Every key field (pk first), with its kind."""
        return self.pk.fields + self.sk.fields


def _renamed(shape: TemplateShape, prefix: str) -> TemplateShape:
    source = shape.source
    fields = []
    for name, kind in shape.fields:
        source = source.replace("{" + name + "}", "{" + prefix + name + "}")
        fields.append((prefix + name, kind))
    return TemplateShape(source, shape.delimiter, shape.escape, tuple(fields))


_ATTRIBUTES = hs.lists(
    hs.tuples(hs.sampled_from(ATTRIBUTE_KINDS), hs.booleans()), min_size=0, max_size=5
)


def _not_an_empty_set(value: Any) -> bool:
    # An Optional set reads absence as None (DynamoDB stores no empty set), so an empty set
    # default would not read back: tested on its own.
    return not (isinstance(value, (set, frozenset)) and not value)


@hs.composite
def entity_specs(
    draw: hs.DrawFn, *, with_gsi: bool | None = None, versioned: bool = False
) -> EntitySpec:
    """Entity class shapes: template shapes x field kinds x indexes x delimiter/escape.

    ``versioned``: with a version field (optimistic locking).
    """
    sk = draw(template_shapes(max_fields=3))
    delimiter, escape = sk.delimiter, sk.escape
    pk_kind = draw(hs.sampled_from(FIELD_KINDS))
    literal = draw(_LITERALS_ABOVE[escape])
    pk = TemplateShape(literal + delimiter + "{f0}", delimiter, escape, (("f0", pk_kind),))
    pk, sk = _renamed(pk, "p_"), _renamed(sk, "s_")
    attributes = tuple(
        AttributeSpec(
            f"a{i}",
            kind,
            optional,
            default=draw((hs.none() | kind.values).filter(_not_an_empty_set)) if optional else None,
            alias=draw(hs.sampled_from([None, None, "alias", "validation_alias"])),
        )
        for i, (kind, optional) in enumerate(draw(_ATTRIBUTES))
    )
    gsi = None
    if with_gsi if with_gsi is not None else draw(hs.booleans()):
        # Second ordering: partition on the sk's first field, sort on the pk's field, and
        # sparse on an optional str attribute when there is one.
        optional_str = [a.name for a in attributes if a.optional and a.kind.name == "str"]
        sparse = draw(hs.sampled_from([None, *optional_str])) if optional_str else None
        gsi_pk = "G" + delimiter + "{" + sk.fields[0][0] + "}"
        gsi_sk = "{" + pk.fields[0][0] + "}" + (delimiter + "{" + sparse + "}" if sparse else "")
        gsi = (gsi_pk, gsi_sk, sparse)
    return EntitySpec(delimiter, escape, pk, sk, attributes, gsi, versioned)


_TABLES = itertools.count()


def build_entity(
    spec: EntitySpec,
    *,
    name: str = "Generated",
    table_name: str | None = None,
    validators: Mapping[str, Any] | None = None,
) -> type[st.Entity]:
    """A real `Entity` subclass for ``spec``, on a fresh `Table` object of its own.

    ``validators``: pydantic validators (``field_validator(...)(function)``) by name.
    """
    indexes = [st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")] if spec.gsi else []
    table = st.Table(
        table_name or f"generated{next(_TABLES)}",
        delimiter=spec.delimiter,
        escape=spec.escape,
        indexes=indexes,
    )
    fields: dict[str, Any] = {n: (k.annotation, ...) for n, k in spec.key_fields()}
    for attribute in spec.attributes:
        aliases: dict[str, Any] = (
            {attribute.alias: f"{attribute.name}-given"} if attribute.alias else {}
        )
        if attribute.optional:
            fields[attribute.name] = (
                attribute.kind.annotation | None,
                pydantic.Field(default=attribute.default, **aliases),
            )
        elif attribute.kind.name == "set":
            fields[attribute.name] = (
                attribute.kind.annotation,
                pydantic.Field(default_factory=set, **aliases),
            )
        else:
            fields[attribute.name] = (attribute.kind.annotation, pydantic.Field(**aliases))
    keywords: dict[str, Any] = {"table": table, "pk": spec.pk.source, "sk": spec.sk.source}
    if spec.versioned:
        fields["version"] = (int, 0)
        keywords["version_field"] = "version"
    if spec.gsi:
        keywords["indexes"] = {"GSI1": st.IndexKeys(pk=spec.gsi[0], sk=spec.gsi[1])}
    model: type[st.Entity] = pydantic.create_model(
        name,
        __base__=st.Entity,
        __cls_kwargs__=keywords,
        __validators__=dict(validators or {}),
        **fields,
    )
    return model


@hs.composite
def entity_instances(draw: hs.DrawFn, spec: EntitySpec, model: type[st.Entity]) -> st.Entity:
    """A valid instance of ``model`` (built from ``spec``) whose keys are not empty."""
    values = draw(shape_values(spec.pk))
    values.update(draw(shape_values(spec.sk)))
    for attribute in spec.attributes:
        if attribute.optional:
            choice = draw(hs.sampled_from(["default", "none", "value"]))
            if choice == "default":
                continue
            if choice == "none":
                values[attribute.name] = None
                continue
        value = draw(attribute.kind.values)
        if attribute.optional and isinstance(value, (set, frozenset)) and not value:
            # An Optional set stores an empty set and None alike (as absence) and reads
            # back None: tested on its own, not a round trip.
            value = None
        values[attribute.name] = value
    return model.model_validate(values, by_name=True)  # by field name, aliased or not


def entity_of_attributes(
    data: hs.DataObject, *attributes: AttributeSpec
) -> tuple[type[st.Entity], st.Entity]:
    """A generated entity class (keys drawn, no GSI) of exactly ``attributes``, and an instance."""
    spec = dataclasses.replace(data.draw(entity_specs(with_gsi=False)), attributes=attributes)
    model = build_entity(spec)
    return model, data.draw(entity_instances(spec, model))


# --------------------------------------------------------------------------------------
# Generated entity classes (tests of every write and read path over random models)
#
# An `SimpleEntitySpec` is a random entity declaration: its fields (of kinds whose values every
# backend stores as they are), its table key templates and an optional GSI. `build_simple_entity`
# turns it into a real `Entity` subclass on a given table, as a class statement would.

#: Field kinds whose values are also valid attributes on every backend (no 39-digit ints,
#: no decimal exponents beyond DynamoDB's range, no floats that lose digits).
ENTITY_FIELD_KINDS: tuple[FieldKind, ...] = (
    FieldKind("str", str, hs.one_of(_near_text(), key_text(max_size=6)), _utf8),
    FieldKind("int", int, hs.integers(min_value=-(10**12), max_value=10**12)),
    FieldKind("fixed", Annotated[int, KeyFormat(width=6)], fixed_ints(6)),
    FieldKind("datetime", dt.datetime, utc_datetimes()),
    FieldKind("date", dt.date, key_dates()),
    FieldKind("uuid", uuid.UUID, hs.uuids()),
    FieldKind("shade", Shade, hs.sampled_from(Shade), _enum_value),
)

_ENTITY_LITERALS = ("K", "EVT", "A", "B", "AB", "Z0")
_simple_entity_names = iter(range(10**9))


@dataclass(frozen=True)
class SimpleEntitySpec:
    """A random entity declaration (see `simple_entity_specs`)."""

    name: str
    fields: tuple[tuple[str, FieldKind], ...]
    pk: str
    sk: str
    #: (pk, sk) templates of index ``GSI1``, or ``None``.
    gsi: tuple[str, str] | None

    @property
    def kinds(self) -> dict[str, FieldKind]:
        """Field name -> kind."""
        return dict(self.fields)


def _simple_template(draw: hs.DrawFn, names: list[str], *, literal_first: bool) -> str:
    segments: list[str] = []
    if literal_first or not names or draw(hs.booleans()):
        segments.append(draw(hs.sampled_from(_ENTITY_LITERALS)))
    for name in names:
        segments.append("{" + name + "}")
        if draw(hs.integers(0, 3)) == 0:
            segments.append(draw(hs.sampled_from(_ENTITY_LITERALS)))
    if len(segments) == 1 and names:  # a lone text field could make an empty key
        segments.insert(0, draw(hs.sampled_from(_ENTITY_LITERALS)))
    return "#".join(segments)


@hs.composite
def simple_entity_specs(draw: hs.DrawFn, *, with_gsi: bool | None = None) -> SimpleEntitySpec:
    """Entities of 2..6 fields: 1 partition key field, 0..2 sort key fields, maybe a GSI.

    The GSI (when drawn) is keyed on fields outside the table key, plus maybe one of them.
    """
    kinds = draw(hs.lists(hs.sampled_from(ENTITY_FIELD_KINDS), min_size=2, max_size=6))
    names = [f"f{i}" for i in range(len(kinds))]
    fields = tuple(zip(names, kinds, strict=True))
    n_sk = draw(hs.integers(0, min(2, len(names) - 1)))
    pk_fields, sk_fields, rest = names[:1], names[1 : 1 + n_sk], names[1 + n_sk :]
    gsi = None
    if (with_gsi if with_gsi is not None else draw(hs.booleans())) and rest:
        gsi_pk = rest[:1]
        gsi_sk = rest[1:2] + draw(hs.sampled_from([[], pk_fields]))
        gsi = (
            _simple_template(draw, gsi_pk, literal_first=True),
            _simple_template(draw, gsi_sk, literal_first=False),
        )
    return SimpleEntitySpec(
        name=f"Gen{next(_simple_entity_names)}",
        fields=fields,
        pk=_simple_template(draw, pk_fields, literal_first=True),
        sk=_simple_template(draw, sk_fields, literal_first=False),
        gsi=gsi,
    )


def build_simple_entity(
    spec: SimpleEntitySpec, table: Any, *, extra: Mapping[str, Any] = {}, index_name: str = "GSI1"
) -> Any:
    """The `Entity` subclass ``spec`` declares on ``table`` (``extra``: more field types).

    The spec's GSI templates go to the table's index ``index_name``.
    """
    options: dict[str, Any] = {"table": table, "pk": spec.pk, "sk": spec.sk}
    if spec.gsi is not None:
        options["indexes"] = {index_name: st.IndexKeys(pk=spec.gsi[0], sk=spec.gsi[1])}
    annotations = {name: kind.annotation for name, kind in spec.fields} | dict(extra)

    def body(ns: dict[str, Any]) -> None:
        ns["__annotations__"] = annotations
        ns["__module__"] = __name__
        for name in extra:
            ns[name] = None

    return types.new_class(spec.name, (st.Entity,), options, body)


def simple_entity_values(spec: SimpleEntitySpec) -> hs.SearchStrategy[dict[str, Any]]:
    """Values for every field of ``spec`` (never an empty key: templates start literal)."""
    return hs.fixed_dictionaries({name: kind.values for name, kind in spec.fields})


def simple_entity_table(name: str) -> Any:
    """A table with the ``GSI1`` index (``GSI1PK``/``GSI1SK``) generated entities may use."""
    return st.Table(name, indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


# --------------------------------------------------------------------------------------
# Sibling templates (issue 16, defect 2): two entities in one partition whose sort key
# templates share a leading part and differ only after a field, e.g. "K#{n}#A" / "K#{n}#B".

#: Small value pools, so that equal values, prefixes and neighbours come up often.
SIBLING_KINDS: tuple[FieldKind, ...] = (
    FieldKind("int", int, hs.integers(-2, 3)),
    FieldKind("str", str, hs.sampled_from(["", "a", "a#", "a%", "ab", "b", "\xe9"]), _utf8),
    FieldKind("fixed", Annotated[int, KeyFormat(width=3)], hs.integers(0, 4)),
)

#: A's own tail, and B's: B's is shorter or ends on a literal other than A's, so an A key
#: and a B key are never equal (the two entities never overwrite each other's items).
_A_TAILS = (("A",), ("{m}", "A"), ("A", "{m}", "A"))
_B_TAILS = ((), ("B",), ("{m}", "B"), ("AB",), ("A", "B"), ("{m}",), ("A", "{m}", "B"))


@dataclass(frozen=True)
class SiblingPair:
    """Two entity specs on one partition template whose sort key templates are siblings."""

    a: SimpleEntitySpec
    b: SimpleEntitySpec


def _tail_ok(a_tail: tuple[str, ...], b_tail: tuple[str, ...]) -> bool:
    if len(a_tail) != len(b_tail):
        return True
    return any(x != y and "{" not in x + y for x, y in zip(a_tail, b_tail, strict=True))


@hs.composite
def sibling_pairs(draw: hs.DrawFn) -> SiblingPair:
    """Sibling entities ``A``/``B``: ``P#{p}`` partition, a shared sort key head, own tails."""
    a_tail = draw(hs.sampled_from(_A_TAILS))
    b_tail = draw(hs.sampled_from(_B_TAILS).filter(lambda t: _tail_ok(a_tail, t)))
    shared = draw(hs.lists(hs.sampled_from(SIBLING_KINDS), min_size=1, max_size=2))
    # (B's whole key could be one text field, possibly empty: give it a literal then.)
    head: list[str] = ["K"] if draw(hs.booleans()) or b_tail in ((), ("{m}",)) else []
    head_fields: list[tuple[str, FieldKind]] = []
    for i, kind in enumerate(shared):
        head.append("{" + f"n{i}" + "}")
        head_fields.append((f"n{i}", kind))
        if draw(hs.booleans()):
            head.append(draw(hs.sampled_from(["X", "K"])))
    specs = []
    for name, tail in (("A", a_tail), ("B", b_tail)):
        fields = [("p", SIBLING_KINDS[1]), *head_fields]
        if "{m}" in tail:
            fields.append(("m", draw(hs.sampled_from(SIBLING_KINDS))))
        sk = "#".join([*head, *tail])
        specs.append(SimpleEntitySpec(name, tuple(fields), "P#{p}", sk, gsi=None))
    return SiblingPair(specs[0], specs[1])


@hs.composite
def sibling_queries(
    draw: hs.DrawFn, pair: SiblingPair, values: Mapping[str, Any], cls: Any
) -> tuple[Any, Callable[[Mapping[str, Any]], bool]]:
    """A query of A's partition (``values["p"]``) and the Python selection it must make.

    Equality on a random number of leading sort key fields, then maybe one range
    condition (gt, ge, lt, le, between, or begins_with on a text field) on the next.
    """
    kinds = pair.a.kinds
    sk_fields = list(cls.plan().primary.sk.fields)
    # Mostly a range that leaves a field open (where siblings meet), sometimes one key.
    count = draw(hs.integers(0, len(sk_fields) - 1)) if draw(_KEEP) else len(sk_fields)
    eq = {f: values[f] for f in sk_fields[:count]}
    query = cls.query(p=values["p"], **eq)

    def same(item: Mapping[str, Any]) -> bool:
        return all(item[f] == v for f, v in eq.items())

    if count == len(sk_fields) or not draw(hs.booleans()):
        return query, same
    name = sk_fields[count]
    kind = kinds[name]
    ops = ["gt", "ge", "lt", "le", "between"] + (["begins_with"] if kind.name == "str" else [])
    op = draw(hs.sampled_from(ops))
    image = kind.image
    if op == "begins_with":
        partial = draw(hs.sampled_from(["", "a", "a#", "\xe9"]))
        return query.begins_with(
            **{name: partial}
        ), lambda i: same(i) and i[name].startswith(partial)
    if op == "between":
        low, high = sorted([draw(kind.values), draw(kind.values)], key=image)
        return query.between(
            **{name: (low, high)}
        ), lambda i: same(i) and image(low) <= image(i[name]) <= image(high)
    bound = draw(kind.values)
    compare: dict[str, Callable[[Any, Any], bool]] = {
        "gt": lambda x, y: x > y,
        "ge": lambda x, y: x >= y,
        "lt": lambda x, y: x < y,
        "le": lambda x, y: x <= y,
    }
    return getattr(query, op)(
        **{name: bound}
    ), lambda i: same(i) and compare[op](image(i[name]), image(bound))
