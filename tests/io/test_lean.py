"""The lean transport against botocore itself: same wire body, same parse, same errors.

Request bodies and responses are generated from botocore's own service model for every
operation the lean path speaks (attribute values of every type at any depth, binary
values, doubles spelt as integers, nulls and keys the model does not know), and each is
put through both botocore's serializer/parser and the lean path. Retries, CRC32
checks, connection errors and error responses are compared end to end through a
``before-send`` hook standing in for the server, one botocore client and one
`LeanTransport` over an identically configured client.
"""

from __future__ import annotations

import base64
import datetime
import gc
import json
import zlib
from collections.abc import Callable, Iterator
from typing import Any
from unittest.mock import patch

import boto3
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest, AWSResponse
from botocore.compat import HTTPHeaders
from botocore.config import Config
from botocore.credentials import ReadOnlyCredentials
from botocore.exceptions import ClientError, EndpointConnectionError
from botocore.model import Shape
from botocore.serialize import create_serializer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import singletable as st_
from singletable.errors import ConfigurationError
from singletable.io import lean
from singletable.io.lean import LEAN_ACTIONS, LeanTransport, lean_transport

ENDPOINT = "http://127.0.0.1:9"  # never contacted: a before-send hook answers


def make_client(max_attempts: int = 4, **config: Any) -> Any:
    return boto3.Session().client(
        "dynamodb",
        region_name="us-east-1",
        endpoint_url=ENDPOINT,
        aws_access_key_id="k",
        aws_secret_access_key="s",
        config=Config(
            parameter_validation=False,
            retries={"mode": "standard", "max_attempts": max_attempts},
            **config,
        ),
    )


SERVICE = make_client().meta.service_model


# -- generated values from the service model ------------------------------------------------

texts = st.text(st.characters(codec="utf-8"), max_size=8)
numbers = st.integers(-(10**30), 10**30).map(str)


def attribute_values() -> st.SearchStrategy[dict[str, Any]]:
    """AttributeValues in boto3's low-level form (bytes for B/BS), nested through M and L."""
    scalars = st.one_of(
        texts.map(lambda v: {"S": v}),
        numbers.map(lambda v: {"N": v}),
        st.binary(max_size=12).map(lambda v: {"B": v}),
        st.lists(texts, min_size=1, max_size=3, unique=True).map(lambda v: {"SS": v}),
        st.lists(numbers, min_size=1, max_size=3, unique=True).map(lambda v: {"NS": v}),
        st.lists(st.binary(max_size=6), min_size=1, max_size=3, unique=True).map(
            lambda v: {"BS": v}
        ),
        st.booleans().map(lambda v: {"BOOL": v}),
        st.just({"NULL": True}),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.dictionaries(
                st.sampled_from(["B", "BS", "S", "x", "M"]) | texts, inner, max_size=3
            ).map(lambda v: {"M": v}),
            st.lists(inner, max_size=3).map(lambda v: {"L": v}),
        ),
        max_leaves=8,
    )


