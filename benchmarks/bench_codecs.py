"""Encode/decode cost of singletable's compiled codecs against hand-written code.

For an audit-log event of 12 attributes (PK/SK as in DOMAIN.md plus one GSI), this
measures in one run, per item:

* **singletable**: ``plan.to_item(obj)`` (keys, attributes, identity, size check) and
  ``plan.from_item(item)`` (attribute decoding + pydantic validation);
* **hand-written**: a function that builds the same low-level AttributeValue dict
  directly (f-strings for the keys, ``isoformat`` for the timestamp) and decodes with
  ``model_validate`` of a dict built by hand;
* **TypeSerializer**: ``model_dump(mode="json")`` + boto3's ``TypeSerializer`` (keys by
  f-strings), and ``TypeDeserializer`` + ``model_validate``.

Timing: ``timeit`` over a batch of distinct items, ``repeat`` times, the minimum kept
(the least disturbed run). Run: ``python3 benchmarks/bench_codecs.py [--quick]``.
"""

from __future__ import annotations

import argparse
import sys
import timeit
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Annotated, Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from pydantic import Field

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from singletable import GSI, Entity, IndexKeys, KeyFormat, Table

bench_table = Table("bench-codecs", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


class AuditEvent(
    Entity,
    table=bench_table,
    pk="ACTOR#{actor_id}",
    sk="EVT#{ts}#{seq}",
    indexes={"GSI1": IndexKeys(pk="TARGET#{target}", sk="EVT#{ts}#{seq}")},
):
    """The audit-log event of DOMAIN.md, with ~10 attributes."""

    actor_id: str
    ts: datetime
    seq: Annotated[int, KeyFormat(width=6)]
    action: str
    target: str
    ip: str | None = None
    user_agent: str
    session_id: uuid.UUID
    success: bool
    latency_ms: int
    tags: list[str] = Field(default_factory=list)
    details: dict[str, str] = Field(default_factory=dict)


PLAN = AuditEvent.plan()
T0 = datetime(2026, 6, 23, 8, 0, tzinfo=timezone.utc)


def sample(n: int) -> list[AuditEvent]:
    """``n`` distinct, realistic events."""
    actions = ["login", "view", "edit", "share", "logout"]
    return [
        AuditEvent(
            actor_id=f"u_{8800 + i % 50}",
            ts=T0 + timedelta(seconds=i * 7, microseconds=i * 131 % 1_000_000),
            seq=i % 1000,
            action=actions[i % len(actions)],
            target=f"doc/{i % 37}",
            ip=f"198.51.100.{i % 250}",
            user_agent="Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/126.0",
            session_id=uuid.UUID(int=0x1234_5678_9ABC_DEF0 * (i + 1)),
            success=i % 7 != 0,
            latency_ms=12 + i % 300,
            tags=["web", "eu-west-1"] if i % 2 else ["api"],
            details={"doc_version": str(i % 9), "client": "web"},
        )
        for i in range(n)
    ]


# -- (a) hand-written ---------------------------------------------------------------------


def _key_ts(ts: datetime) -> str:
    # The events are UTC already; a hand-written key writes them as "...Z".
    return ts.isoformat(timespec="microseconds")[:26] + "Z"


def hand_encode(e: AuditEvent) -> dict[str, Any]:
    """The item built directly, as one would by hand for this one class."""
    ts_key = _key_ts(e.ts)
    sk = f"EVT#{ts_key}#{e.seq:06d}"
    item: dict[str, Any] = {
        "PK": {"S": f"ACTOR#{e.actor_id}"},
        "SK": {"S": sk},
        "GSI1PK": {"S": f"TARGET#{e.target}"},
        "GSI1SK": {"S": sk},
        "actor_id": {"S": e.actor_id},
        "ts": {"S": e.ts.isoformat(timespec="microseconds")},
        "seq": {"N": str(e.seq)},
        "action": {"S": e.action},
        "target": {"S": e.target},
        "user_agent": {"S": e.user_agent},
        "session_id": {"S": str(e.session_id)},
        "success": {"BOOL": e.success},
        "latency_ms": {"N": str(e.latency_ms)},
        "_et": {"S": "AuditEvent"},
        "_ev": {"N": "1"},
    }
    if e.ip is not None:
        item["ip"] = {"S": e.ip}
    item["tags"] = {"L": [{"S": t} for t in e.tags]}
    item["details"] = {"M": {k: {"S": v} for k, v in e.details.items()}}
    return item


def hand_decode(item: dict[str, Any]) -> AuditEvent:
    """A dict built by hand from the item, validated by pydantic."""
    data = {
        "actor_id": item["actor_id"]["S"],
        "ts": item["ts"]["S"],
        "seq": int(item["seq"]["N"]),
        "action": item["action"]["S"],
        "target": item["target"]["S"],
        "user_agent": item["user_agent"]["S"],
        "session_id": item["session_id"]["S"],
        "success": item["success"]["BOOL"],
        "latency_ms": int(item["latency_ms"]["N"]),
        "tags": [t["S"] for t in item["tags"]["L"]],
        "details": {k: v["S"] for k, v in item["details"]["M"].items()},
    }
    ip = item.get("ip")
    if ip is not None:
        data["ip"] = ip["S"]
    return AuditEvent.model_validate(data)


# -- (b) model_dump + TypeSerializer ------------------------------------------------------

_ser = TypeSerializer()
_deser = TypeDeserializer()


def boto3_encode(e: AuditEvent) -> dict[str, Any]:
    """``model_dump(mode="json")`` through boto3's TypeSerializer, keys by f-strings."""
    data = e.model_dump(mode="json", exclude_none=True)
    sk = f"EVT#{_key_ts(e.ts)}#{e.seq:06d}"
    data.update(
        PK=f"ACTOR#{e.actor_id}",
        SK=sk,
        GSI1PK=f"TARGET#{e.target}",
        GSI1SK=sk,
        _et="AuditEvent",
        _ev=1,
    )
    return {k: _ser.serialize(v) for k, v in data.items()}


def boto3_decode(item: dict[str, Any]) -> AuditEvent:
    """boto3's TypeDeserializer, then ``model_validate``."""
    return AuditEvent.model_validate({k: _deser.deserialize(v) for k, v in item.items()})


# -- harness ------------------------------------------------------------------------------


def per_item_us(func: Callable[[Any], Any], inputs: list[Any], repeat: int) -> float:
    """Time per input in microseconds: the sum over short batches of each batch's best run.

    Batches are short (~0.2 ms) so that, on a busy machine, some run of every batch
    escapes preemption; the minimum of each is the undisturbed cost.
    """
    total = 0.0
    for start in range(0, len(inputs), _BATCH):
        batch = inputs[start : start + _BATCH]

        def run(batch: list[Any] = batch) -> None:
            for x in batch:
                func(x)

        total += min(timeit.repeat(run, number=1, repeat=repeat))
    return total / len(inputs) * 1e6


_BATCH = 25


def check_equivalent(events: list[AuditEvent]) -> None:
    """The three encoders write the same items and every decoder reads them back."""
    for e in events:
        ours = PLAN.to_item(e)
        hand = hand_encode(e)
        assert ours == hand, (ours, hand)
        boto = boto3_encode(e)
        assert set(boto) == set(ours), set(boto) ^ set(ours)
        assert PLAN.from_item(ours) == e
        assert hand_decode(ours) == e
        assert boto3_decode(boto) == e


def main(argv: list[str] | None = None) -> dict[str, float]:
    """Run the benchmark, print a table of µs per item and ratios, return the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="few repeats (smoke test)")
    args = parser.parse_args(argv)
    repeat = 3 if args.quick else args.repeat
    events = sample(args.items)
    check_equivalent(events[:50])
    items = [PLAN.to_item(e) for e in events]
    boto_items = [boto3_encode(e) for e in events]

    # Interleave the candidates so a noisy phase of the machine hits all of them.
    candidates: dict[str, tuple[Callable[[Any], Any], list[Any]]] = {
        "encode singletable": (PLAN.to_item, events),
        "encode hand-written": (hand_encode, events),
        "encode TypeSerializer": (boto3_encode, events),
        "decode singletable": (PLAN.from_item, items),
        "decode hand-written": (hand_decode, items),
        "decode TypeDeserializer": (boto3_decode, boto_items),
    }
    best = dict.fromkeys(candidates, float("inf"))
    rounds = 5
    for _ in range(rounds):
        for name, (func, inputs) in candidates.items():
            best[name] = min(best[name], per_item_us(func, inputs, repeat))

    print(
        f"bench_codecs: {len(events)} items in batches of {_BATCH}, best of "
        f"{rounds} rounds x {repeat} runs per batch"
    )
    print(f"  python {sys.version.split()[0]}")
    print(f"{'':26}{'µs/item':>9}{'vs hand':>9}{'vs boto3':>10}")
    ratios: dict[str, float] = {}
    for op in ("encode", "decode"):
        hand = best[f"{op} hand-written"]
        boto = best[f"{op} {'TypeSerializer' if op == 'encode' else 'TypeDeserializer'}"]
        for name in (
            f"{op} singletable",
            f"{op} hand-written",
            next(n for n in candidates if n.startswith(op) and "Type" in n),
        ):
            us = best[name]
            print(f"  {name:24}{us:9.2f}{us / hand:8.2f}x{us / boto:9.2f}x")
        ratios[op] = best[f"{op} singletable"] / hand
        ratios[f"{op}_vs_boto3"] = best[f"{op} singletable"] / boto
    targets = {"encode": 1.25, "decode": 1.5}
    for op, limit in targets.items():
        verdict = "ok" if ratios[op] <= limit else "OVER TARGET"
        print(
            f"  {op}: {ratios[op]:.2f}x hand-written (target <= {limit}x) {verdict}; "
            f"{1 / ratios[op + '_vs_boto3']:.1f}x faster than TypeSerializer path"
        )
    return ratios


if __name__ == "__main__":
    main()
