"""JSON Lines in: the input of ``singletable load``, parsed, validated and checked.

`JsonLines` reads one JSON object per line, parsed and validated by pydantic (exact
Decimals, datetimes, UUIDs), each line's entity named by ``--entity`` or by the table's
entity attribute (``_et``) in the line. `check` is the validation pass the command runs
over the whole file before writing anything: every line parsed and encoded as a write
would encode it, and keys given twice found with the load's own `KeySet`.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from pydantic import AliasChoices, AliasPath, BaseModel, ValidationError

from singletable.errors import SingleTableError
from singletable.keys.escaping import LONE_SURROGATE
from singletable.model.plan import EntityPlan, entity_plans, plan_of
from singletable.model.table import Table
from singletable.operations.common import stamp_times, utc_now
from singletable.tooling.bulk.load import KeySet

#: How many invalid lines `check` keeps (the others are only counted).
MAX_ERRORS = 20


class LineError(SingleTableError, ValueError):
    """A line of a JSON Lines file that cannot be loaded (``line``: its 1-based number)."""

    def __init__(self, message: str, *, line: int = 0) -> None:
        super().__init__(message)
        self.line = line


def _input_keys(model: type[BaseModel]) -> dict[str, str]:
    """Each top-level key pydantic reads for ``model``'s fields (names, aliases): its field."""
    keys: dict[str, str] = {}
    for name, info in model.model_fields.items():
        keys[name] = name
        for alias in (info.alias, info.validation_alias):
            choices = alias.choices if isinstance(alias, AliasChoices) else [alias]
            for choice in choices:
                if isinstance(choice, str):
                    keys.setdefault(choice, name)
                elif isinstance(choice, AliasPath) and isinstance(choice.path[0], str):
                    keys.setdefault(choice.path[0], name)
    return keys


def _rounded(raw: Any, value: Any, path: tuple[str | int, ...]) -> str | None:
    """Where a JSON integer became a float that is not equal to it, and how, else ``None``.

    ``raw`` is the parsed line (exact ints) and ``value`` what pydantic made of it,
    walked side by side: an integer beyond 2**53 read into a float field is rounded.
    """
    if isinstance(raw, int) and not isinstance(raw, bool):
        if isinstance(value, float) and value != raw:  # int == float compares exactly
            where = ".".join(map(str, path))
            return (
                f"field {where!r}: the JSON number {raw} is not exactly a float (the field's "
                f"type): it would be stored as {value!r}; give a number the float holds, or "
                "make the field an int or a Decimal"
            )
        return None
    pairs: Iterable[tuple[str | int, Any, Any]] = ()
    if isinstance(raw, dict) and isinstance(value, BaseModel):
        names = _input_keys(type(value))
        pairs = ((k, v, getattr(value, names[k])) for k, v in raw.items() if k in names)
    elif isinstance(raw, dict) and isinstance(value, dict):
        pairs = ((k, v, value[k]) for k, v in raw.items() if k in value)
    elif isinstance(raw, list) and isinstance(value, (list, tuple)) and len(raw) == len(value):
        pairs = ((i, r, v) for i, (r, v) in enumerate(zip(raw, value, strict=True)))
    for step, inner_raw, inner in pairs:
        found = _rounded(inner_raw, inner, (*path, step))
        if found is not None:
            return found
    return None


# pydantic 2.12+ can ignore undeclared keys per call: a model that forbids extra fields
# then still validates a line that names its entity (``_et``). Undeclared keys are refused
# by `JsonLines` itself, with the entity's field list.
_IGNORE_EXTRA: dict[str, Any] = (
    {"extra": "ignore"}
    if "extra" in inspect.signature(BaseModel.model_validate_json).parameters
    else {}
)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            # JSON parsers keep one of the two values: the other would be lost silently.
            raise LineError(f"the key {key!r} appears twice in one object")
        seen.add(key)
    return dict(pairs)


