"""Update actions (SET, REMOVE, ADD, DELETE) and the update expression they render into."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar, TypeAlias

from singletable.errors import ExpressionError
from singletable.expressions.operands import _Node, _number_av, _PathOp, _Reference, _ValueOp
from singletable.expressions.paths import Path, Placeholders, _render_path
from singletable.types import AttributeValue

__all__ = [
    "SetValue",
    "UpdateAction",
    "plain_set_value",
    "render_update",
    "update_paths",
]


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
        if isinstance(other, _Reference):
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
