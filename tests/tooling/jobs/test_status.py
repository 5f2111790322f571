"""Rate and ETA of a job: over a sliding window, and only once they have settled."""

from __future__ import annotations

import pytest

from singletable.tooling.jobs.status import JobStatus, RateWindow


def test_no_rate_before_two_readings_and_no_eta_before_it_settles() -> None:
    window = RateWindow(30.0, settle=5.0, min_pages=2)
    window.add(0.0, 0, 0)
    assert window.rate() is None
    assert window.eta(1000) is None
    window.add(2.0, 200, 4)
    assert window.rate() == pytest.approx(100.0)
    assert window.eta(1000) is None  # 2 s of readings: not settled
    window.add(6.0, 600, 12)
    assert window.eta(1000) == pytest.approx(4.0)


def test_no_eta_before_two_pages_whatever_the_time() -> None:
    window = RateWindow(30.0, settle=5.0, min_pages=2)
    window.add(0.0, 0, 0)
    window.add(10.0, 100, 1)
    assert window.rate() == pytest.approx(10.0)
    assert window.eta(1000) is None
    assert window.eta(None) is None


def test_the_rate_follows_the_last_window_not_the_average_since_the_start() -> None:
    window = RateWindow(10.0, settle=1.0)
    window.add(0.0, 0, 0)
    window.add(10.0, 1000, 10)  # a fast start: 100/s
    for t in range(11, 31):
        window.add(float(t), 1000 + 10 * (t - 10), 20 + t)  # then 10/s
    assert window.rate() == pytest.approx(10.0)
    assert window.eta(1300) == pytest.approx(10.0)


def test_a_status_line_names_units_workers_counts_and_rate() -> None:
    status = JobStatus(
        job_id="j",
        kind="touch",
        state="running",
        total=8,
        done=3,
        live=2,
        workers=2,
        counts={"scanned": 500, "written": 40},
        pages=10,
        takeovers=1,
        measure="scanned",
        expected=1000,
        created=0.0,
        read_at=10.0,
    )
    assert status.line(50.0, 10.0) == (
        "job j (touch) running; units 3/8 done, 2 leased by 2 worker(s); scanned 500, "
        "written 40; 50% of ~1,000; 50 scanned/s; ETA 0:00:10; 1 takeover(s)"
    )
