"""botocore's private surface, as singletable.io.botocore_internals reaches for it.

Each internal that module touches is checked on the installed botocore: that it
exists, is of the expected kind (method, function, property, instance of a class) and
takes the parameters it is called with. When a botocore upgrade moves or renames one,
the failing test's id and message name it, here rather than in production.
"""

from __future__ import annotations

import ast
import datetime
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest.mock import patch

import boto3
import botocore
import pytest
from botocore import auth
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest, AWSResponse, HeadersDict
from botocore.client import BaseClient
from botocore.compat import HTTPHeaders
from botocore.config import Config
from botocore.context import start_as_current_context
from botocore.credentials import Credentials
from botocore.endpoint import Endpoint
from botocore.hooks import EventAliaser, HierarchicalEmitter
from botocore.httpsession import URLLib3Session
from botocore.regions import EndpointRulesetResolver
from botocore.signers import RequestSigner
from botocore.utils import lowercase_dict
from hypothesis import given, settings
from hypothesis import strategies as st
from urllib3 import HTTPHeaderDict, Timeout

import singletable
from singletable.io import botocore_internals as internals
from singletable.io.lean import LeanTransport

ENDPOINT = "http://127.0.0.1:9"  # never contacted: a before-send hook answers


def make_client() -> BaseClient:
    client: BaseClient = boto3.Session().client(
        "dynamodb",
        region_name="us-east-1",
        endpoint_url=ENDPOINT,
        aws_access_key_id="k",
        aws_secret_access_key="s",
        config=Config(parameter_validation=False, retries={"mode": "standard", "max_attempts": 2}),
    )
    return client


def moved(name: str, expected: str, found: object) -> str:
    return (
        f"botocore {botocore.__version__}: {name} is no longer {expected} (found {found!r}); "
        "singletable.io.botocore_internals relies on it: update that module"
    )


def parameters(func: Callable[..., Any]) -> list[str]:
    return list(inspect.signature(func).parameters)


def check_method(owner: type, name: str, leading: list[str]) -> None:
    """``owner.name`` is a plain method whose parameters start with ``leading``."""
    where = f"{owner.__module__}.{owner.__qualname__}.{name}"
    found = inspect.getattr_static(owner, name, None)
    assert inspect.isfunction(found), moved(where, "a method", found)
    got = parameters(found)
    assert got[: len(leading)] == leading, moved(where, f"a method of {leading}", got)
    # Further parameters must have defaults: the call passes only the leading ones.
    extra = list(inspect.signature(found).parameters.values())[len(leading) :]
    assert all(p.default is not p.empty for p in extra), moved(
        where, f"callable with {leading} alone", got
    )


def check_instance_attribute(obj: object, name: str, cls: type) -> None:
    where = f"{type(obj).__module__}.{type(obj).__qualname__}.{name}"
    found = getattr(obj, name, None)
    assert isinstance(found, cls), moved(
        where, f"an instance attribute of type {cls.__name__}", found
    )


# -- each internal ------------------------------------------------------------------------


def check_request_signer() -> None:
    check_instance_attribute(make_client(), "_request_signer", RequestSigner)


def check_signature_version() -> None:
    found = inspect.getattr_static(RequestSigner, "signature_version", None)
    assert isinstance(found, property), moved(
        "botocore.signers.RequestSigner.signature_version", "a property", found
    )


def check_signer_credentials() -> None:
    signer = make_client()._request_signer  # type: ignore[attr-defined]
    check_instance_attribute(signer, "_credentials", Credentials)
    check_method(Credentials, "get_frozen_credentials", ["self"])


def check_endpoint() -> None:
    check_instance_attribute(make_client(), "_endpoint", Endpoint)


def check_http_session() -> None:
    session = make_client()._endpoint.http_session  # type: ignore[attr-defined]
    check_method(type(session), "send", ["self", "request"])


def check_resolve_endpoint_ruleset() -> None:
    check_method(
        BaseClient,
        "_resolve_endpoint_ruleset",
        ["self", "operation_model", "params", "request_context"],
    )


def check_ruleset_resolver() -> None:
    client = make_client()
    check_instance_attribute(client, "_ruleset_resolver", EndpointRulesetResolver)
    resolver = client._ruleset_resolver  # type: ignore[attr-defined]
    for name in ("_param_definitions", "_builtins", "_client_context"):
        check_instance_attribute(resolver, name, dict)
    where = "botocore.regions.EndpointRulesetResolver._param_definitions"
    for definition in resolver._param_definitions.values():
        assert hasattr(definition, "builtin"), moved(where, "definitions with .builtin", definition)
    for name in ("_get_static_context_params", "_get_dynamic_context_params"):
        check_method(EndpointRulesetResolver, name, ["self", "operation_model"])
    check_method(EndpointRulesetResolver, "_get_client_context_params", ["self"])
    # Its presence tells the resolution the memo mirrors (operation context parameters).
    check_method(
        EndpointRulesetResolver,
        "_resolve_param_as_operation_context_param",
        ["self", "param_name", "operation_model", "call_args"],
    )


