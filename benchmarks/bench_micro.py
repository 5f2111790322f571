"""Each micro-optimisation against the plain code it replaces, on varied models.

A micro-optimisation stays only while it pays beyond the machine's noise. Each section
here times the optimised code and its plain baseline **interleaved in one process**
(rounds alternate which goes first, so a noisy phase hits both), on realistic models
of different shapes, not only the friendly case:

* ``signer``: the lean transport's own SigV4 signer (`singletable.io.lean`) against
  botocore's ``SigV4Auth`` + ``AWSRequest.prepare`` (what the transport does for any
  other request shape), on whole ``LeanTransport.send`` calls answered by a
  ``before-send`` hook (no HTTP): GetItem, PutItem, a 25-item BatchWriteItem and a
  100-item Query page over the `bench_family` models, and GetItem with a session token;
* ``endpoint``: the lean transport's endpoint memo (`singletable.io.lean_endpoint`)
  against the client's ``_resolve_endpoint_ruleset`` on every call, on whole ``send``
  calls answered by a ``before-send`` hook: PutItem, a 25-item BatchWriteItem and a
  25-item TransactWriteItems over the `bench_family` models;
* ``bind``: ``obj.to_item()`` with the generated encoder installed as the class's
  method (`singletable.model.codegen.install_generated_codecs`) against the general
  `Entity.to_item` called explicitly, on every `bench_family` model;
* ``surrogates``: the lone-surrogate check every request passes
  (`singletable.operations.limits`): the ``marshal`` pre-filter against the exact walk
  alone, on BatchWriteItem requests of each model, with ASCII text, with non-ASCII text
  (accents, CJK) and with binary attributes;
* ``http``: the lean transport's HTTP pool (`singletable.io.lean_http`) against
  botocore's ``URLLib3Session`` built with the same settings, on whole ``send`` calls
  of the same prepared request, in **client CPU** (``time.process_time``; each server
  is another process): a keep-alive loopback server (as DynamoDB keeps connections
  open) answering a 12 KB BatchWriteItem-sized POST with a small answer and with a
  380 KB Query-sized one, a 200-byte GetItem-sized POST, and a moto server (which
  closes every connection: a connect per request on both sides);
* ``nodes``: the expression tree's nodes as plain classes over `_Node`
  (`singletable.expressions.operands`, subclassed in ``conditions`` and ``updates``)
  against the frozen, slotted dataclasses they were (the three modules' source rewritten
  here), from two copies of the package: ``import singletable`` in fresh interpreters, as
  bench_overheads times it, and building + rendering a typical condition and update with
  each copy's expressions package (both loaded in this process under names of their own).

* ``copies``: the copy every chained call of a builder or query starts from
  (`singletable.operations.protocol.shallow_copy`) against ``copy.copy``, on the copy
  alone and on whole chains built and rendered (an update with two sets and a
  condition, a query with three options, a three-entry transaction).

For each case it prints both times, ``ratio`` = optimised / baseline of the best
round of each (below 1.00x: the optimisation pays), and the median and spread (min-max)
of the per-round ratios, which is the noise to read the ratio against. Run the whole script
several times to see the run-to-run noise too (benchmarks/README.md has the figures).
"""

from __future__ import annotations

import argparse
import copy
import importlib
import json
import marshal
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, is_dataclass
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from types import ModuleType
from typing import Any

import boto3
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSPreparedRequest, AWSRequest, AWSResponse
from botocore.compat import HTTPHeaders
from botocore.config import Config
from botocore.credentials import ReadOnlyCredentials
from botocore.httpsession import URLLib3Session

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_family
import bench_overheads
import bench_transport

import singletable as st
from singletable import expressions
from singletable.examples import AuditEvent
from singletable.expressions import operands
from singletable.io import botocore_internals
from singletable.io.lean import LeanTransport
from singletable.io.lean_http import http_session
from singletable.operations import limits, protocol, reads


