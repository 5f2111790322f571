"""The documented key ranges can be stored: promise and behaviour are one.

Key codecs take ints of up to 99 digits and decimals with exponents to ±499; a DynamoDB
Number holds 38 significant digits within 1E-130 .. 1E+126. A primary key field is also
stored as an attribute, so a value beyond the Number range is kept in the key only (and
decoded from it). Number text never carries more than 38 digits (moto cannot parse more).
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

import singletable as st
from singletable.attributes.numbers import MAX_NUMBER_DIGITS, beyond_number_range, number_text
from singletable.testing.strategies import key_decimals, key_floats, key_ints

table = st.Table("ranges", indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


class Big(st.Entity, table=table, pk="B#{p}#{i}", sk="{d}#{x}"):
    p: str
    i: int
    d: Decimal
    x: float
    note: str = ""


class Indexed(
    st.Entity,
    table=table,
    pk="X#{p}",
    sk="META",
    indexes={"GSI1": st.IndexKeys(pk="N#{n}", sk="X")},
):
    p: str
    n: int = 0


@settings(max_examples=300, deadline=None)
@given(i=key_ints(), d=key_decimals(), x=key_floats())
def test_every_value_a_primary_key_codec_accepts_is_stored_and_read_back(
    i: int, d: Decimal, x: float
) -> None:
    obj = Big(p="x", i=i, d=d, x=x)
    item = obj.to_item()
    for name, value in (("i", i), ("d", d), ("x", x)):
        # In range: stored as an attribute too; beyond it: in the key only.
        assert (name in item) is not beyond_number_range(value)
    back = Big.from_item(item)
    assert (back.i, back.d, back.x) == (i, d, x)
    # What a KEYS_ONLY read returns decodes the same way.
    keys_only = {k: v for k, v in item.items() if k in ("PK", "SK", "_et", "_ev")}
    assert Big.from_item(keys_only) == back


@settings(max_examples=300, deadline=None)
@given(value=hs.one_of(key_ints(), key_decimals(), key_floats()))
def test_number_text_is_the_same_value_in_at_most_38_digits(value: int | Decimal | float) -> None:
    if beyond_number_range(value):
        with pytest.raises(st.ItemEncodeError):
            number_text(value, "f")
        return
    text = number_text(value, "f")
    assert Decimal(text) == Decimal(value if not isinstance(value, float) else repr(value))
    digits = Decimal(text).as_tuple().digits
    assert len(digits) <= MAX_NUMBER_DIGITS


def test_an_index_only_key_field_holds_a_dynamodb_number() -> None:
    # Not part of the primary key: stored as an attribute, so the Number range applies,
    # as docs/keys.md says.
    with pytest.raises(st.ItemEncodeError, match=r"^Indexed\.n: .* has 51 significant digits"):
        Indexed(p="x", n=10**50 + 1).to_item()
    assert Indexed(p="x", n=10**50).to_item()["n"] == {"N": "1E+50"}


def test_conditions_on_an_out_of_range_value_are_refused() -> None:
    with pytest.raises(st.ItemEncodeError, match=r"significant digits"):
        Big.query(p="x", i=1).filter(Big.f.i == 10**50 + 1).params()
