"""Update builder: field names, primary key fields, and value types; projections."""

from datetime import datetime

from tests.typing.typing_entities import Order, Priority

when = datetime(2026, 6, 23)
update = Order.update(customer="c", placed=when, number=1)

update.set(stauts="paid")  # E: Order has no field "stauts" (fields: customer, lines, note, number, placed, priority, status, stock, tags, total)  [singletable]
update.set(status="lost")  # E: Argument "status" to "set" of "Update[Order]" has incompatible type "Literal['lost']"; expected "Literal['new', 'paid', 'shipped'] | None"  [arg-type]
update.set(status=42)  # E: Argument "status" to "set" of "Update[Order]" has incompatible type "Literal[42]"; expected "Literal['new', 'paid', 'shipped'] | None"  [arg-type]
update.set(priority="high", stock=None)  # E: Argument "priority" to "set" of "Update[Order]" has incompatible type "str"; expected "Priority | None"  [arg-type]
update.set(customer="d")  # E: Order.customer is part of the primary key and cannot be updated (set); delete the item and put it under its new key  [singletable]
update.known(placd=when)  # E: Order has no field "placd" (fields: customer, lines, note, number, placed, priority, status, stock, tags, total)  [singletable]
update.known(status="lost")  # E: Argument "status" to "known" of "Update[Order]" has incompatible type "Literal['lost']"; expected "Literal['new', 'paid', 'shipped']"  [arg-type]
update.add(stok=1)  # E: Order has no field "stok" (fields: customer, lines, note, number, placed, priority, status, stock, tags, total)  [singletable]
update.add(stock="1")  # E: Argument "stock" to "add" of "Update[Order]" has incompatible type "str"; expected "int"  [arg-type]
update.append(lines="x")  # E: Argument "lines" to "append" of "Update[Order]" has incompatible type "str"; expected "list[str]"  [arg-type]
update.prepend(line=["x"])  # E: Order has no field "line" (fields: customer, lines, note, number, placed, priority, status, stock, tags, total)  [singletable]
update.delete_from(tags="a")  # E: Argument "tags" to "delete_from" of "Update[Order]" has incompatible type "str"; expected "set[str]"  [arg-type]
update.set_if_not_exists(priority=Priority.HIGH, note=1)  # E: Argument "note" to "set_if_not_exists" of "Update[Order]" has incompatible type "int"; expected "str | None"  [arg-type]
update.remove("nte", "note")  # E: Order has no field "nte" (fields: customer, lines, note, number, placed, priority, status, stock, tags, total)  [singletable]
update.remove("number")  # E: Order.number is part of the primary key and cannot be updated (remove); delete the item and put it under its new key  [singletable]
update.increment("stok")  # E: Order has no field "stok" (fields: customer, lines, note, number, placed, priority, status, stock, tags, total)  [singletable]
update.increment("placed")  # E: Order.placed is part of the primary key and cannot be updated (increment); delete the item and put it under its new key  [singletable]
Order.query(customer="c").project("status", "totl")  # E: Order has no field "totl" (fields: customer, lines, note, number, placed, priority, status, stock, tags, total)  [singletable]
Order.get(customer="c", placed=when, number=1).project("stauts")  # E: Order has no field "stauts" (fields: customer, lines, note, number, placed, priority, status, stock, tags, total)  [singletable]
