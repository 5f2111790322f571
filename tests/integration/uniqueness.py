"""Guards against items: the check every migration test with ``unique=`` ends with."""

from __future__ import annotations

from typing import Any

import singletable as st
from singletable.model.guards import read_guard
from singletable.model.jobs import is_reserved_item
from singletable.model.plan import entity_plan
from singletable.model.unique import is_guard_item


def raw_items(client: Any, table_name: str) -> list[dict[str, Any]]:
    """Every item of the table, guards included, read consistently."""
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"TableName": table_name, "ConsistentRead": True}
    while True:
        page = client.scan(**kwargs)
        items.extend(page["Items"])
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def key_text(table: st.Table, item: dict[str, Any]) -> tuple[str, ...]:
    return tuple(item[a]["S"] for a in (table.pk, table.sk) if a is not None)


def assert_guards_exact(client: Any, table: st.Table) -> tuple[int, int]:
    """The table holds exactly one guard per unique value of its items, naming its holder.

    Every item is decoded with the model (``_et``/``_ev``), so an item left in an old
    shape fails here too. Returns (items, guards).
    """
    guards: dict[tuple[str, ...], dict[str, Any]] = {}
    expected: dict[tuple[str, ...], tuple[str, ...]] = {}
    count = 0
    for item in raw_items(client, table.name):
        if is_guard_item(table, item):
            guards[key_text(table, item)] = item
            continue
        if is_reserved_item(table, item):  # a job's record or unit lease
            continue
        count += 1
        plan = entity_plan(
            table, item[table.entity_attribute]["S"], int(item[table.version_attribute]["N"])
        )
        assert plan is not None, f"an item of no entity of the model: {item}"
        obj = plan.from_item(item)
        for constraint in plan.unique:
            values = constraint.values(obj.__dict__)
            if values is None:
                continue
            ident = key_text(table, constraint.guard_key(values))
            assert ident not in expected, f"two items hold {values}: {expected[ident]}"
            expected[ident] = key_text(table, item)
    assert set(guards) == set(expected), (
        f"orphan guards {sorted(set(guards) - set(expected))}, "
        f"missing guards {sorted(set(expected) - set(guards))}"
    )
    for ident, guard in guards.items():
        info = read_guard(table, guard)
        assert info.holder is not None
        assert key_text(table, info.holder) == expected[ident], (ident, info.holder)
    return count, len(guards)
