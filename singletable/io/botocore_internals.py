"""Every use singletable makes of botocore's private surface, behind typed functions.

The lean transport (`singletable.io.lean`) speaks DynamoDB's JSON protocol itself but
keeps botocore's credentials, endpoint rules, HTTP session, retry handler and signature.
botocore offers no public way to reach those from a client, so this module does, and
no other module of singletable touches a private botocore name. Each one below is
checked against the installed botocore by tests/io/test_botocore_internals.py, which
names the one that moved when an upgrade breaks it.

What it touches, and why:

* ``BaseClient._request_signer`` (a `botocore.signers.RequestSigner`): its public
  ``signature_version`` (the lean path signs ``v4`` and unsigned clients only) and its
  private ``_credentials``, the client's own (refreshable) credentials, read on every
  request as botocore's signer reads them.
* ``BaseClient._endpoint`` (a `botocore.endpoint.Endpoint`): its public
  ``http_session`` (botocore's pooled urllib3 session: proxies, TLS, timeouts, pool
  size), which sends the request, and the endpoint itself, which botocore hands to the
  ``needs-retry`` handlers as ``endpoint=``.
* ``BaseClient._resolve_endpoint_ruleset(operation_model, params, request_context)``:
  the client's endpoint rules for one call, returning ``(url, headers, properties)`` and
  writing the signing region and name into ``request_context``.
* ``BaseClient._ruleset_resolver`` (a `botocore.regions.EndpointRulesetResolver`): the
  inputs ``_resolve_endpoint_ruleset`` computes the rule parameters from (the
  ruleset's parameter definitions, the resolver's ``_builtins`` and ``_client_context``,
  and its own cached ``_get_static_context_params``, ``_get_dynamic_context_params``
  and ``_get_client_context_params``), so that `singletable.io.lean_endpoint` can key
  a memo of its results on exactly what it reads.
* ``EventAliaser._alias_event_name`` and ``HierarchicalEmitter._lookup_cache`` /
  ``._handlers``: whether emitting an event would call any handler (the memo leaves
  resolution to botocore whenever ``before-endpoint-resolution`` has one).
* ``botocore.auth._host_from_url``, ``SigV4Auth._normalize_url_path`` and
  ``SigV4Auth._canonical_query_string_url``: the host, path and query text SigV4 signs,
  for the lean path's own signer (`singletable.io.lean._DynamoDBSigner`), so that it
  signs exactly what ``SigV4Auth`` signs.
* ``botocore.auth.get_current_datetime``: public in ``botocore.compat`` but read
  through ``botocore.auth``'s module attribute, as ``SigV4Auth`` reads it, so that a
  clock patched there (``freezegun``, tests) is seen by both signers.
* ``AWSPreparedRequest.__init__``'s parameters: whether this botocore's prepared
  requests carry their request's ``context`` (newer releases pass it from
  ``AWSRequest.prepare``; older ones, 1.43.11 among them, take no such argument).
* `botocore.awsrequest.HeadersDict`: the header map ``AWSRequest.prepare`` gives a
  prepared request (botocore's stubs call it ``HTTPHeaders``), and its private
  ``_dict`` of ``_HeaderKey`` (whose ``_key`` is the name as given) to read it fast.
* urllib3's ``HTTPHeaderDict._container`` (``{lowered name: [name, *values]}``), the
  header map of botocore's responses: filled and read directly for the lean pool's
  answers (`header_dict`, `lowercase_headers`), equal to its constructor and to
  botocore's ``lowercase_dict``.
* ``URLLib3Session._verify``, ``._timeout``, ``._max_pool_connections``,
  ``._socket_options``, ``._cert_file``, ``._key_file`` and ``._proxy_config`` (whose
  public ``proxy_url_for`` says whether a URL goes through a proxy): what the client's
  HTTP session was built with, so that the lean transport's own connection pool
  (`singletable.io.lean_http`) connects exactly as that session would, or leaves the
  sending to it.

The lean transport also mirrors, without reaching into them, how botocore's endpoint
emits ``before-send`` and ``needs-retry`` (their keyword arguments): the same test
compares the arguments each hands to handlers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast
from urllib.parse import urlsplit

from botocore import auth
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSPreparedRequest, HeadersDict
from botocore.client import BaseClient
from botocore.compat import HTTPHeaders
from botocore.credentials import Credentials, ReadOnlyCredentials
from botocore.endpoint import Endpoint
from botocore.hooks import EventAliaser, HierarchicalEmitter
from botocore.httpsession import URLLib3Session
from botocore.model import OperationModel
from botocore.regions import EndpointResolverBuiltins, EndpointRulesetResolver
from botocore.signers import RequestSigner
from botocore.utils import lowercase_dict
from urllib3 import HTTPHeaderDict

__all__ = [
    "EndpointResolver",
    "EndpointRuleInputs",
    "HTTPSessionSettings",
    "client_endpoint",
    "botocore_context_active",
    "client_signer",
    "endpoint_resolver",
    "endpoint_rule_inputs",
    "has_handlers",
    "header_dict",
    "header_items",
    "http_session_settings",
    "lowercase_headers",
    "prepared_headers",
    "prepared_request",
    "signer_credentials",
    "sigv4_now",
    "sigv4_url_parts",
]

#: ``(operation_model, params, request_context) -> (url, extra headers, properties)``
EndpointResolver = Callable[
    [OperationModel, Mapping[str, Any], dict[str, Any]],
    tuple[str, dict[str, str], dict[str, Any]],
]

# botocore.context (user-agent feature ids recorded per call) is not in older releases.
_get_context: Callable[[], object] | None
try:
    from botocore.context import get_context as _get_context
except ImportError:  # pragma: no cover - older botocore
    _get_context = None

# botocore.auth's host helper and clock are not in its type stubs.
_auth_module: Any = auth


def client_signer(client: BaseClient) -> RequestSigner | None:
    """The client's request signer (``client._request_signer``), if it has one."""
    signer: RequestSigner | None = getattr(client, "_request_signer", None)
    return signer


