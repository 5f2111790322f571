"""Hot-partition lint over small models."""

from __future__ import annotations

import enum
from datetime import date
from typing import Annotated, Literal

import pytest

from singletable.entity import Entity
from singletable.keys.codecs import KeyFormat
from singletable.model.plan import IndexKeys
from singletable.model.table import GSI, NativeGSI, Table
from singletable.tooling.cost.lint import LintWarning, lint_model, lint_report


class Status(enum.Enum):
    OPEN = "open"
    PAID = "paid"
    SHIPPED = "shipped"


def _table(name: str) -> Table:
    return Table(name, indexes=[GSI("ByStatus", pk="GSI1PK", sk="GSI1SK")])


def test_spread_keys_are_clean() -> None:
    table = _table("lint-clean")

    class Device(Entity, table=table, pk="DEV#{device_id}", sk="READING#{day}"):
        device_id: str
        day: date

    assert lint_model([table]) == []
    assert lint_report([table]) == (
        "hot-partition lint: lint-clean: no low-cardinality partition keys\n",
        0,
    )


def test_enum_bool_literal_and_constant_keys() -> None:
    table = _table("lint-few")

    class Order(
        Entity,
        table=table,
        pk="ORDER#{order_id}",
        sk="ORDER",
        indexes={"ByStatus": IndexKeys(pk="STATUS#{status}#{rush}", sk="{order_id}")},
    ):
        order_id: str
        status: Status
        rush: bool

    class Region(Entity, table=table, pk="REGION#{region}", sk="R"):
        region: Literal["eu", "us", "ap"]

    class Config(Entity, table=table, pk="CONFIG", sk="{name}"):
        name: str

    found = {(w.entity, w.index): w for w in lint_model([table])}
    assert set(found) == {("Order", "ByStatus"), ("Region", None), ("Config", None)}
    status = found[("Order", "ByStatus")]
    assert status.values == 6
    assert status.reason == "status: enum Status (3 values); rush: bool (2 values)"
    assert found[("Region", None)].values == 3
    assert found[("Config", None)].values == 1
    assert found[("Config", None)].reason == "a constant: no fields"
    assert "3,000 RCU and 1,000 WCU per second" in status.message()
    assert status.message().startswith(
        "entity Order, GSI ByStatus: partition key 'STATUS#{status}#{rush}' can take at most 6 keys"
    )


def test_date_bucket_and_small_fixed_width_int() -> None:
    table = _table("lint-bucket")

    class DailyTotal(Entity, table=table, pk="DAY#{day}", sk="TOTAL"):
        day: date

    class Shard(Entity, table=table, pk="SHARD#{n}", sk="{item}"):
        n: Annotated[int, KeyFormat(width=2)]
        item: str

    found = {w.entity: w for w in lint_model([table])}
    assert found["DailyTotal"].values == 1
    assert "all traffic of one day shares one key" in found["DailyTotal"].reason
    assert found["Shard"].values == 100
    assert lint_model([table], few=50) == [found["DailyTotal"]]


def test_load_per_key_at_a_rate_matches_domain() -> None:
    table = _table("lint-rate")

    class Fifty(Entity, table=table, pk="B#{bucket}", sk="X"):
        bucket: Literal[tuple(range(50))]  # type: ignore[valid-type]

    (warning,) = lint_model([table], writes_per_second=10_000)
    assert isinstance(warning, LintWarning)
    assert warning.values == 50
    assert warning.wcu_per_key == 200.0  # DOMAIN.md: 50 values at 10,000 writes/s
    assert not warning.over_limit
    assert "10,000 writes/s -> about 200 WCU per key (limit 1,000)" in warning.message()
    text, code = lint_report([table], writes_per_second=10_000)
    assert code == 1
    assert text.splitlines()[1].startswith("warning: entity Fifty, table lint-rate:")

    (hot,) = lint_model([table], writes_per_second=60_000, reads_per_second=1_000)
    assert hot.wcu_per_key == 1200.0
    assert hot.rcu_per_key == 20.0
    assert hot.over_limit
    assert "OVER the per-partition limit" in hot.message()
    text, code = lint_report([table], writes_per_second=60_000)
    assert code == 2
    assert text.splitlines()[1].startswith("error: entity Fifty")


@pytest.mark.parametrize("few", [0, 5])
def test_threshold(few: int) -> None:
    table = _table(f"lint-threshold-{few}")

    class Flag(Entity, table=table, pk="F#{on}", sk="X"):
        on: bool

    assert len(lint_model([table], few=few)) == (1 if few >= 2 else 0)


def test_native_gsi_notes_say_who_can_leave_the_index() -> None:
    table = Table(
        "notes",
        indexes=[
            NativeGSI("ByArea", pk=["tenant", "region"], sk=["day"]),
            NativeGSI("Empty", pk=["nobody"]),
        ],
    )

    class Sensor(Entity, table=table, pk="S#{sid}", sk="S"):
        sid: str
        tenant: str
        region: str | None = None
        day: int | None = None

    class Site(Entity, table=table, pk="T#{sid}", sk="T"):
        sid: str
        tenant: str
        region: str
        day: int

    class Badge(Entity, table=table, pk="B#{sid}", sk="B"):
        sid: str
        tenant: str  # one part of three: never in the index

    text, code = lint_report([table])
    assert code == 0
    assert text.splitlines()[1:] == [
        "note: notes: native GSI ByArea (tenant, region, day): Sensor leaves it while day or "
        "region is None",
        "note: notes: native GSI ByArea (tenant, region, day): Site always in it",
        "note: notes: native GSI Empty (nobody): no entity stores every part",
    ]
