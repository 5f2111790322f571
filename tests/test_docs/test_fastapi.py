"""The FastAPI guide's app (docs_src/fastapi_app.py), both variants, driven through httpx.

An ``httpx.AsyncClient`` over ``httpx.ASGITransport`` sends the requests; the app's
lifespan is entered first, so the connection is opened and closed as in production. The
app talks to a moto server on a loopback port (aiobotocore's requests are not seen by
moto's in-process mock).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import AsyncExitStack
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from docs_src import fastapi_app
from tests.conftest import reset_moto_server


class AppClient:
    """Synchronous calls to an ASGI app through httpx, on one event loop, lifespan run."""

    def __init__(self, app: FastAPI) -> None:
        self._loop = asyncio.new_event_loop()
        self._stack = AsyncExitStack()
        self._http = self._run(self._open(app))

    async def _open(self, app: FastAPI) -> httpx.AsyncClient:
        await self._stack.enter_async_context(app.router.lifespan_context(app))
        transport = httpx.ASGITransport(app=app)
        return await self._stack.enter_async_context(
            httpx.AsyncClient(transport=transport, base_url="http://orders.test")
        )

    def _run(self, coroutine: Any) -> Any:
        return self._loop.run_until_complete(coroutine)

    def get(self, url: str, **kwargs: Any) -> httpx.Response:
        return self._run(self._http.get(url, **kwargs))  # type: ignore[no-any-return]

    def post(self, url: str, **kwargs: Any) -> httpx.Response:
        return self._run(self._http.post(url, **kwargs))  # type: ignore[no-any-return]

    def patch(self, url: str, **kwargs: Any) -> httpx.Response:
        return self._run(self._http.patch(url, **kwargs))  # type: ignore[no-any-return]

    def close(self) -> None:
        try:
            self._run(self._stack.aclose())
            self._run(self._loop.shutdown_asyncgens())
        finally:
            self._loop.close()


@pytest.fixture(params=["async", "sync"])
def client(
    request: pytest.FixtureRequest, moto_server: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[AppClient]:
    for var in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("CURSOR_SECRET", "test-secret")
    reset_moto_server(moto_server)
    make = fastapi_app.create_app if request.param == "async" else fastapi_app.create_sync_app
    test_client = AppClient(make(moto_server, create_tables=True))
    try:
        yield test_client
    finally:
        test_client.close()


def order(order_id: str, total: str = "10.50", customer: str = "c1") -> dict[str, str]:
    return {"customer_id": customer, "order_id": order_id, "total": total}


def test_create_then_get_round_trips_the_entity(client: AppClient) -> None:
    created = client.post("/orders", json=order("o1"))
    assert created.status_code == 201
    body = created.json()
    assert body["version"] == 1
    assert body["status"] == "open"
    assert body["created_at"]
    assert client.get("/customers/c1/orders/o1").json() == body


def test_missing_order_is_404(client: AppClient) -> None:
    response = client.get("/customers/c1/orders/nope")
    assert response.status_code == 404
    assert "nope" in response.json()["detail"]
    patch = client.patch("/customers/c1/orders/nope", json={"status": "paid", "version": 1})
    assert patch.status_code == 404  # NotFoundError from the update


def test_creating_twice_is_409(client: AppClient) -> None:
    assert client.post("/orders", json=order("o1")).status_code == 201
    again = client.post("/orders", json=order("o1", total="99"))
    assert again.status_code == 409
    assert client.get("/customers/c1/orders/o1").json()["total"] == "10.50"


def test_stale_version_is_409_and_current_version_updates(client: AppClient) -> None:
    client.post("/orders", json=order("o1"))
    paid = client.patch("/customers/c1/orders/o1", json={"status": "paid", "version": 1})
    assert paid.status_code == 200
    assert paid.json()["status"] == "paid"
    assert paid.json()["version"] == 2
    stale = client.patch("/customers/c1/orders/o1", json={"status": "shipped", "version": 1})
    assert stale.status_code == 409  # VersionConflictError
    assert client.get("/customers/c1/orders/o1").json()["status"] == "paid"


def test_list_pages_with_signed_cursors_until_the_end(client: AppClient) -> None:
    for i in range(7):
        client.post("/orders", json=order(f"o{i}", total=str(i)))
    client.post("/orders", json=order("x1", customer="c2"))
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        params = {"limit": 3} | ({"cursor": cursor} if cursor else {})
        response = client.get("/customers/c1/orders", params=params)
        assert response.status_code == 200
        body = response.json()
        seen += [o["order_id"] for o in body["items"]]
        pages += 1
        cursor = body["cursor"]
        if cursor is None:
            break
    assert seen == [f"o{i}" for i in reversed(range(7))]  # newest (highest key) first
    assert pages == 3


def test_altered_or_foreign_cursor_is_400(client: AppClient) -> None:
    for i in range(4):
        client.post("/orders", json=order(f"o{i}"))
    cursor = client.get("/customers/c1/orders", params={"limit": 2}).json()["cursor"]
    assert cursor
    tampered = cursor[:-2] + ("AA" if not cursor.endswith("AA") else "BB")
    response = client.get("/customers/c1/orders", params={"limit": 2, "cursor": tampered})
    assert response.status_code == 400
    other = client.get("/customers/c2/orders", params={"limit": 2, "cursor": cursor})
    assert other.status_code == 400  # a cursor of another customer's list


def test_bad_input_is_422_before_any_request(client: AppClient) -> None:
    assert client.post("/orders", json={"customer_id": "c1"}).status_code == 422
    assert client.get("/customers/c1/orders", params={"limit": 0}).status_code == 422


@pytest.mark.parametrize(
    "forged",
    [{"version": 7}, {"created_at": "2001-01-01T00:00:00Z"}, {"updated_at": "x"}, {"ttl": 1}],
)
def test_a_body_that_forges_server_set_fields_is_refused(
    client: AppClient, forged: dict[str, Any]
) -> None:
    # The guide took the entity as the request body: "version": 7 was stored as 8, and a
    # client could choose its own created_at. The derived input model refuses them.
    response = client.post("/orders", json=order("o1") | forged)
    assert response.status_code == 422
    assert response.json()["detail"][0]["type"] == "extra_forbidden"
    assert client.get("/customers/c1/orders/o1").status_code == 404  # nothing written
    created = client.post("/orders", json=order("o1")).json()
    assert created["version"] == 1
    assert created["created_at"] != "2001-01-01T00:00:00Z"
