"""Generated migrations of entities with ``unique=``: guards end exactly equal to the items.

Hypothesis draws an old and a new model of one entity (its stored name, its key template,
the key format of a field used by a constraint, the constraints) and a transform, stores
items with the old model, migrates, and checks that every guard names a value an item
holds, by its current key, and every value has its guard (`assert_guards_exact`). Small
on the backends (a table per example): the pure properties are tested in the planner's
own generative tests.

Then the live property with ``unique=``: application writers add to counters and change
unique values on both models while the runner renames and moves the entity; no update is
lost and the guards still match the items.
"""

from __future__ import annotations

import collections
import io
import itertools
import random
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import singletable as st
from docs_src.live_migration import add_hits
from tests.integration._executors import connect
from tests.integration.uniqueness import assert_guards_exact

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
else:
    DynamoDBClient = Any

_TABLES = itertools.count()


@dataclass(frozen=True)
class Shape:
    """One version of the entity."""

    name: str
    pk: str
    width: int
    unique: tuple[str, ...]


def entity(table_name: str, shape: Shape) -> tuple[st.Table, Any]:
    table = st.Table(table_name)
    options: dict[str, Any] = {"unique": list(shape.unique)} if shape.unique else {}

    class Customer(st.Entity, table=table, pk=shape.pk, sk="C", name=shape.name, **options):
        cid: str
        email: str
        badge: Annotated[int, st.KeyFormat(width=shape.width)]
        hits: int = 0

    return table, Customer


shapes = hs.builds(
    Shape,
    name=hs.sampled_from(["C", "Customer"]),
    pk=hs.sampled_from(["C#{cid}", "CUST#{cid}"]),
    width=hs.sampled_from([4, 6]),
    unique=hs.sampled_from([(), ("email",), ("badge",), ("email", "badge")]),
)


@hs.composite
def migrations(draw: hs.DrawFn) -> tuple[Shape, Shape, bool, list[tuple[str, str, int]]]:
    old = draw(shapes)
    new = draw(shapes)
    # Constraints are kept or added, never dropped (a dropped constraint's guards stay in
    # the table by design, until deleted by hand).
    new = Shape(new.name, new.pk, new.width, tuple(sorted(set(old.unique) | set(new.unique))))
    lower = draw(hs.booleans())
    count = draw(hs.integers(1, 5))
    # Distinct values (also case-insensitively), so neither a backfill nor the transform
    # meets a duplicate: those are the regression tests' business.
    emails = draw(
        hs.lists(
            hs.sampled_from(["Ann@X.org", "bo@x.org", "Cy@y.ORG", "dee@z.org", "Ed@X.io"]),
            min_size=count,
            max_size=count,
            unique=True,
        )
    )
    badges = draw(hs.lists(hs.integers(0, 9999), min_size=count, max_size=count, unique=True))
    return (
        old,
        new,
        lower,
        [(f"c{i}", e, b) for i, (e, b) in enumerate(zip(emails, badges, strict=True))],
    )


def lowercase(values: Mapping[str, Any]) -> dict[str, Any]:
    return {**values, "email": str(values["email"]).lower()}


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=migrations())
def test_generated_migrations_end_with_exact_guards(
    dynamodb_client: DynamoDBClient, table_name: str, case: Any
) -> None:
    old, new, lower, rows = case
    name = f"{table_name[:200]}-{next(_TABLES)}"
    db = connect(dynamodb_client)
    table_a, cls_a = entity(name, old)
    db.create_table(table_a)
    try:
        for cid, email, badge in rows:
            cls_a.create(cls_a(cid=cid, email=email, badge=badge)).run(db)
        snapshot = st.load_snapshot(st.snapshot_json(table_a))
        table_b, cls_b = entity(name, new)
        plan = st.plan_changes(table_b, snapshot)
        if lower and not plan.rewrites():
            # A transform needs a rewrite to run in: ask for one, as a user would.
            ident = f"{new.name}@1"
            change = st.Change(
                st.ChangeClass.ITEM_REWRITE,
                name,
                f"entity {ident}",
                "normalise emails",
                {"op": "rewrite", "old": f"{old.name}@1", "new": ident},
            )
            plan = st.MigrationPlan((*plan.changes, change))
        report = st.migrate(
            db,
            table_b,
            snapshot,
            plan=plan,
            transform=lowercase if lower else None,
            segments=2,
            out=io.StringIO(),
        )
        assert report.failed == 0, report.to_text()
        items, _ = assert_guards_exact(dynamodb_client, table_b)
        assert items == len(rows)
        stored = sorted(cls_b.scan().all(db), key=lambda c: c.cid)
        emails = [e.lower() if lower else e for _, e, _ in rows]
        assert [c.email for c in stored] == emails
        # Writes through the new model find the guards in step.
        if stored and new.unique:
            first = stored[0]
            free = next(b for b in range(10**4) if b not in {r[2] for r in rows})
            cls_b.update(cid=first.cid).set(email="changed@x", badge=free).run(db)
            cls_b.delete(cid=first.cid).run(db)
            assert_guards_exact(dynamodb_client, table_b)
    finally:
        db.delete_table(name)


