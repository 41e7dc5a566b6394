"""What one crashed process costs: the time until every call answers again, and whether anything
acknowledged was lost (issue 35). A benchmark that prints figures, not a test.

The stack is started as a user starts it (``hermes-memory up --detach``, from ``--tree``: this checkout by
default, or e.g. a worktree of main) on a private home and port; only its own processes are killed, found
through its own Ray cluster (``tests.stack.stack_processes``), by SIGKILL.

* ``table``: each process of the stack killed once, in turn (the ingress replica, a user host, the host pool,
  the Serve controller, the milvus-lite server; with ``--postgres`` the stack runs on PostgreSQL and the
  server is restarted under it). After each kill, probe rounds (a write and a recall for every probe user)
  run back to back; the figure is the seconds from the kill until a whole round answers 200, with every
  other answer met meanwhile (a 503 counts only when it carries ``Retry-After``; a timeout is a hang).
* ``chaos``: ``--clients`` clients write (each write resent with its ``Idempotency-Key`` until a 200) and
  recall while a killer SIGKILLs a random process of the stack every ``--every`` seconds, for
  ``--minutes``. Then every acknowledged write is looked up in SQL: lost (an acknowledged memory missing),
  duplicated (a dialog stored twice); and from the calls' timeline: the longest time a client went without
  an answer (between two of its successes), and over the kills the time until every client had a call
  sent after the kill answered (p50, p95, max).

The load average is printed with each figure.

    .venv/bin/python tests/bench/bench_chaos.py table
    .venv/bin/python tests/bench/bench_chaos.py table --roles ingress --tree /tmp/base-main    # main's code
    .venv/bin/python tests/bench/bench_chaos.py table --postgres --roles postgres
    flock /tmp/hermes-bench.lock .venv/bin/python tests/bench/bench_chaos.py chaos --minutes 5 --every 5
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.bench.bench_hosts import stack  # noqa: E402
from tests.bench.loadgen import percentile  # noqa: E402
from tests.stack.stack_processes import ROLES, stack_processes  # noqa: E402
from tests.stack.trust_stack import fact_text  # noqa: E402

POSTGRES_ROLE = "postgres"
POSTGRES_RESTART = ["pg_ctlcluster", "--skip-systemctl-redirect", "15", "main", "restart"]
POSTGRES_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
#: a call taking longer than this is a hang, not a slow answer
CALL_TIMEOUT_S = 30.0


def load() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def say(line: str) -> None:
    print(line, flush=True)


# ------------------------------------------------------------------------------------------------ calls


@dataclass
class Call:
    user: str
    op: str
    started: float
    ended: float
    outcome: str  # "200", "503+Retry-After", "503", "500", ..., or the exception's name

    @property
    def ok(self) -> bool:
        return self.outcome == "200"


def outcome_of(response: httpx.Response) -> str:
    if response.status_code == 503 and "retry-after" in response.headers:
        return "503+Retry-After"
    return str(response.status_code)


class Client:
    """Writes and recalls of one tenant's users; every call's outcome goes to ``calls``."""

    def __init__(self, http: httpx.AsyncClient, key: str, calls: list[Call]):
        self.http = http
        self.key = key
        self.calls = calls

    async def _send(
        self, user: str, op: str, path: str, body: dict, headers: dict[str, str]
    ) -> httpx.Response | None:
        started = time.monotonic()
        try:
            response = await self.http.post(path, json=body, headers={"X-API-Key": self.key, **headers})
            outcome = outcome_of(response)
        except httpx.HTTPError as exc:
            response, outcome = None, type(exc).__name__
        self.calls.append(Call(user, op, started, time.monotonic(), outcome))
        return response

    async def write_once(self, user: str, n: int, idempotency_key: str) -> httpx.Response | None:
        body = {"session_id": f"s{n % 3}", "turns": [{"text": fact_text(n), "dialog_id": f"d{n}"}]}
        headers = {"Idempotency-Key": idempotency_key}
        return await self._send(user, "write", f"/v1/users/{user}/turns", body, headers)

    async def recall_once(self, user: str, n: int) -> httpx.Response | None:
        body = {"query": f"which locker {n}?"}
        return await self._send(user, "recall", f"/v1/users/{user}/recall", body, {})


# ------------------------------------------------------------------------------------------------ kills


def kill_role(home: Path, role: str, rng: random.Random) -> tuple[str, float]:
    """SIGKILL one process of ``role`` of the stack at ``home`` (or restart PostgreSQL): (what was killed,
    the moment of the kill, or of the restart's start)."""
    if role == POSTGRES_ROLE:
        started = time.monotonic()
        subprocess.run(POSTGRES_RESTART, check=True, capture_output=True, timeout=120)
        return "postgresql (restarted)", started
    candidates = [p for p in stack_processes(home) if p.role == role]
    if not candidates:
        return f"{role}: none running", time.monotonic()
    victim = rng.choice(candidates)
    os.kill(victim.pid, 9)
    return f"{victim.role} {victim.name} pid {victim.pid}", time.monotonic()


# ------------------------------------------------------------------------------------------------ table


async def probe_round(client: Client, users: list[str], serial: int) -> list[str]:
    first = len(client.calls)
    for user in users:
        await client.write_once(user, serial, f"probe-{uuid.uuid4().hex}")
        await client.recall_once(user, serial)
    return [call.outcome for call in client.calls[first:]]


async def time_to_recover(
    base_url: str, key: str, home: Path, role: str, users: list[str], bound: float, rng: random.Random
) -> tuple[float | None, Counter[str], str]:
    """(seconds from the kill until a whole probe round answers 200 — None past ``bound`` —, the outcomes
    met meanwhile, what was killed)."""
    calls: list[Call] = []
    async with httpx.AsyncClient(base_url=base_url, timeout=CALL_TIMEOUT_S) as http:
        client = Client(http, key, calls)
        serial = 0
        while set(await probe_round(client, users, serial)) != {"200"}:  # warm: every user resident
            serial += 1
            await asyncio.sleep(1)
        # probing goes on while the kill (or PostgreSQL's restart) happens
        kill = asyncio.ensure_future(asyncio.to_thread(kill_role, home, role, rng))
        while not kill.done():
            serial += 1
            await probe_round(client, users, serial)
        killed, kill_time = kill.result()
        while time.monotonic() - kill_time < bound:
            serial += 1
            started = time.monotonic()
            if set(await probe_round(client, users, serial)) == {"200"} and started > kill_time:
                met = Counter(c.outcome for c in calls if c.ended > kill_time)
                return calls[-1].ended - kill_time, met, killed
            await asyncio.sleep(0.1)  # a refused connection returns at once: no busy loop
        return None, Counter(c.outcome for c in calls if c.ended > kill_time), killed


def run_table(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    env = stack_env(args)
    with tempfile.TemporaryDirectory(prefix="hermes-chaos-") as home_dir, stack(
        args.tree, Path(home_dir), env, say
    ) as (base_url, key, _pid):
        home = Path(home_dir)
        users = [f"probe{i}" for i in range(args.users)]
        say(f"tree {args.tree}, {len(users)} probe users, bound {args.bound:.0f} s; {load()}")
        say("| process killed | every call answers 200 again after | outcomes meanwhile | load |")
        say("|---|---|---|---|")
        for role in args.roles:
            seconds, outcomes, killed = asyncio.run(
                time_to_recover(base_url, key, home, role, users, args.bound, rng)
            )
            figure = f"{seconds:.1f} s" if seconds is not None else f"> {args.bound:.0f} s"
            met = ", ".join(f"{name} ×{count}" for name, count in outcomes.most_common())
            say(f"| {killed} | {figure} | {met} | {load()} |")


# ------------------------------------------------------------------------------------------------ chaos


@dataclass
class Acked:
    user: str
    dialog_id: str
    memory_ids: list[str]


@dataclass
class ChaosLog:
    calls: list[Call] = field(default_factory=list)
    acks: list[Acked] = field(default_factory=list)
    kills: list[tuple[float, str]] = field(default_factory=list)
    abandoned: int = 0


async def chaos_client(
    client: Client, user: str, log: ChaosLog, stop_at: float, rng: random.Random
) -> None:
    n = 0
    while time.monotonic() < stop_at:
        n += 1
        key = f"{user}-w{n}"
        give_up = time.monotonic() + 300  # a write keeps its key until acknowledged, past the stop
        while True:
            response = await client.write_once(user, n, key)
            if response is not None and response.status_code == 200:
                ids = [o["memory_id"] for o in response.json()["outcomes"]]
                log.acks.append(Acked(user, f"d{n}", ids))
                break
            if time.monotonic() > give_up:
                log.abandoned += 1
                break
            await asyncio.sleep(retry_delay(response))
        await client.recall_once(user, rng.randrange(n + 1))


def retry_delay(response: httpx.Response | None) -> float:
    """Honour ``Retry-After`` (capped at 1 s, so recovery is seen when it happens); else 0.2 s."""
    if response is not None and "retry-after" in response.headers:
        return min(1.0, float(response.headers["retry-after"]))
    return 0.2


async def killer(home: Path, roles: list[str], every: float, stop_at: float, log: ChaosLog, rng) -> None:
    next_kill = time.monotonic() + every
    while next_kill < stop_at:  # on a fixed schedule: finding the pids takes a few seconds itself
        await asyncio.sleep(max(0.0, next_kill - time.monotonic()))
        next_kill += every
        role = rng.choice(roles)
        killed, kill_time = await asyncio.to_thread(kill_role, home, role, rng)
        log.kills.append((kill_time, killed))
        say(f"  {time.monotonic() - log.kills[0][0]:6.1f} s  killed {killed}")


async def chaos(base_url: str, key: str, home: Path, args: argparse.Namespace) -> ChaosLog:
    rng = random.Random(args.seed)
    log = ChaosLog()
    stop_at = time.monotonic() + args.minutes * 60
    limits = httpx.Limits(max_connections=args.clients * 2)
    async with httpx.AsyncClient(base_url=base_url, timeout=CALL_TIMEOUT_S, limits=limits) as http:
        client = Client(http, key, log.calls)
        users = [f"chaos{i}" for i in range(args.clients)]
        await asyncio.gather(
            killer(home, args.roles, args.every, stop_at, log, rng),
            *(chaos_client(client, user, log, stop_at, random.Random(i)) for i, user in enumerate(users)),
        )
    return log


def longest_unavailability(calls: list[Call]) -> float:
    """The longest time a client went without an answer: between two successive successes of one client
    (whether the calls between failed or hung)."""
    longest = 0.0
    for user in {c.user for c in calls}:
        ends = sorted(c.ended for c in calls if c.user == user and c.ok)
        longest = max([longest, *(later - earlier for earlier, later in zip(ends, ends[1:], strict=False))])
    return longest


def recovery_times(calls: list[Call], kills: list[tuple[float, str]]) -> list[float]:
    """Per kill: seconds until every client has had a call sent after the kill answered 200."""
    times = []
    users = {c.user for c in calls}
    for kill_time, _ in kills:
        firsts = [
            min((c.ended for c in calls if c.user == user and c.ok and c.started >= kill_time), default=None)
            for user in users
        ]
        if None not in firsts:
            times.append(max(firsts) - kill_time)  # type: ignore[type-var]
    return times


def check_acknowledged(home: Path, acks: list[Acked]) -> tuple[list[str], list[str]]:
    """(acknowledged memories missing from SQL, dialog ids stored more than once), for the demo tenant."""
    from actors.store.sql.store import MemoryStore
    from schemas.settings import HermesSettings
    from tests.stack.trust_stack import duplicated_dialogs

    store = MemoryStore.from_settings(HermesSettings(home=home))
    try:
        lost, duplicated = [], []
        for user in sorted({a.user for a in acks}):
            stored = {item.memory_id: item for item in store.memories.page("demo", user, limit=100_000)}
            for ack in (a for a in acks if a.user == user):
                kept = [m in stored and ack.dialog_id in stored[m].source_dialog_ids for m in ack.memory_ids]
                if not kept or not all(kept):
                    lost.append(f"{user}/{ack.dialog_id}")
            duplicated += [f"{user}/{d}" for d in duplicated_dialogs(store, "demo", user)]
        return lost, duplicated
    finally:
        store.dispose()


def run_chaos(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="hermes-chaos-") as home_dir, stack(
        args.tree, Path(home_dir), stack_env(args), say
    ) as (base_url, key, _pid):
        home = Path(home_dir)
        say(f"chaos: {args.clients} clients, a kill every {args.every:.0f} s for {args.minutes:g} min "
            f"among {', '.join(args.roles)}; {load()}")
        log = asyncio.run(chaos(base_url, key, home, args))
        load_after = load()
        lost, duplicated = check_acknowledged(home, log.acks)
    recoveries = recovery_times(log.calls, log.kills)
    outcomes = Counter(c.outcome for c in log.calls)
    by_role = Counter(killed.split()[0] for _, killed in log.kills)
    say(f"kills: {len(log.kills)} ({', '.join(f'{r} ×{n}' for r, n in by_role.most_common())})")
    say(f"calls: {len(log.calls)}; outcomes: {', '.join(f'{o} ×{n}' for o, n in outcomes.most_common())}")
    say(f"acknowledged writes: {len(log.acks)}; lost: {len(lost)}; duplicated: {len(duplicated)}; "
        f"writes abandoned unacknowledged: {log.abandoned}")
    say(f"longest unavailability: {longest_unavailability(log.calls):.1f} s")
    p95 = percentile(recoveries, 0.95)
    p50 = percentile(recoveries, 0.50)
    if p95 is not None and p50 is not None:
        say(f"time to recover after a kill: p50 {p50:.1f} s, p95 {p95:.1f} s, max {max(recoveries):.1f} s "
            f"({len(recoveries)} of {len(log.kills)} kills recovered before the end)")
    say(f"{load_after}")
    if lost or duplicated:
        say(f"LOST: {lost[:20]}\nDUPLICATED: {duplicated[:20]}")


# ------------------------------------------------------------------------------------------------ main


def stack_env(args: argparse.Namespace) -> dict[str, str]:
    env = {"HERMES_EMBEDDER": args.embedder}
    if args.postgres:
        database = f"hermes_chaos_{uuid.uuid4().hex[:8]}"
        subprocess.run(["psql", POSTGRES_ADMIN_URL, "-c", f"CREATE DATABASE {database}"], check=True,
                       capture_output=True)
        env["HERMES_SQL_URL"] = f"postgresql+psycopg://postgres@127.0.0.1:5432/{database}"
    return env


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["table", "chaos"])
    parser.add_argument("--tree", type=Path, default=REPO, help="the checkout whose code the stack runs")
    parser.add_argument("--roles", nargs="+", help=f"what may be killed (default: {' '.join(ROLES)})")
    parser.add_argument("--postgres", action="store_true", help="the stack on PostgreSQL at 127.0.0.1:5432")
    parser.add_argument("--embedder", default="e5", help="HERMES_EMBEDDER of the stack")
    parser.add_argument("--users", type=int, default=4, help="table: probe users (spread over the hosts)")
    parser.add_argument("--bound", type=float, default=240.0, help="table: seconds to wait for a recovery")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--every", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=35)
    args = parser.parse_args(argv)
    args.tree = args.tree.resolve()
    if args.roles is None:
        args.roles = [*ROLES, POSTGRES_ROLE] if args.postgres else list(ROLES)
    (run_table if args.mode == "table" else run_chaos)(args)


if __name__ == "__main__":
    main()
