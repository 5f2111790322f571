"""Whether a key template can produce a key inside a key range (exactly, per range read).

A query reads one range of sort keys (an equality, a ``begins_with`` prefix, or bounds).
Another entity whose template can write a key into that range shares the read, and its
items must be filtered out by type; one that cannot must not cost a filter (or, on a
KEYS_ONLY index, a refusal). Comparing templates segment by segment is not enough:
``"K#{n}#A"`` and ``"K#{n}#B"`` never make equal keys, yet ``begins_with(SK, "K#")``
reads both.

So the question is answered on the set of keys a template can make, as a small
automaton: literal characters, the delimiter, and for each field any run of characters
its encoding can hold (every character of an encoded field is at or above the codec's
smallest character, or the escape character when the field is escaped: see
`SegmentEscaper`). The run may be empty and may take any such character, a superset of
the codec's real outputs, so the answer can be "yes" where no real value reaches the
range (a filter that keeps nothing out), never "no" where one does. Strings compare by
code point, which is DynamoDB's UTF-8 byte order.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Literal

from singletable.keys.templates import FieldSegment, KeyTemplate

RangeOp = Literal["eq", "begins_with", "between", "lt", "le", "gt", "ge"]

_MAX_CHAR = 0x10FFFF

#: One automaton step: a literal character, or (as an int) a field run of characters at
#: or above that code point.
_Token = str | int


def _tokens(template: KeyTemplate) -> tuple[_Token, ...]:
    tokens: list[_Token] = []
    for i, segment in enumerate(template.segments):
        if i:
            tokens.append(template.delimiter)
        if isinstance(segment, FieldSegment):
            lowest = template.escaper.escape_char if segment.escaped else segment.codec.min_char
            tokens.append(ord(lowest))
        else:
            tokens.extend(segment)
    return tuple(tokens)


class _Automaton:
    """The keys of one template, as a non-deterministic automaton over characters."""

    def __init__(self, tokens: tuple[_Token, ...]) -> None:
        self.tokens = tokens
        self.accept = len(tokens)

    def closure(self, states: Iterable[int]) -> frozenset[int]:
        # A field run may be empty: its state also stands at the next token.
        out: set[int] = set()
        for state in states:
            while state not in out:
                out.add(state)
                if state < self.accept and isinstance(self.tokens[state], int):
                    state += 1
                else:
                    break
        return frozenset(out)

    def step(self, states: frozenset[int], char: str) -> frozenset[int]:
        nxt: list[int] = []
        for state in states:
            if state == self.accept:
                continue
            token = self.tokens[state]
            if isinstance(token, int):
                if ord(char) >= token:
                    nxt.append(state)
            elif token == char:
                nxt.append(state + 1)
        return self.closure(nxt)

    def run(self, text: str) -> frozenset[int]:
        states = self.closure([0])
        for char in text:
            states = self.step(states, char)
            if not states:
                break
        return states

    def meets(
        self, low: str | None, low_inclusive: bool, high: str | None, high_inclusive: bool
    ) -> bool:
        """Whether some key lies between ``low`` and ``high`` (``None``: unbounded)."""

        @functools.cache
        def search(states: frozenset[int], i: int, tight_low: bool, tight_high: bool) -> bool:
            # The key read so far equals low[:i] while tight_low, high[:i] while tight_high;
            # once neither holds, every completion (always possible) is inside the range.
            if not states:
                return False
            if not tight_low and not tight_high:
                return True
            if self.accept in states:
                above = not tight_low or (low is not None and i == len(low) and low_inclusive)
                below = (
                    not tight_high
                    or (high is not None and i < len(high))
                    or (high is not None and i == len(high) and high_inclusive)
                )
                if above and below:
                    return True
            if tight_high and high is not None and i >= len(high):
                return False  # any longer key is above high
            lo = low[i] if tight_low and low is not None and i < len(low) else None
            hi = high[i] if tight_high and high is not None else None
            floor = ord(lo) + 1 if lo is not None else 0
            ceiling = ord(hi) - 1 if hi is not None else _MAX_CHAR
            # A character strictly inside (lo, hi) leaves both bounds behind at once.
            for state in states:
                if state == self.accept:
                    continue
                token = self.tokens[state]
                if isinstance(token, int):
                    if max(floor, token) <= ceiling:
                        return True
                elif floor <= ord(token) <= ceiling:
                    return True
            for char in {c for c in (lo, hi) if c is not None}:
                if lo is not None and hi is not None and not lo <= char <= hi:
                    continue
                next_low = tight_low and char == lo
                next_high = tight_high and char == hi
                if search(self.step(states, char), i + 1, next_low, next_high):
                    return True
            return False

        return search(self.closure([0]), 0, low is not None, high is not None)


@functools.lru_cache(maxsize=4096)
def _automaton(tokens: tuple[_Token, ...]) -> _Automaton:
    return _Automaton(tokens)


@functools.lru_cache(maxsize=4096)
def can_produce_key_in(template: KeyTemplate, op: RangeOp | None, values: tuple[str, ...]) -> bool:
    """Whether ``template`` can produce a key that a key condition selects.

    Args:
        template: The key template of the other entity (a string key).
        op: The key condition (``None``: every key, e.g. a partition read whole).
        values: Its operand texts (two for ``between``, one otherwise).

    Returns:
        ``False`` only when no key of the template satisfies the condition; a template
        of a Number key can always reach a numeric range (``True``).
    """
    if op is None or template.key_type != "S":
        return True
    automaton = _automaton(_tokens(template))
    first = values[0]
    if op == "eq":
        return automaton.accept in automaton.run(first)
    if op == "begins_with":
        return bool(automaton.run(first))  # every state can still complete a key
    if op == "between":
        return automaton.meets(first, True, values[1], True)
    if op in ("lt", "le"):
        return automaton.meets(None, True, first, op == "le")
    return automaton.meets(first, op == "ge", None, True)
