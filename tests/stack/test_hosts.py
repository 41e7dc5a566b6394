"""The host runtime on a real Ray: many users' calls interleaved through one host stay in each user's
arrival order and are applied exactly once; resizing the pool while users write moves each user to exactly
one host, and a host that lost a user can no longer commit for them (its fencing epoch is stale).
"""

import asyncio
import random
import uuid

import pytest
import ray
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actors.app.commands import Recall, WriteMemory, WriteTurns
from actors.core.memory import GateChanges
from actors.runtime.host import host_name
from actors.runtime.pool import HostRouter, pool_actor
from actors.runtime.rendezvous import host_of
from schemas.api import RecallRequest, TurnIn, WriteMemoryRequest, WriteTurnsRequest
from schemas.errors import OwnershipLost
from tests.stack.trust_stack import kill_app_actors, new_tenant, private_app, stream_writes

pytestmark = [pytest.mark.stack, pytest.mark.slow]


@pytest.fixture(scope="module")
def one_host(ray_session, make_stack_settings):
    """A pool of one host (hashing embedder, SQLite), driven through its typed methods."""
    from actors.store.sql.store import MemoryStore

    settings = make_stack_settings(namespace=f"hermes-host-{uuid.uuid4().hex[:6]}", hosts=1, embedder="hash")
    store = MemoryStore.from_settings(settings)
    store.create_schema()
    pool = pool_actor(settings)
    ray.get(pool.ensure.remote())
    yield settings, store, ray.get_actor(host_name(0), namespace=settings.namespace)
    kill_app_actors(settings.namespace)
    store.dispose()


WORDS = (
    "amber birch cobalt delta ember fjord garnet harbor indigo juniper kestrel lagoon meadow nectar onyx "
    "prairie quartz raven saffron tundra umber violet willow xenon yarrow zephyr"
).split()


def note(user: str, n: int) -> WriteMemoryRequest:
    rng = random.Random(f"{user}-{n}")
    return WriteMemoryRequest(
        content=" ".join(rng.sample(WORDS, 6)) + f" {user} {n}",  # little in common: never a restatement
        kind="event",
        session_id="s1",
        dialog_ids=[f"{user}-{n}"],
        remember=True,
    )


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.tuples(st.integers(0, 4), st.booleans()), min_size=5, max_size=40),
)
def test_interleaved_users_keep_their_order_and_every_write_lands_once(one_host, calls):
    settings, store, _ = one_host
    tenant_id, _ = new_tenant(store)
    sent: dict[str, list[str]] = {}
    writes = []
    for n, (user_index, resend) in enumerate(calls):
        user = f"u{user_index}"
        request = note(user, n)
        request_id = f"{user}-r{n}"
        sent.setdefault(user, []).append(f"{user}-{n}")
        writes.append((user, request, request_id))
        if resend:  # a client retry with the same request id, right behind the first
            writes.append((user, request, request_id))

    async def send_all() -> None:
        router = HostRouter(settings)
        await asyncio.gather(
            *(
                router.run(tenant_id, user, WriteMemory(request=req, request_id=rid))
                for user, req, rid in writes
            )
        )

    asyncio.run(send_all())
    for user, dialogs in sent.items():
        created = [
            e.source_dialog_id for e in reversed(store.audit.events(tenant_id, user)) if e.action == "create"
        ]
        assert created == dialogs  # arrival order, each exactly once
        assert store.memories.count(tenant_id, user) == len(dialogs)


def test_an_idle_host_prepares_a_users_next_recall_after_a_write(one_host):
    settings, store, host = one_host
    tenant_id, _ = new_tenant(store)
    user = "reader"

    async def turn(n: int) -> int:
        """A write, then a recall (which waits in the mailbox for any preparing); the host's count after."""
        router = HostRouter(settings)
        await router.run(tenant_id, user, WriteMemory(request=note(user, n), request_id=f"w{n}"))
        found = await router.run(tenant_id, user, Recall(request=RecallRequest(query=f"{user} {n}")))
        assert any(f"{user}-{n}" in hit.memory.source_dialog_ids for hit in found.hits)
        return ray.get(host.stats.remote()).prepared_recalls

    before = ray.get(host.stats.remote()).prepared_recalls
    assert asyncio.run(turn(0)) == before  # a user who never recalled: nothing built ahead
    assert asyncio.run(turn(1)) == before + 1  # the write after a recall: built before the next recall
    assert asyncio.run(turn(2)) == before + 2