def _wire(value: Any) -> Any:
    """The JSON DynamoDB sends for a low-level value: bytes become base64 text."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, dict):
        return {k: _wire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_wire(v) for v in value]
    return value


def from_shape(shape: Shape, depth: int = 0, *, unknown_keys: bool = False) -> Any:
    """A strategy for low-level values of ``shape`` (AttributeValue drawn as above)."""
    if shape.name == "AttributeValue":
        return attribute_values()
    kind = shape.type_name
    if kind == "structure":
        members = shape.members  # type: ignore[attr-defined]
        if depth > 4:
            return st.just({})
        required = set(shape.required_members)
        strategies = {
            name: st.one_of(st.none(), from_shape(member, depth + 1, unknown_keys=unknown_keys))
            if unknown_keys
            else from_shape(member, depth + 1)
            for name, member in members.items()
        }
        drawn = st.fixed_dictionaries(
            {k: v for k, v in strategies.items() if k in required and not unknown_keys},
            optional={k: v for k, v in strategies.items() if k not in required or unknown_keys},
        )
        if unknown_keys:  # keys outside the model are dropped by botocore's parser
            drawn = st.tuples(drawn, st.dictionaries(st.just("NotInTheModel"), texts)).map(
                lambda pair: {**pair[0], **pair[1]}
            )
        return drawn
    if kind == "list":
        member = shape.member  # type: ignore[attr-defined]
        return st.lists(from_shape(member, depth + 1, unknown_keys=unknown_keys), max_size=2)
    if kind == "map":
        value = shape.value  # type: ignore[attr-defined]
        return st.dictionaries(
            texts, from_shape(value, depth + 1, unknown_keys=unknown_keys), max_size=2
        )
    if kind in ("double", "float"):
        # DynamoDB spells whole capacity figures as integers sometimes: botocore makes
        # them floats either way.
        return st.one_of(st.integers(0, 1000), st.floats(0, 1000, allow_nan=False))
    if kind in ("integer", "long"):
        return st.integers(0, 10**6)
    if kind == "boolean":
        return st.booleans()
    if kind == "blob":
        return st.binary(max_size=8)
    if kind == "string":
        return texts
    raise AssertionError(f"no strategy for {shape.name} ({kind})")


def typed(value: Any) -> Any:
    """A value with every leaf's type made part of it (1 and 1.0, b"x" and "x" differ)."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value).__name__, value)


# -- canned server ------------------------------------------------------------------------


class Canned:
    """Answers every call from a queue of (status, body, headers) replies or exceptions."""

    def __init__(self, replies: list[Any]) -> None:
        self.reset(replies)

    def reset(self, replies: list[Any]) -> None:
        self.replies = replies
        self.requests: list[Any] = []

    def __call__(self, request: Any, **_: Any) -> AWSResponse:
        self.requests.append(request)
        reply = self.replies[min(len(self.requests), len(self.replies)) - 1]
        if isinstance(reply, Exception):
            raise reply
        status, body, headers = reply
        raw = _Raw(body)
        headers = HTTPHeaders.from_dict({"x-amzn-requestid": "r1", **headers})
        return AWSResponse(request.url, status, headers, raw)


class _Raw:
    def __init__(self, body: bytes) -> None:
        self.body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self.body


def reply(status: int, payload: Any, *, crc: int | None = None, spaced: bool = False) -> Any:
    body = json.dumps(payload, separators=(", ", ": ") if spaced else (",", ":")).encode()
    checksum = zlib.crc32(body) & 0xFFFFFFFF if crc is None else crc
    headers = {"content-type": "application/x-amz-json-1.0", "x-amz-crc32": str(checksum)}
    return status, body, headers


def both(replies: list[Any]) -> tuple[Any, Canned, LeanTransport, Canned]:
    """A botocore client and a lean transport, each answered by its own copy of ``replies``."""
    plain, lean_client = make_client(), make_client()
    plain_server, lean_server = Canned(list(replies)), Canned(list(replies))
    plain.meta.events.register("before-send.dynamodb", plain_server)
    lean_client.meta.events.register("before-send.dynamodb", lean_server)
    transport = LeanTransport(lean_client, sleep=lambda _: None)
    return plain, plain_server, transport, lean_server


_SHARED: list[tuple[Any, Canned, LeanTransport, Canned]] = []


def shared(replies: list[Any]) -> tuple[Any, Canned, LeanTransport, Canned]:
    """Like `both`, over one pair of clients kept for the generated tests (clients are slow
    to make); only for single successful replies, which touch no retry state."""
    if not _SHARED:
        _SHARED.append(both([]))
    pair = _SHARED[0]
    pair[1].reset(list(replies))
    pair[3].reset(list(replies))
    return pair


@pytest.fixture(autouse=True)
def _no_botocore_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    # botocore's endpoint sleeps its backoff with time.sleep; the lean side is told not to.
    monkeypatch.setattr("botocore.endpoint.time.sleep", lambda _: None)


