"""Model snapshots: what the model writes, as a deterministic, diffable JSON document.

A snapshot is meant to be committed next to the code (``singletable snapshot app:table
-o model.snapshot.json``). The migration planner compares the current model with it, so
it records everything that decides the bytes of stored items: per table the key schema,
indexes, delimiter, escape character and escape scheme, the bookkeeping attribute names;
per entity its stored identifier (name, version), every key template with each field's
codec parameters (padding width, datetime precision, ...) and every attribute's codec.

Everything is read from the compiled plans (`EntityPlan.describe`, `KeyTemplate.describe`),
never re-derived from the classes. The text is ``json.dumps(sort_keys=True, indent=2)``
plus a trailing newline, so two snapshots of the same model are byte-identical and a
model change shows up as a small, readable diff.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from singletable.errors import ModelDefinitionError, SnapshotError
from singletable.keys.formats import TTL_FORMAT, key_format, with_formats
from singletable.model.plan import EntityPlan, entity_plans, native_key_types
from singletable.model.table import GSI, Table
from singletable.model.unique import FIELD_JOIN

#: Version of the snapshot document's layout. 2 added stored-format ids (``"format"``
#: next to every key codec and attribute encoding, ``ttl_format`` per table) and field
#: defaults. 3 records each uniqueness constraint's stored form: ``{"fields": [...],
#: "codecs": {field: {codec params, "format": id}}}`` instead of the bare field list, so
#: a changed guard key is planned. Versions 1 and 2 are still read: the planner treats
#: their missing ids as "written before format ids existed" (see
#: `singletable.keys.formats`) and their constraints' codecs as unknown (`unique_forms`).
FORMAT_VERSION = 3
READABLE_FORMAT_VERSIONS = (1, 2, 3)

#: Version of the key segment escape scheme (``docs/architecture.md``: every character
#: ``<= escape`` written as the escape character plus two upper-case hex digits). Stored
#: keys depend on it, so a future scheme change must show up in every plan as a rewrite.
ESCAPE_SCHEME_VERSION = 1

Model = Table | Sequence[Table]


def tables_of(model: Model) -> list[Table]:
    """The tables of a model given as one table or a sequence of tables.

    Raises:
        SnapshotError: Two different tables share a name.
    """
    tables = [model] if isinstance(model, Table) else list(model)
    seen: dict[str, Table] = {}
    for table in tables:
        if not isinstance(table, Table):
            raise ModelDefinitionError(f"expected a Table, got {type(table).__name__} {table!r}")
        other = seen.setdefault(table.name, table)
        if other is not table:
            raise SnapshotError(f"two different Table objects are both named {table.name!r}")
    return list(seen.values())


def _key(attribute: str | None, kind: str) -> dict[str, str] | None:
    return None if attribute is None else {"attribute": attribute, "type": kind}


def entity_id(name: str, version: int) -> str:
    """The snapshot key of an entity: its stored identifier, ``"AuditEvent@1"``."""
    return f"{name}@{version}"


def describe_table(table: Table) -> dict[str, Any]:
    """The snapshot section of one table (JSON-able, not yet sorted)."""
    indexes: dict[str, Any] = {}
    for name, index in table.indexes.items():
        schema = table.key_schema(name)
        entry: dict[str, Any] = {
            "kind": index.kind,
            "pk": _key(schema.pk, schema.pk_type),
            "sk": _key(schema.sk, schema.sk_type),
            "projection": index.projection.to_dict(),
        }
        if isinstance(index, GSI) and index.throughput is not None:
            entry["throughput"] = {"read": index.throughput.read, "write": index.throughput.write}
        indexes[name] = entry
    return {
        "name": table.name,
        "key": {
            "pk": _key(table.pk, table.pk_type),
            "sk": _key(table.sk, table.sk_type),
        },
        "encoding": {
            "delimiter": table.delimiter,
            "escape": table.escape,
            "escape_scheme_version": ESCAPE_SCHEME_VERSION,
            "entity_attribute": table.entity_attribute,
            "version_attribute": table.version_attribute,
            "ttl_format": TTL_FORMAT,
        },
        "indexes": indexes,
        # Apart from "indexes", whose entries have one pk and sk attribute each; only when
        # declared, so the snapshots of tables without native GSIs are unchanged.
        **({"native_indexes": _native_indexes(table)} if table.native_indexes else {}),
        "settings": {
            "billing_mode": table.billing_mode,
            "throughput": None
            if table.throughput is None
            else {"read": table.throughput.read, "write": table.throughput.write},
            "ttl_attribute": table.ttl_attribute,
            "stream": table.stream,
            "point_in_time_recovery": table.point_in_time_recovery,
            "deletion_protection": table.deletion_protection,
            "sse": table.sse,
            "tags": dict(table.tags),
        },
        "entities": {
            entity_id(plan.name, plan.version): _with_unique_forms(
                _with_formats(plan.describe()), plan
            )
            for plan in entity_plans(table)
        },
    }


def _native_indexes(table: Table) -> dict[str, Any]:
    """The native GSIs: their parts in order, each with its type (``None`` if unknown)."""
    types = native_key_types(table, unknown_ok=True)
    result: dict[str, Any] = {}
    for name, index in table.native_indexes.items():
        entry: dict[str, Any] = {
            "kind": "GSI",
            **{
                role: [{"attribute": p.attribute, "type": types.get(p.attribute)} for p in parts]
                for role, parts in (("pk", index.pk), ("sk", index.sk))
            },
            "projection": index.projection.to_dict(),
        }
        if index.throughput is not None:
            entry["throughput"] = {"read": index.throughput.read, "write": index.throughput.write}
        result[name] = entry
    return result


def _with_formats(entity: dict[str, Any]) -> dict[str, Any]:
    """An entity description with the stored-format id of every codec added."""
    for keys in entity["keys"].values():
        for role in ("pk", "sk"):
            if role in keys:
                for params in keys[role]["fields"].values():
                    params["format"] = key_format(params)
    entity["attributes"] = {
        name: {**with_formats(params), "required": params["required"]}
        for name, params in entity["attributes"].items()
    }
    # A native key part is the field's own attribute: its stored format is the key's.
    for native in entity.get("native_indexes", {}).values():
        for role in ("pk", "sk"):
            for part in native[role]:
                part["format"] = entity["attributes"][part["field"]]["format"]
    return entity


def _with_unique_forms(entity: dict[str, Any], plan: EntityPlan) -> dict[str, Any]:
    """An entity description whose constraints carry their guard keys' codecs."""
    if "unique" in entity:
        entity["unique"] = [
            {
                "fields": list(constraint.fields),
                "codecs": {
                    name: {**codec.params(), "format": key_format(codec.params())}
                    for name, codec in constraint.codecs().items()
                },
            }
            for constraint in plan.unique
        ]
    return entity


