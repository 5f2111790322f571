"""Entity compilation: class-definition errors, item encoding and decoding.

Every modelling mistake must be refused when the class is created, with a
`ModelDefinitionError` whose message names the class, the template and the field.
"""

from __future__ import annotations

import datetime as dt
import enum
import ipaddress
import uuid
from decimal import Decimal
from typing import Annotated, Any, Optional

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from pydantic import BaseModel, ConfigDict, Field

import singletable as st
from singletable.attributes.size import item_size
from singletable.entity import Entity
from singletable.errors import (
    ItemDecodeError,
    ItemTooLargeError,
    KeyEncodeError,
    ModelDefinitionError,
)
from singletable.examples import Actor, AuditEvent, Folder, Reading, demo
from singletable.keys.codecs import KeyFormat
from singletable.model.plan import IndexKeys, entity_plan
from singletable.model.table import GSI, LSI, Projection, Table
from singletable.operations.reads import decode_any
from singletable.testing.strategies import aware_datetimes, key_text
from tests.strategies import Level, Shade

T0 = dt.datetime(2026, 6, 23, 8, 0, tzinfo=dt.timezone.utc)


def refused(*fragments: str) -> Any:
    """Assert the block raises ModelDefinitionError whose message holds every fragment."""

    class Check:
        def __enter__(self) -> None:
            self._raises = pytest.raises(ModelDefinitionError)
            self._info = self._raises.__enter__()

        def __exit__(self, *exc: Any) -> bool:
            handled = self._raises.__exit__(*exc)
            message = str(self._info.value)
            for fragment in fragments:
                assert fragment in message, (fragment, message)
            return bool(handled)

    return Check()


# --------------------------------------------------------------------------------------
# class-definition errors: templates


def test_unknown_field_in_template() -> None:
    with refused(
        "Bad (table key), pk template 'ACTOR#{actor}'", "unknown field 'actor'", "actor_id"
    ):

        class Bad(Entity, table=Table("t"), pk="ACTOR#{actor}", sk="X"):
            actor_id: str


@pytest.mark.parametrize(
    ("annotation", "fragment"),
    [
        (list[int], "key fields must be scalar, not list[int]"),
        (dict[str, int], "key fields must be scalar"),
        (set[str], "key fields must be scalar"),
        (bytes, "type bytes is not supported in keys"),
        (Optional[int], "cannot be optional"),  # noqa: UP045 (the spelling under test)
        (int | str, "cannot be a union"),
        (enum.Flag, "flag enum"),
    ],
)
def test_unsupported_key_field_types(annotation: Any, fragment: str) -> None:
    with refused("Bad.x in template 'A#{x}'", fragment):

        class Bad(Entity, table=Table("t"), pk="P", sk="A#{x}"):
            x: annotation


def test_model_key_field_is_refused() -> None:
    class Address(BaseModel):
        city: str

    with refused("Bad.where in template 'A#{where}'", "not the model", "Address"):

        class Bad(Entity, table=Table("t"), pk="A#{where}", sk="S"):
            where: Address


def test_an_entity_with_an_unstorable_field_is_refused_at_class_creation() -> None:
    """At the top level and in a nested model's field, naming the class and the field."""
    table = Table("unstorable")

    with pytest.raises(ModelDefinitionError, match=r"Job\.timeout: timedelta values cannot"):

        class Job(Entity, table=table, pk="JOB#{job_id}", sk="JOB"):
            job_id: str
            timeout: dt.timedelta

    class Endpoint(BaseModel):
        host: str
        address: ipaddress.IPv4Address | None = None

    with pytest.raises(ModelDefinitionError, match=r"Endpoint\.address: IPv4Address values"):

        class Service(Entity, table=table, pk="SVC#{name}", sk="SVC"):
            name: str
            endpoints: list[Endpoint]


def test_optional_primary_key_field() -> None:
    with refused("Bad.x in template 'A#{x}'", "primary key field cannot be optional"):

        class Bad(Entity, table=Table("t"), pk="A#{x}", sk="S"):
            x: str | None = None


