"""A loopback HTTP server that replays recorded DynamoDB answers after a fixed delay.

Used by ``bench_transport.py --replay``: the answers are the bytes a real server sent
(one per ``X-Amz-Target``), so every client parses exactly what it parsed before; the
delay stands for the service's own latency, without a server process competing with the
client for the machine's cores (DynamoDB Local's JVM does, on a 2-core host).

Run: ``python3 benchmarks/replay_server.py ANSWERS_FILE DELAY_MS``; it prints its port on
the first line of standard output once it listens on 127.0.0.1, and serves until killed.
ANSWERS_FILE is JSON: ``{target: [status, {header: value}, body as latin-1 text]}``.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from pathlib import Path

# Hop-by-hop and framing headers: this server frames each answer itself.
_DROPPED = {"content-length", "transfer-encoding", "connection", "keep-alive"}


def encode_answer(status: int, headers: dict[str, str], body: bytes) -> bytes:
    """One whole HTTP/1.1 response: status line, the recorded headers, Content-Length, body."""
    lines = [f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}"]
    lines += [f"{name}: {value}" for name, value in headers.items() if name.lower() not in _DROPPED]
    lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def _serve(conn: socket.socket, answers: dict[bytes, bytes], delay: float) -> None:
    buffer = b""
    with conn:
        while True:
            while b"\r\n\r\n" not in buffer:
                data = conn.recv(65536)
                if not data:
                    return
                buffer += data
            head, _, rest = buffer.partition(b"\r\n\r\n")
            headers = {}
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                headers[name.strip().lower()] = value.strip()
            length = int(headers.get(b"content-length", b"0"))
            while len(rest) < length:
                data = conn.recv(65536)
                if not data:
                    return
                rest += data
            buffer = rest[length:]
            if delay:
                time.sleep(delay)
            conn.sendall(answers[headers[b"x-amz-target"].split(b".")[-1]])


def main(argv: list[str]) -> None:
    """Load the answers, listen on a free loopback port, print it, serve forever."""
    recorded = json.loads(Path(argv[0]).read_text())
    delay = float(argv[1]) / 1000
    answers = {
        target.encode(): encode_answer(status, headers, body.encode("latin-1"))
        for target, (status, headers, body) in recorded.items()
    }
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    print(listener.getsockname()[1], flush=True)
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=_serve, args=(conn, answers, delay), daemon=True).start()


if __name__ == "__main__":
    main(sys.argv[1:])
