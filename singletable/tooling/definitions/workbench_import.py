"""Entity class skeletons out of a NoSQL Workbench data model (`workbench_import`).

Each table becomes a `Table` declaration and each facet an entity class. A facet's key
aliases become the entity's key templates when they are templates (segments that are a
literal or one ``{field}``, as `workbench_model` writes them). Anything else is left
as a TODO comment for a person to decide, as are the field types the model cannot tell
apart: Workbench knows DynamoDB types (``S``, ``N``...), not Python ones, so the sample
items decide where they can (ISO timestamps are datetimes, decimals are ``Decimal``).

The result is Python source: a skeleton to read, finish and commit, never imported blind.
"""

from __future__ import annotations

import datetime as dt
import json
import keyword
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from singletable.errors import ModelDefinitionError
from singletable.keys.templates import FIELD_SEGMENT
from singletable.tooling.definitions.cdk import py_str
from singletable.tooling.definitions.workbench import NOTE_PREFIX

_TYPES = {
    "BOOL": "bool",
    "B": "bytes",
    "M": "dict[str, Any]",
    "L": "list[Any]",
    "SS": "set[str]",
    "NS": "set[Decimal]",
    "BS": "set[bytes]",
}
#: Single-table convention: a literal key segment is upper case (``PROFILE``, ``EVT``).
_LITERAL = re.compile(r"[A-Z0-9_.:-]+")


def _identifier(text: str, *, camel: bool) -> str:
    words = [w for w in re.split(r"[^A-Za-z0-9]+", text) if w]
    if camel:
        name = "".join(w[:1].upper() + w[1:] for w in words)
    else:
        name = "_".join(words)
        name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
    if not name or not (name[0].isalpha() or name[0] == "_"):
        name = "x_" + name
    return name + "_" if keyword.iskeyword(name) else name


@dataclass
class _Entity:
    """What the source of one entity class is built from."""

    table_var: str
    name: str
    version: int
    pk: str
    sk: str | None
    fields: dict[str, str] = field(default_factory=dict)
    todos: list[str] = field(default_factory=list)
    gsi: dict[str, tuple[str, str | None]] = field(default_factory=dict)


def _template(alias: str | None, delimiter: str, role: str, e: _Entity) -> str | None:
    """The key template an alias stands for; a TODO for an alias that is not one."""
    if alias is None:
        return None
    segments = alias.split(delimiter)
    well_formed = all(
        FIELD_SEGMENT.fullmatch(s) or ("{" not in s and "}" not in s and s) for s in segments
    )
    if well_formed and (
        any(FIELD_SEGMENT.fullmatch(s) for s in segments) or _LITERAL.fullmatch(alias)
    ):
        return alias
    name = _identifier(alias, camel=False)
    e.todos.append(
        f"{role} alias {alias!r} is not a key template: written as {{{name}}}; write the "
        "template (e.g. 'PREFIX#{field}')"
    )
    return "{" + name + "}"


def _own_fields(template: str, taken: set[str], e: _Entity) -> str:
    """``template`` with fields renamed that would clash with a key or bookkeeping attribute.

    Workbench models often key an index on a plain attribute; singletable keeps its key
    attributes apart from the fields the templates read, so the field gets another name.
    """

    def rename(match: re.Match[str]) -> str:
        name = match[1]
        if name not in taken:
            return match[0]
        e.todos.append(
            f"template field {name!r} is a key attribute of the table: renamed {name}_value"
        )
        return "{" + name + "_value}"

    return FIELD_SEGMENT.sub(rename, template)


def _samples(items: Sequence[Mapping[str, Any]], attribute: str) -> list[tuple[str, Any]]:
    return [next(iter(i[attribute].items())) for i in items if attribute in i]


def _python_type(dynamo_type: str, samples: Sequence[tuple[str, Any]]) -> tuple[str, str | None]:
    """The annotation for an attribute, and a TODO when the type is a guess."""
    values = [v for _, v in samples]
    if dynamo_type == "S":
        if values and all(_parses(_datetime, v) and "T" in v for v in values):
            return "datetime", None
        if values and all(_parses(dt.date.fromisoformat, v) and len(v) == 10 for v in values):
            return "date", None
        return "str", None
    if dynamo_type == "N":
        if any(not re.fullmatch(r"-?\d+", v) for v in values):
            return "Decimal", None
        if values:
            return "int", None
        return "int", "no sample value: int, Decimal or float?"
    return _TYPES.get(dynamo_type, "Any"), None


def _datetime(text: str) -> dt.datetime:
    # Python 3.10's fromisoformat does not read the "Z" that stored datetimes end with.
    return dt.datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)