@pytest.mark.parametrize(
    ("sk", "fragment"),
    [
        ("v{n}", "segment 'v{n}' mixes literal text and a field"),
        ("{n}{m}", "segment '{n}{m}' mixes"),
        ("A##{n}", "empty segment"),
        ("A#{n}#", "empty segment"),
        ("A B#{n}", "literal segment 'A B' contains ' '"),
        ("A%#{n}", "contains '%'"),
        ("{n}#{n}", "field 'n' appears twice"),
        ("", "cannot be empty"),
    ],
)
def test_malformed_templates(sk: str, fragment: str) -> None:
    with refused(f"Bad (table key), sk template {sk!r}", fragment):

        class Bad(Entity, table=Table("t"), pk="P", sk=sk):
            n: int
            m: int


def test_template_must_be_a_string() -> None:
    with refused("Bad: sk template must be a str, got 5"):

        class Bad(Entity, table=Table("t"), pk="P", sk=5):
            n: int


def test_number_key_needs_a_lone_numeric_field() -> None:
    table = Table("t", sk_type="N")
    with refused("Bad (table key), sk template 'A#{n}'", "'SK' is a Number"):

        class Bad(Entity, table=table, pk="P", sk="A#{n}"):
            n: int

    with refused("Bad2 (table key), sk template '{s}'", "field 's' is not numeric"):

        class Bad2(Entity, table=table, pk="P", sk="{s}"):
            s: str


# --------------------------------------------------------------------------------------
# class-definition errors: keys, indexes, options


def test_two_entities_with_one_identifier() -> None:
    table = Table("t")

    class First(Entity, table=table, pk="A#{a}", sk="S", name="Thing"):
        a: str

    with refused("'Thing' version 1", "table 't'", "First", "Second", "name=... or version=..."):

        class Second(Entity, table=table, pk="B#{a}", sk="S", name="Thing"):
            a: str

    # Another version of the same name is a different identifier.
    class Third(Entity, table=table, pk="B#{a}", sk="S", name="Thing", version=2):
        a: str

    assert entity_plan(table, "Thing", 2) is Third.plan()
    assert entity_plan(table, "Thing", 1) is First.plan()


def test_two_classes_with_the_same_name_collide_by_default() -> None:
    table = Table("t")

    def make() -> type[Entity]:
        class Event(Entity, table=table, pk="E#{a}", sk="S"):
            a: str

        return Event

    make()
    with refused("'Event' version 1", "already used on table 't'"):
        make()


def test_sort_key_declared_to_match_the_table() -> None:
    with refused("Bad: table key has sort key attribute 'SK'; declare sk=..."):

        class Bad(Entity, table=Table("t"), pk="A#{a}"):
            a: str

    with refused("Bad2: table key has no sort key attribute", "sk='X'"):

        class Bad2(Entity, table=Table("t", sk=None), pk="A#{a}", sk="X"):
            a: str


def test_index_must_exist_on_the_table() -> None:
    table = Table("t", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])
    with refused("Bad: table 't' has no index 'GSI9'", "indexes: GSI1"):

        class Bad(Entity, table=table, pk="A#{a}", sk="S", indexes={"GSI9": IndexKeys("X", "Y")}):
            a: str


def test_index_keys_checked_like_table_keys() -> None:
    table = Table("t", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])
    with refused("Bad: index GSI1 has sort key attribute 'GSI1SK'; declare sk=..."):

        class Bad(Entity, table=table, pk="A#{a}", sk="S", indexes={"GSI1": IndexKeys(pk="X")}):
            a: str

    with refused("Bad2 (index GSI1), pk template 'X#{nope}'", "unknown field 'nope'"):

        class Bad2(
            Entity,
            table=table,
            pk="A#{a}",
            sk="S",
            indexes={"GSI1": IndexKeys(pk="X#{nope}", sk="Y")},
        ):
            a: str

    with refused("Bad3: indexes['GSI1'] must be IndexKeys(pk=..., sk=...)"):

        class Bad3(Entity, table=table, pk="A#{a}", sk="S", indexes={"GSI1": 42}):
            a: str


def test_lsi_takes_no_partition_key() -> None:
    table = Table("t", indexes=[LSI("LSI1", sk="LSI1SK")])
    with refused("Bad: LSI 'LSI1' shares the table's partition key", "give only sk=..."):

        class Bad(
            Entity,
            table=table,
            pk="A#{a}",
            sk="S",
            indexes={"LSI1": IndexKeys(pk="B#{a}", sk="{b}")},
        ):
            a: str
            b: str

    class Good(Entity, table=table, pk="A#{a}", sk="S", indexes={"LSI1": "{b}"}):
        a: str
        b: str

    assert Good(a="1", b="z").to_item()["LSI1SK"] == {"S": "z"}


