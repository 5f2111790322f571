"""Bulk data in and out of a table.

`load` (entity instances in), `lines` (JSON Lines read and checked), `load_units` (a file
loaded as job units), `export` (JSON Lines out).
"""

from __future__ import annotations

from singletable.tooling.bulk.export import EXPORT_KIND, ExportResult, export
from singletable.tooling.bulk.lines import CheckReport, JsonLines, LineError, check
from singletable.tooling.bulk.load import LoadResult, load, require_empty
from singletable.tooling.bulk.load_units import LOAD_KIND, load_file

__all__ = [
    "CheckReport",
    "EXPORT_KIND",
    "ExportResult",
    "JsonLines",
    "LOAD_KIND",
    "LineError",
    "LoadResult",
    "check",
    "export",
    "load",
    "load_file",
    "require_empty",
]
