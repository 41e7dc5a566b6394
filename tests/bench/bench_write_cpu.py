"""CPU of one write with the real embedder and clause reader, this checkout against another, in process.

Below Ray and HTTP: one ``UserMemoryService`` on SQLite in a temporary directory, the E5 embedder (the
``q4`` engine, one thread) and the clause reader the tree's host would load (the learned reader where the
tree has it, else the semantic reader). One user is written ``--warm`` turns first (the model loaded, the
caches warm); then ``--writes`` writes of one turn each, timed with ``time.process_time`` (every thread of
the process: the model's too), in two kinds: the benchmark's own short turns (``loadgen.write_body``, what
``bench_hosts.py`` writes at concurrency 1) and LoCoMo turns (read from ``../shared`` at run time,
evaluation only), the same ones for every tree. Process CPU, not wall time: on a shared machine it moves
far less with other processes' load. Each tree runs in a child process of its own (``PYTHONPATH``),
alternating, so a busy moment shows as a disagreement between rounds of one tree.

    .venv/bin/python tests/bench/bench_write_cpu.py                              # this checkout
    .venv/bin/python tests/bench/bench_write_cpu.py --baseline-tree PATH         # and another, alternating
    .venv/bin/python tests/bench/bench_write_cpu.py --profile out.prof           # cProfile of this checkout
"""

from __future__ import annotations

import argparse
import cProfile
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
#: LoCoMo beside this checkout (``loadgen.LOCOMO`` of the measured tree is beside that tree)
LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo" / "locomo_dev.json"


def measure(warm: int, writes: int, profile: Path | None = None) -> dict[str, float]:
    """In the child: the tree on ``sys.path`` first is the one measured."""
    from actors.adapters.embedding import E5Embedder
    from actors.app.service import UserMemoryService
    from actors.store.sql.store import MemoryStore
    from schemas import api
    from schemas.settings import GatePolicy
    from tests.bench import loadgen

    embedder = E5Embedder(num_threads=1)
    try:  # a tree with the learned reader loads the one its settings name
        from actors.app.learned_reading import make_reader
        from schemas.settings import HermesSettings

        reader = make_reader(HermesSettings().reader, embedder)
    except ImportError:
        from actors.language.understanding.reader import SemanticReader

        reader = SemanticReader.load(embedder)
    store = MemoryStore(f"sqlite:///{tempfile.mkdtemp(prefix='hermes-write-cpu-')}/h.db")
    store.create_schema()
    tenants = getattr(store, "tenants", None)  # an older tree's store names it otherwise
    (store.create_tenant if tenants is None else tenants.create)("bench")
    fence = (
        store.claim_user("bench", "u", "bench")
        if tenants is None
        else store.fencing.claim("bench", "u", "bench")
    )
    service = UserMemoryService(
        "bench",
        "u",
        store=store,
        embedder=embedder,
        policy=GatePolicy(),
        reader=lambda: reader,
        fence=fence,
    )
    rng = random.Random(5)
    serial = itertools.count()
    said, _ = loadgen.locomo_dialogue(LOCOMO)
    locomo = iter(said)

    def short() -> dict:
        return loadgen.write_body(rng, next(serial))

    def long() -> dict:
        return loadgen.turn_body(next(locomo), next(serial), "u", per_session=20)

    # a tree from before the service was split by job writes through the service itself
    writes = getattr(service, "writes", service)

    def cpu_ms(body, count: int) -> float:
        requests = [api.WriteTurnsRequest.model_validate(body()) for _ in range(count)]
        started = time.process_time()
        for request in requests:
            writes.write_turns(request, uuid.uuid4().hex)
        return round((time.process_time() - started) * 1000 / count, 2)

    cpu_ms(long, warm)
    profiler = cProfile.Profile(time.process_time) if profile else None  # CPU, as the figures are
    if profiler:
        profiler.enable()
    figures = {"short_ms": cpu_ms(short, writes), "locomo_ms": cpu_ms(long, writes)}
    if profiler and profile:
        profiler.disable()
        profiler.dump_stats(profile)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline-tree", type=Path, help="another checkout, measured the same way")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warm", type=int, default=100, help="LoCoMo turns written before any is timed")
    parser.add_argument("--writes", type=int, default=300, help="writes timed, of each kind")
    parser.add_argument("--profile", type=Path, help="this checkout only: its timed writes' cProfile here")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child or args.profile:
        print(json.dumps(measure(args.warm, args.writes, args.profile)))
        return
    from tests.bench.trees import side_by_side  # the parent's only: a child's tree may predate it

    columns = {"short_ms": "write, a short turn", "locomo_ms": "write, a LoCoMo turn"}
    caption = "CPU ms per write, E5 embedder (q4, 1 thread), the tree's clause reader, SQLite"
    side_by_side(
        __file__,
        ["--warm", str(args.warm), "--writes", str(args.writes)],
        args.baseline_tree,
        args.rounds,
        columns,
        caption,
    )


if __name__ == "__main__":
    main()
