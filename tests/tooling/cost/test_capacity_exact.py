"""Capacity estimates beyond GSIs: numbers by value, LSI entry overhead, LSI table fetches.

Checked against DynamoDB Local by ``tests/integration/test_capacity_oracle.py``; these
pure properties pin each rule over generated values.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as hs
from pydantic import Field

import singletable as st
from singletable.attributes.size import item_size
from singletable.tooling.cost.capacity import estimate_capacity
from singletable.tooling.cost.sizes import LSI_ENTRY_OVERHEAD_BYTES, index_entry

table = st.Table(
    "exact",
    indexes=[
        st.GSI("ByOwner", pk="GSI1PK", sk="GSI1SK"),
        st.GSI("ByAmount", pk="GSI2PK", sk="GSI2SK", sk_type="N"),
        st.LSI("ByRank", sk="LSI1SK", projection=st.Projection.include("note")),
        st.LSI("ByRev", sk="LSI2SK"),
    ],
)


class Rec(
    st.Entity,
    table=table,
    pk="P#{part}",
    sk="R#{rev}",
    indexes={
        "ByOwner": st.IndexKeys(pk="OWNER#{owner}", sk="{rev}"),
        "ByAmount": st.IndexKeys(pk="AMOUNT", sk="{amount}"),
        "ByRank": st.IndexKeys(sk="{rank}"),
        "ByRev": st.IndexKeys(sk="{rev}"),
    },
):
    part: str
    rev: int
    owner: str = "ann"
    amount: Decimal = Decimal("0")
    rank: int = 0
    note: str = ""
    prices: list[Decimal] = Field(default_factory=list)
    totals: set[Decimal] = Field(default_factory=set)
    body: str = ""


decimals = hs.decimals(
    min_value=Decimal("-1e20"), max_value=Decimal("1e20"), places=4, allow_nan=False
)


def _other_form(text: str, zeros: int) -> str:
    """The same number written differently: normal form, or with trailing zeros."""
    value = Decimal(text)
    if zeros == 0:
        return format(value.normalize(), "f")
    return format(value, "f") + ("" if "." in format(value, "f") else ".") + "0" * zeros


def _rewritten(av: Any, zeros: int) -> Any:
    ((kind, value),) = av.items()
    if kind == "N":
        return {"N": _other_form(value, zeros)}
    if kind == "NS":
        return {"NS": [_other_form(v, zeros) for v in reversed(value)]}
    if kind == "L":
        return {"L": [_rewritten(v, zeros) for v in value]}
    if kind == "M":
        return {"M": {k: _rewritten(v, zeros) for k, v in value.items()}}
    return av


@settings(max_examples=200, deadline=None)
@given(
    amount=decimals,
    prices=hs.lists(decimals, max_size=3),
    totals=hs.sets(decimals, max_size=3),
    zeros=hs.integers(0, 3),
    body=hs.integers(0, 3000),
)
def test_a_number_stored_in_another_form_is_the_same_value(
    amount: Decimal, prices: list[Decimal], totals: set[Decimal], zeros: int, body: int
) -> None:
    rec = Rec(part="p", rev=1, amount=amount, prices=prices, totals=totals, body="x" * body)
    item = rec.to_item()
    stored = {name: _rewritten(av, zeros) for name, av in item.items()}
    as_sent = estimate_capacity(Rec.put(rec), existing=item)
    as_stored = estimate_capacity(Rec.put(rec), existing=stored)
    assert as_stored == as_sent
    assert as_stored.index_units == {}  # nothing changed: no index entry is written


def test_the_example_from_the_issue() -> None:
    rec = Rec(part="p", rev=1, amount=Decimal("35.50"), note="n" * 6800)
    stored = {**rec.to_item(), "amount": {"N": "35.5"}}
    estimate = estimate_capacity(Rec.put(rec), existing=stored)
    assert estimate.index_units == {}
    assert estimate.total == math.ceil(item_size(stored) / 1024)


@settings(max_examples=100, deadline=None)
@given(size=hs.integers(0, 9000))
def test_an_lsi_entry_write_is_billed_with_100_bytes_of_overhead(size: int) -> None:
    rec = Rec(part="p", rev=1, body="x" * size)
    item = rec.to_item()
    estimate = estimate_capacity(Rec.put(rec), existing=None)
    for index in ("ByRank", "ByRev"):
        entry = index_entry(table, index, item)
        assert entry is not None
        expected = math.ceil((item_size(entry) + LSI_ENTRY_OVERHEAD_BYTES) / 1024)
        assert estimate.index_units[index] == expected
    for index in ("ByOwner", "ByAmount"):  # GSI entries carry no overhead
        entry = index_entry(table, index, item)
        assert entry is not None
        assert estimate.index_units[index] == math.ceil(item_size(entry) / 1024)


def _fetch_lines(query: Any, items: list[dict[str, Any]]) -> list[Any]:
    estimate = estimate_capacity(query, read=items)
    return [line for line in estimate.lines if line.index is None]


@settings(max_examples=50, deadline=None)
@given(sizes=hs.lists(hs.integers(0, 9000), max_size=6), consistent=hs.booleans())
def test_an_lsi_read_naming_unprojected_attributes_fetches_every_item(
    sizes: list[int], consistent: bool
) -> None:
    items = [Rec(part="p", rev=i, rank=i, body="x" * n).to_item() for i, n in enumerate(sizes)]
    query = Rec.query(part="p", index="ByRank").consistent(consistent)
    per_block = 1.0 if consistent else 0.5
    # Projected attributes only: the index answers alone.
    assert _fetch_lines(query, items) == []
    assert _fetch_lines(query.project("note"), items) == []
    # The field "rank" feeds the index key, but its own attribute is not projected.
    assert len(_fetch_lines(query.project("rank"), items)) == len(items)
    # An attribute the index does not hold: one table read per item, rounded per item.
    fetched = _fetch_lines(query.project("body"), items)
    assert [line.units for line in fetched] == [
        math.ceil(item_size(i) / 4096) * per_block for i in items
    ]
    index_part = estimate_capacity(query.project("body"), read=items).index_units
    entries = [index_entry(table, "ByRank", i) for i in items]
    assert (
        index_part.get("ByRank", 0.0)
        == math.ceil(sum(item_size(e) for e in entries if e is not None) / 4096) * per_block
    )
    # An ALL LSI, a GSI or a scan of the table never fetch.
    assert _fetch_lines(Rec.query(part="p", index="ByRev").project("body"), items) == []
    assert _fetch_lines(Rec.query(owner="ann", index="ByOwner").project("body"), items) == []
