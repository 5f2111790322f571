"""The table-level steps of a migration: tables created, GSIs changed, TTL switched.

* **Index changes** (``create_gsi``, ``delete_gsi``, ``recreate_gsi`` actions): one
  UpdateTable per GSI, as DynamoDB requires, each followed by waiting until the table and
  every index are ACTIVE again. Every step first looks at the live table, so a re-run
  skips what is already done. A native GSI is created like a template one, its parts
  listed in order with their types; DynamoDB backfills it from the stored attributes.
* **TTL switches** (``switch_ttl`` actions): once the items carry the new TTL attribute
  next to the old one, the table's TTL setting is moved to it (UpdateTimeToLive).
  DynamoDB takes one TTL change per table per hour: when it refuses the second step the
  run reports the switch as pending; run ``migrate`` again after the hour to finish it.

Every request is an operation (`singletable.operations.tables`, or `Request` for the
UpdateTable and TTL calls), sent through the executor's ``execute``.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping
from typing import Any, TextIO

from singletable.errors import MigrationError, ServiceError
from singletable.model.definition import attribute_definitions, gsi_request
from singletable.model.table import GSI, NativeGSI, Table
from singletable.operations.protocol import Call, Executor, Operation, Step
from singletable.operations.tables import CreateTable, DescribeTable
from singletable.tooling.migrations.planner import MigrationPlan

#: One TTL change per table per hour (UpdateTimeToLive), as output and docs state it.
TTL_LIMIT_NOTE = "DynamoDB allows one TTL change per table per hour"


class Request(Operation[dict[str, Any]]):
    """One table-level request (UpdateTable, UpdateTimeToLive...), its response returned."""

    def __init__(self, action: str, params: dict[str, Any]) -> None:
        self.call = action
        self.request = params

    def params(self) -> dict[str, Any]:
        """The request."""
        return self.request

    def steps(self) -> Step[dict[str, Any]]:
        """One call."""
        response: dict[str, Any] = yield Call(self.call, self.request)
        return response


class TableSteps:
    """Looks at the live tables and changes them (see the module docs)."""

    def __init__(
        self, db: Executor, out: TextIO, poll: float, timeout: float, *, dry_run: bool
    ) -> None:
        self.db = db
        self.out = out
        self.poll = poll
        self.timeout = timeout
        self.dry_run = dry_run

    def describe(self, table: Table) -> dict[str, Any] | None:
        """The live table's description, or None if it does not exist."""
        try:
            described: dict[str, Any] = self.db.execute(DescribeTable(table))
        except ServiceError as exc:
            if exc.code == "ResourceNotFoundException":
                return None
            raise
        return described

    def item_count(self, table: Table) -> int | None:
        """DynamoDB's (approximate, refreshed about every six hours) item count."""
        described = self.describe(table)
        return None if described is None else described.get("ItemCount")

    def apply_plan(
        self, plan: MigrationPlan, tables: Mapping[str, Table]
    ) -> tuple[list[str], dict[str, tuple[str, str]]]:
        """Look at every live table, then take the plan's table-level steps (tables, GSIs).

        Every table is looked at even when there is nothing to do: a wrong endpoint, region
        or table name must not pass for "nothing to do".

        Returns:
            The steps taken (in a dry run: that would be), and per table the (old, new)
            attribute of its TTL switch, left for `switch_ttls` once the items carry it.

        Raises:
            MigrationError: A table the plan does not create does not exist, or an index
                change timed out.
        """
        created = {c.table for c in plan.changes if (c.action or {}).get("op") == "create_table"}
        for table in tables.values():
            if table.name not in created and self.describe(table) is None:
                raise MigrationError(
                    f"table {table.name} does not exist at this endpoint/region; check "
                    "--endpoint-url/--region, or create it (deploy the template)"
                )
        done: list[str] = []
        ttl_switches: dict[str, tuple[str, str]] = {}
        for change in plan.changes:
            action = change.action
            if action is None or action["op"] in ("rewrite", "backfill_unique"):
                continue
            if action["op"] == "switch_ttl":
                ttl_switches[change.table] = (action["old"], action["new"])
                continue
            done.extend(self.apply(tables[change.table], action))
        return done, ttl_switches

    def switch_ttls(
        self,
        tables: Mapping[str, Table],
        switches: Mapping[str, tuple[str, str]],
        failed: Collection[str],
    ) -> tuple[list[str], list[str]]:
        """Take each TTL switch (`switch_ttl`) but on the ``failed`` tables: (done, pending).

        A table whose items could not all be rewritten keeps its TTL attribute: not every
        item carries the new one yet.
        """
        done: list[str] = []
        pending: list[str] = []
        for table_name, (old_attr, new_attr) in switches.items():
            if table_name in failed:
                pending.append(
                    f"table {table_name}: TTL stays on {old_attr!r}: some items could not be "
                    f"rewritten, so not every item carries {new_attr!r} yet"
                )
                continue
            steps, later = self.switch_ttl(tables[table_name], old_attr, new_attr)
            done.extend(steps)
            pending.extend(later)
        return done, pending

    def switch_ttl(self, table: Table, old: str, new: str) -> tuple[list[str], list[str]]:
        """Move the table's TTL setting from ``old`` to ``new``: (steps done, pending)."""
        if self.dry_run:
            return [
                f"would switch TTL on {table.name} from {old!r} to {new!r} (disable, then "
                f"enable; {TTL_LIMIT_NOTE}, so the second step may need a re-run an hour "
                "later; items keep both attributes meanwhile)"
            ], []
        described = self.db.execute(Request("describe_time_to_live", {"TableName": table.name}))
        ttl = described.get("TimeToLiveDescription", {})
        status, attribute = ttl.get("TimeToLiveStatus", "DISABLED"), ttl.get("AttributeName")
        steps: list[str] = []
        if status in ("ENABLED", "ENABLING") and attribute == new:
            return [f"TTL on {table.name} already reads {new!r}"], []
        if status in ("ENABLED", "ENABLING"):
            try:
                self.set_ttl(table, attribute or old, enabled=False)
            except ServiceError as exc:
                if exc.code != "ValidationException":
                    raise
                return steps, [self.pending(table, old, new, exc, disabled=False)]
            steps.append(f"TTL on {table.name} disabled on {attribute or old!r}")
        try:
            self.set_ttl(table, new, enabled=True)
        except ServiceError as exc:
            if exc.code != "ValidationException":
                raise
            return steps, [self.pending(table, old, new, exc, disabled=True)]
        steps.append(f"TTL on {table.name} enabled on {new!r} ({TTL_LIMIT_NOTE})")
        return steps, []

    def set_ttl(self, table: Table, attribute: str, *, enabled: bool) -> None:
        """One UpdateTimeToLive."""
        self.say(f"{'enabling' if enabled else 'disabling'} TTL on {table.name} ({attribute!r})")
        spec = {"Enabled": enabled, "AttributeName": attribute}
        self.db.execute(
            Request(
                "update_time_to_live", {"TableName": table.name, "TimeToLiveSpecification": spec}
            )
        )

    @staticmethod
    def pending(table: Table, old: str, new: str, exc: ServiceError, *, disabled: bool) -> str:
        """Why a TTL switch waits, and what to do."""
        state = (
            f"TTL is disabled (was {old!r}); nothing expires until it is enabled on {new!r}"
            if disabled
            else f"TTL still reads {old!r}"
        )
        return (
            f"table {table.name}: {state}. DynamoDB refused the change ({exc.message}): "
            f"{TTL_LIMIT_NOTE}; run migrate again after the hour to finish the switch"
        )

    def live_gsis(self, table: Table) -> dict[str, dict[str, Any]]:
        """The live table's GSIs, by name."""
        described = self.describe(table) or {}
        return {g["IndexName"]: g for g in described.get("GlobalSecondaryIndexes", [])}

    def apply(self, table: Table, action: Mapping[str, Any]) -> list[str]:
        """Carry out one table-level action; the steps taken (or, dry, to take)."""
        op = action["op"]
        if op == "create_table":
            if self.describe(table) is not None:
                return []
            if not self.dry_run:
                self.say(f"creating table {table.name}")
                self.db.execute(CreateTable(table))
            return [f"create table {table.name}"]
        name = action["index"]
        live = self.live_gsis(table)
        steps: list[str] = []
        stale = name in live and (
            op == "delete_gsi"
            or (op == "recreate_gsi" and not self.matches(table, name, live[name]))
        )
        if stale:
            steps.append(f"delete GSI {name} on {table.name}")
            if not self.dry_run:
                self.update(table, {"Delete": {"IndexName": name}}, [])
            live.pop(name)
        if op in ("create_gsi", "recreate_gsi") and name not in live:
            steps.append(f"create GSI {name} on {table.name} (backfills)")
            if not self.dry_run:
                self.create_gsi(table, name)
        return steps

    @staticmethod
    def gsi(table: Table, name: str) -> dict[str, Any]:
        """The model's GSI ``name`` (template or native) as an index creation entry."""
        index = table.indexes.get(name) or table.native_indexes.get(name)
        if not isinstance(index, (GSI, NativeGSI)):
            raise MigrationError(f"table {table.name}: the model declares no GSI {name!r}")
        return gsi_request(table, index)

    def matches(self, table: Table, name: str, live: Mapping[str, Any]) -> bool:
        """Whether the live GSI has the model's key schema and projection."""
        want = self.gsi(table, name)
        have_proj = live.get("Projection", {})
        want_proj = want["Projection"]
        return bool(
            live.get("KeySchema") == want["KeySchema"]
            and have_proj.get("ProjectionType") == want_proj["ProjectionType"]
            and sorted(have_proj.get("NonKeyAttributes", []))
            == sorted(want_proj.get("NonKeyAttributes", []))
        )

    def create_gsi(self, table: Table, name: str) -> None:
        """Create one GSI as the model defines it (a native one lists every part, typed)."""
        entry = self.gsi(table, name)
        attrs = {k["AttributeName"] for k in entry["KeySchema"]}
        definitions = [
            {"AttributeName": attribute, "AttributeType": kind}
            for attribute, kind in attribute_definitions(table).items()
            if attribute in attrs
        ]
        self.update(table, {"Create": entry}, definitions)

    def update(self, table: Table, update: dict[str, Any], definitions: list[Any]) -> None:
        """One GSI change (UpdateTable), then wait for it to settle."""
        what = "creating" if "Create" in update else "deleting"
        name = next(iter(update.values()))["IndexName"]
        self.say(f"{what} GSI {name} on {table.name}")
        params: dict[str, Any] = {"TableName": table.name, "GlobalSecondaryIndexUpdates": [update]}
        if definitions:
            params["AttributeDefinitions"] = definitions
        self.db.execute(Request("update_table", params))
        self.wait(table, name, gone="Delete" in update)

    def wait(self, table: Table, name: str, *, gone: bool) -> None:
        """Poll until the table and every index are ACTIVE and the GSI is there (or gone)."""
        # DynamoDB takes one index change at a time: the next UpdateTable must wait until
        # the table and every index are ACTIVE (a new GSI stays CREATING while it backfills).
        deadline = time.monotonic() + self.timeout
        while True:
            described = self.describe(table) or {}
            gsis = {g["IndexName"]: g for g in described.get("GlobalSecondaryIndexes", [])}
            settled = described.get("TableStatus") == "ACTIVE" and all(
                g.get("IndexStatus", "ACTIVE") == "ACTIVE" for g in gsis.values()
            )
            if settled and (name not in gsis if gone else name in gsis):
                self.say(f"GSI {name} on {table.name} {'deleted' if gone else 'ACTIVE'}")
                return
            if time.monotonic() > deadline:
                raise MigrationError(
                    f"table {table.name}: GSI {name} not {'gone' if gone else 'ACTIVE'} after "
                    f"{self.timeout:g}s; re-run the migration to continue"
                )
            time.sleep(self.poll)

    def say(self, text: str) -> None:
        """A progress line."""
        self.out.write(text + "\n")
        self.out.flush()