def outcome(call: Callable[[], Any]) -> Any:
    try:
        return ("ok", typed(call()))
    except ClientError as exc:
        return (type(exc).__name__, str(exc), typed(exc.response))
    except Exception as exc:
        return (type(exc).__name__, str(exc))


# -- serialisation ---------------------------------------------------------------------------


@pytest.mark.parametrize("action", sorted(LEAN_ACTIONS))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_request_body_is_botocores(action: str, data: st.DataObject) -> None:
    model = SERVICE.operation_model(LEAN_ACTIONS[action])
    assert model.input_shape is not None
    params = data.draw(from_shape(model.input_shape))
    serializer = create_serializer("json", include_validation=False)
    expected = serializer.serialize_to_request(params, model)
    plain, plain_server, transport, lean_server = shared([reply(200, {})])
    transport.send(action, params)
    sent = lean_server.requests[0]
    assert json.loads(sent.body) == json.loads(expected["body"])
    for header in ("X-Amz-Target", "Content-Type"):
        assert sent.headers[header] == expected["headers"][header]
    plain_call = getattr(plain, action)
    plain_call(**params)
    assert plain_server.requests[0].url == sent.url


# -- parsing -----------------------------------------------------------------------------


@pytest.mark.parametrize("action", sorted(LEAN_ACTIONS))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), spaced=st.booleans())
def test_response_is_parsed_as_botocore_does(
    action: str, data: st.DataObject, spaced: bool
) -> None:
    model = SERVICE.operation_model(LEAN_ACTIONS[action])
    payload = _wire(data.draw(from_shape(model.output_shape, unknown_keys=True)))
    status, body, headers = reply(200, payload, spaced=spaced)
    plain, _, transport, _ = shared([(status, body, headers)])
    expected = getattr(plain, action)(**_minimal_params(action))
    got = transport.send(action, _minimal_params(action))
    assert typed(got) == typed(expected)


@settings(max_examples=400, deadline=None)
@given(
    chunks=st.lists(
        st.sampled_from([b'"', b"B", b"S", b'"B"', b'"BS"', b"x", b'"S"', b"{", b":"]),
        max_size=80,
    ),
    looks=st.integers(min_value=1, max_value=4),
)
def test_binary_key_check_equals_the_plain_search(chunks: list[bytes], looks: int) -> None:
    # Dense in capital Bs and quotes, so the B-by-B look and the search it hands over to
    # after `_B_LOOKS` (patched small here) both decide.
    content = b"".join(chunks)
    with patch.object(lean, "_B_LOOKS", looks):
        got = lean.has_binary_keys(content)
    assert got == (b'"B"' in content or b'"BS"' in content)


def _page(items: int) -> bytes:
    item = {"PK": {"S": "A#1"}, "SK": {"S": "E#2"}, "n": {"N": "3"}, "m": {"M": {"k": {"S": "v"}}}}
    return json.dumps({"Items": [item] * items, "Count": items}).encode()


@pytest.mark.parametrize("loads", [lean._loads, json.loads], ids=["default", "stdlib"])
@pytest.mark.usefixtures("default_collector")
def test_a_page_is_parsed_without_a_collection(loads: Callable[[bytes], Any]) -> None:
    # 2,000 items allocate ~16,000 containers: ~23 collections while an unguarded parse
    # runs; held off, at most one at its end (on leaving the block: a young one, or an
    # older one when their counts are due).
    body = _page(2000)
    collections: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(count)
    try:
        with patch.object(lean, "_loads", loads):
            page = lean.parse_body(body)
        guarded = list(collections)
        collections.clear()
        unguarded = loads(body)
        assert len(collections) >= 10, collections
    finally:
        gc.callbacks.remove(count)
    assert len(guarded) <= 1, guarded
    assert gc.isenabled()
    assert page == unguarded == json.loads(body)


