"""Conditions on attributes whose absence reads as a value: a field's default.

DynamoDB answers a comparison with a missing attribute false (``<>`` true). An entity
field with a default reads a missing attribute as that default (``None`` included), so
``state == "open"`` must match the item whose ``state`` was removed, and ``state != "open"``
must not. `settle_absence` rewrites one atom (a comparison, ``BETWEEN``, ``IN``,
``begins_with`` or ``contains``) so that the server's answer equals the answer on the value
a read returns: it evaluates the atom here on the stored form of what the absence reads as,
and adds the absent case (``attribute_not_exists(a) OR atom``) or takes it out
(``attribute_exists(a) AND atom``) where the server would answer otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from itertools import product
from typing import Any

from singletable.expressions.conditions import (
    Condition,
    _Between,
    _Compare,
    _Function,
    _In,
    and_,
    or_,
)
from singletable.expressions.operands import _Operand, _PathOp, _ValueOp
from singletable.expressions.paths import Path
from singletable.types import AttributeValue

#: Each reference's path and what its missing attribute reads as, in stored form.
Absences = Mapping[Path, AttributeValue]

_SETS = {"SS": "S", "NS": "N", "BS": "B"}


def settle_absence(atom: Condition, absent: Absences) -> Condition:
    """``atom``, answering on a missing attribute of ``absent`` what its read value answers.

    Args:
        atom: a comparison, ``BETWEEN``, ``IN`` or function condition, as built.
        absent: the atom's attribute paths whose absence reads as a known value.
    """
    labels = {op.path: op.label for op in _operands(atom) if not isinstance(op, _ValueOp)}
    paths = [p for p in labels if p in absent]
    if not paths:
        return atom
    # The server answers an atom with a missing operand false, but `<>` true.
    negative = isinstance(atom, _Compare) and atom.op == "<>"

    def exists(path: Path) -> Condition:
        return _Function("attribute_exists", (_PathOp(path, labels[path]),))

    def not_exists(path: Path) -> Condition:
        return _Function("attribute_not_exists", (_PathOp(path, labels[path]),))

    if len(paths) == 1:
        (path,) = paths
        answer = _substitute(atom, {path: absent[path]})
        if answer is negative:
            return atom
        if answer is True:
            return or_(not_exists(path), atom)
        if answer is False:
            return and_(exists(path), atom)
    present = [exists(p) for p in paths] if negative else []
    cases = [and_(*present, atom)]
    for mask in product((False, True), repeat=len(paths)):
        gone = {p: absent[p] for p, missing in zip(paths, mask, strict=True) if missing}
        if not gone:
            continue
        rest = _substitute(atom, gone)
        if rest is False:
            continue
        guards = [not_exists(p) for p in gone]
        if negative:
            guards += [exists(p) for p in paths if p not in gone]
        cases.append(and_(*guards) if rest is True else and_(*guards, rest))
    return or_(*cases)


def _operands(atom: Condition) -> tuple[_Operand, ...]:
    if isinstance(atom, _Compare):
        return (atom.lhs, atom.rhs)
    if isinstance(atom, _Between):
        return (atom.operand, atom.lo, atom.hi)
    if isinstance(atom, _In):
        return (atom.operand, *atom.values)
    if (
        isinstance(atom, _Function)
        and atom.name in ("begins_with", "contains")
        and isinstance(atom.args[1], _ValueOp)
    ):
        # contains(a, b) of two attributes stays as sent: a function's first argument
        # must be an attribute, so a missing `a` cannot be replaced by its value.
        return atom.args[:1]
    return ()


def _substitute(atom: Condition, values: Absences) -> Condition | bool:
    """``atom`` with the paths of ``values`` replaced by them: a bool when no path is left."""
    ops: list[_Operand | None] = []
    for op in _operands(atom):
        if isinstance(op, _ValueOp) or op.path not in values:
            ops.append(op)
        elif isinstance(op, _PathOp):
            ops.append(_ValueOp(values[op.path]))
        else:
            size = _size(values[op.path])
            ops.append(None if size is None else _ValueOp({"N": str(size)}))
    if any(op is None for op in ops):
        return False  # size() of a value that has none: the server answers false
    settled = [op for op in ops if op is not None]
    if not all(isinstance(op, _ValueOp) for op in settled):
        ordering = isinstance(atom, _Between) or (
            isinstance(atom, _Compare) and atom.op not in ("=", "<>")
        )
        if ordering and any(isinstance(op, _ValueOp) and _order(op.av) is None for op in ops):
            # DynamoDB refuses to order a NULL, BOOL or document value (and answers false
            # on a stored one).
            return False
        return _rebuild(atom, settled)
    avs = [op.av for op in settled if isinstance(op, _ValueOp)]
    return _evaluate(atom, avs)


def _rebuild(atom: Condition, ops: list[_Operand]) -> Condition:
    if isinstance(atom, _Compare):
        return _Compare(atom.op, ops[0], ops[1])
    if isinstance(atom, _Between):
        return _Between(ops[0], ops[1], ops[2])
    assert isinstance(atom, _In)
    return _In(ops[0], tuple(ops[1:]))


def _evaluate(atom: Condition, avs: list[AttributeValue]) -> bool:
    """What DynamoDB answers for ``atom`` over stored values ``avs`` (its operands in order)."""
    if isinstance(atom, _Compare):
        return _compare(atom.op, avs[0], avs[1])
    if isinstance(atom, _Between):
        return _compare(">=", avs[0], avs[1]) and _compare("<=", avs[0], avs[2])
    if isinstance(atom, _In):
        return any(_equal(avs[0], v) for v in avs[1:])
    assert isinstance(atom, _Function)
    (kind, value), (arg_kind, arg) = _one(avs[0]), _one(atom.args[1].av)  # type: ignore[union-attr]
    if atom.name == "begins_with":
        return kind == arg_kind and kind in ("S", "B") and value.startswith(arg)
    if kind == "S":
        return arg_kind == "S" and arg in value
    if kind in _SETS:
        return arg_kind == _SETS[kind] and any(
            _equal({arg_kind: e}, {arg_kind: arg}) for e in value
        )
    if kind == "L":
        return any(_equal(e, {arg_kind: arg}) for e in value)
    return False


def _one(av: AttributeValue) -> tuple[str, Any]:
    return next(iter(av.items()))


def _equal(a: AttributeValue, b: AttributeValue) -> bool:
    (ta, va), (tb, vb) = _one(a), _one(b)
    if ta != tb:
        return False
    if ta == "N":
        return Decimal(va) == Decimal(vb)
    if ta == "NS":
        return {Decimal(x) for x in va} == {Decimal(x) for x in vb}
    if ta in _SETS:
        return set(va) == set(vb)
    if ta == "L":
        return len(va) == len(vb) and all(_equal(x, y) for x, y in zip(va, vb, strict=True))
    if ta == "M":
        return va.keys() == vb.keys() and all(_equal(va[k], vb[k]) for k in va)
    return bool(va == vb)


def _order(av: AttributeValue) -> tuple[str, Any] | None:
    kind, value = _one(av)
    if kind == "N":
        return kind, Decimal(value)
    if kind == "S":
        return kind, value.encode("utf-8", "surrogatepass")  # DynamoDB orders UTF-8 bytes
    if kind == "B":
        return kind, bytes(value)
    return None


def _compare(op: str, a: AttributeValue, b: AttributeValue) -> bool:
    if op in ("=", "<>"):
        return _equal(a, b) is (op == "=")
    left, right = _order(a), _order(b)
    if left is None or right is None or left[0] != right[0]:
        return False
    x, y = left[1], right[1]
    return bool({"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op])


def _size(av: AttributeValue) -> int | None:
    kind, value = _one(av)
    if kind == "S":
        return len(value.encode("utf-8", "surrogatepass"))
    if kind in ("B", "L", "M", *_SETS):
        return len(value)
    return None
