"""The lean transport's HTTP pool: botocore's connections and errors, minus urllib3's request layer.

botocore's `URLLib3Session.send` spends most of its client CPU around the socket work:
a ``PoolManager`` lookup, ``urlopen`` with its ``Timeout``/``Retry`` objects, urllib3's
response wrapper and its streaming read. For the lean path's one request shape (a
POST of a bytes body, headers set by the lean path) none of that decides anything, so
this pool sends with what stays the same and does the rest itself:

* the connections are botocore's own classes (``AWSHTTPConnection``,
  ``AWSHTTPSConnection``, urllib3 connections), built with the keyword arguments
  botocore's pool gives them (connect timeout, socket options, block size, and for TLS
  an SSL context from botocore's ``create_urllib3_context`` with ``cert_reqs`` and
  ``ca_certs`` set from ``verify`` as ``URLLib3Session`` sets them), and connected by
  their own ``connect``: the same DNS, socket options, TLS handshake and hostname check;
* a pooled connection is checked as urllib3 checks it (``is_connected``: a readable
  idle socket was closed by the server) and replaced when dropped; at most
  ``max_pool_connections`` idle ones are kept per origin, like urllib3's non-blocking
  pool;
* the request goes out under the connect timeout and the response is awaited under the
  read timeout, as urllib3 sets them; the body is read whole, a short body of a known
  length kept as botocore keeps it (``enforce_content_length=False``), Content-Length
  values that disagree refused as urllib3 refuses them;
* in the usual case the bytes are written and read without http.client: a head of plain
  ASCII headers goes out as http.client writes it (`_request_head`: same bytes, same
  order), and an answer in DynamoDB's shape (HTTP/1.1, a final status, plain header
  lines, one Content-Length, no Transfer-Encoding) is parsed off the socket by
  `_usual_head`, equal to what http.client and email's parser make of it. Anything
  else is written by http.client, or read by http.client's response class from the
  bytes already received onwards, so it parses and fails as it always did;
* every failure becomes the exception urllib3 would raise there and then the botocore
  exception ``URLLib3Session.send`` maps it to (`_botocore_error`), so the retry
  handler decides on the same classes. tests/io/test_lean_http.py runs both sessions
  against the same loopback servers (refused, connect and read timeouts, a server
  closing mid-response or an idle keep-alive connection, TLS with a self-signed
  certificate, 500 and throttling answers) and compares exception classes, messages and
  retry counts.

What it does not take on, left to botocore's session (`http_session` returns that
session unchanged, decided once per transport): a session that is not exactly
botocore's ``URLLib3Session``, any proxy (the config's ``proxies``, or
``HTTP(S)_PROXY``/``NO_PROXY`` as botocore resolved them for the endpoint), a client
certificate, timeouts that are not positive numbers. Per request (cheap checks): an
``Expect`` or ``Transfer-Encoding`` header, no ``User-Agent``, a body that is not
bytes, a streamed output, a per-request ``read_timeout``, a URL whose scheme is not
``http``/``https`` or whose host is an IPv6 literal.

It pays (benchmarks/bench_micro.py ``http``, client CPU against ``URLLib3Session.send``,
best of 15 rounds, same run; machine loaded by other work): a 12 KB POST to a keep-alive
loopback server 0.27-0.28x (0.48x with http.client writing and reading), a 200-byte
POST 0.25-0.31x (0.52x), a 380 KB answer 0.20x (0.32x), a moto server, which closes
every connection, 0.41-0.50x (0.65x). Callgrind, 2,000-item lean BatchWriteItem runs
against a moto server (bench_transport's "lean raw"): 74.6k -> 58.1k instructions an
item.
"""

from __future__ import annotations

import errno
import io
import logging
import re
import socket
import ssl
import threading
import warnings
import weakref
from contextlib import closing
from http.client import HTTPConnection, HTTPException, HTTPResponse, IncompleteRead
from typing import Any, cast
from urllib.parse import urlparse

