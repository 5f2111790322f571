"""Batch failures are actionable: the error holds exactly what was and was not done.

A scripted server answers each call of a `BatchWrite` / `BatchGet` with success, a random
subset left unprocessed, or a service error (persistent throttling surfaces as one once
botocore's retries run out). Whatever the script, the error must partition the requests
given into done and not done, exactly as the server saw them, with unsent chunks counted.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

import singletable as st
from singletable.operations.protocol import Call, Sleep

table = st.Table("batchfail")


class Note(st.Entity, table=table, pk="NOTE#{note_id}", sk="META"):
    note_id: str
    text: str = ""


PLAN = Note.plan()
THROTTLED = st.ServiceError(
    "ThrottlingException", "Rate of requests exceeds the allowed throughput"
)


def _note_id(write: dict[str, Any]) -> str:
    item = write["PutRequest"]["Item"] if "PutRequest" in write else write["DeleteRequest"]["Key"]
    note_id: str = item["PK"]["S"].removeprefix("NOTE#")
    return note_id


def _outcome(data: hs.DataObject, n: int) -> tuple[str, list[bool]]:
    kind = data.draw(hs.sampled_from(["ok", "ok", "partial", "error"]), label="outcome")
    mask = (
        data.draw(hs.lists(hs.booleans(), min_size=n, max_size=n), label="unprocessed")
        if kind == "partial"
        else [False] * n
    )
    return kind, mask


@settings(max_examples=150, deadline=None)
@given(n_puts=hs.integers(0, 70), n_deletes=hs.integers(0, 40), data=hs.data(), wire=hs.booleans())
def test_batch_write_error_partitions_the_writes_exactly(
    n_puts: int, n_deletes: int, data: hs.DataObject, wire: bool
) -> None:
    # Both forms of the requests: dicts, and the lean transport's (items as JSON text,
    # read back here as the server reads them).
    puts = [Note(note_id=f"p{i:03d}") for i in range(n_puts)]
    deletes = [(PLAN, {"note_id": f"d{i:03d}"}) for i in range(n_deletes)]
    op = st.BatchWrite(puts=puts, deletes=deletes, max_attempts=3, backoff_base=0)
    written: set[str] = set()
    error: st.BatchWriteIncompleteError | None = None
    result: st.BatchWriteResult | None = None
    raised: st.ServiceError | None = None
    steps = op.wire_steps(orjson.Fragment) if wire else op.steps()
    try:
        step = next(steps)
        while True:
            if isinstance(step, Sleep):
                step = steps.send(None)
                continue
            assert isinstance(step, Call)
            params = orjson.loads(orjson.dumps(step.params)) if wire else step.params
            writes = params["RequestItems"]["batchfail"]
            kind, mask = _outcome(data, len(writes))
            if kind == "error":
                raised = THROTTLED
                step = steps.throw(THROTTLED)
                continue
            left = [w for w, stuck in zip(writes, mask, strict=True) if stuck]
            written |= {_note_id(w) for w, stuck in zip(writes, mask, strict=True) if not stuck}
            step = steps.send({"UnprocessedItems": {"batchfail": left} if left else {}})
    except StopIteration as done:
        result = done.value
    except st.BatchWriteIncompleteError as exc:
        error = exc
    if error is None:
        assert result is not None
        assert result == st.BatchWriteResult(
            put=n_puts, deleted=n_deletes, calls=result.calls, retries=result.retries
        )
        assert written == {p.note_id for p in puts} | {k["note_id"] for _, k in deletes}
        return
    assert isinstance(error, st.RequestLimitError)  # what callers caught before
    assert error.cause is raised or error.cause is None
    assert error.written_puts == [p for p in puts if p.note_id in written]
    assert error.unwritten_puts == [p for p in puts if p.note_id not in written]
    assert error.written_deletes == [d for d in deletes if d[1]["note_id"] in written]
    assert error.unwritten_deletes == [d for d in deletes if d[1]["note_id"] not in written]
    total = n_puts + n_deletes
    assert error.unwritten_count == total - len(written)
    assert str(error).startswith(
        f"batch write: {total - len(written)} of {total} writes "
        f"({len(error.unwritten_puts)} puts, {len(error.unwritten_deletes)} deletes) "
    )
    assert f"; {len(written)} were written." in str(error)
    # The error's lists are what a retry needs: resending them writes exactly the rest.
    retry = st.BatchWrite(puts=error.unwritten_puts, deletes=error.unwritten_deletes)
    resent = {_note_id(w) for c in retry.chunks() for w in c["RequestItems"]["batchfail"]}
    assert resent == ({p.note_id for p in puts} | {k["note_id"] for _, k in deletes}) - written
    assert resent.isdisjoint(written)


@settings(max_examples=150, deadline=None)
@given(n_keys=hs.integers(1, 230), data=hs.data())
def test_batch_get_error_holds_the_items_read_and_exactly_the_keys_not_read(
    n_keys: int, data: hs.DataObject
) -> None:
    keys = [(PLAN, {"note_id": f"k{i:03d}"}) for i in range(n_keys)]
    # Every third key names an item that does not exist: answered, but not found.
    stored = {
        f"k{i:03d}": Note(note_id=f"k{i:03d}", text=str(i)) for i in range(0, n_keys) if i % 3
    }
    op = st.BatchGet(keys, max_attempts=3, backoff_base=0)
    answered: set[str] = set()
    steps = op.steps()
    error: st.BatchGetIncompleteError | None = None
    read: Any = None
    try:
        step = next(steps)
        while True:
            if isinstance(step, Sleep):
                step = steps.send(None)
                continue
            assert isinstance(step, Call)
            asked = step.params["RequestItems"]["batchfail"]["Keys"]
            kind, mask = _outcome(data, len(asked))
            if kind == "error":
                step = steps.throw(THROTTLED)
                continue
            left = [k for k, stuck in zip(asked, mask, strict=True) if stuck]
            served = [k["PK"]["S"][5:] for k, stuck in zip(asked, mask, strict=True) if not stuck]
            answered |= set(served)
            response: dict[str, Any] = {
                "Responses": {"batchfail": [PLAN.to_item(stored[i]) for i in served if i in stored]}
            }
            if left:
                response["UnprocessedKeys"] = {"batchfail": {"Keys": left}}
            step = steps.send(response)
    except StopIteration as done:
        read = done.value
    except st.BatchGetIncompleteError as exc:
        error = exc
    if error is None:
        assert read == [stored[k["note_id"]] for _, k in keys if k["note_id"] in stored]
        assert answered == {k["note_id"] for _, k in keys}
        return
    assert error.found == [
        stored[k["note_id"]] for _, k in keys if k["note_id"] in answered and k["note_id"] in stored
    ]
    assert error.unread_keys == [(p, k) for p, k in keys if k["note_id"] not in answered]
    assert str(error).startswith(f"batch get: {len(error.unread_keys)} of {n_keys} keys ")


def test_a_persistent_throttle_on_the_second_chunk_reports_the_first_as_written() -> None:
    puts = [Note(note_id=f"p{i:03d}") for i in range(75)]
    steps = st.BatchWrite(puts=puts).steps()
    first = next(steps)
    assert isinstance(first, Call)
    second = steps.send({})
    assert isinstance(second, Call)
    with pytest.raises(
        st.BatchWriteIncompleteError,
        match=r"^batch write: 50 of 75 writes \(50 puts, 0 deletes\) not written: a call failed "
        r"with ThrottlingException: Rate of requests exceeds the allowed throughput; 25 were "
        r"written\. Nothing was dropped: resend e\.unwritten_puts / e\.unwritten_deletes$",
    ) as caught:
        steps.throw(THROTTLED)
    assert caught.value.written_puts == puts[:25]
    assert caught.value.unwritten_puts == puts[25:]
    assert caught.value.code == "ThrottlingException"
    assert caught.value.cause is THROTTLED
