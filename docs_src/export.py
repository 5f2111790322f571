"""An export: a table's items as JSON Lines, loaded back into an empty table.

Then a versioned entity copied to a fresh table: the load writes each item at the version
it was exported with, in batches (a first import into a table checked empty).
"""

from __future__ import annotations

import io
from typing import Any

import singletable as st
from docs_src.load import Customer, Order, generate, shop
from singletable.tooling.bulk import JsonLines

inventory = st.Table("inventory")


class Stock(st.Entity, table=inventory, pk="SKU#{sku}", sk="STOCK", version_field="version"):
    sku: str
    count: int
    version: int = 0


def main() -> dict[str, Any]:
    """Fill the shop, export it, load the export into a fresh table; return what happened."""
    out: dict[str, Any] = {}
    lines = io.StringIO()
    with st.embedded(shop) as db:
        st.load(db, generate(10), out=io.StringIO())
        # Written by something else: no entity of the model decodes it.
        db.call("put_item", {"TableName": "shop", "Item": {"PK": {"S": "X"}, "SK": {"S": "Y"}}})
        progress, rejects = io.StringIO(), io.StringIO()
        result = st.export(db, shop, lines, rejects=rejects, progress_out=progress)
        out["exported"] = (result.scanned, result.written, result.by_entity)
        out["skipped"] = result.skipped_by_reason
        out["last_line"] = progress.getvalue().splitlines()[-1]
        out["first"] = min(lines.getvalue().splitlines())
        out["rejected"] = rejects.getvalue()
        before = sorted(map(repr, [*Customer.scan().all(db), *Order.scan().all(db)]))
    with st.embedded(shop) as fresh:
        objects = JsonLines([shop]).objects(lines.getvalue().encode().splitlines(keepends=True))
        st.load(fresh, objects, out=io.StringIO())
        after = sorted(map(repr, [*Customer.scan().all(fresh), *Order.scan().all(fresh)]))
    out["same"] = before == after
    out["versions"] = copy_versioned()
    return out


def copy_versioned() -> dict[str, Any]:
    """Export stock at versions 1 to 3, load it into a fresh table; the versions stay."""
    lines = io.StringIO()
    with st.embedded(inventory) as db:
        for i, sku in enumerate(["a", "b", "c"]):
            stock = Stock(sku=sku, count=0)
            for count in range(i + 1):  # each put moves the version on by one
                stock = Stock.put(stock.model_copy(update={"count": count})).run(db)
        st.export(db, Stock, lines, progress_out=io.StringIO())
    with st.embedded(inventory) as fresh:
        objects = JsonLines([inventory]).objects(lines.getvalue().encode().splitlines())
        result = st.load(fresh, objects, out=io.StringIO(), first_import=True)
        copied = {s.sku: s.version for s in Stock.scan().all(fresh)}
        # The copy is an ordinary versioned table: the next put checks version 3.
        moved = Stock.put(Stock(sku="c", count=9, version=3)).run(fresh).version
        try:  # a first import into a table that holds items is refused
            st.load(fresh, [Stock(sku="d", count=1)], out=io.StringIO(), first_import=True)
        except st.LoadError as exc:
            refused = str(exc.cause).split(":")[0]
    return {"calls": result.calls, "copied": copied, "moved": moved, "refused": refused}
