"""A condition on a field answers what it answers on the value a read returns (issue 26.1).

A field with a default reads a missing attribute as that default, a nullable field reads
a stored ``NULL`` as ``None``: filters and write conditions must agree with that. The
property test draws a field (type, nullability, default), items whose attribute is
stored, missing or ``NULL``, and a condition; the server's answer (a filtered query, and
a conditional delete of each item) must equal the Python predicate on the decoded items.

Each example writes into a fresh partition of one table (hence the function-scoped-fixture
health check is suppressed on purpose).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import singletable as st
from singletable.expressions import Condition, FieldRef
from tests.integration._executors import connect

_partitions = itertools.count()
_created: set[str] = set()

# No 0 and no "": moto answers BETWEEN false on a stored falsy value.
POOLS: dict[str, list[Any]] = {
    "str": ["a", "ab", "b", "open"],
    "int": [-1, 1, 3, 7],
    "literal": ["todo", "done"],
    "set": [{"a"}, {"a", "b"}],
}
ANNOTATIONS: dict[str, Any] = {
    "str": str,
    "int": int,
    "literal": Literal["todo", "done"],
    "set": set[str],
}
MISSING, NULL = "missing", "NULL"


@dataclass(frozen=True)
class FieldSpec:
    kind: str
    nullable: bool
    default: Any  # `...` for a required field

    def make(self, table: st.Table) -> type[st.Entity]:
        annotation = ANNOTATIONS[self.kind]
        if self.nullable:
            annotation = annotation | None
        namespace: dict[str, Any] = {
            "__annotations__": {"pid": str, "n": int, "x": annotation},
        }
        if self.default is not ...:
            namespace["x"] = self.default
        return type("Item", (st.Entity,), namespace, table=table, pk="P#{pid}", sk="I#{n}")

    def states(self) -> list[Any]:
        """What an item's attribute may hold: a value, missing, NULL (when it decodes)."""
        states: list[Any] = list(POOLS[self.kind])
        if self.default is not ... or self.nullable or self.kind == "set":
            states.append(MISSING)
        if self.nullable:
            states.append(NULL)
        return states


@hs.composite
def field_specs(draw: hs.DrawFn) -> FieldSpec:
    kind = draw(hs.sampled_from(sorted(POOLS)))
    nullable = draw(hs.booleans())
    defaults: list[Any] = [...]
    if nullable:
        defaults.append(None)
    defaults += [v for v in POOLS[kind] if kind != "set"]
    if kind == "set":
        defaults.append(set())
    return FieldSpec(kind, nullable, draw(hs.sampled_from(defaults)))


Predicate = Callable[[Any], bool]