def test_unknown_class_keyword() -> None:
    with refused("Bad: unknown class keyword(s) ['skey']", "known:"):

        class Bad(Entity, table=Table("t"), pk="A#{a}", sk="S", skey="X"):
            a: str

    with refused("Abstract: options ['sk'] need a partition key template pk=..."):

        class Abstract(Entity, table=Table("t"), sk="S"):
            a: str


def test_entity_needs_a_table() -> None:
    with refused("Bad: an entity needs table=Table(...)"):

        class Bad(Entity, pk="A#{a}", sk="S"):
            a: str

    with refused("Bad2: table= must be a Table, got 'app'"):

        class Bad2(Entity, table="app", pk="A#{a}", sk="S"):
            a: str


def test_field_named_like_an_entity_method() -> None:
    # Refused before pydantic collects the fields (so before its shadowing warning).
    with refused("Bad.query: the field name shadows Entity.query"):

        class Bad(Entity, table=Table("t"), pk="A#{a}", sk="S"):
            a: str
            query: str  # type: ignore[assignment]


@pytest.mark.parametrize("name", ["PK", "SK", "GSI1PK", "_et", "expires"])
def test_field_named_like_a_table_attribute(name: str) -> None:
    table = Table(
        "t",
        indexes=[GSI("GSI1", pk="GSI1PK")],
        ttl_attribute="expires",
        entity_attribute="et" if name != "_et" else "_et",
    )
    if name == "_et":  # pydantic keeps underscore names out of fields: use a visible one
        table = Table("t", entity_attribute="kind")
        name = "kind"
    with refused(f"Bad.{name}: the field name is a key or bookkeeping attribute of table 't'"):
        type(
            "Bad",
            (Entity,),
            {"__annotations__": {"a": str, name: str}},
            table=table,
            pk="A#{a}",
            sk="S",
        )


def test_version_field_must_be_an_int_field() -> None:
    for annotation in (str, bool, float):
        with refused("Bad: version_field field 'rev' must be int"):
            type(
                "Bad",
                (Entity,),
                {"__annotations__": {"a": str, "rev": annotation}},
                table=Table("t"),
                pk="A#{a}",
                sk="S",
                version_field="rev",
            )
    with refused("Bad2: version_field='nope' is not a field"):

        class Bad2(Entity, table=Table("t"), pk="A#{a}", sk="S", version_field="nope"):
            a: str

    with refused("Bad3: version_field field 'rev' cannot be part of the primary key"):

        class Bad3(Entity, table=Table("t"), pk="A#{a}", sk="R#{rev}", version_field="rev"):
            a: str
            rev: int


def test_version_must_be_a_positive_int() -> None:
    for version in (0, -1, "2", True):
        with refused(f"Bad: version must be an int >= 1, got {version!r}"):

            class Bad(Entity, table=Table("t"), pk="A#{a}", sk="S", version=version):
                a: str


def test_ttl_needs_the_table_ttl_attribute() -> None:
    with refused("Bad: ttl='expires_at' needs Table(..., ttl_attribute='...')"):

        class Bad(Entity, table=Table("t"), pk="A#{a}", sk="S", ttl="expires_at"):
            a: str
            expires_at: dt.datetime

    with refused("Bad2: ttl field 'expires_at' must be datetime or int"):

        class Bad2(
            Entity, table=Table("t", ttl_attribute="exp"), pk="A#{a}", sk="S", ttl="expires_at"
        ):
            a: str
            expires_at: str


def test_abstract_entity_has_no_plan() -> None:
    table = Table("t")

    class Base(Entity, table=table):
        tenant: str

    with refused("Base is abstract: declare pk=..."):
        Base.plan()

    class Child(Base, pk="T#{tenant}", sk="C#{n}"):
        n: int

    assert Child.plan().table is table
    assert Child(tenant="a", n=1).to_item()["PK"] == {"S": "T#a"}


