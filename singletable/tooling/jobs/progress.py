"""Progress of long-running work: a bar on a terminal, flushed plain lines otherwise.

On a TTY the display is a `tqdm` bar (items done against the expected total, with the
other counts, rate and ETA); tqdm is used rather than a home-made
bar because it already handles terminal width, redraw throttling and rate smoothing.
Without tqdm installed (it is the optional ``progress`` extra), or when the output is not
a terminal (a pipe, a CI log), the same figures are written as one plain line at most
every ``interval`` seconds, each flushed at once so a reader of the pipe sees it when it
is written rather than when the process exits.

Segments of a parallel scan report from several threads; every method is thread-safe.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, TextIO

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
    """

    done: str = "scanned"
    others: tuple[str, ...] = ("rewritten", "skipped", "failed")
    approximate: bool = True


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
    ) -> None:
        self.label = label
        self.wording = wording or Wording()
        self.total = total
        self.out = out
        self.counts = Counts(**vars(done)) if done is not None else Counts()
        self.interval = interval
        self._start_scanned = self.counts.scanned
        self._started = time.monotonic()
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
        """Add to the counts and refresh the display (plain lines: at most every interval)."""
        with self._lock:
            c = self.counts
            c.scanned += scanned
            c.rewritten += rewritten
            c.skipped += skipped
            c.failed += failed
            c.written += written
            if self._bar is not None:
                self._bar.set_postfix_str(self._postfix(), refresh=False)
                self._bar.update(scanned)
                return
            now = time.monotonic()
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
            self._line(time.monotonic(), final=True)

    # -- rendering ---------------------------------------------------------------------

    def _postfix(self) -> str:
        return ", ".join(f"{getattr(self.counts, name)} {name}" for name in self.wording.others)

    def rate(self, now: float | None = None) -> float:
        """Items done per second in this run (resumed work excluded)."""
        elapsed = (now if now is not None else time.monotonic()) - self._started
        return (self.counts.scanned - self._start_scanned) / elapsed if elapsed > 0 else 0.0

    def line(self, now: float | None = None, *, final: bool = False) -> str:
        """The plain progress line for the current counts."""
        now = now if now is not None else time.monotonic()
        c, w = self.counts, self.wording
        done = f"{c.scanned:,}"
        if self.total:
            percent = 100.0 * c.scanned / self.total
            if w.approximate:
                # DynamoDB's approximate item count: never show more than 100 %.
                percent = min(100.0, percent)
            of = f"~{self.total:,}" if w.approximate else f"{self.total:,}"
            done = f"{c.scanned:,} of {of} {w.done} ({percent:.0f}%)"
        else:
            done += f" {w.done}"
        rate = self.rate(now)
        text = f"{self.label}: {done}, {self._postfix()}; {rate:,.0f} items/s"
        if final:
            return f"{text}, took {_duration(now - self._started)}"
        if self.total and rate > 0:
            remaining = max(0, self.total - c.scanned) / rate
            text += f", ETA {_duration(remaining)}"
        return text

    def _line(self, now: float, *, final: bool = False) -> None:
        self.out.write(self.line(now, final=final) + "\n")
        self.out.flush()


def _isatty(out: TextIO) -> bool:
    try:
        return bool(out.isatty())
    except (AttributeError, ValueError):  # closed or file-like objects without isatty
        return False
