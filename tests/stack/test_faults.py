"""Nothing acknowledged is lost: real processes are killed in the middle of a stream of writes — a user
host, a Serve replica, the milvus-lite server, a Ray node — and afterwards every acknowledged write is
checked item by item: present in SQL with its dialog id, and found in Milvus by its own vector once the
hosts have drained the vector-index outbox.

The client side is the documented contract: each write carries an ``Idempotency-Key`` and is resent with the
same key until it gets a 200, so a write that committed just before a crash is answered from its stored
result, never applied twice. Writes meeting a store that is down get a 503 with ``Retry-After``.

Each test runs on a private app (own namespace, SQLite file, milvus-lite server) so that killing its
processes cannot disturb the session's app or anyone else's; pids come only from actors of that app.
"""

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import httpx
import numpy as np
import pytest
import ray

from actors.app.commands import WriteTurns
from actors.core.memory import GateChanges, MemoryItem
from localstack.milvus import MilvusLiteServer
from schemas.enums import Kind
from tests.stack.trust_stack import (
    E5_DIM,
    converge,
    duplicated_dialogs,
    kill,
    missing_acknowledged,
    new_tenant,
    private_app,
    replica_pids,
    stream_writes,
    user_host_pid,
)

pytestmark = [pytest.mark.stack, pytest.mark.slow]

PER_USER = 12
REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def own_milvus(tmp_path_factory):
    server = MilvusLiteServer(tmp_path_factory.mktemp("faults-milvus") / "data")
    server.start(timeout=120)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def app(serve_app, make_stack_settings, own_milvus):
    with private_app(serve_app, make_stack_settings, "faults", milvus_uri=own_milvus.uri) as private:
        yield private


def assert_all_there(app, tenant_id, users, report, per_user=PER_USER):
    assert len(report.acks) == len(users) * per_user
    converge(app.settings)
    index = app.index()
    try:
        assert missing_acknowledged(app.store, index, tenant_id, report.acks) == []
    finally:
        index.close()
    for user in users:
        assert duplicated_dialogs(app.store, tenant_id, user) == []


