"""Condition, filter, update and projection expressions, rendered with placeholders.

Everything here is pure: a `FieldRef` builds immutable `Condition` trees and
`UpdateAction` values, and the ``render_*`` functions turn them into DynamoDB expression
strings. Every attribute name goes through a ``#n<i>`` placeholder and every value through a
``:v<i>`` placeholder held by one `Placeholders` per request, so no user text is ever
spliced into an expression (reserved words such as ``size`` and names such as ``a.b`` need
no special care).

Placeholders are numbered in rendering order, so the same inputs always give the same
strings.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar, Generic, Literal, NoReturn, TypeAlias, TypeVar

from typing_extensions import dataclass_transform

from singletable.attributes.numbers import number_text
from singletable.errors import ExpressionError, ItemEncodeError
from singletable.types import AttributeValue

__all__ = [
    "AttributeTypeName",
    "Condition",
    "FieldRef",
    "Path",
    "Placeholders",
    "SetValue",
    "SizeOperand",
    "UpdateAction",
    "ValueConverter",
    "and_",
    "condition_paths",
    "not_",
    "or_",
    "render_condition",
    "render_projection",
    "render_update",
    "update_paths",
]

#: Converts one Python value into a low-level DynamoDB AttributeValue.
ValueConverter: TypeAlias = Callable[[Any], AttributeValue]
#: A document path: a top-level attribute name, then map keys (str) and list indexes (int).
Path: TypeAlias = "tuple[str | int, ...]"
#: The type names accepted by DynamoDB's ``attribute_type`` function.
AttributeTypeName: TypeAlias = Literal["S", "SS", "N", "NS", "B", "BS", "BOOL", "NULL", "L", "M"]

_ATTRIBUTE_TYPES = frozenset({"S", "SS", "N", "NS", "B", "BS", "BOOL", "NULL", "L", "M"})
#: DynamoDB's limit on the number of operands of one ``IN``.
MAX_IN_VALUES = 100
_SET_TYPES = frozenset({"SS", "NS", "BS"})

#: The Python type of the values a reference compares with and writes (``FieldRef[int]``).
T = TypeVar("T")
#: The values a comparison's right-hand side takes (a field's type, or a number for sizes).
V = TypeVar("V")


# --------------------------------------------------------------------------- placeholders


class Placeholders:
    """Allocates the ``#name`` and ``:value`` placeholders of ONE request.

    Share one instance between every expression of a request (key condition, filter,
    projection, update, condition) so that the same attribute name gets the same
    placeholder everywhere and the maps cover all expressions.

    Attributes:
        names: ``ExpressionAttributeNames``: placeholder -> attribute name.
        values: ``ExpressionAttributeValues``: placeholder -> AttributeValue.
    """

    __slots__ = ("_by_name", "names", "values")

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.values: dict[str, AttributeValue] = {}
        self._by_name: dict[str, str] = {}

    def name(self, attribute: str) -> str:
        """Returns the placeholder of an attribute name, allocating ``#n<i>`` on first use."""
        placeholder = self._by_name.get(attribute)
        if placeholder is None:
            placeholder = f"#n{len(self._by_name)}"
            self._by_name[attribute] = placeholder
            self.names[placeholder] = attribute
        return placeholder

    def value(self, av: AttributeValue) -> str:
        """Allocates a fresh ``:v<i>`` placeholder for an AttributeValue."""
        placeholder = f":v{len(self.values)}"
        self.values[placeholder] = av
        return placeholder

    def apply(self, request: dict[str, Any]) -> None:
        """Adds ``ExpressionAttributeNames`` / ``ExpressionAttributeValues`` to a request.

        Nothing is added for an empty map (DynamoDB rejects empty maps). Entries already in
        the request are kept; a placeholder already bound to something else is an error.

        Raises:
            ExpressionError: a placeholder in the request is bound to a different name or value.
        """
        for key, mapping in (
            ("ExpressionAttributeNames", self.names),
            ("ExpressionAttributeValues", self.values),
        ):
            if not mapping:
                continue
            target: dict[str, Any] = request.setdefault(key, {})
            for placeholder, bound in mapping.items():
                if placeholder in target and target[placeholder] != bound:
                    raise ExpressionError(
                        f"{key} already binds {placeholder} to {target[placeholder]!r}; "
                        "render every expression of a request with one Placeholders"
                    )
                target[placeholder] = bound


