"""What a model change does to stored items: the analysis under the migration planner.

The planner must never call a change safe while some stored item differs from what the
new model would write for it. So instead of diffing declarations, this module follows
each stored attribute of an entity's items through both models:

* the **old side** is what the old model holds for an item after reading it back and
  writing it again (its canonical form: a field stored without its attribute reads as
  the old default, and that default feeds the old keys);
* the **new side** is what the new model reads from the same stored item (an absent
  attribute reads as the *new* default) and would then write.

Both sides are computed symbolically from two snapshot entity descriptions: a field's
value is either the value the item stores (`_Stored`), a constant default (`_Const`), a
fresh value from a default factory (`_Fresh`), or unreadable (`_Unreadable`). For every
key attribute (table key and every index key), every combination of "attribute stored /
not stored" of the nullable fields it depends on is rendered on both sides: index
membership (sparse indexes), template text, codec parameters and stored-format ids,
escaping. Non-key attributes, the stored identifier (``_et``/``_ev``) and the TTL
attribute are compared the same way. Each difference becomes an `Effect`.

Pure: it reads JSON-able snapshot descriptions only (``singletable.tooling.migrations.snapshot``).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from singletable.keys.formats import FORMAT_HISTORY, format_version

#: Above this many nullable fields in one key, combinations are not enumerated: the key
#: is reported as changed unless both sides are identical (conservative, never "safe").
_MAX_CASES_FIELDS = 8

_PRECISION_RANK = {"s": 0, "ms": 1, "us": 2}


@dataclass(frozen=True)
class Effect:
    """One way stored items of an entity differ under the new model.

    Attributes:
        subject: What differs, e.g. ``"GSI1 key"``, ``"attribute status"``, ``"ttl"``.
        reason: Why, in terms of stored items, and what to do.
        rewrite: Stored items differ from what the new model writes; rewriting them
            with the new model makes them match.
        unreadable: Some stored items no longer decode under the new model.
        needs_transform: Why a mechanical rewrite (read with the new model, write it
            back) fails for some stored values, or ``None`` when it works for all.
    """

    subject: str
    reason: str
    rewrite: bool = True
    unreadable: bool = False
    needs_transform: str | None = None


# -- symbolic field values ----------------------------------------------------------------


@dataclass(frozen=True)
class _Stored:
    """The value the stored item holds for a field, read unchanged."""

    field: str


@dataclass(frozen=True)
class _Const:
    """A constant: the default an absent attribute reads as (``stored=None``: None)."""

    stored: Any

    @property
    def is_none(self) -> bool:
        return self.stored is None

    def text(self) -> str:
        if self.stored is None:
            return "None"
        value = self.stored
        if isinstance(value, dict) and len(value) == 1:
            ((kind, inner),) = value.items()
            if kind in ("S", "N"):
                return repr(inner)
        return json.dumps(value, sort_keys=True)


@dataclass(frozen=True)
class _Fresh:
    """A new value from a default factory, made on every read."""

    factory: str


@dataclass(frozen=True)
class _Unreadable:
    """The field does not decode under the new model."""

    why: str


_Symbol = _Stored | _Const | _Fresh | _Unreadable
_NONE = _Const(None)


def _absent_value(attr: Mapping[str, Any] | None) -> _Symbol:
    """What a model reads for a field whose attribute the item does not store."""
    if attr is None:
        return _NONE  # the model has no such field: nothing is written for it
    if "default" not in attr:
        if attr.get("nullable") or attr.get("type") in ("set", "frozenset"):
            return _NONE  # a required Optional reads None; a set reads empty (omitted)
        if attr.get("required", True):
            return _Unreadable("required, and stored items do not have it")
        return _NONE  # older snapshots did not record defaults
    default = attr["default"]
    if default is None:
        return _NONE
    if "factory" in default:
        return _Fresh(str(default["factory"]))
    if "unencodable" in default:
        return _Unreadable(f"its default {default['unencodable']} cannot be stored")
    return _Const(default.get("stored"))


def _stores_none(attr: Mapping[str, Any]) -> bool:
    """Whether the model writes a ``None`` of this field as NULL (see `FieldPlan`).

    An optional field whose default is another value (a factory's included; not a set,
    whose absence reads as None): left out, the attribute would read back as the default.
    """
    default = attr.get("default")
    return (
        bool(attr.get("nullable"))
        and default is not None
        and attr.get("type")
        not in (
            "SS",
            "NS",
            "BS",
            "set",
            "frozenset",
        )
    )


def _may_be_absent(attr: Mapping[str, Any] | None) -> bool:
    """Whether an item written by a model can lack the field's attribute (None, empty set)."""
    if attr is None:
        return True
    if attr.get("nullable") or attr.get("type") in ("set", "frozenset", "any"):
        return True
    return "default" in attr and attr["default"] is None