@dataclass(frozen=True)
class Result:
    """One A/B: best per-call µs of each side and the per-round ratios."""

    case: str
    baseline_us: float
    optimised_us: float
    round_ratios: list[float]

    @property
    def ratio(self) -> float:
        return self.optimised_us / self.baseline_us

    def line(self) -> str:
        low, high = min(self.round_ratios), max(self.round_ratios)
        middle = statistics.median(self.round_ratios)
        return (
            f"  {self.case:<28} {self.baseline_us:9.2f} {self.optimised_us:9.2f}"
            f"   {self.ratio:5.2f}x   {middle:4.2f}  {low:4.2f}-{high:4.2f}"
        )


HEADER = "  case                          baseline optimised   ratio  per-round: median, range"


def ab(
    case: str,
    baseline: Callable[[], Any],
    optimised: Callable[[], Any],
    *,
    number: int,
    rounds: int,
    timer: Callable[[], float] = time.perf_counter,
) -> Result:
    """Time ``number`` calls of each side per round, interleaved, ``rounds`` rounds."""
    base: list[float] = []
    opt: list[float] = []
    for r in range(rounds):
        order = ((baseline, base), (optimised, opt))
        for func, times in order if r % 2 else order[::-1]:
            times.append(timeit.Timer(func, timer=timer).timeit(number) / number * 1e6)
    ratios = [o / b for o, b in zip(opt, base, strict=True)]
    return Result(case, min(base), min(opt), ratios)


# -- models -------------------------------------------------------------------------------


def family(random_models: int) -> list[tuple[bench_family.ModelSpec, type[st.Entity]]]:
    specs = bench_family.FAMILY + bench_family.random_specs(random_models, seed=13)
    return [(spec, bench_family.build_model(spec)) for spec in specs]


# -- signer ---------------------------------------------------------------------------------


class _Raw:
    def __init__(self, body: bytes) -> None:
        self.body = body

    def stream(self, **_: Any) -> Any:
        yield self.body

    def read(self, *_: Any) -> bytes:
        return self.body


def _client(token: str | None) -> Any:
    # As `Connection` configures its own client.
    return boto3.Session().client(
        "dynamodb",
        region_name="us-east-1",
        endpoint_url="https://dynamodb.us-east-1.amazonaws.com",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        aws_session_token=token,
        config=Config(parameter_validation=False, retries={"mode": "standard", "max_attempts": 10}),
    )


def _answer_with(body: bytes) -> Callable[..., AWSResponse]:
    def answer(request: Any, **_: Any) -> AWSResponse:
        headers = HTTPHeaders()
        headers["x-amzn-requestid"] = "canned"
        headers["content-type"] = "application/x-amz-json-1.0"
        return AWSResponse(request.url, 200, headers, _Raw(body))

    return answer


class _SigV4AuthSigner:
    """The baseline: what `LeanTransport` does for requests outside its signer's shape."""

    def sign(
        self,
        credentials: ReadOnlyCredentials,
        service: str,
        region: str,
        url: str,
        headers: dict[str, str],
        body: bytes,
        context: dict[str, Any],
    ) -> AWSPreparedRequest:
        request = AWSRequest(method="POST", url=url, headers=headers, data=body)
        request.context = context
        SigV4Auth(credentials, service, region).add_auth(request)
        return request.prepare()


def _transport(body: bytes, token: str | None, *, fast: bool) -> LeanTransport:
    client = _client(token)
    client.meta.events.register("before-send.dynamodb", _answer_with(body))
    transport = LeanTransport(client)
    if not fast:
        transport._fast_signer = _SigV4AuthSigner()  # type: ignore[assignment]
    return transport


def _json(value: Any) -> bytes:
    return json.dumps(value).encode()