def _render_path(path: Path, ph: Placeholders) -> str:
    parts: list[str] = []
    for step in path:
        if isinstance(step, int):
            parts.append(f"[{step}]")
        elif parts:
            parts.append("." + ph.name(step))
        else:
            parts.append(ph.name(step))
    return "".join(parts)


def _label_of(path: Path) -> str:
    parts: list[str] = []
    for step in path:
        if isinstance(step, int):
            parts.append(f"[{step}]")
        elif not parts:
            parts.append(step)
        elif _is_identifier(step):
            parts.append("." + step)
        else:
            parts.append(f"[{step!r}]")
    return "".join(parts)


def _is_identifier(step: str) -> bool:
    # [A-Za-z_][A-Za-z0-9_]* without a regular expression to compile at import (issue 13).
    return step.isascii() and step.isidentifier()


def _check_step(step: object, label: str) -> str | int:
    if isinstance(step, bool) or not isinstance(step, (str, int)):
        raise ExpressionError(
            f"{label}: a path step must be a map key (str) or a list index (int), "
            f"got {type(step).__name__}"
        )
    if isinstance(step, str) and not step:
        raise ExpressionError(f"{label}: DynamoDB attribute names and map keys cannot be empty")
    if isinstance(step, int) and step < 0:
        raise ExpressionError(f"{label}: list index {step} is negative; DynamoDB needs >= 0")
    return step


# --------------------------------------------------------------------------- operands


def _number_av(n: object, label: str, what: str) -> AttributeValue:
    """Converts an int, float or Decimal to ``{"N": ...}`` (used for sizes and counters)."""
    if isinstance(n, bool) or not isinstance(n, (int, float, Decimal)):
        raise ExpressionError(f"{label}: {what} needs a number, got {type(n).__name__}")
    if isinstance(n, float):
        if not math.isfinite(n):
            raise ExpressionError(f"{label}: {what} needs a finite number, got {n!r}")
        n = Decimal(repr(n))
    if isinstance(n, Decimal) and not n.is_finite():
        raise ExpressionError(f"{label}: {what} needs a finite number, got {n!r}")
    try:  # DynamoDB's 38 digits and 1E-130 .. 1E+126, refused here with the path named
        return {"N": number_text(n, f"{label}: {what}")}
    except ItemEncodeError as exc:
        raise ExpressionError(str(exc)) from None


_Setter: TypeAlias = Callable[[object, object], None]


def _initialiser(setters: tuple[_Setter, ...]) -> Callable[..., None]:
    """A node's ``__init__``: each slot's own setter (past the refusing ``__setattr__``).

    Spelt out per number of fields (a node has one to three): a loop over the setters
    would make building a node twice as slow as the dataclass's generated ``__init__``.
    """
    if len(setters) == 1:
        (set_a,) = setters

        def init_1(self: object, a: object) -> None:
            set_a(self, a)

        return init_1
    if len(setters) == 2:
        set_a, set_b = setters

        def init_2(self: object, a: object, b: object) -> None:
            set_a(self, a)
            set_b(self, b)

        return init_2
    set_a, set_b, set_c = setters

    def init_3(self: object, a: object, b: object, c: object) -> None:
        set_a(self, a)
        set_b(self, b)
        set_c(self, c)

    return init_3


@dataclass_transform(frozen_default=True)
class _Node:
    """An immutable tree node: a frozen dataclass to type checkers, a plain class at run time.

    ``@dataclass(frozen=True, slots=True)`` generates and compiles six methods for each
    class while the module is imported; for the seventeen nodes here that was a quarter
    of what ``import singletable`` cost (issue 13). These methods serve every node
    instead, as fast. A node's fields are its own annotations in order, ClassVars
    excluded: what type checkers read for the ``__init__`` they see (positional arguments
    only here). It lists them in ``__slots__`` too.
    """

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls) -> None:
        hints = inspect.get_annotations(cls)  # strings: the module defers annotations
        cls._fields = tuple(name for name, hint in hints.items() if "ClassVar" not in hint)
        # A field missing from __slots__ has no slot here: a KeyError as the module loads.
        setters = tuple(cls.__dict__[name].__set__ for name in cls._fields)
        cls.__init__ = _initialiser(setters)  # type: ignore[method-assign]

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({fields})"

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[type[_Node], tuple[object, ...]]:
        # copy and pickle rebuild a node from its fields: restoring slots goes through
        # the refusing __setattr__.
        return type(self), self._values()


