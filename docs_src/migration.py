"""The migration planner on a before/after model: what a deploy would do to stored items."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import singletable as st


def before() -> st.Table:
    """The model the stored data was written with."""
    app = st.Table("app")

    class Order(st.Entity, table=app, pk="CUST#{customer}", sk="ORDER#{placed}#{number}"):
        customer: str
        placed: datetime
        number: Annotated[int, st.KeyFormat(width=6)]
        total_cents: int

    return app


def after() -> st.Table:
    """The next version: a wider order number, a new optional field, a new GSI."""
    app = st.Table("app", indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])

    class Order(
        st.Entity,
        table=app,
        pk="CUST#{customer}",
        sk="ORDER#{placed}#{number}",
        indexes={"GSI1": st.IndexKeys(pk="STATUS#{status}", sk="{placed}")},
    ):
        customer: str
        placed: datetime
        number: Annotated[int, st.KeyFormat(width=8)]  # was 6: every stored SK changes
        total_cents: int
        status: str | None = None  # new and optional: stored items read it as None

    return app


def main() -> st.MigrationPlan:
    """Plan the change from `before` to `after`, as `singletable plan` does."""
    snapshot = st.load_snapshot(st.snapshot_json(before()))  # the committed file's content
    plan = st.plan_changes(after(), snapshot)
    print(plan.to_text())
    return plan


if __name__ == "__main__":
    raise SystemExit(main().exit_code)
