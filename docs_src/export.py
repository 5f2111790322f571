"""An export: a table's items as JSON Lines, loaded back into an empty table."""

from __future__ import annotations

import io
from typing import Any

import singletable as st
from docs_src.load import Customer, Order, generate, shop
from singletable.tooling.bulk.load import JsonLines


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
    return out
