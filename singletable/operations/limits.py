"""Request-wide limits checked on every call before it is sent.

DynamoDB refuses a whole request whose expression (key condition, filter, condition,
update, projection) is longer than 4 KB of UTF-8, or holds more than 300 operators
(`check_request_expressions`).

DynamoDB stores text as UTF-8, which cannot encode a lone surrogate (a code point in
U+D800..U+DFFF that is not half of a pair; Python strings can hold one, e.g. from a
bad ``surrogateescape`` decode). Such a string is sent as it is by
boto3 and then fails inside the client (moto raises a raw ``UnicodeEncodeError``) or is
stored corrupted (DynamoDB Local). Every request passes through `check_request_text`
(`Call` runs it), whatever built it: items, keys, conditions, filters, update values,
map keys, cursors.
"""

from __future__ import annotations

import marshal
import re
from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any

from singletable.errors import ExpressionError, TextEncodeError
from singletable.keys.escaping import LONE_SURROGATE

#: A surrogate as UTF-8 "surrogatepass" writes it (what marshal does with text).
_ENCODED_SURROGATE = re.compile(rb"\xed[\xa0-\xbf]")
# Values that hold no text (binary attributes hold bytes, not text).
_SCALARS = (int, float, bool, bytes, bytearray, memoryview, Decimal, type(None))
_EXPRESSIONS = (
    "KeyConditionExpression",
    "FilterExpression",
    "ConditionExpression",
    "UpdateExpression",
    "ProjectionExpression",
)


#: DynamoDB's limit on one expression string, in UTF-8 bytes ("4 KB"; DynamoDB Local
#: refuses 4,097).
MAX_EXPRESSION_BYTES = 4096
#: DynamoDB's limit on the operators of one expression.
MAX_EXPRESSION_OPERATORS = 300
#: What DynamoDB Local 3.3.0 counts as an operator of a condition, filter or key
#: condition (each measured at 300 taken, 301 refused): comparisons, AND, OR, NOT,
#: BETWEEN (its own AND not counted), IN, and every function (attribute_exists,
#: attribute_not_exists, attribute_type, begins_with, contains, size); parentheses do not
#: count. Placeholders (``#n0``, ``:v0``) hold none of these.
_CONDITION_OPERATOR = re.compile(
    r"<>|<=|>=|[=<>]|\b(?:AND|OR|NOT|BETWEEN|IN)\b|\w\s*\(", re.IGNORECASE
)
_BETWEEN = re.compile(r"\bBETWEEN\b", re.IGNORECASE)
#: In an update expression: ``+`` and ``-`` count, a SET's ``=`` and ADD do not. Its
#: functions (if_not_exists, list_append) are not counted here: not measurable within
#: 4 KB, so a count could only refuse what DynamoDB might take.
_UPDATE_OPERATOR = re.compile(r"[+-]")


def expression_size(text: str) -> int:
    """An expression's size as DynamoDB measures it: its UTF-8 bytes."""
    # Four UTF-8 bytes a character at most: shorter text needs no encoding to pass.
    if len(text) <= MAX_EXPRESSION_BYTES // 4:
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def expression_operators(name: str, text: str) -> int:
    """How many operators DynamoDB counts in the expression ``text`` of parameter ``name``.

    The update expression's count is a lower bound (its functions are left out).
    """
    if name == "UpdateExpression":
        return len(_UPDATE_OPERATOR.findall(text))
    if name == "ProjectionExpression":
        return 0
    return len(_CONDITION_OPERATOR.findall(text)) - len(_BETWEEN.findall(text))


def check_request_expressions(action: str, params: Mapping[str, Any]) -> None:
    """Refuse a request holding an expression longer or more complex than DynamoDB takes.

    Raises:
        ExpressionError: an expression of the request (or of one of its transaction's
            items) is over `MAX_EXPRESSION_BYTES`, or holds more than
            `MAX_EXPRESSION_OPERATORS` operators; the message names it and the figure.
    """
    _check_expressions(action, params, "")
    for i, entry in enumerate(params.get("TransactItems") or ()):
        for kind, request in entry.items():
            _check_expressions(action, request, f"TransactItems[{i}].{kind}.")


def _check_expressions(action: str, request: Mapping[str, Any], where: str) -> None:
    for name in _EXPRESSIONS:
        text = request.get(name)
        # An operator is a character at least: shorter text holds no more than 300.
        if text is None or len(text) <= MAX_EXPRESSION_OPERATORS:
            continue
        size = expression_size(text)
        if size > MAX_EXPRESSION_BYTES:
            raise ExpressionError(
                f"{action}: {where}{name} is {size:,} bytes; DynamoDB takes expressions of "
                f"at most {MAX_EXPRESSION_BYTES:,} bytes (4 KB), so the request would be "
                "refused whole: put fewer conditions, updates or projected attributes in "
                "one request"
            )
        operators = expression_operators(name, text)
        if operators > MAX_EXPRESSION_OPERATORS:
            raise ExpressionError(
                f"{action}: {where}{name} holds {operators:,} operators; DynamoDB takes at "
                f"most {MAX_EXPRESSION_OPERATORS} an expression (comparisons, AND, OR, NOT, "
                "BETWEEN, IN and functions count), so the request would be refused whole: "
                "put fewer conditions or updates in one request"
            )


