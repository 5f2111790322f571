"""The leaves of expression trees (an attribute path, its size, a value) and the node base.

The expression modules build on each other in one direction: `paths`, then `operands`,
then `conditions` and `updates`, then `fields` (the `FieldRef` that builds them all), then
`projections`. Names with a leading underscore are private to the expressions package:
the node classes keep them because their reprs show them.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from decimal import Decimal
from typing import Any, ClassVar, NoReturn, TypeAlias

from typing_extensions import dataclass_transform

from singletable.attributes.numbers import number_text
from singletable.errors import ExpressionError, ItemEncodeError
from singletable.expressions.paths import Path, Placeholders, _render_path
from singletable.types import AttributeValue


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


# benchmarks/bench_micro.py nodes: import singletable 0.74-0.88x the frozen-dataclass
# version (best 38.6 -> 31.1 ms), build + render 0.84-0.94x (6 runs, paired medians).
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


class _Reference:
    """A reference to an attribute path, as the modules below `fields` know a `FieldRef`.

    SET arithmetic (`updates`) takes another attribute as an operand; `FieldRef` is built
    on `updates`, so `updates` recognises it by this base (which only `FieldRef` has).
    """

    __slots__ = ()
    path: Path
    label: str


def _single(av: AttributeValue, label: str) -> tuple[str, Any]:
    if not isinstance(av, dict) or len(av) != 1:
        raise ExpressionError(f"{label}: the converter returned {av!r}, not an AttributeValue")
    return next(iter(av.items()))
