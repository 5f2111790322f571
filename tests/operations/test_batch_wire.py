"""A batch write on the lean transport: items sent as the JSON text the validating pass made.

The requests must be the ones `BatchWrite.chunks` shows (as the server reads them), and
bad input anywhere in the batch must be refused before the first call, with the error
the dict form gives.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any
from unittest.mock import patch

import boto3
import orjson
import pytest
from botocore.awsrequest import AWSResponse, HTTPHeaders
from botocore.config import Config
from hypothesis import given, settings
from hypothesis import strategies as hs
from pydantic import Field

import singletable as st
from singletable.model.wire import encode_other
from singletable.operations import batch as batch_module
from singletable.operations.protocol import Call

table = st.Table("batchwire")
T0 = datetime(2026, 6, 23, 8, 0, tzinfo=timezone.utc)
LONE = "\ud800"


class Event(st.Entity, table=table, pk="ACTOR#{actor}", sk="EVT#{ts}#{seq}"):
    actor: str
    ts: datetime
    seq: int
    action: str
    details: dict[str, str] = Field(default_factory=dict)
    blob: bytes = b""


def events(n: int) -> list[Event]:
    return [
        Event(
            actor=f"u{i % 7}",
            ts=T0 + timedelta(seconds=i),
            seq=i,
            action='é"\\' if i % 3 else "login",
            details={"k": str(i)},
            blob=bytes([i % 256]),
        )
        for i in range(n)
    ]


def wire_requests(op: st.BatchWrite) -> list[Any]:
    """The requests `wire_steps` makes, as JSON reads them (every chunk processed)."""
    out = []
    steps = op.wire_steps(orjson.Fragment)
    try:
        step = next(steps)
        while True:
            assert isinstance(step, Call)
            assert step.text_checked
            out.append(orjson.loads(orjson.dumps(step.params)))
            step = steps.send({})
    except StopIteration:
        return out


def test_the_wire_requests_are_the_chunks_shown_by_the_dict_form() -> None:
    deletes = [(Event.plan(), {"actor": "x", "ts": T0, "seq": i}) for i in range(30)]
    op = st.BatchWrite(puts=events(60), deletes=deletes, capacity="TOTAL")
    sent = wire_requests(op)
    # Asking for the dict form afterwards builds it from the same validated items.
    shown = [orjson.loads(orjson.dumps(c, default=encode_other)) for c in op.chunks()]
    assert sent == shown
    assert len(sent) == 4


def test_once_the_dict_form_is_asked_for_it_is_what_is_sent() -> None:
    # A caller may change the dict form (a migration adds requests): then it is sent.
    op = st.BatchWrite(puts=events(3))
    op.requests.append(op.requests[0])
    steps = op.wire_steps(orjson.Fragment)
    call = next(steps)
    assert isinstance(call, Call)
    assert len(call.params["RequestItems"]["batchwire"]) == 4
    assert isinstance(call.params["RequestItems"]["batchwire"][0]["PutRequest"]["Item"], dict)


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"seq": "x"}, st.KeyEncodeError, "field .seq."),
        ({"details": {"": "x"}}, st.ItemEncodeError, None),
        ({"action": LONE}, st.TextEncodeError, r"RequestItems\['batchwire'\]\[1900\]"),
        ({"actor": LONE}, st.TextEncodeError, r"RequestItems\['batchwire'\]\[1900\]"),
        ({"actor": "u0", "ts": T0, "seq": 0}, st.RequestLimitError, "appears twice"),
        ({"action": "a" * 410_000}, st.ItemTooLargeError, None),
    ],
)
def test_an_invalid_item_at_1900_of_2000_is_refused_before_any_write(
    change: dict[str, Any], error: type[Exception], message: str | None
) -> None:
    objs = events(2000)
    bad = objs[1900]
    for name, value in change.items():
        bad.__dict__[name] = value  # past validation, as a bug or a mutation would leave it
    calls: list[bytes] = []
    db = _lean_connection(calls)
    with pytest.raises(error, match=message) as raised:
        db.execute(st.BatchWrite(puts=objs))
    assert calls == []
    # The same error as the dict form gives (the boto3 transport's).
    with pytest.raises(error) as expected:
        st.BatchWrite(puts=objs).requests  # noqa: B018
    assert str(raised.value) == str(expected.value)


def test_the_lean_connection_sends_the_wire_form() -> None:
    calls: list[bytes] = []
    db = _lean_connection(calls)
    objs = events(30)
    op = st.BatchWrite(puts=objs)
    result = db.execute(op)
    assert result == st.BatchWriteResult(put=30, calls=2)
    assert op._requests is None  # sent without ever building the dict form
    sent = [orjson.loads(body) for body in calls]
    shown = st.BatchWrite(puts=objs).chunks()
    assert sent == [orjson.loads(orjson.dumps(c, default=encode_other)) for c in shown]


def _lean_connection(calls: list[bytes]) -> st.Connection:
    client: Any = boto3.Session().client(
        "dynamodb",
        region_name="us-east-1",
        endpoint_url="https://dynamodb.us-east-1.amazonaws.com",
        aws_access_key_id="local",
        aws_secret_access_key="local",
        config=Config(parameter_validation=False),
    )

    class _Raw:
        def stream(self, **_: Any) -> Any:
            yield b'{"UnprocessedItems":{}}'

    def answer(request: Any, **_: Any) -> AWSResponse:
        calls.append(request.body)
        headers = HTTPHeaders()
        headers["content-type"] = "application/x-amz-json-1.0"
        return AWSResponse(request.url, 200, headers, _Raw())

    client.meta.events.register("before-send.dynamodb.BatchWriteItem", answer)
    db = st.Connection(client, transport="lean")
    assert db.transport == "lean"
    return db


other_table = st.Table("batchwire-other")


class Note(st.Entity, table=other_table, pk="NOTE#{owner}", sk="N"):
    owner: str
    text: str


_TEXT = hs.sampled_from(["a", "b", "é", LONE, "x\x00"])


def _outcome(make: Any) -> tuple[str, Any]:
    try:
        op = make()
    except Exception as exc:  # compared by type and message
        return type(exc).__name__, str(exc)
    chunks = [orjson.loads(orjson.dumps(c, default=encode_other)) for c in op.chunks()]
    return "ok", (chunks, list(op._origins.items()), op._key_attributes)


@settings(max_examples=150, deadline=None)
@given(
    puts=hs.lists(hs.tuples(hs.booleans(), _TEXT, _TEXT), max_size=8),
    deletes=hs.lists(hs.tuples(_TEXT, hs.integers(0, 2)), max_size=4),
)
def test_interleaved_classes_and_deletes_validate_like_the_dict_pass(
    puts: list[tuple[bool, str, str]], deletes: list[tuple[str, int]]
) -> None:
    # The wire pass looks a class's encoder and table up when the class changes, and
    # checks the deletes' key text on its own: the outcome (requests, identities, key
    # attributes, or the error) is the dict pass's whatever the order.
    objs: list[Any] = []
    for i, (is_note, a, b) in enumerate(puts):
        if is_note:
            note = Note(owner="o", text="t")
            note.__dict__.update(owner=a, text=b)
            objs.append(note)
        else:
            ev = Event(actor="a", ts=T0, seq=i % 3, action="x")
            ev.__dict__.update(actor=a, action=b)
            objs.append(ev)
    keys = [(Event.plan(), {"actor": a, "ts": T0, "seq": seq}) for a, seq in deletes]
    wire = _outcome(lambda: st.BatchWrite(puts=objs, deletes=keys))
    with patch.object(batch_module, "wire_encoder", lambda plan: None):
        reference = _outcome(lambda: st.BatchWrite(puts=objs, deletes=keys))
    assert wire == reference
