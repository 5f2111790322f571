"""The progress display: flushed plain lines off a terminal, a tqdm bar on one."""

from __future__ import annotations

import io
import os
import select
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from singletable.tooling.jobs.progress import Counts, Progress


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


def test_plain_lines_carry_counts_rate_and_eta_and_are_flushed() -> None:
    out = Recorder()
    progress = Progress("rewrite t/A@1->A@1", 400, out, interval=0, bar=False)
    progress.update(scanned=100, rewritten=90, skipped=8, failed=2)
    progress.update(scanned=100, rewritten=100)
    progress.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 3
    assert lines[0].startswith(
        "rewrite t/A@1->A@1: 100 of ~400 scanned (25%), 90 rewritten, 8 skipped, 2 failed; "
    )
    assert "items/s, ETA " in lines[1]
    assert "200 of ~400 scanned (50%)" in lines[1]
    assert ", took 0:00:0" in lines[2]
    assert out.events == ["write", "flush"] * 3  # every line flushed as it is written


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
    progress = Progress("t", 100, io.StringIO(), done=Counts(scanned=60), bar=False)
    time.sleep(0.01)
    progress.update(scanned=10)
    assert "70 of ~100 scanned (70%)" in progress.line()
    assert progress.rate() < 10 / 0.01


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