class _PathOp(_Node):
    __slots__ = ("label", "path")
    path: Path
    label: str

    def _render(self, ph: Placeholders) -> str:
        return _render_path(self.path, ph)


class _SizeOp(_Node):
    __slots__ = ("label", "path")
    path: Path
    label: str

    def _render(self, ph: Placeholders) -> str:
        return f"size ({_render_path(self.path, ph)})"


class _ValueOp(_Node):
    __slots__ = ("av",)
    av: AttributeValue

    def _render(self, ph: Placeholders) -> str:
        return ph.value(self.av)


_Operand: TypeAlias = "_PathOp | _SizeOp | _ValueOp"


def _operand(value: object, convert: ValueConverter, label: str) -> _Operand:
    if isinstance(value, FieldRef):
        return _PathOp(value.path, value.label)
    if isinstance(value, SizeOperand):
        return _SizeOp(value.ref.path, value.ref.label)
    for kind in (Condition, UpdateAction, SetValue):
        if isinstance(value, kind):
            raise ExpressionError(
                f"{label}: a {kind.__name__} cannot be used as a value in a condition"
            )
    return _ValueOp(convert(value))


# --------------------------------------------------------------------------- conditions


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


# --------------------------------------------------------------------------- comparisons


def _between_check(label: str, lo: _Operand, hi: _Operand) -> None:
    if not (isinstance(lo, _ValueOp) and isinstance(hi, _ValueOp)):
        return
    (lo_type, lo_value), (hi_type, hi_value) = _single(lo.av, label), _single(hi.av, label)
    if lo_type != hi_type:
        raise ExpressionError(
            f"{label}: between() bounds must be of the same kind, got {lo_type} and {hi_type}"
        )
    ordered: tuple[Any, Any] | None = None
    if lo_type == "N":
        try:
            ordered = (Decimal(lo_value), Decimal(hi_value))
        except (InvalidOperation, TypeError):
            ordered = None
    elif lo_type == "S" and isinstance(lo_value, str) and isinstance(hi_value, str):
        # DynamoDB compares strings by UTF-8 bytes.
        ordered = (
            lo_value.encode("utf-8", "surrogatepass"),
            hi_value.encode("utf-8", "surrogatepass"),
        )
    elif lo_type == "B" and isinstance(lo_value, (bytes, bytearray)):
        ordered = (bytes(lo_value), bytes(hi_value))
    if ordered is not None and ordered[0] > ordered[1]:
        raise ExpressionError(
            f"{label}: between() lower bound {lo_value!r} is greater than upper bound "
            f"{hi_value!r}; DynamoDB requires lo <= hi"
        )


def _single(av: AttributeValue, label: str) -> tuple[str, Any]:
    if not isinstance(av, dict) or len(av) != 1:
        raise ExpressionError(f"{label}: the converter returned {av!r}, not an AttributeValue")
    return next(iter(av.items()))


class _Comparable(Generic[V]):
    """The comparison operators shared by `FieldRef` and `SizeOperand`.

    ``V`` is the type of the values compared with: the operators also take another
    reference or a size, whose types the checker cannot relate to ``V``.
    """

    __slots__ = ()
    # __eq__ builds a Condition instead of comparing, so instances must not be hashable
    # (a hash consistent with that __eq__ is impossible) and can't be set members or dict
    # keys; use `.path` for that.
    __hash__ = None  # type: ignore[assignment]

    def _lhs(self) -> _Operand:
        raise NotImplementedError

    def _convert(self, value: object) -> AttributeValue:
        raise NotImplementedError

    @property
    def _label(self) -> str:
        raise NotImplementedError

    def _compare(self, op: str, other: object) -> Condition:
        return _Compare(op, self._lhs(), _operand(other, self._convert, self._label))

    # A mismatched `==` cannot be an error for a type checker (it falls back to the other
    # operand's __eq__ and infers bool), but that bool is then refused wherever a Condition
    # is expected (filter, where, condition=, & and |).
    def __eq__(self, other: V | FieldRef[Any] | SizeOperand | None) -> Condition:  # type: ignore[override]
        return self._compare("=", other)

    def __ne__(self, other: V | FieldRef[Any] | SizeOperand | None) -> Condition:  # type: ignore[override]
        return self._compare("<>", other)

    def __lt__(self, other: V | FieldRef[Any] | SizeOperand) -> Condition:
        return self._compare("<", other)

    def __le__(self, other: V | FieldRef[Any] | SizeOperand) -> Condition:
        return self._compare("<=", other)

    def __gt__(self, other: V | FieldRef[Any] | SizeOperand) -> Condition:
        return self._compare(">", other)

    def __ge__(self, other: V | FieldRef[Any] | SizeOperand) -> Condition:
        return self._compare(">=", other)

    def between(
        self, lo: V | FieldRef[Any] | SizeOperand, hi: V | FieldRef[Any] | SizeOperand
    ) -> Condition:
        """``self BETWEEN lo AND hi`` (both bounds inclusive).

        Raises:
            ExpressionError: the bounds are values of different kinds, or ``lo > hi``.
        """
        lo_op = _operand(lo, self._convert, self._label)
        hi_op = _operand(hi, self._convert, self._label)
        _between_check(self._label, lo_op, hi_op)
        return _Between(self._lhs(), lo_op, hi_op)


