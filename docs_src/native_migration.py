"""Moving an index from template keys to native keys: expand, move the readers, contract.

Tasks are found by tenant and status, due date first. The first model keys a template
GSI with synthetic strings (``T#acme#S#open`` / ``2026-07-01#t1``). The native GSI keys
the same query by the stored attributes themselves, so adding it rewrites no item:

1. **Expand.** Declare the native GSI beside the template one. The plan is one online
   index change; `migrate` creates the index and DynamoDB backfills it from the stored
   ``tenant``, ``status`` and ``due`` attributes. It notes that a stored empty string
   in a text part would be left out (and could not be written again): none here.
2. **Move the readers** to the native index, and deploy them.
3. **Contract.** Drop the template GSI (and stop writing its keys): one more online
   index change. The stored ``GSI1PK``/``GSI1SK`` attributes stay, read by nobody.
"""

from __future__ import annotations

import io
from datetime import date
from typing import Any

import singletable as st

SYNTHETIC = st.GSI("ByStatus", pk="GSI1PK", sk="GSI1SK")
NATIVE = st.NativeGSI("ByTenantStatus", pk=["tenant", "status"], sk=["due"])


def model(name: str, *, synthetic: bool, native: bool) -> tuple[st.Table, Any]:
    """The table and its Task entity, with the template GSI, the native one, or both."""
    indexes: list[st.GSI | st.NativeGSI] = [SYNTHETIC] if synthetic else []
    if native:
        indexes.append(NATIVE)  # fed by the fields tenant, status and due: nothing to declare
    table = st.Table(name, indexes=indexes)
    keys = (
        {"ByStatus": st.IndexKeys(pk="T#{tenant}#S#{status}", sk="{due}#{task_id}")}
        if synthetic
        else {}
    )

    class Task(st.Entity, table=table, pk="T#{tenant}", sk="TASK#{task_id}", indexes=keys):
        tenant: str
        task_id: str
        status: str
        due: date

    return table, Task


def expand_and_contract(db: st.Connection, name: str) -> dict[str, Any]:
    """The three steps on a live table; what each plan and read shows."""
    table, task = model(name, synthetic=True, native=False)
    db.create_table(table)
    for i, (status, day) in enumerate([("open", 3), ("done", 1), ("open", 1), ("open", 2)]):
        task.put(task(tenant="acme", task_id=f"t{i}", status=status, due=date(2026, 7, day))).run(
            db
        )
    committed = st.load_snapshot(st.snapshot_json(table))  # the snapshot file of release 1

    # 1. Expand: both indexes. No item is rewritten; migrate creates the native GSI.
    both, task = model(name, synthetic=True, native=True)
    expand = st.plan_changes(both, committed)
    st.migrate(db, both, committed, out=io.StringIO(), poll_interval=0.2)
    committed = st.load_snapshot(st.snapshot_json(both))  # release 2

    # 2. Readers move to the native index: equality on the partition parts, due in order.
    reader = task.query(index="ByTenantStatus", tenant="acme", status="open")
    due = [t.task_id for t in reader.all(db)]

    # 3. Contract: only the native index. migrate deletes the template GSI.
    final, _ = model(name, synthetic=False, native=True)
    contract = st.plan_changes(final, committed)
    st.migrate(db, final, committed, out=io.StringIO(), poll_interval=0.2)

    live = db.call("describe_table", {"TableName": name})["Table"]
    return {
        "expand": [(c.kind.value, c.action) for c in expand.changes if c.action],
        "notes": [c.subject for c in expand.changes if not c.action],
        "rewrites": expand.rewrites() + contract.rewrites(),
        "open, by due date": due,
        "contract": [(c.kind.value, c.action) for c in contract.changes],
        "live indexes": sorted(g["IndexName"] for g in live["GlobalSecondaryIndexes"]),
    }


def main() -> dict[str, Any]:
    """The example on the embedded backend."""
    with st.embedded() as db:
        result = expand_and_contract(db, "tasks")
    print(result)
    return result


if __name__ == "__main__":
    main()
