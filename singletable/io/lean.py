"""The lean transport: DynamoDB's JSON protocol spoken directly, botocore kept for the rest.

botocore spends most of a data-plane call's client CPU walking the service model's
shapes: once to serialise the parameters and once to parse the response, value by
value, although DynamoDB's wire format *is* the low-level client's format apart from
binary attributes (base64 on the wire, ``bytes`` in Python). This
transport serialises the parameters with one JSON dump and parses the response with
one JSON load plus a conversion plan compiled once per operation from the same
service model, so only the places that need converting are visited.

Everything else stays botocore's, taken from the client it is given:

* the credential chain and SigV4 signing (the client's refreshable credentials, with the
  signing region and name the endpoint rules return; the signature is ``SigV4Auth``'s,
  computed directly for the lean path's one request shape by `_DynamoDBSigner`, which
  caches the derived signing key, and by ``SigV4Auth`` itself for any other shape);
* endpoint resolution (the client's endpoint ruleset resolver, per call, its answers
  remembered by their rule parameters: `singletable.io.lean_endpoint`);
* the HTTP layer: botocore's connection classes, the client's timeouts, TLS settings and
  pool size, and botocore's mapping of failures to its exceptions. Where the client's
  session is botocore's own ``URLLib3Session`` with no proxy and no client certificate
  (the usual case), requests go over `singletable.io.lean_http`'s keep-alive pool of
  those connections, which skips urllib3's request layer (about half the session's
  client CPU per request) and is tested against the session for every failure class,
  TLS and retries; any other client (a proxy, from the config or the environment, a
  client certificate, another session class) keeps botocore's session itself;
* retries: the client's own ``needs-retry`` handler decides and computes the backoff
  (standard, legacy or adaptive mode, max attempts, retry quota, and DynamoDB's
  ``x-amz-crc32`` check, which botocore performs in that handler);
* ``before-send`` hooks (moto's mock, ``Stubber``-like canned servers, adaptive-mode
  rate limiting) and error responses, parsed by botocore's own parser and raised as the
  client's modelled ``ClientError`` subclasses, so callers see the same exceptions.

What it refuses, handing the call to the boto3 client unchanged: every operation
outside the data plane (`LEAN_ACTIONS`), and any operation whose output model holds
a type the plan does not convert (timestamps, for instance). A client that is not a
botocore DynamoDB client (a test double, a recorder) gets no lean transport at all:
`lean_transport` returns ``None`` and the connection keeps the boto3 path.

The hooks it does *not* run are the ones around botocore's own serialisation and
parsing (``provide-client-params``, ``before-parameter-build``, ``before-call``,
``request-created``, ``before-sign``, ``before-parse``, ``after-call``); a client
customised through those should keep the default transport.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

import botocore
from botocore import UNSIGNED
from botocore.auth import SIGV4_TIMESTAMP, SigV4Auth
from botocore.awsrequest import AWSPreparedRequest, AWSRequest, AWSResponse, prepare_request_dict
from botocore.client import BaseClient
from botocore.credentials import ReadOnlyCredentials
from botocore.exceptions import NoCredentialsError
from botocore.hooks import first_non_none_response
from botocore.model import OperationModel, Shape, StructureShape
from botocore.parsers import create_parser

from singletable.io import botocore_internals as internals
from singletable.io.lean_endpoint import EndpointMemo
from singletable.io.lean_http import http_session
from singletable.model.collector import collector_held_off
from singletable.model.wire import decode_attribute_value, encode_other

orjson: ModuleType | None
try:
    import orjson
except ImportError:  # pragma: no cover - the ``lean`` extra is not installed
    orjson = None

_stdlib_encoder = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=encode_other)


def _stdlib_dumps(params: dict[str, Any]) -> bytes:
    return _stdlib_encoder.encode(params).encode("utf-8")


def _orjson_dumps(params: dict[str, Any]) -> bytes:
    assert orjson is not None
    return orjson.dumps(params, default=encode_other)  # type: ignore[no-any-return]


# The optional ``lean`` extra: orjson dumps and loads DynamoDB pages several times faster
# than the stdlib (bench_transport.py measures both); without it the stdlib does the job.
_dumps: Callable[[dict[str, Any]], bytes] = _orjson_dumps if orjson is not None else _stdlib_dumps
_loads: Callable[[bytes], Any] = orjson.loads if orjson is not None else json.loads


def parse_body(body: bytes) -> Any:
    """``_loads(body)`` with the cyclic collector held off (`collector_held_off`).

    The parse is one C call holding the GIL: no other thread runs during it, only (if
    the interpreter switches) for an instant before or after. 1,000-item AuditEvent
    queries over a loopback server, per item over 20 of them (callgrind): singletable
    67,499 -> 62,944 instructions (results kept alive), the lean transport alone 30,351
    -> 27,053; collections per query, young / middle / full, 24.6 / 2.2 / 0.2 -> 5.5 /
    0.5 / 0.05 (benchmarks/README.md, "Issue 24, round 12").
    """
    with collector_held_off():
        return _loads(body)


#: Pre-serialised JSON that ``orjson.dumps`` embeds as it is (orjson >= 3.9, what the
#: ``lean`` extra asks for): the operations put their items' wire text in the request in
#: it (`Operation.wire_steps`). Without it they send the dict form.
FRAGMENT: Callable[[bytes], Any] | None = getattr(orjson, "Fragment", None)


#: The operations the lean path speaks itself (boto3 method name -> wire name).
LEAN_ACTIONS: dict[str, str] = {
    "get_item": "GetItem",
    "put_item": "PutItem",
    "update_item": "UpdateItem",
    "delete_item": "DeleteItem",
    "query": "Query",
    "scan": "Scan",
    "batch_get_item": "BatchGetItem",
    "batch_write_item": "BatchWriteItem",
    "transact_get_items": "TransactGetItems",
    "transact_write_items": "TransactWriteItems",
}

Converter = Callable[[Any], Any]
_JSON_CONTENT_TYPE = "application/x-amz-json-1.0"


# -- response conversion plans ---------------------------------------------------------


class UnsupportedShapeError(Exception):
    """An output model holds a type the lean conversion plan does not handle."""


def _structure_converter(shape: StructureShape, blobs: bool) -> Converter:
    # botocore keeps only modelled members whose value is not null; so does this.
    members = {name: _converter(member, blobs) for name, member in shape.members.items()}
    wire_names = {
        name: member.serialization.get("name", name) for name, member in shape.members.items()
    }

    def convert(value: Any) -> Any:
        if value is None:
            return None
        out: dict[str, Any] = {}
        for name, wire in wire_names.items():
            raw = value.get(wire)
            if raw is not None:
                inner = members[name]
                out[name] = inner(raw) if inner is not None else raw
        return out

    return convert


def _converter(shape: Shape, blobs: bool) -> Converter | None:
    """The conversion a value of ``shape`` needs, or ``None`` when the JSON value is final.

    ``blobs=False`` builds the plan for a body known to hold no binary attribute value,
    so attribute maps are left alone.
    """
    kind = shape.type_name
    if shape.name == "AttributeValue":
        return decode_attribute_value if blobs else None
    if kind == "structure":
        assert isinstance(shape, StructureShape)
        return _structure_converter(shape, blobs)
    if kind == "list":
        item = _converter(shape.member, blobs)  # type: ignore[attr-defined]
        if item is None:
            return None
        return lambda values: [None if v is None else item(v) for v in values]
    if kind == "map":
        entry = _converter(shape.value, blobs)  # type: ignore[attr-defined]
        if entry is None:
            return None
        return lambda values: {k: entry(v) for k, v in values.items()}
    if kind == "blob":
        return base64.b64decode
    if kind in ("string", "integer", "long", "boolean", "double", "float"):
        # botocore's JSON parser keeps these as JSON gives them (a whole double stays int).
        return None
    raise UnsupportedShapeError(f"{shape.name} ({kind})")


#: How many "B" bytes `has_binary_keys` looks at one by one before it searches for the
#: keys themselves (text full of capital Bs would otherwise cost a Python step each).
_B_LOOKS = 32


def has_binary_keys(content: bytes) -> bool:
    """Whether ``content`` holds the text ``"B"`` or ``"BS"`` (a binary attribute value's key).

    Equal to ``b'"B"' in content or b'"BS"' in content``, which costs ~540 µs on a
    1,000-item Query page (386 KB): CPython searches a short pattern ending in the
    ubiquitous ``"`` at about 1 ns a byte. A single byte is found by ``memchr``, ~100x
    faster (3.5 µs on that page), and a body without any capital B has neither key;
    each B found is looked at in place, and past `_B_LOOKS` of them the two searches
    run on the rest. (4.0% of a 1,000-item lean query's instructions, callgrind;
    benchmarks/README.md, bench_transport.)
    """
    at = content.find(b"B")
    looks = 0
    while at != -1:
        # (At offset 0, ``at - 1`` leaves one byte: too short to match.)
        if content.startswith(b'"B"', at - 1) or content.startswith(b'"BS"', at - 1):
            return True
        looks += 1
        if looks == _B_LOOKS:
            # Every key not yet ruled out starts at or after this B's position.
            return content.find(b'"B"', at) != -1 or content.find(b'"BS"', at) != -1
        at = content.find(b"B", at + 1)
    return False


class _Operation:
    """One operation's wire name, model and compiled response conversion."""

    def __init__(self, model: OperationModel) -> None:
        output = model.output_shape
        assert output is not None
        self.model = model
        self.output = output
        self.name = model.name
        self.target = f"{model.service_model.metadata['targetPrefix']}.{model.name}"
        self.with_blobs = _converter(output, blobs=True)
        self.without_blobs = _converter(output, blobs=False)


# -- signing ----------------------------------------------------------------------------

#: What `SigV4Auth` reads from a request's context besides the timestamp: either one
#: present (S3-style unsigned payloads, trailing checksums) sends the request to it.
_CONTEXT_SIGNING_KEYS = ("payload_signing_enabled", "checksum")


class _DynamoDBSigner:
    """SigV4 for the one request shape the lean path sends, equal to botocore's `SigV4Auth`.

    `SigV4Auth` spends most of its time (about 40 µs a call) on what never changes for a
    DynamoDB JSON request: it walks a case-insensitive header map to choose and sort the
    signed headers, re-parses the URL for the host, path and query, and derives the
    signing key with four HMACs although the key only changes with the day, the
    region, the service and the secret. Here the URL's parts come from botocore's own
    functions once per URL, the key is derived once per day (and region, service,
    secret), and the canonical request is one format string over the headers the lean
    path sets, which are exactly the ones `SigV4Auth` would choose: ``User-Agent`` is on
    its blacklist, the others are signed (tests/io/test_lean.py compares the two on
    generated requests). Requests outside that shape (headers added by the endpoint
    rules, a context asking for an unsigned payload or a trailing checksum, an empty
    body) are signed by `SigV4Auth` itself.

    It pays (benchmarks/bench_micro.py ``signer``: whole ``send`` calls answered by a
    ``before-send`` hook, 7 models, median of 15 paired rounds, 3 runs): mostly
    0.44-0.54x the time with `SigV4Auth` for a GetItem or PutItem (about 70 µs less a
    request; 0.30-0.59x at the ends), 0.52-0.63x for a 25-item BatchWriteItem, mostly
    0.75-0.89x for a 100-item Query page.
    """

    def __init__(self) -> None:
        # (url) -> (host, canonical path, canonical query); (scope inputs) -> key
        self._urls: dict[str, tuple[str, str, str]] = {}
        self._key: tuple[tuple[str | None, str, str, str], bytes] | None = None

    def _url_parts(self, url: str) -> tuple[str, str, str]:
        parts = self._urls.get(url)
        if parts is None:
            # botocore's own (private) helpers: the same host, path and query text
            # SigV4Auth derives.
            parts = self._urls[url] = internals.sigv4_url_parts(url)
        return parts

    def _signing_key(self, secret: str | None, day: str, region: str, service: str) -> bytes:
        scope = (secret, day, region, service)
        if self._key is not None and self._key[0] == scope:
            return self._key[1]
        key = f"AWS4{secret}".encode()
        for part in (day, region, service, "aws4_request"):
            key = hmac.new(key, part.encode("utf-8"), hashlib.sha256).digest()
        self._key = (scope, key)
        return key

    def sign(
        self,
        credentials: ReadOnlyCredentials,
        service: str,
        region: str,
        url: str,
        headers: dict[str, str],
        body: bytes,
        context: dict[str, Any],
    ) -> AWSPreparedRequest:
        """The prepared request `SigV4Auth` and `AWSRequest.prepare` would make of these.

        ``context`` is the request's context: it gets the timestamp, as botocore's does.
        """
        host, path, query = self._url_parts(url)
        # botocore's clock, so that a patched clock is seen here too.
        timestamp = context["timestamp"] = internals.sigv4_now().strftime(SIGV4_TIMESTAMP)
        day = timestamp[:8]
        headers["X-Amz-Date"] = timestamp
        token = credentials.token
        canonical = [
            f"content-type:{' '.join(headers['Content-Type'].split())}",
            f"host:{host}",
            f"x-amz-date:{timestamp}",
        ]
        names = "content-type;host;x-amz-date;"
        if token:
            headers["X-Amz-Security-Token"] = token
            canonical.append(f"x-amz-security-token:{' '.join(token.split())}")
            names += "x-amz-security-token;"
        canonical.append(f"x-amz-target:{' '.join(headers['X-Amz-Target'].split())}")
        names += "x-amz-target"
        payload = hashlib.sha256(body).hexdigest()
        request = "\n".join(("POST", path, query, "\n".join(canonical) + "\n", names, payload))
        scope = f"{day}/{region}/{service}/aws4_request"
        string_to_sign = "\n".join(
            (
                "AWS4-HMAC-SHA256",
                timestamp,
                scope,
                hashlib.sha256(request.encode("utf-8")).hexdigest(),
            )
        )
        key = self._signing_key(credentials.secret_key, day, region, service)
        signature = hmac.new(key, string_to_sign.encode("utf-8"), hashlib.sha256).hexdigest()
        headers["Authorization"] = (
            f"AWS4-HMAC-SHA256 Credential={credentials.access_key}/{scope}, "
            f"SignedHeaders={names}, Signature={signature}"
        )
        headers["Content-Length"] = str(len(body))
        return internals.prepared_request(url, headers, body, context)


# -- the transport -----------------------------------------------------------------------


class LeanTransport:
    """Sends data-plane calls over a botocore DynamoDB client's machinery, minus the shape walks.

    Args:
        client: A boto3 DynamoDB client; its credentials, region, endpoint rules, HTTP
            session, retry handler and hooks are the ones used.
        sleep: How to wait between retries (botocore's endpoint uses ``time.sleep``).

    ``send(action, params)`` behaves like ``getattr(client, action)(**params)``: same
    result (minus what hooks on skipped events would have changed), same exceptions.
    """

    def __init__(self, client: Any, *, sleep: Callable[[float], Any] = time.sleep) -> None:
        self._client = client
        self._events = client.meta.events
        self._service_model = client.meta.service_model
        # botocore keeps these on the client without public accessors (botocore_internals
        # reaches for them, and its tests pin each of them).
        signer = internals.client_signer(client)
        assert signer is not None  # lean_transport checked
        self._signer = signer
        self._endpoint = internals.client_endpoint(client)
        # botocore's HTTP session, or where it is proved equivalent the lean pool over
        # botocore's connections (lean_http: about half the client CPU a send).
        self._http = http_session(self._endpoint.http_session)
        # botocore's endpoint rules, remembered (lean_endpoint: about 20 µs less a call).
        self._resolve_endpoint: internals.EndpointResolver = EndpointMemo(client).resolve
        self._default_region = client.meta.region_name
        self._signing_name = self._service_model.signing_name
        self._sleep = sleep
        self._operations: dict[str, _Operation | None] = {}
        self._urls: dict[str, str] = {}
        self._error_parser = create_parser("json")
        self._event_prefix = self._service_model.service_id.hyphenize()
        self._user_agent = f"Botocore/{botocore.__version__} singletable-lean"
        self._fast_signer = _DynamoDBSigner()

    def supports(self, action: str) -> bool:
        """Whether ``action`` goes over the lean path (others go to the boto3 client)."""
        return self._operation(action) is not None

    def _operation(self, action: str) -> _Operation | None:
        try:
            return self._operations[action]
        except KeyError:
            pass
        operation: _Operation | None = None
        wire_name = LEAN_ACTIONS.get(action)
        if wire_name is not None:
            try:
                operation = _Operation(self._service_model.operation_model(wire_name))
            except UnsupportedShapeError:
                operation = None
        self._operations[action] = operation
        return operation

    def send(
        self,
        action: str,
        params: dict[str, Any],
        decode_body: Callable[[bytes], dict[str, Any] | None] | None = None,
    ) -> dict[str, Any]:
        """Send one request and return the response as the boto3 client would.

        ``decode_body`` decodes a successful response's body in place of the parse,
        unless the body holds binary values (base64 text botocore's shape decodes) or
        it answers ``None`` (`singletable.model.pages`).
        """
        operation = self._operation(action)
        if operation is None:
            response: dict[str, Any] = getattr(self._client, action)(**params)
            return response
        body = _dumps(params)
        request_context: dict[str, Any] = {}
        endpoint_url, extra_headers, _ = self._resolve_endpoint(
            operation.model, params, request_context
        )
        url = self._request_url(operation, endpoint_url)
        request_dict = {"context": request_context, "url": url, "body": body}
        attempts = 1
        while True:
            http_response, parsed, error = self._attempt(
                operation, url, extra_headers, body, request_context
            )
            retry_in = self._needs_retry(
                operation, attempts, request_dict, http_response, parsed, error
            )
            if retry_in is None:
                break
            self._sleep(retry_in)
            attempts += 1
        if error is not None:
            raise error
        assert http_response is not None
        assert parsed is not None
        if http_response.status_code >= 300:  # parsed by botocore's parser
            parsed["ResponseMetadata"]["RetryAttempts"] = attempts - 1
            self._raise_client_error(operation, parsed)
        # What the retry handler noted (MaxAttemptsReached) is kept, as botocore keeps it.
        return self._parse(
            operation, http_response, parsed["ResponseMetadata"], attempts - 1, decode_body
        )

    def _request_url(self, operation: _Operation, endpoint_url: str) -> str:
        # The endpoint joined with the operation's request URI ("/"), by botocore's rule.
        url = self._urls.get(endpoint_url)
        if url is None:
            request_dict: dict[str, Any] = {
                "url_path": operation.model.http.get("requestUri", "/"),
                "query_string": "",
                "headers": {},
            }
            prepare_request_dict(request_dict, endpoint_url)
            url = self._urls[endpoint_url] = request_dict["url"]
        return url

    def _attempt(
        self,
        operation: _Operation,
        url: str,
        extra_headers: dict[str, str],
        body: bytes,
        request_context: dict[str, Any],
    ) -> tuple[AWSResponse | None, dict[str, Any] | None, Exception | None]:
        """One try: sign, send. Returns (response, parsed, exception).

        ``parsed`` is botocore's parse of an error response, and for a success only the
        ``ResponseMetadata`` the retry handler may annotate: the body is parsed once the
        retry handler has accepted it.
        """
        headers = {
            "X-Amz-Target": operation.target,
            "Content-Type": _JSON_CONTENT_TYPE,
            "User-Agent": self._user_agent,
        }
        # Signed before the try, as botocore signs while creating the request: missing
        # credentials raise NoCredentialsError at once, never handed to the retry handler.
        request = self._signed(url, headers, extra_headers, body, request_context)
        try:
            canned = first_non_none_response(
                self._events.emit(
                    f"before-send.{self._event_prefix}.{operation.name}", request=request
                )
            )
            http_response: AWSResponse = canned if canned is not None else self._http.send(request)
        except Exception as exc:  # botocore hands every send failure to the retry handler
            return None, None, exc
        if http_response.status_code >= 300:
            return http_response, self._parse_error(operation, http_response), None
        return http_response, {"ResponseMetadata": {}}, None

    def _signed(
        self,
        url: str,
        headers: dict[str, str],
        extra_headers: dict[str, str],
        body: bytes,
        request_context: dict[str, Any],
    ) -> AWSPreparedRequest:
        frozen = None
        if self._signer.signature_version is not UNSIGNED:
            credentials = internals.signer_credentials(self._signer)
            if credentials is None:
                raise NoCredentialsError()
            frozen = credentials.get_frozen_credentials()
        signing = request_context.get("signing", {})
        service = signing.get("signing_name", self._signing_name)
        region = signing.get("region", self._default_region)
        # A JSON body is never empty; an empty one would be prepared differently (no body).
        if (
            frozen is not None
            and body
            and not extra_headers
            and not any(key in request_context for key in _CONTEXT_SIGNING_KEYS)
        ):
            return self._fast_signer.sign(
                frozen, service, region, url, headers, body, request_context
            )
        request = AWSRequest(
            method="POST", url=url, headers={**headers, **extra_headers}, data=body
        )
        # The context SigV4Auth reads, as botocore hands it the request dict's.
        request.context = request_context
        if frozen is not None:
            SigV4Auth(frozen, service, region).add_auth(request)
        return request.prepare()

    def _needs_retry(
        self,
        operation: _Operation,
        attempts: int,
        request_dict: dict[str, Any],
        http_response: AWSResponse | None,
        parsed: dict[str, Any] | None,
        error: Exception | None,
    ) -> float | None:
        # The client's own retry handler decides, exactly as botocore's endpoint asks it.
        # A success is handed over with an empty parse: no retry checker reads a
        # successful body (the CRC32 checker reads the raw bytes).
        responses = self._events.emit(
            f"needs-retry.{self._event_prefix}.{operation.name}",
            response=None if http_response is None else (http_response, parsed),
            endpoint=self._endpoint,
            operation=operation.model,
            attempts=attempts,
            caught_exception=error,
            request_dict=request_dict,
        )
        delay = first_non_none_response(responses)
        if delay is None or delay is False:
            return None
        return float(delay)

    def _response_dict(self, operation: _Operation, http_response: AWSResponse) -> dict[str, Any]:
        return {
            "headers": http_response.headers,
            "status_code": http_response.status_code,
            "body": http_response.content,
            "context": {"operation_name": operation.name},
        }

    def _parse_error(self, operation: _Operation, http_response: AWSResponse) -> dict[str, Any]:
        # Errors are rare: botocore's parser, including the modelled error's own fields
        # (CancellationReasons, the Item of a failed condition), keeps them identical.
        response_dict = self._response_dict(operation, http_response)
        parsed: dict[str, Any] = self._error_parser.parse(response_dict, operation.output)
        code = parsed.get("Error", {}).get("Code")
        if code:
            error_shape = self._service_model.shape_for_error_code(code)
            if error_shape is not None:
                parsed.update(self._error_parser.parse(response_dict, error_shape))
        return parsed

    def _raise_client_error(self, operation: _Operation, parsed: dict[str, Any]) -> None:
        error = parsed.get("Error", {})
        code = error.get("QueryErrorCode") or error.get("Code")
        raise self._client.exceptions.from_code(code)(parsed, operation.name)

    def _parse(
        self,
        operation: _Operation,
        http_response: AWSResponse,
        metadata: dict[str, Any],
        retries: int,
        decode_body: Callable[[bytes], dict[str, Any] | None] | None = None,
    ) -> dict[str, Any]:
        content = http_response.content
        # A binary attribute value is a "B" or "BS" key; a body without either text needs
        # no attribute map visited. (JSON could spell the key with \u escapes; no DynamoDB
        # endpoint does, and a false positive only costs the walk.)
        binary = has_binary_keys(content)
        data = decode_body(content) if decode_body is not None and content and not binary else None
        if data is None:
            data = parse_body(content) if content else {}
        # (A decoded page's items are final: no converter visits an attribute map here.)
        convert = operation.with_blobs if binary else operation.without_blobs
        parsed: dict[str, Any] = convert(data) if convert is not None else data
        headers = http_response.headers
        request_id = headers.get("x-amzn-requestid")
        if request_id is not None:
            metadata["RequestId"] = request_id
        metadata["HTTPStatusCode"] = http_response.status_code
        metadata["HTTPHeaders"] = internals.lowercase_headers(headers)
        metadata["RetryAttempts"] = retries
        parsed["ResponseMetadata"] = metadata
        return parsed


def lean_transport(client: Any) -> LeanTransport | None:
    """A `LeanTransport` over ``client``, or ``None`` when it is not a botocore DynamoDB client.

    Only a genuine botocore client qualifies: a wrapper that forwards attributes to one
    (a recorder, a test double) may intercept the method calls the lean path would
    bypass, so it keeps the boto3 path, as does a client of another protocol or signer.
    """
    if not isinstance(client, BaseClient):
        return None
    service_model = client.meta.service_model
    if service_model.service_name != "dynamodb" or service_model.protocol != "json":
        return None
    signer = internals.client_signer(client)
    if signer is None or signer.signature_version not in ("v4", UNSIGNED):
        return None
    return LeanTransport(client)
