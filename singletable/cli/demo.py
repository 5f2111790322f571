"""``singletable demo``: the three worked examples, run on the embedded backend.

For every access pattern it prints the exact request singletable sends and the rows
DynamoDB returns, in order.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import Any, TextIO

from singletable.examples import (
    T0,
    AuditEvent,
    Reading,
    activity,
    children,
    demo,
    drive,
    sample_items,
)
from singletable.io.connection import Connection
from singletable.io.embedded import embedded
from singletable.operations.batch import BatchWrite
from singletable.operations.collection import CollectionQuery
from singletable.operations.query import EntityQuery


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, default=str, ensure_ascii=False)


def _pattern(
    out: TextIO,
    db: Connection,
    title: str,
    query: EntityQuery[Any] | CollectionQuery,
    row: Callable[[Any], str],
) -> int:
    out.write(f"\n--- {title}\n")
    out.write("request:\n")
    out.write(_json(query.params()) + "\n")
    rows = query.all(db)
    out.write(f"rows ({len(rows)}, in the order DynamoDB returned them):\n")
    for item in rows:
        out.write(f"  {row(item)}\n")
    return len(rows)


def run_demo(out: TextIO) -> None:
    """Write the sample items to an in-memory table and run every access pattern."""
    with embedded(demo) as db:
        items = sample_items()
        result = BatchWrite(items).run(db)
        out.write(
            f"singletable demo: table {demo.name!r} on the embedded (moto) backend; "
            f"{result.put} items written in {result.calls} BatchWriteItem calls\n"
        )
        sample = items[1]
        out.write("\nAn audit event as stored (low-level item):\n")
        out.write(_json(sample.to_item()) + "\n")
        _audit_log(out, db)
        _sensor_readings(out, db)
        _file_tree(out, db)


def _event_row(e: Any) -> str:
    if isinstance(e, AuditEvent):
        return f"{type(e).__name__} {e.ts.isoformat()} seq={e.seq} {e.action} {e.target}"
    return f"{type(e).__name__} {e!r}"


def _audit_log(out: TextIO, db: Connection) -> None:
    """The first example: an actor's audit events, newest first, by day, as a collection."""
    out.write("\n=== 1. Actor-scoped audit log: PK = ACTOR#<id>, SK = EVT#<ts>#<seq>\n")
    _pattern(
        out,
        db,
        "newest-first activity stream (10 most recent)",
        AuditEvent.query(actor_id="u_8814").descending().limit(10),
        _event_row,
    )
    day = T0.replace(hour=0)
    _pattern(
        out,
        db,
        "time window: every event on 2026-06-23 (whatever its seq)",
        AuditEvent.query(actor_id="u_8814").between(
            ts=(day, day + timedelta(hours=23, minutes=59, seconds=59, microseconds=999999))
        ),
        _event_row,
    )
    _pattern(
        out,
        db,
        "the whole collection: profile and events, each decoded into its own class",
        activity.query(actor_id="u_8814"),
        _event_row,
    )


def _reading_row(r: Reading) -> str:
    return f"{r.device_id} {r.ts.isoformat()} {r.celsius} °C"


def _sensor_readings(out: TextIO, db: Connection) -> None:
    """The second example: one device's readings by time, the fleet's by day and value."""
    out.write("\n=== 2. Sensor readings: PK = DEV#<id>, SK = READING#<ts>\n")
    _pattern(
        out,
        db,
        "latest-first readings of dev-9 (5 newest)",
        Reading.query(device_id="dev-9").descending().limit(5),
        _reading_row,
    )
    _pattern(
        out,
        db,
        "a 10-minute window of dev-7 (08:10:00 to 08:20:00 inclusive)",
        Reading.query(device_id="dev-7").between(
            ts=(T0 + timedelta(minutes=10), T0 + timedelta(minutes=20))
        ),
        _reading_row,
    )
    _pattern(
        out,
        db,
        "fleet-wide readings above 30 °C on 2026-06-23, hottest first (GSI1)",
        Reading.query(index="GSI1", day=T0.date()).gt(celsius=Decimal("30")).descending(),
        _reading_row,
    )
    _pattern(
        out,
        db,
        "fleet-wide readings below freezing (negative numbers sort correctly)",
        Reading.query(index="GSI1", day=T0.date()).lt(celsius=Decimal("0")),
        _reading_row,
    )


def _path_row(node: Any) -> str:
    return f"{type(node).__name__:6} {node.path}"


def _file_tree(out: TextIO, db: Connection) -> None:
    """The third example: a drive's file tree, by path prefix and by parent folder."""
    out.write("\n=== 3. File tree: PK = DRIVE#<account>, SK = <path> (folders end in /)\n")
    _pattern(
        out,
        db,
        "subtree root/photos/ in path order (begins_with, one read)",
        drive.query(account="acme").begins_with(path="root/photos/"),
        _path_row,
    )
    _pattern(
        out,
        db,
        "direct children of root/photos/: folders and files (GSI2, keyed on parent)",
        children.query(account="acme", parent="root/photos/"),
        _path_row,
    )
