"""Expressions are checked as exact strings together with their placeholder maps."""

from __future__ import annotations

import copy
import pickle
import re
from decimal import Decimal
from typing import Any

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from pydantic import Field

import singletable as st
from singletable.errors import ExpressionError
from singletable.expressions.conditions import (
    Condition,
    and_,
    condition_paths,
    not_,
    or_,
    render_condition,
)
from singletable.expressions.fields import FieldRef
from singletable.expressions.paths import Placeholders
from singletable.expressions.projections import render_projection
from singletable.expressions.updates import render_update, update_paths
from singletable.types import AttributeValue


def to_av(value: Any) -> AttributeValue:
    """A small stand-in for the entity layer's per-field converters."""
    if value is None:
        return {"NULL": True}
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, (int, Decimal)):
        return {"N": str(value)}
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, bytes):
        return {"B": value}
    if isinstance(value, (set, frozenset)):
        if all(isinstance(v, str) for v in value):
            return {"SS": sorted(value)}
        return {"NS": sorted(str(v) for v in value)}
    if isinstance(value, list):
        return {"L": [to_av(v) for v in value]}
    if isinstance(value, dict):
        return {"M": {k: to_av(v) for k, v in value.items()}}
    raise TypeError(f"cannot convert {value!r}")


def ref(*path: str | int, label: str | None = None) -> FieldRef[Any]:
    return FieldRef(path, to_av, label=label)


def cond(c: Condition) -> tuple[str, dict[str, str], dict[str, AttributeValue]]:
    ph = Placeholders()
    return render_condition(c, ph), ph.names, ph.values


def upd(*actions: Any) -> tuple[str, dict[str, str], dict[str, AttributeValue]]:
    ph = Placeholders()
    return render_update(actions, ph), ph.names, ph.values


A, B, C = ref("a", label="E.a"), ref("b", label="E.b"), ref("c", label="E.c")


# --------------------------------------------------------------------------- conditions


@pytest.mark.parametrize(
    ("build", "op"),
    [
        (lambda r: r == 1, "="),
        (lambda r: r != 1, "<>"),
        (lambda r: r < 1, "<"),
        (lambda r: r <= 1, "<="),
        (lambda r: r > 1, ">"),
        (lambda r: r >= 1, ">="),
        (lambda r: 1 > r, "<"),  # noqa: SIM300 - reflected: Python swaps the operands
    ],
)
def test_comparison_operators(build: Any, op: str) -> None:
    assert cond(build(A)) == (f"#n0 {op} :v0", {"#n0": "a"}, {":v0": {"N": "1"}})


def test_attribute_to_attribute_comparison() -> None:
    assert cond(A < B) == ("#n0 < #n1", {"#n0": "a", "#n1": "b"}, {})
    assert cond(A == A) == ("#n0 = #n0", {"#n0": "a"}, {})


def test_between_and_in() -> None:
    assert cond(A.between(1, 5)) == (
        "#n0 BETWEEN :v0 AND :v1",
        {"#n0": "a"},
        {":v0": {"N": "1"}, ":v1": {"N": "5"}},
    )
    assert cond(A.between(B, 3)) == (
        "#n0 BETWEEN #n1 AND :v0",
        {"#n0": "a", "#n1": "b"},
        {":v0": {"N": "3"}},
    )
    assert cond(A.is_in("x", "y", B)) == (
        "#n0 IN (:v0, :v1, #n1)",
        {"#n0": "a", "#n1": "b"},
        {":v0": {"S": "x"}, ":v1": {"S": "y"}},
    )
    assert cond(A.is_in(*range(100)))[0].count(":v") == 100


