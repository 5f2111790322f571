"""Throughput of a bulk load against a plain loop of batch writes; versioned loads.

* **load**: ``st.load(db, objects)`` of N order lines (a 6-field entity with a GSI):
  25-item `BatchWrite`s, the duplicate-key check and the progress display (plain lines,
  to a discarded stream).
* **plain loop**: the same objects written with ``BatchWrite(chunk).run(db)`` for every
  25 of them, on the same connection: what a program without `st.load` would write.

Both write the same items to the same table (each run overwrites the last), interleaved,
best of several runs; moto's server time dominates both, so the ratio shows what a load
adds per item.

Then a versioned entity (accounts of varied size: names, tag lists, nested addresses,
optional notes, versions 1 to 9 as an export holds them), loaded into an empty table:

* **one by one**: ``st.load(db, accounts)``: a conditional PutItem per item (written at
  its own version where none or the same version is stored).
* **first import**: ``st.load(db, accounts, first_import=True)``: one scan to check the
  table empty, then 25-item batch writes, no version check.

Each run gets a fresh table (not timed). Not a test: nothing asserts a time. Run:
``python3 benchmarks/bench_load.py [--quick]`` on moto in-process, or against a server
(DynamoDB Local) with ``SINGLETABLE_ENDPOINT=http://127.0.0.1:8000``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import boto3
from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import singletable as st

table = st.Table("bench-load", indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


class OrderLine(
    st.Entity,
    table=table,
    pk="ORDER#{order_id}",
    sk="LINE#{line}",
    indexes={"GSI1": st.IndexKeys(pk="SKU#{sku}", sk="{placed}")},
):
    order_id: str
    line: int
    sku: str
    placed: datetime
    quantity: int
    price: Decimal


def order_lines(n: int) -> list[OrderLine]:
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    return [
        OrderLine(
            order_id=f"o{i // 5:06d}",
            line=i % 5,
            sku=f"sku-{i % 97}",
            placed=start + timedelta(seconds=i),
            quantity=1 + i % 4,
            price=Decimal(i % 1000) / 100,
        )
        for i in range(n)
    ]


versioned = st.Table("bench-load-versioned")


class Address(BaseModel):
    street: str
    city: str
    postcode: str


class Account(
    st.Entity, table=versioned, pk="ACCOUNT#{account_id}", sk="A", version_field="version"
):
    account_id: str
    name: str
    tags: list[str]
    address: Address
    balance: Decimal
    note: str | None = None
    version: int = 0


_WORDS = ("north", "harbour", "saint", "old", "mill", "cross", "green", "market", "bridge")


def accounts(n: int) -> list[Account]:
    """Varied accounts, as an export of a live table holds them (versions 1 to 9)."""
    result = []
    for i in range(n):
        words = [_WORDS[(i * 7 + k) % len(_WORDS)] for k in range(1 + i % 5)]
        result.append(
            Account(
                account_id=f"{i:07d}",
                name=" ".join(words).title() + f" {i}",
                tags=words[: i % 4],
                address=Address(
                    street=f"{i % 300} {' '.join(words[:2]).title()} Road",
                    city=_WORDS[i % len(_WORDS)].title() + "ton",
                    postcode=f"{chr(65 + i % 26)}{i % 90 + 10} {i % 9}XY",
                ),
                balance=Decimal(i * 37 % 100_000) / 100,
                note=("x" * (i % 400)) if i % 3 == 0 else None,
                version=1 + i % 9,
            )
        )
    return result


@contextlib.contextmanager
def connection() -> Iterator[st.Connection]:
    """A connection to SINGLETABLE_ENDPOINT (DynamoDB Local), else moto in-process."""
    endpoint = os.environ.get("SINGLETABLE_ENDPOINT")
    if not endpoint:
        with st.embedded(table, versioned) as db:
            yield db
        return
    client = boto3.client(
        "dynamodb",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    db = st.Connection(client)
    for t in (table, versioned):
        if db.table_exists(t.name):
            db.delete_table(t)
        db.create_table(t)
    try:
        yield db
    finally:
        for t in (table, versioned):
            db.delete_table(t)


def rate_of(run: Callable[[], None], n: int) -> float:
    started = time.perf_counter()
    run()
    return n / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run (200 items, 1 run)")
    args = parser.parse_args()
    n, repeats = (200, 1) if args.quick else (5000, 3)
    objects = order_lines(n)
    versioned_objects = accounts(n)
    where = os.environ.get("SINGLETABLE_ENDPOINT") or "moto (in-process)"

    with connection() as db:

        def with_load() -> None:
            result = st.load(db, objects, out=io.StringIO(), progress_bar=False)
            assert result.written == n

        def plain_loop() -> None:
            for i in range(0, n, 25):
                st.BatchWrite(objects[i : i + 25]).run(db)

        def load_versioned(first_import: bool) -> Callable[[], None]:
            def run() -> None:
                result = st.load(
                    db,
                    versioned_objects,
                    out=io.StringIO(),
                    progress_bar=False,
                    first_import=first_import,
                )
                assert result.written == n

            return run

        rates: dict[str, float] = {
            "load": 0.0,
            "plain loop": 0.0,
            "one by one": 0.0,
            "first import": 0.0,
        }
        for _ in range(repeats):  # interleaved: both see the same machine load
            rates["load"] = max(rates["load"], rate_of(with_load, n))
            rates["plain loop"] = max(rates["plain loop"], rate_of(plain_loop, n))
        for _ in range(repeats):
            for name, first_import in (("one by one", False), ("first import", True)):
                db.delete_table(versioned)
                db.create_table(versioned)
                rates[name] = max(rates[name], rate_of(load_versioned(first_import), n))

    print(f"bulk load of {n:,} items on {where}, best of {repeats}:")
    for name, rate in rates.items():
        print(f"  {name:<12} {rate:>9,.0f} items/s")
    print(f"  load / plain loop: {rates['plain loop'] / rates['load']:.2f}x the time")
    speedup = rates["first import"] / rates["one by one"]
    print(f"  versioned: first import / one by one: {speedup:.1f}x the rate")


if __name__ == "__main__":
    main()
