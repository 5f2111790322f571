"""Query pages decoded from the response bytes: pydantic validates the body into entities.

A lean query otherwise parses the body into attribute-value dicts (orjson), and the
generated decoder (`codegen.build_item_decoder`) walks each item's dicts again to hand
pydantic a dict of field values. Here one pydantic-core validator does the whole page in
one pass over the bytes: each entity field reads its attribute through a
``validation_alias`` path (``["amount", "N"]``), so no intermediate dicts are built for
the fields pydantic parses from stored text. 1,000-item AuditEvent pages: parse and
decode 4.8-5.2 -> 4.4-4.7 µs an item; a whole lean query 59,562 -> 50,861 instructions an
item (benchmarks/README.md, "Issue 24, round 13").

Results equal the generated decoder's, item for item, because each field is handed
exactly what that decoder hands pydantic:

* a field the decoder gives pydantic as stored text (``av['S']``, ``av['N']``,
  ``av['BOOL']``) reads it through the alias path, and pydantic's own field schema
  parses it; a required field whose text the decoder converts first
  (``datetime.fromisoformat(av['S'])``) has that conversion as its before-validator;
* a plain ``dict[str, str]`` or ``list[str]``, which the decoder hands pydantic as each
  entry's stored text, reads the map or list through the alias path and each entry's
  ``S`` text through a typed dict (`_stored_texts`), in front of the field's own
  value and container schemas;
* any other field reads its attribute value whole, and a before-validator runs the
  decoder's own expression for it (`codegen.build_field_decoder`) in front of the
  field's schema. So does a field with a validator of the user's that sees the input
  first (``before``, ``wrap``, ``plain``), unless it is required: offered the whole
  attribute value as a second reading (where another type or a ``NULL`` is stored), such
  a validator could make a value of it where the item decoder hands ``None`` or refuses.

A field the decoder fills when its attribute is absent (``None``, an empty set:
`codegen.absent_fill`) has that fill as its default, validated as the decoder's dict
would have it, and counts as set. A NULL, which a field holding None over a default is
stored as, is taken as ``None`` inside the field's ``nullable`` part (`_null_reads_none`).
Whatever the generated decoder would not decode on that common path is left to it: an
item another entity or version wrote, one without its identifier, one missing a key
field's attribute or holding a NULL for it, and any item pydantic refuses. Such an item
comes out of the page as its attribute-value dict (the union's second choice), and the
caller decodes it as before, with the same results and errors. A model whose
validation could see the difference (a ``before`` or ``wrap`` model validator, its own
``model_validate`` or ``__init__``) gets no page decoder at all.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable, Sequence
from typing import Any, cast

from pydantic import BaseModel
from pydantic_core import CoreSchema, SchemaValidator
from pydantic_core import core_schema as cs

from singletable.attributes.codecs import lax_field, sees_raw_input
from singletable.errors import ItemDecodeError
from singletable.model.codegen import MODEL_VALIDATE, absent_fill, build_field_decoder
from singletable.model.collector import collector_held_off
from singletable.model.plan import EntityPlan
from singletable.model.table import Table

__all__ = ["PageDecoder", "entity_schema", "members_page_decoder", "page_decoder"]

#: Attribute value types whose stored value no field's schema would take as a dict.
_SCALAR_TAGS = frozenset({"S", "N", "BOOL"})
#: `codegen.absent_fill`'s immutable values, which a default may hold as they are.
_FILL_VALUES: dict[str, Any] = {"()": (), "None": None}
#: Stands for an absent attribute in a filled field's default (`build_field_decoder`).
_ABSENT = object()

#: Serialises the brief window in which an entity class reads as incomplete (see
#: `_build_validator`).
_BUILD_LOCK = threading.Lock()


class PageDecoder:
    """Decodes a Query or Scan response body, its items into entities where it can.

    Calling it with the body returns the response as a dict whose ``Items`` holds, for
    each item, the entity or (left to the caller's decoder) the item's attribute-value
    dict; or ``None`` when pydantic refused something outside the items, and the body is
    the caller's to parse.
    """

    def __init__(
        self, table: Table, schemas: Sequence[tuple[EntityPlan, CoreSchema, frozenset[str]]]
    ) -> None:
        self.table = table
        self.schemas = schemas
        self._validate: Callable[..., Any] | None = None  # built on the first page
        #: The fields each model counts as set whatever the item holds (`entity_schema`).
        self._filled = {plan.model: names for plan, _, names in schemas if names}

    def __call__(self, body: bytes) -> dict[str, Any] | None:
        """The response of ``body``, its items decoded where they can be, or ``None``."""
        validate = self._validate
        if validate is None:
            validate = self._validate = _build_validator(self.table, self.schemas).validate_json
        try:
            # Held off as the parse is (`io.lean.parse_body`): the page is all in memory.
            with collector_held_off():
                # By the aliases alone: a field's name must not read another attribute.
                # (A nested model whose codec's dict only its names read is refused,
                # and left to the item decoder.)
                page: dict[str, Any] = validate(body, by_alias=True, by_name=False)
        except (ValueError, TypeError):
            # pydantic refused the body, or a conversion met a value of another JSON type
            # (a number where text is stored), which the item decoder reports.
            return None
        if self._filled:
            for entity in page.get("Items", ()):
                names = self._filled.get(entity.__class__)
                if names is not None:
                    entity.__pydantic_fields_set__.update(names)
        return page


def members_page_decoder(plans: Sequence[EntityPlan]) -> PageDecoder | None:
    """A page decoder for items of any of ``plans`` (a collection's members), or ``None``.

    Members whose model cannot have one are left to the item decoder.
    """
    schemas = [(plan, *found) for plan in plans if (found := entity_schema(plan)) is not None]
    return PageDecoder(plans[0].table, schemas) if schemas else None


def page_decoder(plan: EntityPlan) -> PageDecoder | None:
    """``plan``'s page decoder (made once), or ``None`` when its model cannot have one."""
    decoder = plan._page_decoder
    if decoder is None:
        decoder = members_page_decoder([plan]) or False
        object.__setattr__(plan, "_page_decoder", decoder)
    return decoder or None


def entity_schema(plan: EntityPlan) -> tuple[CoreSchema, frozenset[str]] | None:
    """The core schema validating one stored item of ``plan`` into its model, or ``None``.

    With it, the fields the item decoder always counts as set (it fills them when
    absent), which the schema's defaults do not.
    """
    model = plan.model
    schema = model.__pydantic_core_schema__
    definitions: list[CoreSchema] | None = None
    if schema["type"] == "definitions":
        # The models of its fields (a nested model's schema, used twice or recursive).
        definitions, schema = schema["definitions"], schema["schema"]
    if not _validates_like_its_decoder(model, schema):
        return None
    fields_schema = schema["schema"]
    fields = fields_schema["fields"]
    if set(fields) != set(plan.fields):
        return None
    key_fields = set(plan.key_fields())
    aliased: dict[str, Any] = {}
    filled: list[str] = []
    for name, field in plan.fields.items():
        lax = lax_field(model, name)
        # A validator of the user's that sees the input first must see what the item
        # decoder hands it: never the whole attribute value offered as a second reading.
        raw = sees_raw_input(model, name)
        # A key field absent is read from the keys: the item decoder's job. Absent, a few
        # fields are handed a value (None, an empty set) pydantic then validates.
        fill = None if name in key_fields else absent_fill(field, lax=lax)
        reading = build_field_decoder(field, lax=lax, absent=None if fill is None else _ABSENT)
        field_schema = fields[name]["schema"]
        alias: Any = field.attribute
        if fill is not None:
            # The field counts as set, absent or not (`PageDecoder` adds it).
            filled.append(name)
            inner = _without_default(field_schema)
            if (
                reading.tag is not None
                and reading.convert is None
                and fill in _FILL_VALUES
                and not raw
            ):
                # The stored value, or else the whole attribute value, which the field's
                # schema refuses (a JSON object is no text, number or array).
                alias = [[field.attribute, reading.tag], [field.attribute]]
                default = _FILL_VALUES[fill]
            else:
                inner = cs.no_info_before_validator_function(reading.decode, inner)
                default = _ABSENT  # which the before-validator turns into the fill
            read: CoreSchema = cs.with_default_schema(inner, default=default, validate_default=True)
        else:
            required = name in key_fields or field_schema["type"] != "default"
            before: Callable[[Any], Any] | None = reading.decode
            if reading.tag is not None and required:
                # Absent or of another type, the attribute is missing: the item is the
                # decoder's.
                alias, before = [field.attribute, reading.tag], reading.convert
            elif reading.tag in _SCALAR_TAGS and reading.convert is None and not raw:
                # Or else the whole attribute value, which the field's scalar schema
                # refuses (a NULL's aside): another type than the decoder's must not read
                # as absent (the default).
                alias, before = [[field.attribute, reading.tag], [field.attribute]], None
                if field.stores_none:  # None over a default is written as NULL
                    field_schema = _null_reads_none(field_schema)
            elif (
                reading.texts is not None
                and not raw
                and (texts := _stored_texts(field_schema, reading.texts)) is not None
            ):
                # Or else the whole attribute value, which no entry schema takes (only an
                # "M" holds an object, and the first path reads it).
                alias, before = [[field.attribute, reading.texts], [field.attribute]], None
                field_schema = texts
            read = _field_schema(field_schema, before, required)
        aliased[name] = {**fields[name], "schema": read, "validation_alias": alias}
    aliased_schema: CoreSchema = {
        **schema,
        "schema": {**fields_schema, "fields": aliased, "extra_behavior": "ignore"},
    }
    if definitions is not None:
        aliased_schema = cs.definitions_schema(aliased_schema, definitions)
    return aliased_schema, frozenset(filled)


def _validates_like_its_decoder(model: type[BaseModel], schema: CoreSchema) -> bool:
    """Whether pydantic may validate ``model`` from the item itself as from the decoder's dict."""
    if getattr(model.model_validate, "__func__", None) is not MODEL_VALIDATE:
        return False  # the decoder calls the class's own model_validate
    decorators = model.__pydantic_decorators__
    if any(d.info.mode != "after" for d in decorators.model_validators.values()):
        return False  # it would see the item, not the decoder's dict
    return (
        schema["type"] == "model"
        and not schema.get("custom_init")
        and not schema.get("root_model")
        and schema["schema"]["type"] == "model-fields"
    )


def _stored_null(value: dict[str, Any]) -> None:
    if value["NULL"] is not True:
        # A ValueError, which pydantic reports: the item is the item decoder's to refuse.
        raise ItemDecodeError(f"not a stored NULL: {value!r}")


#: A stored NULL's whole attribute value, read as ``None``.
_NULL_AS_NONE = cs.no_info_after_validator_function(
    _stored_null,
    cs.typed_dict_schema(
        {"NULL": cs.typed_dict_field(cs.bool_schema(strict=True))}, extra_behavior="forbid"
    ),
)


def _null_reads_none(schema: CoreSchema) -> CoreSchema:
    """``schema``, its ``nullable`` part also reading a stored NULL's attribute value as None.

    The item decoder hands ``None`` for a NULL, which the whole field schema validates:
    the NULL is read inside the ``nullable`` part, so that what wraps it (a default,
    ``after`` validators) sees ``None`` as it would. A schema with no ``nullable`` part
    reached through those is returned as it is: a NULL there is the item decoder's.
    Measured: a 1,000-item page whose items store ``NULL`` for an ``int | None = 5`` field
    fell back item by item, 10.7 µs an item against 6.3 µs decoding item by item alone.
    """
    parts: dict[str, Any] = dict(schema)
    kind = parts["type"]
    if kind == "nullable":
        parts["schema"] = cs.union_schema([parts["schema"], _NULL_AS_NONE], mode="left_to_right")
    elif kind in ("default", "function-after"):
        parts["schema"] = _null_reads_none(parts["schema"])
    else:
        return schema
    return cast(CoreSchema, parts)


def _stored_text(schema: CoreSchema) -> CoreSchema:
    """``schema`` applied to the text of a stored ``{"S": text}`` entry.

    The entry must be exactly that object, as the decoder's ``e['S']`` reads it (another
    type, or more keys, refuse the item: the decoder's then); ``itemgetter`` takes the
    text out in C, where the decoder's before-validator was a Python call an item
    (1,000-item AuditEvent pages, decoding 4.6-5.3 -> 4.0-4.5 µs an item, timeit;
    benchmarks/README.md, "Issue 24, round 16").
    """
    entry = cs.typed_dict_schema({"S": cs.typed_dict_field(schema)}, extra_behavior="forbid")
    return cs.no_info_after_validator_function(operator.itemgetter("S"), entry)


def _stored_texts(schema: CoreSchema, container: str) -> CoreSchema | None:
    """A text map's or list's schema reading its stored entries, or ``None``.

    ``container``: ``"M"`` for a ``dict[str, str]``, ``"L"`` for a ``list[str]``; ``None``
    where the field's schema is not that plain container. Only text entries: pydantic
    parses a JSON string as it parses the same ``str`` (a number's text could parse
    differently in lax mode).
    """
    default: CoreSchema | None = None
    if schema["type"] == "default":
        default, schema = schema, schema["schema"]
    if container == "M" and schema["type"] == "dict":
        keys, values = schema.get("keys_schema"), schema.get("values_schema")
        if keys is None or keys["type"] != "str" or values is None or values["type"] != "str":
            return None
        read: CoreSchema = {**schema, "values_schema": _stored_text(values)}
    elif container == "L" and schema["type"] == "list":
        items = schema.get("items_schema")
        if items is None or items["type"] != "str":
            return None
        read = {**schema, "items_schema": _stored_text(items)}
    else:
        return None
    return read if default is None else cast(CoreSchema, {**default, "schema": read})


def _without_default(schema: CoreSchema) -> CoreSchema:
    """A field's schema without its default, if any."""
    inner: CoreSchema = schema["schema"] if schema["type"] == "default" else schema
    return inner


def _field_schema(
    schema: CoreSchema, decode: Callable[[Any], Any] | None, required: bool
) -> CoreSchema:
    """A field's schema with ``decode`` in front of it, its default kept unless ``required``."""
    default: CoreSchema | None = None
    if schema["type"] == "default":
        default, schema = schema, schema["schema"]
    if decode is not None:
        schema = cs.no_info_before_validator_function(decode, schema)
    if default is not None and not required:
        schema = {**default, "schema": schema}
    return schema


def _build_validator(
    table: Table, schemas: Sequence[tuple[EntityPlan, CoreSchema, frozenset[str]]]
) -> SchemaValidator:
    """The validator of a whole response body whose items may be of the plans given."""
    by_name: dict[str, dict[str, CoreSchema]] = {}
    for plan, schema, _ in schemas:
        by_name.setdefault(plan.name, {})[str(plan.version)] = schema
    entity = cs.tagged_union_schema(
        {
            name: cs.tagged_union_schema(versions, _path(table.version_attribute, "N"))
            for name, versions in by_name.items()
        },
        _path(table.entity_attribute, "S"),
    )
    # Any item the entities refuse comes out as its attribute-value dict.
    item = cs.union_schema([entity, cs.any_schema()], mode="left_to_right")
    page = cs.typed_dict_schema(
        {"Items": cs.typed_dict_field(cs.list_schema(item), required=False)},
        extra_behavior="allow",
    )
    with _BUILD_LOCK:
        # pydantic-core builds a model schema from the class's own finished validator
        # when the class reads as complete, and would ignore the aliases above. The
        # flag is lowered only while this validator is built (under a lock).
        flagged = [p.model for p, *_ in schemas if p.model.__dict__.get("__pydantic_complete__")]
        for model in flagged:
            type.__setattr__(model, "__pydantic_complete__", False)
        try:
            return SchemaValidator(page)
        finally:
            for model in flagged:
                type.__setattr__(model, "__pydantic_complete__", True)


def _path(attribute: str, tag: str) -> list[str | int]:
    """The lookup path of an attribute's value of type ``tag``."""
    return [attribute, tag]
