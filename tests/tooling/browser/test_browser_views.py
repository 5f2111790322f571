"""The browser's view logic and app, without a browser: plans, forms, queries, escaping."""

from __future__ import annotations

import asyncio
import io
import re
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import httpx
import pytest
import uvicorn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from docs_src import native_keys
from singletable import Connection, Entity, NativeGSI, Table, embedded
from singletable.cli import main
from singletable.cli.browse import demo_connection
from singletable.errors import SingleTableError
from singletable.examples import (
    Actor,
    AuditEvent,
    File,
    Folder,
    Reading,
    children,
    demo,
    drive,
)
from singletable.model.plan import entity_plans
from singletable.tooling.browser import server as browser_server
from singletable.tooling.browser import views
from singletable.tooling.browser.app import BrowserConfig, create_app, render
from singletable.tooling.browser.server import endpoint_label, is_loopback
from tests.strategies import template_shapes

XSS = ['<script>alert("x")</script>', '"><img src=x onerror=alert(1)>']


def source(ident: str) -> views.Source:
    all_sources = views.sources([demo], views.collections_of([demo]))
    return next(s for s in all_sources if s.id == ident)


# -- sources come from the plans -------------------------------------------------------


def test_sources_are_every_entity_key_plan_and_every_declared_collection() -> None:
    collections = views.collections_of([demo])
    assert {c.name for c in collections} == {"activity", "drive", "children"}
    ids = [s.id for s in views.sources([demo], collections)]
    expected = [
        f"singletable-demo/{p.name}@{p.version}" + (f"/{kp.index}" if kp.index else "")
        for p in entity_plans(demo)
        for kp in (p.primary, *p.indexes.values())
    ]
    assert ids[: len(expected)] == expected
    assert ids[len(expected) :] == [
        "singletable-demo/collection/activity",
        "singletable-demo/collection/drive",
        "singletable-demo/collection/children",
    ]
    assert len(set(ids)) == len(ids)


def test_form_fields_follow_the_key_templates() -> None:
    events = source("singletable-demo/AuditEvent@1")
    assert [f.name for f in events.pk_fields] == ["actor_id"]
    assert [(f.name, f.type_label) for f in events.sk_fields] == [
        ("ts", "datetime"),
        ("seq", "int"),
    ]
    fleet = source("singletable-demo/Reading@1/GSI1")
    assert [(f.name, f.input_type) for f in fleet.pk_fields] == [("day", "date")]
    # The collection of two entities with different sort keys offers no sort condition.
    assert source("singletable-demo/collection/activity").operators == {"": "no condition"}
    # Folders and files share "{path}": begins_with on the path is offered.
    assert set(source("singletable-demo/collection/drive").operators) == {"", "begins_with"}


# -- forms build the API's own queries ----------------------------------------------------


def form(**values: str) -> dict[str, str]:
    return {k.replace("__", "."): v for k, v in values.items()}