def test_functions() -> None:
    assert cond(A.exists()) == ("attribute_exists (#n0)", {"#n0": "a"}, {})
    assert cond(A.not_exists()) == ("attribute_not_exists (#n0)", {"#n0": "a"}, {})
    assert cond(A.begins_with("EVT#")) == (
        "begins_with (#n0, :v0)",
        {"#n0": "a"},
        {":v0": {"S": "EVT#"}},
    )
    assert cond(A.contains("x")) == ("contains (#n0, :v0)", {"#n0": "a"}, {":v0": {"S": "x"}})
    assert cond(A.contains(B)) == ("contains (#n0, #n1)", {"#n0": "a", "#n1": "b"}, {})
    assert cond(A.attribute_type("SS")) == (
        "attribute_type (#n0, :v0)",
        {"#n0": "a"},
        {":v0": {"S": "SS"}},
    )


def test_contains_uses_the_element_converter() -> None:
    tags: FieldRef[Any] = FieldRef(
        ("tags",), lambda v: {"SS": sorted(v)}, element_to_av=lambda v: {"S": v}
    )
    assert cond(tags.contains("red")) == (
        "contains (#n0, :v0)",
        {"#n0": "tags"},
        {":v0": {"S": "red"}},
    )


def test_size() -> None:
    assert cond(A.size() > 3) == ("size (#n0) > :v0", {"#n0": "a"}, {":v0": {"N": "3"}})
    assert cond(A.size() != B.size()) == ("size (#n0) <> size (#n1)", {"#n0": "a", "#n1": "b"}, {})
    assert cond(A.size().between(1, 2)) == (
        "size (#n0) BETWEEN :v0 AND :v1",
        {"#n0": "a"},
        {":v0": {"N": "1"}, ":v1": {"N": "2"}},
    )
    b_is_size_a = B == A.size()  # noqa: SIM300 - a FieldRef on the left, size on the right
    assert cond(b_is_size_a) == ("#n0 = size (#n1)", {"#n0": "b", "#n1": "a"}, {})


def test_nested_paths_and_sub_refs() -> None:
    meta = ref("meta", label="E.meta")
    leaf = meta["k"][3]["size"]
    assert leaf.label == "E.meta.k[3].size"
    assert meta["a b"].label == "E.meta['a b']"
    assert cond(leaf == "x") == (
        "#n0.#n1[3].#n2 = :v0",
        {"#n0": "meta", "#n1": "k", "#n2": "size"},
        {":v0": {"S": "x"}},
    )


def test_sub_refs_use_element_converter_else_parent() -> None:
    upper: FieldRef[Any] = FieldRef(("m",), to_av, element_to_av=lambda v: {"S": str(v).upper()})
    assert cond(upper["k"] == "x")[2] == {":v0": {"S": "X"}}
    # the grandchild inherits its parent's converter, which is the element converter
    assert cond(upper["k"]["j"] == "x")[2] == {":v0": {"S": "X"}}
    assert cond(A["k"] == "x")[2] == {":v0": {"S": "x"}}


@pytest.mark.parametrize("name", ["size", "a.b", "#x", ":v0", "name with space", "ünï"])
def test_odd_names_go_through_placeholders(name: str) -> None:
    expression, names, values = cond(ref(name) == "v")
    assert (expression, names, values) == ("#n0 = :v0", {"#n0": name}, {":v0": {"S": "v"}})


def test_and_or_not_precedence() -> None:
    assert cond((A == 1) & (B == 2) & (C == 3))[0] == "#n0 = :v0 AND #n1 = :v1 AND #n2 = :v2"
    assert cond((A == 1) | (B == 2) | (C == 3))[0] == "#n0 = :v0 OR #n1 = :v1 OR #n2 = :v2"
    assert cond(((A == 1) | (B == 2)) & (C == 3))[0] == "(#n0 = :v0 OR #n1 = :v1) AND #n2 = :v2"
    assert cond((A == 1) | ((B == 2) & (C == 3)))[0] == "#n0 = :v0 OR (#n1 = :v1 AND #n2 = :v2)"
    assert cond(~(A == 1))[0] == "NOT #n0 = :v0"
    assert cond(~((A == 1) & (B == 2)))[0] == "NOT (#n0 = :v0 AND #n1 = :v1)"
    assert cond(~~A.exists())[0] == "NOT (NOT attribute_exists (#n0))"
    assert cond(~A.exists() & (B == 1))[0] == "NOT attribute_exists (#n0) AND #n1 = :v0"


