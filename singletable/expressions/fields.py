"""`FieldRef`: a typed reference to an attribute path, which builds conditions and updates.

Comparison operators and methods on a `FieldRef` (and on the `SizeOperand` of its
``size()``) convert their values with the reference's converter and build the immutable
trees of `conditions` and `updates`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from decimal import Decimal, InvalidOperation
from typing import Any, Generic, Literal, NoReturn, TypeAlias, TypeVar

from singletable.errors import ExpressionError
from singletable.expressions.absence import Absences, settle_absence
from singletable.expressions.conditions import (
    Condition,
    _Between,
    _Compare,
    _Function,
    _In,
    not_,
    or_,
)
from singletable.expressions.operands import (
    _number_av,
    _Operand,
    _PathOp,
    _Reference,
    _single,
    _SizeOp,
    _ValueOp,
)
from singletable.expressions.paths import (
    Path,
    ValueConverter,
    _check_path,
    _check_step,
    _is_identifier,
    _label_of,
)
from singletable.expressions.updates import (
    SetValue,
    UpdateAction,
    _AddAction,
    _Arith,
    _DeleteAction,
    _IfNotExists,
    _ListAppend,
    _RemoveAction,
    _SetAction,
    _SetTerm,
)
from singletable.types import AttributeValue

__all__ = [
    "AttributeTypeName",
    "FieldRef",
    "SizeOperand",
]


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


def _absences(*sides: object) -> Absences:
    """What the missing attribute of each reference among ``sides`` reads as, where known."""
    absent: dict[Path, AttributeValue] = {}
    for side in sides:
        ref = side.ref if isinstance(side, SizeOperand) else side
        if isinstance(ref, FieldRef) and ref.absent is not None:
            absent[ref.path] = ref.absent
    return absent


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
        atom = _Compare(op, self._lhs(), _operand(other, self._convert, self._label))
        return settle_absence(atom, _absences(self, other))

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
        return settle_absence(_Between(self._lhs(), lo_op, hi_op), _absences(self, lo, hi))


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


class FieldRef(_Comparable[T], _Reference):
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
            optional field): short for ``absent={"NULL": True}``.
        absent: what a missing attribute reads as, in stored form (a field's default):
            conditions then answer on a missing attribute what they answer on that value
            (``== default`` matches it, ``!= default`` does not, ``== None`` matches both
            a missing attribute and a stored ``NULL`` when the default is ``None``).
    """

    __slots__ = ("absent", "element_to_av", "label", "none_is_missing", "path", "to_av")
    path: Path
    to_av: ValueConverter
    element_to_av: ValueConverter | None
    label: str
    none_is_missing: bool
    absent: AttributeValue | None

    def __init__(
        self,
        path: Path,
        to_av: ValueConverter,
        *,
        element_to_av: ValueConverter | None = None,
        label: str | None = None,
        none_is_missing: bool = False,
        absent: AttributeValue | None = None,
    ) -> None:
        # Set once: an entity's references are shared (``Order.f.total`` is built once per
        # class), so a reference is immutable like every builder.
        init = object.__setattr__
        checked = _check_path(tuple(path))
        init(self, "path", checked)
        init(self, "to_av", to_av)
        init(self, "element_to_av", element_to_av)
        init(self, "label", label if label is not None else _label_of(checked))
        init(self, "none_is_missing", none_is_missing)
        init(self, "absent", {"NULL": True} if absent is None and none_is_missing else absent)

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"{self!r} is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"{self!r} is immutable: cannot delete {name!r}")

    def __reduce__(self) -> tuple[Callable[..., FieldRef[Any]], tuple[object, ...]]:
        # copy rebuilds a reference from its fields: restoring slots goes through the
        # refusing __setattr__.
        fields = (self.path, self.to_av, self.element_to_av, self.label)
        return _field_ref, (*fields, self.none_is_missing, self.absent)

    def __eq__(self, other: T | FieldRef[Any] | SizeOperand | None) -> Condition:  # type: ignore[override]
        if other is None:
            return self._is_none()
        return super().__eq__(other)

    def __ne__(self, other: T | FieldRef[Any] | SizeOperand | None) -> Condition:  # type: ignore[override]
        if other is None:
            return not_(self._is_none())
        return super().__ne__(other)

    def _is_none(self) -> Condition:
        # What reads as None: a stored NULL, and a missing attribute where that reads as
        # None. attribute_type, not `= NULL`: moto answers `= NULL` true on a missing one.
        stored_null = self.attribute_type("NULL")
        if self.absent == {"NULL": True}:
            return or_(self.not_exists(), stored_null)
        return stored_null

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
        atom = _In(self._lhs(), tuple(_operand(v, self.to_av, self.label) for v in values))
        return settle_absence(atom, _absences(self, *values))

    def begins_with(self, prefix: str) -> Condition:
        """``begins_with(self, prefix)``; the prefix is sent as a string as given.

        Raises:
            ExpressionError: the prefix is not a ``str``.
        """
        if not isinstance(prefix, str):
            raise ExpressionError(
                f"{self.label}: begins_with() needs a str prefix, got {type(prefix).__name__}"
            )
        atom = _Function("begins_with", (self._lhs(), _ValueOp({"S": prefix})))
        return settle_absence(atom, _absences(self))

    def contains(self, value: object) -> Condition:
        """``contains(self, value)``: a substring of a string, or an element of a set or list."""
        convert = self.element_to_av or self.to_av
        atom = _Function("contains", (self._lhs(), _operand(value, convert, self.label)))
        return settle_absence(atom, _absences(self))

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


def _field_ref(
    path: Path,
    to_av: ValueConverter,
    element_to_av: ValueConverter | None,
    label: str,
    none_is_missing: bool,
    absent: AttributeValue | None,
) -> FieldRef[Any]:
    """`FieldRef.__reduce__`'s rebuild: the constructor's keyword arguments, positionally."""
    return FieldRef(
        path,
        to_av,
        element_to_av=element_to_av,
        label=label,
        none_is_missing=none_is_missing,
        absent=absent,
    )
