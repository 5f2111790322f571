"""A small application to test with the kit: a model, a FastAPI endpoint, a stream handler."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

import singletable as st

store = st.Table("store", stream="NEW_AND_OLD_IMAGES")


class Customer(st.Entity, table=store, pk="CUST#{customer_id}", sk="PROFILE", unique=["email"]):
    customer_id: str
    email: str
    orders: int = 0


class Order(st.Entity, table=store, pk="CUST#{customer_id}", sk="ORDER#{order_id}"):
    customer_id: str
    order_id: int
    total: int


def make_app(db: st.Connection) -> FastAPI:
    """The HTTP API, over the connection it is given."""
    app = FastAPI()

    @app.get("/customers/{customer_id}/orders")
    def recent_orders(customer_id: str, limit: int = 10) -> list[dict[str, Any]]:
        query = Order.query(customer_id=customer_id).descending().limit(limit)
        return [order.model_dump() for order in query.all(db)]

    return app


def count_orders(db: st.Connection) -> st.StreamRouter:
    """A stream handler: each new order adds one to its customer's count."""
    router = st.StreamRouter(store)

    @router.on(Order, "INSERT")
    def on_order(change: st.ChangeRecord) -> None:
        assert isinstance(change.new, Order)
        Customer.update(customer_id=change.new.customer_id).add(orders=1).run(db)

    return router