def check_event_lookup() -> None:
    events: Any = make_client().meta.events
    check_method(EventAliaser, "_alias_event_name", ["self", "event_name"])
    check_instance_attribute(events, "_emitter", HierarchicalEmitter)
    emitter = events._emitter
    check_instance_attribute(emitter, "_lookup_cache", dict)
    check_method(type(emitter._handlers), "prefix_search", ["self", "key"])
    # The cache emit reads is the one (re)built after a handler is registered.
    emitter.emit("x-event.dynamodb")
    events.register("x-event", lambda **_: None)
    found = emitter._lookup_cache.get("x-event.dynamodb")
    assert found is None, moved("HierarchicalEmitter._lookup_cache", "reset on register", found)


def check_host_from_url() -> None:
    found = getattr(auth, "_host_from_url", None)
    assert inspect.isfunction(found), moved("botocore.auth._host_from_url", "a function", found)
    assert parameters(found) == ["url"], moved(
        "botocore.auth._host_from_url", "a function of (url)", parameters(found)
    )


def check_normalize_url_path() -> None:
    check_method(SigV4Auth, "_normalize_url_path", ["self", "path"])


def check_canonical_query_string_url() -> None:
    check_method(SigV4Auth, "_canonical_query_string_url", ["self", "parts"])


def check_get_current_datetime() -> None:
    found = getattr(auth, "get_current_datetime", None)
    assert callable(found), moved("botocore.auth.get_current_datetime", "a function", found)
    assert isinstance(found(), datetime.datetime), moved(
        "botocore.auth.get_current_datetime", "a clock returning a datetime", found()
    )
    # SigV4Auth must read it through botocore.auth's module attribute, or a patched
    # clock would not be seen by both signers alike.
    request = AWSRequest(method="POST", url=ENDPOINT + "/", data=b"{}")
    then = datetime.datetime(2001, 2, 3, 4, 5, 6)
    with patch("botocore.auth.get_current_datetime", return_value=then):
        SigV4Auth(Credentials("k", "s"), "dynamodb", "us-east-1").add_auth(request)
    assert request.context["timestamp"] == "20010203T040506Z", moved(
        "botocore.auth.get_current_datetime", "the clock SigV4Auth reads", request.context
    )


def check_headers_dict() -> None:
    # (botocore's stubs declare the header map as HTTPHeaders)
    prepared: Any = AWSRequest(method="POST", url=ENDPOINT + "/", data=b"{}").prepare()
    assert type(prepared.headers) is HeadersDict, moved(
        "botocore.awsrequest.HeadersDict", "the prepared request's header map", prepared.headers
    )


def check_http_session_settings() -> None:
    # The attributes URLLib3Session.__init__ keeps what it was built with in.
    # (botocore's stubs type these parameters narrower than the client passes them)
    build: Any = URLLib3Session
    session = build(
        verify="/ca.pem",
        proxies={"https": "http://127.0.0.1:9"},
        timeout=(2, 3),
        max_pool_connections=7,
        socket_options=[(6, 1, 1)],
        client_cert=("/c.pem", "/k.pem"),
    )
    where = "botocore.httpsession.URLLib3Session"
    kept = {
        "_verify": "/ca.pem",
        "_max_pool_connections": 7,
        "_socket_options": [(6, 1, 1)],
        "_cert_file": "/c.pem",
        "_key_file": "/k.pem",
    }
    for name, value in kept.items():
        found = getattr(session, name, None)
        assert found == value, moved(f"{where}.{name}", f"the {value!r} it was built with", found)
    timeout = getattr(session, "_timeout", None)
    assert isinstance(timeout, Timeout), moved(f"{where}._timeout", "a urllib3 Timeout", timeout)
    assert (timeout.connect_timeout, timeout.read_timeout) == (2, 3), moved(
        f"{where}._timeout", "the (connect, read) it was built with", timeout
    )
    proxies = getattr(session, "_proxy_config", None)
    check_method(type(proxies), "proxy_url_for", ["self", "url"])
    assert proxies.proxy_url_for("https://h/") == "http://127.0.0.1:9", moved(  # type: ignore[union-attr]
        f"{where}._proxy_config", "the proxies it was built with", proxies
    )


