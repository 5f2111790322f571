"""The lean transport's HTTP pool against botocore's URLLib3Session, on loopback servers.

Every scenario runs both sessions against the same small server (sockets in threads,
bound to 127.0.0.1) and compares what each returns or raises: the exception class and
message botocore's session gives, the bytes on the wire, and end to end the number of
attempts the client's retry handler makes. Where the pool does not take a
configuration on (proxies, client certificates, other sessions), the transport keeps
botocore's session, which is checked too.
"""

from __future__ import annotations

import datetime
import io
import ipaddress
import socket
import ssl
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from functools import partial
from http.client import HTTPResponse
from pathlib import Path
from typing import Any
from unittest.mock import patch

import boto3
import pytest
from botocore.awsrequest import AWSPreparedRequest, AWSRequest
from botocore.client import BaseClient
from botocore.config import Config
from botocore.exceptions import (
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
    SSLError,
)
from botocore.httpsession import URLLib3Session
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from urllib3.exceptions import InsecureRequestWarning

from singletable.io import lean_http
from singletable.io.lean import LeanTransport
from singletable.io.lean_http import LeanHTTPSession, http_session

Handler = Callable[[socket.socket, "Server"], None]
BODY = b'{"TableName":"t","Key":{"pk":{"S":"a"}}}' + b" " * 2000
QUICK = 0.5  # seconds: the connect and read timeouts of the scenarios that time out


# -- loopback servers ---------------------------------------------------------------------


class Server:
    """Accepts on 127.0.0.1 and hands each connection to ``handler`` in its own thread."""

    def __init__(
        self, handler: Handler, tls: ssl.SSLContext | None = None, address: str = "127.0.0.1"
    ) -> None:
        self.handler = handler
        self.tls = tls
        self.listener = socket.create_server((address, 0))
        self.port = self.listener.getsockname()[1]
        self.requests: list[bytes] = []
        self.connections = 0
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.threads: list[threading.Thread] = []
        self.open: list[socket.socket] = []

    def url(self, scheme: str = "http", host: str = "127.0.0.1") -> str:
        return f"{scheme}://{host}:{self.port}/"

    def serve(self) -> None:
        thread = threading.Thread(target=self._accept, daemon=True)
        thread.start()
        self.threads.append(thread)

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                self.connections += 1
                self.open.append(conn)
            thread = threading.Thread(target=self._handle, args=(conn,), daemon=True)
            thread.start()
            self.threads.append(thread)

    def _handle(self, conn: socket.socket) -> None:
        try:
            if self.tls is not None:
                try:
                    conn = self.tls.wrap_socket(conn, server_side=True)
                except (ssl.SSLError, OSError):
                    return  # the client refused the certificate
            self.handler(conn, self)
        except OSError:
            pass
        finally:
            conn.close()

    def read_request(self, conn: socket.socket) -> bytes | None:
        """One request's bytes (head and Content-Length body), or ``None`` at end of stream."""
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(body) < length:
            body += conn.recv(65536)
        with self.lock:
            self.requests.append(head + b"\r\n\r\n" + body)
        return head + b"\r\n\r\n" + body

    def close(self) -> None:
        self.stop.set()
        with suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept
        self.listener.close()
        for conn in self.open:
            with suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)  # wakes a handler blocked on recv
        for thread in self.threads:
            thread.join(5)


@contextmanager
def serving(
    handler: Handler, tls: ssl.SSLContext | None = None, address: str = "127.0.0.1"
) -> Iterator[Server]:
    server = Server(handler, tls, address)
    server.serve()
    try:
        yield server
    finally:
        server.close()


def answer(status: int = 200, body: bytes = b'{"Item":{}}', extra: bytes = b"") -> bytes:
    return (
        f"HTTP/1.1 {status} X\r\nContent-Type: application/x-amz-json-1.0\r\n"
        f"x-amzn-RequestId: r1\r\nContent-Length: {len(body)}\r\n".encode()
        + extra
        + b"\r\n"
        + body
    )


