"""The error hierarchy: every error singletable raises derives from `SingleTableError`.

Errors are raised as early as possible (class definition for modelling mistakes, request
building for bad values) and their messages name the entity, field, template or limit.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AlreadyExistsError",
    "BatchGetIncompleteError",
    "BatchIncompleteError",
    "BatchWriteIncompleteError",
    "ConditionFailedError",
    "ConfigurationError",
    "CursorError",
    "EndpointError",
    "EntityTypeError",
    "EstimateError",
    "ExpressionError",
    "ItemDecodeError",
    "ItemEncodeError",
    "ItemTooDeepError",
    "ItemTooLargeError",
    "JobError",
    "KeyDecodeError",
    "KeyEncodeError",
    "KeyTooLargeError",
    "LoadError",
    "MigrationError",
    "ModelDefinitionError",
    "NotFoundError",
    "QueryError",
    "RequestLimitError",
    "ServiceError",
    "SingleTableError",
    "SnapshotError",
    "StreamDecodeError",
    "TextEncodeError",
    "TransactionCanceledError",
    "UniqueConstraintError",
    "UnknownEntityError",
    "UnknownFieldError",
    "VersionConflictError",
]


class SingleTableError(Exception):
    """Base class of every error raised by singletable."""


class ModelDefinitionError(SingleTableError, TypeError):
    """A table, index or entity declaration is wrong; raised when the class is created.

    Also raised where a model is expected and something else is given (``snapshot(["x"])``).
    """


class EntityTypeError(SingleTableError, TypeError):
    """An operation of one entity class was given an instance of another (or a non-entity)."""


class KeyEncodeError(SingleTableError, ValueError):
    """A value cannot be written into a key (wrong type, out of range, unsupported)."""


class KeyTooLargeError(KeyEncodeError):
    """A key, or a key condition's bound, exceeds DynamoDB's key size limit.

    ``size`` is its UTF-8 length in bytes, ``limit`` the limit (2,048 bytes for a
    partition key, 1,024 for a sort key).
    """

    def __init__(self, message: str, *, size: int, limit: int) -> None:
        super().__init__(message)
        self.size = size
        self.limit = limit


class KeyDecodeError(SingleTableError, ValueError):
    """A stored key string does not match the template or codec that should have written it."""


class ItemEncodeError(SingleTableError, ValueError):
    """A model value cannot be converted into a DynamoDB attribute value."""


class ItemTooLargeError(ItemEncodeError):
    """An item exceeds DynamoDB's 400 KB item size limit."""

    def __init__(self, message: str, *, size: int, limit: int) -> None:
        super().__init__(message)
        self.size = size
        self.limit = limit


class ItemTooDeepError(ItemEncodeError):
    """An attribute nests lists and maps deeper than DynamoDB stores (31 levels).

    DynamoDB counts 32 levels with the item itself and refuses the whole request, so a
    batch would fail after the chunks before it were written.
    """

    def __init__(self, message: str, *, limit: int) -> None:
        super().__init__(message)
        self.limit = limit


class TextEncodeError(ItemEncodeError, KeyEncodeError):
    """A string cannot be stored: it holds a lone surrogate, which UTF-8 cannot encode.

    Raised for attribute values, key values, map keys and expression values alike, before
    the request is sent; ``where`` is the string's place in the request.
    """

    def __init__(self, message: str, *, where: str) -> None:
        super().__init__(message)
        self.where = where


class ItemDecodeError(SingleTableError, ValueError):
    """A stored item cannot be decoded into its entity class."""


class UnknownEntityError(ItemDecodeError):
    """A stored item names an entity (or version) that no class on the table declares."""


class StreamDecodeError(ItemDecodeError):
    """A stream record is malformed (no ``dynamodb`` section, an unknown event name, ...)."""


class ExpressionError(SingleTableError, ValueError):
    """A condition, filter, projection or update expression is malformed, or past a limit.

    DynamoDB's limits on one expression: 4 KB of text, 300 operators.
    """


class UnknownFieldError(ExpressionError, AttributeError):
    """``Entity.f.<name>`` names no field of the entity (also an `AttributeError`)."""


class QueryError(SingleTableError, ValueError):
    """A query is built wrongly (bad sort-key condition, missing partition fields, ...)."""


class CursorError(QueryError):
    """A pagination cursor is malformed, tampered with, or belongs to another query."""


class RequestLimitError(SingleTableError, ValueError):
    """A request exceeds a DynamoDB limit (batch size, transaction size, key size, ...)."""


class BatchIncompleteError(RequestLimitError):
    """A batch stopped with work undone: throttled past its retries, or a call failed.

    Subclasses carry exactly what was done and what was not, so the caller can resend
    the rest. ``cause`` is the `ServiceError` that stopped the batch (``None`` when
    the retries for unprocessed items ran out); ``code`` its error code, if any.
    """

    def __init__(self, message: str, *, cause: ServiceError | None = None) -> None:
        super().__init__(message)
        self.cause = cause
        self.code = cause.code if cause is not None else None


