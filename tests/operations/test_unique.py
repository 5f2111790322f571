"""Uniqueness constraints, pure layer: compiling ``unique=``, guard keys, the requests."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

import singletable as st
from singletable.keys.codecs import codec_for
from singletable.model.guards import read_guard
from singletable.model.unique import UniqueConstraint, guard_prefix, is_guard_item
from tests.keys.test_templates import build
from tests.strategies import TemplateShape, shape_values, template_shapes

SOME = settings(max_examples=300, deadline=None)


def make_models() -> tuple[st.Table, Any, Any]:
    table = st.Table("uq")

    class User(
        st.Entity,
        table=table,
        pk="USER#{user_id}",
        sk="PROFILE",
        unique=["email", ("tenant", "handle")],
    ):
        user_id: str
        email: str
        tenant: str = "t1"
        handle: str | None = None
        name: str = ""

    class Note(st.Entity, table=table, pk="USER#{user_id}", sk="NOTE#{n}"):
        user_id: str
        n: int

    return table, User, Note


# -- the key shape ------------------------------------------------------------------------


def _constraint(shape: TemplateShape, entity: str) -> UniqueConstraint:
    table = st.Table("t", delimiter=shape.delimiter, escape=shape.escape)
    codecs = {name: codec_for(kind.annotation, [], where=name) for name, kind in shape.fields}
    return UniqueConstraint.build(entity, [n for n, _ in shape.fields], table, codecs)


@SOME
@given(hs.data())
def test_no_entity_key_looks_like_a_guard(data: hs.DataObject) -> None:
    # Every key a template can make (any delimiter/escape pair, any field types and
    # values) is recognised as an entity key, never as a guard.
    shape = data.draw(template_shapes())
    key = build(shape).format(data.draw(shape_values(shape)))
    table = st.Table("t", delimiter=shape.delimiter, escape=shape.escape)
    assert not key.startswith(guard_prefix(table))
    assert not is_guard_item(table, {"PK": {"S": key}})


@SOME
@given(hs.data(), hs.text(min_size=1, max_size=6))
def test_guard_keys_are_guards_and_parse_back(data: hs.DataObject, entity: str) -> None:
    shape = data.draw(template_shapes())
    constraint = _constraint(shape, entity)
    values = data.draw(shape_values(shape))
    other = data.draw(shape_values(shape))
    key = constraint.guard_key(values)
    assert is_guard_item(constraint.table, key)
    assert constraint.parse_values(key["PK"]["S"]) == {
        n: values[n] for n in constraint.fields
    } or shape.images(constraint.parse_values(key["PK"]["S"])) == shape.images(values)
    # Two values share a guard exactly when they are equal as their key order sees them.
    same = shape.images(values) == shape.images(other)
    assert (constraint.guard_key(other) == key) == same
    info = read_guard(constraint.table, key)
    assert (info.entity, info.fields) == (entity, constraint.fields)


@settings(max_examples=200, deadline=None)
@given(hs.integers(1, 2100), hs.sampled_from(["x", "é", "€", "😀", " "]))
def test_guard_key_size_refusals_state_the_stored_key_and_dynamodbs_limit(
    length: int, char: str
) -> None:
    # A guard key's values follow a prefix the template does not format: the refusal said
    # "key is 2046 bytes; limit 2038 bytes" (the values' part against a reduced budget)
    # about a key refused at 2,048. It states the whole key against DynamoDB's limit.
    _, User, _ = make_models()
    (constraint,) = [c for c in User.plan().unique if c.name == "email"]
    email = char * length
    prefix = constraint.key_prefix.encode()
    stored = len(prefix) + len(constraint.values_template.escaper.escape(email).encode())
    stored += len(b"email#")
    if stored <= 2048:
        assert len(constraint.guard_key({"email": email})["PK"]["S"].encode()) == stored
        return
    message = f"key is {stored} bytes; DynamoDB's limit for a partition key is 2048 bytes"
    with pytest.raises(st.KeyTooLargeError, match=message) as refused:
        constraint.guard_key({"email": email})
    assert (refused.value.size, refused.value.limit) == (stored, 2048)


def test_guard_of_one_entity_never_equals_another_entitys() -> None:
    table = st.Table("t")
    codecs = {"a": codec_for(str, [], where="a"), "b": codec_for(str, [], where="b")}
    one = UniqueConstraint.build("E", ["a"], table, codecs)
    pair = UniqueConstraint.build("E", ["a", "b"], table, codecs)
    other = UniqueConstraint.build("E#a", ["a"], table, codecs)
    keys = {
        one.guard_key({"a": "x#y"})["PK"]["S"],
        pair.guard_key({"a": "x", "b": "y"})["PK"]["S"],
        other.guard_key({"a": "x#y"})["PK"]["S"],
        other.guard_key({"a": "y"})["PK"]["S"],
    }
    assert len(keys) == 4
    assert one.guard_key({"a": "x#y"})["PK"]["S"] == "%UNIQUE#E#a#x%23y"


# -- compiling unique= --------------------------------------------------------------------


def test_plan_and_snapshot_describe_the_constraints() -> None:
    _table, User, Note = make_models()
    assert [c.fields for c in User.plan().unique] == [("email",), ("tenant", "handle")]
    assert User.plan().describe()["unique"] == [["email"], ["tenant", "handle"]]
    assert "unique" not in Note.plan().describe()  # snapshots without constraints unchanged


@pytest.mark.parametrize(
    ("unique", "message"),
    [
        (["nope"], "unique field 'nope' is not a field"),
        ([("email", "email")], "names a field twice"),
        (["email", ("email",)], "declares ('email',) twice"),
        ([("user_id",)], "is the primary key"),
        ([3], "must be a field name or a tuple"),
        ([], "unique= takes a field name"),
        (["meta"], "meta"),
    ],
)
def test_bad_declarations_are_refused_at_class_definition(unique: Any, message: str) -> None:
    table = st.Table("bad")
    with pytest.raises(
        st.ModelDefinitionError, match=message.replace("(", r"\(").replace(")", r"\)")
    ):

        class Bad(st.Entity, table=table, pk="B#{user_id}", sk="B", unique=unique):
            user_id: str
            email: str
            meta: dict[str, int] | None = None


def test_unique_needs_string_keys() -> None:
    table = st.Table("num", sk_type="N")
    with pytest.raises(st.ModelDefinitionError, match="non-string key attribute"):

        class Bad(st.Entity, table=table, pk="B#{user_id}", sk="{n}", unique="email"):
            user_id: str
            n: int
            email: str


# -- requests -------------------------------------------------------------------------------


def test_create_is_one_transaction_with_the_guards() -> None:
    _table, User, _ = make_models()
    request = User.create(User(user_id="u1", email="a@x", handle="ann")).params()
    items = request["TransactItems"]
    assert [next(iter(i)) for i in items] == ["Put", "Put", "Put"]
    assert items[0]["Put"]["Item"]["PK"] == {"S": "USER#u1"}
    assert items[0]["Put"]["ConditionExpression"] == "attribute_not_exists (#n0)"
    guard = items[1]["Put"]
    assert guard["Item"]["PK"] == {"S": "%UNIQUE#User#email#a@x"}
    assert guard["Item"]["SK"] == {"S": "%UNIQUE"}
    assert guard["Item"]["_uq_pk"] == {"S": "USER#u1"}
    assert guard["ConditionExpression"] == "attribute_not_exists (#n0) OR (#n1 = :v0 AND #n2 = :v1)"
    assert items[2]["Put"]["Item"]["PK"] == {"S": "%UNIQUE#User#tenant#t1#handle#ann"}


def test_none_values_are_not_guarded() -> None:
    _table, User, _ = make_models()
    items = User.create(User(user_id="u1", email="a@x")).params()["TransactItems"]
    assert len(items) == 2  # the item and the email guard: handle is None


def test_put_and_delete_by_key_read_the_values_first() -> None:
    _table, User, _ = make_models()
    read = {
        "TableName": "uq",
        "Key": {"PK": {"S": "USER#u1"}, "SK": {"S": "PROFILE"}},
        "ConsistentRead": True,
    }
    assert User.put(User(user_id="u1", email="a@x")).params() == read
    assert User.delete(user_id="u1").params() == read
    assert User.update(user_id="u1").set(email="b@x").params() == read


def test_update_with_known_values_moves_the_guard_in_one_transaction() -> None:
    _table, User, _ = make_models()
    request = User.update(user_id="u1").set(email="b@x").known(email="a@x").params()
    update, release, claim = request["TransactItems"]
    assert update["Update"]["ConditionExpression"] == "attribute_exists (#n1) AND #n0 = :v1"
    assert update["Update"]["ExpressionAttributeValues"][":v1"] == {"S": "a@x"}
    assert release["Delete"]["Key"]["PK"] == {"S": "%UNIQUE#User#email#a@x"}
    assert claim["Put"]["Item"]["PK"] == {"S": "%UNIQUE#User#email#b@x"}


def test_update_not_touching_unique_fields_is_a_plain_update() -> None:
    _table, User, _ = make_models()
    request = User.update(user_id="u1").set(name="Ann").params()
    assert "UpdateExpression" in request
    assert "TransactItems" not in request


def test_delete_of_an_object_releases_its_guards_without_reading() -> None:
    _table, User, _ = make_models()
    user = User(user_id="u1", email="a@x", handle="ann")
    delete, *releases = User.delete(user).params()["TransactItems"]
    assert delete["Delete"]["ConditionExpression"].count("=") == 3  # email, handle, tenant
    assert sorted(r["Delete"]["Key"]["PK"]["S"] for r in releases) == [
        "%UNIQUE#User#email#a@x",
        "%UNIQUE#User#tenant#t1#handle#ann",
    ]


def test_unique_fields_change_only_through_set() -> None:
    _table, User, _ = make_models()
    with pytest.raises(st.ExpressionError, match=r"'email' is unique .* only be changed with .set"):
        User.update(user_id="u1").set_if_not_exists(email="a@x").params()


def test_batch_writes_refuse_entities_with_unique_fields() -> None:
    _table, User, Note = make_models()
    with pytest.raises(st.RequestLimitError, match="unique fields"):
        st.BatchWrite(puts=[User(user_id="u1", email="a@x")])
    with pytest.raises(st.RequestLimitError, match="unique fields"):
        st.BatchWrite(deletes=[(User.plan(), {"user_id": "u1"})])
    assert st.BatchWrite(puts=[Note(user_id="u1", n=1)]).params()


def test_transactions_include_guards_and_refuse_unknown_old_values() -> None:
    _table, User, _ = make_models()
    tx = st.TransactWrite()
    tx = tx.put(User.create(User(user_id="u1", email="a@x")))
    tx = tx.update(User.update(user_id="u2").set(email="c@x").known(email="b@x"))
    tx = tx.delete(User.delete(User(user_id="u3", email="d@x")))
    kinds = [next(iter(i)) for i in tx.params()["TransactItems"]]
    assert kinds == ["Put", "Put", "Update", "Delete", "Put", "Delete", "Delete"]
    with pytest.raises(st.ExpressionError, match=r"pass .known\(email=...\)"):
        st.TransactWrite().update(User.update(user_id="u2").set(email="c@x"))
    with pytest.raises(st.ExpressionError, match="use create"):
        st.TransactWrite().put(User.put(User(user_id="u1", email="a@x")))
    with pytest.raises(st.ExpressionError, match="delete the object"):
        st.TransactWrite().delete(User.delete(user_id="u1"))


def test_explain_counts_guard_writes() -> None:
    _table, User, _ = make_models()
    op = User.create(User(user_id="u1", email="a@x", handle="ann"))
    lines = st.estimate_capacity(op).lines
    # The item and two guards, each a transactional write of 1 KB or less: 2 WCU each.
    assert [line.units for line in lines] == [2.0, 2.0, 2.0]
    assert st.estimate_capacity(op).total == 6.0
    moved = User.update(user_id="u1").set(email="b@x").known(email="a@x")
    before = User(user_id="u1", email="a@x").to_item()
    after = User(user_id="u1", email="b@x").to_item()
    # The update, the release of the old guard and the claim of the new one (2 WCU each),
    # then the consistent read of the item as stored (a transaction returns none): 1 RCU.
    assert st.estimate_capacity(moved, existing=before, after=after).total == 7.0
    # Without known(), the write also reads the item first: one more consistent read.
    read_first = User.update(user_id="u1").set(email="b@x")
    estimate = st.estimate_capacity(read_first, existing=before, after=after)
    assert (estimate.rcu, estimate.wcu) == (2.0, 6.0)
