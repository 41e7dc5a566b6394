"""Where a request's time goes, hop by hop, from the spans of a traced stack (issue 20).

Starts a stack from each source tree given (``hermes-memory up --detach`` with ``HERMES_TRACE_FILE``: Serve's
proxy and replica spans on, and ours), writes a short history for one user, then sends ``--requests`` recalls
(every query unique) and as many one-turn writes at concurrency 1, each with its own ``traceparent``. For each
span name of those traces it prints the median duration and the median start offset from the client's send;
then, per trace, the hops between nested spans (``HOPS``: outside the app, the app before the gateway, out to
the host, the host's embedding and the rest of its work, back, and after the gateway), and their medians.
Tracing itself costs a little in every process (each span is written to the file as it ends), so the client's
total here is a few ms above an untraced run's.

With ``--clients N`` the requests are the mixed load instead (N closed-loop clients, 80 % recall / 20 %
write, unique queries, over ``--users`` users, for ``--seconds``), every one traced: each hop's p50 and p95
under load, and the recalls split by whether they waited behind the same user's earlier call (their texts
then embedded meanwhile, ``host.embed_ahead``).

    .venv/bin/python tests/bench/bench_hops.py                      # this checkout
    .venv/bin/python tests/bench/bench_hops.py --tree /path/to/base # another source tree
    .venv/bin/python tests/bench/bench_hops.py --clients 16 --users 16 --seconds 30   # under load
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import secrets
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from statistics import median

import httpx

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.bench import loadgen  # noqa: E402
from tests.bench.bench_hosts import stack  # noqa: E402

#: per operation: the HTTP route's span, the gateway's span, the host's span, the embedding's span
OPERATIONS = {
    "recall": (
        "POST /v1/users/{user_id}/recall",
        "search_memory",
        "host.recall",
        "embedder.embed_queries",
    ),
    "write": (
        "POST /v1/users/{user_id}/turns",
        "upsert_memory",
        "host.write_turns",
        "embedder.embed_passages",
    ),
}
HOPS = [
    "outside the app: loopback HTTP, the HTTP server, Serve's routing (and its proxy, when there is one)",
    "the app before the gateway: ASGI middleware, the body, FastAPI parsing, auth",
    "out to the host: quotas, the Ray call, the user's earlier calls, the host's mailbox and worker thread",
    "the host: embedding",
    "the host: the rest of its work (recall or gate and SQL commit)",
    "back from the host: the answer pickled, Ray, the replica's loop",
    "after the gateway: answer serialization, the response sent",
]


def by_trace(path: Path, trace_ids: dict[str, float]) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = defaultdict(list)
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record["trace_id"] in trace_ids:
            found[record["trace_id"]].append(record)
    return found


def hops(spans: list[dict], names: tuple[str, str, str, str], client_ms: float) -> list[float] | None:
    """One trace's hops in ms (``HOPS``), or None when a span is missing. The HTTP span is ours (the
    innermost of the route's name: Serve's replica span, when on, carries the same name)."""
    route, gateway_name, host_name, embed_name = names
    http = sorted((s for s in spans if s["name"] == route), key=lambda s: s["start"])
    named = {s["name"]: s for s in spans}
    # a call that waited behind the user's previous call had its texts embedded meanwhile: no embedding span
    if not http or not {gateway_name, host_name} <= set(named):
        return None
    outer, gateway, host = http[-1], named[gateway_name], named[host_name]

    def ms(nanoseconds: float) -> float:
        return nanoseconds / 1e6

    embedding = sum(ms(s["end"] - s["start"]) for s in spans if s["name"] == embed_name)
    return [
        client_ms - ms(outer["end"] - outer["start"]),
        ms(gateway["start"] - outer["start"]),
        ms(host["start"] - gateway["start"]),
        embedding,
        ms(host["end"] - host["start"]) - embedding,
        ms(gateway["end"] - host["end"]),
        ms(outer["end"] - gateway["end"]),
    ]


async def traced_post(
    client: httpx.AsyncClient, headers: dict[str, str], load: loadgen.Load, op: str, user: str, n: int
) -> tuple[str, int, float, httpx.Response]:
    """The ``user``'s ``n``-th request of ``op`` (a recall with a unique query, or a one-turn write), in a
    trace of its own: (trace id, send time in ns, client ms, response)."""
    trace_id = secrets.token_hex(16)
    traced = {**headers, "traceparent": f"00-{trace_id}-{secrets.token_hex(8)}-01"}
    if op == "recall":
        path, body = f"/v1/users/{user}/recall", {"query": f"{loadgen.RECALL_QUERIES[n % 14]} #{n}"}
    else:
        path, body = f"/v1/users/{user}/turns", loadgen.write_body(load.rng, 1000 + n)
    started_ns = time.time_ns()
    began = time.perf_counter()
    response = await client.post(path, json=body, headers=traced)
    return trace_id, started_ns, (time.perf_counter() - began) * 1000, response


async def measure(base: str, key: str, spans_file: Path, requests: int) -> dict:
    headers = {"X-API-Key": key}
    sent: dict[str, dict[str, float]] = {"recall": {}, "write": {}}
    client_ms: dict[str, dict[str, float]] = {"recall": {}, "write": {}}
    async with httpx.AsyncClient(base_url=base, timeout=120) as client:
        load = loadgen.Load(client, key)
        for _ in range(10):
            await loadgen.timed(load.write("hops"))
        for op in ("recall", "write"):
            for n in range(requests + 3):
                trace_id, started_ns, ms, response = await traced_post(client, headers, load, op, "hops", n)
                response.raise_for_status()
                if n >= 3:  # the first few warm the path
                    sent[op][trace_id] = started_ns
                    client_ms[op][trace_id] = ms
    await asyncio.sleep(3)  # the last spans reach the file
    out = {}
    for op, names in OPERATIONS.items():
        traces = by_trace(spans_file, sent[op])
        durations: dict[str, list[float]] = defaultdict(list)
        offsets: dict[str, list[float]] = defaultdict(list)
        per_trace = []
        for trace_id, spans in traces.items():
            for s in spans:
                durations[s["name"]].append((s["end"] - s["start"]) / 1e6)
                offsets[s["name"]].append((s["start"] - sent[op][trace_id]) / 1e6)
            found = hops(spans, names, client_ms[op][trace_id])
            if found is not None:
                per_trace.append(found)
        out[op] = {
            "traces": len(per_trace),
            "client_p50_ms": round(median(client_ms[op].values()), 2),
            "spans": {
                name: {
                    "p50_ms": round(median(v), 2),
                    "start_ms": round(median(offsets[name]), 2),
                    "n": len(v),
                }
                for name, v in sorted(durations.items(), key=lambda kv: median(offsets[kv[0]]))
            },
            "hops": {hop: round(median(t[n] for t in per_trace), 2) for n, hop in enumerate(HOPS)},
        }
    return out


async def measure_under_load(
    base: str, key: str, spans_file: Path, clients: int, users: int, seconds: float
) -> dict:
    """The mixed load (``clients`` closed-loop clients, 80 % recall / 20 % write, unique queries, over
    ``users`` users), every request traced: each hop's p50 and p95, and the recalls split by whether they
    waited behind the same user's earlier call (their trace holds ``host.embed_ahead``)."""
    headers = {"X-API-Key": key}
    sent: dict[str, dict[str, float]] = {"recall": {}, "write": {}}
    client_ms: dict[str, dict[str, float]] = {"recall": {}, "write": {}}
    limits = httpx.Limits(max_connections=clients * 2)
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as client:
        load = loadgen.Load(client, key)
        names = [f"load{n}" for n in range(users)]
        for user in names:
            await asyncio.gather(*(loadgen.timed(load.write(user)) for _ in range(3)))
        serial = itertools.count()
        deadline = time.perf_counter() + seconds

        async def worker() -> None:
            while time.perf_counter() < deadline:
                user = load.rng.choice(names)
                op = "write" if load.rng.random() < 0.2 else "recall"
                trace_id, started_ns, ms, response = await traced_post(
                    client, headers, load, op, user, next(serial)
                )
                if response.status_code == 200:
                    sent[op][trace_id] = started_ns
                    client_ms[op][trace_id] = ms

        await asyncio.gather(*(worker() for _ in range(clients)))
    await asyncio.sleep(3)  # the last spans reach the file
    out = {}
    for op, names_ in OPERATIONS.items():
        traces = by_trace(spans_file, sent[op])
        per_trace, waited, alone = [], [], []
        for trace_id, spans in traces.items():
            found = hops(spans, names_, client_ms[op][trace_id])
            if found is None:
                continue
            per_trace.append(found)
            total = client_ms[op][trace_id]
            (waited if any(s["name"] == "host.embed_ahead" for s in spans) else alone).append(total)
        out[op] = {
            "traces": len(per_trace),
            "per_second": round(len(client_ms[op]) / seconds, 1),
            "client_p50_p95_ms": _p50_p95(list(client_ms[op].values())),
            "waited_behind_the_user": {"n": len(waited), "p50_p95_ms": _p50_p95(waited)},
            "did_not_wait": {"n": len(alone), "p50_p95_ms": _p50_p95(alone)},
            "hops": {hop: _p50_p95([t[n] for t in per_trace]) for n, hop in enumerate(HOPS)},
        }
    return out