INTERNALS: dict[str, Callable[[], None]] = {
    "BaseClient._request_signer": check_request_signer,
    "RequestSigner.signature_version": check_signature_version,
    "RequestSigner._credentials": check_signer_credentials,
    "BaseClient._endpoint": check_endpoint,
    "Endpoint.http_session.send": check_http_session,
    "BaseClient._resolve_endpoint_ruleset": check_resolve_endpoint_ruleset,
    "BaseClient._ruleset_resolver inputs": check_ruleset_resolver,
    "EventAliaser / HierarchicalEmitter handler lookup": check_event_lookup,
    "auth._host_from_url": check_host_from_url,
    "SigV4Auth._normalize_url_path": check_normalize_url_path,
    "SigV4Auth._canonical_query_string_url": check_canonical_query_string_url,
    "auth.get_current_datetime": check_get_current_datetime,
    "awsrequest.HeadersDict": check_headers_dict,
    "URLLib3Session settings": check_http_session_settings,
}


@pytest.mark.parametrize("name", INTERNALS)
def test_botocore_internal_is_where_it_was(name: str) -> None:
    INTERNALS[name]()


# -- the typed functions over them ------------------------------------------------------------


def test_the_functions_return_the_clients_own_objects() -> None:
    client = make_client()
    signer = internals.client_signer(client)
    assert signer is not None
    assert signer.signature_version == "v4"
    credentials = internals.signer_credentials(signer)
    assert credentials is not None
    assert credentials.get_frozen_credentials().access_key == "k"
    endpoint = internals.client_endpoint(client)
    assert endpoint.host == ENDPOINT
    context: dict[str, Any] = {}
    model = client.meta.service_model.operation_model("GetItem")
    url, headers, _ = internals.endpoint_resolver(client)(model, {"TableName": "t"}, context)
    assert (url, headers) == (ENDPOINT, {})
    assert internals.client_signer(object()) is None  # type: ignore[arg-type]


def test_endpoint_rule_inputs_are_the_resolvers() -> None:
    client = make_client()
    inputs = internals.endpoint_rule_inputs(client)
    assert inputs is not None
    resolver = client._ruleset_resolver  # type: ignore[attr-defined]
    assert inputs.builtins is resolver._builtins
    assert dict(inputs.parameters)["Region"] == "AWS::Region"
    assert dict(inputs.parameters)["ResourceArn"] is None
    model = client.meta.service_model.operation_model("GetItem")
    assert inputs.dynamic_context(model) == {"ResourceArn": "TableName"}
    assert inputs.static_context(model) == {}
    assert internals.endpoint_rule_inputs(object()) is None  # type: ignore[arg-type]


def test_botocore_context_active() -> None:
    assert not internals.botocore_context_active()
    with start_as_current_context():
        assert internals.botocore_context_active()


def test_has_handlers_is_whether_emit_calls_one() -> None:
    events = make_client().meta.events
    event = "before-endpoint-resolution.dynamodb"
    assert not internals.has_handlers(events, event)

    def handler(**_: Any) -> None:
        pass

    events.register("before-endpoint-resolution", handler)
    assert internals.has_handlers(events, event)
    events.unregister("before-endpoint-resolution", handler)
    assert not internals.has_handlers(events, event)
    assert internals.has_handlers(object(), event)  # an emitter it cannot read


@pytest.mark.parametrize(
    ("url", "parts"),
    [
        (
            "https://dynamodb.us-east-1.amazonaws.com/",
            ("dynamodb.us-east-1.amazonaws.com", "/", ""),
        ),
        ("http://LocalHost:80/", ("localhost", "/", "")),
        ("https://[::1]:8443/", ("[::1]:8443", "/", "")),
        ("http://localhost:8000/a/../b/?x=1&a=2", ("localhost:8000", "/b/", "a=2&x=1")),
    ],
)
def test_sigv4_url_parts(url: str, parts: tuple[str, str, str]) -> None:
    assert internals.sigv4_url_parts(url) == parts


def test_http_session_settings_read_what_the_client_built_its_session_with() -> None:
    client = boto3.Session().client(
        "dynamodb",
        region_name="us-east-1",
        endpoint_url=ENDPOINT,
        verify=False,
        aws_access_key_id="k",
        aws_secret_access_key="s",
        config=Config(connect_timeout=2, read_timeout=3, max_pool_connections=7),
    )
    settings = internals.http_session_settings(internals.client_endpoint(client).http_session)
    assert settings is not None
    assert settings.verify is False
    assert (settings.timeout.connect_timeout, settings.timeout.read_timeout) == (2, 3)
    assert settings.max_pool_connections == 7
    assert (settings.client_cert, settings.proxied) == (False, False)
    proxied = URLLib3Session(proxies={"http": "127.0.0.1:9"}, client_cert="/c.pem")
    settings = internals.http_session_settings(proxied)
    assert settings is not None
    assert (settings.client_cert, settings.proxied) == (True, True)
    assert internals.http_session_settings(object()) is None
    client.close()


def test_sigv4_now_sees_a_patched_clock() -> None:
    then = datetime.datetime(2001, 2, 3)
    with patch("botocore.auth.get_current_datetime", return_value=then):
        assert internals.sigv4_now() == then