def signer(number: int, rounds: int, random_models: int) -> list[Result]:
    results = []
    for spec, model in family(random_models):
        objs = bench_family.instances(spec, model, 100)
        items = [o.to_item() for o in objs]
        table = model.plan().table.name
        key = model.plan().key(objs[0])
        cases: list[tuple[str, str, dict[str, Any], bytes, str | None]] = [
            ("get", "get_item", {"TableName": table, "Key": key}, _json({"Item": items[0]}), None),
            ("put", "put_item", {"TableName": table, "Item": items[1]}, b"{}", None),
            (
                "batch write 25",
                "batch_write_item",
                {"RequestItems": {table: [{"PutRequest": {"Item": i}} for i in items[:25]]}},
                b'{"UnprocessedItems":{}}',
                None,
            ),
            (
                "query 100",
                "query",
                {
                    "TableName": table,
                    "KeyConditionExpression": "PK = :pk",
                    "ExpressionAttributeValues": {":pk": key["PK"]},
                },
                _json({"Items": items, "Count": 100, "ScannedCount": 100}),
                None,
            ),
        ]
        if spec.name == "audit":
            cases.append(
                (
                    "get, session token",
                    "get_item",
                    {"TableName": table, "Key": key},
                    _json({"Item": items[0]}),
                    "IQoJb3JpZ2luX2VjEXAMPLETOKEN" * 12,
                )
            )
        for name, action, params, answer, token in cases:
            fast = _transport(answer, token, fast=True)
            slow = _transport(answer, token, fast=False)
            assert fast.send(action, copy.deepcopy(params)) == slow.send(
                action, copy.deepcopy(params)
            )

            def base(t: LeanTransport = slow, a: str = action, p: dict[str, Any] = params) -> Any:
                return t.send(a, p)

            def opt(t: LeanTransport = fast, a: str = action, p: dict[str, Any] = params) -> Any:
                return t.send(a, p)

            results.append(ab(f"{spec.name}: {name}", base, opt, number=number, rounds=rounds))
    return results


# -- endpoint -------------------------------------------------------------------------------


def endpoint(number: int, rounds: int, random_models: int) -> list[Result]:
    results = []
    for spec, model in family(random_models):
        items = [o.to_item() for o in bench_family.instances(spec, model, 25)]
        table = model.plan().table.name
        cases: list[tuple[str, str, dict[str, Any], bytes]] = [
            ("put", "put_item", {"TableName": table, "Item": items[0]}, b"{}"),
            (
                "batch write 25",
                "batch_write_item",
                {"RequestItems": {table: [{"PutRequest": {"Item": i}} for i in items]}},
                b'{"UnprocessedItems":{}}',
            ),
            (
                "transact write 25",
                "transact_write_items",
                {"TransactItems": [{"Put": {"TableName": table, "Item": i}} for i in items]},
                b"{}",
            ),
        ]
        for name, action, params, answer in cases:
            fast = _transport(answer, None, fast=True)
            slow = _transport(answer, None, fast=True)
            # The baseline: the client's own resolver on every call, as before the memo.
            slow._resolve_endpoint = botocore_internals.endpoint_resolver(slow._client)
            assert fast.send(action, copy.deepcopy(params)) == slow.send(
                action, copy.deepcopy(params)
            )

            def base(t: LeanTransport = slow, a: str = action, p: dict[str, Any] = params) -> Any:
                return t.send(a, p)

            def opt(t: LeanTransport = fast, a: str = action, p: dict[str, Any] = params) -> Any:
                return t.send(a, p)

            results.append(ab(f"{spec.name}: {name}", base, opt, number=number, rounds=rounds))
    return results


# -- bind ---------------------------------------------------------------------------------


