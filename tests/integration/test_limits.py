"""Limits refused before sending, on both backends (issue 16, defect 4).

moto answered range bounds over 1,024 bytes that DynamoDB Local refuses, stored an update
over 400 KB's worth of writes differently, and raised a raw ``UnicodeEncodeError`` for a
lone surrogate that DynamoDB Local stored: each is now a typed error before any request,
so both backends behave the same and nothing is written.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

import pydantic
import pytest
from botocore.exceptions import ClientError

import singletable as st
from tests.integration._executors import connect


def test_limits_are_refused_before_anything_is_sent(dynamodb_client: Any, table_name: str) -> None:
    table = st.Table(table_name)

    class Doc(st.Entity, table=table, pk="D#{d}", sk="V#{name}"):
        d: str
        name: str
        body: str | None = None

    db = connect(dynamodb_client)
    db.create_table(table)
    Doc.put(Doc(d="a", name="n")).run(db)
    long = "x" * 1030
    builds: list[Callable[[], st.EntityQuery[Doc]]] = [
        lambda: Doc.query(d="a").gt(name=long),
        lambda: Doc.query(d="a").between(name=("a", long)),
        lambda: Doc.query(d="a").begins_with(name=long),
    ]
    for build in builds:
        with pytest.raises(st.KeyTooLargeError):
            build().all(db)
    assert Doc.query(d="a").gt(name="x" * 1000).all(db) == []
    with pytest.raises(st.ItemTooLargeError):
        Doc.update(d="a", name="n").set(body="b" * (400 * 1024)).run(db)
    with pytest.raises(st.TextEncodeError, match=r"Item\['body'\]"):
        Doc.put(Doc(d="a", name="s", body="bad\udc80")).run(db)
    with pytest.raises(st.TextEncodeError):
        Doc.update(d="a", name="n").set(body="bad\udc80").run(db)
    assert Doc.query(d="a").all(db) == [Doc(d="a", name="n")]


def test_a_lone_surrogate_in_a_key_names_its_field(dynamodb_client: Any, table_name: str) -> None:
    # Issue 26: the error named `Item['PK']['S']` and an index into the whole key, not the
    # field the text came from.
    table = st.Table(table_name, indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])

    class Thing(
        st.Entity,
        table=table,
        pk="BOX#{box}",
        sk="T#{n}",
        indexes={"GSI1": st.IndexKeys(pk="TAG#{tag}", sk="{n}")},
    ):
        box: str
        n: int
        tag: str = "t"

    db = connect(dynamodb_client)
    db.create_table(table)
    builds: list[tuple[Callable[[], Any], str]] = [
        (lambda: Thing.put(Thing(box="ab\udc80", n=1)).run(db), "box"),
        (lambda: Thing.put(Thing(box="a b\udc80", n=1)).run(db), "box"),
        (lambda: Thing.put(Thing(box="ab", n=1, tag="x\ud800y")).run(db), "tag"),
        (lambda: Thing.get(box="ab\udc80", n=1).run(db), "box"),
        (lambda: Thing.query(box="ab\udc80").all(db), "box"),
        (lambda: Thing.update(box="ab\udc80", n=1).set(tag="x").run(db), "box"),
        (lambda: st.BatchWrite([Thing(box="\udc80", n=2)]).run(db), "box"),
    ]
    for build, field in builds:
        with pytest.raises(st.TextEncodeError, match=rf"field '{field}': .*lone surrogate") as e:
            build()
        assert "['S']" not in str(e.value)
    assert Thing.scan().all(db) == []


#: The error names the entity's field and DynamoDB's limit.
_TOO_DEEP = r"\bDoc\.(data|rows|branch): .*more than 31 levels deep"


class Branch(pydantic.BaseModel):
    """A recursive model: its depth is its values'."""

    name: str
    next: Branch | None = None


def _maps(levels: int, leaf: Any = "leaf") -> Any:
    value = leaf
    for _ in range(levels):
        value = {"k": value}
    return value


def _branches(levels: int) -> Branch:
    branch = Branch(name="b")
    for _ in range(levels - 1):
        branch = Branch(name="b", next=branch)
    return branch


