"""Review: values that must survive the trip to DynamoDB and back unchanged."""

from __future__ import annotations

import enum
from decimal import Decimal
from typing import Any, Literal

import pydantic
import pytest

from singletable.attributes.codecs import attribute_codec_for
from singletable.errors import ExpressionError
from singletable.expressions.tree import FieldRef


class FloatEnum(enum.Enum):
    TENTH = 0.1
    QUARTER = 0.25


class TupleEnum(enum.Enum):
    LOW = (1, 2)
    HIGH = (3, 4)


class MixedEnum(enum.Enum):
    NAME = "a"
    RATE = 0.3


@pytest.mark.parametrize(
    ("annotation", "value"),
    [
        (FloatEnum, FloatEnum.TENTH),
        (TupleEnum, TupleEnum.HIGH),
        (MixedEnum, MixedEnum.RATE),
        (MixedEnum | None, MixedEnum.RATE),
        (Literal[0.1, 0.3], 0.1),
        (Literal["x", 0.3], 0.3),
        (list[FloatEnum], [FloatEnum.TENTH, FloatEnum.QUARTER]),
    ],
)
def test_enum_and_literal_values_that_are_not_str_or_int_read_back(
    annotation: Any, value: Any
) -> None:
    codec = attribute_codec_for(annotation, where="M.x")
    model = pydantic.create_model("M", x=(annotation, ...))
    stored = codec.to_av(value)
    assert stored is not None
    # DynamoDB returns numbers normalised; "0.10" is how it could come back too.
    assert model.model_validate({"x": codec.from_av(stored)}).x == value  # type: ignore[attr-defined]


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
    ref = FieldRef(("stats",), lambda v: {"N": str(v)}, label="Thing.stats")
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
