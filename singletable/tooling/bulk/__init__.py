"""Bulk data in and out of a table: `load` (JSON Lines in) and `export` (JSON Lines out)."""
