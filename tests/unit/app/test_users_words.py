"""The user's words everywhere: a value said in Chinese, in mixed script (我住在 Berlin) or in accented Latin
(Zürich, José Álvarez), written through the real service write path in two sessions, shows as the user wrote
it on every surface a person or a model reads — the profile's conclusions, every memory (``MemoryOut``,
what the console's lists and the MCP door's answers carry), the session context and its USER and MEMORY
blocks (the Hermes Agent provider's prompt block is that text), recall hits, and the export file — and the
canonical key, where it is spelled otherwise (``suzhou`` for 苏州, ``hiking`` for 爬山), is never shown
there: it stays in ``value`` only. One rendering rule holds it (``context.shown_value`` through
``MemoryItem.display``), so the property is over generated values and frames, not a list of sentences."""

import itertools
import json
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actors.adapters.embedding import HashEmbedder
from actors.app.service import UserMemoryService
from actors.app.transfer import export_lines
from actors.language import lexicon
from actors.language.text import has_han
from actors.store.sql.store import MemoryStore
from schemas import api
from schemas.settings import GatePolicy
from schemas.transfer import exported_line

TABLES = yaml.safe_load(Path(lexicon.__file__).with_name("lexicon.yaml").read_text(encoding="utf-8"))


def chinese_spellings(category: str) -> list[tuple[str, str]]:
    """(the Chinese spelling, the canonical key spelled otherwise) of a lexicon table."""
    return sorted(
        (alias, canonical)
        for canonical, aliases in TABLES[category].items()
        for alias in aliases
        if has_han(alias) and len(alias) >= 2 and lexicon.normalize_value(alias) == canonical
    )


UPPER = "ÁÉÍÓÚÖÜÅØŁŚŽÇBDFGKLMNPRSTVZ"
VOWELS = "aeiouáéíóúüöäåøã"
CONSONANTS = "bdfgklmnprstvzñçłšž"
#: a capitalised word of alternating letters with at least one accent: no English word, no rule keyword
latin_words = st.builds(
    lambda first, rest: first + "".join(rest),
    st.sampled_from(UPPER),
    st.lists(st.sampled_from([v + c for v in VOWELS for c in CONSONANTS]), min_size=2, max_size=3),
).filter(lambda w: not w.isascii() and len(w) >= 5)

#: (frame, slot): how a value is said, in which script, and the slot it must reach
LATIN_FRAMES = [
    ("I live in {}", "basic.residence"),
    ("我住在 {}", "basic.residence"),
    ("我现在住在{}", "basic.residence"),
    ("I grew up in {}", "basic.hometown"),
]
NAME_FRAMES = [("My name is {}", "basic.name"), ("Call me {}", "basic.name")]
CHINESE_FRAMES = [
    ("我住在{}", "basic.residence", "city"),
    ("我是{}", "basic.occupation", "occupation"),
    ("我很喜欢吃{}", "preference.food", "food"),
]

latin_cases = st.tuples(st.sampled_from(LATIN_FRAMES), latin_words).map(
    lambda c: (c[0][0], c[0][1], c[1], None)
)
name_cases = st.tuples(st.sampled_from(NAME_FRAMES), latin_words, latin_words).map(
    lambda c: (c[0][0], c[0][1], f"{c[1]} {c[2]}", None)
)
chinese_cases = st.sampled_from(
    [(frame, slot, zh, key) for frame, slot, table in CHINESE_FRAMES for zh, key in chinese_spellings(table)]
)
cases = st.one_of(latin_cases, name_cases, chinese_cases)

STORE = MemoryStore("sqlite://")
STORE.create_schema()
STORE.tenants.create("acme")
USERS = itertools.count()


def surfaces(svc: UserMemoryService, user: str, slot: str, words: str) -> dict[str, str]:
    """What a person or a model reads of the user's memory, each surface as text."""
    profile = svc.sessions.profile()
    shown = [c.display for s in profile.slots if s.slot == slot for c in s.conclusions]
    memories = [m.display for m in svc.memories.list().items if m.slot == slot]
    context = svc.sessions.start(api.StartSessionRequest(session_id="s3"))
    hits = svc.recalls.recall(api.RecallRequest(query=words, k=5)).hits
    exported = [json.loads(exported_line(line)) for line in export_lines(STORE, "acme", user)]
    return {
        "profile": " | ".join(str(d) for d in shown),
        "memory": " | ".join(str(d) for d in memories),
        "context": context.text,
        "user_block": context.user_block,
        "recall": " | ".join(h.memory.display or "" for h in hits if h.memory.slot == slot),
        "export": " | ".join(str(e.get("display")) for e in exported if e.get("slot") == slot),
    }


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases)
def test_every_surface_shows_the_value_as_the_user_wrote_it_and_never_the_key(case):
    frame, slot, words, key = case
    user = f"u{next(USERS)}"
    svc = UserMemoryService("acme", user, store=STORE, embedder=HashEmbedder(64), policy=GatePolicy())
    said = frame.format(words)
    for session in ("s1", "s2"):  # confirmed in a second session: it reaches the profile and the core
        svc.writes.write_turns(
            api.WriteTurnsRequest(session_id=session, turns=[api.TurnIn(text=said, dialog_id=f"{session}-d")])
        )
    read = [i for i in svc.work.engine.active() if i.slot == slot]
    assert read, f"{said!r} reached no {slot}"
    # the user's words: these, or another spelling of the same key the sentence holds too (我很喜欢吃辣味
    # holds 吃辣 as well as 辣味)
    written = {words} | {
        zh for _, _, table in CHINESE_FRAMES for zh, k in chinese_spellings(table) if k == key and zh in said
    }
    for surface, text in surfaces(svc, user, slot, words).items():
        assert any(w in text for w in written), f"{surface} of {said!r} does not show {words!r}: {text!r}"
        # a key that is the slot's own label (零食 is the key "food" of preference.food) cannot be told from
        # the label the context prints before it
        if key is not None and key.casefold() != slot.rsplit(".", 1)[-1]:
            assert key.casefold() not in text.casefold(), f"{surface} of {said!r} shows the key {key!r}"
    # the key stays beside the words, for matching
    assert all(
        item.value and (item.value == key or item.value.casefold() == words.casefold()) for item in read
    )
