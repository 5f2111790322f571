"""Opaque pagination cursors, bound to the query that made them and optionally signed.

A cursor is ``base64url(JSON)`` holding a format version, a fingerprint of each part of
the query's identity (table, index, partition key, sort-key condition, entity or
collection, direction, filter, ...) and DynamoDB's ``ExclusiveStartKey``. Resuming
another query with it, or a cursor that was edited, is refused with `CursorError` naming
what differs, rather than silently reading the wrong slice. With a secret, the payload
carries an HMAC-SHA256 signature.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from typing import Any

from singletable.errors import CursorError
from singletable.types import Item

CURSOR_VERSION = 2

#: How errors name each part of a query's identity.
_PART_NAMES = {
    "kind": "kind of read (entity query, collection query or scan)",
    "table": "table",
    "index": "index",
    "entity": "entity",
    "collection": "collection",
    "partition": "partition",
    "sk": "sort-key condition",
    "prefix": "begins_with prefix",
    "forward": "direction",
    "projection": "projection",
    "filter": "filter",
    "segment": "scan segment",
}


def fingerprint(description: dict[str, Any]) -> dict[str, str]:
    """A short, stable hash of each part of a query's identity."""
    result: dict[str, str] = {}
    for part, value in description.items():
        canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
        result[part] = hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:12]
    return result


def _encode_key(key: Item) -> dict[str, Any]:
    # Binary key values are not JSON: carry them as base64 text with a marker type.
    result: dict[str, Any] = {}
    for name, av in key.items():
        if "B" in av:
            result[name] = {"B64": base64.b64encode(bytes(av["B"])).decode("ascii")}
        else:
            result[name] = av
    return result


def _decode_key(raw: Any) -> Item:
    if not isinstance(raw, dict):
        raise CursorError("cursor is malformed: the start key is not an object")
    result: Item = {}
    for name, av in raw.items():
        if not isinstance(name, str) or not isinstance(av, dict) or len(av) != 1:
            raise CursorError("cursor is malformed: bad start key attribute")
        ((kind, value),) = av.items()
        if kind == "B64" and isinstance(value, str):
            try:
                result[name] = {"B": base64.b64decode(value, validate=True)}
            except binascii.Error:
                raise CursorError("cursor is malformed: bad binary start key value") from None
        elif kind in ("S", "N") and isinstance(value, str):
            result[name] = {kind: value}
        else:
            raise CursorError("cursor is malformed: bad start key attribute")
    return result


def make_cursor(
    query_fingerprint: dict[str, str], start_key: Item, *, secret: bytes | None = None
) -> str:
    """A cursor string that resumes the query after ``start_key``."""
    body = {"v": CURSOR_VERSION, "q": query_fingerprint, "k": _encode_key(start_key)}
    payload = json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8")
    if secret is not None:
        signature = hmac.new(secret, payload, hashlib.sha256).hexdigest()
        payload = json.dumps(
            {"p": payload.decode("utf-8"), "s": signature}, separators=(",", ":")
        ).encode("utf-8")
    return base64.urlsafe_b64encode(payload).decode("ascii").rstrip("=")


def read_cursor(
    cursor: str, query_fingerprint: dict[str, str], *, secret: bytes | None = None
) -> Item:
    """The ``ExclusiveStartKey`` in ``cursor``; `CursorError` unless it belongs to this query."""
    if not isinstance(cursor, str) or not cursor:
        raise CursorError("cursor must be a non-empty string")
    try:
        payload = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        body = json.loads(payload)
    except (binascii.Error, ValueError):
        raise CursorError("cursor is malformed (not a singletable cursor)") from None
    if not isinstance(body, dict):
        raise CursorError("cursor is malformed (not a singletable cursor)")
    if secret is not None:
        if set(body) != {"p", "s"} or not isinstance(body["p"], str):
            raise CursorError("cursor is not signed, but this query requires a signed cursor")
        expected = hmac.new(secret, body["p"].encode("utf-8"), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, str(body["s"])):
            raise CursorError(
                "cursor signature does not match: it was altered or signed with another secret"
            )
        try:
            body = json.loads(body["p"])
        except ValueError:
            raise CursorError("cursor is malformed") from None
    elif "s" in body:
        raise CursorError("cursor is signed; pass the secret it was signed with")
    if not isinstance(body, dict) or body.get("v") != CURSOR_VERSION:
        raise CursorError(
            f"cursor format version {body.get('v') if isinstance(body, dict) else '?'} is not "
            f"supported (expected {CURSOR_VERSION})"
        )
    made_for = body.get("q")
    if not isinstance(made_for, dict):
        raise CursorError("cursor is malformed: no query fingerprint")
    if made_for != query_fingerprint:
        differs = [
            _PART_NAMES.get(part, part)
            for part in dict.fromkeys([*query_fingerprint, *made_for])
            if made_for.get(part) != query_fingerprint.get(part)
        ]
        raise CursorError(
            f"cursor belongs to another query (a different {', '.join(differs)}); "
            "resume a query only with a cursor it made, or start it without one"
        )
    return _decode_key(body.get("k"))
