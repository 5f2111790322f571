"""The kit's strategies over the library's own generated entity classes."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Annotated, Any

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import singletable as st
from singletable.testing.strategies import instances, items, unique_instances
from singletable.tooling.cost.sizes import same_entry
from tests.strategies import (
    build_entity,
    build_simple_entity,
    entity_specs,
    simple_entity_specs,
    simple_entity_table,
)

FAST = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))


@FAST
@given(hs.data(), entity_specs())
def test_every_instance_of_a_generated_entity_encodes(data: hs.DataObject, spec: Any) -> None:
    cls = build_entity(spec)
    obj = data.draw(instances(cls))
    item = obj.to_item()
    again = type(obj).from_item(item).to_item()
    # A set's elements are listed in the set's iteration order, which the set read back
    # need not share (it depends on string hashes and insertion history): the items must
    # be what DynamoDB stores as the same item, sets in any order.
    assert same_entry(again, item), (again, item)


@FAST
@given(hs.data(), simple_entity_specs())
def test_every_instance_of_a_generated_simple_entity_encodes(
    data: hs.DataObject, spec: Any
) -> None:
    cls = build_simple_entity(spec, simple_entity_table("kit"))
    obj = data.draw(instances(cls))
    assert cls.from_item(obj.to_item()) == obj


kit = st.Table("kit-constraints")


class Account(st.Entity, table=kit, pk="ACC#{tenant}", sk="U#{seq}", unique=["email"]):
    tenant: str
    seq: Annotated[int, st.KeyFormat(width=3)]
    email: Annotated[str, pydantic.Field(min_length=3, max_length=12)]
    age: Annotated[int, pydantic.Field(ge=18, le=130)]
    code: Annotated[str, pydantic.Field(pattern=r"^[A-Z]{2}[0-9]{2}$")]
    at: Annotated[dt.datetime, st.KeyFormat(precision="s")] = dt.datetime(
        2020, 1, 1, tzinfo=dt.timezone.utc
    )
    balance: Decimal = Decimal("0")


class Invoice(st.Entity, table=kit, pk="ACC#{tenant}", sk="INV#{number}"):
    tenant: str
    number: int
    note: str | None = None


@FAST
@given(instances(Account))
def test_constraints_are_honoured(account: Account) -> None:
    assert 0 <= account.seq <= 999
    assert 3 <= len(account.email) <= 12
    assert 18 <= account.age <= 130
    assert len(account.code) == 4
    assert account.code[:2].isupper()
    account.to_item()


@FAST
@given(unique_instances(Account, tenant="t1", min_size=2, max_size=6))
def test_unique_instances_never_clash(accounts: list[Account]) -> None:
    assert all(a.tenant == "t1" for a in accounts)
    assert len({a.seq for a in accounts}) == len(accounts)
    assert len({a.email for a in accounts}) == len(accounts)


@FAST
@given(items(kit))
def test_items_share_one_partition(drawn: list[st.Entity]) -> None:
    partitions = {obj.to_item()["PK"]["S"] for obj in drawn}
    assert len(partitions) == 1
    keys = [(obj.to_item()["PK"]["S"], obj.to_item()["SK"]["S"]) for obj in drawn]
    assert len(set(keys)) == len(keys)


def test_items_mix_the_entities_of_a_partition() -> None:
    kinds: set[type] = set()

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(items(kit))
    def collect(drawn: list[st.Entity]) -> None:
        kinds.update(type(obj) for obj in drawn if len(drawn) > 1)

    collect()
    assert kinds == {Account, Invoice}


def test_fixing_an_unknown_field_is_refused() -> None:
    with pytest.raises(st.SingleTableError, match="instances\\(Account\\): no field 'nope'"):
        instances(Account, nope=1)