def _numbers_convert(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """Whether every stored value of ``before`` reads as a value of ``after``.

    Numbers read as ``float`` or ``Decimal``, and any stored text reads as a ``str``;
    the value may then be stored or keyed differently, which the comparisons see.
    """
    b, a = _codec(before), _codec(after)
    if b.get("type") == a.get("type") == "S" and a.get("python") == "str":
        return "nullable" not in b or "nullable" in a
    return (
        b.get("type") == a.get("type") == "N"
        and b.get("python") in ("int", "float", "Decimal")
        and a.get("python") in ("float", "Decimal")
    )


# -- codec comparison ---------------------------------------------------------------------

_NOT_CODEC = frozenset({"required", "default", "nullable", "format"})


def _codec(params: Mapping[str, Any]) -> Any:
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


def _widens(before: Any, after: Any) -> bool:
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
            elif not _widens(b, a):
                return False
        return True
    return bool(before == after)


def _narrowing(old: Mapping[str, Any], new: Mapping[str, Any], what: str) -> str | None:
    """Why some values the old codec stores cannot be written by the new one, or None."""
    b, a = _codec(old), _codec(new)
    if _widens(b, a):
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
    return f"{what}: type changes ({_text(b)} -> {_text(a)}): stored values may not convert"


def _text(params: Any) -> str:
    return json.dumps(params, sort_keys=True)


# -- rendering keys -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Writer:
    """One key template an entity writes, with the fields that keep items out of it."""

    index: str  # "<table>" or the index name
    template: Mapping[str, Any]
    sparse: tuple[str, ...]


def _writers(entity: Mapping[str, Any]) -> dict[str, list[_Writer]]:
    """Key attribute name -> the templates that write it."""
    found: dict[str, list[_Writer]] = {}
    for index, keys in entity["keys"].items():
        for role in ("pk", "sk"):
            template = keys.get(role)
            if template is not None:
                writer = _Writer(index, template, tuple(keys.get("sparse_fields", ())))
                found.setdefault(template["attribute"], []).append(writer)
    return found


def _segments(template: Mapping[str, Any]) -> list[str | tuple[str, Mapping[str, Any]]]:
    """Literal text and ``(field, params)`` segments, adjacent literals merged."""
    source: str = template["template"]
    segments: list[str | tuple[str, Mapping[str, Any]]] = []
    literal = ""
    i = 0
    while i < len(source):
        if source[i] == "{":
            end = source.index("}", i)
            name = source[i + 1 : end]
            if literal:
                segments.append(literal)
                literal = ""
            segments.append((name, template["fields"].get(name, {})))
            i = end + 1
        else:
            literal += source[i]
            i += 1
    if literal:
        segments.append(literal)
    return segments


@dataclass
class _Side:
    """One model's view of an entity's stored items."""

    entity: Mapping[str, Any]
    encoding: Mapping[str, Any]

    @property
    def attributes(self) -> Mapping[str, Any]:
        result: Mapping[str, Any] = self.entity["attributes"]
        return result


class _Comparison:
    """The old and new side of one entity, and the per-field value symbols."""

    def __init__(self, old: _Side, new: _Side) -> None:
        self.old, self.new = old, new
        self.transforms: dict[str, str] = {}

    def old_value(self, field: str, stored: bool) -> _Symbol:
        if stored:
            return _Stored(field)
        return _absent_value(self.old.attributes.get(field))

    def new_value(self, field: str, stored: bool) -> _Symbol:
        attr = self.new.attributes.get(field)
        if not stored:
            return _absent_value(attr)
        if attr is None:
            return _NONE
        before = self.old.attributes[field]
        if _widens(_codec(before), _codec(attr)) or _numbers_convert(before, attr):
            # The value reads as it was stored (a number read as another numeric type
            # keeps its value; its key text may differ, which the key comparison sees).
            return _Stored(field)
        why = _narrowing(before, attr, f"field {field}")
        assert why is not None
        self.transforms.setdefault(f"attribute {field}", why)
        return _Unreadable(why)

    def fields_stored(self, field: str) -> list[bool]:
        """The cases to consider for a field: attribute stored, not stored, or both."""
        attr = self.old.attributes.get(field)
        if attr is None:
            return [False]
        return [True, False] if _may_be_absent(attr) else [True]


def _render(
    template: Mapping[str, Any],
    values: Mapping[str, _Symbol],
    encoding: Mapping[str, Any],
) -> tuple[Any, ...] | None:
    """A comparable form of the key text a template writes, or None if it cannot."""
    parts: list[Any] = [template["attribute"], template["type"]]
    for segment in _segments(template):
        if isinstance(segment, str):
            parts.append(segment)
            continue
        name, params = segment
        value = values.get(name, _NONE)
        if isinstance(value, _Unreadable):
            return None
        escape = (
            (encoding["escape"], encoding["escape_scheme_version"]) if params.get("escaped") else ()
        )
        parts.append((value, _codec(params), params.get("format"), escape))
    return tuple(parts)


def _same_rendering(old: tuple[Any, ...], new: tuple[Any, ...]) -> bool:
    if len(old) != len(new):
        return False
    for b, a in zip(old, new, strict=False):
        if isinstance(b, tuple) and isinstance(a, tuple):
            (bv, bc, bf, be), (av, ac, af, ae) = b, a
            if bv != av or not _widens(bc, ac) or be != ae:
                return False
            if bf != af and not (bf is None and af is not None and format_version(af) == 1):
                return False
        elif b != a:
            return False
    return True


def _describe_case(case: Mapping[str, bool], cmp: _Comparison) -> str:
    parts = []
    for field, stored in sorted(case.items()):
        if stored:
            continue
        before, after = cmp.old_value(field, False), cmp.new_value(field, False)
        if field not in cmp.old.attributes:
            parts.append(f"{field} is new (stored items lack it; it reads as {_show(after)})")
        else:
            parts.append(f"{field} not stored (read as {_show(before)}, now {_show(after)})")
    return "; ".join(parts)


def _show(value: _Symbol) -> str:
    if isinstance(value, _Const):
        return value.text()
    if isinstance(value, _Fresh):
        return f"a fresh {value.factory}()"
    if isinstance(value, _Unreadable):
        return "nothing (unreadable)"
    return f"the stored {value.field}"


def _template_reasons(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    old_enc: Mapping[str, Any],
    new_enc: Mapping[str, Any],
) -> list[str]:
    reasons: list[str] = []
    if before["template"] != after["template"]:
        reasons.append(f"template {before['template']!r} -> {after['template']!r}")
    if before["type"] != after["type"]:
        reasons.append(f"attribute type {before['type']} -> {after['type']}")
    for name in sorted(set(before["fields"]) & set(after["fields"])):
        b, a = before["fields"][name], after["fields"][name]
        for param in sorted(set(_codec(b)) | set(_codec(a))):
            if b.get(param) != a.get(param):
                reasons.append(f"field {name}: {param} {b.get(param)!r} -> {a.get(param)!r}")
        reasons.extend(f"field {name}: {c}" for c in format_changes(b, a))
    if old_enc["delimiter"] != new_enc["delimiter"] and old_enc["delimiter"] in before["template"]:
        reasons.append(f"delimiter {old_enc['delimiter']!r} -> {new_enc['delimiter']!r}")
    escaped = any(f.get("escaped") for f in before["fields"].values())
    if escaped:
        for param in ("escape", "escape_scheme_version"):
            if old_enc[param] != new_enc[param]:
                reasons.append(f"{param} {old_enc[param]!r} -> {new_enc[param]!r}")
    return reasons


@dataclass
class _KeyFindings:
    """What happens to one index's key attributes (merged over its attributes)."""

    attributes: dict[str, list[str]]  # category -> the attributes it concerns
    missing: list[str]
    stranded: list[str]
    changed: list[str]
    problems: list[str]
    transforms: list[str]
    olds: list[_Writer]
    news: list[_Writer]


def _key_effects(cmp: _Comparison, key_attributes: Mapping[str, str]) -> Iterator[Effect]:
    """Differences in the key attributes of stored items (table key and every index).

    Key attributes are compared one by one (so an index renamed over the same attributes
    is seen to need no rewrite), then reported per index.

    Args:
        cmp: The two sides.
        key_attributes: Every key attribute of the new table -> the index it keys
            (``"<table>"`` for the table's own key).
    """
    old_writers, new_writers = _writers(cmp.old.entity), _writers(cmp.new.entity)
    by_index: dict[str, _KeyFindings] = {}
    for attribute in sorted(set(old_writers) | set(new_writers)):
        olds, news = old_writers.get(attribute, []), new_writers.get(attribute, [])
        if not news and attribute not in key_attributes:
            continue  # no index reads it any more: a leftover attribute, read by nobody
        index = key_attributes.get(attribute) or (news or olds)[0].index
        found = by_index.setdefault(index, _KeyFindings({}, [], [], [], [], [], [], []))
        found.olds.extend(olds)
        found.news.extend(news)
        missing, stranded, changed = _outcomes(cmp, olds, news) if news else ([], [""], [])
        for category, cases in (("missing", missing), ("stranded", stranded), ("changed", changed)):
            if cases:
                found.attributes.setdefault(category, []).append(attribute)
        found.missing.extend(missing)
        found.stranded.extend(stranded)
        found.changed.extend(changed)
        transform = _key_transform(cmp, olds, news)
        if transform and (missing or stranded or changed):
            found.transforms.append(transform)
        if changed:
            found.problems.extend(
                r
                for w_old, w_new in zip(olds, news, strict=False)
                for r in _template_reasons(
                    w_old.template, w_new.template, cmp.old.encoding, cmp.new.encoding
                )
            )
    for index in sorted(by_index, key=lambda i: (i != "<table>", i)):
        yield from _index_effects(index, by_index[index])


_CATEGORIES = ("missing", "stranded", "changed")


def _index_effects(index: str, found: _KeyFindings) -> Iterator[Effect]:
    subject = f"{index} key"
    names = {category: ", ".join(found.attributes.get(category, ())) for category in _CATEGORIES}
    transform = "; ".join(dict.fromkeys(found.transforms)) or None
    if found.missing:
        yield Effect(
            subject,
            f"{_cases(found.missing)} are not in {index} but the new model writes "
            f"{names['missing']} "
            "for them: they are missing from the index until rewritten",
            needs_transform=transform,
        )
    if found.stranded:
        yield Effect(
            subject,
            f"{_cases(found.stranded)} carry {names['stranded']}, but the new model writes "
            f"none for them: they stay in {index} until rewritten",
            needs_transform=transform,
        )
    if found.changed:
        what = "; ".join(dict.fromkeys(found.problems)) or "the key text the new model writes"
        yield Effect(
            subject,
            f"what the entity writes into {names['changed']} changes ({what}) for "
            f"{_cases(found.changed)}: they no longer match and must be rewritten under the "
            "new keys",
            needs_transform=transform,
        )
    if not (found.missing or found.stranded or found.changed):
        yield from _unchanged_note(subject, index, found.olds, found.news)


def _outcomes(
    cmp: _Comparison, olds: Sequence[_Writer], news: Sequence[_Writer]
) -> tuple[list[str], list[str], list[str]]:
    """The cases in which stored items are missing from, stranded in, or moved in a key.

    Every combination of "stored / not stored" of the nullable fields the key depends on
    is rendered on both sides.
    """
    fields = sorted(
        {f for w in (*olds, *news) for f in (*w.template["fields"], *w.sparse)},
    )
    options = [cmp.fields_stored(f) for f in fields]
    if sum(len(o) > 1 for o in options) > _MAX_CASES_FIELDS:
        options = [[o[0]] for o in options]
    missing: list[str] = []
    stranded: list[str] = []
    changed: list[str] = []
    for combo in itertools.product(*options):
        case = dict(zip(fields, combo, strict=True))
        old_key = _member_key(
            olds, {f: cmp.old_value(f, s) for f, s in case.items()}, cmp.old.encoding
        )
        new_key = _member_key(
            news, {f: cmp.new_value(f, s) for f, s in case.items()}, cmp.new.encoding
        )
        if new_key is _UNREADABLE or (old_key is None and new_key is None):
            continue  # an unreadable field is reported with its attribute
        where = _describe_case(case, cmp)
        if old_key is None:
            missing.append(where)
        elif new_key is None:
            stranded.append(where)
        elif not _same_rendering(old_key, new_key):
            changed.append(where)
    return missing, stranded, changed


def _unchanged_note(
    subject: str, index: str, olds: Sequence[_Writer], news: Sequence[_Writer]
) -> Iterator[Effect]:
    """A "safe" line for a key the entity newly writes without changing any stored item."""
    old_indexes = {w.index for w in olds}
    fresh = sorted({w.index for w in news} - old_indexes)
    if fresh == [] and olds:
        return
    if not olds:
        yield Effect(
            subject,
            f"no stored item belongs in {index}: the fields it depends on read as None "
            "for every stored item, as they would be written by the new model",
            rewrite=False,
        )
    elif fresh:
        yield Effect(
            subject,
            f"stored items already carry exactly these keys (written for "
            f"{', '.join(sorted(old_indexes))}), so {', '.join(fresh)} backfills them "
            "without a rewrite",
            rewrite=False,
        )


_UNREADABLE: Any = object()


def _member_key(
    writers: Sequence[_Writer], values: Mapping[str, _Symbol], encoding: Mapping[str, Any]
) -> Any:
    """The rendered key of the first writer the item belongs to.

    ``None`` when the item is in none of them (sparse), `_UNREADABLE` when a field it
    depends on does not decode.
    """
    for writer in writers:
        symbols = [values.get(f, _NONE) for f in (*writer.sparse, *writer.template["fields"])]
        if any(isinstance(s, _Unreadable) for s in symbols):
            return _UNREADABLE
        if any(values.get(f, _NONE) == _NONE for f in writer.sparse):
            continue
        rendered = _render(writer.template, values, encoding)
        if rendered is None:
            return _UNREADABLE
        return rendered
    return None


def _cases(cases: Sequence[str]) -> str:
    """Which stored items a difference concerns (a case is "" when it is all of them)."""
    unique = list(dict.fromkeys(cases))
    if "" in unique:
        return "stored items"
    more = f"; and {len(unique) - 3} more cases" if len(unique) > 3 else ""
    return "stored items where " + "; ".join(unique[:3]) + more


def _key_transform(
    cmp: _Comparison, olds: Sequence[_Writer], news: Sequence[_Writer]
) -> str | None:
    """Why a stored value cannot be written into the new key, if it cannot."""
    reasons: list[str] = []
    for new in news:
        for name, params in new.template["fields"].items():
            if name not in cmp.old.attributes:
                pass
            elif any(name in old.template["fields"] for old in olds):
                for old in olds:
                    before = old.template["fields"].get(name)
                    if before is not None:
                        why = _narrowing(before, params, f"field {name}")
                        if why is not None:
                            reasons.append(why)
            else:
                # A field this key did not hold before (e.g. a new index): its stored
                # values are those its type allows, unless the table's own key (written
                # on every item) already narrowed them.
                domain = _table_key_codec(cmp.old.entity, name) or _attribute_domain(
                    cmp.old.attributes[name], params
                )
                why = None if domain is None else _narrowing(domain, params, f"field {name}")
                if why is not None:
                    reasons.append(why)
            if f"attribute {name}" in cmp.transforms:
                reasons.append(cmp.transforms[f"attribute {name}"])
    return "; ".join(dict.fromkeys(reasons)) or None


def _table_key_codec(entity: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    """The key codec of field ``name`` in the entity's table key, if the key holds it."""
    table_key = entity["keys"].get("<table>", {})
    for part in ("pk", "sk"):
        codec = (table_key.get(part) or {}).get("fields", {}).get(name)
        if codec is not None:
            return cast("Mapping[str, Any]", codec)
    return None


def _attribute_domain(
    attribute: Mapping[str, Any], key: Mapping[str, Any]
) -> Mapping[str, Any] | None:
    """The values an attribute may hold (any of its type's), as a codec of ``key``'s kind.

    Only for the key codecs that take fewer values than their type: fixed-width ints and
    datetimes coarser than microseconds. ``None`` for the others.
    """
    python, kind = attribute.get("python"), key.get("kind")
    if python == "int" and kind == "fixed_int":
        return {**{k: v for k, v in key.items() if k != "width"}, "kind": "int"}
    if python == "datetime" and kind == "datetime":
        return {**key, "precision": "us"}
    return None


def _attribute_effects(cmp: _Comparison) -> Iterator[Effect]:
    """Differences in the stored (non-key) attributes of the entity's fields."""
    before_all, after_all = cmp.old.attributes, cmp.new.attributes
    for name in sorted(set(before_all) | set(after_all)):
        before, after = before_all.get(name), after_all.get(name)
        subject = f"attribute {name}"
        if after is None:
            yield Effect(
                subject,
                "field removed: reads ignore the stored attribute (it stays until items are "
                "rewritten)",
                rewrite=False,
            )
            continue
        if before is not None and _stores_none(before) and not after.get("nullable"):
            yield Effect(
                subject,
                "no longer optional: items that store None (as NULL, the field's default "
                "being another value) do not validate",
                unreadable=True,
                needs_transform=f"field {name}: stored None values have no value in the new model",
            )
        if before is not None:
            b, a = _codec(before), _codec(after)
            if _numbers_convert(before, after) and b != a:
                yield Effect(
                    subject,
                    f"stored values now read as {a.get('python')} ({_text(b)} -> {_text(a)}); "
                    "the new model may store or key them differently",
                )
            elif not _widens(b, a):
                yield Effect(
                    subject,
                    f"stored type changes ({_text(b)} -> {_text(a)}): stored values may no "
                    "longer decode or validate",
                    unreadable=True,
                    needs_transform=_narrowing(before, after, f"field {name}"),
                )
                continue
            elif b != a:
                yield Effect(
                    subject,
                    f"allowed values widen ({_text(b)} -> {_text(a)}): every stored value "
                    "still decodes and is stored alike",
                    rewrite=False,
                )
            formats = format_changes(before, after)
            if formats:
                yield Effect(
                    subject,
                    "; ".join(formats) + ": the new model writes stored values differently "
                    "(reads still work); rewrite so that conditions and filters compare them "
                    "correctly",
                )
        if False not in cmp.fields_stored(name):
            continue
        old_absent, new_absent = _absent_value(before), _absent_value(after)
        if isinstance(old_absent, _Unreadable):
            continue  # the old model did not read such items either (a None in Any)
        if isinstance(new_absent, _Unreadable):
            yield Effect(
                subject,
                (
                    "new required field without a default"
                    if before is None
                    else "the field becomes required without a default"
                )
                + ": stored items without it fail validation; give it a default or make it "
                "optional",
                unreadable=True,
                needs_transform=f"field {name}: stored items without it have no value for it",
            )
        elif old_absent != new_absent:
            what = "new field" if before is None else "items stored without it"
            yield Effect(
                subject,
                f"{what}: stored items lack the attribute and now read it as "
                f"{_show(new_absent)} (was {_show(old_absent)}), which the new model would "
                "store; conditions, filters and index keys do not see it until rewritten",
            )
        elif before is None:
            yield Effect(
                subject,
                "new optional field: stored items read it as None, which the new model also "
                "stores by omitting the attribute",
                rewrite=False,
            )


def entity_effects(
    old_table: Mapping[str, Any],
    new_table: Mapping[str, Any],
    old_id: str,
    new_id: str,
) -> list[Effect]:
    """Every way the stored items of one entity differ under the new model.

    Args:
        old_table: The snapshot section of the table the items were written with.
        new_table: The same table as the current model describes it.
        old_id: The entity's identifier in the old section (``"AuditEvent@1"``).
        new_id: The paired entity in the new section.
    """
    old = _Side(old_table["entities"][old_id], old_table["encoding"])
    new = _Side(new_table["entities"][new_id], new_table["encoding"])
    cmp = _Comparison(old, new)
    effects: list[Effect] = []
    if old_id != new_id:
        effects.append(
            Effect(
                "identifier",
                f"the stored identifier changes ({old_id} -> {new_id}): items written as "
                f"{old_id} must be rewritten to be found as the new entity",
            )
        )
    for param in ("entity_attribute", "version_attribute"):
        if old.encoding[param] != new.encoding[param]:
            effects.append(
                Effect(
                    "identifier",
                    f"{param} {old.encoding[param]!r} -> {new.encoding[param]!r}: every stored "
                    "item carries its identifier under the old name",
                )
            )
    effects.extend(_key_effects(cmp, _key_attributes(new_table)))
    effects.extend(_attribute_effects(cmp))
    effects.extend(_ttl_effects(cmp, old_table, new_table))
    return effects


def _ttl_effects(
    cmp: _Comparison, old_table: Mapping[str, Any], new_table: Mapping[str, Any]
) -> Iterator[Effect]:
    """A difference in the TTL attribute stored items carry (name, field, encoding)."""
    old_field, new_field = cmp.old.entity["ttl_field"], cmp.new.entity["ttl_field"]
    old_attr = old_table["settings"]["ttl_attribute"] if old_field else None
    new_attr = new_table["settings"]["ttl_attribute"] if new_field else None
    reasons: list[str] = []
    if old_field != new_field:
        reasons.append(f"field {old_field!r} -> {new_field!r}")
    if old_attr != new_attr:
        reasons.append(f"attribute {old_attr!r} -> {new_attr!r}")
    old_format = old_table["encoding"].get("ttl_format")
    new_format = new_table["encoding"].get("ttl_format")
    if old_field and new_field and old_format and new_format and old_format != new_format:
        reasons.append(f"stored format {old_format} -> {new_format}")
    if old_field and old_field == new_field:
        b, a = cmp.old.attributes.get(old_field), cmp.new.attributes.get(new_field)
        if b is not None and a is not None and _codec(b).get("python") != _codec(a).get("python"):
            reasons.append(f"field type {_codec(b).get('python')} -> {_codec(a).get('python')}")
    if reasons:
        yield Effect(
            "ttl",
            f"the TTL the entity writes changes ({', '.join(reasons)}): stored items keep the "
            "old expiry until rewritten",
        )


def _key_attributes(table: Mapping[str, Any]) -> dict[str, str]:
    found: dict[str, str] = {}
    for index, entry in table["indexes"].items():
        for role in ("pk", "sk"):
            if entry.get(role):
                found.setdefault(entry[role]["attribute"], index)
    for role in ("pk", "sk"):
        if table["key"].get(role):
            found[table["key"][role]["attribute"]] = "<table>"
    return found
