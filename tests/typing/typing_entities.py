"""Entities shared by the typing checks: composite keys, a GSI and an LSI, optional,
``Literal`` and ``Enum`` fields (type-checked with the plugin, never executed)."""

from __future__ import annotations

import enum
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import Field

import singletable as st

shop = st.Table(
    "typing-shop",
    indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK"), st.LSI("LSI1", sk="LSI1SK")],
)


class Priority(enum.Enum):
    LOW = "low"
    HIGH = "high"


class Order(
    st.Entity,
    table=shop,
    pk="CUST#{customer}",
    sk="ORDER#{placed}#{number}",
    indexes={
        "GSI1": st.IndexKeys(pk="STATUS#{status}", sk="{placed}#{number}"),
        "LSI1": st.IndexKeys(sk="TOTAL#{total}"),
    },
):
    customer: str
    placed: datetime
    number: Annotated[int, st.KeyFormat(width=6)]
    status: Literal["new", "paid", "shipped"] = "new"
    priority: Priority = Priority.LOW
    total: Decimal = Decimal(0)
    note: str | None = None
    tags: set[str] = Field(default_factory=set)
    lines: list[str] = Field(default_factory=list)
    stock: int = 0


class Device(st.Entity, table=shop, pk="DEV#{device_id}", sk="META"):
    device_id: str
    name: str


# A native GSI: its parts are the entities' own fields.
audit = st.Table(
    "typing-audit",
    indexes=[st.NativeGSI("ByAction", pk=["action"], sk=["day", st.KeyPart("seq", "N")])],
)


class Audit(st.Entity, table=audit, pk="A#{aid}", sk="A"):
    aid: str
    action: str
    day: int
    seq: int


class Note(st.Entity, table=audit, pk="N#{aid}", sk="N"):
    aid: str
    action: str