def bind(number: int, rounds: int, random_models: int) -> list[Result]:
    results = []
    for spec, model in family(random_models):
        # The first to_item() call installs the class's generated encoder as its to_item
        # (codegen.install_generated_codecs); the baseline is the general method
        # (Entity.to_item reads the plan and calls the same encoder), called explicitly.
        objs = bench_family.instances(spec, model, 25)
        objs[0].to_item()
        assert model.to_item is not st.Entity.to_item
        assert [o.to_item() for o in objs] == [st.Entity.to_item(o) for o in objs]

        def general(objs: list[st.Entity]) -> None:
            for o in objs:
                st.Entity.to_item(o)

        def run(objs: list[st.Entity]) -> None:
            for o in objs:
                o.to_item()

        per_item = ab(
            spec.name,
            lambda o=objs: general(o),  # type: ignore[misc]
            lambda o=objs: run(o),  # type: ignore[misc]
            number=number,
            rounds=rounds,
        )
        results.append(
            Result(
                per_item.case,
                per_item.baseline_us / len(objs),
                per_item.optimised_us / len(objs),
                per_item.round_ratios,
            )
        )
    return results


# -- surrogates -----------------------------------------------------------------------------

_ACCENTED = "Café crème à Orléans, déjà vu — naïve façade"
_CJK = "東京都渋谷区神南一丁目 注文番号 ご確認ください"


def _texts(value: Any, text: str, i: int = 0) -> Any:
    # Every S value (and string set member) of an item replaced by non-ASCII text.
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if k == "S":
                out[k] = f"{text} {i}"
            elif k == "SS":
                out[k] = [f"{text} {i} {n}" for n in range(len(v))]
            else:
                out[k] = _texts(v, text, i)
        return out
    if isinstance(value, list):
        return [_texts(v, text, i) for v in value]
    return value


def _with_binary(item: dict[str, Any], i: int) -> dict[str, Any]:
    # Seeded random bytes: a 1 KB value and two 64-byte ones. Random bytes hold what the
    # pre-filter looks for (0xED then 0xA0..0xBF) about once in 2 KB, so a 25-item request
    # of these always runs the walk after marshal: the pre-filter's unfriendly case.
    rng = random.Random(i)
    return {
        **item,
        "blob": {"B": rng.randbytes(1024)},
        "thumbs": {"BS": [rng.randbytes(64), rng.randbytes(64)]},
    }


def _with_digest(item: dict[str, Any], i: int) -> dict[str, Any]:
    # A 16-byte binary digest per item (400 bytes a request): mostly no false match.
    return {**item, "digest": {"B": random.Random(i).randbytes(16)}}


def surrogates(number: int, rounds: int, random_models: int) -> list[Result]:
    results = []
    for spec, model in family(random_models):
        objs = bench_family.instances(spec, model, 25)
        items = [o.to_item() for o in objs]
        table = model.plan().table.name
        variants = {
            "ascii": items,
            "accented": [_texts(item, _ACCENTED, i) for i, item in enumerate(items)],
            "cjk": [_texts(item, _CJK, i) for i, item in enumerate(items)],
            "binary 1 KB": [_with_binary(item, i) for i, item in enumerate(items)],
            "digest 16 B": [_with_digest(item, i) for i, item in enumerate(items)],
        }
        for variant, chosen in variants.items():
            if variant != "ascii" and spec.name.startswith("random"):
                continue  # the text and binary variants on the named models only
            params = {"RequestItems": {table: [{"PutRequest": {"Item": i}} for i in chosen]}}
            assert not limits._has_lone_surrogate(params)
            prefiltered = limits._ENCODED_SURROGATE.search(marshal.dumps(params, 4)) is None
            assert not limits._walk_has_lone_surrogate(params)

            def base(p: dict[str, Any] = params) -> bool:
                return limits._walk_has_lone_surrogate(p)

            def opt(p: dict[str, Any] = params) -> bool:
                return limits._has_lone_surrogate(p)

            case = f"{spec.name}: {variant}" + ("" if prefiltered else " (walked)")
            results.append(ab(case, base, opt, number=number, rounds=rounds))
    return results


# -- nodes ----------------------------------------------------------------------------------

_EXPRESSIONS = Path(operands.__file__).parent
# Where `_Node` is: operands.py defines it, and these modules' node classes derive from it.
_NODE_MODULES = ("operands", "conditions", "updates")
_IMPORT = re.compile(r"^from singletable\.expressions\.operands import (.*)$", re.MULTILINE)
_FUTURE = "from __future__ import annotations\n"


