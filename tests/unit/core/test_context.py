"""The session snapshot: templated core facts, profile by slot, budget split, Hermes MEMORY/USER blocks that
never exceed their limits, byte-identical within a session and refreshed only by the next one."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actors.adapters.embedding import HashEmbedder
from actors.app.service import UserMemoryService
from actors.core.context import BUDGET_SPLIT, ENTRY_DELIMITER, HEADERS, PREAMBLE, fit, render_session_context
from actors.core.memory import MemoryItem
from actors.store.sql.store import MemoryStore
from schemas import api
from schemas.enums import Kind, Layer, Polarity, State
from schemas.settings import GatePolicy
from schemas.slots import SLOTS

NOW = datetime(2026, 3, 1, tzinfo=UTC)
POLICY = GatePolicy()


def item(
    content: str,
    *,
    layer=Layer.LONGTERM,
    state=State.CONFIRMED,
    slot=None,
    value=None,
    kind=Kind.FACT,
    polarity=Polarity.POSITIVE,
    days_ago: float = 1,
) -> MemoryItem:
    at = NOW - timedelta(days=days_ago)
    return MemoryItem(
        tenant_id="t",
        user_id="u",
        content=content,
        kind=kind,
        layer=layer,
        state=state,
        slot=slot,
        value=value,
        polarity=polarity,
        created_at=at,
        updated_at=at,
        last_accessed_at=at,
    )


def test_core_facts_are_templated_and_sections_follow_the_split():
    active = [
        item(
            "I live in Suzhou", layer=Layer.CORE, state=State.FROZEN, slot="basic.residence", value="suzhou"
        ),
        item(
            "I'm allergic to peanuts",
            layer=Layer.CORE,
            state=State.FROZEN,
            slot="basic.allergy",
            value="peanut",
        ),
        item("I love jazz", slot="preference.music", value="jazz", kind=Kind.PREFERENCE),
        item("went hiking with Bob", layer=Layer.WORKING, state=State.PENDING, kind=Kind.EVENT, days_ago=0.5),
        item(
            "cooking is so annoying today",
            layer=Layer.WORKING,
            state=State.PENDING,
            slot="state.mood",
            value="annoyed",
            kind=Kind.STATE,
        ),
    ]
    context = render_session_context(active, POLICY, "s9", NOW)
    assert context.sections["core"].splitlines() == ["- residence: Suzhou", "- allergy: Peanut"]
    assert '- music [2026-02-28]: "I love jazz"' in context.sections["profile"]
    assert '[2026-02-28] "went hiking with Bob"' in context.sections["recent"]
    assert context.sections["state"] == '- "cooking is so annoying today"'
    assert context.text.startswith(PREAMBLE)
    assert (
        context.text.index("# Core facts") < context.text.index("# Profile") < context.text.index("# Recent")
    )
    assert context.user_block.split(ENTRY_DELIMITER) == [
        "residence: Suzhou",
        "allergy: Peanut",
        "music: Jazz",
    ]
    assert "went hiking with Bob" in context.memory_block and "annoying" not in context.memory_block


def test_slot_values_show_in_the_users_own_words_and_style_as_instructed():
    frozen = {"layer": Layer.CORE, "state": State.FROZEN}
    active = [
        item("我住在成都", slot="basic.residence", value="chengdu", **frozen),
        item("我对花生酱过敏", slot="basic.allergy", value="peanut", **frozen),
        item("I'm allergic to shellfish", slot="basic.allergy", value="shellfish", **frozen),
        item("我喜欢吃火锅", slot="preference.food", value="hotpot", kind=Kind.PREFERENCE),
        item(
            "reply length: at most 3 sentences",
            slot="style.reply_length",
            value="at most 3 sentences",
            kind=Kind.PREFERENCE,
        ),
    ]
    context = render_session_context(active, POLICY, "s9", NOW)
    assert set(context.sections["core"].splitlines()) == {
        "- residence: 成都",
        "- allergy: 花生酱",
        "- allergy: Shellfish",
    }
    assert context.user_block.split(ENTRY_DELIMITER)[-2:] == [
        "food: 火锅",
        "reply length: at most 3 sentences",
    ]


def test_values_written_in_other_words_show_as_written_and_members_by_role_and_name():
    active = [
        item("I love ramen", slot="preference.food", value="noodle", kind=Kind.PREFERENCE),
        item("我养了一只叫豆豆的猫", slot="basic.pet", value="cat:豆豆"),
        item("My dog is a golden retriever named Max", slot="basic.pet", value="dog:max"),
        item("回答简短一点", slot="style.reply_length", value="short", kind=Kind.PREFERENCE),
        item("Keep your answers short", slot="style.tone", value="short", kind=Kind.PREFERENCE),
        item("说话幽默一点", slot="style.tone", value="humorous", kind=Kind.PREFERENCE),
    ]
    entries = render_session_context(active, POLICY, "s9", NOW).user_block.split(ENTRY_DELIMITER)
    assert {"food: Ramen", "reply length: 简短"} <= set(entries)
    (tones,) = [e for e in entries if e.startswith("tone: ")]
    # "short" is no tone of the closed vocabulary (actors.core.style): a stored row holding it is not shown
    assert set(tones.removeprefix("tone: ").split("; ")) == {"幽默"}
    (pets,) = [e for e in entries if e.startswith("pet: ")]
    assert set(pets.removeprefix("pet: ").split("; ")) == {"猫 (豆豆)", "Dog (Max)"}


def test_each_section_stays_inside_its_share_of_the_budget():
    many = [
        item(
            f"I collect stamp series number {n} from Portugal",
            slot="preference.hobby",
            value=f"stamp {n}",
            kind=Kind.PREFERENCE,
        )
        for n in range(200)
    ]
    context = render_session_context(many, POLICY, "s1", NOW, budget_chars=1000)
    assert len(context.text) <= 1000
    assert len(HEADERS["profile"]) + 1 + len(context.sections["profile"]) <= 1000 * BUDGET_SPLIT["profile"]


def test_fit_keeps_whole_entries_and_cuts_only_a_lone_oversized_one():
    assert fit(["aaa", "bbb", "ccc"], 7) == "aaa\nbbb"
    assert fit(["a" * 50], 10) == "a" * 9 + "…"
    assert fit(["ab", "cd"], 7, ENTRY_DELIMITER) == "ab" + ENTRY_DELIMITER + "cd"


_text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=3000)
_items = st.lists(
    st.builds(
        item,
        _text,
        layer=st.sampled_from([Layer.WORKING, Layer.LONGTERM, Layer.CORE]),
        state=st.sampled_from([State.PENDING, State.CONFIRMED, State.FROZEN]),
        slot=st.none() | st.sampled_from(sorted(SLOTS)),
        value=st.none() | _text,
        kind=st.sampled_from(list(Kind)),
        polarity=st.sampled_from(list(Polarity)),
        days_ago=st.floats(0, 3000),
    ),
    max_size=60,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(active=_items, budget=st.none() | st.integers(200, 20000))
def test_blocks_and_snapshot_never_exceed_their_limits(active, budget):
    context = render_session_context(active, POLICY, "s1", NOW, budget_chars=budget)
    assert len(context.memory_block) <= POLICY.memory_block_chars
    assert len(context.user_block) <= POLICY.user_block_chars
    assert len(context.text) <= (budget or POLICY.context_budget_chars)
    assert context == render_session_context(list(reversed(active)), POLICY, "s1", NOW, budget_chars=budget)


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
    svc.writes.write_turns(api.WriteTurnsRequest(session_id=session, turns=turns))


def test_snapshot_is_byte_identical_across_turns_and_new_facts_wait_for_the_next_session(svc):
    say(svc, "s1", "I live in Hangzhou", "I'm allergic to peanuts")
    say(svc, "s2", "我住在杭州")
    first = svc.sessions.start(api.StartSessionRequest(session_id="s3")).model_dump_json()
    for turn in ("I love jazz music", "My sister Anna lives in Berlin", "Please keep your replies short"):
        say(svc, "s3", turn)
        assert svc.sessions.start(api.StartSessionRequest(session_id="s3")).model_dump_json() == first
    assert "jazz" not in first and "Anna" not in first
    later = svc.sessions.start(api.StartSessionRequest(session_id="s4"))
    assert "jazz" in later.text and "residence: Hangzhou" in later.sections["core"]
