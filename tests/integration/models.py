"""Models shared by the operation, condition, update and batch/transaction integration tests.

Entity classes bind to a `Table` when they are created, so each test gets its own table
and classes from `make_models` (the table name comes from the ``table_name`` fixture).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from pydantic import Field

import singletable as st
from tests.integration._executors import connect
from tests.strategies import EntitySpec, build_entity

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
else:
    DynamoDBClient = Any


@dataclass
class Models:
    table: st.Table
    db: st.Connection
    client: DynamoDBClient
    #: Plain entity: reserved-word field names, sets, lists, maps; no locking, no indexes.
    Thing: Any
    #: Entity with two GSIs (one sparse), optimistic locking, timestamps and TTL.
    Doc: Any

    def raw(self, pk: str, sk: str) -> dict[str, Any] | None:
        """The stored low-level item, read with the raw client (consistent)."""
        response = self.client.get_item(
            TableName=self.table.name,
            Key={"PK": {"S": pk}, "SK": {"S": sk}},
            ConsistentRead=True,
        )
        item: dict[str, Any] | None = response.get("Item")
        return item


def make_models(client: DynamoDBClient, table_name: str) -> Models:
    table = st.Table(
        table_name,
        indexes=[
            st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK"),
            st.GSI("GSI2", pk="GSI2PK", sk="GSI2SK"),
        ],
        ttl_attribute="ttl",
    )

    class Thing(st.Entity, table=table, pk="BOX#{box}", sk="THING#{thing_id}"):
        box: str
        thing_id: str
        name: str
        status: str = "new"
        size: int = 0
        count: int = 0
        price: Decimal = Decimal("0")
        flag: bool = False
        tags: set[str] = Field(default_factory=set)
        nums: set[int] = Field(default_factory=set)
        items: list[str] = Field(default_factory=list)
        meta: dict[str, str] = Field(default_factory=dict)
        note: str | None = None

    class Doc(
        st.Entity,
        table=table,
        pk="DOC#{doc_id}",
        sk="META",
        indexes={
            "GSI1": st.IndexKeys(pk="OWNER#{owner}", sk="{status}#{doc_id}"),
            "GSI2": st.IndexKeys(pk="CAT#{category}", sk="{doc_id}"),
        },
        version_field="version",
        created_at="created_at",
        updated_at="updated_at",
        ttl="expires_at",
    ):
        doc_id: str
        owner: str
        status: str = "draft"
        title: str = ""
        category: str | None = None
        version: int = 0
        created_at: datetime | None = None
        updated_at: datetime | None = None
        expires_at: datetime | None = None

    db = connect(client)
    db.create_table(table)
    return Models(table=table, db=db, client=client, Thing=Thing, Doc=Doc)


class NoNetworkClient:
    """A stand-in boto3 client that fails the test if any request reaches it."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        def refuse(**params: Any) -> Any:
            self.calls.append(name)
            raise AssertionError(f"a request was sent: {name}({params})")

        return refuse


def bulk_models(name: str) -> tuple[st.Table, Any, Any, Any]:
    """A table with the three entity kinds a bulk load or export treats apart.

    ``Thing`` is plain (batch writes), ``Member`` has a unique field and ``Counter`` a
    version field (each written with its own put, guards and version check kept).
    """
    table = st.Table(name)

    class Thing(st.Entity, table=table, pk="B#{box}", sk="T#{n}"):
        box: str
        n: int
        label: str = ""

    class Member(st.Entity, table=table, pk="M#{mid}", sk="M", unique=("email",)):
        mid: str
        email: str

    class Counter(st.Entity, table=table, pk="N#{name}", sk="N", version_field="version"):
        name: str
        hits: int = 0
        version: int = 0

    return table, Thing, Member, Counter


_generated = itertools.count()


@contextmanager
def generated_entity_table(
    client: DynamoDBClient, table_name: str, spec: EntitySpec
) -> Iterator[tuple[type[st.Entity], st.Connection]]:
    """``spec``'s entity class on a table of its own, created on the backend, deleted after.

    With the executor under test connected to it (a property test's example each).
    """
    model = build_entity(spec, table_name=f"{table_name}-{next(_generated)}")
    table = model.plan().table
    db = connect(client)
    db.create_table(table)
    try:
        yield model, db
    finally:
        db.delete_table(table)
