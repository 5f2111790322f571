"""Stored-format identifiers: one name and version per way a value is written to DynamoDB.

Every key codec and every attribute encoding has a format id such as
``"datetime-utc-us/2"``: a family name and a version. Snapshots record the id next to
each codec, so when a library upgrade changes how a value is stored, the id changes and
the migration planner plans the upgrade like a model change (a rewrite of the stored
items). ``tests/test_stored_formats.py`` pins sample encodings of every id: a change to
an encoding that does not bump its id fails there.

Rule for maintainers: change an encoding -> bump the version here, add a line to
`FORMAT_HISTORY` and to the "Stored format" section of ``CHANGELOG.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

#: Key codecs, by `KeyCodec.kind`.
KEY_FORMATS: Final[Mapping[str, str]] = {
    "str": "key-str/1",
    "int": "key-int-ordered/1",
    "fixed_int": "key-int-fixed/1",
    "decimal": "key-decimal-ordered/1",
    "float": "key-float-ordered/1",
    "bool": "key-bool/1",
    "datetime": "key-datetime-utc/1",
    "date": "key-date/1",
    "uuid": "key-uuid/1",
    "enum": "key-enum/1",
    "literal": "key-literal/1",
}

#: Scalar attribute encodings, by the ``python`` name in `AttributeCodec.params`.
ATTRIBUTE_FORMATS: Final[Mapping[str, str]] = {
    "str": "str/1",
    "bool": "bool/1",
    "int": "number/1",
    "float": "number/1",
    "Decimal": "number/1",
    "bytes": "binary/1",
    "datetime": "datetime-utc-us/2",
    "date": "date-iso/1",
    "time": "time-iso/1",
    "UUID": "uuid/1",
    "enum": "enum-value/1",
    "literal": "literal-value/1",
}

#: Attribute encodings without a ``python`` name, by their ``type``: containers (whose
#: elements carry their own ids) and values converted by their runtime type.
CONTAINER_FORMATS: Final[Mapping[str, str]] = {
    "list": "list/1",
    "tuple": "list/1",
    "map": "map/1",
    "set": "set/1",
    "frozenset": "set/1",
    "model": "map/1",
    # Runtime-typed values (Any, unions): a datetime among them is written like a
    # datetime attribute, so this family changed with it.
    "any": "dynamic/2",
    "NULL": "null/1",
}

#: Fallback for scalar attributes of an unlisted python type (str subclasses, ...).
SCALAR_TYPE_FORMATS: Final[Mapping[str, str]] = {
    "S": "str/1",
    "N": "number/1",
    "B": "binary/1",
    "BOOL": "bool/1",
}

#: The TTL attribute: whole epoch seconds as a Number.
TTL_FORMAT: Final = "ttl-epoch-seconds/1"

#: Every id whose version is above 1, with what each earlier version stored. A snapshot
#: written before format ids existed (snapshot ``format_version`` 1) cannot say which of
#: these versions its items hold; the planner says so instead of guessing.
FORMAT_HISTORY: Final[Mapping[str, tuple[str, ...]]] = {
    "datetime-utc-us/2": (
        "datetime-utc-us/1: datetime.isoformat() text, keeping the value's own UTC offset "
        "and dropping a zero fraction",
    ),
    "dynamic/2": ("dynamic/1: datetimes among runtime-typed values as datetime.isoformat()",),
}


def format_version(format_id: str) -> int:
    """The version number of a format id (``"datetime-utc-us/2"`` -> 2)."""
    return int(format_id.rpartition("/")[2])


def attribute_format(params: Mapping[str, Any]) -> str:
    """The format id of one attribute codec level (not its elements)."""
    python = str(params.get("python"))
    kind = str(params.get("type"))
    if python == "enum" and kind == "any":
        return CONTAINER_FORMATS["any"]
    for table, name in ((ATTRIBUTE_FORMATS, python), (CONTAINER_FORMATS, kind)):
        if name in table:
            return table[name]
    return SCALAR_TYPE_FORMATS.get(kind, CONTAINER_FORMATS["any"])


def with_formats(params: Mapping[str, Any]) -> dict[str, Any]:
    """Attribute codec params with a ``"format"`` id added at every level."""
    result: dict[str, Any] = {}
    for key, value in params.items():
        if key in ("items", "values", "fields") and isinstance(value, Mapping):
            if key == "fields":
                result[key] = {k: with_formats(v) for k, v in value.items()}
            else:
                result[key] = with_formats(value)
        elif key == "items" and isinstance(value, list):
            result[key] = [with_formats(v) for v in value]
        else:
            result[key] = value
    result["format"] = attribute_format(params)
    return result


def key_format(params: Mapping[str, Any]) -> str:
    """The format id of a key codec, from its `KeyCodec.params`."""
    kind = params.get("kind")
    if not isinstance(kind, str) or kind not in KEY_FORMATS:
        raise KeyError(f"no stored-format id for key codec kind {kind!r}; add it to KEY_FORMATS")
    return KEY_FORMATS[kind]
