"""The unit of work tells what each commit changed as a value, and the recall state keeps in step with it:
a write's items stored, a failed commit's reload, an erasure."""

import pytest

from actors.adapters.embedding import HashEmbedder
from actors.app.recall_state import RecallState
from actors.app.resources import Memories, Recalls, Writes
from actors.app.unit_of_work import Erased, Loaded, Stored, UnitOfWork
from actors.core.extraction import make_extractor
from actors.core.memory import utcnow
from actors.core.said_before import SessionTurns
from schemas import api
from schemas.errors import OwnershipLost
from schemas.settings import GatePolicy


class User:
    """One user's parts wired as the service wires them, with a listener that keeps every event."""

    def __init__(self, store, fence=None):
        self.events = []
        embedder, policy = HashEmbedder(64), GatePolicy()
        self.state = RecallState("acme", "alice", store=store, embedder=embedder, policy=policy)
        self.work = UnitOfWork(
            "acme",
            "alice",
            store=store,
            embedder=embedder,
            policy=policy,
            clock=utcnow,
            fence=fence,
            known=self.state,
            listeners=(self.state.on_commit, self.events.append),
            on_index_change=lambda: None,
        )
        said_before = SessionTurns()
        self.writes = Writes(
            self.work,
            self.state,
            said_before,
            embedder=embedder,
            extractor=make_extractor(),
            reader=lambda: None,
            clock=utcnow,
        )
        self.recalls = Recalls(self.work, self.state, policy, utcnow)
        self.memories = Memories(self.work, said_before)

    def say(self, text, dialog_id="d1"):
        turns = [api.TurnIn(text=text, dialog_id=dialog_id)]
        return self.writes.write_turns(api.WriteTurnsRequest(session_id="s1", turns=turns))


def test_a_write_tells_the_items_it_stored_and_drops_the_recall_view(store):
    user = User(store)
    assert [type(e) for e in user.events] == [Loaded] and user.events[0].items == ()
    user.say("I live in Lisbon")
    user.recalls.recall(api.RecallRequest(query="where do I live?"))
    assert not user.recalls.is_stale  # the recall built what it reads

    result = user.say("I am allergic to peanuts", "d2")

    stored = user.events[-1]
    assert isinstance(stored, Stored) and stored.engine is user.work.engine
    created = {o.memory_id for o in result.outcomes if o.action == "created"}
    assert created and created <= {item.memory_id for item in stored.items}
    assert user.recalls.is_stale  # the event dropped the active view
    user.recalls.prepare()
    assert not user.recalls.is_stale


def test_a_commit_refused_by_a_stale_fence_reloads_and_says_so(store):
    user = User(store, fence=store.fencing.claim("acme", "alice", "host-0"))
    user.say("I live in Lisbon")
    store.fencing.claim("acme", "alice", "job:consolidate")  # another claimant took the user over
    before = user.work.engine

    with pytest.raises(OwnershipLost):
        user.say("I moved to Porto", "d2")

    reloaded = user.events[-1]
    assert isinstance(reloaded, Loaded) and reloaded.engine is user.work.engine is not before
    assert not any("Porto" in item.content for item in reloaded.items)  # the refused decision is not there


def test_an_erasure_tells_the_recall_state_to_forget_the_users_questions(store):
    user = User(store)
    user.say("I live in Lisbon")
    question = "where do I live?"
    user.recalls.recall(api.RecallRequest(query=question))
    assert user.recalls.cached_query(question) is not None

    user.memories.erase(api.EraseRequest())

    assert isinstance(user.events[-1], Erased) and user.work.engine.items == {}
    assert user.recalls.cached_query(question) is None
    assert user.recalls.recall(api.RecallRequest(query=question)).hits == []
