"""A live key move: writers on the old and the new model keep working while it runs.

The entity moves from ``SK = "C"`` to ``SK = "CNT"``. During the *expand* phase the
application writes both shapes: an update tries the key its own model writes and, when
no item is there (the item has not moved yet, or has already moved), the other one.
`update()` only changes an existing item, so exactly one of the two applies; the
runner's move is a transaction that requires the old item unchanged, so an update that
lands first makes the runner re-read the item and move it with the update included.
"""

from __future__ import annotations

import io
from typing import Any

import singletable as st


def model(sk: str) -> tuple[st.Table, type[Any]]:
    """The table and its Counter entity, keyed ``C#{cid}`` / ``sk``."""
    table = st.Table("counters")

    class Counter(st.Entity, table=table, pk="C#{cid}", sk=sk):
        cid: str
        hits: int = 0

    return table, Counter


def add_hits(db: st.Connection, primary: Any, fallback: Any, cid: str, n: int = 1) -> None:
    """Expand-phase update: the item is under one of the two keys, never both.

    ``primary`` is the entity class this code writes with; ``fallback`` the other
    shape's. Retried while the item moves between the two (and, on DynamoDB, when the
    update meets the runner's transaction in flight: TransactionConflictException).
    """
    while True:
        for cls in (primary, fallback):
            try:
                cls.update(cid=cid).add(hits=n).run(db)
                return
            except st.NotFoundError:
                continue  # not under this key (yet / any more): try the other shape
            except st.ServiceError as exc:
                if exc.code != "TransactionConflictException":
                    raise
                break  # the runner is moving this very item: start over


def main() -> dict[str, int]:
    """Move three counters while an update lands between the snapshot and the run."""
    with st.embedded() as db:
        old_table, old = model("C")
        db.create_table(old_table)
        for cid in ("a", "b", "c"):
            old.put(old(cid=cid)).run(db)
        snapshot = st.load_snapshot(st.snapshot_json(old_table))  # the committed file
        new_table, new = model("CNT")

        add_hits(db, old, new, "a")  # old code, item not moved yet: old key
        st.migrate(db, new_table, snapshot, segments=1, out=io.StringIO())
        add_hits(db, old, new, "a")  # old code, item moved: falls back to the new key
        add_hits(db, new, old, "b", 5)  # new code

        hits = {c.cid: c.hits for c in new.scan().all(db)}
    print(hits)
    return hits


if __name__ == "__main__":
    main()
