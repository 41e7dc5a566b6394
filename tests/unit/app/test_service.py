"""The per-user service over real SQLite, the in-memory index fake and the hashing embedder: the issue's
allergy/residence story end to end below the Ray layer, plus durability and convergence rules."""

from datetime import UTC, datetime

import numpy as np
import pytest

from actors.adapters.embedding import HashEmbedder
from actors.app.commands import Recall, WriteTurns
from actors.app.service import UserMemoryService
from actors.core.extraction import make_extractor
from actors.runtime.outbox import drain
from actors.store.sql.store import MemoryStore
from actors.store.vectors.memory_index import InMemoryIndex
from schemas import api
from schemas.enums import AlertKind, Layer, State
from schemas.errors import NotFound
from schemas.settings import GatePolicy


@pytest.fixture
def store(tmp_path):
    store = MemoryStore(f"sqlite:///{tmp_path / 'h.db'}")
    store.create_schema()
    store.tenants.create("acme")
    store.tenants.create("other")
    yield store
    store.dispose()


@pytest.fixture
def index():
    return InMemoryIndex(64)


def service(store, index, user="alice", tenant="acme"):
    return UserMemoryService(tenant, user, store=store, embedder=HashEmbedder(64), policy=GatePolicy())


def say(svc, session, *texts, start=0):
    turns = [api.TurnIn(text=t, dialog_id=f"{session}-d{start + n}") for n, t in enumerate(texts)]
    return svc.writes.write_turns(api.WriteTurnsRequest(session_id=session, turns=turns))


def by_slot(svc, slot):
    return [i for i in svc.work.engine.active() if i.slot == slot]


def test_allergy_and_residence_story(store, index):
    svc = service(store, index)
    say(svc, "s1", "I'm allergic to peanuts", "I live in Hangzhou")
    say(svc, "s2", "我对花生过敏", "I live in Hangzhou")
    allergy = by_slot(svc, "basic.allergy")[0]
    home = by_slot(svc, "basic.residence")[0]
    assert (allergy.state, allergy.layer) == (State.FROZEN, Layer.CORE)
    assert home.state is State.FROZEN and home.value == "hangzhou"

    result = say(svc, "s3", "I think I don't mind peanuts")
    assert [a.kind for a in result.alerts] == [AlertKind.FROZEN_CONFLICT]
    assert svc.memories.item(allergy.memory_id).state is State.FROZEN

    result = say(svc, "s4", "actually I moved to Suzhou")
    assert result.outcomes[0].action == "corrected" and result.outcomes[0].memory_id == home.memory_id
    assert store.memories.get("acme", "alice", home.memory_id).value == "suzhou"
    actions = [e.action for e in store.audit.events("acme", "alice", home.memory_id)]
    assert {"unfreeze", "modify", "freeze"} <= set(actions)

    context = svc.sessions.start(api.StartSessionRequest(session_id="s5"))
    assert "residence: Suzhou" in context.text and "allergy: Peanut" in context.text

    recall = svc.recalls.recall(api.RecallRequest(query="what should I avoid cooking?"))
    assert recall.hits[0].memory.memory_id == allergy.memory_id
    assert "slot" in recall.hits[0].routes


def test_state_survives_a_fresh_service_and_snapshot_is_byte_identical(store, index):
    svc = service(store, index)
    say(svc, "s1", "I'm allergic to peanuts")
    first = svc.sessions.start(api.StartSessionRequest(session_id="s2"))
    say(svc, "s2", "I love jazz music", "I live in Hangzhou")
    again = service(store, index).sessions.start(api.StartSessionRequest(session_id="s2"))
    assert again.model_dump_json() == first.model_dump_json()
    later = service(store, index).sessions.start(api.StartSessionRequest(session_id="s3"))
    assert "jazz" in later.text


def test_idempotent_request_is_applied_once(store, index):
    svc = service(store, index)
    req = api.WriteTurnsRequest(session_id="s1", turns=[api.TurnIn(text="I love green tea", dialog_id="d1")])
    first = svc.writes.write_turns(req, request_id="r1")
    second = service(store, index).writes.write_turns(req, request_id="r1")
    assert first == second
    assert store.memories.count("acme", "alice") == 1


