from __future__ import annotations

import threading

import pytest

from singletable.errors import JobError
from singletable.tooling.jobs.local import LocalContext, TokenBucket, run_units
from singletable.tooling.jobs.units import JobCancelled, UnitContext, WorkUnit


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def units(n: int) -> list[WorkUnit]:
    return [WorkUnit("j", "toy", i, n, {"pages": 3}) for i in range(n)]


def paged(unit: WorkUnit, ctx: UnitContext) -> None:
    start = ctx.checkpoint["page"] if ctx.checkpoint else 0
    pages: int = unit.spec["pages"]
    for page in range(start, pages - 1):
        ctx.spend(rcu=1.0)
        ctx.save({"page": page + 1}, {"scanned": 10})
    ctx.finish({"scanned": 10})


def test_run_units_runs_each_unit_to_its_end_and_sums_its_counts() -> None:
    contexts = run_units(units(4), paged, workers=2)
    assert [c.counts for c in contexts] == [{"scanned": 30}] * 4
    assert all(c.done and c.checkpoint is None for c in contexts)


def test_run_units_resumes_each_unit_from_its_checkpoint() -> None:
    contexts = run_units(units(2), paged, checkpoints={1: {"page": 2}})
    assert [c.counts for c in contexts] == [{"scanned": 30}, {"scanned": 10}]


def test_the_first_failure_stops_the_other_units_and_is_raised() -> None:
    started = threading.Event()
    seen: list[BaseException] = []

    def work(unit: WorkUnit, ctx: UnitContext) -> None:
        if unit.index == 0:
            started.wait(5)
            raise RuntimeError("boom")
        started.set()
        try:
            while True:
                ctx.save(None, {"scanned": 1})
        except JobCancelled as error:
            seen.append(error)
            raise

    with pytest.raises(RuntimeError, match="boom"):
        run_units(units(2), work, workers=2)
    assert len(seen) == 1


def test_a_cancelled_context_raises_at_the_next_save_after_keeping_the_page() -> None:
    cancelled = threading.Event()
    ctx = LocalContext(cancelled=cancelled)
    ctx.save({"page": 1}, {"scanned": 5})
    cancelled.set()
    with pytest.raises(JobCancelled):
        ctx.save({"page": 2}, {"scanned": 5})
    assert ctx.checkpoint == {"page": 2}
    assert ctx.counts == {"scanned": 10}


def test_a_bucket_lets_one_second_through_then_paces_takes_at_its_rate() -> None:
    clock = FakeClock()
    bucket = TokenBucket(10.0, clock=clock, sleep=clock.sleep)
    assert bucket.take(10.0) == 0.0
    assert bucket.take(5.0) == pytest.approx(0.5)
    assert bucket.take(20.0) == pytest.approx(2.0)
    assert clock.now == pytest.approx(2.5)


def test_an_idle_bucket_saves_no_more_than_one_second_of_budget() -> None:
    clock = FakeClock()
    bucket = TokenBucket(10.0, clock=clock, sleep=clock.sleep)
    clock.now = 100.0
    assert bucket.take(10.0) == 0.0
    assert bucket.take(10.0) == pytest.approx(1.0)


def test_a_new_rate_applies_to_the_next_take() -> None:
    clock = FakeClock()
    bucket = TokenBucket(10.0, clock=clock, sleep=clock.sleep)
    bucket.take(10.0)
    bucket.set_rate(2.0)
    assert bucket.take(4.0) == pytest.approx(2.0)
    with pytest.raises(JobError, match="positive"):
        bucket.set_rate(0)


def test_spend_takes_from_each_bucket_given() -> None:
    clock = FakeClock()
    reads = TokenBucket(1.0, clock=clock, sleep=clock.sleep)
    ctx = LocalContext(rcu=reads)
    ctx.spend(rcu=1.0, wcu=100.0)
    ctx.spend(rcu=3.0)
    assert clock.slept == [pytest.approx(3.0)]