def _layout_error(module: str, why: str) -> SystemExit:
    return SystemExit(f"bench_micro nodes: {module}: {why}: update this section")


def _check_layout() -> None:
    """Fail unless `_NODE_MODULES` are exactly the modules of singletable that use `_Node`.

    A node class elsewhere would stay plain in the dataclass variant.
    """
    users = {
        str(path.relative_to(_EXPRESSIONS.parent.parent))
        for path in _EXPRESSIONS.parent.rglob("*.py")
        if "_Node" in path.read_text(encoding="utf-8")
    }
    expected = {f"singletable/expressions/{name}.py" for name in _NODE_MODULES}
    if users != expected:
        module = sorted(users ^ expected)[0]
        why = "uses _Node, outside the modules rewritten" if module in users else "no _Node"
        raise _layout_error(module, why)


def dataclass_variant(name: str, source: str) -> str:
    """``source`` (expressions/``name``.py) with each `_Node` class a frozen, slotted dataclass.

    What the module was before issue 13 replaced ``@dataclass(frozen=True, slots=True)``
    by the `_Node` base: operands.py loses the `_Node` class, conditions.py and updates.py
    its import, and each node class gets the decorator back and loses its hand-written
    ``__slots__``.
    """
    module = f"singletable/expressions/{name}.py"
    if name == "operands":
        marker = "@dataclass_transform(frozen_default=True)\nclass _Node"
        start = source.find(marker)
        end = source.find("\nclass ", start + len(marker))
        if start < 0 or end < 0:
            raise _layout_error(module, "no _Node class followed by another class")
        source = source[:start] + source[end + 1 :]
    else:
        imported = _IMPORT.search(source)
        names = [n.strip() for n in imported.group(1).split(",")] if imported else []
        if not imported or "_Node" not in names:
            raise _layout_error(module, "no one-line `from ...operands import _Node, ...`")
        kept = ", ".join(n for n in names if n != "_Node")
        line = f"from singletable.expressions.operands import {kept}"
        source = source[: imported.start()] + line + source[imported.end() :]
    out: list[str] = []
    node = ""  # the node class whose body this line is in, until its __slots__ is dropped
    for line in source.split("\n"):
        header = re.fullmatch(r"class (\w+)\((.*)\):", line)
        if node and line and not line.startswith(" "):
            raise _layout_error(module, f"no __slots__ in {node}")
        if header and "_Node" in header.group(2):
            bases = ", ".join(b.strip() for b in header.group(2).split(",") if b.strip() != "_Node")
            out.append("@dataclass(frozen=True, slots=True)")
            out.append(
                f"class {header.group(1)}({bases}):" if bases else f"class {header.group(1)}:"
            )
            node = header.group(1)
            continue
        if node and line.startswith("    __slots__ = "):
            node = ""
            continue
        out.append(line)
    variant = "\n".join(out)
    if "@dataclass(" not in variant:
        raise _layout_error(module, "no class deriving from _Node")
    if "_Node" in variant:
        raise _layout_error(module, "_Node used beyond class bases and imports")
    if _FUTURE not in variant:
        raise _layout_error(module, "no `from __future__ import annotations`")
    return variant.replace(_FUTURE, _FUTURE + "from dataclasses import dataclass\n", 1)


def _load_expressions(checkout: Path, package: str, into: Path) -> ModuleType:
    """``checkout``'s singletable.expressions, imported in this process as ``package``.

    A copy with its own imports renamed: its node classes, FieldRef and renderers are the
    checkout's, beside the other copy's; the layers below (errors, attributes, types)
    stay the shared ones, the same in both checkouts.
    """
    target = into / package
    target.mkdir(parents=True)
    for path in (checkout / "singletable" / "expressions").glob("*.py"):
        text = path.read_text(encoding="utf-8").replace("singletable.expressions", package)
        (target / path.name).write_text(text, encoding="utf-8")
    sys.path.insert(0, str(into))
    try:
        return importlib.import_module(package)
    finally:
        sys.path.remove(str(into))