def test_each_class_encodes_with_its_own_plan() -> None:
    table = Table("bound")

    class Base(Entity, table=table):
        tenant: str

    class Parent(Base, pk="T#{tenant}", sk="P"):
        n: int = 0

    class Child(Parent, pk="T#{tenant}", sk="C#{n}", name="Kid"):
        pass

    class Loose(Parent):  # abstract again: no pk of its own
        pass

    parent, child = Parent(tenant="a"), Child(tenant="a", n=2)
    assert parent.to_item() == Parent.plan()._to_item_reference(parent)
    # A subclass encodes with its own plan, not its parent's.
    assert child.to_item() == Child.plan()._to_item_reference(child)
    assert child.to_item()["_et"] == {"S": "Kid"}
    with refused("Loose is abstract: declare pk=..."):
        Loose(tenant="a").to_item()


def test_a_to_item_the_user_wrote_is_kept() -> None:
    table = Table("own")

    class Stamped(Entity, table=table):
        def to_item(self) -> dict[str, Any]:
            return {**super().to_item(), "stamp": {"S": "base"}}

    class Order(Stamped, pk="O#{oid}", sk="O"):
        oid: str

    class Note(Entity, table=table, pk="N#{nid}", sk="N"):
        nid: str

        def to_item(self) -> dict[str, Any]:
            return {**super().to_item(), "stamp": {"S": "own"}}

    for _ in range(2):  # before and after the encoder is generated
        assert Order(oid="1").to_item()["stamp"] == {"S": "base"}
        assert Note(nid="1").to_item()["stamp"] == {"S": "own"}
    assert Note(nid="1").to_item()["PK"] == {"S": "N#1"}

    class Memo(Note, pk="M#{nid}", sk="M", name="Memo"):
        def to_item(self) -> dict[str, Any]:
            return {**super().to_item(), "memo": {"BOOL": True}}

    # super() reaches Note's to_item, then Entity's: Memo's own plan encodes it.
    assert Memo(nid="1").to_item() == {
        **Memo.plan()._to_item_reference(Memo(nid="1")),
        "stamp": {"S": "own"},
        "memo": {"BOOL": True},
    }

    class Plain(Entity, table=table, pk="P#{pid}", sk="P"):
        pid: str

    assert Plain(pid="1").to_item()["_et"] == {"S": "Plain"}

    class Tagged(Plain, pk="G#{pid}", sk="G", name="Tagged"):
        def to_item(self) -> dict[str, Any]:
            return {**super().to_item(), "tag": {"S": "t"}}

    # super() reaches Plain's method, which encodes with Tagged's plan.
    item = Tagged(pid="1").to_item()
    assert item == {**Tagged.plan()._to_item_reference(Tagged(pid="1")), "tag": {"S": "t"}}
    assert Plain(pid="1").to_item() == Plain.plan()._to_item_reference(Plain(pid="1"))


# --------------------------------------------------------------------------------------
# item encoding and decoding


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    city: str
    lines: list[str] = Field(default_factory=list)


mixed_table = Table(
    "mixed",
    indexes=[
        GSI("GSI1", pk="GSI1PK", sk="GSI1SK"),
        GSI("KEYS", pk="KPK", sk="KSK", projection=Projection.keys_only()),
    ],
)


class Order(
    Entity,
    table=mixed_table,
    pk="CUST#{customer}",
    sk="ORDER#{placed}#{number}",
    indexes={
        "GSI1": IndexKeys(pk="STATUS#{status}", sk="{total}#{shade}"),
        "KEYS": IndexKeys(pk="COUPON#{coupon}", sk="{level}#{ref}"),
    },
):
    customer: str
    placed: dt.datetime
    number: Annotated[int, KeyFormat(width=6)]
    status: str
    total: Decimal
    shade: Shade
    level: Level
    ref: uuid.UUID
    coupon: str | None = None
    paid: bool = False
    color: Color = Color.RED
    tags: set[str] = Field(default_factory=set)
    lines: list[str] = Field(default_factory=list)
    counts: dict[str, int] = Field(default_factory=dict)
    blob: bytes = b""
    address: Address | None = None
    note: str | None = None


dynamo_decimals = hs.decimals(
    min_value=Decimal("-1E20"), max_value=Decimal("1E20"), allow_nan=False, places=4
)
small_text = hs.text(hs.characters(codec="utf-8"), max_size=8)

