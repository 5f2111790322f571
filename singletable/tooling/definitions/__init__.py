"""Table definitions generated from the model: `schema` (CloudFormation, ``create_table``)."""

from __future__ import annotations

from singletable.tooling.definitions.schema import (
    cloudformation_resource,
    cloudformation_template,
    to_json,
    to_yaml,
)

__all__ = [
    "cloudformation_resource",
    "cloudformation_template",
    "to_json",
    "to_yaml",
]
