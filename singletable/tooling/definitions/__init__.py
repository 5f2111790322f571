"""Table definitions generated from the model, all rendered from one `TableDefinition`.

`schema` (CloudFormation, JSON/YAML), `cdk` (a Python CDK module of ``TableV2``),
`terraform` (``aws_dynamodb_table`` as ``.tf.json``).
"""

from __future__ import annotations

from singletable.tooling.definitions.cdk import cdk_module
from singletable.tooling.definitions.schema import (
    cloudformation_resource,
    cloudformation_template,
    to_json,
    to_yaml,
)
from singletable.tooling.definitions.terraform import terraform_config

__all__ = [
    "cdk_module",
    "cloudformation_resource",
    "cloudformation_template",
    "terraform_config",
    "to_json",
    "to_yaml",
]
