"""The browser app on a live backend: writes through guards, and no input answers 5xx.

The browser is a synchronous tool (it records every call through a `singletable.Connection`
subclass), so it gets a `Connection` on the backend's client whatever ``--executor`` says.
Requests go in-process through Starlette's test client; an exception inside the app fails
the test with its traceback rather than turning into a status code.

Issue 26, item 4: on DynamoDB Local a transaction reports ``ConsumedCapacity`` as a list
(moto returns ``[]``, which hid it), and the page after a successful guarded write crashed
reading it as a map. Item 5: a taken unique value was reported as "the item changed".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs
from pydantic import Field
from starlette.testclient import TestClient

import singletable as st
from singletable.attributes.size import MAX_NESTING
from singletable.tooling.browser.app import BrowserConfig, create_app
from singletable.tooling.browser.views import json_nesting
from tests.integration.uniqueness import assert_guards_exact

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
else:
    DynamoDBClient = Any

TOKEN = "test-token"
ENTITY_SUFFIX = "/Member@1"


@dataclass
class Site:
    table: st.Table
    db: st.Connection
    client: DynamoDBClient
    Member: Any
    http: TestClient

    @property
    def entity(self) -> str:
        return self.table.name + ENTITY_SUFFIX


@pytest.fixture
def site(dynamodb_client: DynamoDBClient, table_name: str) -> Iterator[Site]:
    table = st.Table(table_name)

    class Member(
        st.Entity,
        table=table,
        pk="TEAM#{team}",
        sk="MEMBER#{member_id}",
        unique=["email"],
        version_field="version",
    ):
        team: str
        member_id: str
        email: str
        name: str = ""
        age: int | None = None
        details: dict[str, Any] = Field(default_factory=dict)
        tags: list[str] = Field(default_factory=list)
        version: int = 0

    db = st.Connection(dynamodb_client)
    db.create_table(table)
    for member_id, email in (("m1", "ada@example.com"), ("m2", "bob@example.com")):
        Member.create(Member(team="t", member_id=member_id, email=email)).run(db)
    config = BrowserConfig([table], allow_writes=True, csrf_token=TOKEN)
    with TestClient(create_app(db, config), base_url="http://127.0.0.1") as http:
        yield Site(table, db, dynamodb_client, Member, http)


def edit_form(site: Site, member_id: str, **new: str) -> dict[str, str]:
    """The form the item page of ``member_id`` posts, with ``new`` values filled in."""
    stored = site.Member.get(team="t", member_id=member_id, consistent=True).run(site.db)
    assert stored is not None
    shown = {
        "email": stored.email,
        "name": stored.name,
        "age": "" if stored.age is None else str(stored.age),
        "details": "{}",
        "tags": "[]",
    }
    form = {
        "csrf": TOKEN,
        "entity": site.entity,
        "k.team": "t",
        "k.member_id": member_id,
        "old_version": str(stored.version),
        "action": "update",
    }
    form |= {f"old.{n}": v for n, v in shown.items()}
    form |= {f"f.{n}": new.get(n, v) for n, v in shown.items()}
    return form


def reported(html: str) -> float:
    match = re.search(r'class="reported">([^<]*)<', html)
    assert match is not None, html
    return float(match.group(1))


def reported_as_the_backend_does(html: str) -> None:
    """The figures DynamoDB reported for a guarded write are summed, not read as one map.

    A guarded write is a transaction (DynamoDB Local reports a list of entries, moto an
    empty list, pinned by test_backend_quirks) and a read of the item written (a map).
    """
    assert reported(html) > 0.0


def test_editing_a_unique_field_shows_the_transactions_capacity(site: Site) -> None:
    response = site.http.post("/item", data=edit_form(site, "m1", email="ada@new.example"))
    assert response.status_code == 200, response.text
    assert "updated" in response.text
    reported_as_the_backend_does(response.text)
    stored = site.Member.get(team="t", member_id="m1").run(site.db)
    assert stored is not None
    assert stored.email == "ada@new.example"
    assert assert_guards_exact(site.client, site.table) == (2, 2)


def test_deleting_an_entity_with_unique_shows_the_transactions_capacity(site: Site) -> None:
    form = edit_form(site, "m2") | {"action": "delete"}
    response = site.http.post("/item", data=form)
    assert response.status_code == 200, response.text
    assert "deleted" in response.text
    reported_as_the_backend_does(response.text)
    assert site.Member.get(team="t", member_id="m2").run(site.db) is None
    assert assert_guards_exact(site.client, site.table) == (1, 1)


def test_a_taken_unique_value_is_reported_as_taken_with_its_field(site: Site) -> None:
    response = site.http.post("/item", data=edit_form(site, "m1", email="bob@example.com"))
    assert response.status_code == 409
    text = response.text
    assert "Member.email is taken by another item" in text
    assert "changed since" not in text
    assert "bob@example.com" in text
    stored = site.Member.get(team="t", member_id="m1").run(site.db)
    assert stored is not None
    assert stored.email == "ada@example.com"
    assert assert_guards_exact(site.client, site.table) == (2, 2)


@pytest.mark.parametrize(
    "value", ["9" * 5_000, "[" + "1" * 4_301 + "]", '{"n": -' + "7" * 9_999 + "}"]
)
def test_a_number_past_pythons_digit_limit_in_an_edit_field_is_refused(
    site: Site, value: str
) -> None:
    # Found by the generated-requests test in a CI rehearsal: json.loads raises a plain
    # ValueError (not JSONDecodeError) for an integer literal of more than 4,300 digits,
    # and the page answered 500.
    response = site.http.post("/item", data=edit_form(site, "m1", details=value))
    assert response.status_code == 400, response.text
    assert "Member.details: not valid JSON" in response.text


@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 5_000, 200_000])
def test_deeply_nested_json_in_an_edit_field_is_refused_naming_the_field(
    site: Site, depth: int
) -> None:
    for name, value in (
        ("details", '{"a":' * depth + "1" + "}" * depth),
        ("tags", "[" * depth + "]" * depth),
    ):
        response = site.http.post("/item", data=edit_form(site, "m1", **{name: value}))
        assert response.status_code == 400, (name, depth)
        assert f"Member.{name}: the value nests {depth} levels deep" in response.text
    # At the limit the value is accepted and stored.
    deepest = '{"d": ' + "[" * (MAX_NESTING - 2) + "{}" + "]" * (MAX_NESTING - 2) + "}"
    assert json_nesting(deepest) == MAX_NESTING
    response = site.http.post("/item", data=edit_form(site, "m1", details=deepest))
    assert response.status_code == 200, response.text
    stored = site.Member.get(team="t", member_id="m1", consistent=True).run(site.db)
    assert stored is not None
    assert stored.details == json.loads(deepest)


# -- generated requests ------------------------------------------------------------------

_TEXT = hs.one_of(
    hs.sampled_from(
        [
            "",
            "t",
            "m1",
            "m2",
            "ada@example.com",
            "bob@example.com",
            "1",
            "-1",
            "1e400",
            "9" * 5000,
            "nan",
            "null",
            "{}",
            "[]",
            '{"a": [1, {"b": null}]}',
            "[" * 40 + "]" * 40,
            "{" * 3000,
            "\x00",
            "\ud800",
            "x" * 3000,
            "%ff",
        ]
    ),
    hs.text(max_size=40),
)
_FORM_NAMES = [
    "entity",
    "k.team",
    "k.member_id",
    "old_version",
    "action",
    "source",
    "run",
    "op",
    "v1",
    "v2",
    "limit",
    "acur",
    "dcur",
    "pk.team",
    "eq.member_id",
    *(f"{kind}.{n}" for kind in ("old", "f") for n in ("email", "name", "age", "details", "tags")),
]


@hs.composite
def _requests(draw: hs.DrawFn, valid: dict[str, dict[str, str]]) -> tuple[str, str, dict[str, str]]:
    """A request to one endpoint: often a valid form with some values replaced."""
    method, path = draw(
        hs.sampled_from(
            [
                ("GET", "/"),
                ("GET", "/query"),
                ("GET", "/item"),
                ("POST", "/item"),
                ("POST", "/item"),
                ("POST", "/item"),
                ("GET", "/plan"),
            ]
        )
    )
    fields = dict(valid[path]) if draw(hs.integers(0, 3)) else {}
    fields |= draw(hs.dictionaries(hs.sampled_from(_FORM_NAMES), _TEXT, max_size=4))
    if method == "POST" and draw(hs.integers(0, 5)) == 0:
        fields.pop("csrf", None)
    return method, path, fields


def test_generated_requests_to_every_endpoint_never_answer_5xx(site: Site) -> None:
    update = edit_form(site, "m1")
    valid = {
        "/": {},
        "/plan": {},
        "/item": update,
        "/query": {"source": site.entity, "run": "1", "pk.team": "t", "limit": "5"},
    }

    @given(request=_requests(valid))
    @settings(
        max_examples=120,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    def check(request: tuple[str, str, dict[str, str]]) -> None:
        method, path, fields = request
        # Encoded by hand: a lone surrogate goes out as the bytes a broken client sends.
        encoded = "&".join(f"{_quote(k)}={_quote(v)}" for k, v in fields.items())
        if method == "GET":
            response = site.http.get(f"{path}?{encoded}")
        else:
            response = site.http.post(
                path,
                content=encoded.encode(),
                headers={"content-type": "application/x-www-form-urlencoded"},
            )
        assert response.status_code < 500, (method, path, fields, response.text[:500])

    check()


def _quote(text: str) -> str:
    return quote(text.encode("utf-8", errors="surrogatepass"), safe="")
