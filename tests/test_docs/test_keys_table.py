"""The examples in docs/keys.md's encoding table are what the codecs write."""

import datetime as dt
import uuid
from decimal import Decimal
from pathlib import Path

from singletable.keys.escaping import SegmentEscaper
from singletable.keys.numbers import DecimalCodec, FixedIntCodec, FloatCodec, IntCodec
from singletable.keys.text import UUIDCodec
from singletable.keys.times import DateCodec, DatetimeCodec

PAGE = (Path(__file__).parents[2] / "docs" / "keys.md").read_text(encoding="utf-8")
T = dt.datetime(2026, 6, 23, 8, tzinfo=dt.timezone.utc)


def shown(example: str) -> str:
    assert example in PAGE, f"docs/keys.md no longer shows {example}"
    return example


def test_encoding_table_examples() -> None:
    assert shown(f"`42` -> `{IntCodec().encode(42)}`")
    assert IntCodec().encode(42) == "0242"
    assert shown(f"`-42` -> `{IntCodec().encode(-42)}`")
    assert shown(f"`{FixedIntCodec(6).encode(42)}`") == "`000042`"
    for value, text in (("1.5", "150115"), ("-1.5", "-49884:"), ("0", "0")):
        assert DecimalCodec().encode(Decimal(value)) == text
        assert FloatCodec().encode(float(value)) == text
        shown(f"`{value}` -> `{text}`")
    assert shown(f"`{DatetimeCodec().encode(T)}`") == "`2026-06-23T08:00:00.000000Z`"
    assert DatetimeCodec("ms").encode(T) == "2026-06-23T08:00:00.000Z"
    assert DatetimeCodec("s").encode(T) == "2026-06-23T08:00:00Z"
    assert shown(f"`{DateCodec().encode(T.date())}`") == "`2026-06-23`"
    u = uuid.UUID("12345678-1234-5678-1234-567812345678".upper())
    shown(f"`{UUIDCodec().encode(u)}`")


def test_escaping_example() -> None:
    escaped = SegmentEscaper().escape("#1 best.png")
    assert shown(f"`{escaped}`") == "`%231%20best.png`"
