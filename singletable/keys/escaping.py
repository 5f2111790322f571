"""`SegmentEscaper`: makes a key segment safe to join with the table's delimiter.

The escaping keeps the order of the encoded values (see ``docs/architecture.md``, "Key
encoding").
"""

from __future__ import annotations

import re
import string
from typing import Any

from singletable.errors import KeyDecodeError, ModelDefinitionError
from singletable.keys.codec_base import KeyCodec

_HEX_UPPER = frozenset("0123456789ABCDEF")
_ASCII_PUNCTUATION = frozenset(string.punctuation)


#: A code point UTF-8 cannot encode (half of a surrogate pair, alone in a Python str):
#: no DynamoDB string, key text included, can hold one.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class SegmentEscaper:
    """Order-preserving escaping of one key segment.

    Every character whose code point is ``<= ord(escape)`` is written as ``escape``
    followed by two upper-case hex digits of its code point (``" " -> "%20"``,
    ``"#" -> "%23"``, ``"%" -> "%25"``); every other character is written as is. The
    result never contains the delimiter, every character of it is above the
    delimiter, and it is a prefix code whose order is the order of the raw text, so
    ``a < b`` exactly when ``escape(a) + delimiter < escape(b) + delimiter``.

    Args:
        delimiter: The table's segment delimiter, one ASCII punctuation character.
        escape: The escape character: ASCII punctuation above the delimiter and below
            ``"0"``.

    Raises:
        ModelDefinitionError: The characters cannot give an order-preserving escaping.
    """

    def __init__(self, delimiter: str = "#", escape: str = "%") -> None:
        allowed = "".join(c for c in string.punctuation if c < "0")
        for name, char in (("delimiter", delimiter), ("escape", escape)):
            if not isinstance(char, str) or len(char) != 1 or not char.isascii():
                raise ModelDefinitionError(
                    f"key {name} {char!r} must be a single ASCII punctuation character"
                )
        if delimiter >= "/":
            raise ModelDefinitionError(
                f"key delimiter {delimiter!r} cannot be escaped order-preservingly: the escape "
                "character must sort above the delimiter, and every character up to the "
                "escape character must itself be escaped to keep key order, so any escape "
                f"above {delimiter!r} would escape digits or letters; choose a delimiter "
                f"among {' '.join(allowed[:-1])}"
            )
        if escape <= delimiter:
            raise ModelDefinitionError(
                f"key escape character {escape!r} must sort above the delimiter {delimiter!r} "
                "(the delimiter is escaped, and escaped text must sort above it)"
            )
        if escape >= "0":
            raise ModelDefinitionError(
                f"key escape character {escape!r} must sort below '0': every character up to "
                "the escape character is escaped to keep key order, so it would escape "
                f"digits and letters; choose one of {' '.join(c for c in allowed if c > delimiter)}"
            )
        for name, char in (("delimiter", delimiter), ("escape", escape)):
            if char not in _ASCII_PUNCTUATION:
                raise ModelDefinitionError(
                    f"key {name} {char!r} must be a single ASCII punctuation character "
                    f"(one of {' '.join(allowed)})"
                )
        self.delimiter = delimiter
        self.escape_char = escape
        self._table = {i: f"{escape}{i:02X}" for i in range(ord(escape) + 1)}

    def escape(self, text: str) -> str:
        """Escape one segment's text.

        Args:
            text: The raw text.

        Returns:
            The escaped text (unchanged when no character is ``<=`` the escape char).
        """
        return text.translate(self._table)

    def unescape(self, text: str) -> str:
        """Strict inverse of `escape`.

        Args:
            text: Escaped segment text.

        Returns:
            The raw text.

        Raises:
            KeyDecodeError: ``text`` is not something `escape` produces (a raw character
                ``<=`` the escape char, such as the delimiter, a malformed escape, or an
                escape of a character that needs none).
        """
        esc = self.escape_char
        if esc not in text:
            self._check_raw(text, text)
            return text
        parts = text.split(esc)
        out = [parts[0]]
        self._check_raw(parts[0], text)
        for part in parts[1:]:
            code = part[:2]
            if len(code) != 2 or not _HEX_UPPER.issuperset(code):
                raise KeyDecodeError(
                    f"malformed escape {esc + code!r} in key segment {text!r} "
                    f"(expected {esc!r} and two upper-case hex digits)"
                )
            point = int(code, 16)
            if point > ord(esc):
                raise KeyDecodeError(
                    f"non-canonical escape {esc + code!r} in key segment {text!r}: "
                    f"{chr(point)!r} is never escaped"
                )
            rest = part[2:]
            self._check_raw(rest, text)
            out.append(chr(point))
            out.append(rest)
        return "".join(out)

    def _check_raw(self, raw: str, text: str) -> None:
        if raw and min(raw) <= self.escape_char:
            bad = min(raw)
            what = "the delimiter" if bad == self.delimiter else "a character"
            raise KeyDecodeError(
                f"key segment {text!r} contains {what} {bad!r} unescaped "
                f"(characters up to {self.escape_char!r} must be escaped)"
            )

    def needed_for(self, codec: KeyCodec[Any]) -> bool:
        """Whether values of ``codec`` must be escaped (its output can reach the escape char).

        Args:
            codec: A key codec.

        Returns:
            True iff ``codec.min_char <= escape char``.
        """
        return codec.min_char <= self.escape_char

    def __repr__(self) -> str:
        return f"SegmentEscaper(delimiter={self.delimiter!r}, escape={self.escape_char!r})"
