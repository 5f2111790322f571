"""DynamoDB's nesting limit (`singletable.attributes.size.check_nesting`) and the converters.

DynamoDB (and DynamoDB Local 3.3.0, tests/integration/test_limits.py) stores 31 levels of
lists and maps in an attribute, empty ones included, a set being a value and not a level.
The walk over a built attribute value and the converters that count levels as they go
must both refuse exactly the values deeper than that, at any depth without a
`RecursionError`.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings

from singletable.attributes.convert import (
    sized_list,
    sized_map,
    to_attribute_value,
    to_attribute_value_sized,
)
from singletable.attributes.size import MAX_NAME_BYTES, MAX_NESTING, check_nesting, long_name
from singletable.errors import ItemEncodeError, ItemTooDeepError
from tests.strategies import deep_values, nesting

TOO_DEEP = r"more than 31 levels deep"


def _wrapped(levels: int, leaf: Any, kind: str) -> Any:
    value = leaf
    for _ in range(levels):
        value = {"M": {"k": value}} if kind == "M" else {"L": [value]}
    return value


@pytest.mark.parametrize("kind", ["M", "L"])
@pytest.mark.parametrize(
    ("levels", "leaf", "stored"),
    [
        (31, {"S": "x"}, True),
        (32, {"S": "x"}, False),
        (30, {"M": {}}, True),  # an empty map is a level: 31 in all
        (31, {"M": {}}, False),
        (30, {"L": []}, True),
        (31, {"L": []}, False),
        (31, {"SS": ["a"]}, True),  # a set is not a level
        (31, {"NULL": True}, True),
        (5000, {"S": "x"}, False),
    ],
)
def test_the_walk_counts_levels_as_dynamodb_does(
    kind: str, levels: int, leaf: Any, stored: bool
) -> None:
    av = _wrapped(levels, leaf, kind)
    if stored:
        assert check_nesting(av, "T.f") is av
    else:
        with pytest.raises(ItemTooDeepError, match=r"^T\.f: .*" + TOO_DEEP):
            check_nesting(av, "T.f")


def _outcome(func: Any, *args: Any) -> str:
    try:
        func(*args)
    except ItemTooDeepError:
        return "refused"
    return "stored"


@settings(max_examples=300, deadline=None)
@given(deep_values(0, 40))
def test_the_converters_refuse_exactly_what_dynamodb_refuses(value: Any) -> None:
    expected = "stored" if nesting(value) <= MAX_NESTING else "refused"
    assert _outcome(to_attribute_value, value) == expected
    assert _outcome(to_attribute_value_sized, value) == expected
    if isinstance(value, dict):
        assert _outcome(sized_map, value, "T.f") == expected
    if isinstance(value, list):
        assert _outcome(sized_list, value, "T.f") == expected
    if expected == "stored":
        av = to_attribute_value(value)
        assert to_attribute_value_sized(value)[0] == av
        assert check_nesting(av, "T.f") is av
    else:
        # The walk refuses what the converter builds when given no limit.
        with pytest.raises(ItemTooDeepError, match=TOO_DEEP):
            check_nesting(to_attribute_value(value, room=10**6), "T.f")


def test_a_value_of_any_depth_is_refused_not_a_recursion_error() -> None:
    value: Any = "leaf"
    for level in range(20_000):
        value = {"k": value} if level % 2 else [value]
    for convert in (to_attribute_value, to_attribute_value_sized):
        with pytest.raises(ItemTooDeepError, match=TOO_DEEP):
            convert(value)


@pytest.mark.parametrize("char", ["k", "é", "€", "😀"])
@pytest.mark.parametrize("nbytes", [65_532, 65_535, 65_536, 65_539, 200_000])
def test_a_name_is_too_long_past_65535_utf8_bytes(char: str, nbytes: int) -> None:
    name = char * (nbytes // len(char.encode()))
    size = len(name.encode())
    assert long_name(["a", name, "b"]) == (name if size > MAX_NAME_BYTES else None)
    refused = size > MAX_NAME_BYTES
    value = {"ok": 1, name: 2}
    if refused:
        with pytest.raises(ItemEncodeError, match=r"^value: a map key of [\d,]+ UTF-8 bytes"):
            to_attribute_value(value)
        # The sized converters leave such a key to the full converter, which names the rule.
        for convert in (to_attribute_value_sized, sized_map):
            with pytest.raises(ItemEncodeError, match="left to the full converter"):
                convert(value, "T.f")
    else:
        assert to_attribute_value_sized(value)[0] == to_attribute_value(value)
