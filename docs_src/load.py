"""A bulk load: customers and their orders from a generator, then the same as JSON Lines."""

from __future__ import annotations

import io
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import singletable as st
from singletable.tooling.bulk import JsonLines, check

shop = st.Table("shop")


class Customer(st.Entity, table=shop, pk="C#{cid}", sk="PROFILE", unique=("email",)):
    cid: str
    email: str


class Order(st.Entity, table=shop, pk="C#{cid}", sk="O#{oid}"):
    cid: str
    oid: int
    total: Decimal


def generate(n: int) -> Iterator[st.Entity]:
    """Any iterable will do: a load reads it once and keeps at most 25 items in memory."""
    for i in range(n):
        yield Customer(cid=f"c{i}", email=f"c{i}@example.org")
        for j in range(3):
            yield Order(cid=f"c{i}", oid=j, total=Decimal("9.99") * (j + 1))


LINES = b"""\
{"_et": "Customer", "cid": "c1", "email": "c1@example.org"}
{"_et": "Order", "cid": "c1", "oid": 7, "total": "19.98"}
{"_et": "Order", "cid": "c1", "oid": 7, "total": "5"}
"""


def main() -> dict[str, Any]:
    """Load, fail on a duplicate, and validate a JSON Lines file; return what happened."""
    out: dict[str, Any] = {}
    with st.embedded(shop) as db:
        progress = io.StringIO()
        result = st.load(db, generate(100), total=400, out=progress)
        out["written"] = (result.written, result.by_entity)
        out["last_line"] = progress.getvalue().splitlines()[-1]

        try:
            twice = [Order(cid="x", oid=1, total=1), Order(cid="x", oid=1, total=2)]
            st.load(db, twice, out=progress)
        except st.LoadError as exc:
            out["duplicate"] = (str(exc.cause), exc.written, exc.resume_from)

        report = check(JsonLines([shop]), io.BytesIO(LINES))
        out["invalid"] = [(e.line, str(e)) for e in report.errors]
    return out
