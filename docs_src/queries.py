"""Every query kind on the worked examples (`singletable.examples`), run on the sample data."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal
from typing import Any

import singletable as st
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


def main() -> dict[str, Any]:
    """Run each kind of query; return what each one read."""
    day = T0.replace(hour=0)  # 2026-06-23T00:00:00Z
    with st.embedded(demo) as db:
        st.BatchWrite(sample_items()).run(db)
        events = AuditEvent.query(actor_id="u_8814")  # begins_with(SK, "EVT#")
        return {
            # Newest first, at most 5 results in all.
            "newest": events.descending().limit(5).all(db),
            # Equality on the leading sort key field: begins_with(SK, "EVT#<ts>#").
            "at_06h": AuditEvent.query(actor_id="u_8814", ts=T0 + timedelta(hours=6)).all(db),
            # A window, both ends inclusive, whatever the seq.
            "day": events.between(ts=(day, day + timedelta(hours=23, minutes=59))).all(db),
            # Strictly after: nothing at exactly T0 + 20h.
            "after_20h": events.gt(ts=T0 + timedelta(hours=20)).all(db),
            # A partial value of the datetime's key form: all of June 2026.
            "june": events.begins_with(ts="2026-06").count(db),
            # A second ordering through an index: the day's readings above 30 °C.
            "hot": Reading.query(index="GSI1", day=date(2026, 6, 23))
            .gt(celsius=Decimal(30))
            .all(db),
            # Only some fields: rows become dicts.
            "latest_dev9": Reading.query(device_id="dev-9")
            .descending()
            .project("ts", "celsius")
            .first(db),
            # A filter runs after the read (and the read is billed in full).
            "edits": events.filter(AuditEvent.f.action == "edit").all(db),
            # A mixed partition, each item decoded into its own class.
            "activity": activity.query(actor_id="u_8814").all(db),
            # A subtree of the file tree in path order, folders and files together.
            "photos": drive.query(account="acme").begins_with(path="root/photos/").all(db),
            # Direct children through the parent index (GSI2).
            "root_children": children.query(account="acme", parent="root/").all(db),
        }


def pages(page_length: int = 4) -> list[list[int]]:
    """Read the audit log page by page, resuming each page from the previous cursor."""
    query = AuditEvent.query(actor_id="u_8814").limit(page_length)
    seqs: list[list[int]] = []
    with st.embedded(demo) as db:
        st.BatchWrite(sample_items()).run(db)
        cursor = None
        while True:
            page = query.page(db, cursor)
            seqs.append([e.seq for e in page.items])
            if page.cursor is None:
                return seqs
            cursor = page.cursor  # opaque: hand it to a client, get it back later
