"""The browser's web app: Starlette routes over the views, rendered with Jinja (autoescaped).

Server-rendered HTML forms and links, no JavaScript (the Content-Security-Policy forbids
scripts outright, so even a value that escaped escaping could not run). Every request to
DynamoDB goes through the library's own operations on a `Connection`; a recording
subclass keeps the exact requests sent and the responses, so each page shows the
request, the estimated capacity (`estimate_capacity`) and the ``ConsumedCapacity``
DynamoDB reported.

Writes exist only when the app is created with ``allow_writes=True``; their forms carry
a per-process CSRF token and their requests carry conditions on the values the page
showed (plus the entity's optimistic-locking version), so a write never overwrites a
change made since the page was read.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from singletable.errors import (
    ConditionFailedError,
    CursorError,
    SingleTableError,
    UniqueConstraintError,
    VersionConflictError,
)
from singletable.expressions.conditions import Condition, and_
from singletable.io.connection import Connection
from singletable.model.fields import FieldRefs, field_refs
from singletable.model.plan import EntityPlan, entity_plans
from singletable.model.table import Table
from singletable.operations.collection import Collection, CollectionQuery
from singletable.operations.items import Delete, Get
from singletable.operations.protocol import consumed_units
from singletable.operations.query import EntityQuery
from singletable.operations.update import Update
from singletable.tooling.browser import views
from singletable.tooling.cost.capacity import estimate_capacity
from singletable.tooling.migrations.planner import ChangeClass, plan_changes
from singletable.tooling.migrations.snapshot import read_snapshot
from singletable.types import Item

__all__ = ["BrowserConfig", "create_app", "render"]

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("singletable.tooling.browser", "templates"),
    # Every value is escaped unless a template says otherwise (none does).
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENV.filters["json"] = views.raw_json
_ENV.filters["units"] = lambda v: f"{float(v):g}"

#: Scripts are not used at all; styles and images come from this origin only.
_CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)


def render(template: str, **context: Any) -> str:
    """Render one of the browser's templates (autoescaped) to HTML text."""
    return _ENV.get_template(template).render(**context)


@dataclass
class BrowserConfig:
    """What a browser app serves and how.

    Attributes:
        tables: The model's tables (their registered entity plans drive every view).
        collections: Collections to offer next to the entities.
        allow_writes: Offer edit and delete forms (off: the app never writes).
        snapshot: A snapshot file to plan the live model against (the plan page).
        endpoint_label: How pages name the backend; never carries credentials.
        csrf_token: The token write forms carry (default: a fresh random one).
        cursor_secret: The key that signs pagination cursors (default: random).
    """

    tables: Sequence[Table]
    collections: Sequence[Collection] = ()
    allow_writes: bool = False
    snapshot: str | None = None
    endpoint_label: str = "DynamoDB"
    csrf_token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    cursor_secret: bytes = field(default_factory=lambda: secrets.token_bytes(32))


class _Recording(Connection):
    """A `Connection` on the same client that keeps every request and response."""

    def __init__(self, db: Connection) -> None:
        super().__init__(db.client)
        self.calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = []

    def call(self, action: str, params: dict[str, Any]) -> dict[str, Any]:
        response = super().call(action, params)
        self.calls.append((action, params, response))
        return response

    @property
    def reported_units(self) -> float:
        return sum(consumed_units(r) for _, _, r in self.calls)


