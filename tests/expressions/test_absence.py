"""Conditions on a field whose missing attribute reads as its default (issue 26), as strings.

The server-side property test is tests/integration/test_absent_defaults.py; these pin the
expressions each case sends.
"""

from __future__ import annotations

from pydantic import Field

import singletable as st
from singletable.expressions import Condition, Placeholders, render_condition
from singletable.types import AttributeValue


class Ticket(st.Entity, table=st.Table("absence"), pk="Q#{queue}", sk="T#{n}"):
    queue: str
    n: int
    state: str | None = "open"
    due: int | None = None
    rank: int = 3
    tags: set[str] = Field(default_factory=set)
    notes: list[str] = Field(default_factory=list)


def rendered(condition: Condition) -> tuple[str, dict[str, AttributeValue]]:
    ph = Placeholders()
    return render_condition(condition, ph), ph.values


def test_a_comparison_the_default_meets_also_matches_the_missing_attribute() -> None:
    f = Ticket.f
    assert rendered(f.state == "open") == (
        "attribute_not_exists (#n0) OR #n0 = :v0",
        {":v0": {"S": "open"}},
    )
    assert (
        rendered(f.rank.between(1, 5))[0] == "attribute_not_exists (#n0) OR #n0 BETWEEN :v0 AND :v1"
    )
    assert rendered(f.rank.is_in(3, 4))[0] == "attribute_not_exists (#n0) OR #n0 IN (:v0, :v1)"
    assert rendered(f.state.begins_with("op"))[0] == (
        "attribute_not_exists (#n0) OR begins_with (#n0, :v0)"
    )
    # An empty set is stored as no attribute: its size is 0.
    assert rendered(f.tags.size() == 0)[0] == "attribute_not_exists (#n0) OR size (#n0) = :v0"


def test_a_comparison_the_default_fails_keeps_what_dynamodb_answers() -> None:
    f = Ticket.f
    assert rendered(f.state == "done")[0] == "#n0 = :v0"
    assert rendered(f.rank > 3)[0] == "#n0 > :v0"
    assert rendered(f.tags.contains("x"))[0] == "contains (#n0, :v0)"
    # DynamoDB answers <> true on a missing attribute: the default's answer differs here.
    assert rendered(f.state != "open")[0] == "attribute_exists (#n0) AND #n0 <> :v0"
    assert rendered(f.state != "done")[0] == "#n0 <> :v0"


def test_none_means_what_reads_as_none() -> None:
    f = Ticket.f
    # The default is None: a missing attribute and a stored NULL read None.
    assert rendered(f.due == None) == (  # noqa: E711
        "attribute_not_exists (#n0) OR attribute_type (#n0, :v0)",
        {":v0": {"S": "NULL"}},
    )
    assert rendered(f.due != None)[0] == (  # noqa: E711
        "NOT (attribute_not_exists (#n0) OR attribute_type (#n0, :v0))"
    )
    # The default is "open": only a stored NULL reads None.
    assert rendered(f.state == None)[0] == "attribute_type (#n0, :v0)"  # noqa: E711
    assert rendered(f.state != None)[0] == "NOT attribute_type (#n0, :v0)"  # noqa: E711


def test_keys_and_factories_are_compared_as_stored() -> None:
    f = Ticket.f
    # A key field reads back from the key; a factory's value is made when it runs.
    assert rendered(f.n == 3)[0] == "#n0 = :v0"
    assert rendered(f.notes.size() == 0)[0] == "size (#n0) = :v0"


def test_two_fields_with_defaults_cover_each_missing_one() -> None:
    assert rendered(Ticket.f.rank < Ticket.f.due) == (
        "#n0 < #n1 OR (attribute_not_exists (#n0) AND :v0 < #n1)",
        {":v0": {"N": "3"}},
    )