def _json_type(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _unreadable(value: Any, path: tuple[str | int, ...]) -> str | None:
    """What in a parsed line cannot be stored as written (and where), else ``None``.

    A number that a 64-bit float does not hold exactly (pydantic reads JSON numbers as
    floats), or text with a lone surrogate (an escaped half of a surrogate pair).
    """
    where = ".".join(map(str, path))
    if isinstance(value, Decimal):
        if value.is_finite() and Decimal(repr(float(value))) == value:
            return None
        return (
            f"field {where!r}: the JSON number {value} cannot be read exactly (pydantic "
            f"reads JSON numbers as 64-bit floats: it would become {float(value)!r}); write "
            f'it as a string, "{value}", to keep every digit'
        )
    if isinstance(value, str):
        lone = LONE_SURROGATE.search(value)
        if lone is None:
            return None
        return (
            f"field {where!r}: the text holds the lone surrogate U+{ord(lone.group()):04X} "
            f"at index {lone.start()} (an escape without its pair), which UTF-8 cannot encode"
        )
    if isinstance(value, dict):
        for key, inner in value.items():
            found = _unreadable(key, (*path, "<key>")) or _unreadable(inner, (*path, key))
            if found is not None:
                return found
    if isinstance(value, list):
        for index, inner in enumerate(value):
            found = _unreadable(inner, (*path, index))
            if found is not None:
                return found
    return None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _validation_message(plan: EntityPlan, exc: ValidationError) -> str:
    parts = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(p) for p in error["loc"])
        got = "" if error["type"] == "missing" else f" (got {_shown(error['input'])})"
        parts.append(f"field {where!r}: {error['msg']}{got}" if where else error["msg"] + got)
    return f"{plan.label}: " + "; ".join(parts)


class JsonLines:
    """Entity instances from JSON Lines: one JSON object per line, holding an entity's fields.

    Which entity a line holds: ``entity`` for every line, or else the line's entity
    attribute (the table's ``entity_attribute``, ``_et`` by default) naming it. An entity
    is named by its stored name (``Order``), optionally qualified as ``TABLE/NAME`` and
    ``NAME@VERSION`` when that alone is ambiguous.

    Lines are UTF-8; a byte order mark before the first line, CR LF line ends and blank
    lines (skipped) are accepted. A top-level key that is no field of the entity is an
    error (it would be dropped silently otherwise), and so is a key given twice in one
    object. Values are validated by pydantic from the JSON text (``model_validate_json``:
    datetimes, UUIDs, enums as pydantic reads JSON). pydantic reads a JSON number with a
    fraction or an exponent as a 64-bit float, so a number that a float does not hold
    exactly (``12345678901234567890.10``, ``1e400``) is an error rather than a silent
    rounding: write such a Decimal as a string (``"12345678901234567890.10"``). So is an
    integer that a float field does not hold exactly (``9007199254740993``).
    """

    def __init__(self, tables: Sequence[Table], *, entity: str | None = None) -> None:
        self.plans = [plan for table in tables for plan in entity_plans(table)]
        self.attributes = sorted({table.entity_attribute for table in tables})
        self._keys: dict[int, dict[str, str]] = {}
        self._named: dict[str, EntityPlan | str] = {}
        self.entity: EntityPlan | None = None
        if entity is not None:
            found = self.resolve(entity)
            if isinstance(found, str):
                raise LineError(found)
            self.entity = found

    def resolve(self, name: str) -> EntityPlan | str:
        """The entity ``name`` names, or the message saying why none or several."""
        cached = self._named.get(name)
        if cached is not None:
            return cached
        table, _, rest = name.rpartition("/")
        entity, _, version = rest.partition("@")
        found = [
            p
            for p in self.plans
            if p.name == entity
            and (not table or p.table.name == table)
            and (not version or str(p.version) == version)
        ]
        known = ", ".join(sorted({p.name for p in self.plans})) or "none"
        if not found:
            result: EntityPlan | str = f"unknown entity {name!r} (the model's entities: {known})"
        elif len(found) > 1:
            listed = ", ".join(f"{p.table.name}/{p.name}@{p.version}" for p in found)
            result = f"entity {name!r} is ambiguous ({listed}); name one as TABLE/NAME@VERSION"
        else:
            result = found[0]
        self._named[name] = result
        return result

    def parse(self, raw: bytes | str) -> BaseModel:
        """The entity instance one line holds.

        Raises:
            LineError: The line is not UTF-8, not a JSON object, names an unknown entity,
                holds a key that is no field, or a value pydantic refuses.
        """
        try:
            text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        except UnicodeDecodeError as exc:
            raise LineError(
                f"not UTF-8: byte 0x{exc.object[exc.start]:02X} at column {exc.start + 1}"
            ) from None
        try:
            # Exact numbers (Decimal for every literal with a fraction or exponent), to
            # find the ones pydantic would read inexactly (below); a key twice refused.
            envelope = json.loads(text, parse_float=Decimal, object_pairs_hook=_unique_keys)
        except ValueError as exc:
            raise LineError(f"invalid JSON: {exc}") from None
        if not isinstance(envelope, dict):
            raise LineError(f"expected a JSON object, got {_json_type(envelope)}")
        plan = self._plan_of(envelope)
        keys = self._keys.get(id(plan))
        if keys is None:
            keys = self._keys[id(plan)] = _input_keys(plan.model)
        unknown = [k for k in envelope if k not in keys and k not in self.attributes]
        if unknown:
            fields = ", ".join(plan.model.model_fields)
            raise LineError(
                f"{plan.label}: unknown field {unknown[0]!r}"
                + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else "")
                + f"; its fields: {fields}"
            )
        unreadable = _unreadable(envelope, ())
        if unreadable is not None:
            raise LineError(f"{plan.label}: {unreadable}")
        try:
            # Field names as well as aliases: an export writes a field that has only a
            # validation alias under its name.
            obj = plan.model.model_validate_json(text, by_name=True, **_IGNORE_EXTRA)
        except ValidationError as exc:
            raise LineError(_validation_message(plan, exc)) from None
        rounded = _rounded(envelope, obj, ())
        if rounded is not None:
            raise LineError(f"{plan.label}: {rounded}")
        return obj

    def _plan_of(self, envelope: dict[str, Any]) -> EntityPlan:
        named = {envelope[a] for a in self.attributes if a in envelope}
        if len(named) > 1:
            raise LineError(f"the line names several entities: {sorted(map(str, named))}")
        if self.entity is not None:
            if named and named != {self.entity.name}:
                raise LineError(
                    f"the line names entity {named.pop()!r}, not {self.entity.name!r} (--entity)"
                )
            return self.entity
        if not named:
            attrs = " or ".join(repr(a) for a in self.attributes)
            raise LineError(f"no entity: give --entity NAME, or name it in the line as {attrs}")
        name = named.pop()
        if not isinstance(name, str):
            raise LineError(f"the entity name must be a string, got {_shown(name)}")
        found = self.resolve(name)
        if isinstance(found, str):
            raise LineError(found)
        return found

    def read(self, lines: Iterable[bytes]) -> Iterator[tuple[int, BaseModel | LineError | None]]:
        """``(line number, instance or error)`` for every line; ``None`` for a blank line."""
        for number, raw in enumerate(lines, 1):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw.strip():
                yield number, None
                continue
            try:
                yield number, self.parse(raw)
            except LineError as exc:
                exc.line = number
                yield number, exc

    def objects(self, lines: Iterable[bytes]) -> Iterator[BaseModel]:
        """The instances of every line, blank lines skipped.

        Raises:
            LineError: A line is not valid (run `check` first to see them all).
        """
        for number, parsed in self.read(lines):
            if isinstance(parsed, LineError):
                raise LineError(f"line {number}: {parsed}", line=number)
            if parsed is not None:
                yield parsed


