"""Every builder is an immutable value: each chain call returns a new one.

The chain methods are found, not listed: every public method of a class in
`singletable.operations` whose return annotation is its own class. Each must have an
entry in ``CALLS`` (so a new chain method cannot be added untested), and for each the
test checks that ``u1 = base.m(a)`` leaves ``base`` unchanged and that a later
``base.m(b)`` leaves ``u1`` unchanged.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import pkgutil
from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest
from pydantic import Field

import singletable as st
import singletable.operations
from singletable.operations.protocol import shallow_copy

table = st.Table(
    "builders",
    indexes=[
        st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK"),
        st.NativeGSI("ByOwner", pk=["owner"], sk=["count"]),
    ],
)


class Doc(
    st.Entity,
    table=table,
    pk="DOC#{doc_id}",
    sk="REV#{rev}",
    indexes={"GSI1": st.IndexKeys(pk="OWNER#{owner}", sk="{doc_id}")},
    version_field="version",
    updated_at="updated_at",
):
    doc_id: str
    rev: int
    owner: str = "o"
    body: str = ""
    count: int = 0
    note: str | None = None
    tags: set[str] = Field(default_factory=set)
    items: list[str] = Field(default_factory=list)
    version: int = 0
    updated_at: datetime | None = None


def _builder_classes() -> dict[str, type]:
    found: dict[str, type] = {}
    for info in pkgutil.iter_modules(singletable.operations.__path__):
        module = importlib.import_module(f"singletable.operations.{info.name}")
        for value in vars(module).values():
            # Public classes are published as singletable.<Name> (their __module__).
            if isinstance(value, type) and value.__module__ in (module.__name__, "singletable"):
                found[value.__name__] = value
    # A base class's chain methods are tested on each concrete subclass (a query base
    # cannot be built on its own); a base that can be built (EntityQuery, whose subclass
    # NativeQuery queries native GSIs) is tested itself.
    return {
        name: cls
        for name, cls in found.items()
        if name in BASES
        or not any(other is not cls and cls in other.__mro__ for other in found.values())
    }


def _returns_own_type(cls: type, name: str) -> bool:
    function = getattr(cls, name)
    if not callable(function) or isinstance(inspect.getattr_static(cls, name), property):
        return False
    annotation = inspect.signature(function).return_annotation
    if not isinstance(annotation, str):
        return False
    head = annotation.split("[")[0]
    return head in ("Q", "Self") or head == cls.__name__


def chain_methods() -> set[tuple[str, str]]:
    return {
        (cls_name, name)
        for cls_name, cls in _builder_classes().items()
        for name in dir(cls)
        if not name.startswith("_") and _returns_own_type(cls, name)
    }


T0 = Doc(doc_id="d", rev=1)

#: How to build a base value of each builder (already holding some state).
BASES: dict[str, Callable[[], Any]] = {
    "Update": lambda: Doc.update(doc_id="d", rev=1).set(body="start"),
    "EntityQuery": lambda: Doc.query(doc_id="d"),
    "NativeQuery": lambda: Doc.query(index="ByOwner", owner="o"),
    "NativeCollectionQuery": lambda: st.Collection("owned", Doc, index="ByOwner").query(owner="o"),
    "Scan": lambda: Doc.scan(),
    "CollectionQuery": lambda: st.Collection("docs", Doc).query(doc_id="d"),
    "TransactWrite": lambda: st.TransactWrite().put(Doc.put(T0)),
    "TransactGet": lambda: st.TransactGet().get(Doc.get(doc_id="d", rev=1)),
}

#: For each chain method: a call with two different argument sets (variant 0 and 1).
CALLS: dict[tuple[str, str], Callable[[Any, int], Any]] = {
    ("Update", "set"): lambda u, v: u.set(body=f"b{v}"),
    ("Update", "remove"): lambda u, v: u.remove(("note", "updated_at")[v]),
    ("Update", "add"): lambda u, v: u.add(count=v + 1),
    ("Update", "increment"): lambda u, v: u.increment("count", v + 1),
    ("Update", "delete_from"): lambda u, v: u.delete_from(tags={f"t{v}"}),
    ("Update", "append"): lambda u, v: u.append(items=[f"i{v}"]),
    ("Update", "prepend"): lambda u, v: u.prepend(items=[f"i{v}"]),
    ("Update", "set_if_not_exists"): lambda u, v: u.set_if_not_exists(note=f"n{v}"),
    ("Update", "apply"): lambda u, v: u.apply(Doc.f.note.set(f"n{v}")),
    ("Update", "known"): lambda u, v: u.known(owner=f"o{v}"),
    ("Update", "where"): lambda u, v: u.where(Doc.f.count == v),
    ("Update", "expect_version"): lambda u, v: u.expect_version(v + 1),
    ("Update", "at"): lambda u, v: u.at(datetime(2026, 1, v + 1)),
    ("TransactWrite", "put"): lambda t, v: t.put(Doc.put(Doc(doc_id="p", rev=v))),
    ("TransactWrite", "update"): lambda t, v: t.update(Doc.update(doc_id="u", rev=v).set(body="x")),
    ("TransactWrite", "delete"): lambda t, v: t.delete(Doc.delete(doc_id="x", rev=v)),
    ("TransactWrite", "check"): lambda t, v: t.check(
        Doc.plan(), {"doc_id": "c", "rev": v}, Doc.f.body.exists()
    ),
    ("TransactGet", "get"): lambda t, v: t.get(Doc.get(doc_id="g", rev=v)),
    ("Scan", "segment"): lambda s, v: s.segment(v, 2),
    ("CollectionQuery", "descending"): lambda q, v: q.descending(),
    ("EntityQuery", "between"): lambda q, v: q.between(rev=(v, v + 5)),
    ("EntityQuery", "gt"): lambda q, v: q.gt(rev=v),
    ("EntityQuery", "ge"): lambda q, v: q.ge(rev=v),
    ("EntityQuery", "lt"): lambda q, v: q.lt(rev=v),
    ("EntityQuery", "le"): lambda q, v: q.le(rev=v),
    ("EntityQuery", "descending"): lambda q, v: q.descending(),
    ("EntityQuery", "ascending"): lambda q, v: q.ascending(),
    ("EntityQuery", "project"): lambda q, v: q.project(("body", "owner")[v]),
}
# Query methods shared by every query and scan (BaseQuery's), for each of them.
for _cls in ("EntityQuery", "NativeQuery", "Scan", "CollectionQuery", "NativeCollectionQuery"):
    CALLS[(_cls, "filter")] = lambda q, v: q.filter(Doc.f.count == v)
    CALLS[(_cls, "limit")] = lambda q, v: q.limit(v + 1)
    CALLS[(_cls, "page_size")] = lambda q, v: q.page_size(v + 1)
    CALLS[(_cls, "consistent")] = lambda q, v: q.consistent(True)
    CALLS[(_cls, "capacity")] = lambda q, v: q.capacity(("TOTAL", "INDEXES")[v])
    CALLS[(_cls, "signed")] = lambda q, v: q.signed(f"secret{v}")


class Path_(st.Entity, table=table, pk="DRIVE#{drive}", sk="{path}"):
    drive: str
    path: str


# begins_with needs a str sort key field shared by the collection: another entity.
BASES["CollectionQuery(path)"] = lambda: st.Collection("tree", Path_).query(drive="a")
CALLS[("CollectionQuery", "begins_with")] = lambda q, v: q.begins_with(path=f"root/{v}/")
BASES["EntityQuery(path)"] = lambda: Path_.query(drive="a")
CALLS[("EntityQuery", "begins_with")] = lambda q, v: q.begins_with(path=f"root/{v}/")
BASES["EntityQuery(descending)"] = lambda: Doc.query(doc_id="d").descending()
NEEDS_BASE = {
    ("EntityQuery", "ascending"): "EntityQuery(descending)",
    ("CollectionQuery", "begins_with"): "CollectionQuery(path)",
    ("EntityQuery", "begins_with"): "EntityQuery(path)",
}


def _fingerprint(value: Any) -> dict[str, Any]:
    """What a builder holds: the identity of every attribute and of every element of its
    containers (an in-place change to a list, dict or set shows as a different print)."""
    state: dict[str, Any] = {}
    for name, attr in vars(value).items():
        if isinstance(attr, (list, tuple)):
            state[name] = ("seq", tuple(id(x) for x in attr))
        elif isinstance(attr, dict):
            state[name] = ("map", tuple((k, id(v)) for k, v in attr.items()))
        elif isinstance(attr, (set, frozenset)):
            state[name] = ("set", frozenset(id(x) for x in attr))
        else:
            state[name] = ("obj", id(attr))
    return state


def test_every_chain_method_has_a_call() -> None:
    assert chain_methods() == set(CALLS)
    assert {cls for cls, _ in CALLS} == {k for k in BASES if "(" not in k}


@pytest.mark.parametrize(("cls_name", "method"), sorted(chain_methods()))
def test_a_chain_call_returns_a_new_value_and_changes_neither_receiver(
    cls_name: str, method: str
) -> None:
    call = CALLS[(cls_name, method)]
    base = BASES[NEEDS_BASE.get((cls_name, method), cls_name)]()
    assert type(base).__name__ == cls_name
    before = _fingerprint(base)
    first = call(base, 0)
    assert first is not base
    assert type(first).__name__ == cls_name
    assert _fingerprint(base) == before, "the receiver changed"
    assert _fingerprint(first) != before, "the call did nothing (pick arguments that change it)"
    first_state = _fingerprint(first)
    second = call(base, 1)
    assert _fingerprint(first) == first_state, "a later call on the receiver changed u1"
    assert _fingerprint(base) == before
    assert second is not first


def test_update_example_from_the_issue() -> None:
    now = datetime(2026, 6, 23)
    base = Doc.update(doc_id="d", rev=1).at(now)
    u1 = base.set(body="x")
    base.set(note="y")
    assert u1.params() == Doc.update(doc_id="d", rev=1).at(now).set(body="x").params()
    assert {"S": "y"} not in u1.params()["ExpressionAttributeValues"].values()


def test_transaction_builders_keep_their_entries() -> None:
    one = st.TransactWrite().put(Doc.put(T0))
    two = one.put(Doc.put(Doc(doc_id="e", rev=1)))
    one.put(Doc.put(Doc(doc_id="f", rev=1)))
    assert len(one.params()["TransactItems"]) == 1
    assert len(two.params()["TransactItems"]) == 2


@pytest.mark.parametrize("base_name", sorted(BASES))
def test_the_copy_a_chain_call_starts_from_is_what_copy_copy_makes(base_name: str) -> None:
    base = BASES[base_name]()
    made, expected = shallow_copy(base), copy.copy(base)
    assert made is not base
    assert type(made) is type(expected) is type(base)
    # The same attribute values, identical objects: both copies are shallow.
    assert _fingerprint(made) == _fingerprint(expected) == _fingerprint(base)
