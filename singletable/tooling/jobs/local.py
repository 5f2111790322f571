"""Units run in one process: an in-memory `UnitContext` and a thread pool over the units.

`LocalContext` holds no lease: its checkpoint lives in memory and nothing fences it, which
is right when one process owns every unit (tests, a migration run by one command). A job
shared by many processes uses the lease-backed context of `singletable.tooling.jobs.engine`
instead; both take capacity through the same `TokenBucket`.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

from singletable.errors import JobError
from singletable.io.work_spans import unit_span
from singletable.tooling.jobs.units import JobCancelled, JsonValue, UnitWork, WorkUnit

__all__ = ["LocalContext", "TokenBucket", "run_units"]


class TokenBucket:
    """A rate limit that blocks the caller: at most ``rate`` units per second on average.

    A take larger than what is in the bucket is granted at once and leaves the bucket in
    debt, which the next takes wait out: a request that costs more than one second of
    budget (a 1 MB scan page under a small ``--max-rcu``) still goes through, and the
    average holds. The bucket holds at most one second of budget, so an idle worker cannot
    save up a burst. Thread-safe; ``rate`` may change while it is used (`set_rate`).

    Args:
        rate: Units per second (> 0).
        full: Start with one second of budget (False: start empty, so that workers
            joining a shared budget together do not each spend a second of it at once).
        clock: Seconds, monotonic (injectable for tests).
        sleep: How to wait (injectable for tests).
    """

    def __init__(
        self,
        rate: float,
        *,
        full: bool = True,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if rate <= 0:
            raise JobError(f"a rate limit must be positive, not {rate}")
        self._rate = rate
        self._clock = clock
        self._sleep = sleep
        self._tokens = rate if full else 0.0
        self._at = clock()
        self._lock = threading.Lock()

    @property
    def rate(self) -> float:
        """Units per second."""
        return self._rate

    def set_rate(self, rate: float) -> None:
        """Change the rate (a worker's share of the job's budget moves as workers come and go)."""
        if rate <= 0:
            raise JobError(f"a rate limit must be positive, not {rate}")
        with self._lock:
            self._refill()
            self._rate = rate
            self._tokens = min(self._tokens, rate)

    def take(self, amount: float) -> float:
        """Take ``amount`` units, waiting first as long as the bucket is in debt.

        Returns:
            The seconds waited.
        """
        if amount <= 0:
            return 0.0
        with self._lock:
            self._refill()
            self._tokens -= amount
            wait_for = -self._tokens / self._rate if self._tokens < 0 else 0.0
        if wait_for > 0:
            self._sleep(wait_for)
        return wait_for

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self._rate, self._tokens + (now - self._at) * self._rate)
        self._at = now


class LocalContext:
    """An in-memory `UnitContext` for one process: no lease, nothing fenced.

    Args:
        checkpoint: Where the unit starts (None: at its beginning).
        rcu: The bucket its reads are taken from (None: reads are not limited).
        wcu: The bucket its writes are taken from (None: writes are not limited).
        cancelled: Set to make the next `save` raise `JobCancelled`.
    """

    def __init__(
        self,
        checkpoint: Mapping[str, JsonValue] | None = None,
        *,
        rcu: TokenBucket | None = None,
        wcu: TokenBucket | None = None,
        cancelled: threading.Event | None = None,
    ) -> None:
        self._checkpoint = checkpoint
        self._rcu = rcu
        self._wcu = wcu
        self._cancelled = cancelled or threading.Event()
        #: The unit's counts so far (the sums of every `save` and `finish`).
        self.counts: dict[str, int] = {}
        #: Whether `finish` was called.
        self.done = False

    @property
    def checkpoint(self) -> Mapping[str, JsonValue] | None:
        """The last saved checkpoint (None at the start)."""
        return self._checkpoint

    def save(self, checkpoint: Mapping[str, JsonValue] | None, counts: Mapping[str, int]) -> None:
        """Keep the checkpoint and add the page's counts; `JobCancelled` once cancelled."""
        self._add(counts)
        self._checkpoint = checkpoint
        if self._cancelled.is_set():
            raise JobCancelled("the job was cancelled")

    def finish(self, counts: Mapping[str, int]) -> None:
        """Add the last page's counts and mark the unit done."""
        self._add(counts)
        self._checkpoint = None
        self.done = True

    def spend(self, *, rcu: float = 0.0, wcu: float = 0.0) -> None:
        """Wait for the capacity in the buckets given (no-op without them)."""
        if self._rcu is not None:
            self._rcu.take(rcu)
        if self._wcu is not None:
            self._wcu.take(wcu)

    def _add(self, counts: Mapping[str, int]) -> None:
        for name, n in counts.items():
            self.counts[name] = self.counts.get(name, 0) + n


def run_units(
    units: Sequence[WorkUnit],
    work: UnitWork,
    *,
    workers: int = 1,
    max_rcu: float | None = None,
    max_wcu: float | None = None,
    checkpoints: Mapping[int, Mapping[str, JsonValue] | None] | None = None,
    cancelled: threading.Event | None = None,
) -> list[LocalContext]:
    """Run every unit in this process, ``workers`` at a time (threads).

    The units share one rate limit: ``max_rcu``/``max_wcu`` hold for them all together.
    The first unit that raises stops the others at their next `save` (they see the job
    cancelled), and its error is raised once they have stopped.

    Args:
        units: The units to run.
        work: What runs one unit.
        workers: How many units run at once.
        max_rcu: Read capacity per second for all units together (None: unlimited).
        max_wcu: Write capacity per second for all units together (None: unlimited).
        checkpoints: Where units start, by index (a resumed run); absent: at the beginning.
        cancelled: Set it (from another thread, a signal handler) to stop every unit at its
            next `save` with `JobCancelled`.

    Returns:
        One context per unit, in the order of ``units``: its counts, checkpoint and ``done``.
    """
    if workers < 1:
        raise JobError(f"workers must be at least 1, not {workers}")
    stop = cancelled or threading.Event()
    rcu = TokenBucket(max_rcu) if max_rcu is not None else None
    wcu = TokenBucket(max_wcu) if max_wcu is not None else None
    starts = checkpoints or {}
    contexts = [
        LocalContext(starts.get(unit.index), rcu=rcu, wcu=wcu, cancelled=stop) for unit in units
    ]

    def run(unit: WorkUnit, ctx: LocalContext) -> None:
        if stop.is_set():
            raise JobCancelled("the job was cancelled")
        with unit_span(unit.kind, unit.job_id, unit.index, unit.total, unit.spec):
            work(unit, ctx)

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="unit") as pool:
        # Each unit runs in a copy of the caller's context, so that what is current there
        # (the span of a migration, for one) is current in the unit too.
        futures = [
            pool.submit(contextvars.copy_context().run, run, unit, ctx)
            for unit, ctx in zip(units, contexts, strict=True)
        ]
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        failed = [f for f in futures if f in done and f.exception() is not None]
        if failed:
            stop.set()
            for future in futures:
                future.cancel()
            wait(futures)
            failed[0].result()  # raises the unit's error
    return contexts
