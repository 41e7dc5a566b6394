"""What a restatement costs a write, this code against another checkout's, side by side in one run.

Each user first states tastes the rules read ("I'm really into bouldering."), and a few dozen ordinary
turns; then every timed write is one turn in a later session that the semantic reader reads as one of those
tastes, in a sentence that says more than the taste ("Bouldering is my main hobby these days, …"). With
``--baseline DIR`` the same writes run in rounds, alternately under this checkout and under ``DIR`` (a
worktree of main), each in a subprocess of its own (SQLite in a temporary directory, the real E5 embedder,
the reader on), so load drifts hit both alike.

    .venv/bin/python tests/bench/bench_restatements.py --baseline /path/to/main-worktree --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

#: the checkout whose code runs (the driver sets it for each subprocess)
CODE = Path(os.environ.get("HERMES_BENCH_CODE") or Path(__file__).resolve().parents[2])
sys.path.insert(0, str(CODE))

TASTES = ["bouldering", "hiking", "jazz", "swimming", "baking", "chess", "gardening", "yoga"]
SAID = "I'm really into {}."
#: restatements with more than the taste in them (what the reader reads in a sentence no rule reads)
RESTATED = [
    "{} is my main hobby these days, I try to go twice a week with friends from work.",
    "Nothing beats {} after work, it clears my head after a long day at the office.",
    "I'm obsessed with {}, last month I spent most of my savings on new gear for it.",
]
ORDINARY = [
    "We drove up to the lake last weekend and the kids loved the boat ride.",
    "My neighbour lent me a ladder so I could finally fix the gutter.",
    "The meeting ran late again and I missed the early train home.",
    "I finished reading that long novel about the lighthouse keeper.",
]


def one_run(writes: int) -> dict[str, object]:
    from actors.adapters.embedding import E5Embedder
    from actors.app.service import UserMemoryService
    from actors.app.write import UnruledReader
    from actors.language.understanding.reader import SemanticReader
    from actors.store.sql.store import MemoryStore
    from schemas import api
    from schemas.settings import GatePolicy

    embedder = E5Embedder()
    reader = UnruledReader(SemanticReader.load(embedder))
    timings: list[float] = []
    outcomes: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as home:
        store = MemoryStore(f"sqlite:///{Path(home) / 'bench.db'}")
        store.create_schema()
        store.tenants.create("bench")
        svc = UserMemoryService(
            "bench", "u", store=store, embedder=embedder, policy=GatePolicy(), reader=lambda: reader
        )

        def write(session: str, dialog: str, text: str) -> api.WriteResult:
            turn = api.TurnIn(text=text, dialog_id=dialog)
            return svc.writes.write_turns(api.WriteTurnsRequest(session_id=session, turns=[turn]))

        for n, taste in enumerate(TASTES):
            write("s0", f"t{n}", SAID.format(taste))
        for n in range(40):
            write("s0", f"o{n}", f"{ORDINARY[n % len(ORDINARY)]} ({n})")
        for n in range(writes):
            taste = TASTES[n % len(TASTES)]
            frame = RESTATED[(n // len(TASTES)) % len(RESTATED)]
            said = frame.format(taste)
            text = f"{said[0].upper()}{said[1:]} (note {n})"
            started = time.perf_counter()
            result = write(f"s{1 + n // len(TASTES)}", f"r{n}", text)
            timings.append(time.perf_counter() - started)
            for outcome in result.outcomes:
                outcomes[outcome.action + (" + own words" if "words kept" in outcome.detail else "")] += 1
        store.dispose()
    return {"timings": timings, "outcomes": dict(outcomes)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--writes", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="a checkout to compare against (a worktree of main)")
    parser.add_argument("--json", action="store_true", help="one run of this checkout, as JSON (internal)")
    args = parser.parse_args()
    if args.json:
        print(json.dumps(one_run(args.writes)))
        return
    codes = {"this checkout": CODE} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    timings: dict[str, list[float]] = {name: [] for name in codes}
    outcomes: dict[str, Counter[str]] = {name: Counter() for name in codes}
    for r in range(args.rounds):
        for name in list(codes) if r % 2 else list(codes)[::-1]:
            env = {**os.environ, "HERMES_BENCH_CODE": str(codes[name]), "PYTHONPATH": str(codes[name])}
            done = subprocess.run(
                [sys.executable, __file__, "--json", "--writes", str(args.writes)],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            )
            run = json.loads(done.stdout.strip().splitlines()[-1])
            timings[name] += run["timings"][len(TASTES) :]  # the first of each taste warms up
            outcomes[name].update(run["outcomes"])
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average {load}; {args.rounds} rounds of {args.writes} restating writes per checkout")
    print(f"{'':<16}{'p50 ms':>9}{'p95 ms':>9}{'mean ms':>9}  outcomes")
    for name, values in timings.items():
        ms = np.asarray(values) * 1000
        print(
            f"{name:<16}{np.percentile(ms, 50):>9.2f}{np.percentile(ms, 95):>9.2f}{ms.mean():>9.2f}"
            f"  {dict(outcomes[name])}"
        )


if __name__ == "__main__":
    main()
