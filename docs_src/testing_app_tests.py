"""The application's tests, written with the test kit only (docs/testing-apps.md).

Run with the kit's plugin (installed with ``singletable[testing]``); the backend comes
from ``--singletable-backend`` (moto by default).
"""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings

import singletable as st
from docs_src.testing_app import Customer, Order, count_orders, make_app, store
from singletable.testing import assert_max_capacity, assert_no_scan, assert_single_query, record
from singletable.testing.strategies import instances, unique_instances


@pytest.fixture(scope="session")
def singletable_tables() -> list[st.Table]:
    """The tables the kit creates (or set ``singletable_tables`` in the pytest ini)."""
    return [store]


def test_create_and_query(singletable_db: st.Connection) -> None:
    Customer.create(Customer(customer_id="c1", email="ada@example.com")).run(singletable_db)
    for n in (1, 2, 3):
        Order.put(Order(customer_id="c1", order_id=n, total=10 * n)).run(singletable_db)

    with record(singletable_db) as calls:
        orders = Order.query(customer_id="c1").descending().all(singletable_db)

    assert [o.order_id for o in orders] == [3, 2, 1]
    assert_single_query(calls, index=None)
    assert_no_scan(calls)


def test_email_is_unique(singletable_db: st.Connection) -> None:
    Customer.create(Customer(customer_id="c1", email="ada@example.com")).run(singletable_db)
    with pytest.raises(st.UniqueConstraintError):
        Customer.create(Customer(customer_id="c2", email="ada@example.com")).run(singletable_db)


def test_the_endpoint_reads_one_page_in_one_query(singletable_db: st.Connection) -> None:
    for n in range(1, 6):
        Order.put(Order(customer_id="c1", order_id=n, total=n)).run(singletable_db)
    client = TestClient(make_app(singletable_db))

    with record(singletable_db) as calls:
        response = client.get("/customers/c1/orders", params={"limit": 2})

    assert response.status_code == 200
    assert [o["order_id"] for o in response.json()] == [5, 4]
    assert_single_query(calls)
    assert_max_capacity(calls, rcu=1)


def test_the_stream_handler_counts_orders(singletable_db: st.Connection) -> None:
    Customer.create(Customer(customer_id="c1", email="ada@example.com")).run(singletable_db)
    order = Order(customer_id="c1", order_id=7, total=30)
    event: dict[str, Any] = {
        "Records": [
            {
                "eventID": "1",
                "eventName": "INSERT",
                "eventSource": "aws:dynamodb",
                "dynamodb": {"Keys": order.key(), "NewImage": order.to_item()},
            }
        ]
    }

    assert count_orders(singletable_db).handle(event) == {"batchItemFailures": []}
    customer = Customer.get(customer_id="c1").run(singletable_db)
    assert customer is not None
    assert customer.orders == 1


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(orders=unique_instances(Order, customer_id="c1", max_size=6), other=instances(Order))
def test_recent_orders_come_newest_first(
    singletable_db: st.Connection, orders: list[Order], other: Order
) -> None:
    db = singletable_db
    # The examples of one test share its tables (the fixture runs once): start each empty.
    for stored in Order.query(customer_id="c1").all(db):
        Order.delete(customer_id="c1", order_id=stored.order_id).run(db)
    for order in orders:
        Order.put(order).run(db)
    if other.customer_id != "c1":
        Order.put(other).run(db)  # another customer's order never shows up

    found = Order.query(customer_id="c1").descending().all(db)

    assert [o.order_id for o in found] == sorted((o.order_id for o in orders), reverse=True)