def _p50_p95(values: list[float]) -> tuple[float | None, float | None]:
    return (
        None if not values else round(loadgen.percentile(values, 0.5) or 0, 1),
        None if not values else round(loadgen.percentile(values, 0.95) or 0, 1),
    )


def report(name: str, figures: dict) -> str:
    lines = [f"## {name}"]
    for op, result in figures.items():
        if "client_p50_p95_ms" in result:  # under load
            lines.append(f"\n{op} under load: {json.dumps({k: v for k, v in result.items() if k != 'hops'})}")
            lines.append("| hop | p50 ms | p95 ms |\n|---|---:|---:|")
            lines.extend(f"| {hop} | {p50} | {p95} |" for hop, (p50, p95) in result["hops"].items())
            continue
        lines.append(f"\n{op}: {result['traces']} traces, client p50 {result['client_p50_ms']} ms")
        lines.append("| span | starts at (ms after send, p50) | p50 ms | n |\n|---|---:|---:|---:|")
        for span_name, s in result["spans"].items():
            lines.append(f"| {span_name} | {s['start_ms']} | {s['p50_ms']} | {s['n']} |")
        lines.append("| hop | p50 ms |\n|---|---:|")
        for hop, ms in result["hops"].items():
            lines.append(f"| {hop} | {ms} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, action="append", help="source tree (default: this checkout)")
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--clients", type=int, help="the mixed load with this many clients, traced")
    parser.add_argument("--users", type=int, default=16, help="users of the mixed load")
    parser.add_argument("--seconds", type=float, default=30.0, help="length of the mixed load")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--keep-spans", type=Path, help="copy each tree's span file here")
    args = parser.parse_args(argv)
    results = {}
    for tree in args.tree or [REPO]:
        print(f"{tree}: load average {os.getloadavg()}", flush=True)
        with tempfile.TemporaryDirectory(prefix="hermes-hops-") as home:
            spans_file = Path(home) / "spans.jsonl"
            env = {"HERMES_TRACE_FILE": str(spans_file)}
            with stack(tree.resolve(), Path(home), env, print) as (base, key, _pid):
                results[str(tree)] = asyncio.run(
                    measure(base, key, spans_file, args.requests)
                    if args.clients is None
                    else measure_under_load(base, key, spans_file, args.clients, args.users, args.seconds)
                )
            if args.keep_spans:
                args.keep_spans.mkdir(parents=True, exist_ok=True)
                shutil.copy(spans_file, args.keep_spans / f"{tree.resolve().name}.jsonl")
        print(report(str(tree), results[str(tree)]), flush=True)
    print(f"load average at end: {os.getloadavg()}")
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
