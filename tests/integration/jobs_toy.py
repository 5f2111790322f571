"""A toy job kind for the job engine's tests: touch every item of a table once per job.

Each unit scans one segment of the table in small pages and, for every item, adds the
job's id to the item's ``jobs`` set and increments its ``hits``, conditional on the id not
being in the set yet. Work repeated after a takeover is then refused per item (counted as
``skipped``), and double work would show as ``hits`` above 1. Application writers bump
``app`` meanwhile; a lost update would show as a wrong sum of ``app``.

`TakenOver` makes another worker take a unit over at a chosen save of its holder.

Worker processes import this module (spawn), so everything here is module-level.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import Field

import singletable as st
from singletable.errors import ConditionFailedError
from singletable.tooling.jobs.engine import LeaseContext
from singletable.tooling.jobs.units import JsonValue, UnitContext, UnitWork, WorkUnit


@functools.cache
def toy_model(table_name: str) -> Any:
    """The toy entity on a table of this name (one class per name, as entities bind)."""
    table = st.Table(table_name)

    class Toy(st.Entity, table=table, pk="TOY#{n}", sk="TOY"):
        n: int
        hits: int = 0
        app: int = 0
        jobs: set[str] = Field(default_factory=set)

    return Toy


def seed(db: st.Connection, table_name: str, count: int) -> None:
    """Create the table and ``count`` toy items."""
    toy = toy_model(table_name)
    db.create_table(toy.plan().table)
    st.BatchWrite(puts=[toy(n=n) for n in range(count)]).run(db)


def segment_query(toy: Any, unit: WorkUnit, page_size: int) -> Any:
    """The scan of the unit's segment, in pages of ``page_size``."""
    return toy.scan().segment(unit.spec["segment"], unit.spec["segments"]).page_size(page_size)


def touch(executor: Any, toy: Any, job_id: str, items: list[Any]) -> dict[str, int]:
    """Touch each item once for the job (conditional writes); the page's counts."""
    written = skipped = 0
    for item in items:
        update = (
            toy.update(n=item.n)
            .add(jobs={job_id})
            .increment("hits")
            .where(~toy.f.jobs.contains(job_id))
        )
        try:
            update.run(executor)
            written += 1
        except ConditionFailedError:
            skipped += 1
    return {"scanned": len(items), "written": written, "skipped": skipped}


@dataclass
class TouchKind:
    """The toy kind: spec ``{"table", "segments", "page", "delay"}``.

    Not frozen: `JobKind.name` is a plain (settable) protocol attribute.
    """

    name: str = "touch"

    def units(self, spec: Mapping[str, JsonValue]) -> list[WorkUnit]:
        segments: int = spec["segments"]
        return [
            WorkUnit("", self.name, i, segments, {"segment": i, "segments": segments})
            for i in range(segments)
        ]

    def work(self, spec: Mapping[str, JsonValue], executor: Any) -> UnitWork:
        toy = toy_model(spec["table"])
        page_size: int = spec.get("page", 5)
        delay: float = spec.get("delay", 0.0)

        def run(unit: WorkUnit, ctx: UnitContext) -> None:
            query = segment_query(toy, unit, page_size).consistent()
            cursor = None if ctx.checkpoint is None else ctx.checkpoint["cursor"]
            for page in query.pages(executor, cursor):
                ctx.spend(rcu=1.0, wcu=float(len(page.items)))
                counts = touch(executor, toy, unit.job_id, page.items)
                if delay:
                    time.sleep(delay)
                if page.cursor is None:
                    ctx.finish(counts)
                    return
                ctx.save({"cursor": page.cursor}, counts)
            ctx.finish({})

        return run


TOUCH = TouchKind()
KINDS = {TOUCH.name: TOUCH}


def late_clock() -> float:
    """A clock a minute behind: a lease written with it has expired already.

    As if its holder had paused past the lease (missed its renewals), without a test
    sleeping.
    """
    return time.time() - 60


class TakenOver:
    """A holder's context whose lease another worker takes over at its ``at``-th save.

    Before that save (or finish) reaches the table, a live worker runs the whole job (it
    takes the unit over: the holder's lease has expired by the holder's own clock); with
    ``noticed`` the holder's heartbeat then finds the lease lost first. Only the saves
    whose counts ``counted`` accepts are counted towards ``at``.
    """

    def __init__(
        self,
        context: LeaseContext,
        at: int,
        noticed: bool,
        takeover: Callable[[], object],
        counted: Callable[[Mapping[str, int]], bool] = lambda counts: True,
    ) -> None:
        self.context = context
        self.at = at
        self.noticed = noticed
        self.takeover = takeover
        self.counted = counted
        self.seen = 0
        #: Whether the takeover happened.
        self.taken = False

    @property
    def checkpoint(self) -> Any:
        return self.context.checkpoint

    def spend(self, *, rcu: float = 0.0, wcu: float = 0.0) -> None:
        self.context.spend(rcu=rcu, wcu=wcu)

    def save(self, checkpoint: Any, counts: Mapping[str, int]) -> None:
        self._maybe_taken(counts)
        self.context.save(checkpoint, counts)

    def finish(self, counts: Mapping[str, int]) -> None:
        self._maybe_taken(counts)
        self.context.finish(counts)

    def _maybe_taken(self, counts: Mapping[str, int]) -> None:
        if not self.counted(counts):
            return
        if self.seen == self.at:
            self.takeover()
            self.taken = True
            if self.noticed:
                assert not self.context.renew()
        self.seen += 1
