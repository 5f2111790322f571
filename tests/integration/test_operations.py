"""Every single-item operation through the public API, on the selected backend."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

import pytest

import singletable as st
from tests.integration.models import Models, NoNetworkClient

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
else:
    DynamoDBClient = Any

T0 = datetime(2026, 6, 23, 8, 0, tzinfo=timezone.utc)
T1 = T0 + timedelta(hours=1)


# --------------------------------------------------------------------------- put / get


def test_put_then_get_round_trips_and_put_overwrites(m: Models) -> None:
    thing = m.Thing(box="b", thing_id="t1", name="first", tags={"x"}, items=["a"], meta={"k": "v"})
    assert m.Thing.put(thing).run(m.db) == thing
    assert m.Thing.get(box="b", thing_id="t1").run(m.db) == thing

    replacement = m.Thing(box="b", thing_id="t1", name="second")
    m.Thing.put(replacement).run(m.db)
    assert m.Thing.get(box="b", thing_id="t1").run(m.db) == replacement
    # Overwritten, not merged: the old set and list are gone from the stored item.
    raw = m.raw("BOX#b", "THING#t1")
    assert raw is not None
    assert "tags" not in raw
    assert raw["items"] == {"L": []}


def test_get_missing_returns_none(m: Models) -> None:
    assert m.Thing.get(box="b", thing_id="nope").run(m.db) is None
    assert m.Thing.get(box="b", thing_id="nope", consistent=True).run(m.db) is None


def test_consistent_get_reads_the_item(m: Models) -> None:
    thing = m.Thing(box="b", thing_id="t1", name="n")
    m.Thing.put(thing).run(m.db)
    get = m.Thing.get(box="b", thing_id="t1", consistent=True)
    assert get.params()["ConsistentRead"] is True
    assert get.run(m.db) == thing


def test_create_refuses_an_existing_key_and_carries_the_current_item(m: Models) -> None:
    first = m.Thing(box="b", thing_id="t1", name="first")
    assert m.Thing.create(first).run(m.db) == first
    with pytest.raises(
        st.AlreadyExistsError, match=r"^entity Thing: an item with this key exists$"
    ) as exc:
        m.Thing.create(m.Thing(box="b", thing_id="t1", name="second")).run(m.db)
    assert exc.value.item == first
    assert isinstance(exc.value, st.ConditionFailedError)
    assert m.Thing.get(box="b", thing_id="t1").run(m.db) == first


def test_projected_get_returns_a_dict_of_decoded_fields(m: Models) -> None:
    m.Thing.put(m.Thing(box="b", thing_id="t1", name="n", size=7, nums={1, 2})).run(m.db)
    got = m.Thing.get(box="b", thing_id="t1").project("name", "size", "nums").run(m.db)
    assert got == {"name": "n", "size": 7, "nums": {1, 2}}
    # A projected attribute the item lacks is simply absent from the dict.
    assert m.Thing.get(box="b", thing_id="t1").project("note").run(m.db) == {}
    assert m.Thing.get(box="b", thing_id="zz").project("name").run(m.db) is None


# --------------------------------------------------------------------------- delete


def test_delete_with_condition_and_return_old(m: Models) -> None:
    thing = m.Thing(box="b", thing_id="t1", name="n", status="live")
    m.Thing.put(thing).run(m.db)

    with pytest.raises(
        st.ConditionFailedError,
        match=r"^entity Thing: the delete condition failed: status = 'archived'$",
    ) as exc:
        m.Thing.delete(box="b", thing_id="t1", condition=m.Thing.f.status == "archived").run(m.db)
    assert type(exc.value) is st.ConditionFailedError
    assert exc.value.item == thing
    assert m.Thing.get(box="b", thing_id="t1").run(m.db) == thing

    old = m.Thing.delete(
        box="b", thing_id="t1", condition=m.Thing.f.status == "live", return_old=True
    ).run(m.db)
    assert old == thing
    assert m.Thing.get(box="b", thing_id="t1").run(m.db) is None


def test_delete_without_return_old_returns_none_and_missing_is_not_an_error(m: Models) -> None:
    m.Thing.put(m.Thing(box="b", thing_id="t1", name="n")).run(m.db)
    assert m.Thing.delete(box="b", thing_id="t1").run(m.db) is None
    assert m.Thing.get(box="b", thing_id="t1").run(m.db) is None
    assert m.Thing.delete(box="b", thing_id="t1", return_old=True).run(m.db) is None


def test_delete_of_missing_item_with_condition_fails_without_item(m: Models) -> None:
    with pytest.raises(
        st.ConditionFailedError,
        match=r"^entity Thing: the delete condition failed: attribute_exists \(name\)$",
    ) as exc:
        m.Thing.delete(box="b", thing_id="zz", condition=m.Thing.f.name.exists()).run(m.db)
    assert exc.value.item is None


# --------------------------------------------------------------------------- update / upsert


def test_update_returns_the_item_as_stored(m: Models) -> None:
    m.Thing.put(m.Thing(box="b", thing_id="t1", name="n", size=1)).run(m.db)
    updated = m.Thing.update(box="b", thing_id="t1").set(name="renamed", note="x").run(m.db)
    assert (updated.name, updated.note, updated.size) == ("renamed", "x", 1)
    assert m.Thing.get(box="b", thing_id="t1").run(m.db) == updated


def test_update_of_missing_item_raises_not_found(m: Models) -> None:
    with pytest.raises(
        st.NotFoundError, match=r"^entity Thing: no item with key \{'box': 'b', 'thing_id': 'zz'\}$"
    ):
        m.Thing.update(box="b", thing_id="zz").set(name="x").run(m.db)
    assert m.Thing.get(box="b", thing_id="zz").run(m.db) is None


def test_upsert_creates_then_updates(m: Models) -> None:
    created = m.Thing.upsert(box="b", thing_id="t1").set(name="made").add(count=1).run(m.db)
    assert created == m.Thing(box="b", thing_id="t1", name="made", count=1)
    again = m.Thing.upsert(box="b", thing_id="t1").set(name="made").add(count=2).run(m.db)
    assert (again.name, again.count) == ("made", 3)
    # An upserted item is stored like a put one: key fields are attributes too, so
    # filters on them see it.
    raw = m.raw("BOX#b", "THING#t1")
    assert raw is not None
    assert raw["box"] == {"S": "b"}
    assert raw["thing_id"] == {"S": "t1"}
    assert raw["_et"] == {"S": "Thing"}
    found = m.Thing.query(box="b").filter(m.Thing.f.thing_id == "t1").all(m.db)
    assert found == [again]


def test_upsert_refuses_to_create_an_item_missing_a_required_field(m: Models) -> None:
    with pytest.raises(
        st.ExpressionError,
        match=r"Thing: upsert may create the item, and "
        r"required field 'name' would be missing",
    ):
        m.Thing.upsert(box="b", thing_id="t9").add(count=1).params()
    # Fields with defaults are written only where the item has none yet.
    created = m.Thing.upsert(box="b", thing_id="t9").set(name="n").run(m.db)
    raw = m.raw("BOX#b", "THING#t9")
    assert raw is not None
    assert raw["count"] == {"N": str(created.count)}
    m.Thing.update(box="b", thing_id="t9").set(count=7).run(m.db)
    kept = m.Thing.upsert(box="b", thing_id="t9").set(name="n2").run(m.db)
    assert (kept.name, kept.count) == ("n2", 7)


# --------------------------------------------------------------------------- stamping, TTL


def test_created_and_updated_at_are_stamped(m: Models) -> None:
    doc = st.Put(m.Doc(doc_id="d1", owner="ann"), now=T0).run(m.db)
    assert (doc.created_at, doc.updated_at) == (T0, T0)
    assert m.Doc.get(doc_id="d1").run(m.db) == doc

    updated = m.Doc.update(doc_id="d1").set(title="t").at(T1).run(m.db)
    assert (updated.created_at, updated.updated_at) == (T0, T1)

    upserted = m.Doc.upsert(doc_id="d2").set(owner="bob", status="draft").at(T1).run(m.db)
    assert (upserted.created_at, upserted.updated_at) == (T1, T1)
    # A second upsert keeps created_at (if_not_exists) and moves updated_at.
    later = T1 + timedelta(minutes=5)
    again = (
        m.Doc.upsert(doc_id="d2")
        .set(owner="bob", title="x")
        .known(status="draft")
        .at(later)
        .run(m.db)
    )
    assert (again.created_at, again.updated_at) == (T1, later)


def test_ttl_attribute_is_written_from_the_datetime_field(m: Models) -> None:
    expires = datetime(2030, 1, 1, tzinfo=timezone.utc)
    m.Doc.put(m.Doc(doc_id="d1", owner="ann", expires_at=expires)).run(m.db)
    raw = m.raw("DOC#d1", "META")
    assert raw is not None
    assert raw["ttl"] == {"N": str(int(expires.timestamp()))}

    later = expires + timedelta(days=1)
    m.Doc.update(doc_id="d1").set(expires_at=later).run(m.db)
    raw = m.raw("DOC#d1", "META")
    assert raw is not None
    assert raw["ttl"] == {"N": str(int(later.timestamp()))}

    m.Doc.update(doc_id="d1").set(expires_at=None).run(m.db)
    raw = m.raw("DOC#d1", "META")
    assert raw is not None
    assert "ttl" not in raw
    assert "expires_at" not in raw


def test_ttl_is_enabled_on_the_created_table(m: Models) -> None:
    desc = m.client.describe_time_to_live(TableName=m.table.name)["TimeToLiveDescription"]
    assert desc["TimeToLiveStatus"] in ("ENABLED", "ENABLING")
    assert desc["AttributeName"] == "ttl"


# --------------------------------------------------------------------------- capacity


def test_consumed_capacity_is_metered(m: Models) -> None:
    thing = m.Thing(box="b", thing_id="t1", name="n")
    assert m.db.meter.calls == 0
    st.Put(thing, capacity="TOTAL").run(m.db)
    assert m.db.meter.calls == 1
    assert m.db.meter.write_units == 1.0
    assert m.db.meter.by_table == {m.table.name: 1.0}

    # An eventually consistent read of an item under 4 KB: 0.5 RCU.
    st.Get(m.Thing.plan(), {"box": "b", "thing_id": "t1"}, capacity="TOTAL").run(m.db)
    assert m.db.meter.calls == 2
    assert m.db.meter.read_units == 0.5
    assert m.db.meter.total_units == 1.5

    # Without capacity=..., nothing is reported and nothing is metered.
    m.Thing.get(box="b", thing_id="t1").run(m.db)
    assert m.db.meter.calls == 2

    m.db.meter.reset()
    assert (m.db.meter.calls, m.db.meter.total_units, m.db.meter.by_table) == (0, 0.0, {})


# --------------------------------------------------------------------------- validation


def _offline() -> tuple[st.Connection, NoNetworkClient]:
    client = NoNetworkClient()
    return st.Connection(client), client  # type: ignore[arg-type]


def test_validation_errors_name_the_field_before_any_request(m: Models) -> None:
    db, client = _offline()
    Thing, Doc = m.Thing, m.Doc
    cases: list[tuple[Any, type[Exception], str]] = [
        (
            lambda: Thing.update(box="b", thing_id="t").set(size="big").run(db),
            st.ItemEncodeError,
            r"Thing\.size: Input should be a valid integer.* \(got 'big'\)",
        ),
        (
            lambda: Thing.update(box="b", thing_id="t").set(nope=1).run(db),
            st.ExpressionError,
            r"^entity Thing: update of unknown field 'nope'$",
        ),
        (
            lambda: Thing.update(box="b", thing_id="t").set(thing_id="u").run(db),
            st.ExpressionError,
            r"^entity Thing: field 'thing_id' is part of the primary key",
        ),
        (
            lambda: Thing.update(box="b", thing_id="t").remove("name").run(db),
            st.ExpressionError,
            r"^entity Thing: field 'name' is required",
        ),
        (
            lambda: Thing.update(box="b", thing_id="t").set(tags=set()).run(db),
            st.ExpressionError,
            r"^Thing\.tags: DynamoDB rejects empty sets",
        ),
        (
            lambda: Thing.update(box="b", thing_id="t").add(name="x").run(db),
            st.ExpressionError,
            r"^Thing\.name: add\(\) takes a number or a set, got str$",
        ),
        (
            lambda: Thing.update(box="b", thing_id="t").run(db),
            st.ExpressionError,
            r"^entity Thing: an update needs at least one change$",
        ),
        (
            lambda: Thing.get(box="b", thingid="t").run(db),
            st.KeyEncodeError,
            r"^entity Thing: get: unknown field 'thingid'$",
        ),
        (
            lambda: Thing.get(box="b").run(db),
            st.KeyEncodeError,
            r"^entity Thing: get: missing key field 'thing_id'$",
        ),
        (
            lambda: Thing.get(box="b", thing_id=5).run(db),
            st.KeyEncodeError,
            r"field 'thing_id': str key value 5 has type int; expected str",
        ),
        (
            lambda: Thing.delete(box="b", thing_id="t", name="n").run(db),
            st.KeyEncodeError,
            r"^entity Thing: delete: 'name' is not a primary key field",
        ),
        (
            lambda: Thing.get(box="b", thing_id="t").project("nope").run(db),
            st.ExpressionError,
            r"^entity Thing: cannot project unknown field 'nope'$",
        ),
        (
            lambda: Thing.put(
                Thing(box="b", thing_id="t", name="n"), condition=Thing.f.size == "big"
            ).run(db),
            st.ItemEncodeError,
            r"Thing\.size: expected an int, got str",
        ),
        (
            lambda: Doc.update(doc_id="d").set(expires_at="soon").run(db),
            st.ItemEncodeError,
            r"Doc\.expires_at: Input should be a valid datetime.* \(got 'soon'\)",
        ),
    ]
    for action, kind, message in cases:
        with pytest.raises(kind, match=message):
            action()
    assert client.calls == []


def _consistent_read_units(m: Models) -> float:
    m.Thing.put(m.Thing(box="b", thing_id="t1", name="n")).run(m.db)
    plan = m.Thing.plan()
    st.Get(plan, {"box": "b", "thing_id": "t1"}, consistent=True, capacity="TOTAL").run(m.db)
    return m.db.meter.read_units


@pytest.mark.dynamodb_local_only("moto bills a strongly consistent read like an eventual one")
def test_consistent_read_costs_one_rcu(m: Models) -> None:
    assert _consistent_read_units(m) == 1.0


@pytest.mark.moto_only("moto bills a strongly consistent read like an eventual one")
def test_moto_bills_consistent_read_as_eventual(m: Models) -> None:
    assert _consistent_read_units(m) == 0.5