def test_helpers_match_operators_and_flatten() -> None:
    x, y, z = A == 1, B == 2, C == 3
    assert and_(x, y, z) == (x & y) & z == x & (y & z)
    assert or_(x, y, z) == (x | y) | z
    assert not_(x) == ~x
    assert and_(x) == x
    assert or_(x) == x


def test_conditions_and_actions_are_immutable_values() -> None:
    # What the frozen dataclasses gave before the nodes became plain classes (issue 13).
    built = (A == 1) & ~B.exists()
    assert built == (A == 1) & ~B.exists()
    assert built != (A == 2) & ~B.exists()
    assert hash(A.exists() | B.exists()) == hash(A.exists() | B.exists())
    assert repr(~B.exists()) == (
        "_Not(child=_Function(name='attribute_exists', args=(_PathOp(path=('b',), label='E.b'),)))"
    )
    for value in (built, A.set(A.if_not_exists(0) + 1), A.remove()):
        assert copy.deepcopy(value) == value
        assert pickle.loads(pickle.dumps(value)) == value
    with pytest.raises(AttributeError, match="cannot assign"):
        A.remove().path = ("b",)  # type: ignore[misc]
    with pytest.raises(AttributeError, match="cannot delete"):
        del A.remove().label


def test_conditions_have_no_truth_value() -> None:
    with pytest.raises(ExpressionError, match="no truth value"):
        bool(A == 1)
    with pytest.raises(ExpressionError, match="between"):
        1 < A < 5  # noqa: B015
    with pytest.raises(ExpressionError, match="not a collection"):
        list(A)


def test_field_refs_are_unhashable() -> None:
    with pytest.raises(TypeError, match="unhashable"):
        hash(A)


def test_condition_paths() -> None:
    c = (ref("m")["x"] == 1) | A.size().between(B, 3) | C.is_in(ref("d"))
    assert condition_paths(c) == {"m", "a", "b", "c", "d"}


# --------------------------------------------------------------------------- updates


def test_each_update_action_kind() -> None:
    assert upd(A.set(1)) == ("SET #n0 = :v0", {"#n0": "a"}, {":v0": {"N": "1"}})
    assert upd(A.set(B)) == ("SET #n0 = #n1", {"#n0": "a", "#n1": "b"}, {})
    assert upd(A.remove()) == ("REMOVE #n0", {"#n0": "a"}, {})
    assert upd(A.add(2)) == ("ADD #n0 :v0", {"#n0": "a"}, {":v0": {"N": "2"}})
    assert upd(A.add({"x"})) == ("ADD #n0 :v0", {"#n0": "a"}, {":v0": {"SS": ["x"]}})
    assert upd(A.delete({1, 2})) == ("DELETE #n0 :v0", {"#n0": "a"}, {":v0": {"NS": ["1", "2"]}})
    assert upd(A.append([1])) == (
        "SET #n0 = list_append(#n0, :v0)",
        {"#n0": "a"},
        {":v0": {"L": [{"N": "1"}]}},
    )
    assert upd(A.prepend([1])) == (
        "SET #n0 = list_append(:v0, #n0)",
        {"#n0": "a"},
        {":v0": {"L": [{"N": "1"}]}},
    )
    assert upd(A.increment()) == ("SET #n0 = #n0 + :v0", {"#n0": "a"}, {":v0": {"N": "1"}})
    assert upd(A.decrement(Decimal("2.5"))) == (
        "SET #n0 = #n0 - :v0",
        {"#n0": "a"},
        {":v0": {"N": "2.5"}},
    )
    assert upd(A.set(A.if_not_exists("now"))) == (
        "SET #n0 = if_not_exists(#n0, :v0)",
        {"#n0": "a"},
        {":v0": {"S": "now"}},
    )
    assert upd(A.set(A.if_not_exists(0) + 1)) == (
        "SET #n0 = if_not_exists(#n0, :v0) + :v1",
        {"#n0": "a"},
        {":v0": {"N": "0"}, ":v1": {"N": "1"}},
    )
    assert upd(A.set(10 - B.if_not_exists(C))) == (
        "SET #n0 = :v0 - if_not_exists(#n1, #n2)",
        {"#n0": "a", "#n1": "b", "#n2": "c"},
        {":v0": {"N": "10"}},
    )


