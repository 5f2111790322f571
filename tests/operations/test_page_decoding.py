"""The page loop's item decoder (`EntityQuery._item_decoder`) against `EntityQuery._decode`.

The page loop takes a shortcut for items the queried entity's own version wrote; every
item, whatever its identifier attributes hold, must come out exactly as `_decode` makes it
(the same entity, ``None`` for items that are not the query's, the same error).
"""

from __future__ import annotations

import gc
import json
from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from pydantic import field_validator

from singletable import GSI, Collection, Entity, IndexKeys, Projection, Table
from singletable.errors import ItemDecodeError
from singletable.operations.scan import Scan
from singletable.operations.stream import Emit

table = Table(
    "page-decoding",
    indexes=[GSI("KO", pk="GSI1PK", sk="GSI1SK", projection=Projection.keys_only())],
)


class Note(
    Entity,
    table=table,
    pk="N#{owner}",
    sk="NOTE#{at}",
    indexes={"KO": IndexKeys(pk="K#{owner}", sk="{at}")},
):
    owner: str
    at: datetime
    text: str = ""


class NoteV2(Entity, table=table, pk="N#{owner}", sk="NOTE#{at}", name="Note", version=2):
    owner: str
    at: datetime
    body: str


class Other(Entity, table=table, pk="N#{owner}", sk="OTHER#{n}"):
    owner: str
    n: int


#: gc.isenabled() as each Probe was validated.
COLLECTOR_ON: list[bool] = []


class Probe(Entity, table=table, pk="N#{owner}", sk="PROBE#{n}"):
    owner: str
    n: int

    @field_validator("n")
    @classmethod
    def _record(cls, n: int) -> int:
        COLLECTOR_ON.append(gc.isenabled())
        return n


AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
GOOD = Note(owner="o", at=AT, text="hi").to_item()

identity_values = hs.one_of(
    hs.none(),  # attribute left out
    hs.sampled_from(
        [
            {"S": "Note"},
            {"S": "NoteV2"},
            {"S": "Other"},
            {"N": "1"},
            {"N": "2"},
            {"N": "3"},
            {"N": "1.0"},
            {"S": "1"},
            {"NULL": True},
            {},
        ]
    ),
)
field_values = hs.one_of(
    hs.none(), hs.sampled_from([{"S": "x"}, {"N": "1"}, {"S": "2026-01-02T03:04:05+00:00"}])
)


def changed(et: Any, ev: Any, text: Any, drop_at: bool) -> dict[str, Any]:
    """GOOD with its identifiers and text set (``None``: left out), and ``at`` dropped."""
    item = dict(GOOD)
    for attribute, value in (("_et", et), ("_ev", ev), ("text", text)):
        if value is None:
            item.pop(attribute, None)
        else:
            item[attribute] = value
    if drop_at:
        del item["at"]  # recovered from the sort key, as a projection would need
    return item


def outcome(decode: Any, item: dict[str, Any]) -> tuple[str, Any]:
    try:
        return "ok", decode(item)
    except Exception as exc:  # the error itself is what must match
        return "error", (type(exc), str(exc))


@settings(max_examples=300, deadline=None)
@given(
    et=identity_values,
    ev=identity_values,
    text=field_values,
    drop_at=hs.booleans(),
    index=hs.sampled_from([None, "KO"]),
    projected=hs.booleans(),
)
def test_the_page_decoder_equals_decode(
    et: Any, ev: Any, text: Any, drop_at: bool, index: str | None, projected: bool
) -> None:
    item = changed(et, ev, text, drop_at)
    query = Note.query(owner="o", index=index) if index else Note.query(owner="o")
    if projected:
        query = query.project("owner", "text")
    assert outcome(query._item_decoder(), item) == outcome(query._decode, item)


def test_the_plain_case_decodes_the_entity() -> None:
    decode = Note.query(owner="o")._item_decoder()
    assert decode(GOOD) == Note(owner="o", at=AT, text="hi")
    assert decode(Other(owner="o", n=1).to_item()) is None
    assert decode(NoteV2(owner="o", at=AT, body="b").to_item()) is None


@pytest.mark.usefixtures("default_collector")
def test_a_page_is_decoded_with_the_collector_held_off() -> None:
    items = [Probe(owner="o", n=n).to_item() for n in range(3)]
    stream = Probe.query(owner="o").stream_pages(cursors=False)
    next(stream)  # the Call
    COLLECTOR_ON.clear()
    out = stream.send({"Items": items})
    assert isinstance(out, Emit)
    assert [p.n for p in out.value.items] == [0, 1, 2]
    assert COLLECTOR_ON == [False, False, False]
    assert gc.isenabled()


