"""A FastAPI service over singletable, in an async and a sync variant (the FastAPI guide).

Run it against DynamoDB Local (or AWS) with::

    SINGLETABLE_ENDPOINT=http://127.0.0.1:8000 CURSOR_SECRET=change-me \\
        uvicorn docs_src.fastapi_app:app

``app`` is the async variant (`AsyncConnection`); ``sync_app`` the same API on the
synchronous `Connection` (plain ``def`` endpoints, which FastAPI runs in its thread pool).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

import singletable as st

# --8<-- [start:model]
shop = st.Table("shop")


class Order(
    st.Entity,
    table=shop,
    pk="CUSTOMER#{customer_id}",
    sk="ORDER#{order_id}",
    version_field="version",
    created_at="created_at",
):
    """An order: the response of every endpoint."""

    customer_id: str
    order_id: str
    status: Literal["open", "paid", "shipped"] = "open"
    total: Decimal
    version: int = 0
    created_at: datetime | None = None


# The POST body: the entity's fields without the ones the library writes (``version``,
# ``created_at``). A body that gives them is refused (422): a client cannot forge them.
OrderInput = Order.input_model()


class OrderPage(BaseModel):
    """One page of a customer's orders and the opaque cursor to the next page."""

    items: list[Order]
    cursor: str | None


class StatusChange(BaseModel):
    """PATCH body: the new status and the version the client last read."""

    status: Literal["open", "paid", "shipped"]
    version: int


# --8<-- [end:model]


# --8<-- [start:errors]
def add_error_handlers(app: FastAPI) -> None:
    """Map singletable's errors to HTTP statuses (most specific class wins)."""

    def reply(status: int) -> Any:
        async def handler(request: Request, exc: Exception) -> JSONResponse:
            return JSONResponse({"detail": str(exc)}, status_code=status)

        return handler

    app.add_exception_handler(st.NotFoundError, reply(404))
    # AlreadyExistsError and VersionConflictError are ConditionFailedErrors.
    app.add_exception_handler(st.ConditionFailedError, reply(409))
    app.add_exception_handler(st.CursorError, reply(400))  # altered or foreign cursor


# --8<-- [end:errors]


def cursor_secret() -> bytes:
    """The key that signs list cursors (a fixed one only for local development)."""
    return os.environ.get("CURSOR_SECRET", "local-development-only").encode()


def orders_of(customer_id: str, limit: int) -> st.EntityQuery[Order]:
    """Newest orders first, ``limit`` per page, cursors signed."""
    return Order.query(customer_id=customer_id).descending().limit(limit).signed(cursor_secret())


Limit = Annotated[int, Query(ge=1, le=100)]


def connection(request: Request) -> Any:
    """The connection the lifespan opened (`AsyncConnection` or `Connection`)."""
    return request.app.state.db


# Endpoint parameters: FastAPI hands each request the app's one connection.
AsyncDB = Annotated[st.AsyncConnection, Depends(connection)]
SyncDB = Annotated[st.Connection, Depends(connection)]


# --8<-- [start:async]
def create_app(endpoint_url: str | None = None, *, create_tables: bool = False) -> FastAPI:
    """The async service: one `AsyncConnection` opened and closed by the lifespan."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with st.AsyncConnection(endpoint_url=endpoint_url) as adb:
            if create_tables and not await adb.table_exists(shop):
                await adb.create_table(shop)
            app.state.db = adb
            yield

    app = FastAPI(title="orders (async)", lifespan=lifespan)
    add_error_handlers(app)

    @app.post("/orders", status_code=201)
    async def create_order(body: OrderInput, adb: AsyncDB) -> Order:
        return await Order.create(body.to_entity()).run(adb)  # 409 when it exists

    @app.get("/customers/{customer_id}/orders/{order_id}")
    async def get_order(customer_id: str, order_id: str, adb: AsyncDB) -> Order:
        order = await Order.get(customer_id=customer_id, order_id=order_id).run(adb)
        if order is None:
            raise st.NotFoundError(f"no order {order_id!r} for customer {customer_id!r}")
        return order

    @app.get("/customers/{customer_id}/orders")
    async def list_orders(
        customer_id: str, adb: AsyncDB, limit: Limit = 20, cursor: str | None = None
    ) -> OrderPage:
        page = await orders_of(customer_id, limit).page(adb, cursor)
        return OrderPage(items=page.items, cursor=page.cursor)

    @app.patch("/customers/{customer_id}/orders/{order_id}")
    async def change_status(
        customer_id: str, order_id: str, change: StatusChange, adb: AsyncDB
    ) -> Order:
        update = Order.update(customer_id=customer_id, order_id=order_id)
        # 404 when missing, 409 when someone else wrote since the client read it.
        return await update.set(status=change.status).expect_version(change.version).run(adb)

    return app


# --8<-- [end:async]


# --8<-- [start:sync]
def create_sync_app(endpoint_url: str | None = None, *, create_tables: bool = False) -> FastAPI:
    """The same API on the synchronous `Connection` (``def`` endpoints, thread pool)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        db = st.Connection(endpoint_url=endpoint_url)
        if create_tables and not db.table_exists(shop):
            db.create_table(shop)
        app.state.db = db
        yield

    app = FastAPI(title="orders (sync)", lifespan=lifespan)
    add_error_handlers(app)

    @app.post("/orders", status_code=201)
    def create_order(body: OrderInput, db: SyncDB) -> Order:
        return Order.create(body.to_entity()).run(db)

    @app.get("/customers/{customer_id}/orders/{order_id}")
    def get_order(customer_id: str, order_id: str, db: SyncDB) -> Order:
        order = Order.get(customer_id=customer_id, order_id=order_id).run(db)
        if order is None:
            raise st.NotFoundError(f"no order {order_id!r} for customer {customer_id!r}")
        return order

    @app.get("/customers/{customer_id}/orders")
    def list_orders(
        customer_id: str, db: SyncDB, limit: Limit = 20, cursor: str | None = None
    ) -> OrderPage:
        page = orders_of(customer_id, limit).page(db, cursor)
        return OrderPage(items=page.items, cursor=page.cursor)

    @app.patch("/customers/{customer_id}/orders/{order_id}")
    def change_status(customer_id: str, order_id: str, change: StatusChange, db: SyncDB) -> Order:
        update = Order.update(customer_id=customer_id, order_id=order_id)
        return update.set(status=change.status).expect_version(change.version).run(db)

    return app


# --8<-- [end:sync]

app = create_app(os.environ.get("SINGLETABLE_ENDPOINT"))
sync_app = create_sync_app(os.environ.get("SINGLETABLE_ENDPOINT"))
