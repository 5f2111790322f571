"""Sort key conditions of a query: the next sort key field, with a value of its type."""

from datetime import datetime
from decimal import Decimal

import singletable as st
from tests.typing.typing_entities import Device, Order

when = datetime(2026, 6, 23)

Order.query(customer="c").between(number=(1, 2))  # E: between() on Order's table key must name "placed", the next field of sort key template "ORDER#{placed}#{number}"; got "number"  [singletable]
Order.query(customer="c").between(placed=(1, 2))  # E: Argument "placed" to "between" of "EntityQuery[Order]" has incompatible type "tuple[int, int]"; expected "tuple[datetime, datetime]"  [arg-type]
Order.query(customer="c").descending().gt(placd=when)  # E: gt() on Order's table key must name "placed", the next field of sort key template "ORDER#{placed}#{number}"; got "placd"  [singletable]
Order.query(customer="c", placed=when).ge(placed=when)  # E: ge() on Order's table key must name "number", the next field of sort key template "ORDER#{placed}#{number}"; got "placed"  [singletable]
Order.query(customer="c", placed=when).lt(number="3")  # E: Argument "number" to "lt" of "EntityQuery[Order]" has incompatible type "str"; expected "int"  [arg-type]
Order.query(customer="c", placed=when, number=3).le(number=4)  # E: every sort key field of Order's table key is already given; le() has nothing left to range over  [singletable]
Order.query(customer="c").begins_with(placed=when)  # E: Argument "placed" to "begins_with" of "EntityQuery[Order]" has incompatible type "datetime"; expected "str"  [arg-type]
Order.query(status="new", index="GSI1").gt(number=3)  # E: gt() on Order's index "GSI1" must name "placed", the next field of sort key template "{placed}#{number}"; got "number"  [singletable]
Order.query(customer="c", index="LSI1").between(total=(1.5, Decimal(2)))  # E: Argument "total" to "between" of "EntityQuery[Order]" has incompatible type "tuple[float, Decimal]"; expected "tuple[Decimal | int, Decimal | int]"  [arg-type]
Device.query(device_id="d").gt(name="x")  # E: Device's table key has no sort key; gt() has nothing to range over  [singletable]


def held(query: st.EntityQuery[Order]) -> None:
    query.between(stock=(1, 2))  # E: "stock" is not a sort key field of Order (allowed: placed, number, total)  [singletable]
    query.gt(total="1")  # E: Argument "total" to "gt" of "EntityQuery[Order]" has incompatible type "str"; expected "Decimal | int"  [arg-type]