@dataclass
class CheckReport:
    """What the validation pass found in a JSON Lines file."""

    lines: int = 0
    #: Line numbers of blank lines (skipped).
    blank: list[int] = field(default_factory=list)
    #: Valid items per entity (stored name).
    by_entity: dict[str, int] = field(default_factory=dict)
    #: The tables the valid items go to, by name.
    tables: dict[str, Table] = field(default_factory=dict)
    #: The first invalid lines (up to ``MAX_ERRORS``), each naming its line and problem.
    errors: list[LineError] = field(default_factory=list)
    #: How many lines are invalid in all.
    error_count: int = 0

    @property
    def items(self) -> int:
        """Valid items."""
        return sum(self.by_entity.values())

    def line_of(self, position: int) -> int:
        """The line number of the item at ``position`` (0-based, blank lines skipped)."""
        line = position + 1
        for blank in self.blank:
            if blank > line:
                break
            line += 1
        return line


def check(
    reader: JsonLines, lines: Iterable[bytes], *, max_errors: int = MAX_ERRORS
) -> CheckReport:
    """Parse, validate and encode every line, and find keys given twice; write nothing.

    Each item is encoded as a write would encode it, so key sizes, item size and
    unstorable values are checked too.
    """
    report = CheckReport()
    keys = KeySet(lambda line: f"line {line}")
    now = utc_now()

    def bad(error: LineError) -> None:
        report.error_count += 1
        if len(report.errors) < max_errors:
            report.errors.append(error)

    for number, parsed in reader.read(lines):
        report.lines = number
        if parsed is None:
            report.blank.append(number)
            continue
        if isinstance(parsed, LineError):
            bad(parsed)
            continue
        plan = plan_of(type(parsed))
        try:
            stamped = stamp_times(plan, parsed, now)
            claims = keys.claims(plan, stamped, plan.to_item(stamped))
        except SingleTableError as exc:
            bad(LineError(str(exc), line=number))
            continue
        duplicate = keys.duplicate(claims, number)
        if duplicate is not None:
            bad(LineError(str(duplicate), line=number))
            continue
        keys.add(claims, number)
        report.by_entity[plan.name] = report.by_entity.get(plan.name, 0) + 1
        report.tables[plan.table.name] = plan.table
    return report
