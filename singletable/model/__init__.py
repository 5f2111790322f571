"""The model: table declarations and each entity class compiled once into a frozen plan.

* `table`: `Table`, `GSI`, `LSI`, `NativeGSI` (multi-attribute keys) and its `KeyPart`,
  `Projection`, `Throughput`.
* `plan`: `EntityPlan` / `KeyPlan` / `FieldPlan`, read by every layer above (requests,
  table definitions, snapshots, the planner, the CLI); nothing re-derives from the class.
  And the registry of the entity plans stored in each table (`entity_plans`,
  `entity_plan`), which `table` (below the plans) does not hold.
* `compile`: class keywords and fields -> `EntityPlan`, with every modelling mistake
  refused at class definition.
* `codegen`: the generated item encoder and decoder of each plan.
* `fields`: ``Entity.f``, typed field references built from a plan.
* `definition`: the table as DynamoDB's CreateTable request.
* `unique`: uniqueness constraints and the guard key shape; `guards`: guards read back.
"""

from typing import TYPE_CHECKING

from singletable.model.plan import (
    EntityPlan,
    FieldPlan,
    IndexKeys,
    KeyPlan,
    NativeKeyPlan,
    NativePart,
    entity_plan,
    entity_plans,
    plan_of,
)
from singletable.model.table import GSI, LSI, KeyPart, NativeGSI, Projection, Table, Throughput
from singletable.types import lazy_names

__all__ = [
    "GSI",
    "LSI",
    "EntityPlan",
    "FieldPlan",
    "IndexKeys",
    "KeyPart",
    "KeyPlan",
    "NativeGSI",
    "NativeKeyPlan",
    "NativePart",
    "Projection",
    "Table",
    "Throughput",
    "create_table_request",
    "entity_plan",
    "entity_plans",
    "plan_of",
]

# The CreateTable request is built on first use (table creation: development, tests and
# tooling; issue 24, cold start).
_LAZY = {"create_table_request": "singletable.model.definition"}

if TYPE_CHECKING:
    from singletable.model.definition import create_table_request


__getattr__, __dir__ = lazy_names(__name__, _LAZY)
