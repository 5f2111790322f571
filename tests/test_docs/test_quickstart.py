"""The quickstart shown in README.md and the docs runs and returns what the text claims."""

from datetime import datetime, timezone

import pytest

from docs_src import quickstart


def test_quickstart_reads_newest_three_first(capsys: pytest.CaptureFixture[str]) -> None:
    newest = quickstart.main()
    assert [e.seq for e in newest] == [4, 3, 2]
    assert newest[0].ts == datetime(2026, 6, 23, 8, 4, tzinfo=timezone.utc)
    assert "begins_with" in capsys.readouterr().out


def test_quickstart_keys_are_readable() -> None:
    event = quickstart.AuditEvent(
        actor_id="u_8814",
        ts=datetime(2026, 6, 23, 8, 0, tzinfo=timezone.utc),
        seq=42,
        action="edit",
        target="doc/1",
    )
    item = event.to_item()
    assert item["PK"] == {"S": "ACTOR#u_8814"}
    assert item["SK"] == {"S": "EVT#2026-06-23T08:00:00.000000Z#000042"}
    assert item["GSI1PK"] == {"S": "ACTION#edit"}
