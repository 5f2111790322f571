"""Queries over generated entity classes: the request selects exactly the item's range."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as hs

from singletable.errors import SingleTableError
from tests.strategies import EntitySpec, build_entity, entity_instances, entity_specs


def _values(params: dict[str, Any]) -> dict[str, Any]:
    return {k: next(iter(v.values())) for k, v in params["ExpressionAttributeValues"].items()}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=hs.data(), spec=entity_specs())
def test_leading_sort_key_fields_make_a_condition_the_item_satisfies(
    data: hs.DataObject, spec: EntitySpec
) -> None:
    model = build_entity(spec)
    plan = model.plan()
    obj = data.draw(entity_instances(spec, model))
    try:
        item = obj.to_item()
    except SingleTableError:
        reject()  # refused before sending (an empty key, a key number out of range)
    pk_attr, sk_attr = plan.primary.pk.attribute, plan.primary.sk.attribute  # type: ignore[union-attr]
    sk_fields = [name for name, _ in spec.sk.fields]
    k = data.draw(hs.integers(0, len(sk_fields)))
    values = {name: getattr(obj, name) for name, _ in spec.pk.fields}
    values.update({name: getattr(obj, name) for name in sk_fields[:k]})
    params = model.query(**values).params()
    bound = _values(params)
    names = {v: k for k, v in params["ExpressionAttributeNames"].items()}
    pk_condition, _, sk_condition = params["KeyConditionExpression"].partition(" AND ")
    assert pk_condition == f"{names[pk_attr]} = :v0"
    assert bound[":v0"] == item[pk_attr]["S"]
    sk = item[sk_attr]["S"].encode()
    if not sk_condition:  # no sort key condition: the whole partition is read
        return
    sk_name = names[sk_attr]
    if sk_condition.startswith("begins_with"):
        (placeholder,) = re.findall(r":v\d+", sk_condition)
        assert sk.startswith(bound[placeholder].encode())
    elif " BETWEEN " in sk_condition:
        low, high = re.findall(r":v\d+", sk_condition)
        assert bound[low].encode() <= sk <= bound[high].encode()
    else:
        assert sk_condition.startswith(f"{sk_name} = ")
        (placeholder,) = re.findall(r":v\d+", sk_condition)
        assert bound[placeholder].encode() == sk