@given(
    st.dictionaries(
        st.text(alphabet="abcABC-", min_size=1, max_size=6), st.text(max_size=4), max_size=6
    )
)
def test_header_items_are_the_items_of_a_prepared_request(headers: dict[str, str]) -> None:
    prepared = AWSRequest(method="POST", url="http://h/", headers=headers, data=b"x").prepare()
    assert internals.header_items(prepared.headers) == list(prepared.headers.items())
    assert internals.header_items(headers) == list(headers.items())


def test_prepared_headers_are_what_prepare_makes() -> None:
    headers = internals.prepared_headers({"Content-Type": "x"})
    assert type(headers) is type(AWSRequest(method="POST", url=ENDPOINT + "/").prepare().headers)
    assert headers["content-type"] == "x"


# -- the events the lean transport emits as botocore's endpoint does -------------------------


def reply(request: Any, **_: Any) -> AWSResponse:
    class Raw:
        def stream(self, **_: Any) -> Any:
            yield b"{}"

        def read(self, *_: Any) -> bytes:
            return b"{}"

    headers = HTTPHeaders()
    headers["x-amzn-requestid"] = "r"
    return AWSResponse(request.url, 200, headers, Raw())


def emitted(send: Callable[[BaseClient], Any]) -> dict[str, list[str]]:
    """The keyword arguments each of before-send and needs-retry is emitted with."""
    client = make_client()
    seen: dict[str, list[str]] = {}

    def record(event_name: str, **kwargs: Any) -> Any:
        event = event_name.split(".")[0]
        seen[event] = sorted(kwargs)
        return reply(kwargs["request"]) if event == "before-send" else None

    client.meta.events.register("before-send.dynamodb", record)
    client.meta.events.register("needs-retry.dynamodb", record)
    send(client)
    return seen


def test_lean_emits_before_send_and_needs_retry_as_botocores_endpoint() -> None:
    params = {"TableName": "t", "Key": {"PK": {"S": "a"}}}
    botocores = emitted(lambda client: client.get_item(**params))  # type: ignore[attr-defined]
    leans = emitted(lambda client: LeanTransport(client).send("get_item", params))
    assert set(botocores) == {"before-send", "needs-retry"}
    assert leans == botocores, moved(
        "the arguments of before-send / needs-retry",
        f"what the lean path emits: {leans}",
        botocores,
    )


# -- nothing else reaches into botocore -------------------------------------------------------


def test_no_other_module_reaches_for_a_private_botocore_name() -> None:
    # Private names read off anything but self/cls, in modules that import botocore or
    # boto3: all of them belong in botocore_internals.
    root = Path(singletable.__file__).parent
    offenders = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "botocore_internals.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {
            alias.name.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        } | {
            (node.module or "").split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
        }
        if not imported & {"botocore", "boto3", "aiobotocore"}:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("botocore"):
                offenders += [
                    f"{path.name}: from {node.module} import {a.name}"
                    for a in node.names
                    if a.name.startswith("_")
                ]
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                offenders.append(f"{path.name}:{node.lineno}: .{node.attr}")
    assert offenders == []


def test_prepared_request_is_what_prepare_makes() -> None:
    # With or without a context, as this botocore's AWSRequest.prepare makes it.
    context: dict[str, Any] = {"timestamp": "20010203T040506Z"}
    headers = {"A": "b", "Content-Length": "2"}
    reference = AWSRequest(method="POST", url=ENDPOINT + "/", headers=headers, data=b"{}")
    reference.context = context
    expected: Any = reference.prepare()
    got: Any = internals.prepared_request(ENDPOINT + "/", headers, b"{}", context)
    assert hasattr(expected, "context") is internals.PREPARED_CONTEXT
    assert getattr(got, "context", None) == getattr(expected, "context", None)
    assert (got.method, got.url, got.body, got.stream_output) == (
        expected.method,
        expected.url,
        expected.body,
        expected.stream_output,
    )
    assert list(got.headers.items()) == list(expected.headers.items())


_NAMES = st.sampled_from(
    ["Content-Type", "content-type", "X-Amz-Crc32", "x-amzn-RequestId", "Date"]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_NAMES, st.text(max_size=4)), max_size=8))
def test_the_header_map_and_its_lowered_copy_are_urllib3s_and_botocores(
    headers: list[tuple[str, str]],
) -> None:
    # Filled through HTTPHeaderDict's own map, read off it: the same map and items as
    # its constructor gives, the same dict as botocore's lowercase_dict.
    got = internals.header_dict(headers)
    expected = HTTPHeaderDict(headers)
    assert got._container == expected._container
    assert list(got.items()) == list(expected.items())
    assert internals.lowercase_headers(got) == lowercase_dict(expected)
    plain = dict(headers)
    assert internals.lowercase_headers(plain) == lowercase_dict(plain)
