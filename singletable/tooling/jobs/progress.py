"""Progress of long-running work: a bar on a terminal, flushed plain lines otherwise.

On a TTY the display is a `tqdm` bar (items done against the expected total, with the
other counts, rate and ETA); tqdm is used rather than a home-made
bar because it already handles terminal width, redraw throttling and rate smoothing.
Without tqdm installed (it is the optional ``progress`` extra), or when the output is not
a terminal (a pipe, a CI log), the same figures are written as one plain line at most
every ``interval`` seconds, each flushed at once so a reader of the pipe sees it when it
is written rather than when the process exits.

Segments of a parallel scan report from several threads; every method is thread-safe.

The rate and the ETA come from the updates of the last ``window`` seconds only, counted
from the first update (the wait for the first page, while connections open, is no part of
the pace), and no ETA is shown until the work has run ``settle`` seconds over at least
``settle_updates`` updates: an ETA computed from the first pages of a run was off by orders
of magnitude ("ETA 1:28:40" for a run of 40 s, issue 21). The clock is a parameter, so
tests drive time themselves.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TextIO

from singletable.io.work_spans import job_progress

_tqdm: Any
try:
    from tqdm import tqdm as _tqdm
except ImportError:  # pragma: no cover - tqdm is the optional "progress" extra
    _tqdm = None


@dataclass(frozen=True)
class Wording:
    """How a display names its counts.

    Attributes:
        done: What the main count (`Counts.scanned`, the one the total, rate and ETA are
            about) counts: ``"scanned"`` for a migration, ``"written"`` for a load.
        others: The other `Counts` fields shown after it, by their names.
        approximate: The total is an estimate (DynamoDB's item count, refreshed about
            every six hours): shown as ``~N``, the percentage capped at 100.
        dry_run: Nothing is written: counts of writes are shown as what would be done
            (``would write 1,200``, ``would rewrite 90``), never as done.
    """

    done: str = "scanned"
    others: tuple[str, ...] = ("rewritten", "skipped", "failed")
    approximate: bool = True
    dry_run: bool = False

    def would(self) -> Wording:
        """The same wording for a dry run."""
        return replace(self, dry_run=True)

    def count(self, name: str, n: int) -> str:
        """``n`` of the count ``name``: ``1,200 written``, or ``would write 1,200`` dry."""
        verb = _WOULD.get(name) if self.dry_run else None
        return f"would {verb} {n:,}" if verb else f"{n:,} {name}"


#: The verb of each count that a dry run does not do (reading and refusing it does).
_WOULD = {"written": "write", "rewritten": "rewrite", "skipped": "skip", "deleted": "delete"}


@dataclass
class Counts:
    """What a task has done so far."""

    scanned: int = 0
    rewritten: int = 0
    skipped: int = 0
    failed: int = 0
    #: Lines an export wrote (its items scanned are `scanned`).
    written: int = 0


def _duration(seconds: float) -> str:
    hours, rest = divmod(round(seconds), 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}"


class Progress:
    """Progress of one task (e.g. the rewrite of one entity).

    Args:
        label: What is being done, e.g. ``"rewrite app/Order@1->Order@1"``.
        total: Items expected to be scanned (``None``: unknown, so no ETA). DynamoDB's
            item count is refreshed about every six hours, so the total is approximate.
        out: Where the display goes.
        done: Counts already done (a resumed run), included in totals but not in the rate.
        interval: Minimum seconds between two plain lines (0: a line on every update).
        bar: Force the bar (True) or plain lines (False); default: a bar when ``out`` is a
            terminal and tqdm is installed.
        wording: How the counts are named (default: a migration's).
        window: Seconds of recent updates the rate and ETA are computed over.
        settle: Seconds the work must have run before an ETA is shown.
        settle_updates: Updates that must have come before an ETA is shown (a few pages).
        clock: Monotonic seconds (tests pass a fake one).
    """

    def __init__(
        self,
        label: str,
        total: int | None,
        out: TextIO,
        *,
        done: Counts | None = None,
        interval: float = 1.0,
        bar: bool | None = None,
        wording: Wording | None = None,
        window: float = 30.0,
        settle: float = 5.0,
        settle_updates: int = 3,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.wording = wording or Wording()
        self.total = total
        self.out = out
        self.counts = Counts(**vars(done)) if done is not None else Counts()
        self.interval = interval
        self.window = window
        self.settle = settle
        self.settle_updates = settle_updates
        self._clock = clock
        self._start_scanned = self.counts.scanned
        self._started = clock()
        self._updates = 0
        #: (time, scanned) of the recent updates, the oldest first: the rate's window.
        self._samples: deque[tuple[float, int]] = deque()
        self._last_line = float("-inf")
        self._lock = threading.Lock()
        if bar is None:
            bar = _tqdm is not None and _isatty(out)
        self._bar: Any = None
        if bar and _tqdm is not None:
            self._bar = _tqdm(
                total=total,
                initial=self.counts.scanned,
                desc=label,
                unit="item",
                file=out,
                dynamic_ncols=True,
                smoothing=0.1,
                # No remaining time until the rate has settled (see the module docs).
                bar_format=_UNSETTLED_BAR,
            )
            self._bar.set_postfix_str(self._postfix(), refresh=False)

    def update(
        self,
        *,
        scanned: int = 0,
        rewritten: int = 0,
        skipped: int = 0,
        failed: int = 0,
        written: int = 0,
    ) -> None:
        """Add to the counts and refresh the display (plain lines: at most every interval).

        The same counts go to the ``singletable.job.items`` counter when OpenTelemetry
        records (`singletable.io.work_spans.job_progress`).
        """
        job_progress(
            self.label,
            {
                "scanned": scanned,
                "rewritten": rewritten,
                "skipped": skipped,
                "failed": failed,
                "written": written,
            },
        )
        with self._lock:
            c = self.counts
            c.scanned += scanned
            c.rewritten += rewritten
            c.skipped += skipped
            c.failed += failed
            c.written += written
            now = self._clock()
            self._updates += 1
            self._samples.append((now, c.scanned))
            # Keep one sample at or before the window's start, so the window is full.
            while len(self._samples) > 2 and self._samples[1][0] <= now - self.window:
                self._samples.popleft()
            if self._bar is not None:
                if self._bar.bar_format == _UNSETTLED_BAR and self.settled(now):
                    self._bar.bar_format = None  # tqdm's own format, ETA included
                self._bar.set_postfix_str(self._postfix(), refresh=False)
                self._bar.update(scanned)
                return
            if now - self._last_line >= self.interval:
                self._last_line = now
                self._line(now)

    def close(self) -> None:
        """Show the final figures (always a last plain line) and release the bar."""
        with self._lock:
            if self._bar is not None:
                self._bar.set_postfix_str(self._postfix(), refresh=True)
                self._bar.close()
                self._bar = None
                return
            self._line(self._clock(), final=True)

    # -- rendering ---------------------------------------------------------------------

    def _postfix(self) -> str:
        w = self.wording
        return ", ".join(w.count(name, getattr(self.counts, name)) for name in w.others)

    def settled(self, now: float | None = None) -> bool:
        """Whether enough has been seen for the rate to be the run's pace (an ETA shown)."""
        now = now if now is not None else self._clock()
        return now - self._started >= self.settle and self._updates >= self.settle_updates

    def rate(self, now: float | None = None) -> float:
        """Items done per second over the last ``window`` seconds of updates.

        Before a second update (no window yet): the average since the start.
        """
        now = now if now is not None else self._clock()
        if len(self._samples) < 2:
            return self.average(now)
        since, scanned = self._samples[0]
        elapsed = now - since
        return (self.counts.scanned - scanned) / elapsed if elapsed > 0 else 0.0

    def average(self, now: float | None = None) -> float:
        """Items done per second over the whole run (resumed work excluded)."""
        elapsed = (now if now is not None else self._clock()) - self._started
        return (self.counts.scanned - self._start_scanned) / elapsed if elapsed > 0 else 0.0

    def line(self, now: float | None = None, *, final: bool = False) -> str:
        """The plain progress line for the current counts."""
        now = now if now is not None else self._clock()
        c, w = self.counts, self.wording
        if self.total:
            percent = 100.0 * c.scanned / self.total
            if w.approximate:
                # DynamoDB's approximate item count: never show more than 100 %.
                percent = min(100.0, percent)
            of = f"~{self.total:,}" if w.approximate else f"{self.total:,}"
            would = w.dry_run and w.done in _WOULD  # "would write 4 of 10", not "4 of 10 written"
            done = (
                f"{w.count(w.done, c.scanned)} of {of} ({percent:.0f}%)"
                if would
                else f"{c.scanned:,} of {of} {w.done} ({percent:.0f}%)"
            )
        else:
            done = w.count(w.done, c.scanned)
        postfix = self._postfix()
        head = f"{self.label}: {done}" + (f", {postfix}" if postfix else "")
        if final:
            return (
                f"{head}; {self.average(now):,.0f} items/s, took {_duration(now - self._started)}"
            )
        rate = self.rate(now)
        text = f"{head}; {rate:,.0f} items/s"
        if self.total and rate > 0 and self.settled(now):
            remaining = max(0, self.total - c.scanned) / rate
            text += f", ETA {_duration(remaining)}"
        return text

    def _line(self, now: float, *, final: bool = False) -> None:
        self.out.write(self.line(now, final=final) + "\n")
        self.out.flush()


#: tqdm's default bar without the remaining time (``{remaining}``).
_UNSETTLED_BAR = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}, {rate_fmt}{postfix}]"


def _isatty(out: TextIO) -> bool:
    try:
        return bool(out.isatty())
    except (AttributeError, ValueError):  # closed or file-like objects without isatty
        return False
