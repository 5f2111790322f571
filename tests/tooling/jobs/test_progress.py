"""The progress display: flushed plain lines off a terminal, a tqdm bar on one."""

from __future__ import annotations

import io
import os
import select
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from singletable.tooling.jobs.progress import Counts, Progress, Wording


class Recorder(io.StringIO):
    """Records, for every line written, whether a flush followed before the next write."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[str] = []

    def write(self, text: str) -> int:
        self.events.append("write")
        return super().write(text)

    def flush(self) -> None:
        self.events.append("flush")
        super().flush()


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_plain_lines_carry_counts_rate_and_eta_and_are_flushed() -> None:
    out, clock = Recorder(), Clock()
    progress = Progress("rewrite t/A@1->A@1", 400, out, interval=0, bar=False, clock=clock)
    for seconds in (2, 2, 2):
        clock.now += seconds
        progress.update(scanned=100, rewritten=90, skipped=8, failed=2)
    clock.now += 2
    progress.close()
    lines = out.getvalue().splitlines()
    assert lines == [
        "rewrite t/A@1->A@1: 100 of ~400 scanned (25%), 90 rewritten, 8 skipped, 2 failed; "
        "50 items/s",
        "rewrite t/A@1->A@1: 200 of ~400 scanned (50%), 180 rewritten, 16 skipped, 4 failed; "
        "50 items/s",
        # 6 s and 3 updates: settled, so the ETA comes (100 left at 50 items/s).
        "rewrite t/A@1->A@1: 300 of ~400 scanned (75%), 270 rewritten, 24 skipped, 6 failed; "
        "50 items/s, ETA 0:00:02",
        "rewrite t/A@1->A@1: 300 of ~400 scanned (75%), 270 rewritten, 24 skipped, 6 failed; "
        "38 items/s, took 0:00:08",
    ]
    assert out.events == ["write", "flush"] * 4  # every line flushed as it is written


def test_the_eta_settles_on_the_runs_pace_after_a_slow_start() -> None:
    # Issue 21: the first ETA of a 40 s load read "ETA 1:28:40". A slow first page
    # (connections, a cold table), then a steady 100 items/s for 4,000 items.
    out, clock = io.StringIO(), Clock()
    progress = Progress("load", 4000, out, interval=1, bar=False, clock=clock)
    clock.now += 3.0
    progress.update(scanned=1)
    etas: list[tuple[float, float]] = []  # (seconds left in truth, ETA shown)
    while progress.counts.scanned < 4000:
        clock.now += 0.25
        progress.update(scanned=min(25, 4000 - progress.counts.scanned))
        line = progress.line()
        if "ETA" in line:
            h, m, sec = map(int, line.rsplit("ETA ", 1)[1].split(":"))
            etas.append(((4000 - progress.counts.scanned) / 100, h * 3600 + m * 60 + sec))
    first = next(i for i, text in enumerate(out.getvalue().splitlines()) if "ETA" in text)
    assert first == 2  # the lines at 3 s and 4 s have none: settled at 5 s
    # Every ETA shown is within 15 s of the truth, and within 1 s once the slow start has
    # left the window (30 s).
    assert all(abs(shown - truth) <= 15 for truth, shown in etas)
    late = [(truth, shown) for truth, shown in etas if truth < 7]
    assert late
    assert all(abs(shown - truth) <= 1 for truth, shown in late)


def test_the_rate_follows_the_last_window_only() -> None:
    clock = Clock()
    progress = Progress("t", None, io.StringIO(), bar=False, window=10, clock=clock)
    for _ in range(20):  # 10 items/s for 20 s
        clock.now += 1
        progress.update(scanned=10)
    for _ in range(20):  # then 100 items/s
        clock.now += 1
        progress.update(scanned=100)
    assert progress.rate() == pytest.approx(100)
    assert progress.average() == pytest.approx(2200 / 40)


def test_a_dry_run_says_what_it_would_write() -> None:
    clock = Clock()
    wording = Wording(done="written", others=("failed",), approximate=False).would()
    progress = Progress("load", 10, io.StringIO(), bar=False, wording=wording, clock=clock)
    clock.now += 1
    progress.update(scanned=4)
    assert progress.line().startswith("load: would write 4 of 10 (40%), 0 failed; ")
    migration = Wording().would()
    dry = Progress("rewrite", None, io.StringIO(), bar=False, wording=migration, clock=clock)
    dry.update(scanned=5, rewritten=3, skipped=2)
    assert dry.line().startswith("rewrite: 5 scanned, would rewrite 3, would skip 2, 0 failed; ")


def test_plain_lines_are_throttled_but_the_last_one_always_comes() -> None:
    out = io.StringIO()
    progress = Progress("count", None, out, interval=3600, bar=False)
    for _ in range(50):
        progress.update(scanned=2)
    progress.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 2  # the first update, then the final line
    assert lines[-1].startswith("count: 100 scanned, 0 rewritten")
    assert "ETA" not in lines[-1]  # no total, no ETA


def test_resumed_work_counts_in_totals_not_in_the_rate() -> None:
    clock = Clock()
    progress = Progress("t", 100, io.StringIO(), done=Counts(scanned=60), bar=False, clock=clock)
    clock.now += 2
    progress.update(scanned=10)
    assert "70 of ~100 scanned (70%)" in progress.line()
    assert progress.rate() == progress.average() == 5


def test_bar_on_a_terminal() -> None:
    pytest.importorskip("tqdm")
    out = io.StringIO()
    progress = Progress("rewrite t", 20, out, bar=True)
    progress.update(scanned=20, rewritten=15, skipped=5)
    progress.close()
    text = out.getvalue()
    assert "rewrite t" in text
    assert "20/20" in text
    assert "item/s" in text
    assert "15 rewritten, 5 skipped, 0 failed" in text


CHILD = textwrap.dedent(
    """
    import sys
    from singletable.tooling.jobs.progress import Progress

    progress = Progress("rewrite t", 10, sys.stdout, interval=0)
    progress.update(scanned=5, rewritten=5)
    sys.stdin.readline()  # block until the parent saw the line
    progress.update(scanned=5, rewritten=5)
    progress.close()
    """
)


def test_lines_reach_a_pipe_while_the_process_runs(tmp_path: Path) -> None:
    # stdout is a pipe (block-buffered by default): without a flush per line the parent
    # would see nothing until the child exits, and the child waits for the parent.
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[3])}
    env.pop("PYTHONUNBUFFERED", None)
    with subprocess.Popen(
        [sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    ) as child:
        assert child.stdout is not None
        assert child.stdin is not None
        ready, _, _ = select.select([child.stdout], [], [], 30)
        running = child.poll() is None
        first = child.stdout.readline().decode() if ready else ""
        child.stdin.write(b"\n")
        child.stdin.close()
        rest = child.stdout.read().decode().splitlines()
    assert ready, "no progress line arrived while the child was running"
    assert running  # the line came before exit, not with it
    assert first.startswith("rewrite t: 5 of ~10 scanned (50%), 5 rewritten")
    assert child.returncode == 0
    assert rest[-1].startswith("rewrite t: 10 of ~10 scanned (100%), 10 rewritten")


def test_the_bar_shows_no_remaining_time_until_settled() -> None:
    pytest.importorskip("tqdm")
    out, clock = io.StringIO(), Clock()
    progress = Progress("load", 100, out, bar=True, clock=clock)
    progress.update(scanned=10)
    assert "<" not in out.getvalue().replace("\r", "\n").splitlines()[-1]
    for _ in range(3):
        clock.now += 2
        progress.update(scanned=10)
    progress.close()
    # tqdm's own format again: "[elapsed<remaining, rate]".
    assert "<" in out.getvalue().replace("\r", "\n").splitlines()[-1]
