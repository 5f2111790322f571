"""Key templates: ``"EVT#{ts}#{seq}"`` parsed once into a formatter, prefix builder and parser.

A template is split on the table's delimiter into segments. Each segment is either a
literal (``EVT``) or exactly one field placeholder (``{ts}``). Field values are encoded
by their key codec and escaped by the table's `SegmentEscaper`, so an encoded segment
never contains the delimiter and every key's byte order is the tuple order of its field
values (see ``docs/architecture.md``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, Literal

from singletable.attributes.numbers import number_text
from singletable.errors import (
    ItemEncodeError,
    KeyDecodeError,
    KeyEncodeError,
    KeyTooLargeError,
    ModelDefinitionError,
    TextEncodeError,
)
from singletable.keys.codec_base import KeyCodec
from singletable.keys.escaping import LONE_SURROGATE, SegmentEscaper
from singletable.types import frozen_dataclass

FIELD_SEGMENT = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")

#: DynamoDB's size limits for key attribute values, in UTF-8 bytes.
MAX_PARTITION_KEY_BYTES = 2048
MAX_SORT_KEY_BYTES = 1024


@frozen_dataclass
class FieldSegment:
    """One ``{field}`` segment of a template, with the codec that encodes its values."""

    name: str
    codec: KeyCodec[Any]
    escaped: bool


Segment = str | FieldSegment


def _utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


class KeyTemplate:
    """A compiled key template for one key attribute of one entity.

    Args:
        source: The template text, e.g. ``"EVT#{ts}#{seq}"``.
        attribute: The key attribute it fills, e.g. ``"SK"``.
        role: ``"pk"`` or ``"sk"`` (decides the size limit).
        key_type: DynamoDB type of the attribute: ``"S"``, or ``"N"`` for a lone number field.
        escaper: The table's segment escaper (knows the delimiter).
        codecs: The key codec of every field the template names.
        where: How errors name this template's owner, e.g. ``"entity AuditEvent"``.
    """

    def __init__(
        self,
        source: str,
        *,
        attribute: str,
        role: Literal["pk", "sk"],
        key_type: Literal["S", "N", "B"],
        escaper: SegmentEscaper,
        codecs: Mapping[str, KeyCodec[Any]],
        where: str,
    ) -> None:
        self.source = source
        self.attribute = attribute
        self.role = role
        self.key_type = key_type
        self.escaper = escaper
        self.delimiter = escaper.delimiter
        self.where = f"{where}, {role} template {source!r}"
        #: The UTF-8 bytes this template's text may take: DynamoDB's key limit, less what
        #: the stored key holds before the text (`stored_after`).
        self.max_bytes = MAX_PARTITION_KEY_BYTES if role == "pk" else MAX_SORT_KEY_BYTES
        #: The UTF-8 bytes the stored key holds before this template's text.
        self.outer_bytes = 0
        self.segments: tuple[Segment, ...] = self._parse(source, codecs)
        self.fields: tuple[str, ...] = tuple(
            s.name for s in self.segments if isinstance(s, FieldSegment)
        )
        # Literal segments before the first field: the part every key of the entity shares.
        leading: list[str] = []
        for segment in self.segments:
            if isinstance(segment, FieldSegment):
                break
            leading.append(segment)
        self.literal_prefix = "".join(s + self.delimiter for s in leading)
        self._field_index = {name: i for i, name in enumerate(self.fields)}
        if key_type != "S":
            self._check_native_number()

    # -- parsing the template ----------------------------------------------------------

    def _parse(self, source: str, codecs: Mapping[str, KeyCodec[Any]]) -> tuple[Segment, ...]:
        if not source:
            raise ModelDefinitionError(f"{self.where}: a key template cannot be empty")
        segments: list[Segment] = []
        seen: set[str] = set()
        for raw in source.split(self.delimiter):
            match = FIELD_SEGMENT.fullmatch(raw)
            if match:
                name = match.group(1)
                if name in seen:
                    raise ModelDefinitionError(f"{self.where}: field {name!r} appears twice")
                seen.add(name)
                if name not in codecs:
                    raise ModelDefinitionError(
                        f"{self.where}: unknown field {name!r}; the template can only name "
                        f"fields of the model ({', '.join(sorted(codecs)) or 'none'})"
                    )
                codec = codecs[name]
                segments.append(FieldSegment(name, codec, self.escaper.needed_for(codec)))
                continue
            if not raw:
                raise ModelDefinitionError(
                    f"{self.where}: empty segment (two delimiters {self.delimiter!r} in a row, "
                    "or one at the start or end); every segment needs a literal or one field"
                )
            if "{" in raw or "}" in raw:
                raise ModelDefinitionError(
                    f"{self.where}: segment {raw!r} mixes literal text and a field or has a "
                    f"stray brace; put the delimiter {self.delimiter!r} between a literal and "
                    "a field, and use one field per segment"
                )
            bad = [c for c in raw if c <= self.escaper.escape_char]
            if bad:
                raise ModelDefinitionError(
                    f"{self.where}: literal segment {raw!r} contains {bad[0]!r}; literal text "
                    f"must not contain characters at or below the escape character "
                    f"{self.escaper.escape_char!r} (they would break key order)"
                )
            segments.append(raw)
        return tuple(segments)

    def _check_native_number(self) -> None:
        if self.key_type == "B":
            raise ModelDefinitionError(
                f"{self.where}: binary key attributes are not supported by key templates"
            )
        if len(self.segments) != 1 or not isinstance(self.segments[0], FieldSegment):
            raise ModelDefinitionError(
                f"{self.where}: attribute {self.attribute!r} is a Number; its template must "
                "be a single numeric field such as '{seq}'"
            )
        kind = self.segments[0].codec.params().get("kind")
        if kind not in ("int", "fixed_int", "decimal", "float"):
            raise ModelDefinitionError(
                f"{self.where}: attribute {self.attribute!r} is a Number but field "
                f"{self.segments[0].name!r} is not numeric ({kind})"
            )

    # -- encoding ----------------------------------------------------------------------

    def _encode_field(self, segment: FieldSegment, value: Any) -> str:
        try:
            text = segment.codec.encode(value)
        except KeyEncodeError as exc:
            raise KeyEncodeError(f"{self.where}: field {segment.name!r}: {exc}") from None
        return self._escaped(segment, text)

    def _escaped(self, segment: FieldSegment, text: str) -> str:
        """A field's key text escaped, refused if it holds text UTF-8 cannot encode."""
        if not text.isascii():
            lone = LONE_SURROGATE.search(text)
            if lone is not None:
                # Here the field is known; the request-wide check would name only the
                # key attribute and an index into the whole key.
                raise TextEncodeError(
                    f"{self.where}: field {segment.name!r}: the text holds the lone "
                    f"surrogate U+{ord(lone.group()):04X} at index {lone.start()}; DynamoDB "
                    "strings must be valid UTF-8, which cannot encode one (fix the text, e.g. "
                    "decode its bytes with errors='replace')",
                    where=segment.name,
                )
        return self.escaper.escape(text) if segment.escaped else text

    def _join(self, values: Callable[[str], Any], count: int) -> list[str]:
        """The first segments, up to (not including) the ``count + 1``-th field."""
        parts: list[str] = []
        seen = 0
        for segment in self.segments:
            if isinstance(segment, FieldSegment):
                if seen == count:
                    break
                parts.append(self._encode_field(segment, values(segment.name)))
                seen += 1
            else:
                parts.append(segment)
        return parts

    def _finish(self, key: str) -> str:
        if not key:
            raise KeyEncodeError(
                f"{self.where}: the key is empty; DynamoDB refuses empty key attributes "
                "(give the field a value, or add a literal segment to the template)"
            )
        self.check_size(key, "key")
        return key

    def stored_after(self, prefix: str) -> None:
        """Declare that the stored key holds ``prefix`` before this template's text.

        The text's budget shrinks by the prefix's bytes, while a refusal still states the
        size of the whole stored key against DynamoDB's own limit (a guard key: its prefix,
        then the values this template formats).
        """
        size = _utf8_len(prefix)
        self.outer_bytes += size
        self.max_bytes -= size

    def check_size(self, text: str, what: str) -> None:
        """Refuse key text (a key, or a key condition's bound) over DynamoDB's key limit.

        Raises:
            KeyTooLargeError: ``text`` is over `max_bytes` UTF-8 bytes; the message, `size`
                and `limit` count the stored key whole (`stored_after`'s prefix included).
        """
        if len(text) * 4 > self.max_bytes and _utf8_len(text) > self.max_bytes:
            size = _utf8_len(text) + self.outer_bytes
            limit = self.max_bytes + self.outer_bytes
            raise KeyTooLargeError(
                f"{self.where}: {what} is {size} bytes; DynamoDB's limit for a "
                f"{'partition' if self.role == 'pk' else 'sort'} key is {limit} bytes",
                size=size,
                limit=limit,
            )

    def format(self, values: Mapping[str, Any]) -> str:
        """The full key for these field values (a mapping that has every template field)."""
        missing = [f for f in self.fields if f not in values]
        if missing:
            raise KeyEncodeError(f"{self.where}: missing value for field {missing[0]!r}")
        if self.key_type == "N":
            return self._format_number(values[self.fields[0]])
        return self._finish(self.delimiter.join(self._join(values.__getitem__, len(self.fields))))

    def format_object(self, obj: object) -> str:
        """The full key for a model instance (reads the template fields as attributes)."""
        if self.key_type == "N":
            return self._format_number(getattr(obj, self.fields[0]))
        values = obj.__dict__
        return self._finish(self.delimiter.join(self._join(values.__getitem__, len(self.fields))))

    def _format_number(self, value: Any) -> str:
        segment = self.segments[0]
        assert isinstance(segment, FieldSegment)
        self._encode_field(segment, value)  # validates type and range, naming the field
        try:
            # A Number key is a DynamoDB number: at most 38 significant digits and
            # DynamoDB's magnitude range, checked like any number attribute.
            text = number_text(value, f"{self.where}: field {segment.name!r}")
        except ItemEncodeError as exc:
            raise KeyEncodeError(str(exc)) from None
        # DynamoDB hands numbers back normalised ("1.50" -> "1.5"); send them that way so
        # a key (and a cursor made from one) reads the same in both directions.
        # Plain digits, never the exponent form number text may use for long ints.
        return str(value) if isinstance(value, int) else format(Decimal(text).normalize(), "f")

    def attribute_value(self, key: str) -> dict[str, str]:
        """The low-level AttributeValue for a formatted key."""
        return {self.key_type: key}

    def prefix(self, values: Mapping[str, Any], count: int) -> str:
        """The ``begins_with`` prefix of the keys whose first ``count`` fields equal ``values``.

        The prefix always ends on a segment boundary (with the delimiter), so it selects
        exactly the keys whose first ``count`` fields are equal: ``EVT#1#`` never matches
        ``EVT#10#``. With ``count == 0`` it is the template's literal prefix.
        """
        self._check_count(count, allow_all=False)
        parts = self._join(self._getter(values), count)
        if count < len(self.fields):
            # Also take the literal segments that follow, up to the next field.
            rest = self.segments[len(parts) :]
            for segment in rest:
                if isinstance(segment, FieldSegment):
                    break
                parts.append(segment)
        return "".join(p + self.delimiter for p in parts)

    def partial_prefix(self, values: Mapping[str, Any], count: int, partial: str) -> str:
        """``prefix(values, count)`` followed by a partial value of the next field.

        Used for ``begins_with`` on part of a value, e.g. the timestamp prefix ``2026-06``.
        """
        self._check_count(count, allow_all=False)
        segment = self._field_segment(count)
        try:
            text = segment.codec.encode_prefix(partial)
        except KeyEncodeError as exc:
            raise KeyEncodeError(f"{self.where}: field {segment.name!r}: {exc}") from None
        return self.prefix(values, count) + self._escaped(segment, text)

    def bound(self, values: Mapping[str, Any], count: int) -> str:
        """The key text up to and including the ``count``-th field (no trailing delimiter).

        Every key whose first ``count`` fields equal ``values`` is ``>= bound`` and
        ``< bound + upper_sentinel``.
        """
        self._check_count(count, allow_all=True)
        if count == 0:
            raise KeyEncodeError(f"{self.where}: a bound needs at least one field value")
        parts = self._join(self._getter(values), count)
        return self.delimiter.join(parts)

    @property
    def upper_sentinel(self) -> str:
        """The character just above the delimiter; ``P + sentinel`` ends the keys starting ``P``.

        No valid key contains it right after a complete segment, because it is escaped.
        """
        return chr(ord(self.delimiter) + 1)

    def _field_segment(self, index: int) -> FieldSegment:
        for segment in self.segments:
            if isinstance(segment, FieldSegment):
                if index == 0:
                    return segment
                index -= 1
        raise KeyEncodeError(f"{self.where}: has only {len(self.fields)} fields")

    def _getter(self, values: Mapping[str, Any]) -> Callable[[str], Any]:
        def get(name: str) -> Any:
            try:
                return values[name]
            except KeyError:
                raise KeyEncodeError(f"{self.where}: missing value for field {name!r}") from None

        return get

    def _check_count(self, count: int, *, allow_all: bool) -> None:
        # A begins_with prefix must stop before the last field: with every field given
        # the key is known exactly, and an equality condition is the right tool.
        limit = len(self.fields) if allow_all else len(self.fields) - 1
        if not 0 <= count <= limit:
            raise KeyEncodeError(
                f"{self.where}: cannot build a key range from the first {count} of its "
                f"{len(self.fields)} fields"
            )

    # -- decoding ----------------------------------------------------------------------

    def parse(self, key: str | int | Decimal) -> dict[str, Any]:
        """The field values a key was built from; `KeyDecodeError` if it does not fit."""
        if self.key_type == "N":
            segment = self.segments[0]
            assert isinstance(segment, FieldSegment)
            return {segment.name: self._decode_segment(segment, str(key), number=True)}
        if not isinstance(key, str):
            raise KeyDecodeError(f"{self.where}: expected a string key, got {key!r}")
        parts = key.split(self.delimiter)
        if len(parts) != len(self.segments):
            raise KeyDecodeError(
                f"{self.where}: key {key!r} has {len(parts)} segments, the template has "
                f"{len(self.segments)}"
            )
        result: dict[str, Any] = {}
        for part, segment in zip(parts, self.segments, strict=True):
            if isinstance(segment, FieldSegment):
                result[segment.name] = self._decode_segment(segment, part, number=False)
            elif part != segment:
                raise KeyDecodeError(
                    f"{self.where}: key {key!r} has {part!r} where the template has the "
                    f"literal {segment!r}"
                )
        return result

    def _decode_segment(self, segment: FieldSegment, text: str, *, number: bool) -> Any:
        try:
            if number:
                kind = segment.codec.params().get("kind")
                return (
                    float(text)
                    if kind == "float"
                    else Decimal(text)
                    if kind == "decimal"
                    else int(text)
                )
            raw = self.escaper.unescape(text) if segment.escaped else text
            return segment.codec.decode(raw)
        except (KeyDecodeError, ValueError, ArithmeticError) as exc:
            raise KeyDecodeError(f"{self.where}: field {segment.name!r}: {exc}") from None

    def describe(self) -> dict[str, Any]:
        """A JSON-able description (for snapshots and docs)."""
        return {
            "attribute": self.attribute,
            "template": self.source,
            "type": self.key_type,
            "fields": {
                s.name: {**s.codec.params(), "escaped": s.escaped}
                for s in self.segments
                if isinstance(s, FieldSegment)
            },
        }

    def __repr__(self) -> str:
        return f"KeyTemplate({self.source!r}, attribute={self.attribute!r})"