_ORDER: dict[str, Callable[[Any, Any], Any]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def _ordered(op: str, value: Any) -> tuple[Callable[[FieldRef[Any]], Condition], Predicate]:
    # DynamoDB answers an order comparison with NULL (a None) false.
    return (
        lambda ref: _ORDER[op](ref, value),
        lambda x: x is not None and _ORDER[op](x, value),
    )


@hs.composite
def conditions(
    draw: hs.DrawFn, spec: FieldSpec, sizes: bool
) -> tuple[str, Callable[[FieldRef[Any]], Condition], Predicate]:
    pool = POOLS[spec.kind]
    value = draw(hs.sampled_from(pool))
    choices: list[tuple[str, Callable[[FieldRef[Any]], Condition], Predicate]] = [
        ("== None", lambda r: r == None, lambda x: x is None),  # noqa: E711
        ("!= None", lambda r: r != None, lambda x: x is not None),  # noqa: E711
    ]
    if spec.kind == "set":
        element = draw(hs.sampled_from(["a", "b"]))
        choices.append(
            (
                f"contains {element}",
                lambda r: r.contains(element),
                lambda x: bool(x) and element in x,
            )
        )
    else:
        other = draw(hs.sampled_from(pool))
        lo, hi = sorted([value, other])
        choices += [
            (f"== {value!r}", lambda r: r == value, lambda x: x == value),
            (f"!= {value!r}", lambda r: r != value, lambda x: x != value),
            (
                f"in {value!r} {other!r}",
                lambda r: r.is_in(value, other),
                lambda x: x in (value, other),
            ),
            (
                f"between {lo!r} {hi!r}",
                lambda r: r.between(lo, hi),
                lambda x: x is not None and lo <= x <= hi,
            ),
        ]
        for op in _ORDER:
            build, check = _ordered(op, value)
            choices.append((f"{op} {value!r}", build, check))
        if spec.kind != "int":
            prefix = value[:1]
            choices.append(
                (
                    f"begins_with {prefix!r}",
                    lambda r: r.begins_with(prefix),
                    lambda x: x is not None and x.startswith(prefix),
                )
            )
    if sizes and spec.kind != "int":
        n = draw(hs.integers(0, 2))
        choices.append(
            (f"size == {n}", lambda r: r.size() == n, lambda x: x is not None and len(x) == n)
        )
    name, build, check = draw(hs.sampled_from(choices))
    if draw(hs.booleans()):
        return f"not ({name})", lambda r: ~build(r), lambda x: not check(x)
    return name, build, check


def _store(client: Any, table_name: str, item: dict[str, Any], state: Any) -> None:
    if state == MISSING:
        item.pop("x", None)
    elif state == NULL:
        item["x"] = {"NULL": True}
    client.put_item(TableName=table_name, Item=item)


def _check_example(client: Any, table_name: str, data: hs.DataObject, sizes: bool) -> None:
    spec = data.draw(field_specs(), label="field")
    table = st.Table(table_name)
    entity: Any = spec.make(table)
    db = connect(client)
    pid = f"p{next(_partitions)}"
    states = data.draw(hs.lists(hs.sampled_from(spec.states()), min_size=1, max_size=5))
    some = POOLS[spec.kind][1]
    for n, state in enumerate(states):
        value = some if state in (MISSING, NULL) else state
        _store(client, table_name, entity.to_item(entity(pid=pid, n=n, x=value)), state)
    read = {item.n: item.x for item in entity.query(pid=pid).all(db)}
    assert sorted(read) == list(range(len(states)))
    name, build, check = data.draw(conditions(spec, sizes), label="condition")
    expected = {n for n, x in read.items() if check(x)}
    found = {item.n for item in entity.query(pid=pid).filter(build(entity.f.x)).all(db)}
    assert found == expected, (spec, states, name, read)
    deleted = set()
    for n in read:
        try:
            entity.delete(pid=pid, n=n, condition=build(entity.f.x)).run(db)
        except st.ConditionFailedError:
            continue
        deleted.add(n)
    assert deleted == expected, (spec, states, name, read)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=hs.data())
def test_conditions_answer_on_the_value_a_read_returns(
    dynamodb_client: Any, table_name: str, backend_name: str, data: hs.DataObject
) -> None:
    if table_name not in _created:
        connect(dynamodb_client).create_table(st.Table(table_name))
        _created.add(table_name)
    _check_example(dynamodb_client, table_name, data, sizes=backend_name == "dynamodb-local")


def test_a_removed_attribute_with_a_default_matches_the_default(
    dynamodb_client: Any, table_name: str
) -> None:
    # The example: remove() makes `state` read "open"; filters and write
    # conditions must say so.
    table = st.Table(table_name)

    class Task(st.Entity, table=table, pk="T#{tid}", sk="TASK"):
        tid: str
        state: str | None = "open"

    db = connect(dynamodb_client)
    db.create_table(table)
    Task.put(Task(tid="a", state="closed")).run(db)
    Task.update(tid="a").remove("state").run(db)
    assert Task.get(tid="a").run(db) == Task(tid="a", state="open")
    assert [t.tid for t in Task.scan().filter(Task.f.state == "open").all(db)] == ["a"]
    assert Task.scan().filter(Task.f.state != "open").all(db) == []
    assert Task.scan().filter(Task.f.state == None).all(db) == []  # noqa: E711
    Task.update(tid="a").set(state="done").where(Task.f.state == "open").run(db)
    assert Task.get(tid="a").run(db) == Task(tid="a", state="done")


def test_a_sparse_index_field_reads_none_when_missing(
    dynamodb_client: Any, table_name: str
) -> None:
    # A field that feeds a sparse GSI reads None when its attribute is missing: `== None`
    # must find it (the item is in no index, so no key holds the field).
    table = st.Table(table_name, indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])

    class Job(
        st.Entity,
        table=table,
        pk="J#{jid}",
        sk="JOB",
        indexes={"GSI1": st.IndexKeys(pk="WHO#{assignee}", sk="{jid}")},
    ):
        jid: str
        assignee: str | None = None

    db = connect(dynamodb_client)
    db.create_table(table)
    Job.put(Job(jid="a")).run(db)
    Job.put(Job(jid="b", assignee="ann")).run(db)
    unassigned = Job.scan().filter(Job.f.assignee == None).all(db)  # noqa: E711
    assert [j.jid for j in unassigned] == ["a"]
    assigned = Job.scan().filter(Job.f.assignee != None).all(db)  # noqa: E711
    assert [j.jid for j in assigned] == ["b"]
