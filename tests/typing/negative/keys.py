"""Key fields of get, update, upsert, delete and query, and index names."""

from datetime import datetime

from tests.typing.typing_entities import Audit, Device, Note, Order

when = datetime(2026, 6, 23)

Order.get(customer="c", placed=when, numbr=1)  # E: Missing named argument "number" for "get" of "Order"  [call-arg]  # E: "numbr" is not a key field of Order's table key (allowed: customer, placed, number)  [singletable]
Order.get(customer="c", placed=when)  # E: Missing named argument "number" for "get" of "Order"  [call-arg]
Order.get(customer="c", placed="2026-06-23", number=1)  # E: Argument "placed" to "get" of "Order" has incompatible type "str"; expected "datetime"  [arg-type]
Order.get(customer="c", placed=when, number=1, status="new")  # E: "status" is not a key field of Order's table key (allowed: customer, placed, number)  [singletable]
Device.get(device_id=7)  # E: Argument "device_id" to "get" of "Device" has incompatible type "int"; expected "str"  [arg-type]
Order.update(customer="c", placed=when, number=1, stock=3)  # E: "stock" is not a key field of Order's table key (allowed: customer, placed, number)  [singletable]
Order.upsert(custmer="c", placed=when, number=1)  # E: Missing named argument "customer" for "upsert" of "Order"  [call-arg]  # E: "custmer" is not a key field of Order's table key (allowed: customer, placed, number)  [singletable]
Order.delete(customer="c", placed=when, number="1")  # E: Argument "number" to "delete" of "Order" has incompatible type "str"; expected "int"  [arg-type]
Order.query(customr="c")  # E: Missing named argument "customer" for "query" of "Order"  [call-arg]  # E: "customr" is not a key field of Order's table key (allowed: customer, placed, number)  [singletable]
Order.query(customer="c", number=1)  # E: Order.query(): sort key field "number" is given without "placed"; sort key fields go in template order ("ORDER#{placed}#{number}": placed, number)  [singletable]
Order.query(customer="c", status="new")  # E: "status" is not a key field of Order's table key (allowed: customer, placed, number)  [singletable]
Order.query(customer="c", index="GSI9")  # E: Argument "index" to "query" of "Order" has incompatible type "Literal['GSI9']"; expected "Literal['GSI1', 'LSI1'] | None"  [arg-type]
Order.query(status="lost", index="GSI1")  # E: Argument "status" to "query" of "Order" has incompatible type "Literal['lost']"; expected "Literal['new', 'paid', 'shipped']"  [arg-type]
Order.query(status="new", index="GSI1", number=2)  # E: Order.query(): sort key field "number" is given without "placed"; sort key fields go in template order ("{placed}#{number}": placed, number)  [singletable]
Order.query(customer="c", index="LSI1", total="5")  # E: Argument "total" to "query" of "Order" has incompatible type "str"; expected "Decimal | int"  [arg-type]
Device.query(device_id="d", index="GSI1")  # E: Argument "index" to "query" of "Device" has incompatible type "str"; expected "None"  [arg-type]
Audit.query(index="ByAction", action="a", seq=1)  # E: Audit.query(): sort key field "seq" is given without "day"; sort key fields go in template order ("native GSI sort parts day, seq": day, seq)  [singletable]
Audit.query(index="ByAction", day=1)  # E: Missing named argument "action" for "query" of "Audit"  [call-arg]
Audit.query(index="ByAction", action="a").gt(seq=1)  # E: gt() on Audit's index "ByAction" must name "day", the next field of sort key template "native GSI sort parts day, seq"; got "seq"  [singletable]
Note.query(index="ByAction", action="a")  # E: Argument "index" to "query" of "Note" has incompatible type "str"; expected "None"  [arg-type]