def test_the_nesting_limit_is_refused_before_anything_is_sent(
    dynamodb_client: Any, table_name: str
) -> None:
    # DynamoDB stores 31 levels of lists and maps in an attribute and refuses the whole
    # request beyond (a batch: after the chunks before it were written). Every write path
    # refuses it by name first; the deepest storable values are stored and read back.
    table = st.Table(table_name)

    class Doc(st.Entity, table=table, pk="D#{d}", sk="DOC"):
        d: str
        data: dict[str, Any] = pydantic.Field(default_factory=dict)
        rows: list[Any] = pydantic.Field(default_factory=list)
        branch: Branch | None = None

    db = connect(dynamodb_client)
    db.create_table(table)
    deepest = [
        Doc(d="m", data=_maps(31)),  # 31 maps in the attribute
        Doc(d="l", rows=[_maps(29, leaf=[])]),  # an empty list counts a level too
        Doc(d="b", branch=_branches(31)),
    ]
    too_deep = [
        Doc(d="m", data=_maps(32)),
        Doc(d="l", rows=[_maps(30, leaf=[])]),
        Doc(d="b", branch=_branches(32)),
        Doc(d="x", data=_maps(5000)),  # far past Python's recursion limit too
    ]
    for doc in too_deep:
        with pytest.raises(st.ItemTooDeepError, match=_TOO_DEEP):
            Doc.put(doc).run(db)
        batch = [Doc(d=f"ok{i}") for i in range(60)] + [doc]
        with pytest.raises(st.ItemTooDeepError, match=_TOO_DEEP):
            db.execute(st.BatchWrite(puts=batch))
        with pytest.raises(st.ItemTooDeepError, match=_TOO_DEEP):
            Doc.update(d="u").set(data=doc.data, rows=doc.rows, branch=doc.branch).run(db)
    assert Doc.scan().all(db) == []  # nothing was written
    db.execute(st.BatchWrite(puts=deepest))
    assert sorted(Doc.scan().all(db), key=lambda doc: doc.d) == sorted(
        deepest, key=lambda doc: doc.d
    )


def test_a_map_key_past_the_name_limit_is_refused_before_anything_is_sent(
    dynamodb_client: Any, table_name: str
) -> None:
    # DynamoDB refuses an attribute name, a map key included, over 65,535 UTF-8 bytes
    # (DynamoDB Local fails already past 50,000 characters, with an InternalFailure its
    # retries repeat). Refused by name first, for every write; nothing is written.
    table = st.Table(table_name)

    class Tagged(st.Entity, table=table, pk="T#{t}", sk="T"):
        t: str
        tags: dict[str, str] = pydantic.Field(default_factory=dict)
        data: dict[str, Any] = pydantic.Field(default_factory=dict)

    db = connect(dynamodb_client)
    db.create_table(table)
    long_key = "é" * 32_768  # 65,536 bytes
    for bad in (Tagged(t="x", tags={long_key: "v"}), Tagged(t="x", data={"a": {long_key: 1}})):
        batch = [Tagged(t=f"ok{i}") for i in range(60)] + [bad]
        with pytest.raises(st.ItemEncodeError, match=r"Tagged\.(tags|data).*65,536 UTF-8 bytes"):
            db.execute(st.BatchWrite(puts=batch))
        with pytest.raises(st.ItemEncodeError, match="65,536 UTF-8 bytes"):
            Tagged.update(t="x").set(tags=bad.tags, data=bad.data).run(db)
    assert Tagged.scan().all(db) == []
    stored = Tagged(t="y", tags={"k" * 2_000: "v"}, data={"é" * 1_000: {"k": 1}})
    Tagged.put(stored).run(db)
    assert Tagged.get(t="y").run(db) == stored


