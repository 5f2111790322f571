"""What a model change does to the key attributes of stored items (table key, every index).

Every combination of "attribute stored / not stored" of the nullable fields a key depends
on is rendered on both sides: index membership (sparse indexes), template text, codec
parameters and stored-format ids, escaping.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from singletable.keys.formats import format_version
from singletable.tooling.migrations.codec_changes import (
    codec_params,
    format_changes,
    narrowing,
    widens,
)
from singletable.tooling.migrations.sides import (
    NONE,
    Comparison,
    Effect,
    Symbol,
    Unreadable,
    show,
)

__all__ = ["key_effects"]

#: Above this many nullable fields in one key, combinations are not enumerated: the key
#: is reported as changed unless both sides are identical (conservative, never "safe").
_MAX_CASES_FIELDS = 8


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


def _render(
    template: Mapping[str, Any],
    values: Mapping[str, Symbol],
    encoding: Mapping[str, Any],
) -> tuple[Any, ...] | None:
    """A comparable form of the key text a template writes, or None if it cannot."""
    parts: list[Any] = [template["attribute"], template["type"]]
    for segment in _segments(template):
        if isinstance(segment, str):
            parts.append(segment)
            continue
        name, params = segment
        value = values.get(name, NONE)
        if isinstance(value, Unreadable):
            return None
        escape = (
            (encoding["escape"], encoding["escape_scheme_version"]) if params.get("escaped") else ()
        )
        parts.append((value, codec_params(params), params.get("format"), escape))
    return tuple(parts)


def _same_rendering(old: tuple[Any, ...], new: tuple[Any, ...]) -> bool:
    if len(old) != len(new):
        return False
    for b, a in zip(old, new, strict=False):
        if isinstance(b, tuple) and isinstance(a, tuple):
            (bv, bc, bf, be), (av, ac, af, ae) = b, a
            if bv != av or not widens(bc, ac) or be != ae:
                return False
            if bf != af and not (bf is None and af is not None and format_version(af) == 1):
                return False
        elif b != a:
            return False
    return True


def _describe_case(case: Mapping[str, bool], cmp: Comparison) -> str:
    parts = []
    for field, stored in sorted(case.items()):
        if stored:
            continue
        before, after = cmp.old_value(field, False), cmp.new_value(field, False)
        if field not in cmp.old.attributes:
            parts.append(f"{field} is new (stored items lack it; it reads as {show(after)})")
        else:
            parts.append(f"{field} not stored (read as {show(before)}, now {show(after)})")
    return "; ".join(parts)


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
        for param in sorted(set(codec_params(b)) | set(codec_params(a))):
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


def key_effects(cmp: Comparison, key_attributes: Mapping[str, str]) -> Iterator[Effect]:
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
    cmp: Comparison, olds: Sequence[_Writer], news: Sequence[_Writer]
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
    writers: Sequence[_Writer], values: Mapping[str, Symbol], encoding: Mapping[str, Any]
) -> Any:
    """The rendered key of the first writer the item belongs to.

    ``None`` when the item is in none of them (sparse), `_UNREADABLE` when a field it
    depends on does not decode.
    """
    for writer in writers:
        symbols = [values.get(f, NONE) for f in (*writer.sparse, *writer.template["fields"])]
        if any(isinstance(s, Unreadable) for s in symbols):
            return _UNREADABLE
        if any(values.get(f, NONE) == NONE for f in writer.sparse):
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


def _key_transform(cmp: Comparison, olds: Sequence[_Writer], news: Sequence[_Writer]) -> str | None:
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
                        why = narrowing(before, params, f"field {name}")
                        if why is not None:
                            reasons.append(why)
            else:
                # A field this key did not hold before (e.g. a new index): its stored
                # values are those its type allows, unless the table's own key (written
                # on every item) already narrowed them.
                domain = _table_key_codec(cmp.old.entity, name) or _attribute_domain(
                    cmp.old.attributes[name], params
                )
                why = None if domain is None else narrowing(domain, params, f"field {name}")
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
    datetimes coarser than microseconds. ``None`` for the others. A Literal of ints allows
    just its values: their domain is an int's when one of them does not fit the width.
    """
    python, kind = attribute.get("python"), key.get("kind")
    if kind == "fixed_int" and python in ("int", "literal"):
        limit = 10 ** int(key["width"])
        values = attribute.get("values", ()) if python == "literal" else None
        if values is not None and all(0 <= v < limit for v in values if type(v) is int):
            return None
        return {**{k: v for k, v in key.items() if k != "width"}, "kind": "int"}
    if python == "datetime" and kind == "datetime":
        return {**key, "precision": "us"}
    return None
