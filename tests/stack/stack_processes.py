"""The processes of one running ``hermes-memory up`` stack, by role, for tests and benchmarks that kill them.

Only this stack's processes are ever named: its Ray cluster is private (``up`` starts its own, whose GCS
address it writes to ``<home>/ray.address``), so every actor in that cluster's actor table is the stack's;
its milvus-lite server is the one recorded in ``<home>/milvus.pid``. Other Ray stacks on the machine are
never looked at (no search by process name).

The actor table is read by a short child process that joins the stack's cluster (``python -m
tests.stack.stack_processes <gcs address>``), so a caller that runs a Ray of its own (the test session)
never has to leave it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from localstack.milvus import read_pidfile

REPO = Path(__file__).resolve().parents[2]

#: the roles a kill can pick, in the order the issue's table lists them
ROLES = ("ingress", "user_host", "host_pool", "serve_controller", "serve_proxy", "milvus")


@dataclass(frozen=True)
class StackProcess:
    role: str
    name: str
    pid: int


def role_of(actor_name: str, class_name: str) -> str | None:
    """The role of a live actor of the stack, from its name (replicas, hosts, pool, controller) or its
    class (the proxy), or None for an actor nobody kills (e.g. a job's)."""
    if actor_name.startswith("SERVE_REPLICA::"):
        return "ingress"
    if actor_name.startswith("host-") and actor_name != "host-pool":
        return "user_host"
    if actor_name == "host-pool":
        return "host_pool"
    if actor_name == "SERVE_CONTROLLER_ACTOR":
        return "serve_controller"
    if class_name == "ProxyActor":
        return "serve_proxy"
    return None


def live_actors(gcs_address: str) -> list[dict[str, object]]:
    """Name, class and pid of every live actor of the cluster at ``gcs_address`` (asked of a child)."""
    result = subprocess.run(
        [sys.executable, "-m", "tests.stack.stack_processes", gcs_address],
        cwd=REPO,
        # a local cluster started by `up` requires the machine's Ray token (~/.ray/auth_token)
        env={"RAY_AUTH_MODE": "token", **os.environ, "RAY_ADDRESS": ""},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def stack_processes(home: Path) -> list[StackProcess]:
    """Every killable process of the stack started from ``home``, each with its role."""
    gcs_address = (home / "ray.address").read_text().strip()
    found = []
    for actor in live_actors(gcs_address):
        role = role_of(str(actor["name"]), str(actor["class_name"]))
        if role is not None and int(actor["pid"]) > 0:  # type: ignore[call-overload]
            found.append(StackProcess(role, str(actor["name"]), int(actor["pid"])))  # type: ignore[call-overload]
    milvus = read_pidfile(home / "milvus.pid")
    if milvus is not None:
        found.append(StackProcess("milvus", "milvus-lite", milvus.pid))
    return found


def _print_actor_table(gcs_address: str) -> None:
    import ray

    ray.init(address=gcs_address, logging_level="ERROR", log_to_driver=False)
    try:
        actors = [
            {"name": info["Name"], "class_name": info["ActorClassName"], "pid": info["Pid"]}
            for info in ray._private.state.actors().values()  # the GCS's actor table: no dashboard needed
            if info["State"] == "ALIVE"
        ]
    finally:
        ray.shutdown()
    print(json.dumps(actors))


if __name__ == "__main__":
    _print_actor_table(sys.argv[1])
