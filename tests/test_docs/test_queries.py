"""The query examples of docs/queries.md run on the worked examples and read what they claim."""

from datetime import datetime, timezone
from decimal import Decimal

from docs_src import queries
from singletable.examples import Actor, AuditEvent, File, Folder


def test_every_query_kind_reads_the_documented_slice() -> None:
    r = queries.main()
    assert [e.seq for e in r["newest"]] == [11, 10, 9, 8, 7]
    # Two events share the 06:00 timestamp; seq keeps them apart.
    assert [e.seq for e in r["at_06h"]] == [3, 42]
    assert [e.seq for e in r["day"]] == [0, 1, 2, 3, 42, 4, 5, 6, 7]
    assert all(e.ts.date().isoformat() == "2026-06-23" for e in r["day"])
    assert [e.seq for e in r["after_20h"]] == [11]  # not seq 10, at exactly 20:00
    assert r["june"] == 14  # every event, the day before included
    assert [x.celsius for x in r["hot"]] == sorted(x.celsius for x in r["hot"])
    assert r["hot"]
    assert all(x.celsius > 30 for x in r["hot"])
    assert r["latest_dev9"] == {
        "ts": datetime(2026, 6, 23, 8, 55, tzinfo=timezone.utc),
        "celsius": Decimal("29.25"),
    }
    assert {e.action for e in r["edits"]} == {"edit"}
    assert len(r["edits"]) == 3
    groups = r["activity"].by_type()
    assert len(groups[Actor]) == 1
    assert len(groups[AuditEvent]) == 14
    assert isinstance(r["activity"][-1], Actor)  # "PROFILE" sorts after "EVT#..."
    assert r["activity"].unknown == []
    assert [(type(x), x.path) for x in r["photos"]] == [
        (Folder, "root/photos/"),
        (Folder, "root/photos/2026/"),
        (File, "root/photos/2026/#1 best.png"),
        (File, "root/photos/2026/june.png"),
        (File, "root/photos/beach.jpg"),
    ]
    assert [x.path for x in r["root_children"]] == [
        "root/docs/",
        "root/photos-old.zip",
        "root/photos/",
    ]


def test_pages_resume_from_their_cursor() -> None:
    assert queries.pages(4) == [[0, 0, 1, 2], [3, 42, 4, 5], [6, 7, 8, 9], [10, 11]]