class BatchWriteIncompleteError(BatchIncompleteError):
    """A batch write stopped with some writes not done (see `BatchIncompleteError`).

    ``written_puts`` / ``unwritten_puts`` hold the entity instances given to the batch,
    ``written_deletes`` / ``unwritten_deletes`` the ``(plan, key values)`` pairs, so
    ``BatchWrite(puts=e.unwritten_puts, deletes=e.unwritten_deletes)`` resends the rest.
    """

    def __init__(
        self,
        message: str,
        *,
        written_puts: list[Any],
        written_deletes: list[Any],
        unwritten_puts: list[Any],
        unwritten_deletes: list[Any],
        cause: ServiceError | None = None,
    ) -> None:
        super().__init__(message, cause=cause)
        self.written_puts = written_puts
        self.written_deletes = written_deletes
        self.unwritten_puts = unwritten_puts
        self.unwritten_deletes = unwritten_deletes

    @property
    def unwritten_count(self) -> int:
        """How many puts and deletes were not done."""
        return len(self.unwritten_puts) + len(self.unwritten_deletes)

    @property
    def written_count(self) -> int:
        """How many puts and deletes were done."""
        return len(self.written_puts) + len(self.written_deletes)


class BatchGetIncompleteError(BatchIncompleteError):
    """A batch get stopped with some keys not read (see `BatchIncompleteError`).

    ``found`` holds the items already read (decoded, in key order), ``unread_keys`` the
    ``(plan, key values)`` pairs not read, so ``BatchGet(e.unread_keys)`` reads the rest.
    """

    def __init__(
        self,
        message: str,
        *,
        found: list[Any],
        unread_keys: list[Any],
        cause: ServiceError | None = None,
    ) -> None:
        super().__init__(message, cause=cause)
        self.found = found
        self.unread_keys = unread_keys


class SnapshotError(SingleTableError, ValueError):
    """A model snapshot cannot be read (bad JSON, another format version)."""


class ConditionFailedError(SingleTableError):
    """A write's condition did not hold; `item` is the stored item, when DynamoDB returned it."""

    def __init__(self, message: str, *, item: Any = None) -> None:
        super().__init__(message)
        self.item = item


class AlreadyExistsError(ConditionFailedError):
    """`create` found an item with the same primary key."""


class UniqueConstraintError(ConditionFailedError):
    """A write would give a unique value to a second item (see ``unique=`` on `Entity`).

    Attributes:
        entity: The entity's stored name.
        fields: The constrained fields.
        value: The duplicate values, by field.
        holder: The primary key fields of the item that holds the value, when the guard
            could be read (``None`` otherwise).
    """

    def __init__(
        self,
        message: str,
        *,
        entity: str,
        fields: tuple[str, ...],
        value: dict[str, Any],
        holder: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.entity = entity
        self.fields = fields
        self.value = value
        self.holder = holder


class VersionConflictError(ConditionFailedError):
    """Optimistic locking: the stored item's version is not the one this write expected."""


class TransactionCanceledError(SingleTableError):
    """A transaction was cancelled; `reasons` holds one cancellation reason per item."""

    def __init__(self, message: str, *, reasons: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.reasons = reasons


class ServiceError(SingleTableError):
    """An error response from DynamoDB that no more specific error describes.

    ``code`` is DynamoDB's error code (``ValidationException``, ...), ``response`` the
    parsed error response.
    """

    def __init__(self, code: str, message: str, *, response: dict[str, Any] | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.response = response or {}


class NotFoundError(ConditionFailedError):
    """An ``update`` (which requires the item to exist) found no item with that key."""


class MigrationError(SingleTableError):
    """The migration runner cannot apply a plan (a table migration, a bad checkpoint, ...)."""


class LoadError(SingleTableError):
    """A bulk load (`singletable.load`) stopped before the end, with what it did and did not.

    It stops at the first problem: a value that cannot be stored or a key given twice
    (found before anything of its batch is sent), or a write that failed. Positions are
    0-based indexes into the iterable the load was given.

    Attributes:
        written: How many items were written before it stopped.
        unwritten: ``(position, object)`` of every item it had taken and did not write (the
            rest of the batch the problem was found in, or that failed); items after
            ``next_position`` were never taken from the iterable.
        resume_from: Every item before this position was written: loading the items from
            here on finishes the load (puts overwrite, so items written twice are harmless).
        next_position: The position of the first item not taken from the iterable.
        cause: The error that stopped the load.
    """

    def __init__(
        self,
        message: str,
        *,
        written: int,
        unwritten: list[tuple[int, Any]],
        resume_from: int,
        next_position: int,
        cause: SingleTableError,
    ) -> None:
        super().__init__(message)
        self.written = written
        self.unwritten = unwritten
        self.resume_from = resume_from
        self.next_position = next_position
        self.cause = cause


class JobError(SingleTableError):
    """A job (`singletable.tooling.jobs`) cannot be started or run.

    No such job, a kind the worker does not know, another spec under the same id, a
    worker process that failed.
    """


class ConfigurationError(SingleTableError):
    """The client cannot be set up: no region, no credentials, or an unknown ``transport``.

    The region and credentials come from the environment; the transport from the argument
    or ``$SINGLETABLE_TRANSPORT``.
    """


class EndpointError(SingleTableError):
    """The DynamoDB endpoint could not be reached (connection refused, DNS, timeout)."""


class EstimateError(SingleTableError, ValueError):
    """The capacity estimator was not given what it needs (an update's new item, ...)."""


def with_context(context: str, error: object, *, named: str | None = None) -> str:
    """``context: error``, without saying twice the entity or field both start with.

    A wrapped error often names its entity or field already (``entity Task: stored item
    does not validate``); prefixed again, a message read ``entity Task: entity Task: ...``.

    Args:
        context: What the new message starts with.
        error: The wrapped error (or its message).
        named: The entity or field label both may start with (default: ``context``).
    """
    text = str(error)
    label = context if named is None else named
    if text.startswith(f"{label}: "):
        text = text[len(label) + 2 :]
    return f"{context}: {text}"