def keep_alive(conn: socket.socket, server: Server) -> None:
    while server.read_request(conn) is not None:
        conn.sendall(answer())


def close_after_request(conn: socket.socket, server: Server) -> None:
    server.read_request(conn)


def never_answer(conn: socket.socket, server: Server) -> None:
    server.read_request(conn)
    server.stop.wait(10)


def short_body(conn: socket.socket, server: Server) -> None:
    server.read_request(conn)
    conn.sendall(answer(body=b'{"Item":{}}')[:-4].replace(b"Length: 11", b"Length: 50"))


def broken_chunks(conn: socket.socket, server: Server) -> None:
    server.read_request(conn)
    conn.sendall(b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n20\r\n{"Item"')


def garbage(conn: socket.socket, server: Server) -> None:
    server.read_request(conn)
    conn.sendall(b"this is not HTTP\r\n\r\n")


def duplicate_headers(conn: socket.socket, server: Server) -> None:
    while server.read_request(conn) is not None:
        conn.sendall(answer(extra=b"X-Twice: a\r\nx-twice: b\r\n"))


def server_error(conn: socket.socket, server: Server) -> None:
    while server.read_request(conn) is not None:
        conn.sendall(answer(500, b'{"__type":"InternalServerError","message":"boom"}'))


def throttled(conn: socket.socket, server: Server) -> None:
    body = b'{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"slow"}'
    while server.read_request(conn) is not None:
        conn.sendall(answer(400, body))


# -- the two sessions -----------------------------------------------------------------------


@contextmanager
def sessions(**kwargs: Any) -> Iterator[tuple[URLLib3Session, LeanHTTPSession]]:
    """botocore's session as a client builds it, and the lean pool over the same settings."""
    kwargs.setdefault("timeout", (QUICK, QUICK))
    botocores = URLLib3Session(**kwargs)
    own = URLLib3Session(**kwargs)  # the pool's, held here as a client holds its session
    lean = http_session(own)
    assert isinstance(lean, LeanHTTPSession)
    try:
        yield botocores, lean
    finally:
        botocores.close()
        lean.close()
        own.close()


def request(url: str) -> AWSPreparedRequest:
    headers = {
        "X-Amz-Target": "DynamoDB_20120810.GetItem",
        "Content-Type": "application/x-amz-json-1.0",
        "User-Agent": "test",
    }
    return AWSRequest(method="POST", url=url, headers=headers, data=BODY).prepare()


def outcome(session: Any, url: str) -> tuple[Any, ...]:
    """What a send returns (status, headers, body) or raises (class, message, the URL as URL)."""
    try:
        response = session.send(request(url))
    except Exception as exc:
        return type(exc), str(exc).replace(url, "URL")
    headers = {k.lower(): v for k, v in response.headers.items() if k.lower() != "date"}
    return response.status_code, headers, response.content


def compare(handler: Handler, expected: type[Exception] | int, sends: int = 1) -> None:
    results = []
    with sessions() as pair:
        for session in pair:
            with serving(handler) as server:
                results.append([outcome(session, server.url()) for _ in range(sends)])
                session.close()
    assert results[0] == results[1]
    assert results[0][-1][0] == expected, results[0]


def test_a_keep_alive_server_answers_both_alike_on_one_connection() -> None:
    results = []
    with sessions() as pair:
        for session in pair:
            with serving(keep_alive) as server:
                results.append([outcome(session, server.url()) for _ in range(3)])
                session.close()
                assert server.connections == 1
    assert results[0] == results[1]
    assert results[0][0][0] == 200


def test_both_send_the_same_bytes() -> None:
    with sessions() as pair, serving(keep_alive) as server:
        for session in pair:
            session.send(request(server.url()))
            session.close()
    assert len(server.requests) == 2
    assert server.requests[0] == server.requests[1]


def test_duplicate_response_headers_are_joined_as_urllib3_joins_them() -> None:
    compare(duplicate_headers, 200)


def test_connection_refused() -> None:
    with socket.socket() as bound:  # bound, not listening: connecting is refused
        bound.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{bound.getsockname()[1]}/"
        with sessions() as (botocores, lean):
            expected = outcome(botocores, url)
            assert outcome(lean, url) == expected
    assert expected[0] is EndpointConnectionError


def test_connect_timeout() -> None:
    # A listener with a full accept queue: the kernel drops the next SYN, so connecting
    # times out after the client's connect_timeout.
    listener = socket.create_server(("127.0.0.1", 0), backlog=0)
    port = listener.getsockname()[1]
    filler = socket.create_connection(("127.0.0.1", port))
    try:
        url = f"http://127.0.0.1:{port}/"
        with sessions() as pair:
            results = [outcome(session, url) for session in pair]
    finally:
        filler.close()
        listener.close()
    assert results[0] == results[1]
    assert results[0][0] is ConnectTimeoutError


def test_read_timeout() -> None:
    compare(never_answer, ReadTimeoutError)


def test_server_closing_without_an_answer() -> None:
    compare(close_after_request, ConnectionClosedError)


def test_a_short_body_of_known_length_is_kept_as_botocore_keeps_it() -> None:
    compare(short_body, 200)


def test_a_broken_chunked_body() -> None:
    compare(broken_chunks, ConnectionClosedError)


def test_an_answer_that_is_not_http() -> None:
    compare(garbage, ConnectionClosedError)


def closing_idle(conn: socket.socket, server: Server) -> None:
    # Answers one request on a keep-alive connection, then closes it while it is idle.
    if server.read_request(conn) is not None:
        conn.sendall(answer())


def test_a_stale_keep_alive_connection_is_replaced_transparently() -> None:
    with sessions() as pair:
        for session in pair:
            with serving(closing_idle) as server:
                first = outcome(session, server.url())
                wait_until(lambda: len(server.threads) == 2 and not server.threads[1].is_alive())
                second = outcome(session, server.url())
                session.close()
                assert first[0] == second[0] == 200
                assert server.connections == 2


def wait_until(condition: Callable[[], bool]) -> None:
    for _ in range(500):
        if condition():
            return
        threading.Event().wait(0.01)
    raise AssertionError("condition not reached")


# -- TLS ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost: (cert, key) PEM files."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    folder = tmp_path_factory.mktemp("tls")
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def tls_outcomes(
    certificate: tuple[Path, Path], verify: Any, host: str, address: str = "127.0.0.1"
) -> list[tuple[Any, ...]]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    results = []
    with sessions(verify=verify) as pair:
        for session in pair:
            with (
                serving(keep_alive, context, address) as server,
                warnings.catch_warnings(record=True) as warned,
            ):
                warnings.simplefilter("always")
                results.append(outcome(session, server.url("https", host)))
                session.close()
                # What urllib3 warns about (InsecureRequestWarning when unverified).
                results.append(tuple((w.category, str(w.message)) for w in warned))
    return results


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_tls_verified_against_the_given_ca(certificate: tuple[Path, Path], host: str) -> None:
    results = tls_outcomes(certificate, str(certificate[0]), host)
    assert results[:2] == results[2:]
    assert results[0][0] == 200


def test_tls_refused_by_the_default_bundle(certificate: tuple[Path, Path]) -> None:
    results = tls_outcomes(certificate, True, "127.0.0.1")
    assert results[:2] == results[2:]
    assert results[0][0] is SSLError


def test_tls_unverified(certificate: tuple[Path, Path]) -> None:
    results = tls_outcomes(certificate, False, "127.0.0.1")
    assert results[:2] == results[2:]
    assert results[0][0] == 200
    assert [category for category, _ in results[1]] == [InsecureRequestWarning]


def test_tls_hostname_mismatch(certificate: tuple[Path, Path]) -> None:
    # The certificate names localhost and 127.0.0.1, not 127.0.0.2 (loopback too).
    results = tls_outcomes(certificate, str(certificate[0]), "127.0.0.2", "127.0.0.2")
    assert results[:2] == results[2:]
    assert results[0][0] is SSLError


# -- end to end: the retry handler sees the same ------------------------------------------------


def make_client(endpoint: str, **config: Any) -> BaseClient:
    config.setdefault("retries", {"mode": "standard", "max_attempts": 3})
    config.setdefault("connect_timeout", QUICK)
    config.setdefault("read_timeout", QUICK)
    client: BaseClient = boto3.Session().client(
        "dynamodb",
        region_name="us-east-1",
        endpoint_url=endpoint,
        aws_access_key_id="k",
        aws_secret_access_key="s",
        config=Config(**config),
    )
    return client


def attempts(handler: Handler, transport: str) -> tuple[str, int]:
    """The exception a GetItem ends with (its class name: each client has its own
    modelled classes) and the number of requests the server saw."""
    with serving(handler) as server:
        client = make_client(server.url())
        lean = LeanTransport(client, sleep=lambda _: None)
        assert isinstance(internal_session(lean), LeanHTTPSession)
        params = {"TableName": "t", "Key": {"pk": {"S": "a"}}}
        try:
            with patch("time.sleep"):  # botocore's backoff; the servers wait on events
                if transport == "lean":
                    lean.send("get_item", params)
                else:
                    client.get_item(**params)  # type: ignore[attr-defined]
        except Exception as exc:
            return type(exc).__name__, len(server.requests)
        finally:
            internal_session(lean).close()
            client.close()
    raise AssertionError("the call succeeded")


def internal_session(transport: LeanTransport) -> Any:
    return transport._http


@pytest.mark.parametrize("handler", [server_error, throttled, close_after_request, never_answer])
def test_the_retry_handler_retries_the_same_failures_as_often(handler: Handler) -> None:
    botocores = attempts(handler, "boto3")
    assert botocores[1] == 4  # max_attempts counts the retries after the first attempt
    assert attempts(handler, "lean") == botocores


def sends_until_refused(url: str, transport: str) -> int:
    """How many times a GetItem is sent to ``url``, where nothing listens."""
    client = make_client(url)
    sends: list[str] = []
    client.meta.events.register("before-send.dynamodb", lambda **_: sends.append("x"))
    lean = LeanTransport(client, sleep=lambda _: None)
    params = {"TableName": "t", "Key": {"pk": {"S": "a"}}}
    send = partial(lean.send, "get_item", params) if transport == "lean" else None
    with patch("time.sleep"), pytest.raises(EndpointConnectionError):
        send() if send is not None else client.get_item(**params)  # type: ignore[attr-defined]
    client.close()
    return len(sends)


def test_a_refused_connection_is_retried_as_often() -> None:
    # Nothing listens, so the attempts are counted at before-send, which both paths emit.
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{bound.getsockname()[1]}/"
        assert sends_until_refused(url, "boto3") == sends_until_refused(url, "lean") == 4


# -- which session a transport sends with -------------------------------------------------------


def session_of(client: BaseClient) -> Any:
    return internal_session(LeanTransport(client))


def test_a_plain_client_takes_the_pool() -> None:
    assert isinstance(session_of(make_client("http://127.0.0.1:9/")), LeanHTTPSession)


@pytest.mark.parametrize(
    "config",
    [
        {"proxies": {"https": "http://127.0.0.1:9"}},
        {"proxies": {"http": "127.0.0.1:9"}},
        {"client_cert": "/nonexistent/cert.pem"},
    ],
)
def test_proxies_and_client_certificates_keep_botocores_session(config: dict[str, Any]) -> None:
    session = session_of(make_client("https://dynamodb.us-east-1.amazonaws.com", **config))
    assert type(session) is URLLib3Session


def test_a_proxy_from_the_environment_keeps_botocores_session(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    session = session_of(make_client("https://dynamodb.us-east-1.amazonaws.com"))
    assert type(session) is URLLib3Session
    # NO_PROXY naming the endpoint: botocore resolves no proxy, and the pool is taken.
    monkeypatch.setenv("NO_PROXY", "dynamodb.us-east-1.amazonaws.com")
    session = session_of(make_client("https://dynamodb.us-east-1.amazonaws.com"))
    assert isinstance(session, LeanHTTPSession)


def test_transports_over_one_client_share_one_pool() -> None:
    client = make_client("http://127.0.0.1:9/")
    assert session_of(client) is session_of(client)
    assert session_of(client) is not session_of(make_client("http://127.0.0.1:9/"))


def test_another_session_class_is_kept() -> None:
    class Custom(URLLib3Session):
        pass

    custom = Custom()
    assert http_session(custom) is custom


def test_requests_outside_the_lean_shape_go_to_botocores_session() -> None:
    with sessions() as (_, lean), serving(keep_alive) as server:
        expect = request(server.url())
        expect.headers["Expect"] = "100-continue"
        canned: Any = "botocore"
        with patch.object(URLLib3Session, "send", return_value=canned) as sent:
            assert lean.send(expect) is canned
            no_agent = request(server.url())
            del no_agent.headers["User-Agent"]
            assert lean.send(no_agent) is canned
            own_timeout: Any = request(server.url())
            # urllib3's per-request Timeout (a prepared request of botocore 1.43.11 has
            # no context of its own)
            own_timeout.context = {"read_timeout": 1}
            assert lean.send(own_timeout) is canned
            assert sent.call_count == 3
            assert lean.send(request(server.url())).status_code == 200
            assert sent.call_count == 3
        lean.close()


# -- many threads, one pool ---------------------------------------------------------------------


def echo(conn: socket.socket, server: Server) -> None:
    while (data := server.read_request(conn)) is not None:
        conn.sendall(answer(body=data.partition(b"\r\n\r\n")[2]))


def test_threads_share_the_pool_and_each_gets_its_own_answer() -> None:
    failures: list[str] = []
    with sessions(max_pool_connections=2) as (_, lean), serving(echo) as server:

        def work(n: int) -> None:
            for i in range(20):
                body = f'{{"n":{n},"i":{i}}}'.encode()
                sent = AWSRequest(
                    method="POST", url=server.url(), headers={"User-Agent": "t"}, data=body
                ).prepare()
                if lean.send(sent).content != body:
                    failures.append(f"{n}/{i}")

        threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        idle = [len(origin.idle) for origin in lean._origins.values()]
        lean.close()
    assert failures == []
    assert len(server.requests) == 160
    assert idle
    assert max(idle) <= 2


# -- the usual exchange without http.client, against http.client on generated heads -------------

# Header names and values, mostly usual, with what http.client and email parse their own
# way: spaces before the colon, folded lines, control characters, non-ASCII bytes, no colon.
_names = st.one_of(
    st.sampled_from(
        ["Content-Type", "x-amzn-RequestId", "x-amz-crc32", "Connection", "Content-Length", "Date"]
    ),
    st.text(alphabet="abcXYZ-_!#.~09", min_size=1, max_size=8),
    st.text(alphabet="ab :\t\x0b\x7f\xe9", min_size=0, max_size=4),
)
_values = st.one_of(
    st.text(alphabet="abc 01\t;,=close", max_size=12),
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=255), max_size=6),
    st.sampled_from(["close", "keep-alive", " 12", "12 ", "+3", "-1", "0", "3", "chunked"]),
)
_status_lines = st.one_of(
    st.sampled_from(["HTTP/1.1 200 OK", "HTTP/1.1 400 Bad", "HTTP/1.1 500", "HTTP/1.1 200 "]),
    st.sampled_from(["HTTP/1.0 200 OK", "HTTP/1.1 204 No", "HTTP/1.1 304 X", "HTTP/1.1 100 C"]),
    st.sampled_from(["HTTP/1.1  200 OK", "HTTP/1.1 0200", "HTTP/2 200 OK", "HTTP/1.1 103 E"]),
    st.builds(lambda code: f"HTTP/1.1 {code} R", st.integers(0, 1000)),
)


@st.composite
def response_heads(draw: st.DrawFn) -> tuple[bytes, bytes]:
    """A response head (with its blank line) and body bytes, usual or not."""
    lines = [draw(_status_lines)]
    for name, value in draw(st.lists(st.tuples(_names, _values), max_size=6)):
        lines.append(f"{name}:{draw(st.sampled_from(['', ' ', '  ', chr(9)]))}{value}")
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from([" folded", "\tfolded", "no colon"])))
    body = draw(st.binary(max_size=40))
    if draw(st.booleans()):
        length = draw(st.sampled_from([len(body), len(body) + 5, max(len(body) - 3, 0)]))
        lines.append(f"Content-Length: {length}")
    head = "\r\n".join(lines) + "\r\n\r\n"
    return head.encode("latin-1"), body