def test_an_expression_over_4_kb_is_refused_before_anything_is_sent(
    dynamodb_client: Any, table_name: str
) -> None:
    # DynamoDB refuses a request whose expression is over 4 KB of text (moto takes it).
    # Refused first, naming the expression, on every path: nothing is written, and the
    # same condition a little shorter is sent and evaluated.
    table = st.Table(table_name)

    class Doc(st.Entity, table=table, pk="D#{d}", sk="DOC"):
        d: str
        meta: dict[str, int] = pydantic.Field(default_factory=dict)

    def clauses(count: int) -> st.Condition:
        return st.and_(*[Doc.f.meta[f"k{i:04d}"].not_exists() for i in range(count)])

    db = connect(dynamodb_client)
    db.create_table(table)
    too_long = clauses(300)
    assert len(Doc.put(Doc(d="x"), condition=too_long).params()["ConditionExpression"]) > 4096
    writes: list[Callable[[], Any]] = [
        lambda: Doc.put(Doc(d="x"), condition=too_long).run(db),
        lambda: Doc.update(d="x").set(meta={"a": 1}).where(too_long).run(db),
        lambda: db.execute(st.TransactWrite().put(Doc.put(Doc(d="x"), condition=too_long))),
        lambda: Doc.scan().filter(too_long).all(db),
    ]
    for write in writes:
        with pytest.raises(st.ExpressionError, match=r"ConditionExpression|FilterExpression"):
            write()
    assert Doc.scan().all(db) == []
    fits = clauses(100)
    assert len(Doc.put(Doc(d="y"), condition=fits).params()["ConditionExpression"]) < 4096
    Doc.put(Doc(d="y"), condition=fits).run(db)
    assert Doc.scan().filter(fits).all(db) == [Doc(d="y")]


def test_conditions_are_refused_exactly_where_dynamodb_counts_over_300_operators(
    dynamodb_client: Any, table_name: str, backend_name: str
) -> None:
    # Mixed conditions near the limit, from the public builders. Each one the library
    # refuses is sent raw as well: DynamoDB Local refuses it too (moto takes anything).
    # Each one it sends is taken (evaluated, true or false), never refused for its size.
    table = st.Table(table_name)

    class Doc(st.Entity, table=table, pk="D#{d}", sk="DOC"):
        d: str
        n: int = 0
        body: str = ""
        tags: list[str] = pydantic.Field(default_factory=list)

    leaves: list[Callable[[int], st.Condition]] = [
        lambda i: Doc.f.n != i,
        lambda i: Doc.f.n.between(i, i + 1),
        lambda i: Doc.f.n.is_in(i, i + 1),
        lambda i: Doc.f.body.begins_with(f"b{i}"),
        lambda i: Doc.f.tags.contains(f"t{i}"),
        lambda i: Doc.f.tags.size() > i,
        lambda i: st.not_(Doc.f.n == i),
    ]
    db = connect(dynamodb_client)
    db.create_table(table)
    rng = random.Random(20261205)
    bodies: dict[str, str] = {}  # what each case's item must hold at the end
    for case in range(30):
        count = rng.randint(60, 160)
        clauses = [rng.choice(leaves)(i) for i in range(count)]
        condition = (st.and_ if case % 2 else st.or_)(*clauses)
        d = f"c{case}"
        Doc.put(Doc(d=d, body="before", tags=["t1"])).run(db)  # (moto's size() needs one)
        put = Doc.put(Doc(d=d, body="after"), condition=condition)
        message = ""
        bodies[d] = "before"
        try:
            put.run(db)
            bodies[d] = "after"
        except st.ExpressionError as exc:
            message = str(exc)
        except st.ConditionFailedError:
            pass  # sent and evaluated: false
        if not message:
            continue
        bodies[d] = "refused"
        assert re.search(r"holds [\d,]+ operators|is [\d,]+ bytes", message), message
        if backend_name == "dynamodb-local":
            with pytest.raises(ClientError, match=r"too many operators|Expression size"):
                dynamodb_client.put_item(**put.params())
    outcomes = set(bodies.values())
    assert "refused" in outcomes  # both sides of the limit were met
    assert outcomes - {"refused"}
    stored = {doc.d: doc.body for doc in Doc.scan().all(db)}
    assert stored == {d: "before" if b == "refused" else b for d, b in bodies.items()}
