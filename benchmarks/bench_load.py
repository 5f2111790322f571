"""Throughput of a bulk load against a plain loop of batch writes, on moto (in-process).

* **load**: ``st.load(db, objects)`` of N order lines (a 6-field entity with a GSI):
  25-item `BatchWrite`s, the duplicate-key check and the progress display (plain lines,
  to a discarded stream).
* **plain loop**: the same objects written with ``BatchWrite(chunk).run(db)`` for every
  25 of them, on the same connection: what a program without `st.load` would write.

Both write the same items to the same table (each run overwrites the last), interleaved,
best of several runs; moto's server time dominates both, so the ratio shows what a load
adds per item. Not a test: nothing asserts a time. Run:
``python3 benchmarks/bench_load.py [--quick]``.
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

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

    with st.embedded(table) as db:

        def with_load() -> None:
            result = st.load(db, objects, out=io.StringIO(), progress_bar=False)
            assert result.written == n

        def plain_loop() -> None:
            for i in range(0, n, 25):
                st.BatchWrite(objects[i : i + 25]).run(db)

        rates: dict[str, float] = {"load": 0.0, "plain loop": 0.0}
        for _ in range(repeats):  # interleaved: both see the same machine load
            rates["load"] = max(rates["load"], rate_of(with_load, n))
            rates["plain loop"] = max(rates["plain loop"], rate_of(plain_loop, n))

    print(f"bulk load of {n:,} items on moto (in-process), best of {repeats}:")
    for name, rate in rates.items():
        print(f"  {name:<11} {rate:>9,.0f} items/s")
    print(f"  load / plain loop: {rates['plain loop'] / rates['load']:.2f}x the time")


if __name__ == "__main__":
    main()
