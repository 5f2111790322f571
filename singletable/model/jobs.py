"""The key shape of job items, and `is_reserved_item`: what reads of entities skip.

A job (`singletable.tooling.jobs`) keeps its record and one lease item per work unit in
the table it works on, under keys reserved like the uniqueness guards' (`unique`): with
delimiter ``D`` and escape character ``E``::

    job record:  PK = E "JOB" D escape(job id)                     SK = "JOB"
    a unit:      PK = E "JOB" D escape(job id)                     SK = "UNIT" D index (6 digits)
    (tables without a sort key: the unit's PK is the job's PK + D "UNIT" D index)

No entity key can start like it: in an entity's string key the escape character only
starts an escape sequence (two upper-case hex digits), whereas here it is followed by
``J``. One partition holds a job, so one query reads the record and every unit.
"""

from __future__ import annotations

from collections.abc import Mapping

from singletable.errors import ModelDefinitionError
from singletable.model.table import Table
from singletable.model.unique import is_guard_item
from singletable.types import AttributeValue, Item

#: The marker after the escape character that starts every job key.
JOB_MARK = "JOB"
#: The sort key of a job's record.
RECORD_SORT_KEY = "JOB"
#: What starts the sort key (or the partition key's tail) of a unit.
UNIT_MARK = "UNIT"
#: Digits of a unit's index in its key (keys sort by index up to a million units).
INDEX_DIGITS = 6


def job_prefix(table: Table) -> str:
    """The text every job partition key on ``table`` starts with (``"%JOB#"``)."""
    return f"{table.escape}{JOB_MARK}{table.delimiter}"


def check_job_table(table: Table) -> None:
    """Refuse a table whose keys cannot hold job items (they are strings).

    Raises:
        ModelDefinitionError: the partition key (or the sort key) is not a string.
    """
    if table.pk_type != "S" or (table.sk is not None and table.sk_type != "S"):
        raise ModelDefinitionError(
            f"table {table.name!r}: jobs keep their record in the table under string keys, "
            "but its key attributes are not both strings (S)"
        )


def job_partition(table: Table, job_id: str) -> str:
    """The partition key text of a job (its record's; its units' too with a sort key)."""
    if not job_id:
        raise ModelDefinitionError("a job id cannot be empty")
    return job_prefix(table) + table.escaper.escape(job_id)


def record_key(table: Table, job_id: str) -> Item:
    """The primary key of a job's record."""
    key: Item = {table.pk: {"S": job_partition(table, job_id)}}
    if table.sk is not None:
        key[table.sk] = {"S": RECORD_SORT_KEY}
    return key


def unit_sort_prefix(table: Table) -> str:
    """What every unit's sort key starts with (``"UNIT#"``)."""
    return f"{UNIT_MARK}{table.delimiter}"


def unit_key(table: Table, job_id: str, index: int) -> Item:
    """The primary key of unit ``index`` of a job."""
    suffix = f"{unit_sort_prefix(table)}{index:0{INDEX_DIGITS}d}"
    if table.sk is None:
        return {table.pk: {"S": f"{job_partition(table, job_id)}{table.delimiter}{suffix}"}}
    return {table.pk: {"S": job_partition(table, job_id)}, table.sk: {"S": suffix}}


def is_job_item(table: Table, item: Mapping[str, AttributeValue]) -> bool:
    """Whether ``item`` (or a key) is a job record or unit of ``table``.

    Decided by the partition key alone, so it works on keys-only stream records too.
    """
    pk = item.get(table.pk)
    return pk is not None and pk.get("S", "").startswith(job_prefix(table))


def is_reserved_item(table: Table, item: Mapping[str, AttributeValue]) -> bool:
    """Whether ``item`` is one of the library's own items (a uniqueness guard, a job item).

    Reads of entities (queries, collections, scans, streams, exports, migrations) skip them.
    """
    return is_guard_item(table, item) or is_job_item(table, item)
