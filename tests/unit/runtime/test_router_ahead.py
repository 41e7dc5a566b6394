"""The router's lanes: a user's calls leave one at a time, in the order they were made, and a call that waits
behind the user's earlier calls has its queries embedded by the user's host meanwhile. Pure routing logic:
the pool and host handles are stand-ins that record what they were asked, and each host call answers only
when the test lets it."""

import asyncio

import numpy as np
import pytest

from actors.app.commands import Recall, WriteMemory, WriteTurns
from actors.app.service import Embedded
from actors.core.extraction import make_extractor
from actors.runtime.pool import HostRouter
from schemas.api import RecallRequest, TurnIn, WriteMemoryRequest, WriteTurnsRequest
from schemas.settings import HermesSettings


class Method:
    def __init__(self, body):
        self.body = body

    def remote(self, *args):
        return asyncio.ensure_future(self.body(*args))


class StandInHost:
    def __init__(self, ahead_fails: bool = False):
        self.log: list[tuple] = []
        self.answer: dict[str, asyncio.Event] = {}
        self.ahead_fails = ahead_fails
        self.run = Method(self._run)
        self.embed_ahead = Method(self._embed_ahead)

    async def _run(self, tenant_id, user_id, command, trace_context, embedded):
        name = named(command)
        self.log.append(("run", name, None if embedded is None else sorted(embedded.queries)))
        await self.answer.setdefault(name, asyncio.Event()).wait()
        return name

    async def _embed_ahead(self, tenant_id, user_id, command, trace_context):
        self.log.append(("ahead", named(command)))
        if self.ahead_fails:
            raise ConnectionError("host restarting")
        texts = command.texts(make_extractor())
        return Embedded(queries={text: np.ones(4, dtype=np.float32) for text in texts.queries})

    def let(self, name: str) -> None:
        self.answer.setdefault(name, asyncio.Event()).set()


class StandInPool:
    def __init__(self):
        self.size = Method(self._size)

    async def _size(self):
        return 1


def router_to(host: StandInHost) -> HostRouter:
    router = HostRouter(HermesSettings(namespace="router-test"), pool=StandInPool())
    router._hosts[0] = host
    return router


def named(command) -> str:
    if isinstance(command, Recall):
        return command.request.query
    if isinstance(command, WriteTurns):
        return command.request.turns[0].dialog_id
    return command.request.content


def recall(query: str) -> Recall:
    return Recall(request=RecallRequest(query=query))


def write(content: str) -> WriteMemory:
    return WriteMemory(
        request=WriteMemoryRequest(content=content, kind="fact", session_id="s", dialog_ids=["d"]),
        request_id=content,
    )


def turn(dialog_id: str) -> WriteTurns:
    said = TurnIn(dialog_id=dialog_id, text="I am allergic to peanuts")
    return WriteTurns(request=WriteTurnsRequest(session_id="s", turns=[said]), request_id=dialog_id)


async def settle() -> None:
    for _ in range(20):  # let every ready task run to its next wait
        await asyncio.sleep(0)


@pytest.mark.parametrize("ahead_fails", [False, True])
def test_a_call_waiting_behind_the_users_call_has_its_query_embedded_meanwhile(ahead_fails):
    host = StandInHost(ahead_fails)

    async def scenario() -> None:
        router = router_to(host)
        first = asyncio.ensure_future(router.run("t", "u", recall("q1")))
        await settle()
        second = asyncio.ensure_future(router.run("t", "u", recall("q2")))
        other_user = asyncio.ensure_future(router.run("t", "v", recall("q3")))
        await settle()
        # q2 waits in its lane behind q1 and is embedded meanwhile; another user's call does not wait
        assert sorted(map(repr, host.log)) == sorted(
            map(repr, [("run", "q1", None), ("ahead", "q2"), ("run", "q3", None)])
        )
        host.let("q1")
        host.let("q3")
        assert await first == "q1" and await other_user == "q3"
        await settle()
        # without its vectors (the host could not embed them) the call embeds them itself
        assert host.log[-1] == ("run", "q2", None if ahead_fails else ["q2"])
        host.let("q2")
        assert await second == "q2"

    asyncio.run(scenario())


def test_calls_leave_in_order_and_only_a_waiting_call_that_embeds_is_embedded_ahead():
    host = StandInHost()
    calls = [write("w1"), recall("q1"), turn("t1"), recall("q2"), write("w2"), recall("q3")]

    async def scenario() -> None:
        router = router_to(host)
        alone = asyncio.ensure_future(router.run("t", "u", recall("q0")))
        await settle()
        host.let("q0")
        await alone  # a call with nothing ahead of it: no extra host call
        sent = [asyncio.ensure_future(router.run("t", "u", c)) for c in calls]
        for c in calls:
            await settle()
            host.let(named(c))
        await asyncio.gather(*sent)

    asyncio.run(scenario())
    runs = [entry[1] for entry in host.log if entry[0] == "run"]
    assert runs == ["q0", "w1", "q1", "t1", "q2", "w2", "q3"]
    # a recall's query and a write's turns are embedded ahead; an explicit memory is not
    assert sorted(entry[1] for entry in host.log if entry[0] == "ahead") == ["q1", "q2", "q3", "t1"]
    assert [entry[2] for entry in host.log if entry[0] == "run" and entry[1] in ("q1", "q2", "q3")] == [
        ["q1"],
        ["q2"],
        ["q3"],
    ]
