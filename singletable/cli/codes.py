"""The exit codes of the ``singletable`` command, one per kind of outcome.

Each failure prints one line on stderr (``singletable COMMAND: error: ...``) and exits
with its own code, so scripts and CI can tell "the endpoint is down" from "some items
could not be rewritten" without parsing text.
"""

from __future__ import annotations

import enum

from singletable.errors import (
    ConfigurationError,
    EndpointError,
    LoadError,
    MigrationError,
    ServiceError,
    SingleTableError,
    SnapshotError,
)


class ExitCode(enum.IntEnum):
    """Exit codes (3 to 6 are `plan`'s change classes, see ``ChangeClass.exit_code``)."""

    OK = 0
    #: migrate: some items could not be rewritten (with --dry-run: would fail); load:
    #: stopped with items not written; export: items skipped (not exported); unique
    #: check: guards out of step with the items (not repaired).
    ITEMS_FAILED = 1
    #: Bad arguments, a model reference that does not load, a bad model.
    USAGE = 2
    #: The snapshot file is unreadable or malformed.
    BAD_SNAPSHOT = 7
    #: No AWS region (or no credentials) in the arguments or the environment.
    NO_AWS_CONFIGURATION = 8
    #: The DynamoDB endpoint could not be reached.
    ENDPOINT_UNREACHABLE = 9
    #: migrate refused the plan: a table migration, a transform missing, an index change
    #: that timed out, a checkpoint of another migration.
    MIGRATION_REFUSED = 10
    #: DynamoDB answered a request with an error (access denied, missing table, ...).
    DYNAMODB_ERROR = 11
    #: migrate: a TTL switch waits for DynamoDB's one-change-per-hour limit; re-run later.
    TTL_PENDING = 12
    #: load: the input file has invalid lines (nothing was written).
    BAD_INPUT = 13
    #: check-deployed: the deployed table differs from the model, and deploying the model's
    #: definition fixes it (safe differences only: a setting, a missing table).
    DRIFT = 14


def code_for(exc: SingleTableError) -> ExitCode:
    """The exit code for an error that ends a command."""
    if isinstance(exc, SnapshotError):
        return ExitCode.BAD_SNAPSHOT
    if isinstance(exc, ConfigurationError):
        return ExitCode.NO_AWS_CONFIGURATION
    if isinstance(exc, EndpointError):
        return ExitCode.ENDPOINT_UNREACHABLE
    if isinstance(exc, LoadError):
        return ExitCode.ITEMS_FAILED
    if isinstance(exc, MigrationError):
        return ExitCode.MIGRATION_REFUSED
    if isinstance(exc, ServiceError):
        return ExitCode.DYNAMODB_ERROR
    return ExitCode.USAGE


#: The table printed in ``--help`` of plan, migrate, load, export and unique check.
EXIT_CODES_HELP = """exit codes:
  0  success (plan: nothing unsafe, only safe changes or none; check-deployed: no drift)
  1  migrate: some items could not be rewritten (--dry-run: would fail);
     load: stopped with items not written (the message says which);
     export: items skipped, not exported (counted by reason; --rejects keeps them);
     unique check: guards out of step with the items, left (listed; --repair)
  2  usage error (bad arguments or model reference)
  3  plan: online index change (add/remove/rebuild a GSI: UpdateTable, backfill)
  4  plan: item rewrite (stored items no longer match their key templates)
  5  plan: breaking for reads (some stored items stop decoding)
  6  plan: table migration (key schema or LSI change, needs a new table)
  7  bad snapshot file (unreadable or malformed)
  8  no AWS region or credentials (--region, AWS_REGION, a profile)
  9  DynamoDB endpoint unreachable
 10  migrate refused: table migration, missing --transform, index change timed out,
     checkpoint of another migration
 11  DynamoDB refused a request (access denied, table missing, ...)
 12  migrate: TTL switch pending (one TTL change per table per hour): run again later
 13  load: invalid lines in the input file (each listed; nothing was written)
 14  check-deployed: the deployed table differs from the model in what deploying the
     definition fixes (a setting, a missing table); 3-6 when the worst difference is of
     that plan class (a missing GSI: 3, a key schema: 6)
"""
