"""DynamoDB's limits are checked before sending, on every path (issue 16, defect 4).

* key condition operands (range bounds, prefixes) over the sort key limit (1,024 bytes)
  and partition keys over 2,048 bytes: `KeyTooLargeError` naming the condition;
* an update whose result is certainly over 400 KB: `ItemTooLargeError`;
* a lone surrogate in any string of any request: `TextEncodeError` naming where.

The backend half is ``tests/integration/test_limits.py``.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

import singletable as st
from singletable.attributes.size import attribute_value_size, item_size
from singletable.keys.escaping import LONE_SURROGATE
from singletable.operations import limits
from singletable.operations.protocol import Call
from tests.strategies import (
    SimpleEntitySpec,
    build_simple_entity,
    simple_entity_specs,
    simple_entity_table,
    simple_entity_values,
)

NOW = datetime(2026, 6, 23, tzinfo=timezone.utc)
table = st.Table("limits", indexes=[st.GSI("ByTag", pk="GSI1PK", sk="GSI1SK")])


class Doc(
    st.Entity,
    table=table,
    pk="D#{d}",
    sk="V#{name}#{n}",
    indexes={"ByTag": st.IndexKeys(pk="T#{tag}", sk="{name}")},
):
    d: str
    name: str
    n: int
    tag: str = "t"
    body: str | None = None
    meta: dict[str, Any] = pydantic.Field(default_factory=dict)


def _run_params(op: Any) -> dict[str, Any]:
    """The request exactly as an executor receives it (the `Call` its steps yield)."""
    steps = op.steps() if hasattr(op, "steps") and not hasattr(op, "stream_pages") else None
    call = next(steps) if steps is not None else next(op.stream_pages())
    assert isinstance(call, Call)
    return call.params


# -- key sizes ------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["gt", "ge", "lt", "le", "between", "begins_with"])
@pytest.mark.parametrize("size", [1020, 1030, 3000])
def test_sort_key_bounds_over_1024_bytes_are_refused(op: str, size: int) -> None:
    value = "x" * (size - len("V#"))
    query = Doc.query(d="a")
    build = getattr(query, op)
    arg = (value, value) if op == "between" else value
    over = len(f"V#{value}") + (1 if op in ("gt", "le", "between") else 0) > 1024
    if not over:
        assert _run_params(build(name=arg))["KeyConditionExpression"]
        return
    with pytest.raises(
        st.KeyTooLargeError, match=rf"{op}\(name=\.\.\.\).*limit for a sort key is 1024 bytes"
    ) as info:
        build(name=arg)
    assert info.value.limit == 1024
    assert info.value.size > 1024


def test_partition_keys_over_2048_bytes_are_refused_in_queries_and_index_queries() -> None:
    with pytest.raises(st.KeyTooLargeError, match=r"limit for a partition key is 2048 bytes"):
        Doc.query(d="é" * 1030)
    with pytest.raises(st.KeyTooLargeError, match=r"limit for a partition key is 2048 bytes"):
        Doc.query(index="ByTag", tag="x" * 2047)


def test_collection_prefixes_over_1024_bytes_are_refused() -> None:
    class File(st.Entity, table=st.Table("files"), pk="DRIVE#{a}", sk="{path}"):
        a: str
        path: str

    with pytest.raises(st.KeyTooLargeError, match=r"begins_with\(path=\.\.\.\) prefix"):
        st.Collection("tree", File).query(a="x").begins_with(path="p" * 1025)


@settings(max_examples=40, deadline=None)
@given(hs.data())
def test_no_key_condition_operand_over_the_limit_is_ever_sent(data: hs.DataObject) -> None:
    # Generated entities, a long text pushed into a random range condition: either the
    # query is refused with KeyTooLargeError, or every operand it sends is within limits.
    spec: SimpleEntitySpec = data.draw(simple_entity_specs())
    cls = build_simple_entity(spec, simple_entity_table(f"t-{spec.name}"))
    values = data.draw(simple_entity_values(spec))
    plan = cls.plan()
    sk = plan.primary.sk
    text_fields = [f for f in sk.fields if spec.kinds[f].name == "str"]
    if not text_fields:
        return
    name = text_fields[0]
    count = sk.fields.index(name)
    long_text = "é" * data.draw(hs.integers(400, 700))
    query = cls.query(**{f: values[f] for f in (*plan.primary.pk.fields, *sk.fields[:count])})
    op = data.draw(hs.sampled_from(["gt", "ge", "lt", "le", "between", "begins_with"]))
    arg = (long_text, long_text) if op == "between" else long_text
    refused: st.KeyTooLargeError | None = None
    try:
        built = getattr(query, op)(**{name: arg})
    except st.KeyTooLargeError as exc:
        refused = exc
    if refused is not None:
        assert refused.limit == 1024
        assert refused.size > refused.limit
        return
    request = _run_params(built)
    for av in request["ExpressionAttributeValues"].values():
        text = av.get("S", "")
        assert 0 < len(text.encode("utf-8")) <= 2048


# -- item size of updates -------------------------------------------------------------


def test_an_update_that_certainly_exceeds_400_kb_is_refused() -> None:
    update = Doc.update(d="a", name="n", n=1).set(body="x" * (400 * 1024))
    with pytest.raises(st.ItemTooLargeError, match=r"at least \d+ bytes.*400 KB") as info:
        update.params()
    assert info.value.limit == 400 * 1024
    # What it writes fits: sent (the stored item's other attributes cannot be known).
    assert Doc.update(d="a", name="n", n=1).set(body="x" * (390 * 1024)).params()
    nested = Doc.update(d="a", name="n", n=1).apply(Doc.f.meta["k"].set("y" * 410_000))
    with pytest.raises(st.ItemTooLargeError):
        nested.params()


@settings(max_examples=30, deadline=None)
@given(hs.data())
def test_update_size_refusal_agrees_with_put_of_the_same_values(data: hs.DataObject) -> None:
    # An update that sets every non-key field writes what a put writes, but for the two
    # bookkeeping attributes: refused when the put is clearly over, never when it fits.
    spec: SimpleEntitySpec = data.draw(simple_entity_specs())
    cls = build_simple_entity(
        spec, simple_entity_table(f"t-{spec.name}"), extra={"blob": str | None}
    )
    values = data.draw(simple_entity_values(spec))
    values["blob"] = "b" * data.draw(hs.integers(400 * 1024 - 600, 400 * 1024 + 200))
    plan = cls.plan()
    key = {f: values[f] for f in plan.primary.fields}
    rest = {f: v for f, v in values.items() if f not in key}
    update = cls.update(**key).set(**rest).at(NOW)
    try:
        size = item_size(plan.to_item(cls(**values)))
    except st.ItemTooLargeError as exc:
        size = exc.size
    # What the put writes beyond the update's key and set values: _et, _ev and their
    # values, and the attributes that copy the key fields (already stored, not re-sent).
    small = plan.to_item(cls(**{**values, "blob": None}))
    stored_copies = sum(
        len(name.encode()) + attribute_value_size(small[name])
        for name in plan.primary.fields
        if name in small
    )
    if size <= 400 * 1024:
        assert update.params()
    elif size > 400 * 1024 + 40 + stored_copies:
        with pytest.raises(st.ItemTooLargeError):
            update.params()


# -- lone surrogates --------------------------------------------------------------------

LONE = "ok\ud800"


@pytest.mark.parametrize(
    ("build", "where"),
    [
        (lambda: Doc.put(Doc(d="a", name="n", n=1, body=LONE)), r"Item\['body'\]"),
        # Key values name their field (issue 26: not the key attribute and an index into it).
        (lambda: Doc.put(Doc(d=LONE, name="n", n=1)), r"field 'd'"),
        (lambda: Doc.put(Doc(d="a", name="n", n=1, meta={"k": [LONE]})), r"Item\['meta'\]"),
        (lambda: Doc.put(Doc(d="a", name="n", n=1, meta={LONE: 1})), r"Item\['meta'\]"),
        (lambda: Doc.update(d="a", name="n", n=1).set(body=LONE), r"SET body = :v0"),
        (lambda: Doc.get(d="a", name=LONE, n=1), r"field 'name'"),
        (
            lambda: st.BatchGet([(Doc.plan(), {"d": "a", "name": LONE, "n": 1})]),
            r"field 'name'",
        ),
        (
            lambda: st.BatchWrite([Doc(d=LONE, name="n", n=1)]),
            r"field 'd'",
        ),
        (lambda: Doc.query(d="a").begins_with(name=LONE), r"field 'name'"),
        (lambda: Doc.query(d="a").filter(Doc.f.body == LONE), r"FilterExpression"),
        (lambda: Doc.delete(d="a", name="n", n=1, condition=Doc.f.body == LONE), r"body ="),
    ],
)
def test_a_lone_surrogate_anywhere_is_refused_before_sending(build: Any, where: str) -> None:
    with pytest.raises(st.TextEncodeError, match=rf"{where}.*lone surrogate U\+D800"):
        _run_params(build())


@settings(max_examples=60, deadline=None)
@given(
    hs.recursive(
        hs.text(hs.characters(codec="utf-8"), max_size=3),
        lambda inner: (
            hs.lists(inner, max_size=3)
            | hs.dictionaries(
                hs.text(hs.characters(codec="utf-8"), min_size=1, max_size=2), inner, max_size=3
            )
        ),
        max_leaves=6,
    ),
    hs.integers(0, 0xDFFF - 0xD800),
)
def test_a_lone_surrogate_at_any_depth_of_a_value_is_refused(value: Any, offset: int) -> None:
    lone = chr(0xD800 + offset)

    def plant(v: Any) -> Any:
        if isinstance(v, list):
            return [*v, lone]
        if isinstance(v, dict):
            return {**v, lone: "x"}
        return v + lone

    meta = {"v": plant(value)}
    Call("put_item", Doc.put(Doc(d="a", name="n", n=1, meta={"v": value})).params())
    with pytest.raises(st.TextEncodeError, match=r"Item\['meta'\]"):
        _run_params(Doc.put(Doc(d="a", name="n", n=1, meta=meta)))


@settings(max_examples=25, deadline=None)
@given(hs.integers(1, 80), hs.data())
def test_a_batch_write_refuses_bad_text_in_any_chunk_before_its_first_call(
    n: int, data: hs.DataObject
) -> None:
    # Chunks are sent one by one: bad text in the last must be refused before the first
    # is written, and the error says which write holds it.
    bad = data.draw(hs.integers(0, n - 1))
    field = data.draw(hs.sampled_from(["body", "name", "meta"]))
    docs = [Doc(d="a", name=f"n{i}", n=i) for i in range(n)]
    docs[bad] = (
        docs[bad].model_copy(update={"meta": {LONE: 1}})
        if field == "meta"
        else docs[bad].model_copy(update={field: LONE})
    )
    with pytest.raises(st.TextEncodeError, match=rf"RequestItems\['limits'\]\[{bad}\]"):
        st.BatchWrite(docs)
    # Without the bad write every chunk goes out as built, text already checked.
    del docs[bad]
    if docs:
        call = next(st.BatchWrite(docs).steps())
        assert isinstance(call, Call)
        assert call.text_checked


class _Text(str):
    """A str subclass: off the exact-class fast path of the request walk."""


_SOME_TEXT = hs.text(
    # Hangul (U+D000..U+D7FF) is UTF-8 0xED 0x80..0x9F: next to a surrogate's 0xED 0xA0..
    hs.sampled_from(["a", "é", "\ud800", "\udfff", "\U0001f600", "#", "\ud7ff", "한"]),
    max_size=3,
)
_LEAVES = (
    _SOME_TEXT
    | _SOME_TEXT.map(_Text)
    | hs.integers()
    | hs.booleans()
    | hs.none()
    | hs.binary(max_size=2)
    | hs.just(b"\xed\xa0\x80")  # a surrogate's UTF-8 bytes, as binary: not text
    | hs.decimals(allow_nan=False, places=2)
)


@settings(max_examples=400, deadline=None)
@given(
    hs.recursive(
        _LEAVES,
        lambda inner: (
            hs.lists(inner, max_size=3)
            | hs.lists(inner, max_size=3).map(tuple)
            | hs.frozensets(_SOME_TEXT, max_size=3)
            | hs.dictionaries(_SOME_TEXT | _SOME_TEXT.map(_Text) | hs.integers(), inner, max_size=3)
            # AttributeValue-shaped maps, the walk's inline case
            | hs.dictionaries(hs.sampled_from(["S", "N", "L", "M", "\ud800"]), inner, max_size=1)
        ),
        max_leaves=10,
    )
)
def test_the_fast_request_checks_agree_with_the_plain_walk(value: Any) -> None:
    # The check run on every request (marshal's bytes, then the fast walk) is written for
    # speed; the plain generator that names where a surrogate is must find one exactly
    # when it does.
    expected = any(LONE_SURROGATE.search(text) for _, text in limits._strings(value, ()))
    for request in (value, {"Item": value}):
        assert limits._walk_has_lone_surrogate(request) is expected
        assert limits._has_lone_surrogate(request) is expected


# -- expression lengths -----------------------------------------------------------------

_EXPRESSION_NAMES = (
    "KeyConditionExpression",
    "FilterExpression",
    "ConditionExpression",
    "UpdateExpression",
    "ProjectionExpression",
)


@settings(max_examples=200, deadline=None)
@given(
    name=hs.sampled_from(_EXPRESSION_NAMES),
    char=hs.sampled_from(["a", "é", "€", "😀"]),
    count=hs.integers(900, 4200),
    in_transaction=hs.booleans(),
)
def test_an_expression_over_4_kb_of_utf8_is_refused_before_sending(
    name: str, char: str, count: int, in_transaction: bool
) -> None:
    # Refused exactly when its UTF-8 text is over 4,096 bytes, at the top of the request
    # or in any item of a transaction; the message names it and its size.
    text = char * count
    size = len(text.encode())
    request = {"TableName": "t", name: text}
    params: dict[str, Any] = (
        {"TransactItems": [{"Put": {"TableName": "t"}}, {"Update": request}]}
        if in_transaction
        else request
    )
    action = "transact_write_items" if in_transaction else "query"
    if size <= limits.MAX_EXPRESSION_BYTES:
        Call(action, params)
        return
    where = f"TransactItems[1].Update.{name}" if in_transaction else name
    with pytest.raises(
        st.ExpressionError, match=rf"{action}: {re.escape(where)} is {size:,} bytes"
    ):
        Call(action, params)


def test_long_conditions_and_filters_are_refused_on_every_path() -> None:
    # Through the public builders: an expression the builder writes longer than 4 KB is
    # refused before the call, whichever operation carries it (a transaction's too).
    many = st.and_(*[Doc.f.meta[f"k{i:04d}"] == i for i in range(300)])
    doc = Doc(d="a", name="n", n=1)
    builds: list[Any] = [
        lambda: Doc.put(doc, condition=many),
        lambda: Doc.delete(d="a", name="n", n=1, condition=many),
        lambda: Doc.query(d="a").filter(many),
        lambda: Doc.update(d="a", name="n", n=1).set(body="b").where(many),
        lambda: st.TransactWrite().put(Doc.put(doc, condition=many)),
    ]
    for build in builds:
        with pytest.raises(
            st.ExpressionError, match=r"bytes; DynamoDB takes expressions of at most 4,096"
        ):
            _run_params(build())


# -- expression operators ---------------------------------------------------------------


@hs.composite
def _condition_text(draw: hs.DrawFn, depth: int = 0) -> tuple[str, int]:
    """A condition in the renderer's text forms, and its operators as DynamoDB counts them.

    The counts are DynamoDB Local's, each measured at the 300/301 boundary: a comparison,
    AND, OR, NOT, BETWEEN (its own AND not counted), IN and every function count one;
    parentheses none.
    """
    n = draw(hs.integers(0, 99))
    leaves = [
        (f"#n{n} = :v{n}", 1),
        (f"#n{n} <> :v{n}", 1),
        (f"#n{n} <= :v{n}", 1),
        (f"#n{n} > :v{n}", 1),
        (f"#n{n} BETWEEN :v{n} AND :w{n}", 1),
        (f"#n{n} IN (:v{n}, :w{n}, :x{n})", 1),
        (f"attribute_not_exists (#n{n})", 1),
        (f"attribute_exists (#n{n}.#n{n + 1}[2])", 1),
        (f"begins_with (#n{n}, :v{n})", 1),
        (f"contains (#n{n}, :v{n})", 1),
        (f"attribute_type (#n{n}, :v{n})", 1),
        (f"size (#n{n}) >= :v{n}", 2),
    ]
    kind = draw(hs.sampled_from(["leaf", "leaf", "and", "or", "not"] if depth < 3 else ["leaf"]))
    if kind == "leaf":
        return draw(hs.sampled_from(leaves))
    if kind == "not":
        text, count = draw(_condition_text(depth + 1))
        return f"NOT ({text})", count + 1
    parts = draw(hs.lists(_condition_text(depth + 1), min_size=2, max_size=4))
    joiner = " AND " if kind == "and" else " OR "
    text = joiner.join(f"({t})" for t, _ in parts)
    return text, sum(c for _, c in parts) + len(parts) - 1


@settings(max_examples=300, deadline=None)
@given(
    hs.lists(_condition_text(), min_size=1, max_size=60),
    hs.sampled_from(["ConditionExpression", "FilterExpression", "KeyConditionExpression"]),
)
def test_condition_operators_are_counted_as_dynamodb_counts_them(
    parts: list[tuple[str, int]], name: str
) -> None:
    text = " AND ".join(t for t, _ in parts)
    expected = sum(c for _, c in parts) + len(parts) - 1
    assert limits.expression_operators(name, text) == expected
    params = {"TableName": "t", name: text}
    if len(text) > limits.MAX_EXPRESSION_BYTES:
        return  # refused for its length first
    if expected > limits.MAX_EXPRESSION_OPERATORS:
        with pytest.raises(st.ExpressionError, match=rf"{name} holds {expected:,} operators"):
            Call("query", params)
    else:
        Call("query", params)


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("SET #n0 = :v0, #n1 = :v1", 0),  # a SET's = does not count, nor ADD
        ("SET #n0 = #n0 + :v0, #n1 = :v1 - #n2 ADD #n3 :v3", 2),
        ("SET #n0 = if_not_exists (#n0, :v0) + :v1 REMOVE #n4", 1),
    ],
)
def test_update_operators_count_arithmetic_only(text: str, count: int) -> None:
    assert limits.expression_operators("UpdateExpression", text) == count


def test_an_update_with_more_than_300_additions_is_refused() -> None:
    many = "SET " + ", ".join("#a = #b+:v" if i == 0 else f"#a{i}=#b+:v" for i in range(301))
    assert len(many) <= limits.MAX_EXPRESSION_BYTES
    with pytest.raises(st.ExpressionError, match="UpdateExpression holds 301 operators"):
        Call("update_item", {"TableName": "t", "UpdateExpression": many})
    Call("update_item", {"TableName": "t", "UpdateExpression": many.rsplit(", ", 1)[0]})


def test_conditions_over_300_operators_are_refused_on_every_path() -> None:
    # 151 comparisons and their 150 ANDs: 301 operators in under 4 KB (an update adds its
    # own existence check: 303).
    many = st.and_(*[Doc.f.n != i for i in range(151)])
    fits = st.and_(*[Doc.f.n != i for i in range(140)])
    doc = Doc(d="a", name="n", n=1)
    for condition, refused in ((many, True), (fits, False)):
        builds: list[Any] = [
            lambda c=condition: Doc.put(doc, condition=c),
            lambda c=condition: Doc.query(d="a").filter(c),
            lambda c=condition: Doc.update(d="a", name="n", n=1).set(body="b").where(c),
            lambda c=condition: st.TransactWrite().put(Doc.put(doc, condition=c)),
        ]
        for build in builds:
            if refused:
                with pytest.raises(st.ExpressionError, match=r"holds 30[13] operators"):
                    _run_params(build())
            else:
                _run_params(build())
