"""Memory is data, never instructions, over the generated corpus of ``instruction_corpus`` (docs/quality.md
#7-promises-that-hold-in-any-words): no instruction's payload is stored or rendered into a context block,
while ordinary facts and preferences are still read as statements and kept. The thresholds are checked on
the held-out templates; ``python -m tests.unit.language.test_instruction_corpus`` prints every rate on both
parts."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from actors.core.context import render_session_context
from actors.core.extraction import Turn, make_extractor
from actors.core.memory import MemoryItem
from actors.language.packs import packs
from actors.language.safety.orders import addressed_to_assistant
from actors.language.segments import segment
from schemas.settings import GatePolicy
from tests.unit.language.instruction_corpus import Utterance, facts, instructions

EXTRACTOR = make_extractor()
PACKS = packs()
NOW = datetime(2026, 3, 1, tzinfo=UTC)


def stored_and_rendered(utterance: Utterance) -> tuple[list[str], str]:
    """What the store would hold of the utterance (contents, values, turn texts) and every context block
    rendered from it."""
    found = EXTRACTOR.extract(Turn(utterance.text, "s1", "d1"))
    items = [
        MemoryItem(
            tenant_id="t",
            user_id="u",
            content=c.content,
            kind=c.kind,
            slot=c.slot,
            value=c.value,
            polarity=c.polarity,
            source_text=c.source_text,
            created_at=NOW,
            updated_at=NOW,
        )
        for c in found
    ]
    snapshot = render_session_context(items, GatePolicy(), "s2", NOW)
    stored = [text for c in found for text in (c.content, c.value or "", c.source_text or "")]
    return stored, "\n".join((snapshot.text, snapshot.memory_block, snapshot.user_block))


def blocked(utterance: Utterance) -> bool:
    stored, rendered = stored_and_rendered(utterance)
    marker = utterance.key.casefold()
    return not any(marker in text.casefold() for text in [*stored, rendered])


def kept(utterance: Utterance) -> bool:
    stored, rendered = stored_and_rendered(utterance)
    key = utterance.key.casefold()
    return any(key in text.casefold() for text in stored) and key in rendered.casefold()


def read_as_a_statement(utterance: Utterance) -> bool:
    return not any(addressed_to_assistant(c.text) for s in segment(utterance.text, PACKS) for c in s.clauses)


def rate(check, corpus: list[Utterance]) -> tuple[float, list[str]]:
    misses = [u.text for u in corpus if not check(u)]
    return 1 - len(misses) / len(corpus), misses


def test_the_corpus_is_large_enough_in_both_languages():
    orders, statements = instructions(), facts()
    assert len(orders) >= 300 and len(statements) >= 300
    for corpus in (orders, statements):
        assert {u.lang for u in corpus if u.held_out} == {"en", "zh"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_instruction_of_the_held_out_templates_is_stored_or_rendered(lang):
    held_out = [u for u in instructions() if u.held_out and u.lang == lang]
    share, misses = rate(blocked, held_out)
    assert share >= 0.97, f"{share:.3f} blocked; e.g. {misses[:5]}"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ordinary_facts_of_the_held_out_templates_are_not_taken_for_instructions(lang):
    held_out = [u for u in facts() if u.held_out and u.lang == lang]
    share, misses = rate(read_as_a_statement, held_out)
    assert share >= 0.97, f"{share:.3f} read as statements; e.g. {misses[:5]}"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_ordinary_facts_of_the_held_out_templates_are_still_kept(lang):
    # end to end (extracted, stored and rendered): what the rule books read at all bounds this; the
    # extractor reads nothing of 我姐姐住在厦门 with or without the instruction rule
    held_out = [u for u in facts() if u.held_out and u.lang == lang]
    share, misses = rate(kept, held_out)
    assert share >= 0.8, f"{share:.3f} kept; e.g. {misses[:5]}"


def test_the_tuned_templates_hold_without_exception():
    assert rate(blocked, [u for u in instructions() if not u.held_out])[1] == []
    tuned_facts = [u for u in facts() if not u.held_out]
    assert rate(kept, tuned_facts)[1] == []
    assert rate(read_as_a_statement, tuned_facts)[1] == []


if __name__ == "__main__":
    checks = (
        ("instructions blocked", instructions(), blocked),
        ("facts read as such", facts(), read_as_a_statement),
        ("facts kept", facts(), kept),
    )
    for name, corpus, check in checks:
        for part in (False, True):
            for lang in ("en", "zh"):
                subset = [u for u in corpus if u.held_out is part and u.lang == lang]
                share, misses = rate(check, subset)
                label = "held-out" if part else "tuned"
                print(f"{name:22} {label:9} {lang}: {share:.3f} of {len(subset)}  {misses[:3]}")