class SizeOperand(_Comparable[int | float | Decimal]):
    """``size(path)``: compare it with a number, another attribute, or another size."""

    __slots__ = ("ref",)

    def __init__(self, ref: FieldRef[Any]) -> None:
        self.ref = ref

    def _lhs(self) -> _Operand:
        return _SizeOp(self.ref.path, self.ref.label)

    def _convert(self, value: object) -> AttributeValue:
        return _number_av(value, self._label, "a size comparison")

    @property
    def _label(self) -> str:
        return f"size({self.ref.label})"

    def __repr__(self) -> str:
        return f"SizeOperand({self.ref.label!r})"


# --------------------------------------------------------------------------- updates


class SetValue:
    """The right-hand side of a SET action beyond a plain value.

    Built by `FieldRef.if_not_exists`; ``+`` and ``-`` with a number, a `FieldRef` or
    another `SetValue` give DynamoDB's ``operand + operand`` (one operator per action).
    """

    __slots__ = ()

    def _render(self, ph: Placeholders) -> str:
        raise NotImplementedError

    def _arith(self, op: str, other: object, swapped: bool) -> SetValue:
        if isinstance(self, _Arith) or isinstance(other, _Arith):
            raise ExpressionError(
                "a SET value allows one + or -; DynamoDB has no nested arithmetic"
            )
        rhs: _SetTerm
        if isinstance(other, FieldRef):
            rhs = _PathOp(other.path, other.label)
        elif isinstance(other, SetValue):
            rhs = other
        else:
            rhs = _ValueOp(_number_av(other, "SET value", f"'{op}'"))
        return _Arith(op, rhs, self) if swapped else _Arith(op, self, rhs)

    def __add__(self, other: object) -> SetValue:
        return self._arith("+", other, swapped=False)

    def __radd__(self, other: object) -> SetValue:
        return self._arith("+", other, swapped=True)

    def __sub__(self, other: object) -> SetValue:
        return self._arith("-", other, swapped=False)

    def __rsub__(self, other: object) -> SetValue:
        return self._arith("-", other, swapped=True)


_SetTerm: TypeAlias = "_PathOp | _ValueOp | SetValue"


class _IfNotExists(_Node, SetValue):
    __slots__ = ("default", "path")
    path: Path
    default: _SetTerm

    def _render(self, ph: Placeholders) -> str:
        return f"if_not_exists({_render_path(self.path, ph)}, {self.default._render(ph)})"


class _ListAppend(_Node, SetValue):
    __slots__ = ("first", "second")
    first: _SetTerm
    second: _SetTerm

    def _render(self, ph: Placeholders) -> str:
        return f"list_append({self.first._render(ph)}, {self.second._render(ph)})"


class _Arith(_Node, SetValue):
    __slots__ = ("left", "op", "right")
    op: str
    left: _SetTerm
    right: _SetTerm

    def _render(self, ph: Placeholders) -> str:
        return f"{self.left._render(ph)} {self.op} {self.right._render(ph)}"


class UpdateAction:
    """One action of an update expression; build them with `FieldRef` methods.

    Attributes:
        path: the document path the action writes.
        label: how error messages name that path.
    """

    __slots__ = ()
    clause: ClassVar[str]
    path: Path
    label: str

    def _render(self, ph: Placeholders) -> str:
        raise NotImplementedError