orders = hs.builds(
    Order,
    customer=key_text(max_size=8).filter(bool),
    placed=aware_datetimes(),
    number=hs.integers(0, 999_999),
    status=key_text(max_size=6),
    total=dynamo_decimals,
    shade=hs.sampled_from(Shade),
    level=hs.sampled_from(Level),
    ref=hs.uuids(),
    coupon=hs.none() | key_text(max_size=6),
    paid=hs.booleans(),
    color=hs.sampled_from(Color),
    tags=hs.sets(small_text, max_size=3),
    lines=hs.lists(small_text, max_size=3),
    counts=hs.dictionaries(small_text.filter(bool), hs.integers(-(10**30), 10**30), max_size=3),
    blob=hs.binary(max_size=16),
    address=hs.none() | hs.builds(Address, city=small_text, lines=hs.lists(small_text, max_size=2)),
    note=hs.none() | small_text,
)


@settings(max_examples=500, deadline=None)
@given(orders)
def test_item_round_trip(order: Order) -> None:
    item = order.to_item()
    assert Order.from_item(item) == order
    # Keys are what the compiled templates say; the identifier is on every item.
    plan = Order.plan()
    assert plan.primary.sk is not None
    assert item["SK"] == {"S": plan.primary.sk.format_object(order)}
    assert item["_et"] == {"S": "Order"}
    assert item["_ev"] == {"N": "1"}
    # Sparse KEYS index: present exactly when coupon is set; never an empty key.
    assert ("KPK" in item) == ("KSK" in item) == (order.coupon is not None)
    for attribute in ("PK", "SK", "GSI1PK", "GSI1SK", "KPK", "KSK"):
        if attribute in item:
            assert item[attribute]["S"] != ""
    # None is omitted, never stored as NULL; an empty set is omitted too.
    assert ("note" in item) == (order.note is not None)
    assert ("tags" in item) == bool(order.tags)


class Ticket(
    Entity,
    table=mixed_table,
    pk="T#{tenant}",
    sk="TICKET#{opened}#{number}",
    indexes={"KEYS": IndexKeys(pk="ASSIGNEE#{assignee}", sk="{priority}#{ref}")},
):
    tenant: str
    opened: dt.datetime
    number: int
    assignee: str | None = None
    priority: Level = Level.MID
    ref: uuid.UUID
    title: str = "untitled"


@settings(max_examples=500, deadline=None)
@given(
    tenant=key_text(max_size=8).filter(bool),
    opened=aware_datetimes(),
    number=hs.integers(-(10**38) + 1, 10**38 - 1),  # stored as an attribute too: 38 digits
    assignee=key_text(max_size=8),
    priority=hs.sampled_from(Level),
    ref=hs.uuids(),
)
def test_keys_only_projection_recovers_key_fields(**values: Any) -> None:
    """A KEYS_ONLY index item holds the table and index keys only; key fields come back."""
    ticket = Ticket(**values, title="kept out of the index")
    item = ticket.to_item()
    projected = {a: item[a] for a in ("PK", "SK", "KPK", "KSK")}
    assert Ticket.from_item(projected) == ticket.model_copy(update={"title": "untitled"})


def test_keys_only_projection_cannot_invent_non_key_fields() -> None:
    order = Order(
        customer="c",
        placed=T0,
        number=1,
        status="open",
        total=Decimal("9.5"),
        shade=Shade.A,
        level=Level.LOW,
        ref=uuid.UUID(int=7),
        coupon="SAVE",
    )
    item = order.to_item()
    projected = {a: item[a] for a in ("PK", "SK", "KPK", "KSK")}
    with pytest.raises(ItemDecodeError) as info:
        Order.from_item(projected)
    # status, total and shade are only in GSI1's keys, which KEYS does not project.
    assert "entity Order: stored item does not validate" in str(info.value)
    for name in ("status", "total", "shade"):
        assert name in str(info.value)
    # With GSI1's keys as well, every required field is recovered.
    projected.update({a: item[a] for a in ("GSI1PK", "GSI1SK")})
    decoded = Order.from_item(projected)
    assert (decoded.status, decoded.total, decoded.shade) == ("open", Decimal("9.5"), Shade.A)
    assert (decoded.level, decoded.ref, decoded.coupon) == (Level.LOW, uuid.UUID(int=7), "SAVE")