class _SecurityHeaders:
    """Adds the CSP and friends to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [
                    (b"content-security-policy", _CSP.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"x-frame-options", b"DENY"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"cache-control", b"no-store"),
                ]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)


@dataclass
class _Side:
    """One direction of a query: its request, rows, estimate and reported capacity."""

    title: str
    params: dict[str, Any]
    rows: list[views.Row]
    requests: list[dict[str, Any]]
    estimated: float
    estimate_lines: list[str]
    reported: float
    lower_bound: bool
    next_url: str | None
    error: str | None = None


def _html(text: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(text, status_code=status)


class _Browser:
    """The pages: each reads through ``db`` and renders what the views compute."""

    def __init__(self, db: Connection, config: BrowserConfig) -> None:
        self.db = db
        self.config = config
        self.all_sources = views.sources(config.tables, config.collections)
        self.by_id = {s.id: s for s in self.all_sources}
        self.plans: dict[str, EntityPlan] = {
            f"{t.name}/{p.name}@{p.version}": p for t in config.tables for p in entity_plans(t)
        }

    def page(
        self, template: str, request: Request, status: int = 200, **context: Any
    ) -> HTMLResponse:
        return _html(
            render(
                template,
                config=self.config,
                sources=self.all_sources,
                path=request.url.path,
                **context,
            ),
            status,
        )

    # -- model ---------------------------------------------------------------------

    async def model_page(self, request: Request) -> Response:
        return self.page(
            "model.html", request, tables=views.model_overview(self.config.tables, self.all_sources)
        )

    # -- query ---------------------------------------------------------------------

    def run_side(
        self,
        source: views.Source,
        query: EntityQuery[Any] | CollectionQuery,
        cursor: str | None,
        title: str,
        form: Mapping[str, str],
        cursor_param: str,
    ) -> _Side:
        query = query.signed(self.config.cursor_secret)
        recorder = _Recording(self.db)
        try:
            params = query.params(cursor)
            result = query.page(recorder, cursor)
        except (CursorError, SingleTableError) as exc:
            return _Side(title, {}, [], [], 0.0, [], 0.0, False, None, error=str(exc))
        read: list[Item] = [i for _, _, r in recorder.calls for i in r.get("Items", [])]
        ordered = views.in_key_order(source, result.items, result.unknown, read)
        rows = views.rows_from_items(source, ordered)
        estimate = estimate_capacity(query, read=read)
        scanned = sum(int(r.get("ScannedCount", 0)) for _, _, r in recorder.calls)
        next_url = None
        if result.cursor is not None:
            next_url = "/query?" + urlencode({**form, cursor_param: result.cursor})
        return _Side(
            title=title,
            params=params,
            rows=rows,
            requests=[p for _, p, _ in recorder.calls],
            estimated=estimate.total,
            estimate_lines=[f"{line.what}: {line.units:g} RCU" for line in estimate.lines],
            reported=recorder.reported_units,
            lower_bound=scanned > len(read),
            next_url=next_url,
        )

    def query_view(self, request: Request, form: dict[str, str]) -> HTMLResponse:
        source = self.by_id.get(form.get("source", "")) or (
            self.all_sources[0] if self.all_sources else None
        )
        if source is None:
            return self.page("error.html", request, 404, message="the model declares no entities")
        context: dict[str, Any] = {
            "source": source,
            "form": form,
            "columns": views.columns_for(source),
            "sides": [],
            "error": None,
        }
        if form.get("run"):
            try:
                asc = views.build_query(source, form)
                desc = views.build_query(source, form, descending=True)
            except SingleTableError as exc:
                context["error"] = str(exc)
            else:
                context["sides"] = [
                    self.run_side(source, asc, form.get("acur") or None, "Ascending", form, "acur"),
                    self.run_side(
                        source, desc, form.get("dcur") or None, "Descending", form, "dcur"
                    ),
                ]
        return self.page("query.html", request, **context)

    async def query_page(self, request: Request) -> Response:
        form = dict(request.query_params)
        return await run_in_threadpool(self.query_view, request, form)

    # -- item ----------------------------------------------------------------------

    def item_key(self, plan: EntityPlan, form: Mapping[str, str]) -> dict[str, Any]:
        key = {}
        for name in plan.primary.fields:
            text = form.get(f"k.{name}")
            if text is None:
                raise views.InputError(f"{plan.name}: key field {name!r} is missing")
            key[name] = views.parse_field_text(plan, name, text)
        return key

    def read_item(self, plan: EntityPlan, key: Mapping[str, Any]) -> tuple[Any, _Recording, Any]:
        """The item (or ``None``), the recorder that read it, and the raw stored item."""
        get: Get[Any] = Get(plan, key, consistent=True, capacity="TOTAL")
        recorder = _Recording(self.db)
        obj = get.run(recorder)
        raw = recorder.calls[-1][2].get("Item") if recorder.calls else None
        return obj, recorder, raw

    def item_view(
        self, request: Request, form: Mapping[str, str], message: str | None = None
    ) -> HTMLResponse:
        plan = self.plans.get(form.get("entity", ""))
        if plan is None:
            return self.page("error.html", request, 404, message="no such entity in the model")
        try:
            key = self.item_key(plan, form)
            get: Get[Any] = Get(plan, key, consistent=True, capacity="TOTAL")
            obj, recorder, raw = self.read_item(plan, key)
            estimate = estimate_capacity(get, read=raw)
        except SingleTableError as exc:
            return self.page("error.html", request, 400, message=str(exc))
        return self.page(
            "item.html",
            request,
            plan=plan,
            entity_id=form["entity"],
            key={f"k.{k}": views.display(v) for k, v in key.items()},
            obj=obj,
            fields=views.item_fields(obj) if obj is not None else [],
            params=get.params(),
            estimated=estimate.total,
            reported=recorder.reported_units,
            message=message,
            write=None,
        )

    async def item_page(self, request: Request) -> Response:
        return await run_in_threadpool(self.item_view, request, dict(request.query_params))

    # -- writes --------------------------------------------------------------------

    def unchanged_since_read(
        self, plan: EntityPlan, old: Mapping[str, Any], names: Sequence[str]
    ) -> Condition | None:
        """Conditions that the stored values are still those the form showed."""
        refs: FieldRefs[Any] = field_refs(plan)
        parts: list[Condition] = []
        for name in names:
            value = old[name]
            ref = getattr(refs, name)
            if isinstance(value, (set, frozenset)) and not value:
                parts.append(ref.not_exists())
            else:
                parts.append(ref == value)
        return and_(*parts) if parts else None

    def write_view(self, request: Request, form: dict[str, str]) -> HTMLResponse:
        plan = self.plans.get(form.get("entity", ""))
        if plan is None:
            return self.page("error.html", request, 404, message="no such entity in the model")
        try:
            key = self.item_key(plan, form)
            editable = views.editable_fields(plan)
            old = {n: views.parse_field_text(plan, n, form.get(f"old.{n}", "")) for n in editable}
            version = None
            if plan.version_field is not None and form.get("old_version", "") != "":
                version = int(form["old_version"])
        except (SingleTableError, ValueError) as exc:
            return self.page("error.html", request, 400, message=str(exc))
        recorder = _Recording(self.db)
        try:
            # The item as stored now, for the estimate (a write is billed on the larger
            # of before and after); the condition, not this read, protects against races.
            _, _, before = self.read_item(plan, key)
            operation: Update[Any] | Delete[Any]
            if form.get("action") == "delete":
                operation = Delete(
                    plan,
                    key,
                    condition=self.unchanged_since_read(plan, old, editable),
                    expected_version=version,
                    capacity="TOTAL",
                )
                operation.run(recorder)
                estimate = estimate_capacity(operation, existing=before)
                outcome = "deleted"
            else:
                new = {n: views.parse_field_text(plan, n, form.get(f"f.{n}", "")) for n in editable}
                changed = [n for n in editable if new[n] != old[n]]
                if not changed:
                    return self.item_view(request, form, message="nothing changed: no request sent")
                update: Update[Any] = Update(plan, key, capacity="TOTAL")
                update = update.set(**{n: new[n] for n in changed})
                update = update.known(**{n: old[n] for n in editable if n not in changed})
                condition = self.unchanged_since_read(plan, old, changed)
                if condition is not None:
                    update = update.where(condition)
                if version is not None:
                    update = update.expect_version(version)
                operation = update
                after = update.run(recorder)
                estimate = estimate_capacity(update, existing=before, after=plan.to_item(after))
                outcome = "updated"
        except UniqueConstraintError as exc:
            # A condition failed, but not because the item changed: another item holds
            # the value, and the page says which field (and which item, when known).
            taken = ", ".join(f"{plan.name}.{name}" for name in exc.fields)
            return self.page(
                "error.html",
                request,
                409,
                message=f"the value of {taken} is taken by another item (nothing was "
                f"written): {exc}",
            )
        except (ConditionFailedError, VersionConflictError) as exc:
            return self.page(
                "error.html",
                request,
                409,
                message="the item changed since this page read it (nothing was written): "
                + str(exc),
            )
        except SingleTableError as exc:
            return self.page("error.html", request, 400, message=str(exc))
        return self.page(
            "written.html",
            request,
            outcome=outcome,
            plan=plan,
            back={"entity": form["entity"]} | {f"k.{k}": views.display(v) for k, v in key.items()},
            params=operation.params(),
            estimated=estimate.total,
            reported=recorder.reported_units,
        )

    async def write_page(self, request: Request) -> Response:
        if not self.config.allow_writes:
            return self.page(
                "error.html",
                request,
                403,
                message="read-only: start the browser with --allow-writes to edit or delete",
            )
        body = (await request.body()).decode("utf-8", errors="replace")
        form = dict(parse_qsl(body, keep_blank_values=True))
        token = form.get("csrf", "")
        if not hmac.compare_digest(token.encode(), self.config.csrf_token.encode()):
            return self.page("error.html", request, 403, message="missing or wrong CSRF token")
        return await run_in_threadpool(self.write_view, request, form)

    # -- plan ----------------------------------------------------------------------

    def plan_view(self, request: Request) -> HTMLResponse:
        if self.config.snapshot is None:
            return self.page("plan.html", request, snapshot=None, groups=[], error=None, worst=None)
        try:
            plan = plan_changes(list(self.config.tables), read_snapshot(self.config.snapshot))
        except SingleTableError as exc:
            return self.page(
                "plan.html",
                request,
                snapshot=self.config.snapshot,
                groups=[],
                error=str(exc),
                worst=None,
            )
        groups = [(kind, plan.of(kind)) for kind in reversed(list(ChangeClass)) if plan.of(kind)]
        return self.page(
            "plan.html",
            request,
            snapshot=self.config.snapshot,
            groups=groups,
            error=None,
            worst=plan.worst,
        )

    async def plan_page(self, request: Request) -> Response:
        return await run_in_threadpool(self.plan_view, request)


def create_app(db: Connection, config: BrowserConfig) -> Starlette:
    """The browser as an ASGI app reading (and, if allowed, writing) through ``db``."""
    browser = _Browser(db, config)
    routes = [
        Route("/", browser.model_page),
        Route("/query", browser.query_page),
        Route("/item", browser.item_page),
        Route("/item", browser.write_page, methods=["POST"]),
        Route("/plan", browser.plan_page),
        Mount("/static", StaticFiles(packages=[("singletable.tooling.browser", "static")])),
    ]
    return Starlette(routes=routes, middleware=[Middleware(_SecurityHeaders)])


def guard_hosts(app: ASGIApp, hosts: Sequence[str]) -> ASGIApp:
    """Refuse requests whose Host header is not one of ``hosts`` (DNS rebinding)."""
    return TrustedHostMiddleware(app, allowed_hosts=list(hosts))
