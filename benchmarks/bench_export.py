"""Throughput of an export against a plain scan-and-dump loop, on moto (in-process).

* **export**: ``st.export(db, OrderLine, out)`` of N order lines (a 6-field entity with a
  GSI): the scan, decoding, ``model_dump_json``, the read-back check of every line (the
  load's parser and a comparison) and progress (plain lines, to a discarded stream).
* **plain loop**: ``OrderLine.scan().iter(db)`` and ``model_dump_json()`` of every entity,
  to the same kind of stream: what a program without `st.export` would write (without the
  entity attribute, so a load would need ``--entity``, and with nothing checked).

Both read the same table, interleaved, best of several runs; the ratio shows what the
export's check and accounting add per item. Not a test: nothing asserts a time. Run:
``python3 benchmarks/bench_export.py [--quick]``.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_load import OrderLine, order_lines, rate_of, table

import singletable as st


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run (200 items, 1 run)")
    args = parser.parse_args()
    n, repeats = (200, 1) if args.quick else (5000, 3)

    with st.embedded(table) as db:
        st.load(db, order_lines(n), out=io.StringIO(), progress_bar=False)

        def with_export() -> None:
            result = st.export(db, OrderLine, io.StringIO(), progress_out=io.StringIO())
            assert result.written == n

        def plain_loop() -> None:
            out = io.StringIO()
            for obj in OrderLine.scan().iter(db):
                out.write(obj.model_dump_json() + "\n")

        rates: dict[str, float] = {"export": 0.0, "plain loop": 0.0}
        for _ in range(repeats):  # interleaved: both see the same machine load
            rates["export"] = max(rates["export"], rate_of(with_export, n))
            rates["plain loop"] = max(rates["plain loop"], rate_of(plain_loop, n))

    print(f"export of {n:,} items on moto (in-process), best of {repeats}:")
    for name, rate in rates.items():
        print(f"  {name:<11} {rate:>9,.0f} items/s")
    print(f"  export / plain loop: {rates['plain loop'] / rates['export']:.2f}x the time")


if __name__ == "__main__":
    main()
