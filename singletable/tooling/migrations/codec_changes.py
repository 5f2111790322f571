"""Codec descriptions compared: which stored values a new codec still reads and writes alike.

Pure: it reads the codec descriptions of snapshots (``singletable.tooling.migrations.snapshot``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from singletable.keys.formats import FORMAT_HISTORY, format_version

__all__ = [
    "codec_params",
    "codec_text",
    "format_changes",
    "narrowing",
    "stores_alike",
    "widens",
]

_PRECISION_RANK = {"s": 0, "ms": 1, "us": 2}

_NOT_CODEC = frozenset({"required", "default", "nullable", "format"})


def codec_params(params: Mapping[str, Any]) -> Any:
    """Codec parameters without bookkeeping (format ids, requiredness, default)."""
    return _strip(params, top=True)


def _strip(value: Any, *, top: bool = False) -> Any:
    if isinstance(value, Mapping):
        drop = _NOT_CODEC if top else frozenset({"format"})
        return {k: _strip(v) for k, v in value.items() if k not in drop}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _formats(value: Any, path: str = "") -> dict[str, str | None]:
    """Every format id in a codec description, by where it sits (``None``: not recorded)."""
    found: dict[str, str | None] = {}
    if isinstance(value, Mapping):
        if "type" in value or "kind" in value:
            found[path or "."] = value.get("format")
        for key, inner in value.items():
            if key in ("items", "values", "fields") and isinstance(inner, (Mapping, list)):
                if key == "fields" and isinstance(inner, Mapping):
                    for name, sub in inner.items():
                        found.update(_formats(sub, f"{path}.{name}"))
                else:
                    found.update(_formats(inner, f"{path}.{key}"))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            found.update(_formats(inner, f"{path}[{i}]"))
    return found


def format_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """How the stored-format ids of two codec descriptions differ, as readable text.

    An old description without ids (a snapshot written before they existed) matches an
    id still at version 1: that format has never changed. Against a later version the
    old format is unknown, and that is reported with what the earlier versions stored.
    """
    before, after = _formats(old), _formats(new)
    changes: list[str] = []
    for where in sorted(set(before) & set(after)):
        b, a = before[where], after[where]
        if b == a or a is None:
            continue
        label = "" if where == "." else f" at {where}"
        if b is None:
            if format_version(a) == 1:
                continue
            history = "; ".join(FORMAT_HISTORY.get(a, ()))
            changes.append(
                f"stored format{label} unknown (the snapshot predates stored-format ids); "
                f"this singletable writes {a}" + (f", earlier: {history}" if history else "")
            )
        else:
            changes.append(f"stored format{label} {b} -> {a}")
    return changes


def widens(before: Any, after: Any) -> bool:
    """Whether codec ``after`` reads and writes every value of ``before`` alike.

    True when they are equal, except that a list of allowed ``values`` (the members of an
    Enum, the values of a Literal) may gain values or change order: values are stored as
    themselves, so the stored bytes of every old value stay the same.
    """
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        if set(before) != set(after):
            return False
        for key, b in before.items():
            a = after[key]
            if key == "values" and isinstance(b, list) and isinstance(a, list):
                if not {json.dumps(v) for v in b} <= {json.dumps(v) for v in a}:
                    return False
            elif not widens(b, a):
                return False
        return True
    return bool(before == after)


#: The encodings of allowed values (Literal, Enum) that store each value as itself.
_AS_ITSELF = frozenset({"literal-value/1", "enum-value/1"})
#: What reads a stored value as itself and writes it back unchanged, by stored type: the
#: allowed values of that type it reads (a str reads any text, an int any integer).
_PLAIN_READERS: Mapping[tuple[str, str], tuple[str, Callable[[Any], bool]]] = {
    ("S", "str"): ("str/1", lambda v: isinstance(v, str)),
    ("N", "int"): ("number/1", lambda v: isinstance(v, int) and not isinstance(v, bool)),
}
_DESCRIPTION_ONLY = frozenset({"required", "default"})


def stores_alike(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """Whether the new codec reads and writes back byte for byte all the old one stores.

    Then stored items need no rewrite (the rule of a widening). What the old model can
    store is compared with how the new model reads it: equal codecs; allowed values (a
    Literal, an Enum) that gain values, change order, or pass from Literal to Enum and
    back (each stores its value as itself); allowed text values read by a plain ``str``,
    integer values by a plain ``int``; and the same for the elements of a list, set or
    map, and the fields of a nested model.
    """
    return _alike(
        {k: v for k, v in before.items() if k not in _DESCRIPTION_ONLY},
        {k: v for k, v in after.items() if k not in _DESCRIPTION_ONLY},
    )


def _alike(before: Any, after: Any) -> bool:
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        if "values" in before:
            return _values_alike(before, after)
        if not _same_format(before.get("format"), after.get("format")):
            return False
        keys = set(before) - {"format"}
        if keys != set(after) - {"format"}:
            return False
        return all(_alike(before[k], after[k]) for k in keys)
    if isinstance(before, list) and isinstance(after, list):
        return len(before) == len(after) and all(map(_alike, before, after))
    return bool(before == after)


def _same_format(before: str | None, after: str | None) -> bool:
    # A snapshot written before format ids holds version 1 of every format that has one.
    if before is None:
        return after is None or format_version(after) == 1
    return before == after


def _values_alike(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    values = before["values"]
    if before.get("format", "literal-value/1") not in _AS_ITSELF or not isinstance(values, list):
        return False
    plain = {"values", "enum", "python", "format"}
    if {k: v for k, v in before.items() if k not in plain} != {
        k: v for k, v in after.items() if k not in plain
    }:
        return False  # the stored type, or nullability, differs
    if "values" in after:
        return after.get("format", "literal-value/1") in _AS_ITSELF and {
            json.dumps(v) for v in values
        } <= {json.dumps(v) for v in after["values"]}
    reader = _PLAIN_READERS.get((str(before.get("type")), str(after.get("python"))))
    if reader is None or not _same_format(after.get("format"), reader[0]):
        return False
    return all(reader[1](v) for v in values)


def narrowing(old: Mapping[str, Any], new: Mapping[str, Any], what: str) -> str | None:
    """Why some values the old codec stores cannot be written by the new one, or None."""
    b, a = codec_params(old), codec_params(new)
    if widens(b, a) or stores_alike(old, new):
        return None
    kind_b, kind_a = b.get("kind", b.get("type")), a.get("kind", a.get("type"))
    if "kind" in b and kind_b == kind_a == "datetime":
        if _PRECISION_RANK[a["precision"]] < _PRECISION_RANK[b["precision"]]:
            return (
                f"{what}: key precision {b['precision']!r} -> {a['precision']!r}: stored "
                "values with a finer fraction cannot be written (they are refused, never "
                "truncated)"
            )
        return None
    if "kind" in b and kind_b == kind_a == "fixed_int":
        if a["width"] < b["width"]:
            return (
                f"{what}: key width {b['width']} -> {a['width']}: stored values of more than "
                f"{a['width']} digits cannot be written"
            )
        return None
    if "kind" in b and (kind_b, kind_a) in (
        ("fixed_int", "int"),
        ("int", "decimal"),
        ("fixed_int", "decimal"),
    ):
        return None
    if "kind" in b and (kind_b, kind_a) == ("int", "fixed_int"):
        return (
            f"{what}: key encoding int -> fixed width {a['width']}: negative stored values and "
            f"values of more than {a['width']} digits cannot be written"
        )
    if "values" in b and "values" in a and kind_b == kind_a:
        lost = [v for v in b["values"] if v not in a["values"]]
        return f"{what}: allowed values {lost!r} removed: stored items holding them do not decode"
    return (
        f"{what}: type changes ({codec_text(b)} -> {codec_text(a)}): stored values may not convert"
    )


def codec_text(params: Any) -> str:
    """Codec parameters as text, for a reason."""
    return json.dumps(params, sort_keys=True)
