"""The USER profile: slots built from a scripted bilingual conversation through the real service path, and the
aggregation rules (support, challengers, incumbent, rewrite on confirmation or correction, history, merged
summaries, negative priority) on hand-built items."""

from datetime import UTC, datetime, timedelta

import pytest

from actors.adapters.embedding import HashEmbedder
from actors.app.service import UserMemoryService
from actors.core.memory import MemoryItem
from actors.core.profile import ProfileBuilder
from actors.store.sql.store import MemoryStore
from schemas import api
from schemas.enums import Kind, Layer, Polarity, State
from schemas.settings import GatePolicy

NOW = datetime(2026, 3, 1, tzinfo=UTC)


@pytest.fixture
def svc(tmp_path):
    store = MemoryStore(f"sqlite:///{tmp_path / 'h.db'}")
    store.create_schema()
    store.tenants.create("acme")
    yield UserMemoryService(
        "acme", "alice", store=store, embedder=HashEmbedder(64), policy=GatePolicy()
    )
    store.dispose()


def say(svc, session, *texts):
    turns = [api.TurnIn(text=t, dialog_id=f"{session}-d{n}") for n, t in enumerate(texts)]
    return svc.writes.write_turns(api.WriteTurnsRequest(session_id=session, turns=turns))


def slots_of(profile: api.UserProfile) -> dict[str, api.ProfileSlot]:
    return {s.slot: s for s in profile.slots}


def test_profile_from_a_multi_session_bilingual_conversation(svc):
    say(
        svc,
        "s1",
        "I live in Hangzhou",
        "I'm allergic to peanuts",
        "I love jazz music",
        "Please keep your replies short",
        "My colleague Bob is working on the Atlas project with me",
    )
    say(svc, "s2", "我住在杭州", "我对花生过敏", "我喜欢喝咖啡", "cooking is so annoying today")
    say(svc, "s3", "I think I don't mind peanuts", "I also like classical music", "I love jazz music")
    say(svc, "s4", "actually I moved to Suzhou")
    profile = svc.sessions.profile()
    slots = slots_of(profile)
    assert set(slots) == {
        "basic.residence",
        "basic.allergy",
        "preference.music",
        "preference.drink",
        "style.reply_length",
        "relation.social",
    }

    residence = slots["basic.residence"]
    (home,) = residence.conclusions
    assert residence.single_valued and (home.value, home.frozen) == ("suzhou", True)
    assert home.confidence == pytest.approx(0.95, abs=0.02)  # an explicit correction takes effect at once
    assert [(h.value, h.state) for h in residence.history] == [("hangzhou", State.SUPERSEDED)]

    allergy = slots["basic.allergy"]
    (peanut,) = allergy.conclusions  # the hedged "don't mind" does not flip the slot...
    assert (peanut.value, peanut.polarity, peanut.frozen, peanut.sessions) == (
        "peanut",
        Polarity.POSITIVE,
        True,
        2,
    )
    assert len(peanut.contested_by) == 1  # ...it is flagged and lowers the confidence
    assert 0.75 < peanut.confidence < 0.9

    music = slots["preference.music"]
    assert not music.single_valued
    assert [(c.value, c.sessions) for c in music.conclusions] == [("jazz music", 2), ("classical music", 1)]
    assert music.conclusions[0].confidence == pytest.approx(0.98, abs=0.02)  # restated: confirmed
    assert music.conclusions[1].confidence == pytest.approx(0.8, abs=0.05)
    assert slots["preference.drink"].conclusions[0].value == "coffee"
    assert slots["style.reply_length"].conclusions[0].value == "short"

    backing = {m for s in profile.slots for c in s.conclusions for m in c.memory_ids}
    assert all(svc.memories.item(m).slot in slots for m in backing)
    assert ("user", "colleague", "Bob") in {(e.source, e.label, e.target) for e in profile.relations}

    (mood,) = profile.state  # the one-off mood remark: current state only, never a slot
    assert mood.slot == "state.mood" and mood.memory_id not in backing
    assert svc.memories.item(mood.memory_id).layer is Layer.WORKING


def test_a_single_contradiction_lowers_confidence_and_confirmation_rewrites_the_slot(svc):
    say(svc, "s1", "I work as a nurse")
    before = slots_of(svc.sessions.profile())["basic.occupation"].conclusions[0].confidence
    say(svc, "s2", "I work as a teacher")
    (held,) = slots_of(svc.sessions.profile())["basic.occupation"].conclusions
    assert held.value == "nurse" and held.confidence < before  # lowered, not flipped
    say(svc, "s3", "I work as a teacher")
    occupation = slots_of(svc.sessions.profile())["basic.occupation"]
    assert [c.value for c in occupation.conclusions] == ["teacher"]
    assert [h.value for h in occupation.history] == ["nurse"]


def test_a_repeated_one_off_mood_never_reaches_a_slot(svc):
    for session in ("s1", "s2", "s3"):
        say(svc, session, "cooking is so annoying today")
    profile = svc.sessions.profile()
    assert profile.slots == [] and [s.slot for s in profile.state] == ["state.mood"]


# --------------------------------------------------------------------------------- aggregation rules


