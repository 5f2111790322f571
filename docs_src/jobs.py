"""A job kind, a job started in the table, two workers sharing it, and its status."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import singletable as st
from singletable.tooling.jobs import (
    JsonValue,
    UnitContext,
    UnitWork,
    WorkUnit,
    job_status,
    run_job,
    start_job,
)

shop = st.Table("shop")


class Order(st.Entity, table=shop, pk="O#{oid}", sk="ORDER"):
    oid: int
    total: int
    audited: bool = False


class AuditKind:
    """Mark every order audited: one unit per scan segment, conditional writes, pages."""

    name = "audit"

    def units(self, spec: Mapping[str, JsonValue]) -> list[WorkUnit]:
        n = spec["segments"]
        return [WorkUnit("", self.name, i, n, {"segment": i, "segments": n}) for i in range(n)]

    def work(self, spec: Mapping[str, JsonValue], executor: Any) -> UnitWork:
        def run(unit: WorkUnit, ctx: UnitContext) -> None:
            scan = Order.scan().segment(unit.spec["segment"], unit.spec["segments"]).page_size(25)
            cursor = ctx.checkpoint["cursor"] if ctx.checkpoint else None
            for page in scan.pages(executor, cursor):
                ctx.spend(rcu=1, wcu=len(page.items))  # wait for this worker's share
                written = 0
                for order in page.items:
                    try:  # conditional: a page redone after a takeover changes nothing
                        update = Order.update(oid=order.oid).set(audited=True)
                        update.where(Order.f.audited == False).run(executor)  # noqa: E712
                        written += 1
                    except st.ConditionFailedError:
                        pass
                counts = {"scanned": len(page.items), "written": written}
                if page.cursor is None:
                    ctx.finish(counts)
                    return
                ctx.save({"cursor": page.cursor}, counts)  # fenced by the lease

        return run


AUDIT = AuditKind()


def main() -> dict[str, Any]:
    """Start a job, run two workers on it, and read its status."""
    with st.embedded(shop) as db:
        st.BatchWrite(puts=[Order(oid=i, total=i) for i in range(200)]).run(db)
        start_job(db, shop, AUDIT, {"segments": 4}, job_id="audit-1", max_wcu=1000)
        workers = [
            threading.Thread(
                target=run_job,
                args=(lambda: db, shop, "audit-1", {"audit": AUDIT}),
                kwargs={"worker_id": f"worker-{n}"},
            )
            for n in range(2)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        status = job_status(db, shop, "audit-1")
        audited = sum(order.audited for order in Order.scan().all(db))
    return {"status": status, "audited": audited}
