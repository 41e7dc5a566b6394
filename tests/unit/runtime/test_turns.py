"""The order of a user's calls inside a host (``Turnstile``): whatever order the calls of a lane arrive in,
they take their places in the mailbox in the order the router numbered them; calls the router already had
answers for are not waited for; a call whose predecessor never comes goes on after its patience. Pure
asyncio: the mailbox is an ``asyncio.Lock`` as in the host."""

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from actors.runtime.turns import Turn, Turnstile


async def settle(rounds: int = 50) -> None:
    for _ in range(rounds):  # let every ready task run to its next wait
        await asyncio.sleep(0)


async def host_call(turns: Turnstile, mailbox: asyncio.Lock, turn: Turn, entered: list[int]) -> None:
    """What ``UserHost.run`` does with a turn: wait for it, take the mailbox, let the next call follow."""
    try:
        await turns.wait(turn)
        await mailbox.acquire()
    finally:
        turns.passed(turn)
    try:
        entered.append(turn.seq)
        await settle(3)  # the call's own work
    finally:
        mailbox.release()


@settings(max_examples=200, deadline=None)
@given(
    calls=st.integers(1, 12),
    answered_before=st.integers(0, 4),
    arrival=st.randoms(use_true_random=False),
    gaps=st.lists(st.integers(0, 3), min_size=16, max_size=16),
)
def test_calls_take_the_mailbox_in_their_lanes_order_whatever_order_they_arrive_in(
    calls, answered_before, arrival, gaps
):
    # the lane's first calls were answered before the others were sent (elsewhere, or before a restart):
    # the host never sees them, and the others carry them as answered (``low``)
    numbers = range(answered_before, answered_before + calls)
    turns_sent = [Turn("lane", seq, answered_before) for seq in numbers]
    order = list(turns_sent)
    arrival.shuffle(order)

    async def scenario() -> list[int]:
        turns, mailbox, entered = Turnstile(patience=3600), asyncio.Lock(), []
        other = asyncio.ensure_future(host_call(turns, mailbox, Turn("other", 0, 0), []))
        tasks = [other]
        for turn, gap in zip(order, gaps, strict=False):
            tasks.append(asyncio.ensure_future(host_call(turns, mailbox, turn, entered)))
            await settle(gap)
        for _ in range(10_000):  # far more loop turns than the calls need
            if all(task.done() for task in tasks):
                break
            await asyncio.sleep(0)
        assert all(task.done() for task in tasks)  # nobody waits out its patience
        return entered

    assert asyncio.run(scenario()) == [turn.seq for turn in turns_sent]


def test_a_resent_call_is_told_what_was_answered_meanwhile():
    """A host that restarted sees only the calls still unanswered: their ``low`` lets the first go at once."""

    async def scenario() -> list[int]:
        turns, mailbox, entered = Turnstile(patience=3600), asyncio.Lock(), []
        later = asyncio.ensure_future(host_call(turns, mailbox, Turn("lane", 3, 2), entered))
        await settle()
        assert not later.done()  # call 2 is unanswered: 3 waits for it
        await host_call(turns, mailbox, Turn("lane", 2, 2), entered)
        await later
        return entered

    assert asyncio.run(scenario()) == [2, 3]


def test_a_call_sent_after_its_router_gave_up_on_the_one_before_does_not_wait_for_it():
    async def scenario() -> list[int]:
        turns, mailbox, entered = Turnstile(patience=3600), asyncio.Lock(), []
        await host_call(turns, mailbox, Turn("lane", 0, 0), entered)
        # call 1 never reached this host and its router answered it with an error: call 2 says so
        await asyncio.wait_for(host_call(turns, mailbox, Turn("lane", 2, 2), entered), timeout=60)
        return entered

    assert asyncio.run(scenario()) == [0, 2]


def test_a_call_whose_predecessor_never_comes_goes_on_after_its_patience():
    async def scenario() -> list[int]:
        turns, mailbox, entered = Turnstile(patience=0.05), asyncio.Lock(), []
        await host_call(turns, mailbox, Turn("lane", 1, 0), entered)  # call 0 was given up on
        await host_call(turns, mailbox, Turn("lane", 2, 0), entered)
        return entered

    assert asyncio.run(scenario()) == [1, 2]


def test_idle_lanes_are_forgotten_and_lanes_with_waiting_calls_are_not():
    async def scenario() -> None:
        turns, mailbox = Turnstile(patience=3600), asyncio.Lock()
        await host_call(turns, mailbox, Turn("done", 0, 0), [])
        waiting = asyncio.ensure_future(host_call(turns, mailbox, Turn("waiting", 1, 0), []))
        await settle()
        assert turns.forget_idle(idle_seconds=0) == 1 and len(turns) == 1
        await host_call(turns, mailbox, Turn("waiting", 0, 0), [])
        await waiting
        assert turns.forget_idle(idle_seconds=0) == 1 and len(turns) == 0

    asyncio.run(scenario())
