"""`KeyCodec`: the contract every order-preserving key codec keeps.

A *key codec* turns one typed field value into the text of one key segment so that the
byte order of the text (UTF-8, which equals Python's ``str`` order by code point) is the
order of the values, and so that the text decodes back to the value. The encodings are
part of the stored-data contract: changing one changes every key written with it. Each
codec documents its encoding in its class docstring, and `KeyCodec.params` reports
everything that affects the stored bytes so model snapshots can detect a change.

`KeyCodec.encode` is on the hot path of every write, so encoders avoid regexes and
``strftime`` and use precomputed tables.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Generic, TypeVar

from singletable.attributes.fastpath import Writer
from singletable.errors import KeyEncodeError

T = TypeVar("T")


class KeyCodec(ABC, Generic[T]):
    r"""Order-preserving conversion between one field value and one key segment's text.

    For values ``x`` and ``y`` of the codec's type: ``decode(encode(x)) == x``, and
    ``x < y`` exactly when ``encode(x) < encode(y)`` (as UTF-8 bytes, i.e. as ``str``).

    Attributes:
        kind: Name of the encoding, stored in model snapshots.
        min_char: The smallest character `encode` can ever output. ``"\x00"`` means
            arbitrary text. A `SegmentEscaper` is needed exactly when this is not above
            its escape character.
    """

    kind: ClassVar[str]
    min_char: str

    @abstractmethod
    def encode(self, value: T) -> str:
        """Encode a value into key text.

        Args:
            value: The field value.

        Returns:
            The order-preserving text.

        Raises:
            KeyEncodeError: The value has the wrong type or lies outside what the
                encoding can store; the message names the rule or limit.
        """

    @abstractmethod
    def decode(self, text: str) -> T:
        """Decode key text written by `encode`.

        Args:
            text: The (unescaped) segment text.

        Returns:
            The field value.

        Raises:
            KeyDecodeError: ``text`` is anything `encode` could not have produced.
        """

    def encode_prefix(self, partial: str) -> str:
        """Encode a partial value for a ``begins_with`` condition.

        Args:
            partial: The partial value, as text.

        Returns:
            The key text prefix.

        Raises:
            KeyEncodeError: This codec does not support partial values, or ``partial``
                is not a prefix of any value's encoding.
        """
        raise KeyEncodeError(
            f"{self.kind} key fields do not support partial values (begins_with); "
            "give the whole value"
        )

    def params(self) -> dict[str, Any]:
        """Everything that affects the stored bytes, JSON-able, for model snapshots.

        Returns:
            A dict with at least ``"kind"``.
        """
        return {"kind": self.kind}

    def fast_text(self, w: Writer, x: str) -> tuple[str, str] | None:
        """This codec's fast path as source, for generated item encoders.

        Args:
            w: The source writer (for constants and fresh names).
            x: The variable holding the value.

        Returns:
            ``(condition, text)``: expressions such that whenever ``condition`` holds,
            ``text`` equals ``encode(x)``; or None when the codec has no fast path (the
            generated code then calls `encode`).
        """
        del w, x
        return None

    def max_chars(self) -> int | None:
        """The most characters `encode` can return, or None if unbounded (or possibly empty)."""
        return None

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items() if k != "kind")
        return f"{type(self).__name__}({args})"


def type_error(kind: str, expected: str, value: object) -> KeyEncodeError:
    """The error for a key value of the wrong type, naming the codec and what it takes."""
    return KeyEncodeError(
        f"{kind} key value {value!r} has type {type(value).__name__}; expected {expected}"
    )


def as_int(kind: str, value: object) -> int:
    """Return ``value`` as a plain int, refusing bools and non-ints."""
    if isinstance(value, bool):
        raise KeyEncodeError(
            f"{kind} key value {value!r} is a bool, not an int; use a bool field for flags"
        )
    if not isinstance(value, int):
        raise type_error(kind, "int", value)
    return int(value)
