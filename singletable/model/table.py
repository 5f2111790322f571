"""Table and index declarations: the physical shape that entities are mapped onto."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from typing import Any, Literal

from singletable.errors import ModelDefinitionError
from singletable.keys.escaping import SegmentEscaper
from singletable.types import frozen_dataclass

KeyType = Literal["S", "N", "B"]
#: An attribute codec's kind (`AttributeCodec.kind`) as a key attribute's type: only
#: these three can be one.
KEY_TYPES: dict[str, KeyType] = {"S": "S", "N": "N", "B": "B"}
BillingMode = Literal["PAY_PER_REQUEST", "PROVISIONED"]
StreamView = Literal["KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES"]

#: DynamoDB's default quotas: GSIs per table, and LSIs (which exist only from table creation).
MAX_GSIS = 20
MAX_LSIS = 5
#: The attributes a native (multi-attribute) GSI key may have on each side.
MAX_KEY_PARTS = 4


@frozen_dataclass
class Projection:
    """What an index copies from the base item: ``ALL``, ``KEYS_ONLY`` or ``INCLUDE`` a list."""

    type: Literal["ALL", "KEYS_ONLY", "INCLUDE"] = "ALL"
    attributes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.type == "INCLUDE" and not self.attributes:
            raise ModelDefinitionError("Projection INCLUDE needs at least one attribute name")
        if self.type != "INCLUDE" and self.attributes:
            raise ModelDefinitionError(
                f"Projection {self.type} takes no attribute list; use Projection.include(...)"
            )

    @classmethod
    def all(cls) -> Projection:
        """Project every attribute."""
        return cls("ALL")

    @classmethod
    def keys_only(cls) -> Projection:
        """Project only the table's and the index's key attributes."""
        return cls("KEYS_ONLY")

    @classmethod
    def include(cls, *attributes: str) -> Projection:
        """Project the keys plus the named non-key attributes."""
        return cls("INCLUDE", tuple(attributes))

    def to_dict(self) -> dict[str, Any]:
        """The ``Projection`` structure of a DynamoDB index definition."""
        result: dict[str, Any] = {"ProjectionType": self.type}
        if self.attributes:
            result["NonKeyAttributes"] = list(self.attributes)
        return result


@frozen_dataclass
class Throughput:
    """Provisioned read/write capacity units (tables and GSIs in PROVISIONED mode)."""

    read: int
    write: int

    def __post_init__(self) -> None:
        if self.read < 1 or self.write < 1:
            raise ModelDefinitionError(
                f"provisioned throughput must be at least 1 RCU and 1 WCU, got {self}"
            )


@frozen_dataclass
class GSI:
    """A global secondary index: its own partition key (and optional sort key) attribute."""

    name: str
    pk: str
    sk: str | None = None
    projection: Projection = field(default_factory=Projection)
    pk_type: KeyType = "S"
    sk_type: KeyType = "S"
    throughput: Throughput | None = None

    @property
    def kind(self) -> Literal["GSI", "LSI"]:
        """``"GSI"``."""
        return "GSI"


@frozen_dataclass
class LSI:
    """A local secondary index: the table's partition key with another sort key attribute.

    LSIs can only be created together with the table.
    """

    name: str
    sk: str
    projection: Projection = field(default_factory=Projection)
    sk_type: KeyType = "S"

    @property
    def kind(self) -> Literal["GSI", "LSI"]:
        """``"LSI"``."""
        return "LSI"


@frozen_dataclass
class KeyPart:
    """One attribute of a native GSI key, with its DynamoDB type if declared.

    ``type=None`` takes the type of the fields that store the attribute (every entity that
    stores it must agree); declare it for a table whose entities are not defined yet.
    """

    attribute: str
    type: KeyType | None = None


def _parts(index: str, role: str, parts: object) -> tuple[KeyPart, ...]:
    if isinstance(parts, (str, KeyPart)):
        parts = (parts,)
    if not isinstance(parts, Sequence):
        raise ModelDefinitionError(
            f"native GSI {index!r}: {role} must be a list of attribute names or KeyParts, "
            f"got {parts!r}"
        )
    result = tuple(KeyPart(p) if isinstance(p, str) else p for p in parts)
    for part in result:
        if not isinstance(part, KeyPart) or not part.attribute:
            raise ModelDefinitionError(
                f"native GSI {index!r}: {role} part {part!r} is not an attribute name"
            )
        if part.type not in (None, "S", "N", "B"):
            raise ModelDefinitionError(
                f"native GSI {index!r}: part {part.attribute!r} has type {part.type!r}; a key "
                "attribute is S, N or B"
            )
    return result


@frozen_dataclass
class NativeGSI:
    """A GSI keyed on the entities' own attributes: DynamoDB's multi-attribute keys.

    The partition key is 1-4 attributes, hashed together; the sort key 0-4 attributes,
    ordered left to right, each by its own type (numbers numerically). An entity feeds the
    index by having fields stored under every part's attribute; an item that lacks one
    of them (an optional field left ``None``) is not in the index. Nothing is written
    for the index itself.

    Args:
        name: The index name.
        pk: The partition key attributes, in order (names or `KeyPart`).
        sk: The sort key attributes, in order.
        projection: What the index copies.
        throughput: Its provisioned capacity (PROVISIONED tables; else the table's).
    """

    name: str
    pk: tuple[KeyPart, ...]
    sk: tuple[KeyPart, ...]
    projection: Projection
    throughput: Throughput | None

    def __init__(
        self,
        name: str,
        pk: Sequence[str | KeyPart] | str,
        sk: Sequence[str | KeyPart] | str = (),
        *,
        projection: Projection | None = None,
        throughput: Throughput | None = None,
    ) -> None:
        pk_parts, sk_parts = _parts(name, "pk", pk), _parts(name, "sk", sk)
        if not 1 <= len(pk_parts) <= MAX_KEY_PARTS or len(sk_parts) > MAX_KEY_PARTS:
            raise ModelDefinitionError(
                f"native GSI {name!r}: {len(pk_parts)} partition and {len(sk_parts)} sort key "
                f"attributes; DynamoDB takes 1-{MAX_KEY_PARTS} and 0-{MAX_KEY_PARTS}"
            )
        names = [p.attribute for p in (*pk_parts, *sk_parts)]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ModelDefinitionError(
                f"native GSI {name!r}: attribute {twice[0]!r} is named twice in its key"
            )
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "pk", pk_parts)
        object.__setattr__(self, "sk", sk_parts)
        object.__setattr__(self, "projection", projection or Projection())
        object.__setattr__(self, "throughput", throughput)

    @property
    def kind(self) -> Literal["GSI", "LSI"]:
        """``"GSI"``."""
        return "GSI"

    @property
    def parts(self) -> tuple[KeyPart, ...]:
        """Every key attribute: partition parts, then sort parts."""
        return self.pk + self.sk


Index = GSI | LSI


@frozen_dataclass
class KeySchema:
    """The key attribute names (and types) of the table or of one index."""

    index: str | None
    pk: str
    sk: str | None
    pk_type: KeyType
    sk_type: KeyType


class Table:
    """A DynamoDB table that holds many entity types under generic key attribute names.

    The entities stored in it are found by `singletable.model.plan.entity_plans` and
    `singletable.model.plan.entity_plan` (by stored name and version).

    Args:
        name: The physical table name.
        pk: Partition key attribute name.
        sk: Sort key attribute name, or ``None`` for a partition-key-only table.
        pk_type: DynamoDB type of the partition key attribute.
        sk_type: DynamoDB type of the sort key attribute.
        delimiter: The character that joins key segments.
        escape: The character that starts an escape sequence inside a key segment; every
            character up to and including it is escaped so that key order is value order.
        indexes: GSIs and LSIs keyed by templates, and native GSIs (`NativeGSI`) keyed
            by the entities' own attributes.
        ttl_attribute: Attribute that DynamoDB's Time To Live reads (epoch seconds).
        billing_mode: ``PAY_PER_REQUEST`` or ``PROVISIONED``.
        throughput: Provisioned capacity (PROVISIONED only).
        stream: Stream view type, or ``None`` for no stream.
        point_in_time_recovery: Enable PITR.
        deletion_protection: Enable deletion protection.
        sse: Encrypt with an AWS managed KMS key (``True``) or DynamoDB's own key (``False``).
        tags: Resource tags.
        entity_attribute: Attribute holding each item's entity name.
        version_attribute: Attribute holding each item's entity schema version.
    """

    def __init__(
        self,
        name: str,
        *,
        pk: str = "PK",
        sk: str | None = "SK",
        pk_type: KeyType = "S",
        sk_type: KeyType = "S",
        delimiter: str = "#",
        escape: str = "%",
        indexes: Iterable[Index | NativeGSI] = (),
        ttl_attribute: str | None = None,
        billing_mode: BillingMode = "PAY_PER_REQUEST",
        throughput: Throughput | None = None,
        stream: StreamView | None = None,
        point_in_time_recovery: bool = False,
        deletion_protection: bool = False,
        sse: bool = False,
        tags: Mapping[str, str] | None = None,
        entity_attribute: str = "_et",
        version_attribute: str = "_ev",
    ) -> None:
        self.name = name
        self.pk = pk
        self.sk = sk
        self.pk_type: KeyType = pk_type
        self.sk_type: KeyType = sk_type
        try:
            self.escaper = SegmentEscaper(delimiter, escape)
        except ModelDefinitionError as exc:  # name the table, as every definition error does
            raise ModelDefinitionError(f"table {name!r}: {exc}") from None
        self.delimiter = delimiter
        self.escape = escape
        self.indexes: dict[str, Index] = {}
        # Apart from the template indexes: they have no key attribute of their own, and
        # every reader of `indexes` expects one pk (and sk) attribute per index.
        self.native_indexes: dict[str, NativeGSI] = {}
        for index in indexes:
            if index.name in self.indexes or index.name in self.native_indexes:
                raise ModelDefinitionError(f"table {name!r}: index {index.name!r} declared twice")
            if isinstance(index, NativeGSI):
                self.native_indexes[index.name] = index
            else:
                self.indexes[index.name] = index
        self.ttl_attribute = ttl_attribute
        self.billing_mode: BillingMode = billing_mode
        self.throughput = throughput
        self.stream: StreamView | None = stream
        self.point_in_time_recovery = point_in_time_recovery
        self.deletion_protection = deletion_protection
        self.sse = sse
        self.tags = dict(tags or {})
        self.entity_attribute = entity_attribute
        self.version_attribute = version_attribute
        self._validate()

    def _validate(self) -> None:
        where = f"table {self.name!r}"
        if not self.name:
            raise ModelDefinitionError("a table needs a name")
        gsis = [i for i in self.indexes.values() if isinstance(i, GSI)]
        lsis = [i for i in self.indexes.values() if isinstance(i, LSI)]
        if len(gsis) + len(self.native_indexes) > MAX_GSIS:
            raise ModelDefinitionError(
                f"{where}: {len(gsis) + len(self.native_indexes)} GSIs declared; DynamoDB's "
                f"default quota is {MAX_GSIS}"
            )
        if len(lsis) > MAX_LSIS:
            raise ModelDefinitionError(
                f"{where}: {len(lsis)} LSIs declared; DynamoDB allows at most {MAX_LSIS}"
            )
        if lsis and self.sk is None:
            raise ModelDefinitionError(
                f"{where}: LSI {lsis[0].name!r} needs a table with a sort key"
            )
        if self.billing_mode == "PROVISIONED" and self.throughput is None:
            raise ModelDefinitionError(
                f"{where}: billing_mode PROVISIONED needs throughput=Throughput(read, write)"
            )
        if self.billing_mode == "PAY_PER_REQUEST" and self.throughput is not None:
            raise ModelDefinitionError(f"{where}: throughput is only for billing_mode PROVISIONED")
        reserved = {self.entity_attribute, self.version_attribute}
        if len(reserved) != 2:
            raise ModelDefinitionError(f"{where}: entity and version attributes must differ")
        # One attribute name must keep one DynamoDB type across the table and all indexes.
        types: dict[str, KeyType] = {}
        for schema in self.key_schemas():
            for attr, typ in ((schema.pk, schema.pk_type), (schema.sk, schema.sk_type)):
                if attr is None:
                    continue
                if attr in reserved:
                    raise ModelDefinitionError(
                        f"{where}: key attribute {attr!r} clashes with the entity bookkeeping "
                        "attributes; rename one of them"
                    )
                if types.setdefault(attr, typ) != typ:
                    raise ModelDefinitionError(
                        f"{where}: attribute {attr!r} is declared as both {types[attr]} and {typ}"
                    )
        for schema in self.key_schemas():
            if schema.index is not None and schema.pk == schema.sk:
                raise ModelDefinitionError(
                    f"{where}: index {schema.index!r} uses {schema.pk!r} as both keys"
                )
        self._validate_native(types, reserved)

    def _validate_native(self, template_keys: Mapping[str, KeyType], reserved: set[str]) -> None:
        """Native parts are attributes the entities' fields store, of one type each."""
        declared: dict[str, KeyType] = {}
        for index in self.native_indexes.values():
            for part in index.parts:
                where = f"table {self.name!r}, native GSI {index.name!r}, part {part.attribute!r}"
                # Template key attributes hold key text built by singletable, never a
                # field's own value, so no entity can feed them to a native key.
                if part.attribute in template_keys or part.attribute in reserved:
                    raise ModelDefinitionError(
                        f"{where}: the attribute is a template key or bookkeeping attribute "
                        "of the table, not one an entity field stores; name a field's attribute"
                    )
                if part.attribute == self.ttl_attribute:
                    raise ModelDefinitionError(f"{where}: the attribute is the TTL attribute")
                if part.type is not None and declared.setdefault(part.attribute, part.type) != (
                    part.type
                ):
                    raise ModelDefinitionError(
                        f"{where}: declared as both {declared[part.attribute]} and {part.type}"
                    )

    def index_names(self) -> list[str]:
        """Every index of the table, template and native, in declaration order."""
        return [*self.indexes, *self.native_indexes]

    def key_schema(self, index: str | None = None) -> KeySchema:
        """The key attributes of the table (``index=None``) or of the named index."""
        if index is None:
            return KeySchema(None, self.pk, self.sk, self.pk_type, self.sk_type)
        try:
            spec = self.indexes[index]
        except KeyError:
            known = ", ".join(sorted(self.indexes)) or "none"
            raise ModelDefinitionError(
                f"table {self.name!r} has no index {index!r} (indexes: {known})"
            ) from None
        if isinstance(spec, GSI):
            return KeySchema(index, spec.pk, spec.sk, spec.pk_type, spec.sk_type)
        return KeySchema(index, self.pk, spec.sk, self.pk_type, spec.sk_type)

    def key_schemas(self) -> list[KeySchema]:
        """The table's key schema followed by every index's, in declaration order."""
        return [self.key_schema(None), *(self.key_schema(n) for n in self.indexes)]

    def key_attributes(self) -> dict[str, KeyType]:
        """Every attribute used in a key of the table or an index, with its type."""
        # What `key_schemas` holds, read off the definitions without building its
        # values: an update asks on every field it writes (benchmarks/README.md). An
        # LSI's partition key is the table's, already here.
        result: dict[str, KeyType] = {self.pk: self.pk_type}
        if self.sk is not None:
            result[self.sk] = self.sk_type
        for index in self.indexes.values():
            if isinstance(index, GSI):
                result[index.pk] = index.pk_type
            if index.sk is not None:
                result[index.sk] = index.sk_type
        return result

    def bookkeeping_attributes(self) -> set[str]:
        """The attributes singletable writes itself; no field may be named after one.

        Every key attribute of the table and its indexes, the entity and version
        attributes, and the TTL attribute.
        """
        names = {*self.key_attributes(), self.entity_attribute, self.version_attribute}
        if self.ttl_attribute is not None:
            names.add(self.ttl_attribute)
        return names

    def __repr__(self) -> str:
        return f"Table({self.name!r}, pk={self.pk!r}, sk={self.sk!r})"
