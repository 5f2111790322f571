"""Key codecs of values written as text: str, bool and UUID."""

from __future__ import annotations

import uuid

from singletable.attributes.fastpath import Writer, orjson_text
from singletable.errors import KeyDecodeError
from singletable.keys.codec_base import KeyCodec, type_error


class StrCodec(KeyCodec[str]):
    r"""Text, written as is.

    Encoding: identity (``""`` allowed). The output can contain any character, so the
    template layer always escapes it (``min_char == "\x00"``).
    """

    kind = "str"
    min_char = "\x00"

    def encode(self, value: str) -> str:
        """Encode a str: identity. See `KeyCodec.encode`."""
        if value.__class__ is str:
            return value
        if isinstance(value, str):
            return str.__str__(value)
        raise type_error("str", "str", value)

    def fast_text(self, w: Writer, x: str) -> tuple[str, str]:
        """See `KeyCodec.fast_text`."""
        return f"{x}.__class__ is str", x

    def decode(self, text: str) -> str:
        """Decode a str: identity. See `KeyCodec.decode`."""
        return text

    def encode_prefix(self, partial: str) -> str:
        """A prefix of a str is a prefix of its encoding: identity."""
        return self.encode(partial)


class BoolCodec(KeyCodec[bool]):
    """A bool. Encoding: ``"false"`` / ``"true"`` (False sorts first)."""

    kind = "bool"
    min_char = "a"

    def encode(self, value: bool) -> str:
        """Encode a bool. See `KeyCodec.encode`."""
        if value is True:
            return "true"
        if value is False:
            return "false"
        raise type_error("bool", "bool", value)

    def fast_text(self, w: Writer, x: str) -> tuple[str, str]:
        """See `KeyCodec.fast_text`."""
        return f"{x} is True or {x} is False", f"'true' if {x} else 'false'"

    def max_chars(self) -> int:
        """See `KeyCodec.max_chars`."""
        return 5

    def decode(self, text: str) -> bool:
        """Decode a bool. See `KeyCodec.decode`."""
        if text == "true":
            return True
        if text == "false":
            return False
        raise KeyDecodeError(f"{text!r} is not a bool key encoding (expected 'true' or 'false')")


_HEX_CLASS = str.maketrans("0123456789abcdef", "xxxxxxxxxxxxxxxx")
_UUID_PATTERN = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"


class UUIDCodec(KeyCodec[uuid.UUID]):
    """A UUID. Encoding: the lower-case canonical 36-character form."""

    kind = "uuid"
    min_char = "-"

    def encode(self, value: uuid.UUID) -> str:
        """Encode a UUID. See `KeyCodec.encode`."""
        if not isinstance(value, uuid.UUID):
            raise type_error("uuid", "uuid.UUID", value)
        return str(value)

    def fast_text(self, w: Writer, x: str) -> tuple[str, str]:
        """See `KeyCodec.fast_text`."""
        # orjson writes str()'s text in C (516 -> 175 ns; `attributes.scalars`).
        return f"{x}.__class__ is {w.ref(uuid.UUID, 'UUID')}", orjson_text(w, x, f"str({x})")

    def max_chars(self) -> int:
        """See `KeyCodec.max_chars`."""
        return 36

    def decode(self, text: str) -> uuid.UUID:
        """Decode a UUID. See `KeyCodec.decode`."""
        if len(text) == 36 and text.isascii() and text.translate(_HEX_CLASS) == _UUID_PATTERN:
            return uuid.UUID(text)
        raise KeyDecodeError(
            f"{text!r} is not a uuid key encoding (expected 36 lower-case hex/dash characters)"
        )