def _import_ms(checkout: Path) -> float:
    return bench_overheads._import_ms("import singletable", checkout)


def _text(v: object) -> dict[str, Any]:
    return {"S": v}


def _number(v: object) -> dict[str, Any]:
    return {"N": str(v)}


def _texts_list(v: Any) -> dict[str, Any]:
    return {"L": [{"S": x} for x in v]}


def _expressions(package: ModuleType) -> Callable[[], tuple[str, str]]:
    """Build and render a typical condition and update with an expressions ``package``."""
    ref, ph_class = package.FieldRef, package.Placeholders
    status, total, qty = ref(("status",), _text), ref(("total",), _number), ref(("qty",), _number)
    tags, note = ref(("tags",), _texts_list, element_to_av=_text), ref(("note",), _text)
    address = ref(("address",), _text)
    render_condition, render_update = package.render_condition, package.render_update

    def build() -> tuple[str, str]:
        ph = ph_class()
        condition = (
            (status == "open")
            & total.between(Decimal(1), Decimal(100))
            & (tags.contains("x") | ~note.exists())
            & qty.is_in(1, 2, 3)
            & address["city"].begins_with("Ly")
        )
        actions = [status.set("paid"), qty.increment(), note.remove(), tags.append(["y"])]
        return render_condition(condition, ph), render_update(actions, ph)

    return build


def nodes(number: int, rounds: int, random_models: int) -> list[Result]:
    _check_layout()
    sources = {name: (_EXPRESSIONS / f"{name}.py").read_text("utf-8") for name in _NODE_MODULES}
    variants = {name: dataclass_variant(name, text) for name, text in sources.items()}
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        # Two copies of the package, the same but for the three modules, in the same
        # directory; `import singletable` timed in fresh interpreters as bench_overheads
        # times it.
        checkouts = {}
        for side, modules in (("plain", sources), ("dataclass", variants)):
            checkout = Path(tmp, side)
            shutil.copytree(
                _EXPRESSIONS.parent,
                checkout / "singletable",
                ignore=shutil.ignore_patterns("__pycache__"),
            )
            for name, text in modules.items():
                (checkout / "singletable" / "expressions" / f"{name}.py").write_text(text)
            _import_ms(checkout)  # writes the bytecode cache
            checkouts[side] = checkout
        # Interleaved as `ab` does, but each side's figure is the one the child reports.
        times: dict[str, list[float]] = {"plain": [], "dataclass": []}
        for r in range(rounds):
            for side in ("plain", "dataclass") if r % 2 else ("dataclass", "plain"):
                times[side].append(_import_ms(checkouts[side]))
        ratios = [p / d for p, d in zip(times["plain"], times["dataclass"], strict=True)]
        results.append(
            Result("import singletable (ms)", min(times["dataclass"]), min(times["plain"]), ratios)
        )
        # Build + render with each copy's expressions package, both in this process.
        loaded = {
            side: _load_expressions(checkout, f"_bench_{side}_expressions", Path(tmp, "loaded"))
            for side, checkout in checkouts.items()
        }
    # Each copy's nodes are what its side says (the renamed imports took).
    for side, package in loaded.items():
        for module, node in (
            ("operands", "_ValueOp"),
            ("conditions", "_And"),
            ("updates", "_SetAction"),
        ):
            if is_dataclass(getattr(getattr(package, module), node)) != (side == "dataclass"):
                raise SystemExit(f"bench_micro nodes: the {side} copy's {module}.{node} is wrong")
    plain, dataclasses = _expressions(loaded["plain"]), _expressions(loaded["dataclass"])
    assert plain() == dataclasses() == _expressions(expressions)()
    results.append(ab("build + render (µs)", dataclasses, plain, number=number, rounds=rounds))
    return results


# -- http ---------------------------------------------------------------------------------------