def signer_credentials(signer: RequestSigner) -> Credentials | None:
    """The credentials ``signer`` signs with (``signer._credentials``), as it reads them."""
    credentials: Credentials | None = signer._credentials  # type: ignore[attr-defined]
    return credentials


def client_endpoint(client: BaseClient) -> Endpoint:
    """The client's endpoint object (``client._endpoint``)."""
    endpoint: Endpoint = client._endpoint  # type: ignore[attr-defined]
    return endpoint


def endpoint_resolver(client: BaseClient) -> EndpointResolver:
    """The client's endpoint-rules resolver (``client._resolve_endpoint_ruleset``)."""
    return cast(EndpointResolver, client._resolve_endpoint_ruleset)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class EndpointRuleInputs:
    """What a client's `EndpointRulesetResolver` computes an operation's rule parameters from.

    ``parameters`` are the ruleset's, in its order: (name, the builtin it falls back on).
    ``builtins`` and ``client_context`` are the resolver's own mappings (read per call,
    as it reads them); the three functions are its own (cached) readings of the
    operation's static and dynamic context parameters and the client context
    parameters' config names.
    """

    parameters: tuple[tuple[str, str | None], ...]
    builtins: Mapping[str, Any]
    client_context: Mapping[str, Any]
    static_context: Callable[[OperationModel], Mapping[str, Any]]
    dynamic_context: Callable[[OperationModel], Mapping[str, str]]
    client_context_names: Mapping[str, str]


def endpoint_rule_inputs(client: BaseClient) -> EndpointRuleInputs | None:
    """The inputs of ``client``'s endpoint rule parameters, when botocore's resolver has them.

    ``None`` when the client has no ruleset resolver, one of another class, or a
    parameter falling back on a builtin botocore does not know (it raises for those).
    """
    found = getattr(client, "_ruleset_resolver", None)
    if type(found) is not EndpointRulesetResolver:
        return None
    resolver: Any = found
    if not hasattr(resolver, "_resolve_param_as_operation_context_param"):
        # An older resolution than the one the memo mirrors (no operation context
        # parameters, no botocore context): left to botocore.
        return None
    known = set(EndpointResolverBuiltins.__members__.values())
    parameters = tuple(
        (name, definition.builtin) for name, definition in resolver._param_definitions.items()
    )
    if any(builtin is not None and builtin not in known for _, builtin in parameters):
        return None
    return EndpointRuleInputs(
        parameters=parameters,
        builtins=resolver._builtins,
        client_context=resolver._client_context,
        static_context=resolver._get_static_context_params,
        dynamic_context=resolver._get_dynamic_context_params,
        client_context_names=resolver._get_client_context_params(),
    )


def botocore_context_active() -> bool:
    """Whether a botocore context (``botocore.context``) is in force in this thread."""
    return _get_context is not None and _get_context() is not None


def has_handlers(events: object, event_name: str) -> bool:
    """Whether emitting ``event_name`` on ``events`` would call a handler.

    True for an emitter of any other class than botocore's own (it cannot be told).
    """
    if type(events) is EventAliaser:
        own: Any = events
        event_name = own._alias_event_name(event_name)
        events = own._emitter
    if type(events) is not HierarchicalEmitter:
        return True
    emitter: Any = events
    # The handler list botocore's emit would look up (and cache) for this name.
    handlers = emitter._lookup_cache.get(event_name)
    if handlers is None:
        handlers = emitter._handlers.prefix_search(event_name)
    return bool(handlers)