class _SetAction(_Node, UpdateAction):
    __slots__ = ("label", "path", "value")
    path: Path
    label: str
    value: _SetTerm
    clause: ClassVar[str] = "SET"

    def _render(self, ph: Placeholders) -> str:
        return f"{_render_path(self.path, ph)} = {self.value._render(ph)}"


class _RemoveAction(_Node, UpdateAction):
    __slots__ = ("label", "path")
    path: Path
    label: str
    clause: ClassVar[str] = "REMOVE"

    def _render(self, ph: Placeholders) -> str:
        return _render_path(self.path, ph)


class _AddAction(_Node, UpdateAction):
    __slots__ = ("av", "label", "path")
    path: Path
    label: str
    av: AttributeValue
    clause: ClassVar[str] = "ADD"

    def _render(self, ph: Placeholders) -> str:
        return f"{_render_path(self.path, ph)} {ph.value(self.av)}"


class _DeleteAction(_Node, UpdateAction):
    __slots__ = ("av", "label", "path")
    path: Path
    label: str
    av: AttributeValue
    clause: ClassVar[str] = "DELETE"

    def _render(self, ph: Placeholders) -> str:
        return f"{_render_path(self.path, ph)} {ph.value(self.av)}"


_CLAUSES = ("SET", "REMOVE", "ADD", "DELETE")


def _check_overlaps(actions: Sequence[UpdateAction]) -> None:
    targets: dict[Path, str] = {}
    prefixes: dict[Path, str] = {}  # every proper prefix of a target -> that target's label
    for action in actions:
        if not isinstance(action, UpdateAction):
            raise ExpressionError(f"expected an UpdateAction, got {type(action).__name__}")
        path, label = action.path, action.label
        other = targets.get(path) or prefixes.get(path)
        if other is None:
            for i in range(1, len(path)):
                other = targets.get(path[:i])
                if other is not None:
                    break
        if other is not None:
            pair = f"{label} twice" if other == label else f"{other} and {label}"
            raise ExpressionError(
                f"two update actions write overlapping paths ({pair}): DynamoDB rejects "
                "an update whose document paths overlap; merge them into one action"
            )
        targets[path] = label
        for i in range(1, len(path)):
            prefixes.setdefault(path[:i], label)


def render_update(actions: Sequence[UpdateAction], ph: Placeholders) -> str:
    """Renders update actions as one update expression, grouped by clause.

    Clauses come in the order SET, REMOVE, ADD, DELETE; actions keep their order within a
    clause, e.g. ``"SET #n0 = :v0, #n1 = #n1 + :v1 REMOVE #n2 ADD #n3 :v2"``.

    Raises:
        ExpressionError: no actions, or two actions write the same or overlapping paths.
    """
    if not actions:
        raise ExpressionError("an update needs at least one action")
    _check_overlaps(actions)
    grouped: dict[str, list[UpdateAction]] = {clause: [] for clause in _CLAUSES}
    for action in actions:
        grouped[action.clause].append(action)
    parts = []
    for clause in _CLAUSES:
        members = grouped[clause]
        if members:
            parts.append(f"{clause} {', '.join(a._render(ph) for a in members)}")
    return " ".join(parts)


def plain_set_value(action: UpdateAction) -> AttributeValue | None:
    """The value a ``SET path = value`` action writes, when it is a plain value.

    ``None`` for every other action: a REMOVE, ADD or DELETE, or a SET whose value is
    computed (another path, ``if_not_exists``, ``list_append``, arithmetic).
    """
    if isinstance(action, _SetAction) and isinstance(action.value, _ValueOp):
        return action.value.av
    return None


def update_paths(actions: Iterable[UpdateAction]) -> set[str]:
    """Returns the top-level attribute names that update actions write.

    Attributes only read by an action (``set(other_ref)``, ``if_not_exists``) are not
    included: the set answers "which stored attributes can this update change".
    """
    return {str(action.path[0]) for action in actions}


# --------------------------------------------------------------------------- projections


