"""Generated entities read back as written, on every read path, on a real backend.

A property over generated entity classes (`tests.strategies`: every key and attribute
kind, delimiters and escapes, aliases, optional and defaulted fields, GSIs): instances
are written by single puts and by a batch write (on the lean transport, both go to the
wire as JSON text made by the generated wire encoder), then read back by a query of each
partition, a scan, a get of each key and a batch get. Every read must give the entities
the pure round trip gives (``from_item(to_item(obj))``), and each read path must give
exactly the same objects on the executor under test (on the lean transport, query and
scan pages decoded from the response bytes) as on a wrapped client, which decodes item
by item.

Few examples: each one creates a table on the backend.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import singletable as st
from tests.comparisons import same_result
from tests.integration.models import generated_entity_table
from tests.integration.recording import RecordingClient
from tests.strategies import entity_instances, entity_specs

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
else:
    DynamoDBClient = Any


def _key(obj: Any) -> str:
    return repr(sorted(obj.key().items()))


def _reads(
    db: st.Connection,
    model: type[st.Entity],
    objs: list[st.Entity],
    pk_fields: list[str],
    sk_fields: list[str],
) -> dict[str, list[Any]]:
    """Every entity of ``objs``'s keys as each read path returns it, in key order."""
    # One query a partition: values that differ may share one (Decimal 0 and 0E+1).
    plan = model.plan()
    partitions = {repr(plan.to_item(o)[plan.table.pk]): o for o in objs}
    queried = [
        entity
        for o in partitions.values()
        for entity in model.query(**{f: getattr(o, f) for f in pk_fields}).all(db)
    ]
    keys = [{f: getattr(o, f) for f in [*pk_fields, *sk_fields]} for o in objs]
    got = [model.get(**key).run(db) for key in keys]
    batch = db.execute(st.BatchGet([(plan, key) for key in keys]))
    return {
        "query": sorted(queried, key=_key),
        "scan": sorted(model.scan().all(db), key=_key),
        "get": sorted(got, key=_key),
        "batch get": sorted(batch, key=_key),
    }


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(hs.data())
def test_generated_entities_read_back_as_written_on_every_read_path(
    dynamodb_client: DynamoDBClient, table_name: str, data: hs.DataObject
) -> None:
    spec = data.draw(entity_specs())
    with generated_entity_table(dynamodb_client, table_name, spec) as (model, db):
        plan = model.plan()
        written: dict[str, st.Entity] = {}
        for obj in data.draw(hs.lists(entity_instances(spec, model), max_size=10)):
            try:
                plan.to_item(obj)
            except st.SingleTableError:
                continue  # a value DynamoDB cannot store: refused before any write
            written[_key(obj)] = obj
        objs = list(written.values())
        singles, batched = objs[::2], objs[1::2]
        for obj in singles:
            st.Put(obj).run(db)
        db.execute(st.BatchWrite(puts=batched))

        expected = sorted((plan.from_item(plan.to_item(o)) for o in objs), key=_key)
        fields = [name for name, _ in spec.pk.fields], [name for name, _ in spec.sk.fields]
        reads = _reads(db, model, objs, *fields)
        # A wrapped client keeps the boto3 path, which decodes every item by itself.
        wrapped: Any = RecordingClient(dynamodb_client)
        by_item = _reads(st.Connection(wrapped), model, objs, *fields)
        for path, got in reads.items():
            # Numbers come back as the server normalises them ("1.50" as "1.5"): equal.
            assert got == expected, path
            assert len(got) == len(by_item[path])
            for a, b in zip(got, by_item[path], strict=True):
                # The same server bytes, decoded two ways: the very same objects.
                assert same_result(a, b), (path, a, b)