# -- live: writers on both models while the runner renames and moves the entity ------------

SEED = 40


def unique_counters(table_name: str, *, name: str, pk: str) -> tuple[st.Table, Any]:
    table = st.Table(table_name)

    class Counter(st.Entity, table=table, pk=pk, sk="C", name=name, unique="email"):
        cid: str
        email: str
        hits: int = 0

    return table, Counter


def change_email(db: st.Connection, primary: Any, fallback: Any, cid: str, email: str) -> bool:
    """Expand-phase update of a unique field (its guard moves in the write's transaction)."""
    while True:
        for cls in (primary, fallback):
            try:
                cls.update(cid=cid).set(email=email).run(db)
                return True
            except st.NotFoundError:
                continue
            except st.UniqueConstraintError:
                return False
            except (st.ServiceError, st.TransactionCanceledError) as exc:
                if getattr(exc, "code", None) not in (None, "TransactionConflictException"):
                    raise
                break


def test_writers_during_a_rename_and_key_move_lose_nothing_and_guards_stay_exact(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    db = st.Connection(dynamodb_client)
    table_a, old = unique_counters(table_name, name="C", pk="C#{cid}")
    db.create_table(table_a)
    ids = [f"c{i:03d}" for i in range(SEED)]
    for cid in ids:
        old.create(old(cid=cid, email=f"{cid}@x")).run(db)
    snapshot = st.load_snapshot(st.snapshot_json(table_a))
    table_b, new = unique_counters(table_name, name="Customer", pk="CUST#{cid}")
    tallies: list[collections.Counter[str]] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def write(n: int, primary: Any, fallback: Any) -> None:
        rng = random.Random(n)
        tally: collections.Counter[str] = collections.Counter()
        tallies.append(tally)
        writer = st.Connection(dynamodb_client)
        try:
            while not stop.is_set():
                cid = rng.choice(ids)
                if rng.random() < 0.2:
                    change_email(writer, primary, fallback, cid, f"{cid}-{rng.randrange(3)}@x")
                else:
                    add_hits(writer, primary, fallback, cid)
                    tally[cid] += 1
        except BaseException as exc:  # reported by the test, not lost in the thread
            errors.append(exc)

    threads = [
        threading.Thread(target=write, args=(n, *models))
        for n, models in enumerate([(old, new), (new, old)])
    ]
    for thread in threads:
        thread.start()
    try:
        report = st.migrate(db, table_b, snapshot, segments=2, page_size=7, out=io.StringIO())
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert not errors, errors
    # Old-model writers may have changed an item after its segment passed: one more pass.
    again = st.migrate(db, table_b, snapshot, segments=2, out=io.StringIO())
    assert report.failed == again.failed == 0, report.to_text()
    assert assert_guards_exact(dynamodb_client, table_b) == (SEED, SEED)
    increments: collections.Counter[str] = collections.Counter()
    for tally in tallies:
        increments.update(tally)
    stored = {c.cid: c.hits for c in new.scan().all(db)}
    assert stored == {cid: increments[cid] for cid in ids}
    assert sum(increments.values()) > 20  # the writers really ran during the migration
