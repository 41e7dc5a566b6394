"""The router's lanes: a user's calls are numbered in the order they were made and sent at once; each tells
the host which of the lane's calls were unanswered when it was sent (its ``Turn``), a resend tells what was
answered since, and another user's calls are another lane. Pure routing logic: the pool and host handles
are stand-ins that record what they were sent, and each host call answers only when the test lets it."""

import asyncio

from actors.app.commands import Recall
from actors.runtime.pool import HostRouter
from schemas.api import RecallRequest, RecallResponse
from schemas.settings import HermesSettings


class Method:
    def __init__(self, body):
        self.body = body

    def remote(self, *args):
        return asyncio.ensure_future(self.body(*args))


class StandInHost:
    def __init__(self, unavailable_once: frozenset[str] = frozenset()):
        self.sent: list[tuple[str, str, int, int]] = []  # (query, lane, seq, low)
        self.answer: dict[str, asyncio.Event] = {}
        self.unavailable_once = set(unavailable_once)
        self.run = Method(self._run)

    async def _run(self, tenant_id, user_id, command, trace_context, turn):
        query = command.request.query
        self.sent.append((query, turn.lane, turn.seq, turn.low))
        if query in self.unavailable_once:  # the host restarting: Ray has not registered it yet
            self.unavailable_once.discard(query)
            raise ValueError("actor not registered")
        await self.answer.setdefault(query, asyncio.Event()).wait()
        return RecallResponse(query=query, hits=[])

    def let(self, query: str) -> None:
        self.answer.setdefault(query, asyncio.Event()).set()

    def turns_of(self, query: str) -> list[tuple[int, int]]:
        return [(seq, low) for q, _, seq, low in self.sent if q == query]

    def lane_of(self, query: str) -> str:
        return next(lane for q, lane, _, _ in self.sent if q == query)


class StandInPool:
    def __init__(self):
        self.size = Method(self._size)

    async def _size(self):
        return 1


def router_to(host: StandInHost) -> HostRouter:
    router = HostRouter(HermesSettings(namespace="router-test"), pool=StandInPool())
    router._host = lambda index: host  # a restarted host is looked up again by name: the same stand-in
    return router


def recall(query: str) -> Recall:
    return Recall(request=RecallRequest(query=query))


async def settle() -> None:
    for _ in range(20):  # let every ready task run to its next wait
        await asyncio.sleep(0)


def test_a_users_calls_are_sent_at_once_numbered_in_order_with_what_was_unanswered():
    host = StandInHost()

    async def scenario() -> None:
        router = router_to(host)
        calls = {q: asyncio.ensure_future(router.run("t", "u", recall(q))) for q in ("q0", "q1", "q2")}
        other = asyncio.ensure_future(router.run("t", "v", recall("v0")))
        await settle()
        # nothing waits in the router: every call is at the host, none answered yet
        assert [host.turns_of(q) for q in ("q0", "q1", "q2")] == [[(0, 0)], [(1, 0)], [(2, 0)]]
        assert host.turns_of("v0") == [(0, 0)] and host.lane_of("v0") != host.lane_of("q0")
        host.let("q0")
        assert (await calls["q0"]).query == "q0"
        calls["q3"] = asyncio.ensure_future(router.run("t", "u", recall("q3")))
        await settle()
        assert host.turns_of("q3") == [(3, 1)]  # q0 was answered before q3 left
        for q in ("q1", "q2", "q3", "v0"):
            host.let(q)
        assert [(await calls[q]).query for q in ("q1", "q2", "q3")] == ["q1", "q2", "q3"]
        await other
        # every call answered: the lane is gone, and the user's next call opens a new one
        fresh = asyncio.ensure_future(router.run("t", "u", recall("q4")))
        await settle()
        assert host.turns_of("q4") == [(0, 0)] and host.lane_of("q4") != host.lane_of("q0")
        host.let("q4")
        await fresh

    asyncio.run(scenario())


def test_a_call_resent_to_a_restarting_host_keeps_its_number_and_tells_what_was_answered_since():
    host = StandInHost(unavailable_once=frozenset({"q1"}))

    async def scenario() -> None:
        router = router_to(host)
        first = asyncio.ensure_future(router.run("t", "u", recall("q0")))
        second = asyncio.ensure_future(router.run("t", "u", recall("q1")))
        await settle()
        host.let("q0")
        await first
        host.let("q1")
        assert (await second).query == "q1"  # resent after the router's backoff

    asyncio.run(scenario())
    assert host.turns_of("q1") == [(1, 0), (1, 1)]


def test_a_host_answer_of_another_type_than_the_commands_is_refused_where_it_comes_back():
    """The host's remote method answers any model; the router reads it back as the command's response type
    (``UserCommand.answer``), and an answer of another type is an error, never passed on as the wrong one."""

    class MistypedHost(StandInHost):
        async def _run(self, tenant_id, user_id, command, trace_context, turn):
            return RecallRequest(query=command.request.query)

    async def scenario():
        router = router_to(MistypedHost())
        try:
            await router.run("t", "u", Recall(request=RecallRequest(query="q")))
        except TypeError as exc:
            return str(exc)
        return None

    assert asyncio.run(scenario()) == "recall answered RecallRequest, not RecallResponse"
