"""Table and index declarations: defaults, key schemas and every definition error."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from singletable.errors import ModelDefinitionError
from singletable.model.table import (
    GSI,
    LSI,
    KeySchema,
    KeyType,
    Projection,
    Table,
    Throughput,
)


def refused(fragments: list[str], **kwargs: Any) -> None:
    with pytest.raises(ModelDefinitionError) as info:
        Table(kwargs.pop("name", "app"), **kwargs)
    for fragment in fragments:
        assert fragment in str(info.value), (fragment, str(info.value))


def test_defaults_and_key_schemas() -> None:
    table = Table(
        "app",
        indexes=[
            GSI("GSI1", pk="GSI1PK", sk="GSI1SK"),
            GSI("BYNUM", pk="NPK", sk="NSK", sk_type="N", projection=Projection.keys_only()),
            LSI("LSI1", sk="LSI1SK"),
        ],
    )
    assert (table.pk, table.sk, table.delimiter, table.escape) == ("PK", "SK", "#", "%")
    assert (table.entity_attribute, table.version_attribute) == ("_et", "_ev")
    assert table.billing_mode == "PAY_PER_REQUEST"
    assert table.key_schema() == KeySchema(None, "PK", "SK", "S", "S")
    assert table.key_schema("BYNUM") == KeySchema("BYNUM", "NPK", "NSK", "S", "N")
    assert table.key_schema("LSI1") == KeySchema("LSI1", "PK", "LSI1SK", "S", "S")
    assert [s.index for s in table.key_schemas()] == [None, "GSI1", "BYNUM", "LSI1"]
    assert table.key_attributes() == {
        "PK": "S",
        "SK": "S",
        "GSI1PK": "S",
        "GSI1SK": "S",
        "NPK": "S",
        "NSK": "N",
        "LSI1SK": "S",
    }


def test_unknown_index_names_the_table_and_known_indexes() -> None:
    table = Table("app", indexes=[GSI("GSI1", pk="A")])
    with pytest.raises(ModelDefinitionError) as info:
        table.key_schema("GSI2")
    assert str(info.value) == "table 'app' has no index 'GSI2' (indexes: GSI1)"


@pytest.mark.parametrize(
    ("kwargs", "fragments"),
    [
        (dict(delimiter="/"), ["table 'app'", "key delimiter '/'", "choose a delimiter among"]),
        (dict(delimiter="a"), ["table 'app'", "key delimiter 'a'"]),
        (dict(delimiter="##"), ["table 'app'", "'##' must be a single ASCII punctuation"]),
        (dict(delimiter="\u2016"), ["table 'app'", "must be a single ASCII punctuation"]),
        (dict(escape="#"), ["table 'app'", "escape character '#' must sort above the delimiter"]),
        (dict(escape="!"), ["table 'app'", "escape character '!' must sort above"]),
        (dict(escape="0"), ["table 'app'", "escape character '0' must sort below '0'"]),
        (dict(escape="z"), ["table 'app'", "escape character 'z' must sort below '0'"]),
        (dict(delimiter=" ", escape="%"), ["table 'app'", "key delimiter ' '", "punctuation"]),
    ],
)
def test_bad_delimiter_or_escape(kwargs: dict[str, Any], fragments: list[str]) -> None:
    refused(fragments, **kwargs)


def test_more_than_20_gsis() -> None:
    Table("app", indexes=[GSI(f"G{i}", pk=f"G{i}PK") for i in range(20)])
    refused(
        ["table 'app'", "21 GSIs", "quota is 20"],
        indexes=[GSI(f"G{i}", pk=f"G{i}PK") for i in range(21)],
    )


def test_more_than_5_lsis() -> None:
    Table("app", indexes=[LSI(f"L{i}", sk=f"L{i}SK") for i in range(5)])
    refused(
        ["table 'app'", "6 LSIs", "at most 5"],
        indexes=[LSI(f"L{i}", sk=f"L{i}SK") for i in range(6)],
    )


def test_lsi_needs_a_sort_key_table() -> None:
    refused(
        ["table 'app'", "LSI 'L1' needs a table with a sort key"],
        sk=None,
        indexes=[LSI("L1", sk="X")],
    )


def test_billing_mode_and_throughput() -> None:
    refused(
        ["table 'app'", "PROVISIONED needs throughput=Throughput(read, write)"],
        billing_mode="PROVISIONED",
    )
    refused(
        ["table 'app'", "throughput is only for billing_mode PROVISIONED"],
        throughput=Throughput(5, 5),
    )
    assert Table("app", billing_mode="PROVISIONED", throughput=Throughput(5, 1)).throughput
    with pytest.raises(ModelDefinitionError, match=r"at least 1 RCU and 1 WCU.*read=0"):
        Throughput(0, 5)


def test_index_declared_twice() -> None:
    refused(
        ["table 'app'", "index 'G' declared twice"], indexes=[GSI("G", pk="A"), GSI("G", pk="B")]
    )


def test_attribute_types_must_agree() -> None:
    refused(
        ["table 'app'", "attribute 'SK' is declared as both S and N"],
        indexes=[GSI("G", pk="SK", pk_type="N")],
    )


def test_index_cannot_use_one_attribute_for_both_keys() -> None:
    refused(["table 'app'", "index 'G' uses 'X' as both keys"], indexes=[GSI("G", pk="X", sk="X")])


def test_bookkeeping_attributes() -> None:
    refused(["table 'app'", "entity and version attributes must differ"], version_attribute="_et")
    refused(
        ["table 'app'", "key attribute '_et' clashes with the entity bookkeeping"],
        indexes=[GSI("G", pk="_et")],
    )


def test_table_needs_a_name() -> None:
    refused(["a table needs a name"], name="")


def test_projection_rules() -> None:
    assert Projection.include("a", "b").to_dict() == {
        "ProjectionType": "INCLUDE",
        "NonKeyAttributes": ["a", "b"],
    }
    assert Projection.all().to_dict() == {"ProjectionType": "ALL"}
    with pytest.raises(ModelDefinitionError, match="INCLUDE needs at least one attribute"):
        Projection.include()
    with pytest.raises(ModelDefinitionError, match="KEYS_ONLY takes no attribute list"):
        Projection("KEYS_ONLY", ("a",))


@settings(max_examples=200, deadline=None)
@given(
    sk=hs.sampled_from([None, "SK", "sort"]),
    gsis=hs.lists(
        hs.tuples(
            hs.sampled_from(["G1PK", "PK", "a"]),
            hs.sampled_from([None, "G1SK", "b"]),
            hs.sampled_from(["S", "N", "B"]),
        ),
        max_size=3,
    ),
    lsis=hs.lists(
        hs.tuples(hs.sampled_from(["L1SK", "c", "SK"]), hs.sampled_from(["S", "N"])), max_size=2
    ),
    ttl=hs.sampled_from([None, "expires", "ttl"]),
)
def test_key_and_bookkeeping_attributes_are_those_of_every_key_schema(
    sk: str | None,
    gsis: list[tuple[str, str | None, KeyType]],
    lsis: list[tuple[str, KeyType]],
    ttl: str | None,
) -> None:
    indexes: list[GSI | LSI] = [
        GSI(f"G{i}", pk=pk, sk=gsk, pk_type=kind, sk_type=kind)
        for i, (pk, gsk, kind) in enumerate(gsis)
    ]
    if sk is not None:
        indexes += [
            LSI(f"L{i}", sk=lsk, sk_type=kind) for i, (lsk, kind) in enumerate(lsis) if lsk != sk
        ]
    try:
        table = Table("app", sk=sk, indexes=indexes, ttl_attribute=ttl)
    except ModelDefinitionError:
        return  # a definition the table refuses (e.g. one attribute as both keys)
    from_schemas: dict[str, str] = {}
    for schema in table.key_schemas():
        from_schemas[schema.pk] = schema.pk_type
        if schema.sk is not None:
            from_schemas[schema.sk] = schema.sk_type
    assert list(table.key_attributes().items()) == list(from_schemas.items())
    expected = {*from_schemas, "_et", "_ev", *([ttl] if ttl is not None else [])}
    assert table.bookkeeping_attributes() == expected