@pytest.mark.usefixtures("default_collector")
def test_parsing_leaves_the_collector_as_it_found_it() -> None:
    gc.disable()
    try:
        assert lean.parse_body(_page(3))["Count"] == 3
        assert not gc.isenabled()  # switched off by the caller: stays off
    finally:
        gc.enable()
    with pytest.raises(json.JSONDecodeError):  # orjson's subclasses it
        lean.parse_body(b'{"Items": [')
    assert gc.isenabled()  # and on after a failed parse


def test_binary_key_check_examples() -> None:
    assert lean.has_binary_keys(b'{"Items":[{"b":{"B":"AA=="}}]}')
    assert lean.has_binary_keys(b'{"Items":[{"b":{"BS":["AA=="]}}]}')
    assert not lean.has_binary_keys(b'B"B')  # a B at offset 0 has no quote before it
    assert not lean.has_binary_keys(b'{"Items":[{"BOB":{"S":"B\\"S"}}]}')


def _minimal_params(action: str) -> dict[str, Any]:
    # What the endpoint rules read (table names, for the ResourceArn parameters).
    key = {"PK": {"S": "a"}}
    if action == "batch_get_item":
        return {"RequestItems": {"t": {"Keys": [key]}}}
    if action == "batch_write_item":
        return {"RequestItems": {"t": [{"DeleteRequest": {"Key": key}}]}}
    if action.startswith("transact"):
        return {"TransactItems": []}
    return {"TableName": "t"}


# -- errors, retries, checksums ----------------------------------------------------------

CONDITION_FAILED = {
    "__type": "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",
    "message": "The conditional request failed",
    "Item": {"PK": {"S": "a"}, "data": {"B": base64.b64encode(b"\x00\xff").decode()}},
}
CANCELLED = {
    "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
    "Message": "Transaction cancelled, please refer cancellation reasons for specific reasons",
    "CancellationReasons": [
        {"Code": "None"},
        {
            "Code": "ConditionalCheckFailed",
            "Message": "The conditional request failed",
            "Item": {"bs": {"BS": [base64.b64encode(b"x").decode()]}},
        },
    ],
}
THROTTLED = {
    "__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
    "message": "Rate exceeded",
}
UNKNOWN_TABLE = {
    "__type": "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException",
    "message": "Requested resource not found",
}
ITEM = {"Item": {"PK": {"S": "a"}, "b": {"B": base64.b64encode(b"\x01").decode()}}}

