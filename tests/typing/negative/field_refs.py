"""Entity.f: unknown names, and values of the wrong type for a field reference."""

from datetime import datetime
from decimal import Decimal

import singletable as st
from tests.typing.typing_entities import Order, Priority

when = datetime(2026, 6, 23)
update = Order.update(customer="c", placed=when, number=1)

Order.f.stauts  # E: Order has no field "stauts" (fields: customer, lines, note, number, placed, priority, status, stock, tags, total)  [singletable]
Order.f.stock < "x"  # E: Unsupported operand types for < ("FieldRef[int]" and "str")  [operator]
Order.f.placed.between("2026", when)  # E: Argument 1 to "between" of "FieldRef" has incompatible type "str"; expected "datetime | FieldRef[Any] | SizeOperand"  [arg-type]
Order.f.status.is_in("new", "lost")  # E: Argument 2 to "is_in" of "FieldRef" has incompatible type "Literal['lost']"; expected "Literal['new', 'paid', 'shipped'] | FieldRef[Any]"  [arg-type]
Order.f.priority.set("high")  # E: Argument 1 to "set" of "FieldRef" has incompatible type "str"; expected "Priority | FieldRef[Any] | SetValue"  [arg-type]
Order.f.total.add("1")  # E: Argument 1 to "add" of "FieldRef" has incompatible type "str"; expected "Decimal"  [arg-type]
Order.f.lines.append("x")  # E: Argument 1 to "append" of "FieldRef" has incompatible type "str"; expected "list[str]"  [arg-type]
Order.f.tags.delete(["a"])  # E: Argument 1 to "delete" of "FieldRef" has incompatible type "list[str]"; expected "set[str]"  [arg-type]
Order.f.note.if_not_exists(3)  # E: Argument 1 to "if_not_exists" of "FieldRef" has incompatible type "int"; expected "str | FieldRef[Any] | SetValue | None"  [arg-type]
Order.query(customer="c").filter(Order.f.status == "lost")  # E: Argument 1 to "filter" of "BaseQuery" has incompatible type "bool"; expected "Condition"  [arg-type]
update.where((Order.f.stock == "3") & (Order.f.priority == Priority.LOW))  # E: No overload variant of "__and__" of "bool" matches argument type "Condition"  [operator]
condition: st.Condition = (Order.f.total != "9.5")  # E: Incompatible types in assignment (expression has type "bool", variable has type "Condition")  [assignment]
Order.f.total >= Decimal(1)  # a matching value: no error
