"""Every reader of ``ConsumedCapacity`` takes both of its shapes (issue 26, item 4).

DynamoDB reports one map for a single-item call, a query or a scan, and a list of maps for
a batch or a transaction (DynamoDB Local fills the list; moto returns ``[]``, which hid a
reader that called ``.get`` on it). The readers (the executors' meter, query pages,
migration rewrites, the browser) all go through `capacity_entries`; each is checked here
against generated responses of either shape.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as hs

from singletable import Entity, Table
from singletable.io.common import CapacityMeter
from singletable.operations.protocol import Call, capacity_entries, consumed_units
from singletable.operations.stream import Emit
from singletable.tooling.migrations.rewrite_item import consumed, consumed_split

_table = Table("capacity-shapes")


class Note(Entity, table=_table, pk="N#{note_id}", sk="NOTE"):
    note_id: str


_units = hs.sampled_from([0.0, 0.5, 1.0, 2.0, 4.0, 12.5])
_entry = hs.fixed_dictionaries(
    {"TableName": hs.just("capacity-shapes"), "CapacityUnits": _units},
    optional={"ReadCapacityUnits": _units, "WriteCapacityUnits": _units},
)
#: A response without capacity, with one map, or with a list of maps (empty included).
_responses: hs.SearchStrategy[dict[str, Any]] = hs.one_of(
    hs.just({}),
    _entry.map(lambda e: {"ConsumedCapacity": e}),
    hs.lists(_entry, max_size=3).map(lambda es: {"ConsumedCapacity": es}),
)


def _total(response: dict[str, Any]) -> float:
    capacity = response.get("ConsumedCapacity")
    entries = [] if capacity is None else capacity if isinstance(capacity, list) else [capacity]
    return sum(float(e["CapacityUnits"]) for e in entries)


@given(response=_responses)
def test_capacity_entries_take_a_map_a_list_or_nothing(response: dict[str, Any]) -> None:
    entries = capacity_entries(response)
    assert all(isinstance(e, dict) for e in entries)
    assert consumed_units(response) == _total(response)


@given(response=_responses, action=hs.sampled_from(["transact_write_items", "get_item"]))
def test_the_executors_meter_takes_either_shape(response: dict[str, Any], action: str) -> None:
    meter = CapacityMeter()
    meter.record(action, response)
    assert meter.total_units == _total(response)
    assert meter.last_units == _total(response)
    assert meter.calls == (0 if "ConsumedCapacity" not in response else 1)


@given(response=_responses)
def test_migration_rewrites_take_either_shape(response: dict[str, Any]) -> None:
    read, write = consumed_split(response)
    assert consumed(response) == read + write
    expected_read = expected_write = 0.0
    for entry in capacity_entries(response):
        if "ReadCapacityUnits" in entry or "WriteCapacityUnits" in entry:
            expected_read += entry.get("ReadCapacityUnits", 0.0)
            expected_write += entry.get("WriteCapacityUnits", 0.0)
        else:
            expected_write += entry["CapacityUnits"]
    assert (read, write) == (expected_read, expected_write)


@given(response=_responses)
def test_query_pages_take_either_shape(response: dict[str, Any]) -> None:
    stream = Note.query(note_id="n1").capacity("TOTAL").stream_pages()
    assert isinstance(next(stream), Call)
    emitted = stream.send({"Items": [], "Count": 0, "ScannedCount": 0, **response})
    assert isinstance(emitted, Emit)
    assert emitted.value.consumed_capacity == _total(response)
