"""NoSQL Workbench models: export, import, and the round trip through both."""

from __future__ import annotations

import datetime as dt
import enum
import importlib.util
import io
import json
import sys
from decimal import Decimal
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs
from pydantic import BaseModel

import singletable as st
from singletable import examples
from singletable.cli import main
from singletable.model.plan import entity_plans
from singletable.tooling.definitions.workbench import (
    FORMAT_VERSION,
    sample_items,
    workbench_model,
)
from singletable.tooling.definitions.workbench_import import workbench_import
from singletable.tooling.migrations.planner import plan_changes
from singletable.tooling.migrations.snapshot import snapshot
from tests.strategies import ENTITY_FIELD_KINDS, build_simple_entity, simple_entity_specs

_counter = iter(range(10**9))


def load_source(source: str, tmp: Path) -> ModuleType:
    """Import generated source as a module (a fresh name each time)."""
    name = f"wb_imported_{next(_counter)}"
    path = tmp / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def the_table(module: ModuleType) -> st.Table:
    (table,) = [v for v in vars(module).values() if isinstance(v, st.Table)]
    return table


def test_export_has_a_facet_per_entity_with_the_templates_as_aliases() -> None:
    doc = workbench_model(examples.demo, items=examples.sample_items())
    assert doc["ModelMetadata"]["Version"] == FORMAT_VERSION
    (table,) = doc["DataModel"]
    assert table["KeyAttributes"]["PartitionKey"] == {"AttributeName": "PK", "AttributeType": "S"}
    facets = {f["FacetName"]: f for f in table["TableFacets"]}
    assert list(facets) == [p.name for p in entity_plans(examples.demo)]
    assert facets["AuditEvent"]["KeyAttributeAlias"] == {
        "PartitionKeyAlias": "ACTOR#{actor_id}",
        "SortKeyAlias": "EVT#{ts}#{seq}",
    }
    assert [g["IndexName"] for g in table["GlobalSecondaryIndexes"]] == ["GSI1", "GSI2"]
    declared = {a["AttributeName"] for a in table["NonKeyAttributes"]}
    for facet in facets.values():
        assert set(facet["NonKeyAttributes"]) <= declared, facet["FacetName"]
    assert "GSI1PK" in facets["Reading"]["NonKeyAttributes"]
    # Sample data: the worked examples' items, stored form (DynamoDB JSON).
    assert len(table["TableData"]) == len(examples.sample_items())
    first = table["TableData"][0]
    assert first["PK"] == {"S": "ACTOR#u_8814"}
    assert first["_et"] == {"S": "Actor"}
    # What the format cannot hold is recorded, one line each.
    assert 'singletable: {"table": "singletable-demo", "ttl_attribute": "expires"}' in (
        doc["ModelMetadata"]["Description"].splitlines()
    )


def test_generated_sample_items_are_valid_entities() -> None:
    items = sample_items(examples.demo, 3)
    assert len(items) == 3 * len(entity_plans(examples.demo))
    doc = workbench_model(examples.demo, items=items)
    keys = [(i["PK"]["S"], i["SK"]["S"]) for i in doc["DataModel"][0]["TableData"]]
    assert len(set(keys)) == len(keys)


def test_sample_items_name_the_field_they_cannot_fill() -> None:
    class Address(BaseModel):
        street: str

    class Inner(st.Entity, table=st.Table("wb-inner", sk=None), pk="I#{i}"):
        i: str
        blob: Address

    with pytest.raises(st.ModelDefinitionError, match="field 'blob'"):
        sample_items(Inner.plan().table, 1)