SCENARIOS: dict[str, list[Any]] = {
    "condition failed (modelled Item)": [reply(400, CONDITION_FAILED)],
    "transaction cancelled (reasons)": [reply(400, CANCELLED)],
    "unknown table": [reply(400, UNKNOWN_TABLE)],
    "throttled, then ok": [reply(400, THROTTLED), reply(400, THROTTLED), reply(200, ITEM)],
    "throttled to the end": [reply(400, THROTTLED)],
    "server error, then ok": [reply(500, {"message": "internal"}), reply(200, ITEM)],
    "html 503 to the end": [(503, b"<html>Service Unavailable</html>", {})],
    "crc32 mismatch, then ok": [reply(200, ITEM, crc=1), reply(200, ITEM)],
    "crc32 mismatch to the end": [reply(200, ITEM, crc=1)],
    "connection refused, then ok": [
        EndpointConnectionError(endpoint_url=ENDPOINT),
        reply(200, ITEM),
    ],
    "connection refused to the end": [EndpointConnectionError(endpoint_url=ENDPOINT)],
    "no crc32 header": [(200, json.dumps(ITEM).encode(), {})],
    "empty body": [(200, b"", {})],
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
@pytest.mark.parametrize("action", ["get_item", "transact_write_items"])
def test_errors_retries_and_checksums_as_botocore(name: str, action: str) -> None:
    plain, plain_server, transport, lean_server = both(SCENARIOS[name])
    params = _minimal_params(action)
    expected = outcome(lambda: getattr(plain, action)(**params))
    got = outcome(lambda: transport.send(action, params))
    assert got == expected
    assert len(lean_server.requests) == len(plain_server.requests)


def test_connection_maps_lean_errors_to_the_same_service_errors() -> None:
    for payload, error in [
        (UNKNOWN_TABLE, st_.ServiceError),
        (THROTTLED, st_.ServiceError),
    ]:
        client = make_client(max_attempts=1)
        client.meta.events.register("before-send.dynamodb", Canned([reply(400, payload)]))
        plain = st_.Connection(client, transport="boto3")
        lean = st_.Connection(client, transport="lean")
        assert lean.transport == "lean"
        caught = []
        for db in (plain, lean):
            with pytest.raises(error) as info:
                db.call("get_item", {"TableName": "t", "Key": {"PK": {"S": "a"}}})
            caught.append((info.value.code, info.value.message, typed(info.value.response)))
        assert caught[0] == caught[1]


# -- what the lean path refuses ----------------------------------------------------------


def test_control_plane_calls_go_to_the_boto3_client() -> None:
    client = make_client()
    transport = LeanTransport(client)
    assert not transport.supports("describe_table")
    assert not transport.supports("create_table")
    assert all(transport.supports(action) for action in LEAN_ACTIONS)
    server = Canned([reply(200, {"Table": {"TableName": "t", "CreationDateTime": 1.5e9}})])
    client.meta.events.register("before-send.dynamodb", server)
    described = transport.send("describe_table", {"TableName": "t"})
    # botocore's parser ran: the timestamp is a datetime, not the wire's float.
    assert described["Table"]["CreationDateTime"].year == 2017


def test_clients_that_are_not_botocore_fall_back_to_boto3() -> None:
    class Recorder:
        def get_item(self, **params: Any) -> dict[str, Any]:
            return {"Item": {"PK": {"S": params["TableName"]}}}

    assert lean_transport(Recorder()) is None
    db = st_.Connection(Recorder(), transport="lean")  # type: ignore[arg-type]
    assert db.transport == "boto3"
    assert db.call("get_item", {"TableName": "t"}) == {"Item": {"PK": {"S": "t"}}}


def test_transport_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    client = make_client()
    monkeypatch.setenv("SINGLETABLE_TRANSPORT", "lean")
    assert st_.Connection(client).transport == "lean"
    assert st_.Connection(client, transport="boto3").transport == "boto3"
    monkeypatch.setenv("SINGLETABLE_TRANSPORT", "fast")
    with pytest.raises(ConfigurationError, match=r"\$SINGLETABLE_TRANSPORT .* got 'fast'"):
        st_.Connection(client)
    with pytest.raises(ConfigurationError, match="transport must be one of"):
        st_.Connection(client, transport="grpc")  # type: ignore[arg-type]


def test_a_value_json_cannot_carry_is_refused_before_sending() -> None:
    transport = LeanTransport(make_client())
    # orjson words it its own way; either way it names the type and nothing is sent.
    with pytest.raises(TypeError, match="complex"):
        transport.send("get_item", {"TableName": "t", "Key": {"PK": {"N": 1j}}})


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_stdlib_json_fallback_sends_the_same_body(data: st.DataObject) -> None:
    # Without the ``lean`` extra (orjson) the stdlib encoder is used: same JSON.
    model = SERVICE.operation_model("TransactWriteItems")
    params = data.draw(from_shape(model.input_shape))
    assert json.loads(lean._stdlib_dumps(params)) == json.loads(lean._orjson_dumps(params))


def test_a_wrapper_around_a_client_keeps_the_boto3_path() -> None:
    # A recorder forwarding attributes to a real client intercepts its methods: the lean
    # path would bypass them, so it is refused.
    client = make_client()

    class Forwarding:
        def __getattr__(self, name: str) -> Any:
            return getattr(client, name)

    assert lean_transport(Forwarding()) is None
    assert lean_transport(client) is not None


def test_missing_credentials_raise_what_botocore_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    client: Any = boto3.Session().client("dynamodb", region_name="us-east-1", endpoint_url=ENDPOINT)
    server = Canned([reply(200, {})])
    client.meta.events.register("before-send.dynamodb", server)
    params = {"TableName": "t", "Key": {"PK": {"S": "a"}}}
    caught = []
    for transport in ("boto3", "lean"):
        db = st_.Connection(client, transport=transport)
        assert db.transport == transport
        with pytest.raises(ConfigurationError, match="no usable AWS credentials") as info:
            db.call("get_item", params)
        caught.append((type(info.value.__cause__), str(info.value)))
    assert caught[0] == caught[1]
    assert server.requests == []  # nothing was sent unsigned


# -- signing ---------------------------------------------------------------------------------

credential_texts = st.text(st.characters(codec="ascii", exclude_categories=["Cc"]), max_size=12)


@settings(max_examples=200, deadline=None)
@given(
    body=st.binary(min_size=1, max_size=64),
    access_key=credential_texts,
    secret=credential_texts,
    token=st.none() | st.just("") | credential_texts,
    region=st.sampled_from(["us-east-1", "eu-west-3", "local"]),
    service=st.sampled_from(["dynamodb", "dynamodb-fips"]),
    url=st.sampled_from(
        [
            "https://dynamodb.us-east-1.amazonaws.com/",
            "http://127.0.0.1:8000/",
            "http://LocalHost:80/",
            "https://[::1]:8443/",
            "http://localhost:8000/a/../b/?x=1&a=2",
        ]
    ),
    target=st.sampled_from(["DynamoDB_20120810.Query", " DynamoDB_20120810.Get  Item "]),
    seconds=st.integers(0, 3 * 10**9),
)
def test_fast_signer_signs_as_sigv4auth(
    body: bytes,
    access_key: str,
    secret: str,
    token: str | None,
    region: str,
    service: str,
    url: str,
    target: str,
    seconds: int,
) -> None:
    # The lean path's signer for its one request shape, against SigV4Auth + prepare on
    # the same headers, credentials, clock and URL; one signer across the examples, so
    # its cached signing keys are exercised across days, regions and secrets too.
    now = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=seconds)
    credentials = ReadOnlyCredentials(access_key, secret, token)

    def headers() -> dict[str, str]:
        return {
            "X-Amz-Target": target,
            "Content-Type": "application/x-amz-json-1.0",
            "User-Agent": "Botocore/x singletable-lean",
        }

    with patch("botocore.auth.get_current_datetime", return_value=now):
        reference = AWSRequest(method="POST", url=url, headers=headers(), data=body)
        SigV4Auth(credentials, service, region).add_auth(reference)
        # (botocore's stubs do not declare a prepared request's context)
        expected: Any = reference.prepare()
        context: dict[str, Any] = {}
        got: Any = FAST_SIGNER.sign(credentials, service, region, url, headers(), body, context)
    assert (got.method, got.url, got.body, got.stream_output) == (
        expected.method,
        expected.url,
        expected.body,
        expected.stream_output,
    )
    # (botocore 1.43.11's prepared requests have no context; newer ones carry it)
    assert getattr(got, "context", None) == getattr(expected, "context", None)
    assert context == {"timestamp": reference.context["timestamp"]}
    assert list(got.headers.items()) == list(expected.headers.items())
    assert type(got.headers) is type(expected.headers)


