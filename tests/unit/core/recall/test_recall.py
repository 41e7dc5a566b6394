"""Multi-route recall over the real service (SQLite, hashing embedder; recall reads only memory): the slot
route keeps a cold allergy on top under 1,000 newer memories, score breakdowns and boosts, near-duplicates,
contradiction flags, the archive route, relation hops, access statistics."""

from datetime import UTC, datetime, timedelta

import pytest

from actors.adapters.embedding import HashEmbedder
from actors.app.service import UserMemoryService
from actors.core.recall.routes import HOP_RELEVANCE
from schemas import api
from schemas.enums import Kind, Layer, Polarity, State
from schemas.settings import Capacities, GatePolicy

TOPICS = (
    "watched a film",
    "fixed the bike",
    "read a novel",
    "visited a museum",
    "played chess",
    "went bowling",
    "painted a fence",
    "cleaned the garage",
    "planted tomatoes",
    "called an old friend",
)


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2025, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def service(store, clock=None, **policy) -> UserMemoryService:
    return UserMemoryService(
        "acme",
        "alice",
        store=store,
        embedder=HashEmbedder(256),
        policy=GatePolicy(**policy),
        clock=clock or Clock(),
    )


def say(svc, session, *texts, at=None):
    turns = [api.TurnIn(text=t, dialog_id=f"{session}-d{n}", at=at) for n, t in enumerate(texts)]
    for start in range(0, len(turns), api.MAX_TURNS_PER_BATCH):
        svc.writes.write_turns(api.WriteTurnsRequest(session_id=session, turns=turns[start : start + 200]))


def recall(svc, query, k=8, include_archive=True):
    return svc.recalls.recall(api.RecallRequest(query=query, k=k, include_archive=include_archive)).hits


