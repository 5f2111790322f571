"""Update actions, index-key rewriting and optimistic locking, on the selected backend."""

from __future__ import annotations

from datetime import date, datetime, timezone
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import singletable as st
from tests.integration._executors import connect
from tests.integration.models import Models

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
else:
    DynamoDBClient = Any


def _thing(m: Models, **values: Any) -> Any:
    thing = m.Thing(box="b", thing_id="t1", name="n", **values)
    m.Thing.put(thing).run(m.db)
    return thing


def _update(m: Models) -> Any:
    return m.Thing.update(box="b", thing_id="t1")


# --------------------------------------------------------------------------- actions


def test_set_and_remove(m: Models) -> None:
    _thing(m, note="x", status="live")
    got = _update(m).set(name="renamed", size=3).remove("note").run(m.db)
    assert (got.name, got.size, got.note, got.status) == ("renamed", 3, None, "live")
    raw = m.raw("BOX#b", "THING#t1")
    assert raw is not None
    assert "note" not in raw
    # set(field=None) removes too.
    assert _update(m).set(note="y").run(m.db).note == "y"
    assert _update(m).set(note=None).run(m.db).note is None


def test_add_numbers_and_sets(m: Models) -> None:
    _thing(m, count=1, tags={"a"})
    got = _update(m).add(count=4, tags={"b", "c"}, nums={7}).run(m.db)
    assert (got.count, got.tags, got.nums) == (5, {"a", "b", "c"}, {7})
    got = _update(m).add(count=-2, nums={8}).run(m.db)
    assert (got.count, got.nums) == (3, {7, 8})


def test_delete_from_set(m: Models) -> None:
    _thing(m, tags={"a", "b", "c"}, nums={1, 2})
    got = _update(m).delete_from(tags={"a", "zz"}, nums={1}).run(m.db)
    assert (got.tags, got.nums) == ({"b", "c"}, {2})
    # Deleting the last elements removes the attribute; it decodes as the empty set.
    got = _update(m).delete_from(tags={"b", "c"}).run(m.db)
    assert got.tags == set()
    raw = m.raw("BOX#b", "THING#t1")
    assert raw is not None
    assert "tags" not in raw


def test_append_and_prepend(m: Models) -> None:
    _thing(m, items=["m"])
    assert _update(m).append(items=["y", "z"]).run(m.db).items == ["m", "y", "z"]
    assert _update(m).prepend(items=["a"]).run(m.db).items == ["a", "m", "y", "z"]


def test_if_not_exists(m: Models) -> None:
    _thing(m)
    assert _update(m).set_if_not_exists(note="first").run(m.db).note == "first"
    assert _update(m).set_if_not_exists(note="second").run(m.db).note == "first"
    # A counter that may start missing: SET count = if_not_exists(count, 0) + 1.
    count = m.Thing.f.count
    bump = count.set(count.if_not_exists(0) + 1)
    fresh = m.Thing.upsert(box="b", thing_id="t2").set(name="n").run(m.db)
    raw = m.raw("BOX#b", "THING#t2")
    assert raw is not None
    assert raw["count"] == {"N": "0"}  # the default, written as a put would
    assert fresh.count == 0
    up = m.Thing.upsert(box="b", thing_id="t2").set(name="n")
    assert up.apply(bump).run(m.db).count == 1
    assert m.Thing.update(box="b", thing_id="t2").apply(bump).run(m.db).count == 2


def test_increment(m: Models) -> None:
    _thing(m, size=10)
    assert _update(m).increment("size").run(m.db).size == 11
    assert _update(m).increment("size", 5).run(m.db).size == 16
    assert _update(m).increment("size", -20).run(m.db).size == -4


def test_nested_map_key_with_odd_characters(m: Models) -> None:
    _thing(m, meta={"k": "v"})
    f = m.Thing.f
    got = _update(m).apply(f.meta["a.b c#:x"].set("odd")).run(m.db)
    assert got.meta == {"k": "v", "a.b c#:x": "odd"}
    got = _update(m).apply(f.meta["k"].remove()).run(m.db)
    assert got.meta == {"a.b c#:x": "odd"}


def test_update_with_condition(m: Models) -> None:
    thing = _thing(m, status="live")
    with pytest.raises(
        st.ConditionFailedError,
        match=r"^entity Thing: the update condition failed: status = 'draft'$",
    ) as exc:
        _update(m).set(name="x").where(m.Thing.f.status == "draft").run(m.db)
    assert type(exc.value) is st.ConditionFailedError
    assert exc.value.item == thing
    assert _update(m).set(name="x").where(m.Thing.f.status == "live").run(m.db).name == "x"


# --------------------------------------------------------------------------- index keys