def _parses(parse: Any, value: Any) -> bool:
    try:
        parse(value)
    except (TypeError, ValueError):
        return False
    return True


def _notes(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    description = str(doc.get("ModelMetadata", {}).get("Description", ""))
    notes = []
    for line in description.splitlines():
        if line.startswith(NOTE_PREFIX):
            try:
                note = json.loads(line[len(NOTE_PREFIX) :])
            except ValueError:  # JSONDecodeError, or an integer past the digit limit
                continue  # a line a person edited: the TODOs cover what it held
            if isinstance(note, dict):
                notes.append(note)
    return notes


def _need(mapping: Any, key: str, where: str) -> Any:
    if not isinstance(mapping, Mapping) or key not in mapping:
        raise ModelDefinitionError(f"NoSQL Workbench model: {where} has no {key!r}")
    return mapping[key]


def _key_args(keys: Mapping[str, Any], where: str) -> list[str]:
    pk = _need(keys, "PartitionKey", where)
    args = [f"pk={py_str(_need(pk, 'AttributeName', where))}"]
    if _need(pk, "AttributeType", where) != "S":
        args.append(f"pk_type={py_str(pk['AttributeType'])}")
    sk = keys.get("SortKey")
    args.append("sk=None" if sk is None else f"sk={py_str(_need(sk, 'AttributeName', where))}")
    if sk is not None and sk.get("AttributeType", "S") != "S":
        args.append(f"sk_type={py_str(sk['AttributeType'])}")
    return args


def _table_source(
    var: str, table: Mapping[str, Any], notes: Sequence[Mapping[str, Any]]
) -> list[str]:
    name = table["TableName"]
    args = [py_str(name), *_key_args(_need(table, "KeyAttributes", f"table {name}"), name)]
    gsis = []
    for gsi in table.get("GlobalSecondaryIndexes", []):
        where = f"table {name}, GSI {gsi.get('IndexName')}"
        gargs = [
            py_str(_need(gsi, "IndexName", where)),
            *_key_args(gsi.get("KeyAttributes"), where),
        ]
        gargs = [a for a in gargs if a != "sk=None"]
        projection = gsi.get("Projection", {})
        kind = projection.get("ProjectionType", "ALL")
        extra = [a for a in projection.get("NonKeyAttributes", []) if a not in ("_et", "_ev")]
        if kind == "INCLUDE":
            gargs.append(f"projection=st.Projection.include({', '.join(py_str(a) for a in extra)})")
        elif kind == "KEYS_ONLY":
            gargs.append("projection=st.Projection.keys_only()")
        gsis.append(f"        st.GSI({', '.join(gargs)}),")
    lines = [f"{var} = st.Table("] + [f"    {a}," for a in args]
    if gsis:
        lines += ["    indexes=[", *gsis, "    ],"]
    if table.get("BillingMode") == "PROVISIONED":
        throughput = table.get("ProvisionedCapacitySettings", {}).get("ProvisionedThroughput", {})
        read, write = (
            throughput.get("ReadCapacityUnits", 1),
            throughput.get("WriteCapacityUnits", 1),
        )
        lines += [
            '    billing_mode="PROVISIONED",',
            f"    throughput=st.Throughput({read}, {write}),",
        ]
    for note in notes:
        for setting in ("ttl_attribute", "stream"):
            if setting in note:
                lines.append(f"    {setting}={py_str(str(note[setting]))},")
        if note.get("point_in_time_recovery"):
            lines.append("    point_in_time_recovery=True,")
    lines.append(")")
    for note in notes:
        if "lsi" in note:
            lines.append(
                f"# TODO: LSI {note['lsi']} on {note.get('sk')} (Workbench models hold no LSIs)"
            )
    return lines


def _entity(
    var: str, table: Mapping[str, Any], facet: Mapping[str, Any], notes: Sequence[Mapping[str, Any]]
) -> _Entity:
    where = f"table {table['TableName']}, facet {facet.get('FacetName')}"
    facet_name = str(_need(facet, "FacetName", where))
    match = re.fullmatch(r"(.+)_v(\d+)", facet_name)
    name, version = (match[1], int(match[2])) if match else (facet_name, 1)
    aliases = _need(facet, "KeyAttributeAlias", where)
    e = _Entity(var, name, version, "", None)
    e.pk = _template(_need(aliases, "PartitionKeyAlias", where), "#", "pk", e) or ""
    e.sk = _template(aliases.get("SortKeyAlias"), "#", "sk", e)
    types = {a["AttributeName"]: a["AttributeType"] for a in table.get("NonKeyAttributes", [])}
    keys = {k["AttributeName"] for k in table["KeyAttributes"].values()}
    index_keys = {
        k["AttributeName"]
        for g in table.get("GlobalSecondaryIndexes", [])
        for k in g.get("KeyAttributes", {}).values()
    }
    ttl = {n["ttl_attribute"] for n in notes if "ttl_attribute" in n}
    skip = keys | index_keys | ttl | {"_et", "_ev"}
    items = [i for i in table.get("TableData", []) if i.get("_et", {}).get("S") == name]
    for attribute in facet.get("NonKeyAttributes", []):
        if attribute in skip:
            continue
        samples = _samples(items, attribute)
        # One attribute name may hold another type in another entity: the table lists
        # one type per name, the facet's own items tell (their values are typed).
        tags = {tag for tag, _ in samples}
        stored = tags.pop() if len(tags) == 1 else types.get(attribute, "S")
        annotation, todo = _python_type(stored, samples)
        if items and any(attribute not in i for i in items):
            annotation += " | None = None"
        plain = attribute.isidentifier() and not keyword.iskeyword(attribute)
        own = attribute if plain and attribute[0] != "_" else _identifier(attribute, camel=False)
        if own != attribute:
            e.todos.append(f"{own} is stored as {attribute!r}: declare the alias")
        e.fields[own] = annotation
        if todo:
            e.todos.append(f"{attribute}: {todo}")
    e.pk = _own_fields(e.pk, skip, e)
    e.sk = None if e.sk is None else _own_fields(e.sk, skip, e)
    for template in (e.pk, e.sk or ""):
        for f in FIELD_SEGMENT.findall(template):
            e.fields.setdefault(f, "str")
    for note in notes:
        if note.get("entity") == name and "index" in note:
            e.gsi[str(note["index"])] = (str(note.get("pk")), note.get("sk"))
    facet_index_keys = sorted(index_keys & set(facet.get("NonKeyAttributes", [])))
    if facet_index_keys and not e.gsi:
        e.todos.append(
            f"carries index keys {', '.join(facet_index_keys)}: declare indexes={{...}} with their "
            "templates (Workbench facets hold the table keys' only)"
        )
    return e


def _entity_source(e: _Entity) -> list[str]:
    kwargs = [f"table={e.table_var}", f"pk={py_str(e.pk)}"]
    if e.sk is not None:
        kwargs.append(f"sk={py_str(e.sk)}")
    if e.version != 1:
        kwargs.append(f"version={e.version}")
    if e.gsi:
        parts = []
        for index, (pk, sk) in e.gsi.items():
            sk_arg = "" if sk is None else f", sk={py_str(sk)}"
            parts.append(f"{py_str(index)}: st.IndexKeys(pk={py_str(pk)}{sk_arg})")
        kwargs.append("indexes={" + ", ".join(parts) + "}")
    lines = ["", "", f"class {_identifier(e.name, camel=True)}("]
    lines += ["    st.Entity,", *(f"    {k}," for k in kwargs), "):"]
    lines.append(f'    """The {e.name} facet of the Workbench model."""')
    lines.append("")
    lines += [f"    # TODO: {t}" for t in e.todos]
    lines += [f"    {n}: {a}" for n, a in e.fields.items()]
    return lines


def workbench_import(doc: Mapping[str, Any]) -> str:
    """Python source declaring the tables and entity classes of a Workbench model.

    Raises:
        ModelDefinitionError: ``doc`` is not a Workbench data model (the message names
            the table or facet and the missing key).
    """
    tables = _need(doc, "DataModel", "the document")
    if not isinstance(tables, list):
        raise ModelDefinitionError("NoSQL Workbench model: DataModel is not a list")
    notes = _notes(doc)
    body: list[str] = []
    used: set[str] = set()
    for table in tables:
        name = str(_need(table, "TableName", "a DataModel entry"))
        var = _identifier(name, camel=False)
        while var in used:
            var += "_"
        used.add(var)
        mine = [n for n in notes if n.get("table") == name]
        body += ["", "", *_table_source(var, table, mine)]
        for facet in table.get("TableFacets", []):
            body += _entity_source(_entity(var, table, facet, mine))
    header = [
        f'"""Entities of the NoSQL Workbench model {doc.get("ModelName", "")!r}: a skeleton.',
        "",
        "Written by `singletable workbench import`; finish the TODOs, then commit.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from datetime import date, datetime",
        "from decimal import Decimal",
        "from typing import Any",
        "",
        "import singletable as st",
    ]
    return _tidy(header + body)


def _tidy(lines: Iterable[str]) -> str:
    return "\n".join(lines).rstrip("\n") + "\n"