def test_what_a_call_embeds_is_embedded_once_whether_it_waited_or_not(one_host):
    """A call sent alone embeds its texts itself; one sent while the user's previous call runs has them
    embedded meanwhile by its host, and the call uses those vectors. Either way each new query
    and each of a write's candidates is embedded once, and a query the user asked lately not at all."""
    settings, store, host = one_host
    tenant_id, _ = new_tenant(store)
    turns = WriteTurnsRequest(
        session_id="s1", turns=[TurnIn(dialog_id="d1", text="I moved to Lyon and I am allergic to peanuts")]
    )

    def recall(query: str) -> Recall:
        return Recall(request=RecallRequest(query=query))

    async def embedded_by(*batches) -> int:
        """How many texts the host embedded for these calls: each batch sent at once, one after another."""
        router = HostRouter(settings)
        before = ray.get(host.stats.remote()).embedded_texts
        for user, calls in batches:
            await asyncio.gather(*(router.run(tenant_id, user, c) for c in calls))
        return ray.get(host.stats.remote()).embedded_texts - before

    user = "asker"
    written = WriteMemory(request=note(user, 0), request_id="w0")
    assert asyncio.run(embedded_by((user, [written]), (user, [recall(f"{user} 0")]))) == 2
    # the second of each pair waits behind the first in the host
    pair = [recall(f"{user} 0 again"), recall(f"{user} 0 once more")]
    assert asyncio.run(embedded_by((user, pair), (user, [recall(f"{user} 0 once more")]))) == 2
    alone = asyncio.run(embedded_by(("writer", [WriteTurns(request=turns, request_id="t")])))
    assert alone >= 2  # the turn's candidates
    waited = [recall("where do I live?"), WriteTurns(request=turns, request_id="t")]
    assert asyncio.run(embedded_by((user, waited))) == 1 + alone


def test_resizing_the_pool_under_writes_keeps_each_user_in_one_host_and_fences_the_old(
    serve_app, make_stack_settings
):
    with private_app(serve_app, make_stack_settings, "resize", hosts=2) as app:
        tenant_id, key = new_tenant(app.store)
        users = [f"r{n}" for n in range(8)]
        pool = ray.get_actor("host-pool", namespace=app.settings.namespace)

        def grow_then_shrink() -> None:
            ray.get(pool.resize.remote(3), timeout=300)
            ray.get(pool.resize.remote(2), timeout=300)

        report = asyncio.run(
            stream_writes(app.base_url, key, users, 6, fault=grow_then_shrink, fault_after=12)
        )
        assert len(report.acks) == len(users) * 6
        for user in users:
            dialogs = [
                d for i in app.store.memories.page(tenant_id, user, limit=500) for d in i.source_dialog_ids
            ]
            assert len(dialogs) == len(set(dialogs)) == 6  # nothing lost, nothing applied twice
        size = ray.get(pool.size.remote())
        assert size == 2
        resident = [
            key
            for index in range(size)
            for key in ray.get(
                ray.get_actor(host_name(index), namespace=app.settings.namespace).residents.remote()
            )
        ]
        assert len(resident) == len(set(resident))  # no user resident in two hosts
        for tenant, user in resident:
            assert host_of(tenant, user, size) in range(size)
        # the claim a host held before the resize is stale once the user moved: its commit is refused
        user = users[0]
        old = app.store.fencing.claim(tenant_id, user, "host-gone")
        asyncio.run(_write_once(app.settings, tenant_id, user))  # the current host claims the user again
        with pytest.raises(OwnershipLost):
            app.store.memories.commit(
                GateChanges(), tenant_id=tenant_id, user_id=user, request_id="late", fence=old
            )


async def _write_once(settings, tenant_id: str, user: str) -> None:
    router = HostRouter(settings)
    await router.call(tenant_id, user, lambda h: h.passivate_all.remote())
    request = note(user, 99)
    await router.run(tenant_id, user, WriteMemory(request=request, request_id="after"))