class _Bytes:
    """A socket whose stream is ``data`` (http.client's response reads ``makefile``)."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def makefile(self, mode: str) -> Any:
        return io.BytesIO(self.data)


@settings(max_examples=500, deadline=None)
@given(response_heads())
def test_the_usual_head_is_read_as_http_client_reads_it(case: tuple[bytes, bytes]) -> None:
    head, body = case
    usual = lean_http._usual_head(head[:-4])
    response = HTTPResponse(_Bytes(head + body), method="POST")  # type: ignore[arg-type]
    try:
        response.begin()
    except Exception:
        assert usual is None  # what http.client refuses is never on the usual path
        return
    if usual is None:
        return
    status, headers, length, will_close = usual
    assert (status, headers) == (response.status, response.msg.items())
    assert (length, will_close) == (response.length, response.will_close)
    assert not response.chunked


def _served(head: bytes, body: bytes) -> Handler:
    def handler(conn: socket.socket, server: Server) -> None:
        server.read_request(conn)
        conn.sendall(head + body)

    return handler


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(response_heads())
def test_both_sessions_read_generated_answers_alike(case: tuple[bytes, bytes]) -> None:
    # The server closes after its answer, so a body shorter than its length ends at once.
    results = []
    with sessions() as pair:
        for session in pair:
            with serving(_served(*case)) as server:
                results.append(outcome(session, server.url()))
                session.close()
    assert results[0] == results[1]


_header_values = st.one_of(
    st.text(alphabet="abc ;=/-_.0", max_size=10),
    st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=255), max_size=5),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(
        st.one_of(
            st.sampled_from(["X-Amz-Date", "Host", "Accept-Encoding", "Content-Type", "A"]),
            st.text(alphabet="abXY-_!~ :", min_size=1, max_size=6),
        ),
        _header_values,
        max_size=4,
    )
)
def test_both_sessions_send_the_same_bytes_for_generated_headers(extra: dict[str, str]) -> None:
    def send(session: Any, url: str) -> tuple[Any, ...]:
        prepared = request(url)
        for name, value in extra.items():
            prepared.headers[name] = value
        try:
            return ("sent", session.send(prepared).status_code)
        except Exception as exc:
            return type(exc), str(exc).replace(url, "URL")

    results = []
    with sessions() as pair, serving(keep_alive) as server:
        for session in pair:
            results.append(send(session, server.url()))
            session.close()
    assert results[0] == results[1]
    # What reached the server (nothing, where http.client refused a header) is the same.
    assert len(set(server.requests)) <= 1


def test_usual_answers_are_read_without_http_client_and_others_with_it() -> None:
    with (
        sessions() as (_, lean),
        patch.object(
            LeanHTTPSession,
            "_receive_by_http_client",
            autospec=True,
            side_effect=LeanHTTPSession._receive_by_http_client,
        ) as by_http_client,
    ):
        with serving(keep_alive) as server:
            for _ in range(3):
                assert lean.send(request(server.url())).content == b'{"Item":{}}'
            assert by_http_client.call_count == 0
            assert server.connections == 1
        chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        with serving(_served(chunked, b"")) as other, suppress(Exception):
            lean.send(request(other.url()))
        assert by_http_client.call_count == 1
        lean.close()
