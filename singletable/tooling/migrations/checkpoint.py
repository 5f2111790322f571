"""A migration's progress in a local file: each scan segment's last key and counts.

The in-process runner (`migrate` without a job) saves after every page of every unit, so
an interrupted run resumes from the file. A migration run as a job keeps the same
progress in its units' lease items instead (`singletable.tooling.migrations.jobrun`).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from singletable.errors import MigrationError
from singletable.tooling.jobs.units import JsonValue, UnitContext

__all__ = ["CHECKPOINT_VERSION", "Checkpoint", "Saving"]

CHECKPOINT_VERSION = 3


class Checkpoint:
    """Per-segment scan progress and counts, saved after every page (atomically, by rename).

    Until the job record of the job engine replaces it: ``{"version", "plan", "tasks":
    {"scan TABLE": {"total_segments", "segments": {"0": {"done", "start_key", "stats"}}}}}``.
    """

    def __init__(self, path: Path | None, data: dict[str, Any] | None = None) -> None:
        self.path = path
        self.data: dict[str, Any] = data or {"version": CHECKPOINT_VERSION, "tasks": {}}
        self.lock = threading.Lock()

    @classmethod
    def load(cls, path: str | Path, fingerprint: str) -> Checkpoint:
        """The file's progress (a new one if absent); `MigrationError` if it is another's."""
        path = Path(path)
        if not path.exists():
            checkpoint = cls(path)
            checkpoint.data["plan"] = fingerprint
            return checkpoint
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise MigrationError(
                f"checkpoint {path}: unreadable ({exc}); delete it to restart"
            ) from None
        if not isinstance(data, dict) or data.get("version") != CHECKPOINT_VERSION:
            raise MigrationError(
                f"checkpoint {path}: not a version {CHECKPOINT_VERSION} checkpoint (written by "
                "another singletable?); delete it to restart"
            )
        if data.setdefault("plan", fingerprint) != fingerprint:
            raise MigrationError(
                f"checkpoint {path}: written by another migration (another snapshot or "
                "model); delete it to start this one, or pass another --checkpoint file"
            )
        return cls(path, data)

    def task(self, name: str, segments: int) -> dict[str, Any]:
        """A table's scan progress, created with ``segments`` segments if new."""
        with self.lock:
            tasks = self.data["tasks"]
            if name not in tasks:
                tasks[name] = {
                    "total_segments": segments,
                    "segments": {
                        str(i): {"done": False, "start_key": None, "stats": {}}
                        for i in range(segments)
                    },
                }
            task: dict[str, Any] = tasks[name]
            return task

    def segment_counts(self, name: str) -> list[dict[str, int]]:
        """Each segment's counts so far."""
        with self.lock:
            segments = self.data["tasks"][name]["segments"].values()
            return [dict(s["stats"]) for s in segments]

    def save(
        self, name: str, segment: int, start_key: Any, done: bool, counts: Mapping[str, int]
    ) -> None:
        """Record a page of a segment and write the file (by rename: never half written)."""
        with self.lock:
            entry = self.data["tasks"][name]["segments"][str(segment)]
            stats = entry["stats"]
            for figure, n in counts.items():
                stats[figure] = stats.get(figure, 0) + n
            entry.update(done=done, start_key=start_key)
            if self.path is None:
                return
            tmp = self.path.with_name(self.path.name + ".tmp")
            tmp.write_text(json.dumps(self.data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
            os.replace(tmp, self.path)


class Saving:
    """A unit's context that also writes the checkpoint file after every page."""

    def __init__(self, ctx: UnitContext, state: Checkpoint, task: str, segment: int) -> None:
        self.ctx = ctx
        self.state = state
        self.task = task
        self.segment = segment

    @property
    def checkpoint(self) -> Mapping[str, JsonValue] | None:
        """The unit's checkpoint."""
        return self.ctx.checkpoint

    def save(self, checkpoint: Mapping[str, JsonValue] | None, counts: Mapping[str, int]) -> None:
        """Save to the unit's context, then to the file."""
        self.ctx.save(checkpoint, counts)
        start = None if checkpoint is None else checkpoint.get("last_key")
        self.state.save(self.task, self.segment, start, False, counts)

    def finish(self, counts: Mapping[str, int]) -> None:
        """Finish in the unit's context, then in the file."""
        self.ctx.finish(counts)
        self.state.save(self.task, self.segment, None, True, counts)

    def spend(self, *, rcu: float = 0.0, wcu: float = 0.0) -> None:
        """Spend from the unit's context."""
        self.ctx.spend(rcu=rcu, wcu=wcu)
