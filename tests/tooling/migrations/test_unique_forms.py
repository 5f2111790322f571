"""Uniqueness constraints in snapshots (their stored form) and in plans (guard moves)."""

from __future__ import annotations

import datetime as dt
import enum
import uuid
from decimal import Decimal
from typing import Annotated, Any

import pytest
from hypothesis import given
from hypothesis import strategies as hs

import singletable as st
from singletable.errors import KeyDecodeError
from singletable.keys.choices import EnumCodec, LiteralCodec
from singletable.keys.codec_base import KeyCodec
from singletable.keys.codecs import codec_from_params
from singletable.keys.numbers import DecimalCodec, FixedIntCodec, FloatCodec, IntCodec
from singletable.keys.text import BoolCodec, StrCodec, UUIDCodec
from singletable.keys.times import DateCodec, DatetimeCodec
from singletable.tooling.migrations.planner import ChangeClass, plan_changes
from singletable.tooling.migrations.snapshot import dumps, load_snapshot, snapshot, unique_forms


class Tier(enum.Enum):
    GOLD = "gold"
    SILVER = "silver"


CODECS: list[tuple[KeyCodec[Any], Any]] = [
    (StrCodec(), "a#b%c"),
    (IntCodec(), -42),
    (FixedIntCodec(6), 42),
    (DecimalCodec(), Decimal("-1.5")),
    (FloatCodec(), 2.5),
    (BoolCodec(), True),
    (DatetimeCodec("ms"), dt.datetime(2026, 1, 2, 3, 4, 5, 6000, tzinfo=dt.timezone.utc)),
    (DateCodec(), dt.date(2026, 1, 2)),
    (UUIDCodec(), uuid.UUID(int=7)),
    (LiteralCodec(["a", "b"]), "b"),
]


@pytest.mark.parametrize(("codec", "value"), CODECS, ids=lambda c: getattr(c, "kind", ""))
def test_a_codec_rebuilt_from_its_params_writes_the_same_text(
    codec: KeyCodec[Any], value: Any
) -> None:
    rebuilt = codec_from_params(codec.params())
    assert rebuilt.params() == codec.params()
    assert rebuilt.encode(value) == codec.encode(value)


def test_an_enum_codec_comes_back_as_the_literal_of_its_values() -> None:
    rebuilt = codec_from_params(EnumCodec(Tier).params())
    assert rebuilt.encode("gold") == EnumCodec(Tier).encode(Tier.GOLD)


def test_an_unknown_codec_is_refused() -> None:
    with pytest.raises(KeyDecodeError, match="no key codec 'nope'"):
        codec_from_params({"kind": "nope"})


@given(hs.integers(0, 10**6 - 1))
def test_fixed_int_rebuilt_keeps_its_order(n: int) -> None:
    assert codec_from_params({"kind": "fixed_int", "width": 6}).encode(n) == f"{n:06d}"


def model(
    *,
    name: str = "Customer",
    width: int = 4,
    unique: Any = ("email", "badge"),
    tier: Any = str,
) -> st.Table:
    table = st.Table("app")

    class Customer(st.Entity, table=table, pk="C#{cid}", sk="C", name=name, unique=unique):
        cid: str
        email: str
        badge: Annotated[int, st.KeyFormat(width=width)]
        tier: tier = "gold"

    return table


def test_the_snapshot_records_each_constraints_codecs() -> None:
    entity = snapshot(model())["tables"]["app"]["entities"]["Customer@1"]
    assert entity["unique"] == [
        {"fields": ["email"], "codecs": {"email": {"kind": "str", "format": "key-str/1"}}},
        {
            "fields": ["badge"],
            "codecs": {"badge": {"kind": "fixed_int", "width": 4, "format": "key-int-fixed/1"}},
        },
    ]
    assert unique_forms(entity) == {
        "email": {"email": {"kind": "str", "format": "key-str/1"}},
        "badge": {"badge": {"kind": "fixed_int", "width": 4, "format": "key-int-fixed/1"}},
    }


def guard_changes(before: st.Table, after: st.Table) -> list[st.Change]:
    plan = plan_changes(after, load_snapshot(st.snapshot_json(before)))
    return [c for c in plan.changes if ", unique " in c.subject]


def test_a_codec_change_of_a_constraint_is_a_planned_rewrite() -> None:
    [change] = guard_changes(model(width=4), model(width=6))
    assert change.kind is ChangeClass.ITEM_REWRITE
    assert change.subject == "entity Customer@1, unique badge"
    assert "width" in change.reason
    assert "guard" in change.reason
    assert change.action == {"op": "rewrite", "old": "Customer@1", "new": "Customer@1"}


def test_a_rename_moves_every_guard() -> None:
    changes = guard_changes(model(name="C"), model(name="Customer"))
    assert [c.subject for c in changes] == [
        "entity C@1 -> Customer@1, unique badge",
        "entity C@1 -> Customer@1, unique email",
    ]
    assert all("'C' to 'Customer'" in c.reason for c in changes)
    assert {c.action["op"] for c in changes if c.action} == {"rewrite"}


def test_an_added_constraint_is_a_backfill_and_a_dropped_one_is_safe() -> None:
    [added] = guard_changes(model(unique=("email",)), model(unique=("email", "tier")))
    assert added.action == {"op": "backfill_unique", "entity": "Customer@1", "fields": ["tier"]}
    [dropped] = guard_changes(model(unique=("email", "tier")), model(unique=("email",)))
    assert dropped.kind is ChangeClass.SAFE
    assert dropped.action is None


def test_no_change_when_the_stored_form_is_the_same() -> None:
    assert guard_changes(model(), model()) == []


def test_a_format_2_snapshot_still_plans_without_codecs() -> None:
    # Written before constraints carried their codecs: the bare field lists.
    document = snapshot(model(width=4))
    document["format_version"] = 2
    entity = document["tables"]["app"]["entities"]["Customer@1"]
    entity["unique"] = [["email"], ["badge"]]
    old = load_snapshot(dumps(document))
    assert unique_forms(old["tables"]["app"]["entities"]["Customer@1"]) == {
        "email": None,
        "badge": None,
    }
    # Unknown codecs: nothing to compare, so no guard move is planned for them...
    assert guard_changes_from(old, model(width=4)) == []
    # ...but a rename still moves every guard.
    assert len(guard_changes_from(old, model(width=4, name="Client"))) == 2


def guard_changes_from(old: dict[str, Any], after: st.Table) -> list[st.Change]:
    return [c for c in plan_changes(after, old).changes if ", unique " in c.subject]
