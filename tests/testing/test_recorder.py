"""The request recorder on every executor and transport, and the assertions' messages."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

import singletable as st
from singletable.testing import (
    Backend,
    Request,
    assert_max_capacity,
    assert_no_scan,
    assert_single_query,
    open_backend,
    record,
)
from singletable.testing.backends import create_tables

shelf = st.Table("kit-recorder", indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


class Book(
    st.Entity,
    table=shelf,
    pk="B#{isbn}",
    sk="BOOK",
    unique=["title"],
    indexes={"GSI1": st.IndexKeys(pk="AUTHOR#{author}", sk="{isbn}")},
):
    isbn: str
    title: str
    author: str


@pytest.fixture(scope="module")
def server() -> Iterator[Backend]:
    with open_backend("moto-server") as backend:
        create_tables(backend.connection(), [shelf])
        yield backend


def _put_two(db: st.Connection) -> None:
    # put, not create: each transport's test writes them again on the module's server.
    Book.put(Book(isbn="1", title="Dune", author="Herbert")).run(db)
    Book.put(Book(isbn="2", title="Emma", author="Austen")).run(db)


@pytest.mark.parametrize("transport", ["boto3", "lean"])
def test_sync_transports_record_action_params_and_capacity(server: Backend, transport: str) -> None:
    db = server.connection(transport=transport)
    assert db.transport == transport
    _put_two(db)

    with record(db) as calls:
        found = Book.query(index="GSI1", author="Austen").all(db)

    assert [b.isbn for b in found] == ["2"]
    query = assert_single_query(calls, index="GSI1")
    assert query.params["IndexName"] == "GSI1"
    assert "ReturnConsumedCapacity" not in query.params  # what the application sent
    assert query.capacity is not None
    assert query.capacity > 0
    assert calls.actions == ["Query"]
    assert db.listeners == []  # removed when the block ends


def test_async_connection_is_recorded(server: Backend) -> None:
    async def main() -> list[str]:
        async with server.async_connection() as adb:
            with record(adb) as calls:
                await Book.get(isbn="404").run(adb)
            return calls.actions

    assert asyncio.run(main()) == ["GetItem"]


def test_a_refused_write_is_recorded_with_its_error(server: Backend) -> None:
    db = server.connection()
    Book.create(Book(isbn="7", title="Ulysses", author="Joyce")).run(db)
    with record(db) as calls, pytest.raises(st.UniqueConstraintError):
        Book.create(Book(isbn="8", title="Ulysses", author="Someone")).run(db)
    assert calls[0].name == "TransactWriteItems"
    assert calls[0].response is None
    assert isinstance(calls[0].error, st.ServiceError)
    assert "failed:" in str(calls[0])


def test_capacity_none_sends_the_requests_unchanged(server: Backend) -> None:
    db = server.connection()
    with record(db, capacity=None) as calls:
        Book.get(isbn="1").run(db)
    assert calls[0].capacity is None
    assert "capacity not reported" in str(calls)


def _query(units: float | None) -> Request:
    response = (
        {"Count": 1}
        if units is None
        else {"Count": 1, "ConsumedCapacity": {"CapacityUnits": units}}
    )
    return Request("query", {"TableName": "t", "IndexName": "GSI1"}, response, None)


def test_over_budget_names_the_figures_and_lists_the_requests() -> None:
    with pytest.raises(AssertionError) as failure:
        assert_max_capacity([_query(1.5), _query(1.0)], rcu=2)
    text = str(failure.value)
    assert text.startswith("expected at most 2 RCU, the requests consumed 2.5")
    assert "Query (ok, 1 items; 1.5 RCU)" in text
    assert '"IndexName": "GSI1"' in text


def test_unreported_capacity_fails_unless_told() -> None:
    calls = [_query(None), _query(0.5)]
    with pytest.raises(AssertionError, match="reported no consumed capacity for Query"):
        assert_max_capacity(calls, rcu=1)
    assert_max_capacity(calls, rcu=1, reported_only=True)
    with pytest.raises(ValueError, match="give rcu=, wcu= or both"):
        assert_max_capacity(calls)


def test_single_query_on_the_wrong_index_and_scans() -> None:
    with pytest.raises(
        AssertionError, match="expected the Query to read the table, it read index 'GSI1'"
    ):
        assert_single_query([_query(1)], index=None)
    assert_single_query([_query(1)])  # any index
    scan = Request("scan", {"TableName": "t"}, {"Count": 0}, None)
    with pytest.raises(AssertionError, match="expected no Scan, 1 were sent"):
        assert_no_scan([_query(1), scan])