@pytest.mark.parametrize("descending", [False, True])
def test_form_queries_equal_the_api_queries(descending: bool) -> None:
    cases: list[tuple[str, dict[str, str], Any]] = [
        (
            "singletable-demo/AuditEvent@1",
            form(
                pk__actor_id="u_8814",
                op="between",
                v1="2026-06-23T00:00:00Z",
                v2="2026-06-23T10:00:00Z",
                limit="4",
            ),
            AuditEvent.query(actor_id="u_8814").between(
                ts=(
                    datetime(2026, 6, 23, tzinfo=timezone.utc),
                    datetime(2026, 6, 23, 10, tzinfo=timezone.utc),
                )
            ),
        ),
        (
            "singletable-demo/AuditEvent@1",
            form(pk__actor_id="u_8814", eq__ts="2026-06-23T14:00:00Z", op="ge", v1="2"),
            AuditEvent.query(actor_id="u_8814", ts=datetime(2026, 6, 23, 14, tzinfo=timezone.utc))
            .ge(seq=2)
            .limit(10),
        ),
        (
            "singletable-demo/Reading@1/GSI1",
            form(pk__day="2026-06-23", op="gt", v1="30", limit="3"),
            Reading.query(index="GSI1", day=datetime(2026, 6, 23).date()).gt(celsius=30),
        ),
        (
            "singletable-demo/collection/drive",
            form(pk__account="acme", op="begins_with", v1="root/photos/", limit="5"),
            drive.query(account="acme").begins_with(path="root/photos/"),
        ),
        (
            "singletable-demo/collection/children",
            form(pk__account="acme", pk__parent="root/photos/"),
            children.query(account="acme", parent="root/photos/"),
        ),
        (
            "singletable-demo/Folder@1",
            form(pk__account="acme", op="lt", v1="root/p"),
            Folder.query(account="acme").lt(path="root/p"),
        ),
    ]
    for ident, values, api in cases:
        limit = int(values.get("limit", "10"))
        expected = api.limit(limit).capacity("TOTAL")
        if descending:
            expected = expected.descending()
        built = views.build_query(source(ident), values, descending=descending)
        assert built.params() == expected.params(), ident


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({}, "partition key field 'actor_id' (str) is required"),
        ({"pk.actor_id": "a", "op": "gt", "v1": "yesterday"}, "AuditEvent.ts"),
        ({"pk.actor_id": "a", "op": "between", "v1": "2026-06-23T00:00:00Z"}, "AuditEvent.ts"),
        ({"pk.actor_id": "a", "op": "nope"}, "sort key condition 'nope' is not offered"),
        ({"pk.actor_id": "a", "limit": "0"}, "page size must be between 1 and 200"),
        ({"pk.actor_id": "a", "limit": "x"}, "page size: not an integer"),
        ({"pk.actor_id": "a", "eq.seq": "1"}, "'seq' was given without 'ts'"),
    ],
)
def test_bad_form_values_name_the_field_and_rule(values: dict[str, str], message: str) -> None:
    with pytest.raises(SingleTableError, match=re.escape(message)):
        views.build_query(source("singletable-demo/AuditEvent@1"), values)


# -- rows ---------------------------------------------------------------------------------


def test_unknown_items_keep_their_place_in_key_order() -> None:
    src = source("singletable-demo/collection/activity")
    actor = Actor(actor_id="a", display_name="Ada")
    event = AuditEvent(
        actor_id="a", ts=datetime(2026, 1, 1, tzinfo=timezone.utc), seq=1, action="x", target="y"
    )
    stray = {
        "PK": {"S": "ACTOR#a"},
        "SK": {"S": "EVT#0"},
        "_et": {"S": "Retired"},
        "_ev": {"N": "1"},
    }
    read = [event.to_item(), stray, actor.to_item()]
    ordered = views.in_key_order(src, [event, actor], [stray], read)
    assert ordered == [event, stray, actor]
    rows = views.rows_from_items(src, ordered)
    assert [r.entity for r in rows] == ["AuditEvent", None, "Actor"]
    # Each row carries its own entity's fields only, partition key left out.
    assert [c.name for c in rows[0].cells] == ["ts", "seq", "action", "target", "ip", "details"]
    assert [c.name for c in rows[2].cells] == ["display_name"]
    assert rows[1].cells == []
    assert "Retired@1 is declared by no class" in rows[1].note
    assert '"Retired"' in rows[1].raw


def test_columns_are_typed_per_entity_union() -> None:
    columns = views.columns_for(source("singletable-demo/collection/drive"))
    by_name = {c.name: c for c in columns}
    assert "account" not in by_name  # the partition key field is fixed for the whole page
    assert by_name["path"].type_label == "str"
    assert by_name["size"].types == (("File", "int"),)
    assert by_name["parent"].type_label == "Folder: str | None, File: str"


# -- rendering and escaping ---------------------------------------------------------------


def test_model_page_lists_what_the_plans_hold() -> None:
    html = render(
        "model.html",
        config=BrowserConfig([demo]),
        sources=[],
        path="/",
        tables=views.model_overview([demo], views.sources([demo], views.collections_of([demo]))),
    )
    for plan in entity_plans(demo):
        assert f'id="entity-{plan.name}"' in html
        for kp in (plan.primary, *plan.indexes.values()):
            assert f"{kp.schema.pk} = {kp.pk.source}" in html
    # Example keys are real encodings (fixed-width seq, UTC microseconds).
    assert "EVT#2026-06-23T08:00:00.000000Z#000042" in html
    # The date-bucketed GSI1 key of Reading is reported by the lint.
    assert "partition key &#39;FLEET#{day}&#39; can take 1 key" in html