def test_a_resent_request_answers_as_first_answered_and_changes_nothing(store, index):
    """A resent request is found by its id's row when its commit is refused, not read for before every write:
    whatever the second decision would have been (a restatement that freezes the fact, a retracted allergy's
    conflict and alert, a new memory), nothing of it lands."""
    svc = service(store, index)
    say(svc, "s1", "I'm allergic to peanuts", "I live in Hangzhou")
    for n, text in enumerate(["I live in Hangzhou", "I think I don't mind peanuts", "I love green tea"]):
        req = api.WriteTurnsRequest(session_id="s2", turns=[api.TurnIn(text=text, dialog_id=f"r{n}")])
        first = svc.writes.write_turns(req, request_id=f"r{n}")
        stored = {i.memory_id: i.version for i in store.memories.page("acme", "alice", limit=100)}
        trail, alerts = store.audit.events("acme", "alice"), store.alerts.find("acme", "alice", status=None)
        for again in (svc, service(store, index)):  # the same resident service, and one loaded anew
            assert again.writes.write_turns(req, request_id=f"r{n}") == first
            assert {i.memory_id: i.version for i in store.memories.page("acme", "alice", limit=100)} == stored
            assert store.audit.events("acme", "alice") == trail
            assert store.alerts.find("acme", "alice", status=None) == alerts
        assert {i.memory_id for i in svc.work.engine.active()} == {
            i.memory_id for i in store.memories.load_active("acme", "alice")
        }


def test_commits_reach_the_index_through_the_outbox_once(store, index):
    svc = service(store, index)
    say(svc, "s1", "I love green tea", "I work as a nurse")
    ids = {i.memory_id for i in svc.work.engine.active()}
    assert index.ids("acme", "alice") == set()  # acknowledged on the SQL commit, before the index
    assert drain(store, index, 64) >= len(ids)
    assert index.ids("acme", "alice") == ids
    assert drain(store, index, 64) == 0


def test_other_tenant_and_user_cannot_reach_items(store, index):
    svc = service(store, index)
    say(svc, "s1", "I love green tea")
    memory_id = svc.work.engine.active()[0].memory_id
    for intruder in (service(store, index, user="bob"), service(store, index, tenant="other")):
        with pytest.raises(NotFound):
            intruder.memories.get(memory_id)
        assert intruder.recalls.recall(api.RecallRequest(query="green tea")).hits == []


def test_forget_and_erase_leave_nothing_searchable(store, index):
    svc = service(store, index)
    say(svc, "s1", "I love green tea", "I work as a nurse")
    tea = by_slot(svc, "preference.drink")[0]
    svc.memories.forget(tea.memory_id, api.ForgetRequest())
    drain(store, index, 64)
    assert tea.memory_id not in index.ids("acme", "alice")
    with pytest.raises(NotFound):
        svc.memories.get(tea.memory_id)
    svc.memories.erase(api.EraseRequest())
    drain(store, index, 64)
    assert index.ids("acme", "alice") == set() and store.memories.count("acme", "alice") == 0


def test_recall_returns_the_policy_top_k_unless_the_request_names_k(store, index):
    svc = UserMemoryService(
        "acme", "alice", store=store, embedder=HashEmbedder(64), policy=GatePolicy(top_k=2)
    )
    say(svc, "s1", "I like green tea", "I like jazz", "I like hiking", "I live in Hangzhou")
    assert len(svc.recalls.recall(api.RecallRequest(query="what do I like?")).hits) == 2
    assert len(svc.recalls.recall(api.RecallRequest(query="what do I like?", k=3)).hits) == 3