FAST_SIGNER = lean._DynamoDBSigner()


def test_requests_outside_the_fast_signers_shape_are_signed_by_sigv4auth() -> None:
    # Endpoint rules that add headers, or a context asking for another payload hash, go
    # through SigV4Auth: the signed request carries the extra header.
    transport = LeanTransport(make_client())
    prepared = transport._signed(
        ENDPOINT + "/",
        {"X-Amz-Target": "DynamoDB_20120810.GetItem", "Content-Type": "application/x-amz-json-1.0"},
        {"X-Extra": "1"},
        b"{}",
        {},
    )
    assert "x-extra" in prepared.headers["Authorization"]
    unsigned_payload = transport._signed(
        "https://example.com/",
        {"X-Amz-Target": "DynamoDB_20120810.GetItem", "Content-Type": "application/x-amz-json-1.0"},
        {},
        b"{}",
        {"payload_signing_enabled": False},
    )
    assert unsigned_payload.headers["X-Amz-Content-SHA256"] == "UNSIGNED-PAYLOAD"


# -- pages decoded from the body -----------------------------------------------------------


class _PageEvent(st_.Entity, table=st_.Table("lean-pages"), pk="A#{aid}", sk="E#{seq}"):
    aid: str
    seq: int
    blob: bytes | None = None


