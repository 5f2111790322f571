"""Every condition operator, as a write condition and as a query filter, on the backend.

Each case is checked twice against the same three stored items: as a FilterExpression
(which items does the query return?) and as a ConditionExpression (for which items does a
conditional put succeed?). Both must select exactly the expected items.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import pytest

import singletable as st
from singletable.expressions.conditions import condition_text
from tests.integration.models import Models, make_models

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
else:
    DynamoDBClient = Any

ODD = "a.b c-d#:x[0]"  # a map key with every character that breaks an unquoted path


@pytest.fixture
def m(dynamodb_client: DynamoDBClient, table_name: str) -> Models:
    models = make_models(dynamodb_client, table_name)
    Thing = models.Thing
    for thing in (
        Thing(
            box="c",
            thing_id="t1",
            name="alpha",
            status="live",
            size=5,
            price=Decimal("1.5"),
            flag=True,
            tags={"red", "blue"},
            nums={1, 2},
            items=["a", "b", "c"],
            meta={ODD: "odd", "k": "v"},
            note="hello world",
        ),
        Thing(box="c", thing_id="t2", name="beta", status="draft", size=10, tags={"red"}),
        Thing(
            box="c",
            thing_id="t3",
            name="gamma",
            status="archived",
            size=15,
            items=["z"],
            note="bye",
        ),
    ):
        Thing.put(thing).run(models.db)
    return models


Case = tuple[str, Callable[[Any], st.Condition], set[str]]

CASES: list[Case] = [
    ("eq", lambda f: f.name == "alpha", {"t1"}),
    ("ne", lambda f: f.status != "live", {"t2", "t3"}),
    ("lt", lambda f: f.size < 10, {"t1"}),
    ("le", lambda f: f.size <= 10, {"t1", "t2"}),
    ("gt", lambda f: f.size > 10, {"t3"}),
    ("ge", lambda f: f.size >= 10, {"t2", "t3"}),
    ("between", lambda f: f.size.between(5, 10), {"t1", "t2"}),
    ("between-str", lambda f: f.name.between("b", "c"), {"t2"}),
    ("is_in", lambda f: f.status.is_in("live", "archived", "gone"), {"t1", "t3"}),
    ("begins_with", lambda f: f.name.begins_with("al"), {"t1"}),
    ("contains-substring", lambda f: f.note.contains("world"), {"t1"}),
    ("contains-set", lambda f: f.tags.contains("red"), {"t1", "t2"}),
    ("contains-number-set", lambda f: f.nums.contains(2), {"t1"}),
    ("contains-list", lambda f: f.items.contains("z"), {"t3"}),
    ("size-list", lambda f: f.items.size() > 1, {"t1"}),
    ("size-string", lambda f: f.name.size() == 4, {"t2"}),
    # Guarded: moto fails on size() of a missing attribute (see the pair of tests below).
    ("size-set", lambda f: f.tags.exists() & (f.tags.size() == 2), {"t1"}),
    ("size-between", lambda f: f.name.size().between(4, 4), {"t2"}),
    ("exists", lambda f: f.note.exists(), {"t1", "t3"}),
    ("not_exists", lambda f: f.note.not_exists(), {"t2"}),
    ("attribute_type-SS", lambda f: f.tags.attribute_type("SS"), {"t1", "t2"}),
    ("attribute_type-N", lambda f: f.price.attribute_type("N"), {"t1", "t2", "t3"}),
    ("attribute_type-BOOL", lambda f: f.flag.attribute_type("BOOL"), {"t1", "t2", "t3"}),
    ("attribute_type-S-wrong", lambda f: f.size.attribute_type("S"), set()),
    ("bool", lambda f: f.flag == True, {"t1"}),  # noqa: E712 - builds a condition
    ("decimal", lambda f: f.price > Decimal("1"), {"t1"}),
    ("attribute-vs-attribute", lambda f: f.count < f.size, {"t1", "t2", "t3"}),
    ("and", lambda f: (f.status != "draft") & (f.size < 10), {"t1"}),
    ("or", lambda f: (f.name == "beta") | (f.size > 10), {"t2", "t3"}),
    ("not", lambda f: ~(f.status == "live"), {"t2", "t3"}),
    ("not-or", lambda f: ~((f.name == "beta") | (f.size > 10)), {"t1"}),
    (
        "and_-or_-not_",
        lambda f: st.and_(
            st.or_(f.status == "live", f.status == "archived"), st.not_(f.note.begins_with("b"))
        ),
        {"t1"},
    ),
    ("odd-map-key", lambda f: f.meta[ODD] == "odd", {"t1"}),
    ("map-key-exists", lambda f: f.meta["k"].exists(), {"t1"}),
    ("list-index", lambda f: f.items[0] == "z", {"t3"}),
]


def _filtered(m: Models, condition: st.Condition) -> set[str]:
    return {t.thing_id for t in m.Thing.query(box="c").filter(condition).all(m.db)}


def _condition_holds(m: Models, condition: st.Condition) -> set[str]:
    holds = set()
    for thing in m.Thing.query(box="c").all(m.db):
        # Either outcome is expected (the condition holds for some items only); a failure
        # must still be the typed error carrying the stored item.
        failure: st.ConditionFailedError | None = None
        try:
            m.Thing.put(thing, condition=condition).run(m.db)  # rewrites the same item
        except st.ConditionFailedError as exc:
            failure = exc
        if failure is None:
            holds.add(thing.thing_id)
        else:
            text = condition_text(condition)
            assert str(failure) == f"entity Thing: the put condition failed: {text}"
            assert failure.item == thing
    return holds


def test_every_operator_as_filter_and_as_condition(m: Models) -> None:
    wrong = []
    for name, build, expected in CASES:
        condition = build(m.Thing.f)
        got_filter = _filtered(m, condition)
        got_condition = _condition_holds(m, condition)
        if got_filter != expected or got_condition != expected:
            wrong.append((name, expected, got_filter, got_condition))
    assert wrong == []


def test_reserved_words_are_placeholders_in_the_sent_request(m: Models) -> None:
    f = m.Thing.f
    query = m.Thing.query(box="c").filter((f.size > 1) & (f.name == "alpha") & (f.status.exists()))
    params = query.params()
    names = params["ExpressionAttributeNames"]
    assert {"size", "name", "status"} <= set(names.values())
    for word in ("size", "name", "status"):
        assert f" {word} " not in f" {params['FilterExpression']} "
    assert [t.thing_id for t in query.all(m.db)] == ["t1"]


def test_a_value_is_never_spliced_into_the_expression(m: Models) -> None:
    hostile = "alpha) OR (attribute_exists(PK)"
    condition = m.Thing.f.name == hostile
    assert _filtered(m, condition) == set()
    params = m.Thing.query(box="c").filter(condition).params()
    assert hostile not in params["FilterExpression"]
    assert {"S": hostile} in params["ExpressionAttributeValues"].values()


def _size_of_missing(m: Models) -> set[str]:
    return _filtered(m, m.Thing.f.tags.size() >= 1)


@pytest.mark.dynamodb_local_only("moto fails on size() of a missing attribute")
def test_size_of_a_missing_attribute_is_false(m: Models) -> None:
    assert _size_of_missing(m) == {"t1", "t2"}


@pytest.mark.moto_only("moto fails on size() of a missing attribute")
def test_moto_fails_on_size_of_a_missing_attribute(
    m: Models, executor_kind: str, transport_name: str
) -> None:
    # moto 5.2 raises its own ValueError instead of evaluating to false: in-process as it
    # is; behind moto's server (the async executor's and the lean transport's backend) as
    # an HTTP 500.
    if executor_kind == "sync" and transport_name == "boto3":
        with pytest.raises(ValueError, match=r"^Invalid attribute name tags$"):
            _size_of_missing(m)
    else:
        with pytest.raises(st.ServiceError, match="Internal Server Error"):
            _size_of_missing(m)


def test_a_failed_condition_is_named_in_the_error(m: Models) -> None:
    # Issue 26: ConditionFailedError said only "the update condition failed".
    thing = m.Thing.query(box="c").first(m.db)
    assert thing is not None
    key = {"box": thing.box, "thing_id": thing.thing_id}
    writes: list[tuple[Callable[[], Any], str]] = [
        (
            lambda: m.Thing.update(**key).set(note="n").where(m.Thing.f.name == "nobody").run(m.db),
            "the update condition failed: name = 'nobody'",
        ),
        (
            lambda: m.Thing.put(thing, condition=m.Thing.f.size > 10**6).run(m.db),
            "the put condition failed: size > 1000000",
        ),
        (
            lambda: m.Thing.delete(**key, condition=m.Thing.f.note.begins_with("zz")).run(m.db),
            "the delete condition failed: begins_with (note, 'zz')",
        ),
    ]
    for write, expected in writes:
        with pytest.raises(st.ConditionFailedError) as caught:
            write()
        assert str(caught.value) == f"entity Thing: {expected}"
