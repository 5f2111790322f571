"""Stored-format ids are pinned to the bytes they stand for.

``tests/expected/stored_formats.json`` holds, per format id, sample values and the exact
stored form the codecs give them. If an encoding changes while its id stays the same,
this test fails: bump the id's version in ``singletable/keys/formats.py``, describe the
old version in ``FORMAT_HISTORY`` and in the "Stored format" section of ``CHANGELOG.md``,
then regenerate the file with ``SINGLETABLE_REGEN=1``. Snapshots then carry the new id,
and the planner plans the upgrade like a model change.
"""

from __future__ import annotations

import base64
import datetime as dt
import enum
import json
import os
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

from singletable.attributes.codecs import attribute_codec_for
from singletable.keys.choices import EnumCodec, LiteralCodec
from singletable.keys.codec_base import KeyCodec
from singletable.keys.formats import (
    ATTRIBUTE_FORMATS,
    CONTAINER_FORMATS,
    FORMAT_HISTORY,
    KEY_FORMATS,
    attribute_format,
    format_version,
    key_format,
)
from singletable.keys.numbers import DecimalCodec, FixedIntCodec, FloatCodec, IntCodec
from singletable.keys.text import BoolCodec, StrCodec, UUIDCodec
from singletable.keys.times import DateCodec, DatetimeCodec

EXPECTED = Path(__file__).parents[1] / "expected" / "stored_formats.json"


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


UTC = dt.timezone.utc
PLUS2 = dt.timezone(dt.timedelta(hours=2))
MOMENTS = [
    dt.datetime(2026, 6, 23, 8, 0, tzinfo=PLUS2),
    dt.datetime(2026, 6, 23, 6, 0, 0, 123456, tzinfo=UTC),
    dt.datetime(1999, 12, 31, 23, 59, 59),
]

KEY_SAMPLES: list[tuple[KeyCodec[Any], list[Any]]] = [
    (StrCodec(), ["", "a#b", "é%"]),
    (IntCodec(), [0, -1, 42, -(10**20), 10**20]),
    (FixedIntCodec(6), [0, 42, 999999]),
    (DecimalCodec(), [Decimal("0"), Decimal("-1.5"), Decimal("12.340")]),
    (FloatCodec(), [0.0, -2.5, 1e300]),
    (BoolCodec(), [False, True]),
    (DatetimeCodec("us"), MOMENTS[:2]),
    (DatetimeCodec("ms"), [MOMENTS[0]]),
    (DateCodec(), [dt.date(2026, 6, 23)]),
    (UUIDCodec(), [uuid.UUID(int=12345)]),
    (EnumCodec(Color), [Color.BLUE]),
    (LiteralCodec(["a", "b"]), ["b"]),
]

ATTRIBUTE_SAMPLES: list[tuple[Any, list[Any]]] = [
    (str, ["", "a#b"]),
    (bool, [True]),
    (int, [0, -7, 10**30]),
    (float, [1.5, -0.0]),
    (Decimal, [Decimal("12.340")]),
    (bytes, [b"\x00\xff"]),
    (dt.datetime, MOMENTS),
    (dt.date, [dt.date(2026, 6, 23)]),
    (dt.time, [dt.time(8, 30)]),
    (uuid.UUID, [uuid.UUID(int=12345)]),
    (Color, [Color.RED]),
    (Literal["a", "b"], ["a"]),
    (Any, [MOMENTS[0], 3, "x"]),
    (list[int], [[1, 2]]),
    (dict[str, int], [{"k": 1}]),
    (set[str], [{"b", "a"}]),
]


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(_plain(v) for v in value)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode()
    return value


def current() -> dict[str, dict[str, str]]:
    """Format id -> {repr(sample): stored form} for every sample."""
    pinned: dict[str, dict[str, str]] = {}
    for codec, values in KEY_SAMPLES:
        params = codec.params()
        label = json.dumps({k: v for k, v in params.items() if k != "kind"}, sort_keys=True)
        for value in values:
            entry = pinned.setdefault(key_format(params), {})
            entry[f"{label} {value!r}"] = codec.encode(value)
    for annotation, values in ATTRIBUTE_SAMPLES:
        attribute = attribute_codec_for(annotation, where=f"sample {annotation!r}")
        for value in values:
            entry = pinned.setdefault(attribute_format(attribute.params()), {})
            entry[f"{annotation!r} {value!r}"] = json.dumps(_plain(attribute.to_av(value)))
    return pinned


def test_every_stored_form_matches_its_pinned_format_id() -> None:
    pinned = current()
    if os.environ.get("SINGLETABLE_REGEN") == "1":
        EXPECTED.write_text(json.dumps(pinned, indent=2, sort_keys=True) + "\n", "utf-8")
    expected = json.loads(EXPECTED.read_text("utf-8"))
    for format_id, samples in pinned.items():
        assert format_id in expected, (
            f"new stored-format id {format_id}: regenerate {EXPECTED.name} "
            "(SINGLETABLE_REGEN=1) and add it to CHANGELOG.md's Stored format section"
        )
        for sample, stored in samples.items():
            assert expected[format_id].get(sample, stored) == stored, (
                f"{format_id}: {sample} is now stored as {stored!r}, was "
                f"{expected[format_id][sample]!r}: the encoding changed without a new format "
                "id; bump its version in singletable/keys/formats.py (FORMAT_HISTORY, "
                "CHANGELOG.md) and regenerate"
            )


def test_every_key_codec_kind_has_a_format_id() -> None:
    kinds = {c.kind for c in KeyCodec.__subclasses__()}
    assert kinds == set(KEY_FORMATS)


def test_every_sampled_family_is_pinned_and_history_is_consistent() -> None:
    pinned = current()
    assert set(ATTRIBUTE_FORMATS.values()) <= set(pinned) | {"number/1"}
    assert {"list/1", "map/1", "set/1", CONTAINER_FORMATS["any"]} <= set(pinned)
    for format_id in FORMAT_HISTORY:
        assert format_version(format_id) > 1
        assert format_id in set(ATTRIBUTE_FORMATS.values()) | set(CONTAINER_FORMATS.values())
    changed = {
        f
        for f in (*KEY_FORMATS.values(), *ATTRIBUTE_FORMATS.values(), *CONTAINER_FORMATS.values())
        if format_version(f) > 1
    }
    assert changed == set(FORMAT_HISTORY), "every id above version 1 says what it replaced"
    changelog = (Path(__file__).parents[2] / "CHANGELOG.md").read_text("utf-8")
    assert "## Stored format" in changelog
    for format_id in changed:
        assert format_id in changelog, f"{format_id} is not in CHANGELOG.md's Stored format"
