"""CPU a user's write and recall cost the service itself, without the embedder, this checkout against another.

Below Ray and HTTP: one ``UserMemoryService`` per user on SQLite in a temporary directory, the hashing
embedder (microseconds a text, so what is measured is the service's own work: extraction, the gates, recall's
routes, SQL), the benchmark's own turns and unique questions (``loadgen``). Eight users get a history of
30 turns each; then rounds of 200 writes and 400 recalls, their process CPU per operation printed per round.
Each tree runs in a child process of its own (``PYTHONPATH``), alternating, so a busy moment shows as a
disagreement between rounds of one tree.

    .venv/bin/python tests/bench/bench_service_cpu.py                          # this checkout
    .venv/bin/python tests/bench/bench_service_cpu.py --baseline-tree PATH     # and another, alternating
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
USERS = 8


def measure(rounds: int) -> list[dict[str, float]]:
    """In the child: the tree on ``sys.path`` first is the one measured."""
    from actors.adapters.embedding import HashEmbedder
    from actors.app.service import UserMemoryService
    from actors.store.sql.store import MemoryStore
    from schemas import api
    from schemas.settings import GatePolicy
    from tests.bench import loadgen

    store = MemoryStore(f"sqlite:///{tempfile.mkdtemp(prefix='hermes-cpu-')}/h.db")
    store.create_schema()
    store.create_tenant("bench")
    rng = random.Random(3)
    users = [
        UserMemoryService(
            "bench",
            f"u{n}",
            store=store,
            embedder=HashEmbedder(384),
            policy=GatePolicy(),
            fence=store.claim_user("bench", f"u{n}", "bench"),
        )
        for n in range(USERS)
    ]
    serial = iter(range(10**9))

    def write(service: UserMemoryService) -> None:
        body = loadgen.write_body(rng, next(serial))
        service.write_turns(api.WriteTurnsRequest.model_validate(body), uuid.uuid4().hex)

    def recall(service: UserMemoryService) -> None:
        query = f"{rng.choice(loadgen.RECALL_QUERIES)} (#{next(serial)})"
        service.recall(api.RecallRequest(query=query))

    def cpu_ms(operation, count: int) -> float:
        started = time.process_time()
        for n in range(count):
            operation(users[n % USERS])
        return round((time.process_time() - started) * 1000 / count, 2)

    cpu_ms(write, 30 * USERS)
    cpu_ms(recall, 10 * USERS)
    return [{"write_ms": cpu_ms(write, 200), "recall_ms": cpu_ms(recall, 400)} for _ in range(rounds)]


def run_tree(tree: Path, rounds: int) -> list[dict[str, float]]:
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{REPO}"}
    command = [sys.executable, str(Path(__file__).resolve()), "--child", "--rounds", str(rounds)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True, timeout=1800)
    result: list[dict[str, float]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline-tree", type=Path, help="another checkout, measured the same way")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.rounds)))
        return
    trees = {"this checkout": REPO, **({"baseline": args.baseline_tree} if args.baseline_tree else {})}
    print(f"load average {os.getloadavg()[0]:.2f}; CPU ms per operation, hashing embedder, SQLite")
    print("| round | tree | write | recall |\n|---|---|---:|---:|")
    for round_number in range(1, args.rounds + 1):
        for name, tree in trees.items():
            (figures,) = run_tree(tree, 1)
            print(f"| {round_number} | {name} | {figures['write_ms']} | {figures['recall_ms']} |", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