def test_update_clause_grouping_and_order() -> None:
    meta = ref("meta")
    expression, names, values = upd(
        ref("tags").delete({"old"}),
        A.add(1),
        meta["k"][0].remove(),
        B.set("x"),
        C.increment(2),
        ref("gone").remove(),
    )
    assert expression == (
        "SET #n0 = :v0, #n1 = #n1 + :v1 REMOVE #n2.#n3[0], #n4 ADD #n5 :v2 DELETE #n6 :v3"
    )
    assert names == {
        "#n0": "b",
        "#n1": "c",
        "#n2": "meta",
        "#n3": "k",
        "#n4": "gone",
        "#n5": "a",
        "#n6": "tags",
    }
    assert values == {
        ":v0": {"S": "x"},
        ":v1": {"N": "2"},
        ":v2": {"N": "1"},
        ":v3": {"SS": ["old"]},
    }


def test_one_placeholder_set_for_condition_update_and_projection() -> None:
    ph = Placeholders()
    assert render_update([A.set(5), ref("size").increment()], ph) == (
        "SET #n0 = :v0, #n1 = #n1 + :v1"
    )
    assert render_condition(A.exists() & (ref("size") < 10), ph) == (
        "attribute_exists (#n0) AND #n1 < :v2"
    )
    assert render_projection([A, "b"], ph) == "#n0, #n2"
    assert ph.names == {"#n0": "a", "#n1": "size", "#n2": "b"}
    assert ph.values == {":v0": {"N": "5"}, ":v1": {"N": "1"}, ":v2": {"N": "10"}}
    request: dict[str, Any] = {"TableName": "t"}
    ph.apply(request)
    assert request == {
        "TableName": "t",
        "ExpressionAttributeNames": ph.names,
        "ExpressionAttributeValues": ph.values,
    }


def test_apply_skips_empty_maps_and_refuses_conflicts() -> None:
    request: dict[str, Any] = {}
    Placeholders().apply(request)
    assert request == {}
    ph = Placeholders()
    render_projection(["a"], ph)
    ph.apply(request)
    assert request == {"ExpressionAttributeNames": {"#n0": "a"}}
    other = Placeholders()
    render_projection(["b"], other)
    with pytest.raises(ExpressionError, match="already binds #n0"):
        other.apply(request)


def test_update_paths() -> None:
    actions = [ref("m")["x"].set(B), A.set(C.if_not_exists(1)), ref("t").delete({"x"})]
    assert update_paths(actions) == {"m", "a", "t"}


# --------------------------------------------------------------------------- projections


def test_projection() -> None:
    ph = Placeholders()
    assert render_projection([A, ("meta", "k", 2), "a.b", "size"], ph) == (
        "#n0, #n1.#n2[2], #n3, #n4"
    )
    assert ph.names == {"#n0": "a", "#n1": "meta", "#n2": "k", "#n3": "a.b", "#n4": "size"}
    assert ph.values == {}


def test_projection_drops_duplicates_and_covered_paths() -> None:
    ph = Placeholders()
    assert render_projection([("m", "x"), "a", A, "m", ("m", "y", 0)], ph) == "#n0, #n1"
    assert ph.names == {"#n0": "a", "#n1": "m"}


# --------------------------------------------------------------------------- errors


def test_in_limits() -> None:
    with pytest.raises(ExpressionError, match=r"E\.a: is_in\(\) takes 1 to 100 values.*got 0"):
        A.is_in()
    with pytest.raises(ExpressionError, match=r"E\.a: is_in\(\) takes 1 to 100 values.*got 101"):
        A.is_in(*range(101))


def test_empty_and_or() -> None:
    with pytest.raises(ExpressionError, match=r"and_\(\) needs at least one condition"):
        and_()
    with pytest.raises(ExpressionError, match=r"or_\(\) needs at least one condition"):
        or_()
    with pytest.raises(ExpressionError, match=r"and_\(\) takes Conditions"):
        and_(True)  # type: ignore[arg-type]


def test_begins_with_needs_a_string() -> None:
    with pytest.raises(ExpressionError, match=r"E\.a: begins_with\(\) needs a str prefix"):
        A.begins_with(5)  # type: ignore[arg-type]


def test_between_bounds() -> None:
    with pytest.raises(
        ExpressionError, match=r"E\.a: between\(\) bounds .* same kind, got N and S"
    ):
        A.between(1, "x")
    with pytest.raises(ExpressionError, match=r"E\.a: between\(\) lower bound .* greater"):
        A.between(5, 1)
    with pytest.raises(ExpressionError, match="greater"):
        A.between("b", "a")
    # strings compare by UTF-8 bytes, like DynamoDB
    A.between("\uffff", "\U0001f600")
    with pytest.raises(ExpressionError, match=r"size\(E\.a\): .*needs a number"):
        A.size().between("1", 2)  # type: ignore[arg-type]  # the refusal is the test


def test_attribute_type_name() -> None:
    with pytest.raises(ExpressionError, match=r"E\.a: attribute_type\(\) takes one of"):
        A.attribute_type("STRING")  # type: ignore[arg-type]


def test_overlapping_update_paths() -> None:
    meta = ref("meta", label="E.meta")
    with pytest.raises(ExpressionError, match=r"overlapping paths \(E\.a twice\)"):
        render_update([A.set(1), A.remove()], Placeholders())
    with pytest.raises(ExpressionError, match=r"overlapping paths \(E\.meta and E\.meta\.k\)"):
        render_update([meta.set({}), meta["k"].remove()], Placeholders())
    with pytest.raises(ExpressionError, match=r"overlapping paths \(E\.meta\.k\[0\] and E\.meta\)"):
        render_update([meta["k"][0].set(1), meta.remove()], Placeholders())
    # siblings do not overlap
    render_update([meta["k"].set(1), meta["j"].remove(), meta["k2"].set(A)], Placeholders())


def test_no_update_actions() -> None:
    with pytest.raises(ExpressionError, match="at least one action"):
        render_update([], Placeholders())


def test_add_and_delete_top_level_only() -> None:
    meta = ref("meta", label="E.meta")
    with pytest.raises(ExpressionError, match=r"E\.meta\.n: add\(\) works only on top-level"):
        meta["n"].add(1)
    with pytest.raises(ExpressionError, match=r"E\.meta\[0\]: delete\(\) works only on top-level"):
        meta[0].delete({"x"})


def test_add_and_delete_value_kinds() -> None:
    with pytest.raises(ExpressionError, match=r"E\.a: add\(\) takes a number or a set"):
        A.add("x")
    with pytest.raises(ExpressionError, match=r"E\.a: delete\(\) takes a set"):
        A.delete(["x"])
    with pytest.raises(ExpressionError, match=r"E\.a: delete\(\) of an empty set"):
        A.delete(set())
    with pytest.raises(ExpressionError, match=r"E\.a: .*empty sets; use remove\(\)"):
        A.add(frozenset())


def test_set_of_empty_set() -> None:
    with pytest.raises(ExpressionError, match=r"E\.a: DynamoDB rejects empty sets; use remove\(\)"):
        A.set(set())
    # a converter that turns some other value into an empty set is caught too
    odd: FieldRef[Any] = FieldRef(("o",), lambda v: {"SS": []}, label="E.o")
    with pytest.raises(ExpressionError, match=r"E\.o: DynamoDB rejects empty sets"):
        odd.set("anything")


def test_numbers_for_counters() -> None:
    with pytest.raises(ExpressionError, match=r"E\.a: increment\(\) needs a number, got bool"):
        A.increment(True)
    with pytest.raises(ExpressionError, match=r"E\.a: decrement\(\) needs a finite number"):
        A.decrement(float("nan"))
    assert upd(A.increment(0.5))[2] == {":v0": {"N": "0.5"}}


def test_one_arithmetic_operator_per_set() -> None:
    with pytest.raises(ExpressionError, match=r"one \+ or -"):
        A.if_not_exists(0) + 1 + 2


def test_list_actions_need_lists() -> None:
    with pytest.raises(ExpressionError, match=r"E\.a: append\(\) takes a list"):
        A.append("x")


def test_bad_paths() -> None:
    with pytest.raises(ExpressionError, match="cannot be empty"):
        ref("")
    with pytest.raises(ExpressionError, match="starts with a top-level attribute name"):
        FieldRef((0,), to_av)
    with pytest.raises(ExpressionError, match="needs at least one step"):
        FieldRef((), to_av)
    with pytest.raises(ExpressionError, match=r"E\.a: list index -1 is negative"):
        A[-1]
    with pytest.raises(ExpressionError, match=r"a map key .* or a list index"):
        A[True]
    with pytest.raises(ExpressionError, match="a projection needs at least one attribute"):
        render_projection([], Placeholders())


def test_non_values_in_value_positions() -> None:
    with pytest.raises(ExpressionError, match=r"E\.a: a Condition cannot be used as a value"):
        A == (B == 1)  # noqa: B015, SIM300
    with pytest.raises(ExpressionError, match=r"E\.a: a SizeOperand cannot be used as a value"):
        A.set(B.size())


# --------------------------------------------------------------------------- property

NAMES = hs.text(min_size=1, max_size=8).map(lambda s: "~" + s)
VALUES = hs.text(max_size=8).map(lambda s: "@" + s + "@")


def _leaf(draw: hs.DrawFn, refs: list[FieldRef[Any]], values: list[str]) -> Condition:
    r: FieldRef[Any] = draw(hs.sampled_from(refs))
    other = draw(hs.sampled_from(refs))

    def v() -> str:
        value = draw(VALUES)
        values.append(value)
        return value

    kind = draw(hs.integers(0, 13))
    if kind < 6:
        rhs: Any = other if draw(hs.booleans()) else v()
        ops: list[Condition] = [r == rhs, r != rhs, r < rhs, r <= rhs, r > rhs, r >= rhs]
        return ops[kind]
    if kind == 6:
        lo, hi = sorted([v(), v()], key=lambda s: s.encode("utf-8", "surrogatepass"))
        return r.between(lo, hi)
    if kind == 7:
        return r.is_in(*[v() for _ in range(draw(hs.integers(1, 4)))])
    if kind == 8:
        return r.begins_with(v())
    if kind == 9:
        return r.contains(v())
    if kind == 10:
        return r.exists() if draw(hs.booleans()) else r.not_exists()
    if kind == 11:
        return r.attribute_type(draw(hs.sampled_from(["S", "N", "L", "M", "NULL"])))
    if kind == 12:
        return r.size() >= draw(hs.integers(0, 10))
    nested: Condition = r[draw(hs.sampled_from(["k", "size"]))][draw(hs.integers(0, 3))] == v()
    return nested