def render_projection(paths: Sequence[FieldRef[Any] | Path | str], ph: Placeholders) -> str:
    """Renders a projection expression.

    A ``str`` is one top-level attribute name, never a dotted path (``"a.b"`` names the
    attribute called ``a.b``); use a tuple or a `FieldRef` for nested paths. Duplicates are
    dropped, and a path inside another requested path is dropped too (DynamoDB rejects
    overlapping projection paths, and the outer path already returns it).

    Raises:
        ExpressionError: no paths, or a malformed path.
    """
    if not paths:
        raise ExpressionError("a projection needs at least one attribute")
    normalised: list[Path] = []
    for entry in paths:
        if isinstance(entry, FieldRef):
            normalised.append(entry.path)
        elif isinstance(entry, str):
            normalised.append((_check_step(entry, repr(entry)),))
        elif isinstance(entry, tuple):
            normalised.append(_check_path(entry))
        else:
            raise ExpressionError(
                f"a projection takes FieldRefs, path tuples or names, got {type(entry).__name__}"
            )
    kept = set(normalised)
    out: list[str] = []
    seen: set[Path] = set()
    for path in normalised:
        if path in seen or any(path[:i] in kept for i in range(1, len(path))):
            continue
        seen.add(path)
        out.append(_render_path(path, ph))
    return ", ".join(out)


def _check_path(path: tuple[object, ...]) -> Path:
    label = _label_of(tuple(s for s in path if isinstance(s, (str, int)))) or repr(path)
    if not path:
        raise ExpressionError("a document path needs at least one step")
    if not isinstance(path[0], str):
        raise ExpressionError(
            f"{label}: a document path starts with a top-level attribute name (str), "
            f"got {path[0]!r}"
        )
    return tuple(_check_step(step, label) for step in path)


# --------------------------------------------------------------------------- field refs