def test_item_values_are_escaped_in_result_rows() -> None:
    src = source("singletable-demo/collection/drive")
    files = [
        File(account="acme", path=f"root/{payload}", parent="root/", size=1, content_type=payload)
        for payload in XSS
    ]
    columns = views.columns_for(src)
    rows = views.rows_from_items(src, files)
    side = {
        "title": "Ascending",
        "params": {"x": XSS[0]},
        "rows": rows,
        "requests": [],
        "estimated": 0.5,
        "estimate_lines": [],
        "reported": 0.5,
        "lower_bound": False,
        "next_url": None,
        "error": None,
    }
    html = render(
        "query.html",
        config=BrowserConfig([demo]),
        sources=[src],
        path="/query",
        source=src,
        form={"pk.account": XSS[1]},
        columns=columns,
        sides=[type("Side", (), side)()],
        error=XSS[0],
    )
    assert "<script" not in html
    assert "<img" not in html
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in html
    assert "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" in html


@given(shape=template_shapes(max_fields=3), name=hs.sampled_from([*XSS, "Plain"]))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_model_page_renders_any_generated_entity(shape: Any, name: str) -> None:
    table = Table("gen-<b>", delimiter=shape.delimiter, escape=shape.escape)
    annotations = {field: kind.annotation for field, kind in shape.fields}
    annotations["note"] = str
    cls: type[Entity] = type(
        "Gen",
        (Entity,),
        {"__annotations__": annotations, "__doc__": name},
        table=table,
        pk="P" + shape.delimiter + "{note}",
        sk=shape.source,
    )
    html = render(
        "model.html",
        config=BrowserConfig([table]),
        sources=[],
        path="/",
        tables=views.model_overview([table], views.sources([table])),
    )
    for raw in ("<b>", "<script", "<img"):
        assert raw not in html
    assert 'id="entity-Gen"' in html
    for field in annotations:
        assert f"<td>{field}" in html
    # Every template field gets a typed form input.
    (src,) = views.sources([table])
    assert [f.name for f in src.sk_fields] == [f for f, _ in shape.fields]
    assert cls.plan().primary.sk is not None


# -- the app, in-process ------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_db() -> Iterator[Any]:
    with demo_connection() as db:
        yield db


def call(app: Any, method: str, url: str, **kwargs: Any) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            return await c.request(method, url, **kwargs)

    return asyncio.run(go())


def test_pages_carry_a_script_free_content_security_policy(demo_db: Any) -> None:
    app = create_app(demo_db, BrowserConfig([demo], views.collections_of([demo])))
    response = call(app, "GET", "/")
    assert response.status_code == 200
    assert "script-src" not in response.headers["content-security-policy"]
    assert "default-src 'none'" in response.headers["content-security-policy"]
    assert response.headers["x-frame-options"] == "DENY"


def test_writes_need_allow_writes_and_the_csrf_token(demo_db: Any) -> None:
    data = {
        "entity": "singletable-demo/Actor@1",
        "k.actor_id": "u_8814",
        "old.display_name": "Ada",
        "f.display_name": "Eve",
        "action": "update",
    }
    read_only = create_app(demo_db, BrowserConfig([demo]))
    assert call(read_only, "POST", "/item", data={**data, "csrf": "t"}).status_code == 403
    config = BrowserConfig([demo], allow_writes=True, csrf_token="right-token")
    app = create_app(demo_db, config)
    for token in ("", "wrong-token"):
        response = call(app, "POST", "/item", data={**data, "csrf": token})
        assert response.status_code == 403
        assert "CSRF" in response.text
    assert Actor.get(actor_id="u_8814").run(demo_db) == Actor(actor_id="u_8814", display_name="Ada")
    # The item page's edit form carries the token.
    page = call(app, "GET", "/item", params={"entity": data["entity"], "k.actor_id": "u_8814"})
    assert 'name="csrf" value="right-token"' in page.text
    # With the token: a conditional update; a stale form is refused with 409.
    assert call(app, "POST", "/item", data={**data, "csrf": "right-token"}).status_code == 200

    def stored_name() -> str:
        # demo_db is untyped: the annotation picks the result type the sync executor gives.
        actor: Actor | None = Actor.get(actor_id="u_8814").run(demo_db)
        assert actor is not None
        return actor.display_name

    assert stored_name() == "Eve"
    stale = call(app, "POST", "/item", data={**data, "csrf": "right-token", "f.display_name": "X"})
    assert stale.status_code == 409
    assert stored_name() == "Eve"
    restore = {**data, "csrf": "right-token", "old.display_name": "Eve", "f.display_name": "Ada"}
    assert call(app, "POST", "/item", data=restore).status_code == 200


