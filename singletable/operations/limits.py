"""Request-wide limits checked on every call before it is sent.

DynamoDB stores text as UTF-8, which cannot encode a lone surrogate (a code point in
U+D800..U+DFFF that is not half of a pair; Python strings can hold one, e.g. from a
bad ``surrogateescape`` decode). Such a string is sent as it is by
boto3 and then fails inside the client (moto raises a raw ``UnicodeEncodeError``) or is
stored corrupted (DynamoDB Local). Every request passes through `check_request_text`
(`Call` runs it), whatever built it: items, keys, conditions, filters, update values,
map keys, cursors.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from singletable.errors import TextEncodeError

_SURROGATE = re.compile("[\ud800-\udfff]")
_EXPRESSIONS = (
    "KeyConditionExpression",
    "FilterExpression",
    "ConditionExpression",
    "UpdateExpression",
    "ProjectionExpression",
)


def _not_text(value: object) -> None:
    return None  # bytes (binary attributes) hold no text


def check_request_text(action: str, params: Mapping[str, Any]) -> None:
    """Refuse a request holding a string that UTF-8 cannot encode.

    The common case (no such string) costs one C-level JSON dump of the request.

    Raises:
        TextEncodeError: a string (value, map key or attribute name, at any depth)
            holds a lone surrogate; the message names where in the request it is and,
            for an expression value, the expression that uses it.
    """
    text = json.dumps(params, ensure_ascii=False, default=_not_text, check_circular=False)
    if text.isascii() or not _SURROGATE.search(text):
        return
    for path, value in _strings(params, ()):
        match = _SURROGATE.search(value)
        if match is not None:
            raise TextEncodeError(
                f"{action}: {_describe(path, params)} holds the lone surrogate "
                f"U+{ord(match.group()):04X} at index {match.start()}; DynamoDB strings must "
                "be valid UTF-8, which cannot encode one (fix the text, e.g. decode its "
                "bytes with errors='replace')",
                where=_path_text(path),
            )


def _strings(
    value: Any, path: tuple[str | int, ...]
) -> Iterator[tuple[tuple[str | int, ...], str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, element in value.items():
            if isinstance(key, str):
                yield (*path, key), key  # a map key (or attribute name) is text too
            yield from _strings(element, (*path, key))
    elif isinstance(value, (list, tuple, set, frozenset)):
        for i, element in enumerate(value):
            yield from _strings(element, (*path, i))


def _path_text(path: tuple[str | int, ...]) -> str:
    return "".join(
        f"[{step!r}]" if i or isinstance(step, int) else step for i, step in enumerate(path)
    )


def _describe(path: tuple[str | int, ...], params: Mapping[str, Any]) -> str:
    where = _path_text(path)
    if len(path) >= 2 and path[0] == "ExpressionAttributeValues":
        placeholder = str(path[1])
        names = params.get("ExpressionAttributeNames") or {}
        for expression in _EXPRESSIONS:
            text = params.get(expression)
            if isinstance(text, str) and re.search(re.escape(placeholder) + r"\b", text):
                readable = re.sub(r"#\w+", lambda m: str(names.get(m.group(), m.group())), text)
                return f"{where} (in {expression} {readable[:200]!r})"
    return where
