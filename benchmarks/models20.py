"""A 20-entity single-table model as source text: singletable, plain pydantic, PynamoDB.

bench_overheads times defining it in a fresh interpreter (what a Lambda cold start pays
for its model). The entities are varied and realistic (a SaaS shop: tenants, users,
orders, lines, invoices, tickets...), share one table with three GSIs, and use every
common field type: text, ints, floats, Decimals, bools, datetimes, dates, UUIDs, lists,
sets, maps of text, optional fields and a nested model. The same fields make the 20 plain
pydantic models, and the same keys and indexes the PynamoDB models (where a field type
has no PynamoDB attribute of its own, the attribute that stores it: a date as text).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Field type -> (PynamoDB attribute, pydantic annotation); "?" after a type: optional.
_PYNAMO = {
    "str": "UnicodeAttribute()",
    "int": "NumberAttribute()",
    "float": "NumberAttribute()",
    "Decimal": "NumberAttribute()",
    "bool": "BooleanAttribute()",
    "datetime": "UTCDateTimeAttribute()",
    "date": "UnicodeAttribute()",
    "UUID": "UnicodeAttribute()",
    "list[str]": "ListAttribute(of=UnicodeAttribute)",
    "set[str]": "UnicodeSetAttribute()",
    "dict[str, str]": "MapAttribute()",
    "Address": "AddressAttribute()",
}


@dataclass(frozen=True)
class Spec:
    """One entity: name, key templates, index templates and fields (name -> type)."""

    name: str
    pk: str
    sk: str
    fields: dict[str, str]
    indexes: dict[str, tuple[str, str]] = field(default_factory=dict)


ENTITIES = [
    Spec(
        "Tenant",
        "TENANT#{tenant_id}",
        "PROFILE",
        {
            "tenant_id": "str",
            "name": "str",
            "tier": "str",
            "created": "datetime",
            "seats": "int",
            "active": "bool",
            "domain": "str?",
        },
    ),
    Spec(
        "User",
        "TENANT#{tenant_id}",
        "USER#{user_id}",
        {
            "tenant_id": "str",
            "user_id": "UUID",
            "email": "str",
            "name": "str",
            "roles": "set[str]",
            "joined": "datetime",
            "last_login": "datetime?",
        },
        {"GSI1": ("EMAIL#{email}", "USER")},
    ),
    Spec(
        "Customer",
        "TENANT#{tenant_id}",
        "CUST#{customer_id}",
        {
            "tenant_id": "str",
            "customer_id": "str",
            "name": "str",
            "email": "str",
            "address": "Address",
            "billing": "Address?",
            "tags": "list[str]",
            "credit": "Decimal",
        },
        {"GSI1": ("EMAIL#{email}", "CUST#{customer_id}")},
    ),
    Spec(
        "Product",
        "TENANT#{tenant_id}",
        "PRODUCT#{sku}",
        {
            "tenant_id": "str",
            "sku": "str",
            "title": "str",
            "price": "Decimal",
            "weight_kg": "float",
            "categories": "set[str]",
            "attributes": "dict[str, str]",
            "discontinued": "bool",
        },
        {"GSI2": ("CAT#{tenant_id}", "PRODUCT#{title}")},
    ),
    Spec(
        "Inventory",
        "PRODUCT#{sku}",
        "WH#{warehouse_id}",
        {
            "sku": "str",
            "warehouse_id": "str",
            "on_hand": "int",
            "reserved": "int",
            "reorder_at": "int",
            "counted": "datetime",
        },
    ),
    Spec(
        "Warehouse",
        "TENANT#{tenant_id}",
        "WH#{warehouse_id}",
        {
            "tenant_id": "str",
            "warehouse_id": "str",
            "name": "str",
            "address": "Address",
            "capacity": "int",
            "open": "bool",
        },
    ),
    Spec(
        "Order",
        "CUST#{customer_id}",
        "ORDER#{placed}#{order_id}",
        {
            "customer_id": "str",
            "order_id": "str",
            "placed": "datetime",
            "status": "str",
            "total": "Decimal",
            "currency": "str",
            "shipping": "Address",
            "note": "str?",
            "coupon": "str?",
        },
        {
            "GSI1": ("ORDER#{order_id}", "ORDER"),
            "GSI2": ("STATUS#{status}", "{placed}#{order_id}"),
        },
    ),
    Spec(
        "OrderLine",
        "ORDER#{order_id}",
        "LINE#{line_no}",
        {
            "order_id": "str",
            "line_no": "int",
            "sku": "str",
            "quantity": "int",
            "unit_price": "Decimal",
            "discount": "Decimal?",
            "gift": "bool",
        },
        {"GSI1": ("PRODUCT#{sku}", "ORDER#{order_id}")},
    ),
    Spec(
        "Shipment",
        "ORDER#{order_id}",
        "SHIP#{shipment_id}",
        {
            "order_id": "str",
            "shipment_id": "UUID",
            "carrier": "str",
            "tracking": "str?",
            "shipped": "datetime?",
            "delivered": "datetime?",
            "parcels": "int",
            "weight_kg": "float",
        },
        {"GSI3": ("CARRIER#{carrier}", "SHIP#{shipment_id}")},
    ),
    Spec(
        "Invoice",
        "CUST#{customer_id}",
        "INV#{issued}#{invoice_id}",
        {
            "customer_id": "str",
            "invoice_id": "str",
            "issued": "date",
            "due": "date",
            "amount": "Decimal",
            "tax": "Decimal",
            "paid": "bool",
            "lines": "list[str]",
        },
        {"GSI2": ("INV#{invoice_id}", "INV")},
    ),
    Spec(
        "Payment",
        "INV#{invoice_id}",
        "PAY#{paid_at}",
        {
            "invoice_id": "str",
            "paid_at": "datetime",
            "amount": "Decimal",
            "method": "str",
            "reference": "str",
            "refunded": "bool",
        },
    ),
    Spec(
        "Refund",
        "PAY#{payment_ref}",
        "REFUND#{refund_id}",
        {
            "payment_ref": "str",
            "refund_id": "UUID",
            "amount": "Decimal",
            "reason": "str",
            "requested": "datetime",
            "approved_by": "str?",
        },
    ),
    Spec(
        "Review",
        "PRODUCT#{sku}",
        "REVIEW#{created}#{user_id}",
        {
            "sku": "str",
            "user_id": "str",
            "created": "datetime",
            "rating": "int",
            "title": "str",
            "body": "str",
            "helpful": "int",
            "verified": "bool",
        },
        {"GSI1": ("USER#{user_id}", "REVIEW#{created}")},
    ),
    Spec(
        "Cart",
        "USER#{user_id}",
        "CART",
        {
            "user_id": "str",
            "skus": "list[str]",
            "quantities": "dict[str, str]",
            "updated": "datetime",
            "coupon": "str?",
        },
    ),
    Spec(
        "Coupon",
        "TENANT#{tenant_id}",
        "COUPON#{code}",
        {
            "tenant_id": "str",
            "code": "str",
            "percent_off": "float",
            "expires": "date",
            "max_uses": "int",
            "used": "int",
            "products": "set[str]",
        },
    ),
    Spec(
        "Subscription",
        "TENANT#{tenant_id}",
        "SUB#{subscription_id}",
        {
            "tenant_id": "str",
            "subscription_id": "str",
            "tier": "str",
            "started": "date",
            "renews": "date",
            "price": "Decimal",
            "cancelled": "bool",
            "seats": "int",
        },
        {"GSI3": ("RENEW#{renews}", "SUB#{subscription_id}")},
    ),
    Spec(
        "Session",
        "USER#{user_id}",
        "SESSION#{session_id}",
        {
            "user_id": "str",
            "session_id": "UUID",
            "created": "datetime",
            "expires": "datetime",
            "ip": "str",
            "user_agent": "str",
            "mfa": "bool",
        },
    ),
    Spec(
        "AuditEvent",
        "TENANT#{tenant_id}",
        "EVT#{ts}#{seq}",
        {
            "tenant_id": "str",
            "ts": "datetime",
            "seq": "int",
            "actor": "str",
            "action": "str",
            "target": "str",
            "details": "dict[str, str]",
            "ip": "str?",
        },
        {"GSI2": ("ACTOR#{actor}", "EVT#{ts}#{seq}")},
    ),
    Spec(
        "Ticket",
        "TENANT#{tenant_id}",
        "TICKET#{ticket_id}",
        {
            "tenant_id": "str",
            "ticket_id": "str",
            "subject": "str",
            "status": "str",
            "priority": "int",
            "opened": "datetime",
            "assignee": "str?",
            "labels": "set[str]",
        },
        {
            "GSI1": ("ASSIGNEE#{assignee}", "TICKET#{opened}"),
            "GSI3": ("TSTATUS#{status}", "TICKET#{opened}"),
        },
    ),
    Spec(
        "Comment",
        "TICKET#{ticket_id}",
        "COMMENT#{posted}",
        {
            "ticket_id": "str",
            "posted": "datetime",
            "author": "str",
            "body": "str",
            "internal": "bool",
            "attachments": "list[str]",
        },
    ),
]

_IMPORTS = (
    "from __future__ import annotations\n"
    "from datetime import date, datetime\n"
    "from decimal import Decimal\n"
    "from uuid import UUID\n"
)
_ADDRESS = (
    "class Address(BaseModel):\n"
    "    street: str\n    city: str\n    postcode: str\n    country: str\n\n\n"
)


def _annotation(kind: str) -> str:
    return f"{kind[:-1]} | None = None" if kind.endswith("?") else kind


def _body(spec: Spec) -> str:
    return "".join(f"    {name}: {_annotation(kind)}\n" for name, kind in spec.fields.items())


def singletable_source() -> str:
    """The 20 entities on one table with three GSIs (the module a handler imports)."""
    indexes = ", ".join(f'GSI("GSI{n}", pk="GSI{n}PK", sk="GSI{n}SK")' for n in (1, 2, 3))
    out = [
        _IMPORTS,
        "from pydantic import BaseModel\n",
        "from singletable import GSI, Entity, IndexKeys, Table\n\n",
        f'app = Table("app", indexes=[{indexes}])\n\n\n',
        _ADDRESS,
    ]
    for spec in ENTITIES:
        indexes = ", ".join(
            f'"{name}": IndexKeys(pk="{pk}", sk="{sk}")' for name, (pk, sk) in spec.indexes.items()
        )
        extra = f", indexes={{{indexes}}}" if indexes else ""
        out.append(
            f'class {spec.name}(Entity, table=app, pk="{spec.pk}", sk="{spec.sk}"{extra}):\n'
            f"{_body(spec)}\n\n"
        )
    return "".join(out)


_SAMPLE = {
    "str": "'v1'",
    "int": "7",
    "float": "1.5",
    "Decimal": "Decimal('9.99')",
    "bool": "True",
    "datetime": "datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)",
    "date": "date(2026, 1, 2)",
    "UUID": "UUID(int=1)",
    "list[str]": "['a', 'b']",
    "set[str]": "{'a', 'b'}",
    "dict[str, str]": "{'k': 'v'}",
    "Address": "Address(street='1 Main St', city='Springfield', postcode='12345', country='US')",
}


def samples_source() -> str:
    """``SAMPLES``: one instance of each entity (every field set), after `singletable_source`."""
    out = ["from datetime import timezone\n\nSAMPLES = [\n"]
    for spec in ENTITIES:
        fields = spec.fields.items()
        values = ", ".join(f"{name}={_SAMPLE[kind.rstrip('?')]}" for name, kind in fields)
        out.append(f"    {spec.name}({values}),\n")
    out.append("]\n")
    return "".join(out)


def pydantic_source() -> str:
    """The same 20 models as plain pydantic models."""
    out = [_IMPORTS, "from pydantic import BaseModel\n\n\n", _ADDRESS]
    out.extend(f"class {spec.name}(BaseModel):\n{_body(spec)}\n\n" for spec in ENTITIES)
    return "".join(out)


def pynamodb_source() -> str:
    """The same 20 entities as PynamoDB models: ``PK``/``SK`` and GSI key attributes."""
    out = [
        "from pynamodb.attributes import (BooleanAttribute, ListAttribute, MapAttribute,\n"
        "    NumberAttribute, UnicodeAttribute, UnicodeSetAttribute, UTCDateTimeAttribute)\n"
        "from pynamodb.indexes import AllProjection, GlobalSecondaryIndex\n"
        "from pynamodb.models import Model\n\n\n"
        "class AddressAttribute(MapAttribute):\n"
        "    street = UnicodeAttribute()\n    city = UnicodeAttribute()\n"
        "    postcode = UnicodeAttribute()\n    country = UnicodeAttribute()\n\n\n"
    ]
    for n in (1, 2, 3):
        out.append(
            f"class GSI{n}(GlobalSecondaryIndex):\n"
            f"    class Meta:\n        index_name = 'GSI{n}'\n"
            "        projection = AllProjection()\n"
            f"    pk = UnicodeAttribute(hash_key=True, attr_name='GSI{n}PK')\n"
            f"    sk = UnicodeAttribute(range_key=True, attr_name='GSI{n}SK')\n\n\n"
        )
    for spec in ENTITIES:
        lines = [
            f"class {spec.name}(Model):\n",
            "    class Meta:\n        table_name = 'app'\n        region = 'us-east-1'\n",
            "    pk = UnicodeAttribute(hash_key=True, attr_name='PK')\n",
            "    sk = UnicodeAttribute(range_key=True, attr_name='SK')\n",
        ]
        for index in spec.indexes:
            number = index[-1]
            lines.append(
                f"    gsi{number}pk = UnicodeAttribute(null=True, attr_name='{index}PK')\n"
            )
            lines.append(
                f"    gsi{number}sk = UnicodeAttribute(null=True, attr_name='{index}SK')\n"
            )
            lines.append(f"    gsi{number} = {index}()\n")
        for name, kind in spec.fields.items():
            attribute = _PYNAMO[kind.rstrip("?")]
            if kind.endswith("?"):
                attribute = attribute.replace("()", "(null=True)").replace(
                    "UnicodeAttribute)", "UnicodeAttribute, null=True)"
                )
            lines.append(f"    {name} = {attribute}\n")
        out.append("".join(lines) + "\n\n")
    return "".join(out)
