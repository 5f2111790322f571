"""`singletable demo` runs the three worked examples and prints each request and its rows."""

from __future__ import annotations

import io
import json
import re

from singletable.cli import main


def _sections(text: str) -> dict[str, str]:
    parts = re.split(r"\n--- (.+)\n", text)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_demo_prints_every_access_pattern_with_its_request_and_rows() -> None:
    out = io.StringIO()
    assert main(["demo"], out=out) == 0
    sections = _sections(out.getvalue())
    assert len(sections) == 9

    stream = sections["newest-first activity stream (10 most recent)"]
    request = json.loads(stream[stream.index("{") : stream.index("\nrows")])
    assert request["ScanIndexForward"] is False
    assert request["Limit"] == 10
    times = re.findall(r"AuditEvent (\S+) seq=", stream)
    assert len(times) == 10
    assert times == sorted(times, reverse=True)

    day = sections["time window: every event on 2026-06-23 (whatever its seq)"]
    assert "BETWEEN" in day
    assert all(t.startswith("2026-06-23") for t in re.findall(r"AuditEvent (\S+) seq=", day))
    assert "seq=3 " in day
    assert "seq=42 " in day

    hot = sections["fleet-wide readings above 30 °C on 2026-06-23, hottest first (GSI1)"]
    temps = [float(t) for t in re.findall(r" (-?\d+\.\d+) °C", hot)]
    assert temps
    assert all(t > 30 for t in temps)
    assert temps == sorted(temps, reverse=True)

    cold = sections["fleet-wide readings below freezing (negative numbers sort correctly)"]
    temps = [float(t) for t in re.findall(r" (-?\d+\.\d+) °C", cold)]
    assert temps
    assert all(t < 0 for t in temps)
    assert temps == sorted(temps)

    subtree = sections["subtree root/photos/ in path order (begins_with, one read)"]
    paths = re.findall(r"(?:Folder|File) +(\S.*)", subtree)
    assert paths == [
        "root/photos/",
        "root/photos/2026/",
        "root/photos/2026/#1 best.png",
        "root/photos/2026/june.png",
        "root/photos/beach.jpg",
    ]
    children = sections[
        "direct children of root/photos/: folders and files (GSI2, keyed on parent)"
    ]
    assert re.findall(r"(?:Folder|File) +(\S.*)", children) == [
        "root/photos/2026/",
        "root/photos/beach.jpg",
    ]
