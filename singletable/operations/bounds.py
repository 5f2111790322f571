"""Key conditions of entity queries: the partition key text and the sort key bounds.

Sort-key conditions are expressed on the typed fields of the sort-key template and become
key conditions whose bounds end on segment boundaries:

* equality on the leading fields -> ``begins_with(SK, "EVT#<ts>#")``;
* ``between(ts=(a, b))`` -> every item whose ``ts`` is in ``[a, b]`` whatever its ``seq``;
* ``gt(ts=x)`` excludes every item at exactly ``x``; ``le`` includes them all;
* the entity's literal prefix keeps other entity types out of the read.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal

from singletable.errors import KeyEncodeError, QueryError

if TYPE_CHECKING:
    from singletable.keys.templates import KeyTemplate
    from singletable.model.plan import EntityPlan, KeyPlan

__all__ = ["KeyCondition", "SortRange", "partition_key_text", "sort_key_condition"]

#: A query's one sort key range: the operator and its arguments, ``(field name, *bounds)``.
SortRange = tuple[str, tuple[Any, ...]]


class KeyCondition:
    """The sort key part of a key condition: an operator and its key texts (or numbers)."""

    # A plain class: a dataclass costs ~0.3 ms of import time to generate (issue 13).
    __slots__ = ("exclude", "op", "values")

    def __init__(
        self,
        op: Literal["eq", "begins_with", "between", "lt", "le", "gt", "ge"],
        values: tuple[str, ...],
        exclude: str | None = None,
    ) -> None:
        self.op = op
        self.values = values
        #: A key that satisfies the key condition but not the requested strict ``<``.
        self.exclude = exclude

    def __repr__(self) -> str:
        # Cursor fingerprints hash this text: it stays the dataclass repr it was (under the
        # class's former name), so that cursors handed out before still resume their query.
        return f"_KeyCondition(op={self.op!r}, values={self.values!r}, exclude={self.exclude!r})"


def partition_key_text(plan: EntityPlan, key_plan: KeyPlan, values: Mapping[str, Any]) -> str:
    """The partition key text of ``key_plan`` from field ``values`` (every pk field needed)."""
    missing = [f for f in key_plan.pk.fields if f not in values]
    if missing:
        where = "the table" if key_plan.index is None else f"index {key_plan.index!r}"
        raise QueryError(
            f"{plan.label}: a query on {where} needs the partition key field "
            f"{missing[0]!r} (template {key_plan.pk.source!r})"
        )
    return key_plan.pk.format(values)


def sort_key_condition(
    label: str,
    sk: KeyTemplate | None,
    values: Mapping[str, Any],
    count: int,
    sort_range: SortRange | None,
) -> KeyCondition | None:
    """The sort key condition sent, every operand a valid, sendable key value.

    DynamoDB refuses an empty string and text over the sort key limit (1,024 bytes)
    as a key condition operand. An empty bound (the first field of a template that
    starts with a field, at an empty value) is rewritten to the same selection;
    an oversized one is refused, naming the condition and the limit.

    Args:
        label: the entity, as error messages name it.
        sk: the sort key template of the key queried (``None``: no sort key).
        values: the field values given to the query.
        count: how many leading sort key fields ``values`` fixes.
        sort_range: the query's range on the next field, if any.

    Raises:
        KeyEncodeError: a value cannot be encoded (`KeyTooLargeError` included), the
            type partition key values raise too.
        QueryError: the range cannot apply to this sort key (bounds out of order, a
            ``begins_with`` on a Number).
    """
    condition = _unchecked_condition(label, sk, values, count, sort_range)
    if condition is None or "" not in condition.values:
        pass
    elif condition.op in ("ge", "begins_with"):
        return None  # every key is >= "" and starts with ""
    elif condition.op == "between":
        condition = KeyCondition("le", condition.values[1:], condition.exclude)
    elif condition.op == "lt":
        # No key is below "": no non-empty key is below "\x00" either.
        condition = KeyCondition("lt", ("\x00",), condition.exclude)
    if condition is not None and sk is not None and sk.key_type == "S":
        if sort_range is None:
            what = "the sort key condition"
        else:
            op, args = sort_range
            what = f"the bound of {op}({args[0]}=...)"
        for value in condition.values:
            sk.check_size(value, what)
    return condition


def _unchecked_condition(
    label: str,
    sk: KeyTemplate | None,
    values: Mapping[str, Any],
    count: int,
    sort_range: SortRange | None,
) -> KeyCondition | None:
    if sk is None:
        return None
    if count == len(sk.fields):
        return KeyCondition("eq", (sk.format(values),))
    prefix = sk.prefix(values, count)
    if sort_range is None:
        return KeyCondition("begins_with", (prefix,)) if prefix else None
    op, args = sort_range
    name = sk.fields[count]
    if sk.key_type == "N":
        return _number_bounds(label, sk, name, op, args)
    if op == "begins_with":
        partial = args[1]
        if not isinstance(partial, str):
            raise KeyEncodeError(f"{label}: begins_with({name}=...) takes a str, got {partial!r}")
        return KeyCondition("begins_with", (sk.partial_prefix(values, count, partial),))
    return _text_bounds(label, sk, values, count, prefix, op, args)


def _number_bounds(
    label: str, sk: KeyTemplate, name: str, op: str, args: tuple[Any, ...]
) -> KeyCondition:
    # DynamoDB compares a Number sort key numerically: the bounds are the numbers
    # themselves, never key text with a delimiter sentinel.
    if op == "begins_with":
        raise QueryError(
            f"{label}: begins_with({name}=...) needs a string sort key; "
            f"{sk.attribute!r} is a Number"
        )
    numbers = tuple(sk.format({name: v}) for v in args[1:])
    if op == "between" and Decimal(numbers[0]) > Decimal(numbers[1]):
        raise QueryError(
            f"{label}: between({name}=...): the low bound {args[1]!r} is "
            f"above the high bound {args[2]!r}"
        )
    return KeyCondition(op, numbers)  # type: ignore[arg-type]


def _text_bounds(
    label: str,
    sk: KeyTemplate,
    values: Mapping[str, Any],
    count: int,
    prefix: str,
    op: str,
    args: tuple[Any, ...],
) -> KeyCondition:
    """The bounds of a range on a String sort key's next field, within the fixed prefix."""
    name = sk.fields[count]
    sentinel = sk.upper_sentinel
    upper = prefix[:-1] + sentinel if prefix else None

    def bound(value: Any) -> str:
        return sk.bound({**values, name: value}, count + 1)

    if op == "between":
        low, high = bound(args[1]), bound(args[2])
        if low > high:
            raise QueryError(
                f"{label}: between({name}=...): the low bound {args[1]!r} is "
                f"above the high bound {args[2]!r}"
            )
        return KeyCondition("between", (low, high + sentinel))
    value = bound(args[1])
    if op == "ge":
        return KeyCondition("between", (value, upper)) if upper else KeyCondition("ge", (value,))
    if op == "gt":
        low = value + sentinel
        return KeyCondition("between", (low, upper)) if upper else KeyCondition("gt", (low,))
    if op == "le":
        high = value + sentinel
        return KeyCondition("between", (prefix, high)) if prefix else KeyCondition("lt", (high,))
    # lt: keys below ``value`` within the prefix. DynamoDB has no "between, exclusive",
    # so the exact key ``value`` (at most one item) is read and dropped.
    if prefix:
        return KeyCondition("between", (prefix, value), exclude=value)
    return KeyCondition("lt", (value,))
