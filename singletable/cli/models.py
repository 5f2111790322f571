"""``singletable synth``, ``snapshot``, ``plan`` and ``lint``: the model, without a table."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from singletable.cli.codes import EXIT_CODES_HELP
from singletable.cli.common import (
    MODEL_HELP,
    CLIError,
    Subcommands,
    import_ref,
    load_model,
    positive_int,
    read_snapshot_file,
)


def add_synth(sub: Subcommands) -> None:
    """``synth``: the table definition."""
    p = sub.add_parser(
        "synth",
        help="print the table definition (CloudFormation JSON/YAML, create_table, CDK, Terraform)",
        description="Print the table definition generated from the model.",
    )
    p.add_argument("model", help=MODEL_HELP)
    p.add_argument(
        "--format",
        choices=["json", "yaml", "create-table", "cdk", "terraform"],
        default="json",
        help="json/yaml: a CloudFormation template with one AWS::DynamoDB::Table per table; "
        "create-table: the boto3 create_table request(s) as JSON; cdk: a Python CDK module "
        "(TableV2); terraform: aws_dynamodb_table resources as .tf.json (default: json)",
    )
    p.set_defaults(func=_cmd_synth)


def _cmd_synth(args: argparse.Namespace, out: TextIO) -> int:
    from singletable.model.definition import create_table_request
    from singletable.tooling.definitions.cdk import cdk_module
    from singletable.tooling.definitions.schema import cloudformation_template, to_json, to_yaml
    from singletable.tooling.definitions.terraform import terraform_config

    tables = load_model(args.model)
    if args.format == "cdk":
        out.write(cdk_module(tables))
    elif args.format == "terraform":
        out.write(to_json(terraform_config(tables)))
    elif args.format == "create-table":
        requests = [create_table_request(t) for t in tables]
        out.write(to_json(requests[0] if len(requests) == 1 else requests))
    elif args.format == "yaml":
        out.write(to_yaml(cloudformation_template(tables)))
    else:
        out.write(to_json(cloudformation_template(tables)))
    return 0


def add_snapshot(sub: Subcommands) -> None:
    """``snapshot``: the model snapshot."""
    p = sub.add_parser(
        "snapshot",
        help="write the model snapshot (commit it next to the code)",
        description="Describe everything the model writes into stored items (key templates, "
        "codec parameters, entity identifiers, indexes) as deterministic JSON.",
    )
    p.add_argument("model", help=MODEL_HELP)
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=_cmd_snapshot)


def _cmd_snapshot(args: argparse.Namespace, out: TextIO) -> int:
    from singletable.tooling.migrations.snapshot import snapshot_json

    text = snapshot_json(load_model(args.model))
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        out.write(text)
    return 0


def add_plan(sub: Subcommands) -> None:
    """``plan``: the model against a snapshot, classified."""
    p = sub.add_parser(
        "plan",
        help="compare the model with a snapshot and classify every change",
        description="Compare the current model with a committed snapshot and list every "
        "change with its class and reason. The exit code is that of the worst change, so CI "
        "can gate on it.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("model", help=MODEL_HELP)
    p.add_argument("snapshot", help="the snapshot file the stored data was written with")
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    p.set_defaults(func=_cmd_plan)


def _cmd_plan(args: argparse.Namespace, out: TextIO) -> int:
    from singletable.tooling.migrations.planner import plan_changes

    tables = load_model(args.model)
    plan = plan_changes(tables, read_snapshot_file(args.snapshot))
    out.write(plan.to_json() if args.json else plan.to_text())
    return plan.exit_code


def add_lint(sub: Subcommands) -> None:
    """``lint``: hot-partition warnings."""
    p = sub.add_parser(
        "lint",
        help="warn about partition keys that can take only a few values (hot partitions)",
        description="Check every partition key template (table and GSIs) for a low number of "
        "possible values (built only from bools, enums, Literals, dates or constants), and "
        "estimate the load per key for a request rate against DynamoDB's per-partition "
        "limits (3,000 RCU and 1,000 WCU per second). Exit code: 0 clean, 1 warnings, 2 the "
        "given rate exceeds a partition's limit.",
    )
    p.add_argument("model", help=MODEL_HELP)
    p.add_argument(
        "--writes-per-second", type=float, help="expected writes per second (whole table)"
    )
    p.add_argument("--reads-per-second", type=float, help="expected reads per second (whole table)")
    p.set_defaults(func=_cmd_lint)


def _cmd_lint(args: argparse.Namespace, out: TextIO) -> int:
    from singletable.tooling.cost.lint import lint_report

    text, code = lint_report(
        load_model(args.model),
        writes_per_second=args.writes_per_second,
        reads_per_second=args.reads_per_second,
    )
    out.write(text if text.endswith("\n") else text + "\n")
    return code


def add_workbench(sub: Subcommands) -> None:
    """``workbench export`` / ``workbench import``: NoSQL Workbench data models."""
    p = sub.add_parser(
        "workbench",
        help="write a NoSQL Workbench data model, or entity skeletons from one",
        description="NoSQL Workbench (AWS's data modeller) data models: export writes the "
        "model's tables with one facet per entity (key aliases are the key templates) and "
        "sample items; import writes entity class skeletons from a Workbench model.",
    )
    wsub = p.add_subparsers(dest="workbench_command", required=True, metavar="COMMAND")
    e = wsub.add_parser("export", help="write the model as a Workbench data model (JSON)")
    e.add_argument("model", help=MODEL_HELP)
    e.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    items = e.add_mutually_exclusive_group()
    items.add_argument(
        "--items",
        metavar="REF",
        help="sample data: module:function returning entity instances (e.g. "
        "singletable.examples:sample_items)",
    )
    items.add_argument(
        "--sample", type=positive_int, metavar="N", help="sample data: N generated items per entity"
    )
    e.set_defaults(func=_cmd_workbench_export)
    i = wsub.add_parser("import", help="write entity class skeletons from a Workbench model")
    i.add_argument("file", help="the Workbench data model (JSON)")
    i.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    i.set_defaults(func=_cmd_workbench_import)


def _write(text: str, output: str | None, out: TextIO) -> None:
    if output:
        Path(output).write_text(text, encoding="utf-8")
        print(f"wrote {output}", file=sys.stderr)
    else:
        out.write(text)


def _sample_objects(ref: str) -> list[Any]:
    module_ref, sep, attr = ref.rpartition(":")
    if not sep:
        raise CLIError(f"--items {ref!r}: name a function as module:function")
    value = getattr(import_ref(module_ref), attr, None)
    if value is None:
        raise CLIError(f"--items: module {module_ref!r} has no attribute {attr!r}")
    return list(value() if callable(value) else value)


def _cmd_workbench_export(args: argparse.Namespace, out: TextIO) -> int:
    from singletable.tooling.definitions.schema import to_json
    from singletable.tooling.definitions.workbench import sample_items, workbench_model

    tables = load_model(args.model)
    if args.items:
        items = _sample_objects(args.items)
    elif args.sample:
        items = sample_items(tables, args.sample)
    else:
        items = []
    _write(to_json(workbench_model(tables, items=items)), args.output, out)
    return 0


def _cmd_workbench_import(args: argparse.Namespace, out: TextIO) -> int:
    from singletable.tooling.definitions.workbench_import import workbench_import

    try:
        doc = json.loads(Path(args.file).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CLIError(f"cannot read {args.file}: {exc}") from None
    _write(workbench_import(doc), args.output, out)
    return 0