@pytest.mark.usefixtures("default_collector")
def test_the_collector_is_on_again_when_a_page_fails_to_decode() -> None:
    bad = {**Probe(owner="o", n=1).to_item(), "n": {"S": "not a number"}}
    stream = Probe.query(owner="o").stream_pages(cursors=False)
    next(stream)
    with pytest.raises(ItemDecodeError, match=r"Probe\.n: expected a stored N"):
        stream.send({"Items": [bad]})
    assert gc.isenabled()


def test_the_page_decoder_of_a_plan_never_used_generates_its_decoder() -> None:
    fresh = Table("page-decoding-fresh")

    class Fresh(Entity, table=fresh, pk="F#{k}", sk="F"):
        k: str

    decode = Fresh.query(k="a")._item_decoder()  # before any item was decoded
    item = Fresh(k="a").to_item()
    assert decode(item) == Fresh(k="a")
    assert decode({**item, "_et": {"S": "Other"}}) is None  # handed to _decode
    assert Fresh.from_item(item) == Fresh(k="a")  # the plan's own decoder, generated once


# -- pages decoded with the body (`singletable.model.pages`) ------------------------------


def _call_of(query: Any) -> Any:
    stream = query.stream_pages(cursors=False)
    call = next(stream)
    stream.close()
    return call


def test_the_query_hands_its_page_decoder_only_where_every_item_is_taken() -> None:
    plain = _call_of(Note.query(owner="o"))
    assert plain.decode_body is not None
    assert plain.params == Note.query(owner="o").params()  # nothing of it is sent
    # A limit counts items and a projection decodes a part: their items are the loop's.
    assert _call_of(Note.query(owner="o").limit(5)).decode_body is None
    assert _call_of(Note.query(owner="o").project("text")).decode_body is None


def test_a_page_of_decoded_entities_and_items_left_to_the_loop() -> None:
    left = Other(owner="o", n=1).to_item()
    entity = Note(owner="o", at=AT, text="hi")
    stream = Note.query(owner="o").stream_pages(cursors=False)
    next(stream)
    out = stream.send({"Items": [entity, GOOD, left]})
    assert isinstance(out, Emit)
    assert out.value.items == [entity, entity]  # GOOD decoded by the loop
    assert out.value.unknown == [left]


members = Collection("page-decoding-notes", Note, NoteV2, Other)


def page_outcome(query: Any, items: list[dict[str, Any]], with_body: bool) -> tuple[str, Any]:
    """One page through the stream, with or without its body decoded first."""
    stream = query.stream_pages(cursors=False)
    call = next(stream)
    response: dict[str, Any] = {"Items": items, "Count": len(items)}
    if with_body:
        assert call.decode_body is not None
        decoded = call.decode_body(json.dumps(response).encode())
        assert decoded is not None
        response = decoded
    try:
        out = stream.send(response)
    except Exception as exc:  # the error itself is what must match
        return "error", (type(exc), str(exc))
    assert isinstance(out, Emit)
    # repr: the entities' classes and their datetimes' tzinfo classes too.
    return "ok", (repr(out.value.items), out.value.unknown)


@settings(max_examples=300, deadline=None)
@given(
    et=identity_values,
    ev=identity_values,
    text=field_values,
    drop_at=hs.booleans(),
    which=hs.sampled_from(["query", "collection", "scan"]),
)
def test_a_page_decoded_with_its_body_equals_the_page_decoded_by_item(
    et: Any, ev: Any, text: Any, drop_at: bool, which: str
) -> None:
    item = changed(et, ev, text, drop_at)
    others = [
        Note(owner="o", at=AT, text="a").to_item(),
        NoteV2(owner="o", at=AT, body="b").to_item(),
        Other(owner="o", n=3).to_item(),
    ]
    query = {
        "query": Note.query(owner="o"),
        "collection": members.query(owner="o"),
        "scan": Note.scan(),
    }[which]
    items = [others[0], item, *others[1:]]
    assert page_outcome(query, items, True) == page_outcome(query, items, False)


def test_collections_and_scans_hand_their_page_decoders() -> None:
    assert _call_of(members.query(owner="o")).decode_body is members.page_decoder
    assert _call_of(Note.scan()).decode_body is not None
    assert _call_of(Scan(table)).decode_body is None  # any entity: decoded by item
    status, (items, unknown) = page_outcome(
        members.query(owner="o"),
        [GOOD, NoteV2(owner="o", at=AT, body="b").to_item(), Other(owner="o", n=3).to_item()],
        True,
    )
    assert status == "ok"
    assert items == repr(
        [
            Note(owner="o", at=AT, text="hi"),
            NoteV2(owner="o", at=AT, body="b"),
            Other(owner="o", n=3),
        ]
    )
    assert unknown == []
