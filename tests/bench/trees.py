"""This checkout against another tree, side by side: each tree's code measured in a child process of its own
(the tree first on ``PYTHONPATH``, then this checkout for the benchmark's own modules), rounds alternating so
that a busy moment shows as a disagreement between rounds of one tree. The child is the benchmark script
itself, run with ``--child`` and its arguments; it prints its figures as a JSON object on its last line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def side_by_side(
    script: str,
    child_args: list[str],
    baseline: Path | None,
    rounds: int,
    columns: dict[str, str],
    caption: str,
) -> None:
    """Print a markdown table, one row per round and tree, one column per figure (``columns``: the child's
    key → its heading), with the load average before and after."""
    trees = {"this checkout": REPO, **({"baseline": baseline} if baseline else {})}
    print(f"load average {os.getloadavg()[0]:.2f}; {caption}")
    print(f"| round | tree | {' | '.join(columns.values())} |")
    print(f"|---|---|{'---:|' * len(columns)}")
    for round_number in range(1, rounds + 1):
        for name, tree in trees.items():
            figures = _in_child(script, tree, child_args)
            cells = " | ".join(str(figures[key]) for key in columns)
            print(f"| {round_number} | {name} | {cells} |", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f}")


def _in_child(script: str, tree: Path, child_args: list[str]) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{REPO}"}
    command = [sys.executable, str(Path(script).resolve()), "--child", *child_args]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True, timeout=1800)
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures
