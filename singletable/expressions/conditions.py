"""Condition trees (condition, filter and key-condition expressions) and their rendering."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from singletable.errors import ExpressionError
from singletable.expressions.operands import _Node, _Operand, _ValueOp
from singletable.expressions.paths import Path, Placeholders

__all__ = [
    "Condition",
    "and_",
    "condition_paths",
    "condition_text",
    "not_",
    "or_",
    "render_condition",
]


class Condition:
    """An immutable condition tree, for condition, filter and key-condition expressions.

    Combine with ``&`` (AND), ``|`` (OR) and ``~`` (NOT), or with `and_`, `or_`, `not_`.
    Python's ``and``/``or``/``not`` and chained comparisons (``1 < ref < 5``) would silently
    drop half the condition, so using a condition as a bool raises `ExpressionError`.
    """

    __slots__ = ()

    def __and__(self, other: Condition) -> Condition:
        return and_(self, other)

    def __or__(self, other: Condition) -> Condition:
        return or_(self, other)

    def __invert__(self) -> Condition:
        return not_(self)

    def __bool__(self) -> bool:
        raise ExpressionError(
            "a Condition has no truth value: combine conditions with & | ~ (not and/or/not), "
            "write `a <= ref` and `ref <= b` as ref.between(a, b), and `ref in xs` as "
            "ref.is_in(*xs)"
        )

    def _render(self, ph: Placeholders) -> str:
        raise NotImplementedError

    def _paths(self) -> Iterator[Path]:
        raise NotImplementedError


class _Compare(_Node, Condition):
    __slots__ = ("lhs", "op", "rhs")
    op: str
    lhs: _Operand
    rhs: _Operand

    def _render(self, ph: Placeholders) -> str:
        return f"{self.lhs._render(ph)} {self.op} {self.rhs._render(ph)}"

    def _paths(self) -> Iterator[Path]:
        yield from _operand_paths(self.lhs, self.rhs)


class _Between(_Node, Condition):
    __slots__ = ("hi", "lo", "operand")
    operand: _Operand
    lo: _Operand
    hi: _Operand

    def _render(self, ph: Placeholders) -> str:
        return f"{self.operand._render(ph)} BETWEEN {self.lo._render(ph)} AND {self.hi._render(ph)}"

    def _paths(self) -> Iterator[Path]:
        yield from _operand_paths(self.operand, self.lo, self.hi)


class _In(_Node, Condition):
    __slots__ = ("operand", "values")
    operand: _Operand
    values: tuple[_Operand, ...]

    def _render(self, ph: Placeholders) -> str:
        lhs = self.operand._render(ph)
        return f"{lhs} IN ({', '.join(v._render(ph) for v in self.values)})"

    def _paths(self) -> Iterator[Path]:
        yield from _operand_paths(self.operand, *self.values)


class _Function(_Node, Condition):
    __slots__ = ("args", "name")
    name: str
    args: tuple[_Operand, ...]

    def _render(self, ph: Placeholders) -> str:
        return f"{self.name} ({', '.join(a._render(ph) for a in self.args)})"

    def _paths(self) -> Iterator[Path]:
        yield from _operand_paths(*self.args)


class _And(_Node, Condition):
    __slots__ = ("children",)
    children: tuple[Condition, ...]

    def _render(self, ph: Placeholders) -> str:
        return " AND ".join(_render_child(c, ph) for c in self.children)

    def _paths(self) -> Iterator[Path]:
        for child in self.children:
            yield from child._paths()


class _Or(_Node, Condition):
    __slots__ = ("children",)
    children: tuple[Condition, ...]

    def _render(self, ph: Placeholders) -> str:
        # An AND inside an OR needs no parentheses (AND binds tighter), but they are kept
        # so that nobody reading the expression has to remember that.
        return " OR ".join(_render_child(c, ph) for c in self.children)

    def _paths(self) -> Iterator[Path]:
        for child in self.children:
            yield from child._paths()


class _Not(_Node, Condition):
    __slots__ = ("child",)
    child: Condition

    def _render(self, ph: Placeholders) -> str:
        if isinstance(self.child, (_And, _Or, _Not)):
            return f"NOT ({self.child._render(ph)})"
        return f"NOT {self.child._render(ph)}"

    def _paths(self) -> Iterator[Path]:
        yield from self.child._paths()


def _render_child(child: Condition, ph: Placeholders) -> str:
    if isinstance(child, (_And, _Or)):
        return f"({child._render(ph)})"
    return child._render(ph)


def _operand_paths(*operands: _Operand) -> Iterator[Path]:
    for operand in operands:
        if not isinstance(operand, _ValueOp):
            yield operand.path


def _combine(
    kind: type[_And] | type[_Or], word: str, conditions: tuple[Condition, ...]
) -> Condition:
    if not conditions:
        raise ExpressionError(
            f"{word}() needs at least one condition; an empty {word.rstrip('_').upper()} "
            "has no meaning in DynamoDB (leave the condition out instead)"
        )
    flat: list[Condition] = []
    for condition in conditions:
        if not isinstance(condition, Condition):
            raise ExpressionError(f"{word}() takes Conditions, got {type(condition).__name__}")
        if isinstance(condition, kind):
            flat.extend(condition.children)
        else:
            flat.append(condition)
    if len(flat) == 1:
        return flat[0]
    return kind(tuple(flat))


def and_(*conditions: Condition) -> Condition:
    """Returns the conjunction of conditions (nested ANDs are flattened).

    Raises:
        ExpressionError: no condition was given.
    """
    return _combine(_And, "and_", conditions)


def or_(*conditions: Condition) -> Condition:
    """Returns the disjunction of conditions (nested ORs are flattened).

    Raises:
        ExpressionError: no condition was given.
    """
    return _combine(_Or, "or_", conditions)


def not_(condition: Condition) -> Condition:
    """Returns the negation of a condition."""
    if not isinstance(condition, Condition):
        raise ExpressionError(f"not_() takes a Condition, got {type(condition).__name__}")
    return _Not(condition)


def render_condition(cond: Condition, ph: Placeholders) -> str:
    """Renders a condition (condition, filter or key-condition expression).

    Args:
        cond: the condition tree.
        ph: the request's placeholders; names and values are added to it.

    Returns:
        The expression string, e.g. ``"#n0 = :v0 AND (#n1 < :v1 OR attribute_exists (#n2))"``.
    """
    if not isinstance(cond, Condition):
        raise ExpressionError(f"expected a Condition, got {type(cond).__name__}")
    return cond._render(ph)


def condition_paths(cond: Condition) -> set[str]:
    """Returns the top-level attribute names a condition reads."""
    return {str(path[0]) for path in cond._paths()}


class _Readable(Placeholders):
    """Placeholders that write the names and values themselves: a condition for people."""

    __slots__ = ()

    def name(self, attribute: str) -> str:
        return attribute if attribute.isidentifier() else repr(attribute)

    def value(self, av: Any) -> str:
        if isinstance(av, dict) and len(av) == 1:
            ((kind, inner),) = av.items()
            if kind == "NULL":
                return "NULL"
            if kind in ("S", "N", "BOOL"):
                return repr(inner) if kind == "S" else str(inner)
        text = repr(av)
        return text if len(text) <= 60 else text[:57] + "..."


def condition_text(cond: Condition) -> str:
    """A condition as people read it, names and values in place: ``state = 'open'``.

    For error messages (which condition of a write failed); not a request expression.
    """
    return render_condition(cond, _Readable())