def test_plan_page_renders_the_plan_by_class(demo_db: Any, tmp_path: Any) -> None:
    from singletable import snapshot_json

    path = tmp_path / "snap.json"
    path.write_text(snapshot_json([demo]).replace("EVT#{ts}#{seq}", "EV#{ts}#{seq}"))
    app = create_app(demo_db, BrowserConfig([demo], snapshot=str(path)))
    html = call(app, "GET", "/plan").text
    assert 'class="change-class item-rewrite"' in html
    assert "AuditEvent" in html


# -- serving ------------------------------------------------------------------------------


def test_endpoint_label_never_shows_credentials() -> None:
    label = endpoint_label("http://AKIAXXX:secret@localhost:8000/path?token=t", None)
    assert label == "http://localhost:8000"
    assert endpoint_label(None, "eu-west-1") == "AWS DynamoDB (eu-west-1)"


def test_loopback_detection() -> None:
    assert all(is_loopback(h) for h in ("127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "192.168.1.4", "example.com", "::"))


def test_non_loopback_host_prints_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    bound: list[tuple[str, int]] = []

    class FakeSocket:
        def getsockname(self) -> tuple[str, int]:
            return ("0.0.0.0", 9999)

        def close(self) -> None:
            pass

    def fake_bind(host: str, port: int) -> FakeSocket:
        bound.append((host, port))
        return FakeSocket()

    monkeypatch.setattr(browser_server, "bind", fake_bind)
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)
    out = io.StringIO()
    browser_server.serve([demo], db=None, host="0.0.0.0", port=9999, out=out)  # type: ignore[arg-type]
    assert "WARNING: binding 0.0.0.0, not loopback" in out.getvalue()
    assert bound == [("0.0.0.0", 9999)]
    out = io.StringIO()
    browser_server.serve([demo], db=None, host="127.0.0.1", port=0, out=out)  # type: ignore[arg-type]
    assert "WARNING" not in out.getvalue()


def test_browse_needs_a_model_or_demo(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["browse"]) == 2
    assert "name a model (MODULE:ATTR), or give --demo" in capsys.readouterr().err


def test_a_transactions_capacity_list_is_summed_on_the_written_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # DynamoDB Local reports a transaction's ConsumedCapacity as a list (issue 26, item 4;
    # tests/integration/test_browser_app.py runs the real thing there); moto returns [],
    # so the list is put into moto's responses here to show the page sums it.
    table = Table("capacity-list")

    class Member(Entity, table=table, pk="M#{member_id}", sk="M", unique=["email"]):
        member_id: str
        email: str

    sent = Connection.call

    def local_shaped(self: Connection, action: str, params: dict[str, Any]) -> dict[str, Any]:
        response = dict(sent(self, action, params))
        response.pop("ConsumedCapacity", None)
        if action == "transact_write_items":
            response["ConsumedCapacity"] = [
                {"TableName": table.name, "CapacityUnits": 2.0},
                {"TableName": table.name, "CapacityUnits": 1.5},
            ]
        return response

    with embedded(table) as db:
        Member.create(Member(member_id="m1", email="a@example.com")).run(db)
        monkeypatch.setattr(Connection, "call", local_shaped)
        app = create_app(db, BrowserConfig([table], allow_writes=True, csrf_token="t"))
        base = {"csrf": "t", "entity": "capacity-list/Member@1", "k.member_id": "m1"}
        edit = base | {"old.email": "a@example.com", "f.email": "b@example.com"}
        for form in (edit, base | {"old.email": "b@example.com", "action": "delete"}):
            response = call(app, "POST", "/item", data=form)
            assert response.status_code == 200, response.text
            assert '<b class="reported">3.5</b>' in response.text


def test_model_page_lists_native_gsis_and_who_can_leave_them() -> None:
    table = Table("browse-native", indexes=[NativeGSI("ByArea", pk=["tenant"], sk=["day"])])

    class Sensor(Entity, table=table, pk="S#{sid}", sk="S"):
        sid: str
        tenant: str
        day: int | None = None

    tables = [table, native_keys.native]
    html = render(
        "model.html",
        config=BrowserConfig(tables),
        sources=[],
        path="/",
        tables=views.model_overview(tables, views.sources(tables, views.collections_of(tables))),
    )
    assert "native GSI" in html
    assert "<code>tenant (S)</code> + <code>day (N)</code>" in html
    assert "Sensor: <code>out while day is None</code>" in html
    assert "Event: <code>always in it</code>" in html