def _query_connection(items: list[dict[str, Any]]) -> tuple[st_.Connection, Canned]:
    client = make_client()
    server = Canned([reply(200, {"Items": items, "Count": len(items), "ScannedCount": 2})])
    client.meta.events.register("before-send.dynamodb", server)
    return st_.Connection(client, transport="lean"), server


def test_a_query_page_is_decoded_from_the_body_on_the_lean_transport() -> None:
    items = [_PageEvent(aid="a", seq=i).to_item() for i in range(2)]
    db, _ = _query_connection(items)
    seen: list[Any] = []
    _PageEvent.from_item(items[0])  # the generated decoder, made on first use
    original = _PageEvent.plan()._item_decoder

    def spy(*args: Any) -> Any:
        seen.append(args)
        return original(*args)

    object.__setattr__(_PageEvent.plan(), "_item_decoder", spy)
    try:
        got = _PageEvent.query(aid="a").all(db)
    finally:
        object.__setattr__(_PageEvent.plan(), "_item_decoder", original)
    assert got == [_PageEvent(aid="a", seq=0), _PageEvent(aid="a", seq=1)]
    assert seen == []  # no item went through the item decoder
    query = _PageEvent.query(aid="a")
    response = db._request("query", query.params(), query._page_decoder())
    assert response["Items"] == got
    assert response["ScannedCount"] == 2
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 200


def test_a_body_with_binary_values_is_parsed_and_decoded_by_item() -> None:
    items = [_PageEvent(aid="a", seq=0, blob=b"\x00\x01").to_item()]
    db, _ = _query_connection(json.loads(json.dumps(items, default=lambda b: "AAE=")))
    query = _PageEvent.query(aid="a")
    response = db._request("query", query.params(), query._page_decoder())
    assert response["Items"][0]["blob"] == {"B": b"\x00\x01"}  # botocore's bytes
    assert query.all(db) == [_PageEvent(aid="a", seq=0, blob=b"\x00\x01")]


def test_listeners_and_subclasses_see_the_items_as_sent() -> None:
    items = [_PageEvent(aid="a", seq=0).to_item()]
    db, _ = _query_connection(items)
    answered: list[Any] = []

    class Listener:
        def sending(self, action: str, params: dict[str, Any]) -> dict[str, Any]:
            return params

        def answered(self, action: str, params: Any, response: Any, error: Any) -> None:
            answered.append(response)

    db.listeners.append(Listener())
    assert _PageEvent.query(aid="a").all(db) == [_PageEvent(aid="a", seq=0)]
    assert answered[0]["Items"] == items

    class Recording(st_.Connection):
        def call(self, action: str, params: dict[str, Any]) -> dict[str, Any]:
            response = super().call(action, params)
            answered.append(response)
            return response

    client = make_client()
    client.meta.events.register("before-send.dynamodb", Canned([reply(200, {"Items": items})]))
    recording = Recording(client, transport="lean")
    assert _PageEvent.query(aid="a").all(recording) == [_PageEvent(aid="a", seq=0)]
    assert answered[-1]["Items"] == items