def sigv4_url_parts(url: str) -> tuple[str, str, str]:
    """The host, canonical path and canonical query string SigV4 signs for ``url``."""
    # The path and query helpers are methods that read nothing of the instance; an
    # empty one serves.
    reference: Any = SigV4Auth(ReadOnlyCredentials("", "", None), "", "")
    split = urlsplit(url)
    return (
        _auth_module._host_from_url(url),
        reference._normalize_url_path(split.path),
        reference._canonical_query_string_url(split),
    )


def sigv4_now() -> datetime:
    """The time ``SigV4Auth`` would stamp a request with now (seeing a patched clock)."""
    now: datetime = _auth_module.get_current_datetime()
    return now


def header_items(headers: Mapping[str, Any] | HTTPHeaders) -> list[tuple[str, Any]]:
    """``list(headers.items())``; for a `HeadersDict`, read off its own dict.

    A `HeadersDict` looks every key up again through a new key object as it yields
    it: reading a prepared request's seven headers and three names cost 18.4 µs that
    way, 2.9 µs off its dict (timeit, this machine).
    """
    if type(headers) is HeadersDict:
        return [(key._key, value) for key, value in headers._dict.items()]  # type: ignore[attr-defined]
    return list(headers.items())


def prepared_headers(headers: Mapping[str, str]) -> HTTPHeaders:
    """The header map ``AWSRequest.prepare`` gives a prepared request, over ``headers``."""
    # A HeadersDict, which botocore's stubs declare as HTTPHeaders.
    return cast(HTTPHeaders, HeadersDict(headers))


@dataclass(frozen=True)
class HTTPSessionSettings:
    """What a botocore `URLLib3Session` was built with (from the client's config and env).

    ``timeout`` is as the session keeps it: a number, or a ``urllib3.Timeout`` of the
    config's ``connect_timeout`` and ``read_timeout``. ``proxied`` is whether any
    ``http``/``https`` URL would go through a proxy (the config's ``proxies``, or
    ``HTTP(S)_PROXY`` as the endpoint resolved them with ``NO_PROXY``).
    """

    verify: bool | str
    timeout: Any
    max_pool_connections: int
    socket_options: list[tuple[int, int, int]]
    client_cert: bool
    proxied: bool


def http_session_settings(session: object) -> HTTPSessionSettings | None:
    """``session``'s settings when it is exactly botocore's `URLLib3Session`, else ``None``.

    A subclass (or any other session class) may send differently, so it gets ``None``.
    """
    if type(session) is not URLLib3Session:
        return None
    own: Any = session
    proxies = own._proxy_config
    return HTTPSessionSettings(
        verify=own._verify,
        timeout=own._timeout,
        max_pool_connections=own._max_pool_connections,
        socket_options=list(own._socket_options),
        client_cert=own._cert_file is not None or own._key_file is not None,
        proxied=any(proxies.proxy_url_for(f"{scheme}://host/") for scheme in ("http", "https")),
    )


_prepare_code = AWSPreparedRequest.__init__.__code__
#: Whether ``AWSRequest.prepare`` hands the request's context to the prepared request.
PREPARED_CONTEXT = "context" in _prepare_code.co_varnames[: _prepare_code.co_argcount]


def prepared_request(
    url: str, headers: Mapping[str, str], body: bytes, context: dict[str, Any]
) -> AWSPreparedRequest:
    """The prepared POST ``AWSRequest.prepare`` makes (with ``context`` where it keeps one)."""
    prepared = prepared_headers(headers)
    if PREPARED_CONTEXT:
        return AWSPreparedRequest("POST", url, prepared, body, False, context)
    return AWSPreparedRequest("POST", url, prepared, body, False)


def header_dict(headers: list[tuple[str, str]]) -> HTTPHeaderDict:
    """``HTTPHeaderDict(headers)`` for names and values of ``str``, filled in its own map.

    Its constructor adds each pair through ``add`` (a keyword-only call, a type check,
    two lists): the same map, ``{lowered name: [name as first given, *values]}``, is
    filled here in one line a header (a 7-header answer: 99 -> 29 µs a thousand,
    timeit; tests/io/test_botocore_internals.py compares the two on generated headers).
    """
    out = HTTPHeaderDict()
    container: dict[str, list[str]] = out._container  # type: ignore[assignment]
    for name, value in headers:
        container.setdefault(name.lower(), [name]).append(value)
    return out


def lowercase_headers(headers: Any) -> dict[str, str]:
    """The ``lowercase_dict(headers)`` of botocore, read off an `HTTPHeaderDict`'s own map.

    ``lowercase_dict`` looks every name up again (``headers[name]``: a lowering and a
    join each); an `HTTPHeaderDict`'s map holds both already (56 -> 14 µs a thousand
    for 7 headers, timeit). Any other mapping goes to ``lowercase_dict``.
    """
    if type(headers) is HTTPHeaderDict:
        container: dict[str, list[str]] = headers._container  # type: ignore[assignment]
        return {name: ", ".join(values[1:]) for name, values in container.items()}
    return lowercase_dict(headers)
