"""Table definitions generated from the model, all rendered from one `TableDefinition`.

`schema` (CloudFormation, JSON/YAML), `cdk` (a Python CDK module of ``TableV2``),
`terraform` (``aws_dynamodb_table`` as ``.tf.json``); NoSQL Workbench data models out
(`workbench`) and entity skeletons in (`workbench_import`).
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
from singletable.tooling.definitions.workbench import sample_items, workbench_model
from singletable.tooling.definitions.workbench_import import workbench_import

__all__ = [
    "cdk_module",
    "cloudformation_resource",
    "cloudformation_template",
    "sample_items",
    "terraform_config",
    "to_json",
    "to_yaml",
    "workbench_import",
    "workbench_model",
]