def test_a_prepared_recall_rebuilds_nothing_and_answers_as_an_unprepared_one(store, index, monkeypatch):
    from datetime import UTC, datetime

    from actors.core.relations import EntityGraph

    def at_noon(user):  # one clock for both: time decay is part of the scores compared
        noon = datetime(2026, 6, 1, 12, tzinfo=UTC)
        return UserMemoryService(
            "acme", user, store=store, embedder=HashEmbedder(64), policy=GatePolicy(), clock=lambda: noon
        )

    prepared, plain = at_noon("prepared"), at_noon("plain")
    for svc in (prepared, plain):
        say(svc, "s1", "My sister Anna moved to Lyon", "The Atlas deadline is Friday")
        svc.recalls.recall(api.RecallRequest(query="where does Anna live?", include_archive=True))
        assert not svc.recalls.is_stale  # a recall built what it reads
        say(svc, "s2", "Anna started working at Acme", start=2)
    assert prepared.recalls.is_stale and plain.recalls.is_stale  # the write dropped it
    prepared.recalls.prepare()
    assert not prepared.recalls.is_stale
    question = api.RecallRequest(query="where does Anna work?", include_archive=True)
    expected = plain.recalls.recall(question)

    def rebuilt(*args, **kwargs):
        raise AssertionError("the recall rebuilt the entity graph")

    monkeypatch.setattr(EntityGraph, "from_items", rebuilt)
    found = prepared.recalls.recall(question)
    assert [h.memory.content for h in found.hits] == [h.memory.content for h in expected.hits]
    assert [h.score for h in found.hits] == [h.score for h in expected.hits]


class NoEmbedding:
    """Stands in for the embedder once everything a call needs was embedded ahead."""

    dim = 64

    def embed_queries(self, texts):
        raise AssertionError(f"embedded {texts} again")

    embed_passages = embed_queries


class NoExtraction:
    def extract(self, turn):
        raise AssertionError(f"extracted {turn.text!r} again")


def test_a_call_prepared_ahead_embeds_nothing_again_and_answers_as_without_it(store, index):
    """The host prepares a waiting call (``UserCommand.prepare``: a write's turns read once) and embeds its
    texts meanwhile: the call then extracts and embeds nothing again, and stores and finds what it would
    have."""
    embedder = HashEmbedder(64)
    noon = datetime(2026, 6, 1, 12, tzinfo=UTC)
    plain = UserMemoryService(
        "acme", "plain", store=store, embedder=embedder, policy=GatePolicy(), clock=lambda: noon
    )
    ahead = UserMemoryService(
        "acme",
        "ahead",
        store=store,
        embedder=NoEmbedding(),
        extractor=NoExtraction(),
        policy=GatePolicy(),
        clock=lambda: noon,
    )
    turns = api.WriteTurnsRequest(
        session_id="s1",
        turns=[
            api.TurnIn(
                dialog_id="d1", role="user", text="My sister Anna moved to Lyon and I play tennis on Sundays"
            ),
            api.TurnIn(dialog_id="d2", role="user", text="I am allergic to peanuts"),
        ],
    )
    question = api.RecallRequest(query="what does my sister do?")
    write, recall = WriteTurns(request=turns), Recall(request=question)
    prepared = write.prepare(make_extractor(), noon), recall.prepare(make_extractor(), noon)
    passages = prepared[0].extraction.passages
    assert len(passages) >= 2 and prepared[0].query is None and prepared[1].query == question.query
    assert all(turn.at == noon for turn in prepared[0].extraction.turns)  # said when the call was received

    expected = plain.writes.write_turns(turns), plain.recalls.recall(question)
    written = write.run(ahead, prepared[0].embedded(None, embedder.embed_passages(passages)))
    found = recall.run(
        ahead, prepared[1].embedded(embedder.embed_queries([question.query])[0], np.zeros((0, 64)))
    )
    assert ahead.recalls.cached_query(question.query) is not None

    def decided(result):
        return [(o.action, o.layer) for o in result.outcomes]

    def ranked(response):
        return [(h.memory.content, h.score) for h in response.hits]

    assert decided(written) == decided(expected[0]) and ranked(found) == ranked(expected[1])