# A keep-alive HTTP/1.1 server answering every POST with X-Answer-Bytes bytes of JSON, head
# and body in one write with Nagle off, as a real endpoint answers (two writes would leave
# the client waiting on delayed ACKs).
_KEEP_ALIVE_SERVER = """
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        size = int(self.headers.get("X-Answer-Bytes", "20"))
        body = b'{"Items":"' + b"x" * max(size - 12, 0) + b'"}'
        head = (
            "HTTP/1.1 200 OK\\r\\nContent-Type: application/x-amz-json-1.0\\r\\n"
            f"x-amzn-RequestId: r\\r\\nContent-Length: {len(body)}\\r\\n\\r\\n"
        )
        self.wfile.write(head.encode() + body)
    def log_message(self, *args):
        pass
server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


@contextmanager
def _keep_alive_server() -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _KEEP_ALIVE_SERVER], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        yield f"http://127.0.0.1:{proc.stdout.readline().strip()}/"
    finally:
        proc.terminate()
        proc.wait()


def _post(url: str, body_bytes: int, answer_bytes: int) -> AWSPreparedRequest:
    headers = {
        "X-Amz-Target": "DynamoDB_20120810.BatchWriteItem",
        "Content-Type": "application/x-amz-json-1.0",
        "User-Agent": "bench",
        "X-Answer-Bytes": str(answer_bytes),
    }
    body = b'{"TableName":"nope"}' + b" " * max(body_bytes - 20, 0)
    return AWSRequest(method="POST", url=url, headers=headers, data=body).prepare()


def http(number: int, rounds: int, random_models: int) -> list[Result]:
    # Settings as a client's defaults build its session: (connect, read) timeouts, pool 10.
    settings: dict[str, Any] = {"timeout": (60, 60), "socket_options": [(6, 1, 1)]}
    botocores = URLLib3Session(**settings)
    own = URLLib3Session(**settings)  # held, as a client holds its session
    lean = http_session(own)
    assert not isinstance(lean, URLLib3Session)
    results = []
    with _keep_alive_server() as url:
        for case, body_bytes, answer_bytes in (
            ("keep-alive 12 KB POST", 12_000, 100),
            ("keep-alive 12 KB, 380 KB back", 12_000, 380_000),
            ("keep-alive 200 B POST", 200, 100),
        ):
            request = _post(url, body_bytes, answer_bytes)
            for session in (botocores, lean):
                assert session.send(request).status_code == 200
            results.append(
                ab(
                    case,
                    partial_send(botocores, request),
                    partial_send(lean, request),
                    number=number,
                    rounds=rounds,
                    timer=time.process_time,
                )
            )
    endpoint, proc = bench_transport.start_moto_server()
    try:
        request = _post(endpoint + "/", 12_000, 100)
        results.append(
            ab(
                "moto (connect each) 12 KB",
                partial_send(botocores, request),
                partial_send(lean, request),
                number=number,
                rounds=rounds,
                timer=time.process_time,
            )
        )
    finally:
        proc.terminate()
        proc.wait()
    botocores.close()
    lean.close()
    return results


def partial_send(session: Any, request: AWSPreparedRequest) -> Callable[[], Any]:
    def send() -> bytes:
        return session.send(request).content  # type: ignore[no-any-return]

    return send


# -- copies ---------------------------------------------------------------------------------


@contextmanager
def _copied_by(function: Callable[[Any], Any]) -> Iterator[None]:
    """Builders and queries copy with ``function`` inside the block.

    `Builder._copy` calls the name in ``protocol``, `BaseQuery._copy` the one ``reads``
    imported: both are replaced.
    """
    modules = (protocol, reads)
    saved = [vars(module)["shallow_copy"] for module in modules]
    for module in modules:
        vars(module)["shallow_copy"] = function
    try:
        yield
    finally:
        for module, original in zip(modules, saved, strict=True):
            vars(module)["shallow_copy"] = original


def copies(number: int, rounds: int, random_models: int) -> list[Result]:
    del random_models
    event = AuditEvent
    ts = datetime(2026, 6, 23, 8, 0, tzinfo=timezone.utc)
    first = event(actor_id="u_1", ts=ts, seq=1, action="login", target="doc/1")

    def update() -> Any:
        built = event.update(actor_id="u_1", ts=ts, seq=1).set(action="edit", target="doc/2")
        return built.where(event.f.ip.not_exists()).params()

    def query() -> Any:
        return event.query(actor_id="u_1").descending().limit(10).page_size(5).params()

    def transaction() -> Any:
        write = (
            st.TransactWrite()
            .put(event.put(first))
            .delete(event.delete(actor_id="u_2", ts=ts, seq=2))
        )
        return write.check(
            event.plan(), {"actor_id": "u_3", "ts": ts, "seq": 3}, event.f.ip.exists()
        ).params()

    values = {
        "copy: Update": event.update(actor_id="u_1", ts=ts, seq=1).set(action="edit"),
        "copy: EntityQuery": event.query(actor_id="u_1"),
        "copy: TransactWrite": st.TransactWrite().put(event.put(first)),
    }
    results = []
    for case, value in values.items():

        def plain(value: Any = value) -> Any:
            return copy.copy(value)

        def shallow(value: Any = value) -> Any:
            return protocol.shallow_copy(value)

        results.append(ab(case, plain, shallow, number=number, rounds=rounds))
    for case, chain in (
        ("chain: update", update),
        ("chain: query", query),
        ("chain: transaction", transaction),
    ):

        def baseline(chain: Callable[[], Any] = chain) -> Any:
            with _copied_by(copy.copy):
                return chain()

        def optimised(chain: Callable[[], Any] = chain) -> Any:
            with _copied_by(protocol.shallow_copy):
                return chain()

        results.append(ab(case, baseline, optimised, number=number, rounds=rounds))
    return results


SECTIONS: dict[str, Callable[[int, int, int], list[Result]]] = {
    "signer": signer,
    "endpoint": endpoint,
    "http": http,
    "bind": bind,
    "surrogates": surrogates,
    "nodes": nodes,
    "copies": copies,
}
UNITS = {
    "signer": "µs a request",
    "endpoint": "µs a request",
    "http": "client CPU µs a request",
    "bind": "µs an item",
    "surrogates": "µs a 25-item request",
    "nodes": "ms an import, µs a condition and update",
    "copies": "µs a copy or a chain built and rendered",
}


def main(argv: list[str] | None = None) -> dict[str, list[Result]]:
    assert __doc__ is not None
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sections", nargs="*", help=f"some of {', '.join(SECTIONS)} (default all)")
    parser.add_argument("--number", type=int, default=0, help="calls per timed run")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--random", type=int, default=4, help="random models to add")
    parser.add_argument("--quick", action="store_true", help="few calls and rounds (smoke test)")
    args = parser.parse_args(argv)
    for name in args.sections:
        if name not in SECTIONS:
            parser.error(f"no section {name!r}: choose from {', '.join(SECTIONS)}")
    numbers = {
        "signer": 200,
        "endpoint": 200,
        "http": 100,
        "bind": 400,
        "surrogates": 200,
        "nodes": 400,
        "copies": 2000,
    }
    rounds = 2 if args.quick else args.rounds
    random_models = 1 if args.quick else args.random
    out = {}
    for name in args.sections or SECTIONS:
        number = 3 if args.quick else args.number or numbers[name]
        print(f"{name} ({UNITS[name]}; best of {rounds} interleaved rounds of {number} calls)")
        print(HEADER)
        results = SECTIONS[name](number, rounds, random_models)
        for result in results:
            print(result.line())
        ratios = [r.ratio for r in results]
        print(
            f"  ratio over cases: median {statistics.median(ratios):.2f}x, "
            f"range {min(ratios):.2f}-{max(ratios):.2f}x"
        )
        out[name] = results
    return out


if __name__ == "__main__":
    main()
