"""CPU a user's write and recall cost the service itself, without the embedder, this checkout against another.

Below Ray and HTTP: one ``UserMemoryService`` per user on SQLite in a temporary directory, the hashing
embedder (microseconds a text, so what is measured is the service's own work: extraction, the gates, recall's
routes, SQL), the benchmark's own turns and unique questions (``loadgen``). Eight users get a history of
30 turns each; then rounds of 200 writes and 400 recalls, their process CPU per operation printed per round.
Then an agent's turn on a user with a long history: one user is written ``--history`` turns of the LoCoMo
conversations (read from ``../shared`` at run time, evaluation only), one after the other, and then each
turn is a write of the next LoCoMo turn followed by a recall of a LoCoMo question: the recall after a write
is the one that rebuilds what recall derives from the items. Last, that user is activated anew, five times,
with the tokenizer's caches emptied first: the CPU of loading them and answering their first recall. Each
tree runs in a child process of its own (``PYTHONPATH``), alternating, so a busy moment shows as a
disagreement between rounds of one tree.

    .venv/bin/python tests/bench/bench_service_cpu.py                          # this checkout
    .venv/bin/python tests/bench/bench_service_cpu.py --baseline-tree PATH     # and another, alternating
    .venv/bin/python tests/bench/bench_service_cpu.py --history 3000           # the long history's length
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path

# last: in a child, the measured tree comes first on ``PYTHONPATH``
sys.path.append(str(Path(__file__).resolve().parents[2]))

USERS = 8
#: turns measured on the user with a long history
TURNS = 60


def measure(history: int) -> dict[str, float]:
    """In the child: the tree on ``sys.path`` first is the one measured."""
    from actors.adapters.embedding import HashEmbedder
    from actors.app.service import UserMemoryService
    from actors.language.en import tokens as english
    from actors.language.tokens import tokenize
    from actors.store.sql.store import MemoryStore
    from schemas import api
    from schemas.settings import GatePolicy
    from tests.bench import loadgen

    store = MemoryStore(f"sqlite:///{tempfile.mkdtemp(prefix='hermes-cpu-')}/h.db")
    store.create_schema()
    store.tenants.create("bench")
    rng = random.Random(3)

    def user_service(user_id: str) -> UserMemoryService:
        fence = store.fencing.claim("bench", user_id, "bench")
        return UserMemoryService(
            "bench", user_id, store=store, embedder=HashEmbedder(384), policy=GatePolicy(), fence=fence
        )

    users = [user_service(f"u{n}") for n in range(USERS)]
    serial = itertools.count()

    def write(service: UserMemoryService) -> None:
        body = loadgen.write_body(rng, next(serial))
        service.writes.write_turns(api.WriteTurnsRequest.model_validate(body), uuid.uuid4().hex)

    def recall(service: UserMemoryService) -> None:
        query = f"{rng.choice(loadgen.RECALL_QUERIES)} (#{next(serial)})"
        service.recalls.recall(api.RecallRequest(query=query))

    def cpu_ms(operation, count: int) -> float:
        started = time.process_time()
        for n in range(count):
            operation(users[n % USERS])
        return round((time.process_time() - started) * 1000 / count, 2)

    cpu_ms(write, 30 * USERS)
    cpu_ms(recall, 10 * USERS)
    figures = {"write_ms": cpu_ms(write, 200), "recall_ms": cpu_ms(recall, 400)}

    said, asked = loadgen.locomo_dialogue()
    turns, questions = itertools.cycle(said), itertools.cycle(asked)
    long = user_service("long")

    def write_long() -> None:
        body = loadgen.turn_body(next(turns), next(serial), "long", per_session=20)
        long.writes.write_turns(api.WriteTurnsRequest.model_validate(body), uuid.uuid4().hex)

    def agent_turns() -> dict[str, float]:
        """CPU ms of the long user's write and of the recall after it, each per turn."""
        spent = {"long_write_ms": 0.0, "long_recall_ms": 0.0}
        for _ in range(TURNS):
            started = time.process_time()
            write_long()
            written = time.process_time()
            long.recalls.recall(api.RecallRequest(query=next(questions)))
            spent["long_write_ms"] += written - started
            spent["long_recall_ms"] += time.process_time() - written
        return {key: round(seconds * 1000 / TURNS, 2) for key, seconds in spent.items()}

    def cold_activation() -> float:
        """CPU ms of the long user's activation and first recall in a process that has tokenized none of
        their texts (a host's first sight of a user after a restart, or of a user back after passivation
        once the process's caches moved on): the items and the archive read from SQL, tokenized, indexed."""
        spent = 0.0
        for _ in range(5):
            for cache in (tokenize, getattr(english, "stem", None)):
                if hasattr(cache, "cache_clear"):
                    cache.cache_clear()
            started = time.process_time()
            user_service("long").recalls.recall(api.RecallRequest(query=next(questions)))
            spent += time.process_time() - started
        return round(spent * 1000 / 5, 1)

    for _ in range(history):
        write_long()
    figures.update(agent_turns())
    figures["long_activation_ms"] = cold_activation()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline-tree", type=Path, help="another checkout, measured the same way")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--history", type=int, default=3000, help="LoCoMo turns written to the long user")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.history)))
        return
    from tests.bench.trees import side_by_side  # the parent's only: a child's tree may predate it

    columns = {
        "write_ms": "write",
        "recall_ms": "recall",
        "long_write_ms": f"long user ({args.history} turns): write",
        "long_recall_ms": "recall after it",
        "long_activation_ms": "its activation and first recall, cold caches",
    }
    caption = "CPU ms per operation, hashing embedder, SQLite"
    side_by_side(
        __file__, ["--history", str(args.history)], args.baseline_tree, args.rounds, columns, caption
    )


if __name__ == "__main__":
    main()