def _owners(m: Models, owner: str) -> list[tuple[str, str]]:
    return [(d.doc_id, d.status) for d in m.Doc.query(index="GSI1", owner=owner).all(m.db)]


def test_setting_a_template_field_rewrites_the_gsi_key(m: Models) -> None:
    m.Doc.put(m.Doc(doc_id="d1", owner="ann", status="draft")).run(m.db)
    assert _owners(m, "ann") == [("d1", "draft")]
    m.Doc.update(doc_id="d1").set(status="live").known(owner="ann").run(m.db)
    assert _owners(m, "ann") == [("d1", "live")]
    assert m.Doc.query(index="GSI1", owner="ann").begins_with(status="draft").all(m.db) == []
    assert [
        d.doc_id
        for d in m.Doc.query(index="GSI1", owner="ann").begins_with(status="live").all(m.db)
    ] == ["d1"]
    raw = m.raw("DOC#d1", "META")
    assert raw is not None
    assert (raw["GSI1PK"], raw["GSI1SK"]) == ({"S": "OWNER#ann"}, {"S": "live#d1"})

    # Moving to another GSI partition: found under the new key, not the old one.
    m.Doc.update(doc_id="d1").set(owner="bob", status="live").run(m.db)
    assert _owners(m, "ann") == []
    assert _owners(m, "bob") == [("d1", "live")]


def test_template_field_without_its_partners_is_refused(m: Models) -> None:
    with pytest.raises(
        st.ExpressionError,
        match=r"^entity Doc: changing 'status' rewrites the key of index 'GSI1', whose "
        r"templates also need \['owner'\]; pass their current values",
    ):
        m.Doc.update(doc_id="d1").set(status="live").params()
    with pytest.raises(
        st.ExpressionError,
        match=r"^entity Doc: field 'status' feeds the key of index 'GSI1', so it can only be "
        r"changed with \.set\(\.\.\.\)",
    ):
        m.Doc.update(doc_id="d1").apply(m.Doc.f.status.set(m.Doc.f.title)).params()


def test_sparse_index_field_set_to_none_leaves_the_index(m: Models) -> None:
    m.Doc.put(m.Doc(doc_id="d1", owner="ann", category="red")).run(m.db)
    m.Doc.put(m.Doc(doc_id="d2", owner="ann")).run(m.db)
    assert [d.doc_id for d in m.Doc.query(index="GSI2", category="red").all(m.db)] == ["d1"]

    m.Doc.update(doc_id="d1").set(category=None).run(m.db)
    assert m.Doc.query(index="GSI2", category="red").all(m.db) == []
    raw = m.raw("DOC#d1", "META")
    assert raw is not None
    assert not {"GSI2PK", "GSI2SK", "category"} & set(raw)

    # ...and setting it joins the index again (the other template field is the key).
    m.Doc.update(doc_id="d2").set(category="red").run(m.db)
    assert [d.doc_id for d in m.Doc.query(index="GSI2", category="red").all(m.db)] == ["d2"]


def test_primary_key_field_cannot_be_updated(m: Models) -> None:
    with pytest.raises(
        st.ExpressionError,
        match=r"^entity Doc: field 'doc_id' is part of the primary key and cannot be updated; "
        r"delete the item and put it under its new key$",
    ):
        m.Doc.update(doc_id="d1").set(doc_id="d2")


# --------------------------------------------------------------------------- locking


def test_versions_advance_on_put_and_update(m: Models) -> None:
    first = m.Doc.put(m.Doc(doc_id="d1", owner="ann")).run(m.db)
    assert first.version == 1
    second = m.Doc.put(first.model_copy(update={"title": "t"})).run(m.db)
    assert second.version == 2
    third = m.Doc.update(doc_id="d1").set(title="u").expect_version(2).run(m.db)
    assert third.version == 3


def test_stale_update_raises_version_conflict_with_current_item(m: Models) -> None:
    stored = m.Doc.put(m.Doc(doc_id="d1", owner="ann")).run(m.db)
    current = m.Doc.update(doc_id="d1").set(title="mine").expect_version(1).run(m.db)
    with pytest.raises(
        st.VersionConflictError,
        match=r"^entity Doc: version conflict: this write expected version 1, but the stored "
        r"item is at version 2$",
    ) as exc:
        m.Doc.update(doc_id="d1").set(title="theirs").expect_version(stored.version).run(m.db)
    assert exc.value.item == current
    assert m.Doc.get(doc_id="d1").run(m.db) == current