@hs.composite
def condition_trees(draw: hs.DrawFn) -> tuple[Condition, list[str], list[str]]:
    names = draw(hs.lists(NAMES, min_size=1, max_size=4, unique=True))
    refs: list[FieldRef[Any]] = [FieldRef((n,), to_av) for n in names]
    values: list[str] = []

    def tree(depth: int) -> Condition:
        kind = draw(hs.integers(0, 3 if depth < 3 else 0))
        if kind == 0:
            return _leaf(draw, refs, values)
        if kind == 3:
            return ~tree(depth + 1)
        children = [tree(depth + 1) for _ in range(draw(hs.integers(1, 3)))]
        return and_(*children) if kind == 1 else or_(*children)

    return tree(0), names, values


@settings(max_examples=500, deadline=None)
@given(condition_trees())
def test_rendered_conditions_hold_no_user_text(
    data: tuple[Condition, list[str], list[str]],
) -> None:
    condition, names, values = data
    ph = Placeholders()
    expression = render_condition(condition, ph)
    for text in names + values:
        assert text not in expression
    assert "~" not in expression
    assert "@" not in expression
    assert set(re.findall(r"#n\d+", expression)) == set(ph.names)
    assert set(re.findall(r":v\d+", expression)) == set(ph.values)
    assert set(ph.names.values()) <= set(names) | {"k", "size"}
    # rendering is deterministic
    again = Placeholders()
    assert render_condition(condition, again) == expression
    assert (again.names, again.values) == (ph.names, ph.values)


def test_comparing_an_optional_field_with_none_tests_for_what_reads_as_none() -> None:
    from singletable.expressions.conditions import render_condition
    from singletable.expressions.paths import Placeholders

    class Note(st.Entity, table=st.Table("followups-4"), pk="N#{nid}", sk="META"):
        nid: str
        body: str | None = None
        meta: dict[str, str | None] = Field(default_factory=dict)

    # A missing attribute and a stored NULL both read as None.
    ph = Placeholders()
    is_none = render_condition(Note.f.body == None, ph)  # noqa: E711
    assert is_none == "attribute_not_exists (#n0) OR attribute_type (#n0, :v0)"
    is_not = render_condition(Note.f.body != None, ph)  # noqa: E711
    assert is_not == "NOT (attribute_not_exists (#n0) OR attribute_type (#n0, :v1))"
    # Inside a map, None is stored as NULL.
    nested = render_condition(Note.f.meta["k"] == None, ph)  # noqa: E711
    assert nested == "attribute_type (#n1.#n2, :v2)"
    assert ph.values[":v0"] == ph.values[":v2"] == {"S": "NULL"}


@pytest.mark.parametrize(
    "build",
    [
        lambda r: r.size() < 10**130,
        lambda r: r.increment(12345678901234567890123456789012345678901),
        lambda r: r.decrement(Decimal("1E+200")),
        lambda r: r.size() > 1e300,
        lambda r: r.add(Decimal("1.234567890123456789012345678901234567891")),
        lambda r: r.set(r.if_not_exists(0) + Decimal("1E-140")),
    ],
)
def test_numbers_in_expressions_are_checked_against_dynamodb_limits(build: Any) -> None:
    ref: FieldRef[Any] = FieldRef(("stats",), lambda v: {"N": str(v)}, label="Thing.stats")
    with pytest.raises(ExpressionError, match=r"Thing\.stats|SET value"):
        build(ref)


def test_comparing_a_set_field_with_an_empty_set_names_the_field() -> None:
    from singletable.entity import Entity
    from singletable.model.table import Table

    class Tagged(Entity, table=Table("review-values"), pk="T#{tid}", sk="T"):
        tid: str
        tags: set[str] = pydantic.Field(default_factory=set)

    with pytest.raises(ExpressionError, match=r"Tagged\.tags.*empty set"):
        _ = Tagged.f.tags == set()
