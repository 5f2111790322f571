"""`explain()` never reports a silent 0: what it cannot know, it says.

For every kind of operation the estimator takes: without the sample items the operation
needs, the capacity is marked inexact, names the missing argument, and gives no total
(only lower bounds); with them it is exact and equals `estimate_capacity`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import singletable as st

table = st.Table("explain", indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


class Doc(
    st.Entity,
    table=table,
    pk="DOC#{doc_id}",
    sk="REV#{rev}",
    indexes={"GSI1": st.IndexKeys(pk="OWNER#{owner}", sk="{doc_id}")},
):
    doc_id: str
    rev: int
    owner: str = "o"
    body: str = ""


D1 = Doc(doc_id="d", rev=1, body="x" * 3000)
D2 = Doc(doc_id="d", rev=2, body="y" * 5000)

#: operation, the argument it needs, a value for it (and other arguments it always takes).
CASES: dict[str, tuple[Callable[[], Any], str, Any, dict[str, Any]]] = {
    "query": (lambda: Doc.query(doc_id="d"), "read", [D1.to_item(), D2.to_item()], {}),
    "index query": (lambda: Doc.query(owner="o", index="GSI1"), "read", [D1.to_item()], {}),
    "scan": (lambda: Doc.scan(), "read", [D1.to_item()], {}),
    "collection": (
        lambda: st.Collection("docs", Doc).query(doc_id="d"),
        "read",
        [D2.to_item()],
        {},
    ),
    "get": (lambda: Doc.get(doc_id="d", rev=1), "read", D2.to_item(), {}),
    "batch get": (
        lambda: st.BatchGet([(Doc.plan(), {"doc_id": "d", "rev": 1})]),
        "read",
        [D2.to_item()],
        {},
    ),
    "transact get": (
        lambda: st.TransactGet().get(Doc.get(doc_id="d", rev=1)),
        "read",
        [D2.to_item()],
        {},
    ),
    "put": (lambda: Doc.put(D1), "existing", D2.to_item(), {}),
    "delete": (lambda: Doc.delete(doc_id="d", rev=1), "existing", D2.to_item(), {}),
    "update": (
        lambda: Doc.update(doc_id="d", rev=1).set(body="z"),
        "existing",
        D2.to_item(),
        {"after": D1.to_item()},
    ),
    "batch write": (
        lambda: st.BatchWrite(puts=[D1]),
        "existing",
        [D2.to_item()],
        {"tables": [table]},
    ),
    "transact write": (
        lambda: st.TransactWrite().put(Doc.put(D1)),
        "existing",
        [D2.to_item()],
        {"tables": [table]},
    ),
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_explain_without_samples_says_what_it_cannot_know(kind: str) -> None:
    build, argument, _value, always = CASES[kind]
    capacity = st.explain(build(), **always)["capacity"]
    assert capacity["exact"] is False
    assert any(message.startswith(f"{argument}=") for message in capacity["unknown"])
    assert capacity["rcu"] is None
    assert capacity["wcu"] is None
    assert capacity["table"] is None
    assert capacity["indexes"] is None
    assert set(capacity["at_least"]) == {"rcu", "wcu", "total"}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_explain_with_samples_is_exact(kind: str) -> None:
    build, argument, value, always = CASES[kind]
    op = build()
    explained = st.explain(op, **{argument: value}, **always)
    estimate = st.estimate_capacity(op, **{argument: value}, **always)
    assert explained["request"] == op.params()
    capacity = explained["capacity"]
    assert capacity["exact"] is True
    assert "unknown" not in capacity
    assert (capacity["rcu"], capacity["wcu"]) == (estimate.rcu, estimate.wcu)
    assert capacity["rcu"] + capacity["wcu"] > 0


def test_an_empty_result_given_explicitly_is_an_exact_zero() -> None:
    capacity = st.explain(Doc.query(doc_id="d"), read=[])["capacity"]
    assert capacity["exact"] is True
    assert capacity["rcu"] == 0.0


def test_every_estimable_operation_is_covered() -> None:
    from singletable.tooling.cost import capacity

    covered = {type(build()).__name__ for build, *_ in CASES.values()}
    declared = {kind.__name__ for kinds, _, _ in capacity._NEEDS for kind in kinds}
    assert declared - covered == {"ProjectedGet"}  # a Get with a projection: same rules