def unrelated_memories(count: int) -> list[str]:
    """Distinct everyday events, none a near-duplicate of another (hashed similarity < 0.92)."""
    days = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
    verbs = (
        "painted repaired visited cleaned photographed sketched measured polished assembled carried".split()
    )
    things = (
        "fence bicycle museum garage lighthouse canoe bookshelf greenhouse piano telescope kite lantern "
        "mailbox chimney hammock sailboat treehouse windmill bridge fountain"
    ).split()
    places = "harbor village station market campus stadium library orchard vineyard quarry".split()
    return [
        f"On {days[n % 7]} I {verbs[n % 10]} the {things[n // 10 % 20]} near the {place}"
        for n in range(count)
        for place in [places[n // 200 % 5 + n % 2 * 5]]
    ]


@pytest.mark.slow
def test_an_old_allergy_tops_a_food_question_under_a_thousand_newer_memories(store):
    clock = Clock()
    svc = service(store, clock)
    say(svc, "s0", "I'm allergic to peanuts", at=clock.now)
    clock.now += timedelta(days=300)
    newer = unrelated_memories(1000)
    for day in range(5):
        say(svc, f"s{day + 1}", *newer[day * 200 : (day + 1) * 200], at=clock.now)
        clock.now += timedelta(days=1)
    assert store.memories.count("acme", "alice") > 1000  # working 200, the rest archived or merged
    hits = recall(svc, "What should I cook for dinner tonight?")
    allergy = [h for h in hits[:3] if h.memory.slot == "basic.allergy"]
    assert allergy and "slot" in allergy[0].routes
    assert allergy[0].score.time_decay < 0.1  # cold: the slot route keeps it up


def test_an_ordinary_slot_a_query_names_is_lifted_a_little_not_to_the_vital_floor(store):
    svc = service(store)
    say(svc, "s1", "I live in Lisbon", "I'm allergic to peanuts")
    say(svc, "s2", *unrelated_memories(30))
    hits = {h.memory.slot: h for h in recall(svc, "Where did I leave the canoe?", k=40)}
    # "where" names the residence slot: the route finds it, but a question about a canoe is not about the
    # user's city, so it gets a small lift rather than the floor a vital slot gets
    home = hits["basic.residence"]
    assert home.score.routes["slot"] == pytest.approx(0.1)
    assert home.score.relevance < 0.8
    food = {h.memory.slot: h for h in recall(svc, "What should I cook for dinner?", k=40)}
    assert food["basic.allergy"].score.routes["slot"] == 1.0 and food["basic.allergy"].score.relevance >= 0.8


def test_hits_carry_a_breakdown_and_boosts(store):
    clock = Clock()
    svc = service(store, clock)
    say(svc, "s1", "I'm allergic to peanuts", "Stop recommending short videos to me")
    say(svc, "s2", "我对花生过敏")
    hits = {h.memory.slot: h for h in recall(svc, "peanut allergy and short videos", k=8)}
    frozen, negative = hits["basic.allergy"], hits["preference.content"]
    assert frozen.memory.state is State.FROZEN and frozen.score.boosts == {"frozen": 1.3}
    assert negative.memory.polarity is Polarity.NEGATIVE and negative.score.boosts == {"negative": 1.2}
    for hit in (frozen, negative):
        s = hit.score
        assert s.total == pytest.approx(
            (0.55 * s.relevance + min(s.relevance, 1) * (0.25 * s.time_decay + 0.2 * s.importance))
            * s.boosts[next(iter(s.boosts))],
            rel=1e-4,
        )
        assert hit.memory.source_dialog_ids
    clock.now += timedelta(days=15)  # the negative's 14-day priority window is over
    later = {h.memory.slot: h for h in recall(svc, "short videos", k=8)}
    assert "negative" not in later["preference.content"].score.boosts


def test_a_frozen_fact_the_query_does_not_match_is_not_recalled_for_its_importance(store):
    svc = service(store)
    say(svc, "s1", "I'm allergic to peanuts")
    say(svc, "s2", "我对花生过敏")
    say(svc, "s3", *unrelated_memories(60))
    (allergy,) = [i for i in store.memories.page("acme", "alice") if i.slot == "basic.allergy"]
    assert allergy.state is State.FROZEN and allergy.importance == 1.0
    # ten memories name the canoe; past them, weak semantic matches, not the frozen allergy (importance 1,
    # no decay, ×1.3), which the importance and session routes put in the pool with next to no relevance
    hits = recall(svc, "Where did I see a canoe?", k=12)
    assert sum("canoe" in h.memory.content for h in hits[:10]) == 10
    assert allergy.memory_id not in {h.memory.memory_id for h in hits}


def test_recall_updates_access_statistics(store):
    svc = service(store)
    say(svc, "s1", "I love green tea")
    (hit,) = recall(svc, "green tea")
    again = recall(svc, "green tea")[0]
    assert (hit.memory.access_count, again.memory.access_count) == (0, 1)
    # heat is batched: in SQL after the host's flush (or with the next change), not on every recall
    assert store.memories.get("acme", "alice", hit.memory.memory_id).access_count == 0
    svc.flush_access()
    assert store.memories.get("acme", "alice", hit.memory.memory_id).access_count == 2
    say(svc, "s1", "I work as a nurse")
    recall(svc, "green tea")
    say(svc, "s2", "I live in Lisbon")  # a write carries the pending heat along
    assert store.memories.get("acme", "alice", hit.memory.memory_id).access_count == 3


def test_contradicting_hits_are_flagged_not_resolved(store):
    svc = service(store)
    say(svc, "s1", "I love cilantro")
    say(svc, "s2", "I hate cilantro")
    hits = [h for h in recall(svc, "cilantro") if h.memory.value == "cilantro"]
    assert len(hits) == 2
    assert {h.contradicts[0] for h in hits} == {h.memory.memory_id for h in hits}


def test_near_duplicates_keep_only_their_best_hit(store):
    svc = service(store)
    # the same words in another order: two items (distinct values), identical hashed embeddings
    for value, content in (
        ("green tea", "I drink green tea every morning, always"),
        ("sencha", "I always drink green tea every morning"),
    ):
        svc.writes.write_memory(
            api.WriteMemoryRequest(
                content=content,
                kind=Kind.PREFERENCE,
                session_id="s1",
                dialog_ids=["d1"],
                slot="preference.drink",
                value=value,
            )
        )
    assert len(svc.work.engine.active()) == 2
    assert len([h for h in recall(svc, "green tea every morning") if "tea" in h.memory.content]) == 1


def test_archive_route_ranks_evicted_items_with_the_active_ones(store):
    svc = service(store, capacities=Capacities(working=5, longterm=5))
    say(svc, "s1", "Yesterday I repaired the old harmonium in the attic")
    say(svc, "s2", *[f"Yesterday I {TOPICS[n]} with my cousin" for n in range(10)])
    archived = store.memories.archived("acme", "alice", limit=50)
    assert any("harmonium" in i.content for i in archived)
    hits = recall(svc, "harmonium repair", k=3)
    top = hits[0]
    assert "harmonium" in top.memory.content and top.memory.layer is Layer.ARCHIVE
    assert "archive" in top.routes and "archive" not in top.score.boosts


def test_relation_hops_reach_what_an_entity_is_linked_to(store):
    svc = service(store)
    say(
        svc,
        "s1",
        "My colleague Bob is working on the Atlas project with me",
        "Our Atlas project deadline is next Friday",
        *[f"Yesterday I {t} downtown" for t in TOPICS],
    )
    hits = recall(svc, "What is Bob busy with?", k=8)
    scores = {h.memory.content: h.score.routes for h in hits}
    assert scores["My colleague Bob is working on the Atlas project with me"]["relation"] == HOP_RELEVANCE[1]
    assert scores["Our Atlas project deadline is next Friday"]["relation"] == HOP_RELEVANCE[2]


def test_a_memory_cut_from_a_longer_turn_keeps_the_turn_for_recall(store):
    svc = service(store)
    turn = "I'm allergic to peanuts. Yesterday my cousin Ana baked a lemon cake for the harvest festival."
    say(svc, "s1", turn, *[f"Yesterday I {t} downtown" for t in TOPICS])
    allergy = next(i for i in svc.work.engine.active() if i.slot == "basic.allergy")
    assert allergy.source_text == turn
    stored = store.memories.get("acme", "alice", allergy.memory_id)
    assert stored.source_text == allergy.source_text
    # the festival is not in the allergy's own words, only in the turn it was said in
    hits = recall(svc, "harvest festival", k=20)
    found = next(h for h in hits if h.memory.memory_id == allergy.memory_id)
    assert "keyword" in found.routes and found.score.routes["keyword"] > 0


def test_the_session_route_lifts_the_hits_of_the_best_sessions(store):
    svc = service(store)
    say(svc, "s1", "Yesterday I went sailing on the lake with Tom", "The sailing boat had a red sail")
    say(svc, "s2", *[f"Yesterday I {t} downtown" for t in TOPICS])
    hits = recall(svc, "sailing boat on the lake", k=12)
    by_session = {}
    for hit in hits:
        by_session.setdefault(hit.memory.source_session_id, []).append(hit.score.routes.get("session", 0.0))
    assert max(by_session["s1"]) == 1.0 and "session" in hits[0].routes
    assert max(by_session.get("s2", [0.0])) < 1.0


def test_the_time_route_lifts_what_was_said_in_the_period_a_question_names(store):
    clock = Clock()
    svc = service(store, clock)
    clock.now = datetime(2024, 6, 10, tzinfo=UTC)
    say(svc, "june", "Yesterday I went hiking in the hills with Ana", at=clock.now)
    clock.now = datetime(2024, 9, 10, tzinfo=UTC)
    say(svc, "september", "Yesterday I went hiking by the sea with Ben", at=clock.now)
    clock.now = datetime(2024, 11, 1, tzinfo=UTC)
    hits = recall(svc, "Where did I go hiking in June?", k=2)
    assert "hills" in hits[0].memory.content and "time" in hits[0].routes
    assert "time" not in hits[1].routes
