"""The example model of docs/deploy.md: orders and their lines, one GSI, TTL, a stream."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import singletable as st

shop = st.Table(
    "shop",
    indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")],
    ttl_attribute="expires",
    stream="NEW_AND_OLD_IMAGES",
    point_in_time_recovery=True,
)


class Order(
    st.Entity,
    table=shop,
    pk="CUSTOMER#{customer}",
    sk="ORDER#{placed}",
    indexes={"GSI1": st.IndexKeys(pk="STATUS#{status}", sk="{placed}")},
):
    """One order: a customer's orders newest first; every order of a status through GSI1."""

    customer: str
    placed: datetime
    status: str
    total: Decimal


class Line(st.Entity, table=shop, pk="CUSTOMER#{customer}", sk="ORDER#{placed}#LINE#{n}"):
    """One line of an order, in the order's partition."""

    customer: str
    placed: datetime
    n: int
    sku: str
    quantity: int


def sample() -> list[st.Entity]:
    """The items the Workbench model shows (``--items docs_src.deploy.model:sample``)."""
    placed = datetime.fromisoformat("2026-03-01T09:30:00+00:00")
    return [
        Order(customer="ana", placed=placed, status="PAID", total=Decimal("42.50")),
        Line(customer="ana", placed=placed, n=1, sku="TEA-01", quantity=2),
        Line(customer="ana", placed=placed, n=2, sku="MUG-07", quantity=1),
    ]