def test_each_part_not_kept_is_named_with_its_turn_and_no_turn_with_a_fact_is_ignored(store, index):
    svc = service(store, index)
    result = say(
        svc,
        "s1",
        "hi!",
        "I live in Porto, what's a good day trip from here?",
        "I'm Tomas by the way, and from now on always answer me in French.",
        "my password is hunter2xyz and I work as a nurse",
    )
    assert result.ignored_turns == 1  # the greeting alone
    assert [(k.dialog_id, k.detail) for k in result.not_kept] == [
        ("s1-d0", "not kept: greeting"),
        ("s1-d1", "not kept: request to the assistant"),
        ("s1-d2", "not kept: instruction to the model"),
        ("s1-d3", "not kept: secret redacted"),
    ]
    stored = {(i.slot, i.value) for i in svc.work.engine.active()}
    assert {("basic.residence", "porto"), ("basic.name", "tomas"), ("basic.occupation", "nurse")} <= stored
    words = " ".join(f"{i.content} {i.source_text or ''}" for i in svc.work.engine.active())
    assert not any(w in words for w in ("day trip", "French", "hunter2xyz"))


def test_a_preview_decides_on_a_fork_and_leaves_memory_and_recall_as_they_were(store, index):
    """A preview that would correct a confirmed fact changes nothing the user's own write or recall sees:
    both answer as for a user who never previewed."""
    noon = datetime(2026, 6, 1, 12, tzinfo=UTC)
    previewed, plain = (
        UserMemoryService(
            "acme", user, store=store, embedder=HashEmbedder(64), policy=GatePolicy(), clock=lambda: noon
        )
        for user in ("previewed", "plain")
    )
    question = api.RecallRequest(query="where do I live?")
    for svc in (previewed, plain):
        say(svc, "s1", "I live in Hangzhou", "I love jazz")
        say(svc, "s2", "I live in Hangzhou")
        svc.recalls.recall(question)  # recall's view built before the preview
    change = api.WriteTurnsRequest(
        session_id="s3", turns=[api.TurnIn(text="Actually I moved to Suzhou", dialog_id="s3-d0")]
    )
    preview = previewed.writes.preview(previewed.writes.prepared(previewed.writes.extract(change)))
    assert preview.outcomes and preview.outcomes[0].memory.value == "suzhou"
    assert [i.value for i in by_slot(previewed, "basic.residence")] == ["hangzhou"]

    def ranked(svc):
        return [(h.memory.content, h.score.total) for h in svc.recalls.recall(question).hits]

    assert ranked(previewed) == ranked(plain)
    written = previewed.writes.write_turns(change), plain.writes.write_turns(change)
    assert [(o.action, o.state) for o in written[0].outcomes] == [
        (o.action, o.state) for o in written[1].outcomes
    ]
    assert ranked(previewed) == ranked(plain)


def test_a_reader_of_token_states_gets_them_from_the_pass_that_gave_the_vectors(store, index):
    """The learned reader's states join the prepared write from the one forward pass of its vectors; what
    the reader reads is what the write keeps (a reading built by hand: the chain's wiring, not a model)."""
    from actors.app.write import PreparedWrite
    from actors.core.extraction import ClauseReading
    from tests.unit.app.test_learned_reading import StatesModel

    class StatesReader:
        reads_states = True

        def __init__(self) -> None:
            self.seen: list[PreparedWrite] = []

        def read(self, prepared: PreparedWrite):
            self.seen.append(prepared)
            return tuple(
                None if c.slot else ClauseReading("basic.occupation", "dental hygienist")
                for c in prepared.extraction.candidates
            )

    model, reader = StatesModel(), StatesReader()
    svc = UserMemoryService(
        "acme", "alice", store=store, embedder=model, policy=GatePolicy(), reader=lambda: reader
    )
    say(svc, "s1", "ugh the printer jammed again, honestly my whole week was a mess")
    assert model.passes == ["states"]
    (prepared,) = reader.seen
    assert prepared.states is not None and len(prepared.states) == len(prepared.extraction.candidates)
    assert [i.value for i in by_slot(svc, "basic.occupation")] == ["dental hygienist"]
