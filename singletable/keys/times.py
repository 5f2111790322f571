"""Key codecs of datetimes (UTC, at a fixed precision) and dates."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Literal

from singletable.attributes.fastpath import Writer, orjson_dumps, orjson_text
from singletable.errors import KeyDecodeError, KeyEncodeError, ModelDefinitionError
from singletable.keys.codec_base import KeyCodec, type_error

_UTC = _dt.timezone.utc

Precision = Literal["s", "ms", "us"]
NaivePolicy = Literal["refuse", "utc"]

#: The timespec (``datetime.isoformat``) of each precision a datetime key field can have.
PRECISION_NAMES = {"s": "seconds", "ms": "milliseconds", "us": "microseconds"}


#: Pattern templates: "9" stands for any ASCII digit, every other char for itself.
_DIGIT_CLASS = str.maketrans("0123456789", "9999999999")


#: Prefix patterns: a digit is the largest digit allowed at that position (month tens
#: <= 1, day tens <= 3, ...), every other char stands for itself.
_DATE_PREFIX_PATTERN = "9999-19-39"
#: Two-digit fields whose complete value is range-checked in prefixes: (start, lo, hi).
_PREFIX_FIELDS = ((5, 1, 12), (8, 1, 31), (11, 0, 23))


def _check_partial(kind: str, partial: str, pattern: str, example: str) -> str:
    if not isinstance(partial, str):
        raise type_error(kind, "str (a prefix of the key form)", partial)
    ok = len(partial) <= len(pattern) and partial.isascii()
    if ok:
        for char, allowed in zip(partial, pattern, strict=False):
            if allowed.isdigit():
                if not (char.isdigit() and char <= allowed):
                    ok = False
                    break
            elif char != allowed:
                ok = False
                break
    if ok:
        for start, lo, hi in _PREFIX_FIELDS:
            field = partial[start : start + 2]
            if len(field) == 2 and not lo <= int(field) <= hi:
                ok = False
    if ok:
        return partial
    raise KeyEncodeError(
        f"{partial!r} is not a prefix of the {kind} key form {example!r} "
        "(give leading fields in exactly that form, e.g. '2026-06' or '2026-06-23T08')"
    )


class DatetimeCodec(KeyCodec[_dt.datetime]):
    """A timezone-aware datetime, stored in UTC at a fixed precision.

    Encoding: ``"YYYY-MM-DDTHH:MM:SS"``, then ``".ffffff"`` (precision ``"us"``),
    ``".fff"`` (``"ms"``) or nothing (``"s"``), then ``"Z"``, after conversion to UTC
    (e.g. ``"2026-06-23T08:00:00.000000Z"``). Naive datetimes are refused unless
    ``naive="utc"``. A value with a finer fraction than the precision is refused (never
    truncated). The year must be 1..9999 after conversion. Decoding returns an aware
    datetime with ``tzinfo=datetime.timezone.utc``.
    """

    kind = "datetime"
    min_char = "-"

    def __init__(self, precision: Precision = "us", naive: NaivePolicy = "refuse") -> None:
        if precision not in PRECISION_NAMES or naive not in ("refuse", "utc"):
            raise ModelDefinitionError(
                f"datetime codec: bad precision {precision!r} or naive policy {naive!r}"
            )
        self.precision: Precision = precision
        self.naive: NaivePolicy = naive
        self._timespec = PRECISION_NAMES[precision]
        self._length = {"s": 19, "ms": 23, "us": 26}[precision]
        self._divisor = {"s": 1_000_000, "ms": 1000, "us": 1}[precision]
        fraction = {"s": "", "ms": ".999", "us": ".999999"}[precision]
        self._pattern = "9999-99-99T99:99:99" + fraction + "Z"
        self._prefix_pattern = "9999-19-39T29:59:59" + fraction + "Z"
        self._example = (
            "2026-06-23T08:00:00" + {"s": "", "ms": ".000", "us": ".000000"}[precision] + "Z"
        )

    def encode(self, value: _dt.datetime) -> str:
        """Encode a datetime. See `KeyCodec.encode` and the class docstring."""
        if not isinstance(value, _dt.datetime):
            raise type_error("datetime", "datetime.datetime", value)
        offset = value.utcoffset()
        if offset is None:
            if self.naive != "utc":
                raise KeyEncodeError(
                    f"datetime key value {value.isoformat()} is naive (no timezone); give an "
                    "aware datetime, or declare the field with KeyFormat(naive='utc') to "
                    "take naive values as UTC"
                )
        elif offset:
            try:
                value = value - offset
            except OverflowError:
                raise KeyEncodeError(
                    f"datetime key value {value.isoformat()} falls outside years 1..9999 "
                    "after conversion to UTC"
                ) from None
        if value.microsecond % self._divisor:
            raise KeyEncodeError(
                f"datetime key value {value.isoformat()} has {value.microsecond} "
                f"microseconds; the key stores {self._timespec} "
                f"(KeyFormat(precision={self.precision!r})); round the value first"
            )
        return value.isoformat(timespec=self._timespec)[: self._length] + "Z"

    def fast_text(self, w: Writer, x: str) -> tuple[str, str]:
        """See `KeyCodec.fast_text`."""
        # An aware value: at UTC offset zero the text is the isoformat's prefix; at another
        # offset, the prefix of the value minus its offset (as `encode`), for years 2..9998
        # (no overflow) and offsets of whole seconds (the microsecond is the UTC value's).
        # A '+02:00' timestamp used to send the whole item to the field-by-field encoder.
        # (``tzinfo is timezone.utc`` first: it spares the utcoffset() call, 335 ns.)
        offset = w.var("offset")
        utc = w.ref(_UTC, "utc")
        condition = (
            f"{x}.__class__ is {w.ref(_dt.datetime, 'datetime')} and "
            f"({x}.tzinfo is {utc} or "
            f"({offset} := {x}.utcoffset()) is not None and "
            f"(not {offset} or not {offset}.microseconds and 1 < {x}.year < 9999))"
        )
        if self._divisor != 1:
            condition += f" and not {x}.microsecond % {self._divisor}"
        # The offset is read only where the condition assigned it (tzinfo not utc).
        value = f"({x} if {x}.tzinfo is {utc} or not {offset} else {x} - {offset})"
        dumps_function = orjson_dumps()
        if dumps_function is None:
            iso = f"{value}.isoformat(timespec={self._timespec!r})"
            return condition, f"{iso}[:{self._length}] + 'Z'"
        # orjson writes an aware datetime as '"YYYY-MM-DDTHH:MM:SS', then '.ffffff' only
        # when the microsecond is not zero, then the offset: its first 19 characters
        # (after the quote) and fraction are the isoformat's. It costs a third of
        # `isoformat(timespec=...)` (CPython formats that through PyUnicode_FromFormat):
        # 1640 -> 480 ns timeit, and a lean batch write of AuditEvents 63.8k -> 51.1k
        # instructions an item (callgrind, with the utcoffset() shortcut above;
        # benchmarks/README.md, "Lean batch writes").
        dumps = w.ref(dumps_function, "orjson_dumps")
        if self._divisor == 1_000_000:  # no fraction
            return condition, f"{dumps}({value})[1:20].decode() + 'Z'"
        zeros = {"ms": ".000Z", "us": ".000000Z"}[self.precision]
        text = (
            f"({dumps}({value})[1:{self._length + 1}].decode() + 'Z' if {x}.microsecond "
            f"else {dumps}({value})[1:20].decode() + {zeros!r})"
        )
        return condition, text

    def max_chars(self) -> int:
        """See `KeyCodec.max_chars`."""
        return self._length + 1

    def decode(self, text: str) -> _dt.datetime:
        """Decode a datetime. See `KeyCodec.decode`."""
        if (
            len(text) == len(self._pattern)
            and text.isascii()
            and text.translate(_DIGIT_CLASS) == self._pattern
        ):
            try:
                return _dt.datetime.fromisoformat(text[:-1]).replace(tzinfo=_UTC)
            except ValueError:
                pass
        raise KeyDecodeError(
            f"{text!r} is not a datetime key encoding (expected the form {self._example!r})"
        )

    def encode_prefix(self, partial: str) -> str:
        """Validate a prefix of the canonical form (``"2026-06"``) and return it as is."""
        return _check_partial("datetime", partial, self._prefix_pattern, self._example)

    def params(self) -> dict[str, Any]:
        """See `KeyCodec.params`."""
        return {"kind": self.kind, "precision": self.precision}


class DateCodec(KeyCodec[_dt.date]):
    """A calendar date. Encoding: ``"YYYY-MM-DD"``; datetimes are refused."""

    kind = "date"
    min_char = "-"
    _pattern = "9999-99-99"

    def encode(self, value: _dt.date) -> str:
        """Encode a date. See `KeyCodec.encode`."""
        if isinstance(value, _dt.datetime):
            raise KeyEncodeError(
                f"date key value {value.isoformat()} is a datetime; pass value.date() "
                "(or declare the field as datetime)"
            )
        if not isinstance(value, _dt.date):
            raise type_error("date", "datetime.date", value)
        return value.isoformat()

    def fast_text(self, w: Writer, x: str) -> tuple[str, str]:
        """See `KeyCodec.fast_text`."""
        # Exactly a date: a datetime (a date subclass) is refused by `encode`.
        text = orjson_text(w, x, f"{x}.isoformat()")
        return f"{x}.__class__ is {w.ref(_dt.date, 'date')}", text

    def max_chars(self) -> int:
        """See `KeyCodec.max_chars`."""
        return 10

    def decode(self, text: str) -> _dt.date:
        """Decode a date. See `KeyCodec.decode`."""
        if len(text) == 10 and text.isascii() and text.translate(_DIGIT_CLASS) == self._pattern:
            try:
                return _dt.date.fromisoformat(text)
            except ValueError:
                pass
        raise KeyDecodeError(f"{text!r} is not a date key encoding (expected 'YYYY-MM-DD')")

    def encode_prefix(self, partial: str) -> str:
        """Validate a prefix of the canonical form (``"2026-06"``) and return it as is."""
        return _check_partial("date", partial, _DATE_PREFIX_PATTERN, "2026-06-23")
