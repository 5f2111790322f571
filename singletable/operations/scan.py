"""Scans: the whole table or an index, optionally restricted to one entity, in parallel segments."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from singletable.errors import QueryError, RequestLimitError
from singletable.expressions.paths import Placeholders
from singletable.model.pages import page_decoder
from singletable.operations.common import key_ref
from singletable.operations.reads import BaseQuery, decode_any, same_version
from singletable.types import Item

if TYPE_CHECKING:
    from singletable.model.plan import EntityPlan
    from singletable.model.table import Table

T = TypeVar("T")
E = TypeVar("E", bound=BaseModel)


#: DynamoDB's limit on ``TotalSegments``.
MAX_SEGMENTS = 1_000_000


def check_segment_count(segments: int) -> None:
    """Refuse a parallel scan's segment count outside DynamoDB's 1 to 1,000,000.

    Checked before any work: with no segment nothing would be scanned, and a run would
    report success.
    """
    if not 1 <= segments <= MAX_SEGMENTS:
        raise RequestLimitError(
            f"segments must be 1 to 1,000,000 (DynamoDB's limit), got {segments}"
        )


class Scan(BaseQuery[T]):
    """A (parallel) scan of the table or an index, for exports and backfills.

    ``entity`` restricts it to one entity type (by a filter on the identifier).
    """

    action = "scan"

    def __init__(
        self, table: Table, plan: EntityPlan | None = None, index: str | None = None
    ) -> None:
        super().__init__(table)
        self.plan = plan
        self.subject = plan.name if plan is not None else None
        self.index = index
        self._segment: tuple[int, int] | None = None
        if plan is not None:
            self._filter = key_ref(table.entity_attribute) == plan.name

    def segment(self, segment: int, total: int) -> Scan[T]:
        """Scan one of ``total`` segments (run the segments in parallel workers)."""
        if not 0 <= segment < total or total < 1 or total > MAX_SEGMENTS:
            raise QueryError(
                f"segment must be in [0, total) and total in [1, 1000000]; got {segment}/{total}"
            )
        q = self._copy()
        q._segment = (segment, total)
        return q

    def _index(self) -> str | None:
        return self.index

    def _sort_attribute(self) -> str | None:
        return None

    def _request(self, ph: Placeholders) -> dict[str, Any]:
        index = self.index
        spec = (
            None
            if index is None
            else self.table.native_indexes.get(index) or self.table.indexes.get(index)
        )
        if self.plan is not None and spec is not None and spec.projection.type == "KEYS_ONLY":
            raise QueryError(
                f"{self.plan.label}: index {self.index!r} projects KEYS_ONLY, so its items "
                f"have no entity attribute {self.table.entity_attribute!r} to scan for one "
                "entity by (every item would be filtered out); scan the table instead"
            )
        request: dict[str, Any] = {"TableName": self.table.name}
        if self.index is not None:
            request["IndexName"] = self.index
        if self._segment is not None:
            request["Segment"], request["TotalSegments"] = self._segment
        return request

    def _identity(self) -> dict[str, Any]:
        return {
            "kind": "scan",
            "table": self.table.name,
            "index": self.index,
            "entity": self.plan.name if self.plan else None,
            "segment": self._segment,
        }

    def _page_decoder(self) -> Callable[[bytes], dict[str, Any] | None] | None:
        # The entity's item of its own version is what `_decode` hands its decoder.
        return None if self.plan is None else page_decoder(self.plan)

    def _decode(self, item: Item) -> Any:
        if self.plan is not None:
            return self.plan.from_item(item) if same_version(self.plan, item) else None
        return decode_any(self.table, item)