def test_round_trip_of_the_worked_examples(tmp_path: Path) -> None:
    doc = workbench_model(examples.demo, items=examples.sample_items())
    imported = the_table(load_source(workbench_import(doc), tmp_path))
    assert st.create_table_request(imported) == st.create_table_request(examples.demo)
    assert imported.ttl_attribute == examples.demo.ttl_attribute
    # The same facets again, and the same plan but for what Workbench has no words for:
    # a fixed-width int key format, a dict's value type, and Decimals whose samples are
    # whole numbers. The planner names each of them.
    again = workbench_model(imported, items=examples.sample_items())
    assert again["DataModel"][0]["TableFacets"] == doc["DataModel"][0]["TableFacets"]
    plan = plan_changes(imported, snapshot(examples.demo))
    assert sorted(c.subject for c in plan.changes) == [
        "entity AuditEvent@1, <table> key",
        "entity AuditEvent@1, attribute details",
        "entity Reading@1, attribute humidity",
    ]


ROUND_TRIP_KINDS = [k for k in ENTITY_FIELD_KINDS if k.name in ("str", "int", "datetime", "date")]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hs.lists(simple_entity_specs(), min_size=1, max_size=3, unique_by=lambda s: s.name))
def test_round_trip_gives_the_same_plan(tmp_path_factory: Any, specs: list[Any]) -> None:
    tmp = tmp_path_factory.mktemp("wb")
    table = st.Table(f"wb-{next(_counter)}", indexes=[st.GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])
    for spec in specs:
        fields = tuple(
            (name, kind if kind in ROUND_TRIP_KINDS else ROUND_TRIP_KINDS[0])
            for name, kind in spec.fields
        )
        build_simple_entity(type(spec)(spec.name, fields, spec.pk, spec.sk, spec.gsi), table)
    doc = workbench_model(table, items=sample_items(table, 2))
    imported = the_table(load_source(workbench_import(doc), tmp))
    plan = plan_changes(imported, snapshot(table))
    assert plan.changes == (), plan.to_text()


MUSIC = {
    "ModelName": "Music",
    "ModelMetadata": {"Version": "3.0", "Description": "songs"},
    "DataModel": [
        {
            "TableName": "Songs",
            "KeyAttributes": {
                "PartitionKey": {"AttributeName": "Id", "AttributeType": "S"},
                "SortKey": {"AttributeName": "Metadata", "AttributeType": "S"},
            },
            "NonKeyAttributes": [
                {"AttributeName": "Title", "AttributeType": "S"},
                {"AttributeName": "TotalDownloads", "AttributeType": "N"},
                {"AttributeName": "DownloadMonth", "AttributeType": "S"},
            ],
            "TableFacets": [
                {
                    "FacetName": "SongDetails",
                    "KeyAttributeAlias": {
                        "PartitionKeyAlias": "SongId",
                        "SortKeyAlias": "Metadata",
                    },
                    "NonKeyAttributes": ["Title", "TotalDownloads"],
                },
                {
                    "FacetName": "MonthlyDownloads",
                    "KeyAttributeAlias": {
                        "PartitionKeyAlias": "SONG#{song_id}",
                        "SortKeyAlias": "MONTH#{DownloadMonth}",
                    },
                    "NonKeyAttributes": ["DownloadMonth"],
                },
            ],
            "GlobalSecondaryIndexes": [
                {
                    "IndexName": "ByMonth",
                    "KeyAttributes": {
                        "PartitionKey": {"AttributeName": "DownloadMonth", "AttributeType": "S"}
                    },
                    "Projection": {"ProjectionType": "KEYS_ONLY"},
                }
            ],
            "BillingMode": "PROVISIONED",
            "ProvisionedCapacitySettings": {
                "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}
            },
        }
    ],
}