def test_stale_put_raises_version_conflict(m: Models) -> None:
    stored = m.Doc.put(m.Doc(doc_id="d1", owner="ann")).run(m.db)
    newer = m.Doc.put(stored.model_copy(update={"title": "a"})).run(m.db)
    with pytest.raises(
        st.VersionConflictError,
        match=r"^entity Doc: version conflict: this write expected version 1, but the stored "
        r"item is at version 2$",
    ) as exc:
        m.Doc.put(stored.model_copy(update={"title": "b"})).run(m.db)
    assert exc.value.item == newer
    # A fresh object (version 0) must not overwrite an existing item either.
    with pytest.raises(
        st.VersionConflictError,
        match=r"^entity Doc: version conflict: this write expected no stored item, but the "
        r"stored item is at version 2$",
    ) as exc:
        m.Doc.put(m.Doc(doc_id="d1", owner="zed")).run(m.db)
    assert exc.value.item == newer


def test_stale_delete_raises_version_conflict(m: Models) -> None:
    stored = m.Doc.put(m.Doc(doc_id="d1", owner="ann")).run(m.db)
    newer = m.Doc.put(stored.model_copy(update={"title": "a"})).run(m.db)
    with pytest.raises(
        st.VersionConflictError,
        match=r"^entity Doc: version conflict: this write expected version 1, but the stored "
        r"item is at version 2$",
    ) as exc:
        m.Doc.delete(stored).run(m.db)
    assert exc.value.item == newer
    assert m.Doc.delete(newer, return_old=True).run(m.db) == newer
    assert m.Doc.get(doc_id="d1").run(m.db) is None


def test_expect_version_needs_a_version_field(m: Models) -> None:
    with pytest.raises(st.ExpressionError, match=r"^entity Thing declares no version_field$"):
        _update(m).expect_version(1)


T0 = datetime(2026, 6, 23, 8, 0, tzinfo=timezone.utc)


def _models(client: DynamoDBClient, table_name: str) -> tuple[st.Connection, Any]:
    table = st.Table(
        table_name,
        indexes=[
            st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK"),
            st.GSI("GSI2", pk="GSI2PK", sk="GSI2SK"),
        ],
    )

    class Rec(
        st.Entity,
        table=table,
        pk="R#{rid}",
        sk="META",
        indexes={
            "GSI1": st.IndexKeys(pk="RECENT", sk="{updated_at}"),
            "GSI2": st.IndexKeys(pk="BYID#{rid}", sk="REC"),
        },
        updated_at="updated_at",
    ):
        rid: str
        title: str = ""
        updated_at: datetime | None = None

    db = connect(client)
    db.create_table(table)
    return db, Rec


def _raw(client: DynamoDBClient, table_name: str, pk: str) -> dict[str, Any]:
    item: dict[str, Any] = client.get_item(
        TableName=table_name, Key={"PK": {"S": pk}, "SK": {"S": "META"}}, ConsistentRead=True
    )["Item"]
    return item


T1 = datetime(2026, 6, 24, 9, 30, tzinfo=timezone.utc)