def _is_lone(key: Any) -> bool:
    return isinstance(key, str) and LONE_SURROGATE.search(key) is not None


def _has_lone_surrogate(value: Any) -> bool:
    # Every request passes here, so the common case must cost little. marshal (C, from
    # the stdlib) serialises exact builtin types several times faster than any Python
    # walk, and writes non-ASCII text as UTF-8 with "surrogatepass": a surrogate becomes
    # 0xED 0xA0..0xBF, which valid UTF-8 never holds. Those bytes absent, no string holds
    # a surrogate; present (or a value marshal refuses: str subclasses, Decimals), the
    # walk decides, since other bytes (binary values, lengths) can match too.
    # benchmarks/bench_micro.py ``surrogates`` (25-item writes, 7 models, median of 15
    # paired rounds, 3 runs): 0.25-0.50x the walk's time on text (ASCII, accented, CJK)
    # and small binary digests; 1.24-1.45x when KB-sized binary values match by chance
    # and the walk runs as well.
    try:
        data = marshal.dumps(value, 4)
    except ValueError:  # a type marshal does not write
        return _walk_has_lone_surrogate(value)
    return _ENCODED_SURROGATE.search(data) is not None and _walk_has_lone_surrogate(value)


def _walk_has_lone_surrogate(value: Any) -> bool:  # noqa: C901 - one inlined loop is the point
    # Written for speed too: one loop over an explicit stack instead of a call per node,
    # each map's text entries (an AttributeValue's {"S": ...}, a map key) checked inline,
    # exact-class tests, and str.isascii() (constant time in CPython) so that only
    # non-ASCII text is searched. `_strings` is the plain reference it must agree with
    # (tested over generated structures).
    stack = [value]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        cls = node.__class__
        if cls is dict:
            for key, element in node.items():
                # A map key is text too (other keys are not walked, as in `_strings`).
                if (key.__class__ is not str or not key.isascii()) and _is_lone(key):
                    return True
                kind = element.__class__
                if kind is str:
                    if not element.isascii() and LONE_SURROGATE.search(element):
                        return True
                elif kind is dict:
                    # An AttributeValue: one entry, mostly text; checked here, not pushed.
                    for inner_key, inner in element.items():
                        if (inner_key.__class__ is not str or not inner_key.isascii()) and _is_lone(
                            inner_key
                        ):
                            return True
                        if inner.__class__ is str:
                            if not inner.isascii() and LONE_SURROGATE.search(inner):
                                return True
                        elif not isinstance(inner, _SCALARS):
                            push(inner)
                elif not isinstance(element, _SCALARS):
                    push(element)
        elif cls is list or cls is tuple:
            for element in node:
                if element.__class__ is str:
                    if not element.isascii() and LONE_SURROGATE.search(element):
                        return True
                elif not isinstance(element, _SCALARS):
                    push(element)
        elif cls is str:
            if not node.isascii() and LONE_SURROGATE.search(node):
                return True
        elif isinstance(node, str | Mapping | list | tuple | set | frozenset) and any(
            True
            for _ in _lone_surrogates(node, ())  # subclasses, sets
        ):
            return True
    return False


def check_request_text(action: str, params: Mapping[str, Any]) -> None:
    """Refuse a request holding a string that UTF-8 cannot encode.

    Raises:
        TextEncodeError: a string (value, map key or attribute name, at any depth)
            holds a lone surrogate; the message names where in the request it is and,
            for an expression value, the expression that uses it.
    """
    if not _has_lone_surrogate(params):
        return
    for path, value in _lone_surrogates(params, ()):
        match = LONE_SURROGATE.search(value)
        assert match is not None
        raise TextEncodeError(
            f"{action}: {_describe(path, params)} holds the lone surrogate "
            f"U+{ord(match.group()):04X} at index {match.start()}; DynamoDB strings must "
            "be valid UTF-8, which cannot encode one (fix the text, e.g. decode its "
            "bytes with errors='replace')",
            where=_path_text(path),
        )


def _lone_surrogates(
    value: Any, path: tuple[str | int, ...]
) -> Iterator[tuple[tuple[str | int, ...], str]]:
    for where, text in _strings(value, path):
        if LONE_SURROGATE.search(text):
            yield where, text


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
