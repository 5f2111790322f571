"""What type-checks with the ``singletable.mypy`` plugin (run by mypy in CI, never executed).

Each call here is one the plugin inspects; none of them may be reported, and the
``assert_type`` lines pin the types it gives. The refusals live in ``negative/``.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

from typing_extensions import assert_type

import singletable as st
from tests.typing.typing_entities import Audit, Device, Order, Priority

Status = Literal["new", "paid", "shipped"]


def field_references() -> None:
    assert_type(Order.f.customer, st.FieldRef[str])
    assert_type(Order.f.placed, st.FieldRef[datetime])
    assert_type(Order.f.number, st.FieldRef[int])
    assert_type(Order.f.status, st.FieldRef[Status])
    assert_type(Order.f.priority, st.FieldRef[Priority])
    assert_type(Order.f.total, st.FieldRef[Decimal])
    assert_type(Order.f.note, st.FieldRef[str | None])
    assert_type(Order.f.tags, st.FieldRef[set[str]])
    assert_type(Order.f.lines, st.FieldRef[list[str]])
    assert_type(Order.f.lines[0], st.FieldRef[Any])
    assert_type(Device.f.name, st.FieldRef[str])


def conditions(when: datetime) -> None:
    assert_type(Order.f.status == "paid", st.Condition)
    assert_type(Order.f.priority != Priority.HIGH, st.Condition)
    assert_type(Order.f.note == None, st.Condition)  # noqa: E711 - builds attribute_not_exists
    assert_type(Order.f.total >= Decimal("9.5"), st.Condition)
    assert_type(Order.f.stock < Order.f.number, st.Condition)
    assert_type(Order.f.placed.between(when, when), st.Condition)
    assert_type(Order.f.status.is_in("new", "paid"), st.Condition)
    assert_type(Order.f.lines.size() > 3, st.Condition)
    assert_type(Order.f.tags.contains("gift"), st.Condition)
    assert_type(Order.f.note.begins_with("x") & Order.f.stock.exists(), st.Condition)


def update_actions() -> None:
    assert_type(Order.f.status.set("paid"), st.UpdateAction)
    assert_type(Order.f.stock.increment(2), st.UpdateAction)
    assert_type(Order.f.stock.add(1), st.UpdateAction)
    assert_type(Order.f.tags.add({"gift"}), st.UpdateAction)
    assert_type(Order.f.lines.append(["x"]), st.UpdateAction)
    assert_type(Order.f.stock.set(Order.f.stock.if_not_exists(0) + 1), st.UpdateAction)


def key_operations(order: Order, when: datetime) -> None:
    assert_type(Order.get(customer="c", placed=when, number=1), st.Get[Order])
    assert_type(Order.get(customer="c", placed=when, number=1, consistent=True), st.Get[Order])
    assert_type(Device.get(device_id="d"), st.Get[Device])
    assert_type(Order.delete(order), st.Delete[Order])
    assert_type(Order.delete(customer="c", placed=when, number=1), st.Delete[Order])
    update = Order.update(customer="c", placed=when, number=1)
    assert_type(update, st.Update[Order])
    assert_type(Order.upsert(customer="c", placed=when, number=1), st.Update[Order])
    assert_type(
        update.set(status="paid", priority=Priority.HIGH, note=None, total=Decimal(3)),
        st.Update[Order],
    )
    assert_type(update.known(status="new", customer="c"), st.Update[Order])
    assert_type(update.add(stock=1, tags={"a"}).delete_from(tags={"b"}), st.Update[Order])
    assert_type(update.append(lines=["x"]).prepend(lines=["y"]), st.Update[Order])
    assert_type(update.set_if_not_exists(note="n").remove("note"), st.Update[Order])
    assert_type(update.increment("stock", 2), st.Update[Order])
    assert_type(Order.get(customer="c", placed=when, number=1).project("status"), st.ProjectedGet)


def queries(when: datetime) -> None:
    assert_type(Order.query(customer="c"), st.EntityQuery[Order])
    assert_type(Order.query(customer="c", placed=when), st.EntityQuery[Order])
    assert_type(Order.query(customer="c", placed=when, number=4), st.EntityQuery[Order])
    assert_type(Order.query(customer="c").between(placed=(when, when)), st.EntityQuery[Order])
    assert_type(Order.query(customer="c").descending().gt(placed=when), st.EntityQuery[Order])
    assert_type(Order.query(customer="c", placed=when).ge(number=3), st.EntityQuery[Order])
    assert_type(Order.query(customer="c").limit(3).lt(placed=when), st.EntityQuery[Order])
    assert_type(Order.query(customer="c").le(placed=when), st.EntityQuery[Order])
    assert_type(Order.query(customer="c").begins_with(placed="2026-06"), st.EntityQuery[Order])
    assert_type(Order.query(status="paid", index="GSI1"), st.EntityQuery[Order])
    assert_type(
        Order.query(status="paid", index="GSI1", placed=when).between(number=(1, 9)),
        st.EntityQuery[Order],
    )
    assert_type(Order.query(customer="c", index="LSI1").ge(total=Decimal(5)), st.EntityQuery[Order])
    assert_type(Order.query(customer="c", index=None), st.EntityQuery[Order])
    # An int for a Decimal field: pydantic converts it exactly.
    assert_type(Order.query(customer="c", index="LSI1", total=5), st.EntityQuery[Order])
    assert_type(Order.update(customer="c", placed=when, number=1).add(total=1), st.Update[Order])
    assert_type(Order.query(customer="c").project("status", "total"), st.EntityQuery[Any])
    assert_type(Device.query(device_id="d"), st.EntityQuery[Device])


def dynamic_names(
    key: dict[str, Any], index: str, field: str, query: st.EntityQuery[Order]
) -> None:
    """Names the checker cannot see are left to the run-time checks."""
    assert_type(Order.get(**key), st.Get[Order])
    assert_type(Order.query(index=index, **key), st.EntityQuery[Order])
    assert_type(Order.update(**key).set(**key), st.Update[Order])
    assert_type(Order.update(**key).increment(field), st.Update[Order])
    assert_type(getattr(Order.f, field), Any)
    # A query held in a variable: any sort key field of the entity, with its type.
    assert_type(query.between(number=(1, 2)), st.EntityQuery[Order])
    assert_type(query.gt(total=Decimal(1)), st.EntityQuery[Order])


def native_queries() -> None:
    # A native GSI: every partition part, leading sort parts, a range on the next one.
    assert_type(Audit.query(index="ByAction", action="login"), st.EntityQuery[Audit])
    assert_type(
        Audit.query(index="ByAction", action="login", day=3).between(seq=(1, 9)),
        st.EntityQuery[Audit],
    )
    assert_type(Audit.query(index="ByAction", action="login").gt(day=2), st.EntityQuery[Audit])