def test_sparse_index_keys_are_omitted() -> None:
    root = Folder(account="acme", path="root/")
    item = root.to_item()
    assert "GSI2PK" not in item
    assert "GSI2SK" not in item
    child = Folder(account="acme", path="root/a/", parent="root/").to_item()
    assert child["GSI2PK"] == {"S": "DRIVE#acme#root/"}
    assert child["GSI2SK"] == {"S": "root/a/"}


def test_identity_attributes_name_and_version() -> None:
    table = Table("ids", entity_attribute="type", version_attribute="schema")

    class Thing(Entity, table=table, pk="T#{a}", sk="S", name="thing", version=3):
        a: str

    item = Thing(a="x").to_item()
    assert item["type"] == {"S": "thing"}
    assert item["schema"] == {"N": "3"}
    assert Thing.plan().identity_attributes() == {"type": {"S": "thing"}, "schema": {"N": "3"}}


def test_mixed_partition_decodes_by_identifier() -> None:
    actor = Actor(actor_id="u_1", display_name="Ada")
    event = AuditEvent(actor_id="u_1", ts=T0, seq=1, action="login", target="doc")
    reading = Reading(device_id="d", ts=T0, day=T0.date(), celsius=Decimal("21.5"))
    for obj in (actor, event, reading):
        decoded = decode_any(demo, obj.to_item())
        assert type(decoded) is type(obj)
        assert decoded == obj
    unknown = {**event.to_item(), "_et": {"S": "Nope"}}
    assert decode_any(demo, unknown) is None
    assert decode_any(demo, {**event.to_item(), "_ev": {"N": "9"}}) is None


def test_from_item_of_another_entity_is_refused() -> None:
    item = Actor(actor_id="u_1", display_name="Ada").to_item()
    with pytest.raises(ItemDecodeError) as info:
        AuditEvent.from_item(item)
    assert "written by entity 'Actor' version 1" in str(info.value)


def test_invalid_stored_item_names_the_entity() -> None:
    item = Actor(actor_id="u_1", display_name="Ada").to_item()
    del item["display_name"]
    with pytest.raises(ItemDecodeError) as info:
        Actor.from_item(item)
    assert "entity Actor: stored item does not validate" in str(info.value)
    assert "display_name" in str(info.value)


def test_item_over_400_kb_is_refused_before_any_request() -> None:
    table = Table("big")

    class Doc(Entity, table=table, pk="D#{a}", sk="S"):
        a: str
        body: str

    limit = 400 * 1024
    base = item_size(Doc(a="x", body="").to_item())
    fits = Doc(a="x", body="y" * (limit - base))
    assert item_size(fits.to_item()) == limit
    big = Doc(a="x", body="y" * (limit - base + 1))
    with pytest.raises(ItemTooLargeError) as info:
        big.to_item()
    message = str(info.value)
    assert "entity Doc" in message
    assert f"{limit + 1} bytes" in message
    assert f"{limit} bytes" in message
    with pytest.raises(ItemTooLargeError):
        Doc.put(big)  # the request builder encodes at once: nothing is ever sent


def test_empty_key_is_refused() -> None:
    table = Table("names", sk=None)

    class Name(Entity, table=table, pk="{name}"):
        name: str

    assert Name(name="x").to_item()["PK"] == {"S": "x"}
    with pytest.raises(KeyEncodeError) as info:
        Name(name="").to_item()
    assert "Name (table key), pk template '{name}'" in str(info.value)
    assert "the key is empty" in str(info.value)


def test_version_field_cannot_key_an_index() -> None:
    other = st.Table("followups-2", indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])
    with pytest.raises(st.ModelDefinitionError, match=r"version_field 'rev' cannot be part of"):

        class Doc(
            st.Entity,
            table=other,
            pk="DOC#{doc_id}",
            sk="META",
            indexes={"GSI1": st.IndexKeys(pk="DOCS", sk="{rev}")},
            version_field="rev",
        ):
            doc_id: str
            rev: int = 0


def test_extra_allow_models_are_refused_rather_than_losing_extra_values() -> None:
    other = st.Table("followups-3")
    with pytest.raises(st.ModelDefinitionError, match=r"Loose: model_config extra='allow'"):

        class Loose(st.Entity, table=other, pk="L#{lid}", sk="META"):
            model_config = ConfigDict(extra="allow")
            lid: str