def unique_forms(entity: Mapping[str, Any]) -> dict[str, dict[str, Any] | None]:
    """An entity's constraints in a snapshot: name (``"tenant+email"``) -> codecs by field.

    The codecs are ``None`` for a snapshot older than format version 3, which records
    the fields alone.
    """
    forms: dict[str, dict[str, Any] | None] = {}
    for entry in entity.get("unique", []):
        if isinstance(entry, Mapping):
            forms[FIELD_JOIN.join(entry["fields"])] = dict(entry["codecs"])
        else:
            forms[FIELD_JOIN.join(entry)] = None
    return forms


def snapshot(model: Model) -> dict[str, Any]:
    """The snapshot document of a model (one table or several), as JSON-able data."""
    return {
        "format_version": FORMAT_VERSION,
        "tables": {table.name: describe_table(table) for table in tables_of(model)},
    }


def dumps(document: Mapping[str, Any]) -> str:
    """A snapshot document as its canonical text: sorted keys, indent 2, trailing newline."""
    return json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def snapshot_json(model: Model) -> str:
    """The canonical snapshot text of a model (what ``singletable snapshot`` writes)."""
    return dumps(snapshot(model))


def load_snapshot(text: str, *, source: str = "snapshot") -> dict[str, Any]:
    """Parse and check a snapshot's text.

    Args:
        text: The JSON text.
        source: How error messages name it (a file name).

    Raises:
        SnapshotError: Not JSON, not a snapshot, or another ``format_version``.
    """
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SnapshotError(
            f"{source}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    except ValueError as exc:  # an integer literal past Python's digit limit
        raise SnapshotError(f"{source}: not valid JSON ({exc})") from None
    if not isinstance(document, dict) or "format_version" not in document:
        raise SnapshotError(
            f"{source}: not a singletable snapshot (no 'format_version'); create one with "
            "`singletable snapshot module:attribute -o FILE`"
        )
    version = document["format_version"]
    if version not in READABLE_FORMAT_VERSIONS:
        raise SnapshotError(
            f"{source}: snapshot format_version is {version!r}, this singletable reads "
            f"format_version {' and '.join(map(str, READABLE_FORMAT_VERSIONS))}; regenerate it "
            "with `singletable snapshot` from the model it describes (check out that commit), "
            "or use a matching singletable"
        )
    _check(document, _DOCUMENT, source, "")
    return dict(document)


# -- shape check ------------------------------------------------------------------------
# Every value the planner reads, with its JSON type, so that a hand-edited or truncated
# file is refused with the path of the first bad value instead of a traceback later.

_KEY_REF = {"attribute": str, "type": str}
_TEMPLATE = {
    "attribute": str,
    "template": str,
    "type": str,
    "fields": ("map", {"kind": str, "escaped": bool}),
}
_DOCUMENT: dict[str, Any] = {
    "tables": (
        "map",
        {
            "key": {"pk": _KEY_REF, "sk": ("optional", _KEY_REF)},
            "encoding": {
                "delimiter": str,
                "escape": str,
                "escape_scheme_version": int,
                "entity_attribute": str,
                "version_attribute": str,
            },
            "indexes": (
                "map",
                {
                    "kind": str,
                    "pk": ("optional", _KEY_REF),
                    "sk": ("optional", _KEY_REF),
                    "projection": {"ProjectionType": str},
                },
            ),
            "settings": {"ttl_attribute": ("optional", str)},
            "entities": (
                "map",
                {
                    "name": str,
                    "version": int,
                    "class": str,
                    "keys": (
                        "map",
                        {
                            "pk": _TEMPLATE,
                            "sk": ("absent-ok", _TEMPLATE),
                            "sparse_fields": ("list", str),
                        },
                    ),
                    "attributes": ("map", {"type": str, "required": bool}),
                    "ttl_field": ("optional", str),
                    "version_field": ("optional", str),
                },
            ),
        },
    ),
}

_JSON_NAMES = {
    dict: "an object",
    list: "a list",
    str: "a string",
    int: "a number",
    bool: "true/false",
}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    for kind, name in _JSON_NAMES.items():
        if type(value) is kind:
            return name
    return type(value).__name__


def _check(value: Any, shape: Any, source: str, path: str) -> None:
    """Refuse ``value`` unless it has ``shape`` (see `_DOCUMENT`), naming the bad path."""
    if isinstance(shape, tuple):
        _check_container(value, shape, source, path)
    elif isinstance(shape, dict):
        if not isinstance(value, dict):
            raise _malformed(source, path, "an object", value)
        for key, inner in shape.items():
            if key in value:
                _check(value[key], inner, source, f"{path}.{key}" if path else key)
            elif not (isinstance(inner, tuple) and inner[0] == "absent-ok"):
                raise SnapshotError(
                    f"{source}: malformed snapshot at {path or 'top level'}: no {key!r}; "
                    "regenerate it with `singletable snapshot`"
                )
    elif type(value) is not shape:  # a JSON true/false is not a number here
        raise _malformed(source, path, _JSON_NAMES[shape], value)


def _check_container(value: Any, shape: tuple[str, Any], source: str, path: str) -> None:
    mode, inner = shape
    if mode in ("optional", "absent-ok") and value is None:
        return
    if mode == "map":
        if not isinstance(value, dict):
            raise _malformed(source, path, "an object", value)
        for name, entry in value.items():
            _check(entry, inner, source, f"{path}[{json.dumps(name)}]")
    elif mode == "list":
        if not isinstance(value, list):
            raise _malformed(source, path, "a list", value)
        for i, entry in enumerate(value):
            _check(entry, inner, source, f"{path}[{i}]")
    else:
        _check(value, inner, source, path)


def _malformed(source: str, path: str, expected: str, value: Any) -> SnapshotError:
    return SnapshotError(
        f"{source}: malformed snapshot at {path or 'top level'}: expected {expected}, "
        f"got {_json_type(value)}; regenerate it with `singletable snapshot`"
    )


def read_snapshot(path: str | Path) -> dict[str, Any]:
    """Read and check a snapshot file (`SnapshotError` if unreadable or of another version)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise SnapshotError(f"{path}: cannot read snapshot: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise SnapshotError(
            f"{path}: not a snapshot: not UTF-8 text (byte {exc.start}: {exc.reason})"
        ) from None
    return load_snapshot(text, source=str(path))
