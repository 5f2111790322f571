from datetime import datetime

from tests.typing.models import Order

when = datetime(2026, 6, 23)

Order.f.stauts
Order.query(customr="a")
Order.get(customer="a", placed=when, numbr=1)
Order.update(customer="a", placed=when, number=1).set(stauts="paid")
Order.update(customer="a", placed=when, number=1).set(status="lost")
Order.update(customer="a", placed=when, number=1).set(status=42)
Order.update(customer="a", placed=when, number=1).increment("stok")
Order.query(customer="a", index="GSI9")
Order.query(customer="a", number=1)
Order.query(customer="a").between(number=(1, 2))
Order.query(customer="a").descending().between(placed=(1, 2))
Order.query(status="new", index="GSI1").gt(placed=when)
Order.query(status="new", index="GSI1").gt(number=3)
Order.f.status == "lost"
Order.f.stock < "x"
Order.f.stock.set("x")
Order.update(customer="a", placed=when, number=1).set(customer="b")
Order.get(customer="a", placed=when)
Order.query(customer="a").project("totl")
x = Order.f.total
reveal_type(x)
reveal_type(Order.f)