from botocore.awsrequest import (
    AWSHTTPConnection,
    AWSHTTPSConnection,
    AWSPreparedRequest,
    AWSResponse,
)
from botocore.exceptions import (
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    HTTPClientError,
    ReadTimeoutError,
    SSLError,
)
from botocore.httpsession import BUFFER_SIZE, create_urllib3_context, get_cert_path
from urllib3 import HTTPHeaderDict, Timeout
from urllib3 import exceptions as urllib3_errors
from urllib3.exceptions import InsecureRequestWarning
from urllib3.util import parse_url
from urllib3.util.ssl_match_hostname import CertificateError

from singletable.io import botocore_internals as internals

__all__ = ["LeanHTTPSession", "http_session"]

logger = logging.getLogger(__name__)

# urllib3 treats these errnos on a socket read as a timeout (connectionpool._blocking_errnos).
_BLOCKING_ERRNOS = {errno.EAGAIN, errno.EWOULDBLOCK}
# urllib3 ignores these while sending: the server may have answered and closed already.
_SEND_ERRNOS_IGNORED = {errno.EPROTOTYPE, errno.ECONNRESET}
# The most origins kept, as urllib3's PoolManager keeps (num_pools).
_MAX_ORIGINS = 10


Connection = AWSHTTPConnection | AWSHTTPSConnection


def _timeouts(timeout: Any) -> tuple[float, float] | None:
    """(connect, read) from the session's timeout, or ``None`` when not two positive numbers."""
    if isinstance(timeout, Timeout):
        pair = (timeout.connect_timeout, timeout.read_timeout)
    else:
        pair = (timeout, timeout)
    if all(isinstance(t, (int, float)) and not isinstance(t, bool) and t > 0 for t in pair):
        return float(pair[0]), float(pair[1])  # type: ignore[arg-type]
    return None


def http_session(session: Any) -> Any:
    """What the lean transport sends with: a `LeanHTTPSession` where equivalent, else ``session``.

    ``session`` is the client's endpoint's HTTP session; see the module's docstring for
    what keeps it.
    """
    with _pools_lock:
        pool = _pools.get(session)
        if pool is not None:
            return pool
        settings = internals.http_session_settings(session)
        if settings is None or settings.proxied or settings.client_cert:
            return session
        timeouts = _timeouts(settings.timeout)
        if timeouts is None:
            return session
        pool = _pools[session] = LeanHTTPSession(session, settings, *timeouts)
        return pool


# One pool per botocore session, as botocore keeps one per client: every transport (every
# `Connection`) over a client shares its connections. A pool holds its session weakly,
# so the entry goes with the client.
_pools: weakref.WeakKeyDictionary[Any, LeanHTTPSession] = weakref.WeakKeyDictionary()
_pools_lock = threading.Lock()