def test_import_of_a_model_not_written_by_singletable(tmp_path: Path) -> None:
    source = workbench_import(MUSIC)
    # Aliases that are names, not templates, become a field each, with a TODO.
    assert "# TODO: pk alias 'SongId' is not a key template" in source
    assert 'pk="{song_id}"' in source
    assert 'sk="MONTH#{DownloadMonth_value}"' in source
    assert "renamed DownloadMonth_value" in source
    assert "# TODO: TotalDownloads: no sample value: int, Decimal or float?" in source
    assert "    TotalDownloads: int" in source
    module = load_source(source, tmp_path)
    table = the_table(module)
    assert st.create_table_request(table)["GlobalSecondaryIndexes"][0]["KeySchema"] == [
        {"AttributeName": "DownloadMonth", "KeyType": "HASH"}
    ]
    assert table.billing_mode == "PROVISIONED"
    assert module.SongDetails.plan().primary.pk.source == "{song_id}"


def test_import_names_what_is_missing() -> None:
    with pytest.raises(st.ModelDefinitionError, match="no 'DataModel'"):
        workbench_import({"ModelName": "x"})
    broken = json.loads(json.dumps(MUSIC))
    del broken["DataModel"][0]["TableFacets"][0]["KeyAttributeAlias"]
    with pytest.raises(
        st.ModelDefinitionError, match="facet SongDetails has no 'KeyAttributeAlias'"
    ):
        workbench_import(broken)


def test_the_commands(tmp_path: Path) -> None:
    model_file = tmp_path / "model.json"
    out = io.StringIO()
    argv = ["workbench", "export", "singletable.examples:demo", "-o", str(model_file)]
    assert main([*argv, "--items", "singletable.examples:sample_items"], out=out) == 0
    assert len(json.loads(model_file.read_text())["DataModel"][0]["TableData"]) == 60
    assert main([*argv, "--sample", "2"], out=out) == 0
    entities = tmp_path / "entities.py"
    assert main(["workbench", "import", str(model_file), "-o", str(entities)], out=out) == 0
    assert "class AuditEvent(" in entities.read_text()
    assert main(["workbench", "import", str(tmp_path / "missing.json")], out=out) == 2


class Size(enum.Enum):
    S = 1
    M = 2


class Shade(enum.Enum):
    DARK = "dark"


@pytest.mark.parametrize(
    ("annotation", "value", "stored"),
    [
        (str, "x", "S"),
        (int, 1, "N"),
        (Decimal, Decimal("1.5"), "N"),
        (bool, True, "BOOL"),
        (bytes, b"x", "B"),
        (Size, Size.M, "N"),
        (Shade, Shade.DARK, "S"),
        (int | None, 1, "N"),
        (set[str], {"a"}, "SS"),
        (set[int], {1}, "NS"),
        (list[int], [1], "L"),
        (dict[str, int], {"a": 1}, "M"),
        (dt.datetime, dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc), "S"),
    ],
)
def test_attribute_types_follow_the_stored_form(annotation: Any, value: Any, stored: str) -> None:
    class Probe(st.Entity, table=st.Table(f"wb-probe-{next(_counter)}", sk=None), pk="P#{k}"):
        k: str
        v: annotation

    (table,) = workbench_model(Probe.plan().table)["DataModel"]
    types = {a["AttributeName"]: a["AttributeType"] for a in table["NonKeyAttributes"]}
    assert types["v"] == stored
    # ... which is the type the item is really stored with.
    assert list(Probe.plan().to_item(Probe(k="a", v=value))["v"]) == [stored]


#: A table with a native (multi-attribute) GSI, for the command below.
NATIVE_TABLE = st.Table(
    "native",
    indexes=[st.NativeGSI("ByArea", pk=[st.KeyPart("tenant", "S"), st.KeyPart("region", "S")])],
)


def test_export_refuses_a_native_gsi_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    # Workbench's KeyAttributes hold one PartitionKey and one SortKey: no form for the index.
    argv = ["workbench", "export", f"{__name__}:NATIVE_TABLE"]
    assert main(argv, out=io.StringIO()) != 0
    err = " ".join(capsys.readouterr().err.split())
    assert "native GSI 'ByArea'" in err
    assert "multi-attribute key (tenant, region)" in err
    assert "NoSQL Workbench" in err
