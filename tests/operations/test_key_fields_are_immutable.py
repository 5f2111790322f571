"""Every path that writes a field follows the rules of `Update.set` (issue 16, defect 1).

``.apply()`` with raw actions, the other builder methods, upserts and transactions must
refuse to change a primary key field (the item would read back with a key it is not
stored under) and must not write the table's key or bookkeeping attributes; a raw
top-level ``set``/``remove`` of a field is the same as `Update.set`/`Update.remove`
(validated, index keys rewritten). Checked on the quoted example and over generated
entity classes.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

import singletable as st
from singletable.attributes.convert import to_attribute_value
from tests.strategies import (
    SimpleEntitySpec,
    build_simple_entity,
    simple_entity_specs,
    simple_entity_table,
    simple_entity_values,
)

NOW = datetime(2026, 6, 23, 8, 0, tzinfo=timezone.utc)

table = st.Table(
    "key-fields",
    indexes=[st.GSI("ByLabel", pk="GSI1PK", sk="GSI1SK")],
    ttl_attribute="expires",
)


class Thing(
    st.Entity,
    table=table,
    pk="BOX#{box}",
    sk="T#{tid}",
    indexes={"ByLabel": st.IndexKeys(pk="L#{label}", sk="{tid}")},
):
    box: str
    tid: str
    label: str = "none"
    note: str | None = None
    count: int = 0


def test_apply_cannot_change_a_primary_key_field() -> None:
    with pytest.raises(st.ExpressionError, match=r"'box' is part of the primary key"):
        Thing.update(box="b", tid="t").apply(Thing.f.box.set("z")).params()


@pytest.mark.parametrize("attribute", ["PK", "SK", "GSI1PK", "GSI1SK", "_et", "_ev", "expires"])
def test_raw_actions_cannot_write_key_or_bookkeeping_attributes(attribute: str) -> None:
    raw: st.FieldRef[Any] = st.FieldRef((attribute,), to_attribute_value)
    for action in (raw.set("x"), raw.remove()):
        with pytest.raises(st.ExpressionError, match=rf"{attribute!r} is a key or bookkeeping"):
            Thing.update(box="b", tid="t").apply(action).params()


@pytest.mark.parametrize("change", ["ttl", "gsi", "entity"])
def test_a_table_changed_after_its_entities_still_refuses_its_bookkeeping_attributes(
    change: str,
) -> None:
    # The compile check saw the table as it was; an update asks the table as it is.
    later = st.Table("changed-later", sk=None)

    class Late(st.Entity, table=later, pk="L#{lid}"):
        lid: str
        expires: int = 0

    if change == "ttl":
        later.ttl_attribute = "expires"
    elif change == "gsi":
        later.indexes["G"] = st.GSI("G", pk="expires")
    else:
        later.entity_attribute = "expires"
    with pytest.raises(st.ExpressionError, match=r"'expires' is a key or bookkeeping"):
        Late.update(lid="1").set(expires=5)


def test_raw_set_of_an_index_field_rewrites_the_index_key_like_set() -> None:
    via_set = Thing.update(box="b", tid="t").set(label="new").at(NOW).params()
    via_apply = Thing.update(box="b", tid="t").apply(Thing.f.label.set("new")).at(NOW).params()
    assert via_apply == via_set
    assert "GSI1PK" in via_apply["ExpressionAttributeNames"].values()


def test_raw_remove_of_a_required_field_is_refused_like_remove() -> None:
    class Strict(st.Entity, table=table, pk="S#{sid}", sk="S"):
        sid: str
        must: str

    with pytest.raises(st.ExpressionError, match=r"'must' is required"):
        Strict.update(sid="s").apply(Strict.f.must.remove()).params()


def test_transactions_and_upserts_refuse_key_changes_too() -> None:
    with pytest.raises(st.ExpressionError, match=r"'tid' is part of the primary key"):
        st.TransactWrite().update(Thing.upsert(box="b", tid="t").apply(Thing.f.tid.set("u")))


# -- the class: every write path, every field, generated entities ----------------------


def _writers(ref: st.FieldRef[Any], value: Any) -> list[Callable[[st.Update[Any]], st.Update[Any]]]:
    """Every way an update can write field ``ref`` (one builder call each)."""
    name = ref.label.split(".", 1)[1]
    return [
        lambda u: u.set(**{name: value}),
        lambda u: u.remove(name),
        lambda u: u.apply(ref.set(value)),
        lambda u: u.apply(ref.remove()),
        lambda u: u.set_if_not_exists(**{name: value}),
        lambda u: u.apply(ref.set(ref.if_not_exists(value))),
        lambda u: u.add(**{name: 1}),
        lambda u: u.increment(name),
    ]


@settings(max_examples=40, deadline=None)
@given(hs.data())
def test_no_write_path_changes_a_primary_key_field(data: hs.DataObject) -> None:
    spec: SimpleEntitySpec = data.draw(simple_entity_specs())
    cls = build_simple_entity(spec, simple_entity_table(f"t-{spec.name}"))
    values = data.draw(simple_entity_values(spec))
    key = {f: values[f] for f in cls.plan().primary.fields}
    for name in cls.plan().primary.fields:
        ref = getattr(cls.f, name)
        for write in _writers(ref, values[name]):
            for start in (cls.update, cls.upsert):
                with pytest.raises(st.ExpressionError, match=rf"{name!r} is part of the primary"):
                    st.TransactWrite().update(write(start(**key)).at(NOW))


@settings(max_examples=40, deadline=None)
@given(hs.data())
def test_a_raw_top_level_set_is_the_same_update_as_set(data: hs.DataObject) -> None:
    spec: SimpleEntitySpec = data.draw(simple_entity_specs())
    cls = build_simple_entity(spec, simple_entity_table(f"t-{spec.name}"))
    plan = cls.plan()
    values = data.draw(simple_entity_values(spec))
    key = {f: values[f] for f in plan.primary.fields}
    for name in plan.fields:
        if name in key:
            continue
        # Index fields need the others of their templates: give them as known values.
        known = {f: values[f] for f in plan.fields if f not in key and f != name}
        new = data.draw(spec.kinds[name].values)
        via_set = cls.update(**key).known(**known).set(**{name: new}).at(NOW)
        ref = getattr(cls.f, name)
        via_apply = cls.update(**key).known(**known).apply(ref.set(new)).at(NOW)
        assert via_apply.params() == via_set.params()