def item(
    slot,
    value,
    *,
    polarity=Polarity.POSITIVE,
    state=State.PENDING,
    confidence=0.8,
    sessions=("s1",),
    days_ago=10.0,
    kind=Kind.FACT,
    **extra,
) -> MemoryItem:
    at = NOW - timedelta(days=days_ago)
    extra.setdefault("content", f"{slot} {value}")
    return MemoryItem(
        tenant_id="t",
        user_id="u",
        kind=kind,
        slot=slot,
        value=value,
        polarity=polarity,
        state=state,
        confidence=confidence,
        confirmed_sessions=list(sessions),
        created_at=at,
        updated_at=at,
        last_accessed_at=at,
        layer=Layer.CORE if state is State.FROZEN else Layer.LONGTERM,
        **extra,
    )


def build(active, history=()):
    return slots_of(ProfileBuilder(GatePolicy(), NOW).build("u", list(active), list(history)))


def test_a_conclusion_keeps_the_canonical_value_and_shows_the_users_words():
    zh = item("basic.residence", "chengdu", content="我住在成都")
    en = item("basic.allergy", "seafood", content="I'm allergic to seafood")
    slots = build([zh, en])
    (home,) = slots["basic.residence"].conclusions
    assert (home.value, home.display) == ("chengdu", "成都")
    assert slots["basic.allergy"].conclusions[0].display == "Seafood"


def test_support_grows_with_sessions_and_each_challenger_lowers_it():
    once, twice = item("basic.pet", "dog"), item("basic.pet", "cat", sessions=("s1", "s2"))
    values = {c.value: c.confidence for c in build([once, twice])["basic.pet"].conclusions}
    assert values == {"dog": pytest.approx(0.8), "cat": pytest.approx(1 - 0.2**2)}

    held = item("basic.hometown", "ningbo", days_ago=30)
    challenger = item("basic.hometown", "wuxi", days_ago=1, confidence=0.5)
    (kept,) = build([held, challenger])["basic.hometown"].conclusions
    assert kept.value == "ningbo" and kept.confidence == pytest.approx(0.8 * (1 - 0.3 * 0.5))
    assert kept.contested_by == [challenger.memory_id]


def test_standing_beats_incumbency_and_history_keeps_replaced_values():
    old = item("basic.residence", "hangzhou", days_ago=30)
    new = item("basic.residence", "suzhou", state=State.CONFIRMED, sessions=("s2", "s3"), days_ago=1)
    gone = item("basic.residence", "ningbo", state=State.SUPERSEDED, days_ago=90, superseded_by=new.memory_id)
    slot = build([old, new], [gone])["basic.residence"]
    assert [c.value for c in slot.conclusions] == ["suzhou"]
    assert [(h.value, h.superseded_by) for h in slot.history] == [("ningbo", new.memory_id)]


def test_a_summary_of_several_values_backs_each_of_them_and_its_sources_are_not_history():
    sources = [
        item("preference.food", v, state=State.SUPERSEDED, kind=Kind.PREFERENCE)
        for v in ("noodles", "hotpot")
    ]
    summary = item("preference.food", None, kind=Kind.PREFERENCE, merged_from=[s.memory_id for s in sources])
    for source in sources:
        source.superseded_by = summary.memory_id
    food = build([summary], sources)["preference.food"]
    assert sorted(c.value for c in food.conclusions) == ["hotpot", "noodles"]
    assert all(c.memory_ids == [summary.memory_id] for c in food.conclusions) and food.history == []


def test_fresh_negative_preferences_outweigh_until_their_priority_window_ends():
    liked = item("preference.content", "news", kind=Kind.PREFERENCE, days_ago=2)
    vetoed = item(
        "preference.content", "short videos", polarity=Polarity.NEGATIVE, kind=Kind.PREFERENCE, days_ago=2
    )
    weights = {c.value: c.weight for c in build([liked, vetoed])["preference.content"].conclusions}
    assert weights["short videos"] == pytest.approx(1.2 * weights["news"])
    stale = item(
        "preference.content", "short videos", polarity=Polarity.NEGATIVE, kind=Kind.PREFERENCE, days_ago=20
    )
    old_liked = item("preference.content", "news", kind=Kind.PREFERENCE, days_ago=20)
    weights = {c.value: c.weight for c in build([old_liked, stale])["preference.content"].conclusions}
    assert weights["short videos"] == pytest.approx(weights["news"])


def test_every_door_carries_the_users_words_beside_the_key(svc):
    """The profile, each memory item and the current state carry ``display`` (the user's words) beside the
    canonical ``value``, in both languages, for values in and out of the lexicon."""
    said = {
        "我周末喜欢爬山": ("preference.sport", "hiking", "爬山"),
        "我住在成都": ("basic.residence", "chengdu", "成都"),
        "My name is Anna Maria McDonald": ("basic.name", "anna maria mcdonald", "Anna Maria McDonald"),
        "Please skip the emojis": ("style.format", "no emoji", "no emoji"),  # a style shows as its template
    }
    say(svc, "s1", *said, "我今天有点感冒")
    profile = slots_of(svc.sessions.profile())
    items = {(m.slot, m.value): m for m in svc.memories.list().items}
    for slot, value, words in said.values():
        (conclusion,) = profile[slot].conclusions
        assert (conclusion.value, conclusion.display) == (value, words)
        assert items[(slot, value)].display == words
    (state,) = svc.sessions.profile().state
    assert (state.value, state.display) == ("sick", "感冒")