def test_update_keeps_updated_at_index_in_step(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    db, Rec = _models(dynamodb_client, table_name)
    st.Put(Rec(rid="a"), now=T0).run(db)
    Rec.update(rid="a").set(title="x").at(T1).run(db)
    raw = _raw(dynamodb_client, table_name, "R#a")
    assert raw["GSI1SK"] == st.Put(Rec(rid="a"), now=T1).params()["Item"]["GSI1SK"]
    newest = Rec.query(index="GSI1").descending().first(db)
    assert newest is not None
    assert newest.updated_at == T1


def test_upsert_created_item_is_in_every_index_a_put_fills(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    db, Rec = _models(dynamodb_client, table_name)
    Rec.upsert(rid="a").set(title="x").at(T0).run(db)
    raw = _raw(dynamodb_client, table_name, "R#a")
    put_item = st.Put(Rec(rid="a", title="x"), now=T0).params()["Item"]
    assert {a: raw[a] for a in ("GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK")} == {
        a: put_item[a] for a in ("GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK")
    }
    found = Rec.query(index="GSI2", rid="a").first(db)
    assert found is not None
    assert found.title == "x"
    # Upserting again (the item exists) keeps it in step.
    Rec.upsert(rid="a").set(title="y").at(T1).run(db)
    newest = Rec.query(index="GSI1").descending().first(db)
    assert newest is not None
    assert (newest.title, newest.updated_at) == ("y", T1)


def _tasks(client: DynamoDBClient, table_name: str) -> tuple[st.Connection, Any]:
    """Tasks whose sparse GSI1 is keyed on the optional assignee_id and due."""
    table = st.Table(table_name, indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])

    class Task(
        st.Entity,
        table=table,
        pk="TASK#{tid}",
        sk="META",
        indexes={"GSI1": st.IndexKeys(pk="ASSIGNEE#{assignee_id}", sk="DUE#{due}")},
    ):
        tid: str
        title: str = ""
        due: date | None = None
        assignee_id: str | None = None

    db = connect(client)
    db.create_table(table)
    return db, Task


def test_an_upsert_of_a_sparse_index_field_takes_its_partners_none_default(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    # `due` feeds a sparse GSI with the optional `assignee_id` (default None). An upsert
    # setting `due` was refused until .set(assignee_id=None) was added, which also wipes a
    # stored assignee. Now it takes the default an item it creates holds, on condition
    # that the stored item holds no other: the index keys are right, or the upsert fails
    # naming the stored value.
    db, Task = _tasks(dynamodb_client, table_name)

    def assigned(who: str) -> list[str]:
        return [t.tid for t in Task.query(index="GSI1", assignee_id=who).all(db)]

    # Creating: the default is known, no assignee, so no index key.
    created = Task.upsert(tid="t1").set(due=date(2026, 7, 1)).run(db)
    assert created == Task(tid="t1", due=date(2026, 7, 1))
    assert not {"GSI1PK", "GSI1SK"} & set(_raw(dynamodb_client, table_name, "TASK#t1"))
    # An existing item without an assignee: the same.
    assert Task.upsert(tid="t1").set(due=date(2026, 7, 2)).run(db).due == date(2026, 7, 2)
    # An existing item with an assignee: its index key needs that value, which the upsert
    # does not know. It is refused by the server and the error names the stored value;
    # nothing changed.
    Task.put(Task(tid="t2", due=date(2026, 7, 1), assignee_id="ann")).run(db)
    with pytest.raises(
        st.ConditionFailedError,
        match=r"stored item holds assignee_id='ann'; give the stored value \(e\.g\. "
        r"Task\.update\(tid='t2'\)\.set\(due=\.\.\.\)\.known\(assignee_id=<stored value>\)\)",
    ):
        Task.upsert(tid="t2").set(due=date(2026, 8, 1)).run(db)
    assert Task.get(tid="t2").run(db) == Task(tid="t2", due=date(2026, 7, 1), assignee_id="ann")
    assert assigned("ann") == ["t2"]
    # Given as the message says, the key follows; an upsert setting both needs nothing.
    Task.update(tid="t2").set(due=date(2026, 8, 1)).known(assignee_id="ann").run(db)
    Task.upsert(tid="t3").set(due=date(2026, 9, 1), assignee_id="ann").run(db)
    assert assigned("ann") == ["t2", "t3"]
    assert [t.due for t in Task.query(index="GSI1", assignee_id="ann").all(db)] == [
        date(2026, 8, 1),
        date(2026, 9, 1),
    ]
    # An update (no upsert) still needs the value; the message shows how to give it.
    with pytest.raises(
        st.ExpressionError,
        match=r"e\.g\. Task\.update\(tid='t2'\)\.set\(due=\.\.\.\)\.known\(assignee_id=",
    ):
        Task.update(tid="t2").set(due=date(2026, 8, 2)).params()


_DAYS = hs.none() | hs.dates(date(2026, 1, 1), date(2026, 1, 9))
_WHO = hs.none() | hs.sampled_from(["ann", "bob"])


def test_sparse_upserts_keep_the_index_in_step_or_write_nothing(
    dynamodb_client: DynamoDBClient, table_name: str
) -> None:
    # Whatever is stored (no item, or any due/assignee), an upsert that sets one or both
    # fields leaves the item's GSI1 key as a put of the item read back writes it, or is
    # refused with nothing written, because the stored item holds a partner it left out.
    db, Task = _tasks(dynamodb_client, table_name)
    tids = iter(range(10**6))

    @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        stored=hs.none() | hs.tuples(_DAYS, _WHO),
        sets=hs.fixed_dictionaries({}, optional={"due": _DAYS, "assignee_id": _WHO}).filter(bool),
    )
    def upsert(stored: tuple[date | None, str | None] | None, sets: dict[str, Any]) -> None:
        tid = f"t{next(tids)}"
        if stored is not None:
            Task.put(Task(tid=tid, due=stored[0], assignee_id=stored[1])).run(db)
        before = Task.get(tid=tid).run(db)
        try:
            after = Task.upsert(tid=tid).set(**sets).run(db)
        except st.ConditionFailedError:
            assert before is not None
            assert any(
                getattr(before, name) is not None for name in {"due", "assignee_id"} - set(sets)
            )
            assert Task.get(tid=tid).run(db) == before
            return
        raw = _raw(dynamodb_client, table_name, f"TASK#{tid}")
        put = Task.put(after).params()["Item"]
        assert {a: raw.get(a) for a in ("GSI1PK", "GSI1SK")} == {
            a: put.get(a) for a in ("GSI1PK", "GSI1SK")
        }

    upsert()