def test_user_host_killed_mid_stream_loses_no_acknowledged_write(app):
    tenant_id, key = new_tenant(app.store)
    users = ["ua", "ub"]
    killed: list[int] = []

    def crash_host() -> None:
        killed.append(user_host_pid(app.settings, tenant_id, "ua"))
        kill(killed[-1])

    report = asyncio.run(
        stream_writes(app.base_url, key, users, PER_USER, fault=crash_host, fault_after=PER_USER // 2)
    )
    assert killed and user_host_pid(app.settings, tenant_id, "ua") != killed[0]  # restarted by Ray
    assert_all_there(app, tenant_id, users, report)


def test_serve_replica_killed_mid_stream_loses_no_acknowledged_write(app):
    tenant_id, key = new_tenant(app.store)
    users = ["ra", "rb"]
    killed: list[int] = []

    def crash_replica() -> None:
        killed.extend(replica_pids(f"hermes-{app.name}"))
        for pid in killed:
            kill(pid)

    report = asyncio.run(
        stream_writes(app.base_url, key, users, PER_USER, fault=crash_replica, fault_after=PER_USER // 2)
    )
    assert killed
    assert_all_there(app, tenant_id, users, report)


def _committed_behind_the_hosts(app, tenant_id: str, user_id: str, count: int) -> list[str]:
    """Commit items straight to SQL, as a host does just before it dies: the outbox holds their index
    operations and nothing has applied them yet."""
    rng = np.random.default_rng(7)
    items = []
    for n in range(count):
        vector = rng.standard_normal(E5_DIM).astype(np.float32)
        item = MemoryItem(tenant_id=tenant_id, user_id=user_id, content=f"outbox fact {n}", kind=Kind.FACT)
        item.embedding = (vector / np.linalg.norm(vector)).tobytes()
        items.append(item)
    app.store.memories.commit(GateChanges(upserted={i.memory_id: i for i in items}))
    return [i.memory_id for i in items]


def test_outbox_is_replayed_after_a_crash_between_commit_and_index_sync(app):
    tenant_id, _ = new_tenant(app.store)
    committed = _committed_behind_the_hosts(app, tenant_id, "ob", 5)
    index = app.index()
    try:
        deadline = time.monotonic() + 90
        while not set(committed) <= index.ids(tenant_id, "ob"):  # the owning host polls the outbox
            assert time.monotonic() < deadline, "the outbox was never drained"
            time.sleep(0.5)
        # and again with the owning host killed before it could drain: its restart replays the entries
        more = ["oc"]
        pid = user_host_pid(app.settings, tenant_id, more[0])
        kill(pid)
        replayed = _committed_behind_the_hosts(app, tenant_id, more[0], 5)
        deadline = time.monotonic() + 120
        while not set(replayed) <= index.ids(tenant_id, more[0]):
            assert time.monotonic() < deadline, "the restarted host never replayed the outbox"
            time.sleep(0.5)
        assert user_host_pid(app.settings, tenant_id, more[0]) != pid
    finally:
        index.close()


def test_milvus_killed_mid_stream_then_indexes_converge(app, own_milvus):
    tenant_id, key = new_tenant(app.store)
    users = ["ma", "mb"]
    down_answers: list[httpx.Response] = []

    def crash_milvus_and_recall() -> None:
        kill(own_milvus._process.pid)
        own_milvus._process.wait()
        with httpx.Client(base_url=app.base_url, timeout=120) as http:
            down_answers.append(
                http.post("/v1/users/ma/recall", json={"query": "locker code"}, headers={"X-API-Key": key})
            )
        own_milvus._process = None
        own_milvus.start(timeout=120)  # same data dir, same port

    report = asyncio.run(
        stream_writes(app.base_url, key, users, PER_USER, fault=crash_milvus_and_recall, fault_after=8)
    )
    recall_while_down = down_answers[0]
    assert recall_while_down.status_code == 200, recall_while_down.text  # recall never needs the index
    # no reindex job, no manual drain: the hosts' outbox catches up on its own once Milvus answers
    index = app.index()
    try:
        deadline = time.monotonic() + 120
        while missing_acknowledged(app.store, index, tenant_id, report.acks):
            assert time.monotonic() < deadline, "the index never caught up"
            time.sleep(1)
    finally:
        index.close()
    assert_all_there(app, tenant_id, users, report)


def test_write_while_sql_is_locked_gets_503_and_lands_when_resent(app):
    tenant_id, key = new_tenant(app.store)
    body = {"session_id": "s1", "turns": [{"text": "Remember this: my bike is teal", "dialog_id": "d1"}]}
    headers = {"X-API-Key": key, "Idempotency-Key": "locked-1"}
    with httpx.Client(base_url=app.base_url, timeout=120) as http:
        assert http.get("/v1/users/lk/memories", headers={"X-API-Key": key}).status_code == 200  # activate
        blocker = sqlite3.connect(Path(app.settings.home) / "hermes.db", isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")  # holds the write lock past the store's busy timeout
        try:
            refused = http.post("/v1/users/lk/turns", json=body, headers=headers)
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        assert refused.status_code == 503, refused.text
        assert refused.json()["error"] == "store_unavailable" and int(refused.headers["Retry-After"]) >= 1
        assert app.store.memories.page(tenant_id, "lk") == []  # refused means not stored
        accepted = http.post("/v1/users/lk/turns", json=body, headers=headers)
        assert accepted.status_code == 200, accepted.text
        again = http.post("/v1/users/lk/turns", json=body, headers=headers)
        assert again.json() == accepted.json()
    stored = app.store.memories.page(tenant_id, "lk")
    assert [i.source_dialog_ids for i in stored] == [("d1",)]


# -------------------------------------------------------------------------------------------- Ray node


def test_ray_node_crash_loses_no_acknowledged_write(make_stack_settings):
    """A three-node Ray cluster (``ray.cluster_utils.Cluster``) in a child process, so it cannot meet the
    session's Ray: the pool's three hosts are placed one per node by a custom resource each node declares
    (``host_resource``: Ray's SPREAD alone is best effort and once put all three on one node); mid-stream,
    the worker node that hosts the most users is killed outright (its raylet and workers), a replacement
    node declaring the same resource joins, Ray restarts the lost host there, and the writers
    (``HostRouter``, the path behind both front doors) carry on, resending until acknowledged."""
    settings = make_stack_settings(namespace=f"hermes-node-{uuid.uuid4().hex[:6]}", hosts=3)
    child = subprocess.Popen(
        [sys.executable, __file__, settings.model_dump_json()],
        cwd=REPO_ROOT,
        # on a busy machine a joining node's agents can take minutes to start: its raylet must wait for them
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "RAY_agent_register_timeout_ms": "900000"},
        stdout=subprocess.PIPE,
        start_new_session=True,  # its own process group: on a timeout we kill exactly what we started
    )
    try:
        out, _ = child.communicate(timeout=1200)  # a bound on a hang, not a speed target
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        raise
    assert child.returncode == 0, out.decode(errors="replace")[-2000:]
    result = json.loads(out.decode().strip().splitlines()[-1])
    assert result["nodes_with_hosts"] == 3  # one host per node, as placed
    assert result["acks"] == NODE_USERS * NODE_WRITES
    assert result["node_killed"] and result["users_on_killed_node"] >= 1
    assert result["missing"] == [] and result["duplicated"] == []


#: twelve users over three hosts, one host per node: rendezvous hashing gives the workers' hosts some users
NODE_USERS = 12
NODE_WRITES = 4


def node_crash_scenario(settings_json: str) -> dict:
    from ray.cluster_utils import Cluster

    from actors.runtime.pool import HostRouter, pool_actor
    from actors.runtime.rendezvous import host_of
    from actors.store.sql.store import MemoryStore
    from actors.store.vectors.milvus import MilvusIndex
    from schemas.api import WriteTurnsRequest
    from schemas.settings import HermesSettings
    from tests.stack.trust_stack import Ack, duplicated_dialogs, fact_text, missing_acknowledged

    settings = HermesSettings.model_validate_json(settings_json)
    store = MemoryStore.from_settings(settings)
    store.create_schema()
    tenant_id = "nodes"
    store.tenants.create(tenant_id)
    users = [f"n{i}" for i in range(NODE_USERS)]
    settings = settings.model_copy(update={"host_resource": "node-crash-host-"})

    def takes_host(index: int) -> dict[str, float]:
        return {f"{settings.host_resource}{index}": 1.0}

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "resources": takes_host(0)})
    workers = [cluster.add_node(num_cpus=1, resources=takes_host(i)) for i in (1, 2)]
    try:
        ray.init(address=cluster.address, namespace=settings.namespace)
        cluster.wait_for_nodes()
        pool = pool_actor(settings)
        ray.get(pool.ensure.remote())
        router = HostRouter(settings, pool)
        acks: list[Ack] = []
        state = {"node_killed": False, "users_on_killed_node": 0, "nodes_with_hosts": 0}

        def host_nodes() -> list[str]:
            return [
                ray.get(ray.get_actor(f"host-{i}", namespace=settings.namespace).node_id.remote())
                for i in range(settings.hosts)
            ]

        def crash_node() -> None:
            nodes = host_nodes()
            state["nodes_with_hosts"] = len(set(nodes))
            placement = Counter(nodes[host_of(tenant_id, u, settings.hosts)] for u in users)
            doomed = max(workers, key=lambda node: placement[node.node_id])
            state["users_on_killed_node"] = placement[doomed.node_id]
            cluster.remove_node(doomed, allow_graceful=False)
            state["node_killed"] = True
            cluster.add_node(num_cpus=1, resources=takes_host(1 + workers.index(doomed)))  # the replacement

        async def write(user: str, n: int) -> None:
            request = WriteTurnsRequest.model_validate(
                {"session_id": f"s{n % 3}", "turns": [{"text": fact_text(n), "dialog_id": f"d{n}"}]}
            )
            for attempt in range(1, 400):
                try:
                    write = WriteTurns(request=request, request_id=f"{user}-w{n}")
                    result = await router.run(tenant_id, user, write)
                except Exception:  # noqa: BLE001 - during the outage any failure means "resend"
                    await asyncio.sleep(0.5)
                    continue
                memory_ids = [o.memory_id for o in result.outcomes]
                acks.append(Ack(user, f"d{n}", fact_text(n), memory_ids, attempt))
                return
            raise AssertionError(f"write {n} of {user} never acknowledged")

        async def stream() -> None:
            gate = asyncio.Semaphore(4)

            async def one(user: str, n: int) -> None:
                async with gate:
                    await write(user, n)

            await asyncio.gather(*(one(u, n) for n in range(NODE_WRITES) for u in users))

        # the writers run in a thread: Cluster may only add and remove nodes from the main thread
        writers = threading.Thread(target=asyncio.run, args=(stream(),))
        writers.start()
        while len(acks) < 2 * NODE_USERS and writers.is_alive():
            time.sleep(0.05)
        crash_node()
        writers.join()
        drained_by = time.monotonic() + 300
        while True:
            try:
                ray.get(pool.drain_outboxes.remote(), timeout=300)
                break
            except ray.exceptions.ActorUnavailableError:
                # the host of the killed node may still be restarting: its outbox drains once it is back
                if time.monotonic() > drained_by:
                    raise
                time.sleep(1)
        index = MilvusIndex(settings.milvus_uri, settings.milvus_collection, E5_DIM)
        missing = missing_acknowledged(store, index, tenant_id, acks)
        duplicated = [d for u in users for d in duplicated_dialogs(store, tenant_id, u)]
        index.close()
        return {"acks": len(acks), "missing": missing, "duplicated": duplicated, **state}
    finally:
        ray.shutdown()
        cluster.shutdown()
        store.dispose()


if __name__ == "__main__":
    print(json.dumps(node_crash_scenario(sys.argv[1])), flush=True)
