"""`check_unique` repairs that race with writes: none undoes a write that came between."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import singletable as st
from singletable.operations.protocol import Operation
from singletable.tooling.migrations import check_unique

table = st.Table("unique-check")


class User(st.Entity, table=table, pk="U#{uid}", sk="U", unique=("email",)):
    uid: str
    email: str


class Racing:
    """An executor that runs ``write`` just before each repair's transaction."""

    def __init__(self, db: st.Connection, write: Callable[[], object]) -> None:
        self.db = db
        self.write = write

    def execute(self, operation: Operation[Any]) -> Any:
        if operation.action == "transact_write_items":
            self.write()
        return self.db.execute(operation)


def _raw_delete(db: st.Connection, user: User) -> None:
    db.call("delete_item", {"TableName": table.name, "Key": user.key()})


def test_a_repair_overtaken_by_a_write_is_left_and_reported() -> None:
    with st.embedded(table) as db:
        ann = User(uid="u1", email="a@x")
        db.call("put_item", {"TableName": table.name, "Item": ann.to_item()})  # no guard
        # The item goes before its guard is claimed: claiming it would block a@x for good.
        report = check_unique(
            Racing(db, lambda: _raw_delete(db, ann)),
            [table],
            repair=True,
            progress_out=io.StringIO(),
        )
        (finding,) = report.findings
        assert (finding.kind, finding.repaired) == ("missing", False)
        assert finding.detail.endswith("not repaired: it changed meanwhile, check again")
        assert not report.ok
        assert check_unique(db, [table], progress_out=io.StringIO()).ok  # nothing to do now
        User.create(User(uid="u2", email="a@x")).run(db)


def test_a_repair_whose_break_was_mended_meanwhile_counts_as_resolved() -> None:
    with st.embedded(table) as db:
        ann = User(uid="u1", email="a@x")
        User.create(ann).run(db)
        _raw_delete(db, ann)  # the guard is orphaned
        # ...until the item comes back with the value: the guard is right again, and the
        # repair (a delete conditioned on the holder not holding the value) must not run.
        put_back = lambda: db.call("put_item", {"TableName": table.name, "Item": ann.to_item()})  # noqa: E731
        report = check_unique(
            Racing(db, put_back),
            [table],
            repair=True,
            progress_out=io.StringIO(),
        )
        (finding,) = report.findings
        assert (finding.kind, finding.repaired) == ("orphaned", True)
        assert finding.detail.endswith("; resolved meanwhile")
        assert report.ok
        assert check_unique(db, [table], progress_out=io.StringIO()).ok