class FieldRef(_Comparable[T]):
    """A typed reference to an attribute path, such as ``Event.f.ts`` or ``Event.f.meta["k"][0]``.

    ``T`` is the Python type of the attribute's values (``Order.f.total`` is a
    ``FieldRef[Decimal]`` with the ``singletable.mypy`` plugin): comparisons, ``between``,
    ``is_in``, ``set``, ``add``, ``append`` and friends take values of that type.

    Comparison operators build `Condition` objects (so a `FieldRef` is unhashable); the
    other methods build conditions or `UpdateAction` values. Values are converted with
    ``to_av``; ``contains``, and sub-paths, use ``element_to_av`` when it is given.

    Args:
        path: the document path; it starts with a top-level attribute name.
        to_av: converts a value of this attribute into an AttributeValue.
        element_to_av: converts one element (of a list, set or map) of this attribute.
            Sub-references (``ref["k"]``, ``ref[0]``) use it as their ``to_av``; without it
            they inherit this reference's ``to_av``.
        label: how error messages name the path, e.g. ``"AuditEvent.ts"``; defaults to the
            path itself.
        none_is_missing: the attribute stores ``None`` by being absent (a top-level
            optional field), so ``== None`` means ``attribute_not_exists`` and ``!= None``
            ``attribute_exists``; a ``NULL`` comparison would never match such an item.
    """

    __slots__ = ("element_to_av", "label", "none_is_missing", "path", "to_av")

    def __init__(
        self,
        path: Path,
        to_av: ValueConverter,
        *,
        element_to_av: ValueConverter | None = None,
        label: str | None = None,
        none_is_missing: bool = False,
    ) -> None:
        self.path: Path = _check_path(tuple(path))
        self.to_av = to_av
        self.element_to_av = element_to_av
        self.label: str = label if label is not None else _label_of(self.path)
        self.none_is_missing = none_is_missing

    def __eq__(self, other: T | FieldRef[Any] | SizeOperand | None) -> Condition:  # type: ignore[override]
        if other is None and self.none_is_missing:
            return self.not_exists()
        return super().__eq__(other)

    def __ne__(self, other: T | FieldRef[Any] | SizeOperand | None) -> Condition:  # type: ignore[override]
        if other is None and self.none_is_missing:
            return self.exists()
        return super().__ne__(other)

    def __repr__(self) -> str:
        return f"FieldRef({self.label!r})"

    def __getitem__(self, step: str | int) -> FieldRef[Any]:
        """A sub-path: a map key (str) or a list index (int)."""
        step = _check_step(step, self.label)
        if isinstance(step, int):
            label = f"{self.label}[{step}]"
        elif _is_identifier(step):
            label = f"{self.label}.{step}"
        else:
            label = f"{self.label}[{step!r}]"
        return FieldRef((*self.path, step), self.element_to_av or self.to_av, label=label)

    def __iter__(self) -> Iterator[Any]:
        # Without this, __getitem__ would make `list(ref)` / `x in ref` loop forever.
        raise ExpressionError(
            f"{self.label} is an attribute reference, not a collection: use "
            ".contains(x) or .is_in(*xs) to build a condition"
        )

    # ------------------------------------------------------------------ comparisons

    def _lhs(self) -> _Operand:
        return _PathOp(self.path, self.label)

    def _convert(self, value: object) -> AttributeValue:
        return self.to_av(value)

    @property
    def _label(self) -> str:
        return self.label

    def between(
        self, lo: T | FieldRef[Any] | SizeOperand, hi: T | FieldRef[Any] | SizeOperand
    ) -> Condition:
        """``self BETWEEN lo AND hi`` (both bounds inclusive).

        Raises:
            ExpressionError: the bounds are values of different kinds, or ``lo > hi``.
        """
        # Only re-declared so that type checkers name FieldRef, not its private base.
        return super().between(lo, hi)

    def is_in(self, *values: T | FieldRef[Any]) -> Condition:
        """``self IN (v1, v2, ...)``, with 1 to 100 values.

        Raises:
            ExpressionError: no value or more than 100 (DynamoDB's limit for IN).
        """
        if not values or len(values) > MAX_IN_VALUES:
            raise ExpressionError(
                f"{self.label}: is_in() takes 1 to {MAX_IN_VALUES} values (DynamoDB's IN "
                f"limit), got {len(values)}"
                + ("; split the values over several or_()-ed conditions" if values else "")
            )
        return _In(self._lhs(), tuple(_operand(v, self.to_av, self.label) for v in values))

    def begins_with(self, prefix: str) -> Condition:
        """``begins_with(self, prefix)``; the prefix is sent as a string as given.

        Raises:
            ExpressionError: the prefix is not a ``str``.
        """
        if not isinstance(prefix, str):
            raise ExpressionError(
                f"{self.label}: begins_with() needs a str prefix, got {type(prefix).__name__}"
            )
        return _Function("begins_with", (self._lhs(), _ValueOp({"S": prefix})))

    def contains(self, value: object) -> Condition:
        """``contains(self, value)``: a substring of a string, or an element of a set or list."""
        convert = self.element_to_av or self.to_av
        return _Function("contains", (self._lhs(), _operand(value, convert, self.label)))

    def exists(self) -> Condition:
        """``attribute_exists(self)``."""
        return _Function("attribute_exists", (self._lhs(),))

    def not_exists(self) -> Condition:
        """``attribute_not_exists(self)``."""
        return _Function("attribute_not_exists", (self._lhs(),))

    def attribute_type(self, t: AttributeTypeName) -> Condition:
        """``attribute_type(self, t)``.

        Raises:
            ExpressionError: ``t`` is not one of DynamoDB's type names.
        """
        if t not in _ATTRIBUTE_TYPES:
            raise ExpressionError(
                f"{self.label}: attribute_type() takes one of {sorted(_ATTRIBUTE_TYPES)}, got {t!r}"
            )
        return _Function("attribute_type", (self._lhs(), _ValueOp({"S": t})))

    def size(self) -> SizeOperand:
        """``size(self)``, to compare with a number."""
        return SizeOperand(self)

    # ------------------------------------------------------------------ updates

    def _set_value(self, value: object) -> AttributeValue:
        if isinstance(value, (set, frozenset)) and not value:
            raise ExpressionError(
                f"{self.label}: DynamoDB rejects empty sets; use remove() to clear the attribute"
            )
        for bad in (Condition, UpdateAction, SizeOperand):
            if isinstance(value, bad):
                raise ExpressionError(
                    f"{self.label}: a {bad.__name__} cannot be used as a value in an update"
                )
        av = self.to_av(value)
        kind, inner = _single(av, self.label)
        if kind in _SET_TYPES and not inner:
            raise ExpressionError(
                f"{self.label}: DynamoDB rejects empty sets; use remove() to clear the attribute"
            )
        return av

    def _term(self, value: object) -> _SetTerm:
        if isinstance(value, FieldRef):
            return _PathOp(value.path, value.label)
        if isinstance(value, SetValue):
            return value
        return _ValueOp(self._set_value(value))

    def set(self, value: T | FieldRef[Any] | SetValue) -> UpdateAction:
        """``SET self = value``; the value may be another `FieldRef` or a `SetValue`.

        Raises:
            ExpressionError: the value is an empty set (use `remove` instead).
        """
        return _SetAction(self.path, self.label, self._term(value))

    def remove(self) -> UpdateAction:
        """``REMOVE self`` (deletes the attribute, or the list element at an index)."""
        return _RemoveAction(self.path, self.label)

    def _top_level_only(self, action: str) -> None:
        # The UpdateItem API reference states "ADD/DELETE can only be used on top-level
        # attributes, not nested attributes"; refuse here rather than at the server.
        if len(self.path) > 1:
            hint = (
                "use increment()/decrement() (SET arithmetic) for a nested counter"
                if action == "add"
                else "rewrite the nested set with set()"
            )
            raise ExpressionError(
                f"{self.label}: {action}() works only on top-level attributes in DynamoDB; {hint}"
            )

    def add(self, value: T) -> UpdateAction:
        """``ADD self value``: add a number to a number, or elements to a set.

        A missing attribute starts from 0 or the empty set. Top-level attributes only.

        Raises:
            ExpressionError: a nested path, an empty set, or a value that is neither a number
                nor a set.
        """
        self._top_level_only("add")
        if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
            av = _number_av(value, self.label, "add()")
        else:
            av = self._set_value(value)
            if _single(av, self.label)[0] not in _SET_TYPES:
                raise ExpressionError(
                    f"{self.label}: add() takes a number or a set, got {type(value).__name__}"
                )
        return _AddAction(self.path, self.label, av)

    def delete(self, value: T) -> UpdateAction:
        """``DELETE self value``: remove elements from a set. Top-level attributes only.

        Raises:
            ExpressionError: a nested path, an empty set, or a value that is not a set.
        """
        self._top_level_only("delete")
        if isinstance(value, (set, frozenset)) and not value:
            raise ExpressionError(
                f"{self.label}: delete() of an empty set: DynamoDB rejects empty sets"
            )
        av = self._set_value(value)
        if _single(av, self.label)[0] not in _SET_TYPES:
            raise ExpressionError(
                f"{self.label}: delete() takes a set of elements to remove, "
                f"got {type(value).__name__}"
            )
        return _DeleteAction(self.path, self.label, av)

    def _list_value(self, values: object, method: str) -> _ValueOp:
        av = self.to_av(values)
        if _single(av, self.label)[0] != "L":
            raise ExpressionError(
                f"{self.label}: {method}() takes a list, and the converter gave {av!r}"
            )
        return _ValueOp(av)

    def append(self, values: T) -> UpdateAction:
        """``SET self = list_append(self, values)``: add elements at the end of a list."""
        return _SetAction(
            self.path, self.label, _ListAppend(self._lhs_term(), self._list_value(values, "append"))
        )

    def prepend(self, values: T) -> UpdateAction:
        """``SET self = list_append(values, self)``: add elements at the start of a list."""
        return _SetAction(
            self.path,
            self.label,
            _ListAppend(self._list_value(values, "prepend"), self._lhs_term()),
        )

    def _lhs_term(self) -> _PathOp:
        return _PathOp(self.path, self.label)

    def increment(self, n: int | float | Decimal = 1) -> UpdateAction:
        """``SET self = self + n``. The attribute must exist; else see `if_not_exists`."""
        av = _number_av(n, self.label, "increment()")
        return _SetAction(self.path, self.label, _Arith("+", self._lhs_term(), _ValueOp(av)))

    def decrement(self, n: int | float | Decimal = 1) -> UpdateAction:
        """``SET self = self - n``. The attribute must exist; else see `if_not_exists`."""
        av = _number_av(n, self.label, "decrement()")
        return _SetAction(self.path, self.label, _Arith("-", self._lhs_term(), _ValueOp(av)))

    def if_not_exists(self, default: T | FieldRef[Any] | SetValue) -> SetValue:
        """``if_not_exists(self, default)``, for use in `set`.

        ``ref.set(ref.if_not_exists(now))`` writes only when absent, and
        ``ref.set(ref.if_not_exists(0) + 1)`` is a counter that may start missing.
        """
        return _IfNotExists(self.path, self._term(default))