class _Body:
    """A response body read in full, in the shape `AWSResponse.content` reads (``raw.stream()``)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def stream(self, amt: int | None = None, decode_content: bool | None = None) -> Any:
        yield self.data

    def read(self, amt: int | None = None) -> bytes:
        return self.data


class _Origin:
    """The idle connections to one scheme, host and port (the last returned is reused first)."""

    __slots__ = ("host", "https", "idle", "lock", "new")

    def __init__(self, host: str, https: bool, new: Any) -> None:
        self.host = host
        self.https = https
        self.idle: list[Connection] = []
        self.lock = threading.Lock()
        self.new = new

    def close(self) -> None:
        with self.lock:
            idle, self.idle = self.idle, []
        for conn in idle:
            conn.close()


class LeanHTTPSession:
    """Sends prepared requests as botocore's `URLLib3Session` does, over its own keep-alive pool.

    Thread-safe: many threads may send at once (each takes its own connection).
    """

    def __init__(
        self,
        fallback: Any,
        settings: internals.HTTPSessionSettings,
        connect_timeout: float,
        read_timeout: float,
    ) -> None:
        self._fallback = weakref.ref(fallback)
        self._verify = settings.verify
        self._maxsize = settings.max_pool_connections
        self._socket_options = settings.socket_options
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._ssl_context: ssl.SSLContext | None = None
        self._lock = threading.Lock()
        # url -> (origin, request target), or None: sent by the fallback session.
        self._routes: dict[str, tuple[_Origin, str] | None] = {}
        self._origins: dict[tuple[str, str, int], _Origin] = {}
        # Idle connections are closed when the pool is collected, as urllib3's pools
        # close theirs (``client.close()`` reaches botocore's session, not this pool).
        weakref.finalize(self, _close_origins, self._origins)

    def close(self) -> None:
        """Close the idle connections (and the fallback session's)."""
        with self._lock:
            self._routes.clear()
            _close_origins(self._origins)
        fallback = self._fallback()
        if fallback is not None:
            fallback.close()

    def send(self, request: AWSPreparedRequest) -> AWSResponse:
        """Send ``request``; the response's body is read, as botocore reads a non-streamed one."""
        url = request.url
        try:
            route = self._routes[url]
        except KeyError:
            route = self._route(url)
        headers = internals.header_items(request.headers)
        names = {name.lower() for name, _ in headers}
        if (
            route is None
            or type(request.body) is not bytes
            or request.stream_output
            or "expect" in names
            or "transfer-encoding" in names
            or "user-agent" not in names
            or getattr(request, "context", {}).get("read_timeout") is not None
        ):
            fallback = self._fallback()
            assert fallback is not None  # the client a transport holds holds its session
            return fallback.send(request)  # type: ignore[no-any-return]
        origin, target = route
        conn = self._checkout(origin)
        try:
            status, response_headers, body = self._exchange(
                conn, origin.https, request, target, headers
            )
        except BaseException:
            conn.close()  # a failed connection is dropped, as urllib3 drops it
            raise
        self._checkin(origin, conn)
        response = AWSResponse(url, status, response_headers, _Body(body))  # type: ignore[arg-type]
        response.content  # noqa: B018 - read into the response, as botocore does
        return response

    # -- the pool ----------------------------------------------------------------------

    def _route(self, url: str) -> tuple[_Origin, str] | None:
        parsed = parse_url(url)
        scheme = (parsed.scheme or "http").lower()
        host = parsed.host
        if scheme not in ("http", "https") or not host or host.startswith("["):
            route = None
        else:
            port = parsed.port or (443 if scheme == "https" else 80)
            # botocore's request target (URLLib3Session._path_url): path, "/" when empty, query.
            split = urlparse(url)
            target = (split.path or "/") + (f"?{split.query}" if split.query else "")
            route = (self._origin(scheme, host.lower(), port), target)
        with self._lock:
            self._routes[url] = route
        return route

    def _origin(self, scheme: str, host: str, port: int) -> _Origin:
        key = (scheme, host, port)
        with self._lock:
            origin = self._origins.get(key)
            if origin is not None:
                return origin
            if len(self._origins) >= _MAX_ORIGINS:
                oldest = next(iter(self._origins))
                self._origins.pop(oldest).close()
                self._routes = {}  # routes to the closed origin are recomputed
            new = (
                self._https_factory(host, port)
                if scheme == "https"
                else self._http_factory(host, port)
            )
            origin = self._origins[key] = _Origin(host, scheme == "https", new)
            return origin

    def _http_factory(self, host: str, port: int) -> Any:
        # The keyword arguments botocore's AWSHTTPConnectionPool gives its connections.
        kwargs: dict[str, Any] = {"socket_options": self._socket_options}
        if BUFFER_SIZE:
            kwargs["blocksize"] = BUFFER_SIZE
        timeout = self._connect_timeout
        return lambda: AWSHTTPConnection(host=host, port=port, timeout=timeout, **kwargs)

    def _https_factory(self, host: str, port: int) -> Any:
        # The keyword arguments botocore's AWSHTTPSConnectionPool gives its connections,
        # with cert_reqs and ca_certs as URLLib3Session._setup_ssl_cert sets them.
        if self._ssl_context is None:
            self._ssl_context = create_urllib3_context()
        kwargs: dict[str, Any] = {
            "ssl_context": self._ssl_context,
            "socket_options": self._socket_options,
        }
        if BUFFER_SIZE:
            kwargs["blocksize"] = BUFFER_SIZE
        verify = self._verify
        timeout = self._connect_timeout

        def new() -> AWSHTTPSConnection:
            return AWSHTTPSConnection(
                host=host,
                port=port,
                timeout=timeout,
                cert_reqs="CERT_REQUIRED" if verify else "CERT_NONE",
                ca_certs=get_cert_path(verify) if verify else None,  # type: ignore[arg-type]
                **kwargs,
            )

        return new

    def _checkout(self, origin: _Origin) -> Connection:
        try:
            conn: Connection = origin.idle.pop()
        except IndexError:
            return origin.new()  # type: ignore[no-any-return]
        if not conn.is_connected:  # urllib3's is_connection_dropped
            conn.close()
        return conn

    def _checkin(self, origin: _Origin, conn: Connection) -> None:
        with origin.lock:
            if len(origin.idle) < self._maxsize:
                origin.idle.append(conn)
                return
        conn.close()
        logger.warning(
            "Connection pool is full, discarding connection: %s. Connection pool size: %s",
            origin.host,
            self._maxsize,
        )

    # -- one exchange ------------------------------------------------------------------

    def _exchange(
        self,
        conn: Connection,
        https: bool,
        request: AWSPreparedRequest,
        target: str,
        headers: list[tuple[str, Any]],
    ) -> tuple[int, HTTPHeaderDict, bytes]:
        try:
            if conn.sock is None:
                self._connect(conn, request.url)
            if https and not conn.is_verified:
                _warn_unverified(conn.host)
            body: bytes = request.body  # type: ignore[assignment]  # send() checked
            head = _request_head(conn, request.method, target, headers, len(body))
            if head is None:
                response = self._request(conn, request, target)
                received = HTTPHeaderDict(response.msg.items())
                _check_lengths(received, response.chunked)
                return response.status, received, _read(response)
            self._send(conn, head + body)
            return self._receive(conn, request)
        except Exception as exc:
            raise _botocore_error(exc, request) from exc

    def _connect(self, conn: Connection, url: str) -> None:
        # As urllib3's _make_request/_validate_conn map a connection's failures.
        try:
            conn.connect()
        except (TimeoutError, ssl.SSLError) as exc:
            if isinstance(exc, TimeoutError) or exc.errno in _BLOCKING_ERRNOS:
                raise _read_timeout(url, self._connect_timeout) from exc
            raise urllib3_errors.SSLError(exc) from exc
        except CertificateError as exc:
            raise urllib3_errors.SSLError(exc) from exc
        except OSError as exc:
            raise urllib3_errors.ProtocolError("Connection aborted.", exc) from exc

    def _request(self, conn: Connection, request: AWSPreparedRequest, target: str) -> HTTPResponse:
        sock = conn.sock
        split = self._connect_timeout != self._read_timeout
        try:
            if split:
                sock.settimeout(self._connect_timeout)
            # http.client's own request and getresponse (urllib3's overrides build its
            # response wrapper): the same bytes on the wire, headers and body in one send.
            body: bytes = request.body  # type: ignore[assignment]  # send() checked
            headers: Any = request.headers
            HTTPConnection.request(conn, request.method, target, body, headers)
        except BrokenPipeError:
            pass  # urllib3 reads the response the server may have sent before closing
        except OSError as exc:
            if exc.errno not in _SEND_ERRNOS_IGNORED:
                raise _aborted(exc) from exc
        except HTTPException as exc:
            raise _aborted(exc) from exc
        try:
            if split and conn.sock is not None:
                conn.sock.settimeout(self._read_timeout)
            return HTTPConnection.getresponse(conn)
        except (ssl.SSLError, OSError) as exc:
            raise _awaiting_error(exc, request.url, self._read_timeout) from exc
        except HTTPException as exc:
            raise _aborted(exc) from exc

    # -- the usual exchange, without http.client ---------------------------------------

    def _send(self, conn: Connection, data: bytes) -> None:
        # What http.client's request does with a bytes body: head and body in one sendall
        # (botocore's _send_output joins them), under the connect timeout.
        sock = conn.sock
        try:
            if self._connect_timeout != self._read_timeout:
                sock.settimeout(self._connect_timeout)
            sock.sendall(data)
        except BrokenPipeError:
            pass  # urllib3 reads the response the server may have sent before closing
        except OSError as exc:
            if exc.errno not in _SEND_ERRNOS_IGNORED:
                raise _aborted(exc) from exc

    def _receive(
        self, conn: Connection, request: AWSPreparedRequest
    ) -> tuple[int, HTTPHeaderDict, bytes]:
        """The response, parsed off the socket's buffer when its head is in the usual shape.

        The usual shape is what DynamoDB answers: ``HTTP/1.1``, a final status other than
        204 and 304, ``Name: value`` header lines of printable ASCII, one Content-Length
        of digits and no Transfer-Encoding. The socket is read through the file
        http.client's response reads (``makefile``: a buffered reader), and the head is
        looked at in its buffer (``peek``) before anything is consumed: any other head,
        or one not whole in the first read, goes to http.client's own response class
        over that same file, which parses and fails exactly as it would have.
        """
        sock = conn.sock
        if self._connect_timeout != self._read_timeout:
            sock.settimeout(self._read_timeout)
        with cast(io.BufferedReader, sock.makefile("rb", _RECEIVE_SIZE)) as file:
            try:
                seen = file.peek(_RECEIVE_SIZE)
            except (ssl.SSLError, OSError) as exc:
                raise _awaiting_error(exc, request.url, self._read_timeout) from exc
            end = seen.find(b"\r\n\r\n")
            usual = _usual_head(seen[:end]) if end >= 0 else None
            if usual is None:
                return self._receive_by_http_client(conn, request, file)
            status, headers, length, will_close = usual
            file.read(end + 4)  # the head, in the buffer already
            try:
                # One bytes object of the body's length, filled from the buffer and then
                # straight from the socket (a copy more costs page faults on big pages).
                body = file.read(length)
            except OSError as exc:
                raise _broken(exc) from exc
        if will_close or len(body) < length:
            conn.close()  # as http.client hands a closing connection to its response
        return status, internals.header_dict(headers), body

    def _receive_by_http_client(
        self, conn: Connection, request: AWSPreparedRequest, file: Any
    ) -> tuple[int, HTTPHeaderDict, bytes]:
        response = conn.response_class(_Opened(file), method=request.method)
        # Closed whatever happens: its file holds the socket open (makefile's reference)
        # until then, which a failed response would otherwise leave to the collector.
        with closing(response):
            try:
                response.begin()
            except (ssl.SSLError, OSError) as exc:
                raise _awaiting_error(exc, request.url, self._read_timeout) from exc
            except HTTPException as exc:
                raise _aborted(exc) from exc
            if response.will_close:
                conn.close()  # as HTTPConnection.getresponse does
            headers = HTTPHeaderDict(response.msg.items())
            _check_lengths(headers, response.chunked)
            return response.status, headers, _read(response)


# The reading buffer's size: a DynamoDB answer's head and a GetItem's body in one read
# (and http.client's line limit, so a head within it never has a line too long).
_RECEIVE_SIZE = 65536
# RFC 9110 token characters: a header name http.client and email parse the same way.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+").fullmatch
# Printable ASCII and tabs: a value http.client sends, and email parses, as it is.
_PLAIN_VALUE = re.compile(r"[\t\x20-\x7e]*").fullmatch
# Printable ASCII, tabs and line ends: a head email's parser splits into lines only at
# CR/LF, as the usual path does.
_PLAIN_HEAD = re.compile(r"[\t\r\n\x20-\x7e]*").fullmatch
# A request target http.client sends unchanged (no control characters, no spaces).
_PLAIN_TARGET = re.compile(r"[\x21-\x7e]+").fullmatch


def _request_head(
    conn: Connection, method: str, target: str, headers: list[tuple[str, Any]], body_length: int
) -> bytes | None:
    """The head http.client's ``request`` writes for a bytes body, or ``None`` if unusual.

    Unusual (so http.client itself writes it, with its checks): a header or target that
    is not plain printable ASCII, a Host or Accept-Encoding header of the caller's, a
    non-ASCII host. The order is http.client's: request line, Host, Accept-Encoding,
    Content-Length where the caller gave none, then the caller's headers.
    """
    host = conn.host
    if method != "POST" or not _PLAIN_TARGET(target) or not host.isascii() or ":" in host:
        return None
    port = conn.port
    lines = [
        f"POST {target} HTTP/1.1",
        f"Host: {host}" if port == conn.default_port else f"Host: {host}:{port}",
        "Accept-Encoding: identity",
    ]
    length_given = False
    for name, value in headers:
        if type(name) is not str or type(value) is not str:
            return None
        if not _TOKEN(name) or not _PLAIN_VALUE(value):
            return None
        lowered = name.lower()
        if lowered in ("host", "accept-encoding"):
            return None
        if lowered == "content-length":
            length_given = True
        lines.append(f"{name}: {value}")
    if not length_given:
        lines.insert(3, f"Content-Length: {body_length}")
    lines.append("\r\n")
    return "\r\n".join(lines).encode("ascii")


def _usual_head(head: bytes) -> tuple[int, list[tuple[str, str]], int, bool] | None:
    """(status, headers, Content-Length, will close) of a head in the usual shape, else None.

    Equal to what http.client's ``begin`` and email's parser make of such a head (the
    name as sent; the value without its leading blanks, as email's compat32 policy keeps
    it); tests/io/test_lean_http.py compares the two on generated heads.
    """
    if not head.isascii():
        return None
    text = head.decode("ascii")
    if not _PLAIN_HEAD(text):
        return None
    status_line, *lines = text.split("\r\n")
    # "HTTP/1.1 200 OK": the version, three digits, then the end or a space and a reason.
    if (
        not status_line.startswith("HTTP/1.1 ")
        or status_line[12:13] not in ("", " ")
        or "\r" in status_line
        or "\n" in status_line
    ):
        return None
    code = status_line[9:12]
    if not code.isdigit() or len(lines) > 100:
        return None
    status = int(code)
    if status < 200 or status in (204, 304):
        return None
    headers = []
    length: str | None = None
    connection: str | None = None
    for line in lines:
        name, colon, value = line.partition(":")
        if not colon or not _TOKEN(name) or "\r" in value or "\n" in value:
            return None
        value = value.lstrip(" \t")
        lowered = name.lower()
        if lowered == "content-length":
            if length is not None:
                return None  # several: urllib3's rule (`_check_lengths`) decides
            length = value
        elif lowered == "connection":
            if connection is None:
                connection = value
        elif lowered == "transfer-encoding":
            return None
        headers.append((name, value))
    if length is None or not length.isdigit():
        return None
    will_close = connection is not None and "close" in connection.lower()
    return status, headers, int(length), will_close


def _check_lengths(headers: HTTPHeaderDict, chunked: bool) -> None:
    """Raise as urllib3's response does on Content-Length values that disagree.

    urllib3 reads every value (``Content-Length: 42, 42`` and repeated headers, which
    its header map joins with ", ") and refuses a body whose lengths differ
    (``HTTPResponse._init_length``); http.client itself takes the first header as it is.
    """
    value = headers.get("content-length")
    if value is None or chunked:
        return
    try:
        lengths = {int(part) for part in value.split(",")}
    except ValueError:
        return
    if len(lengths) > 1:
        raise urllib3_errors.InvalidHeader(
            f"Content-Length contained multiple unmatching values ({value})"
        )


class _Opened:
    """A socket stand-in whose ``makefile`` is a file already open on the socket."""

    def __init__(self, file: Any) -> None:
        self._file = file

    def makefile(self, mode: str) -> Any:
        return self._file


def _close_origins(origins: dict[tuple[str, str, int], _Origin]) -> None:
    for origin in origins.values():
        origin.close()
    origins.clear()


def _warn_unverified(host: str) -> None:
    # urllib3's warning on every request over an unverified TLS connection (verify=False).
    warnings.warn(
        (
            f"Unverified HTTPS request is being made to host '{host}'. "
            "Adding certificate verification is strongly advised. See: "
            "https://urllib3.readthedocs.io/en/latest/advanced-usage.html"
            "#tls-warnings"
        ),
        InsecureRequestWarning,
        stacklevel=2,
    )


def _read(response: HTTPResponse) -> bytes:
    """The whole body, failures mapped as urllib3's response maps them (_error_catcher)."""
    try:
        return response.read()
    except IncompleteRead as exc:
        if not response.chunked:
            # urllib3 reads in blocks and, told not to enforce the length, keeps a short
            # body; http.client's one read of the whole length raises with what came.
            return exc.partial
        raise urllib3_errors.ProtocolError(f"Connection broken: {exc!r}", exc) from exc
    except (HTTPException, OSError) as exc:
        raise _broken(exc) from exc


def _broken(exc: BaseException) -> Exception:
    """urllib3's mapping of a failure while reading a body (its ``_error_catcher``)."""
    if isinstance(exc, TimeoutError):
        return urllib3_errors.ReadTimeoutError(None, None, "Read timed out.")  # type: ignore[arg-type]
    if isinstance(exc, ssl.SSLError):
        return urllib3_errors.SSLError(exc)
    return urllib3_errors.ProtocolError(f"Connection broken: {exc!r}", exc)


def _read_timeout(url: str, timeout: float) -> urllib3_errors.ReadTimeoutError:
    return urllib3_errors.ReadTimeoutError(
        None,  # type: ignore[arg-type]
        url,
        f"Read timed out. (read timeout={timeout})",
    )


def _awaiting_error(exc: OSError, url: str, read_timeout: float) -> Exception:
    """urllib3's mapping of a failure while awaiting a response: a timeout, else aborted."""
    if isinstance(exc, TimeoutError) or exc.errno in _BLOCKING_ERRNOS:
        return _read_timeout(url, read_timeout)
    return _aborted(exc)


def _aborted(exc: BaseException) -> Exception:
    # urlopen's mapping of what _make_request let through.
    if isinstance(exc, (ssl.SSLError, CertificateError)):
        return urllib3_errors.SSLError(exc)
    return urllib3_errors.ProtocolError("Connection aborted.", exc)


def _botocore_error(exc: Exception, request: AWSPreparedRequest) -> Exception:
    """The exception `URLLib3Session.send` raises for urllib3's ``exc``, in its order."""
    url = request.url
    if isinstance(exc, urllib3_errors.SSLError):
        return SSLError(endpoint_url=url, error=exc)
    if isinstance(exc, (urllib3_errors.NewConnectionError, socket.gaierror)):
        return EndpointConnectionError(endpoint_url=url, error=exc)
    if isinstance(exc, urllib3_errors.ConnectTimeoutError):
        return ConnectTimeoutError(endpoint_url=url, error=exc)
    if isinstance(exc, urllib3_errors.ReadTimeoutError):
        return ReadTimeoutError(endpoint_url=url, error=exc)
    if isinstance(exc, urllib3_errors.ProtocolError):
        return ConnectionClosedError(error=exc, request=request, endpoint_url=url)
    return HTTPClientError(error=exc)
