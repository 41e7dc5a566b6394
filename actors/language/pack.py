"""What a language brings to extraction and search: one ``LanguagePack`` per language (``en/``, ``zh/``),
registered in ``actors.language.packs`` (docs/design.md#language-packs).

A pack is chosen once per sentence and once per clause, by the script of its words
(``actors.language.text``): the first configured pack that reads the text, else the fallback pack (the one
that reads any text). Everything language-specific below the sentence is asked of the chosen pack: how
clauses are cut, what a question looks like, where an object phrase ends and how a list splits, the rule
books tried in order. The tokenizer reads every pack's words (``actors.language.tokens``), and sentence
markers are read from every configured pack at once (``actors.language.markers``): a turn mixes languages.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from actors.language.rules import RuleBook


@dataclass(frozen=True, slots=True)
class Phrasing:
    """Where an object phrase ends and how a listed object splits into items."""

    object_end: re.Pattern[str]
    item_split: re.Pattern[str]
    #: pairs that name one thing and are never split ("salt and pepper")
    protected: re.Pattern[str] | None = None
    #: "action and sci-fi movies": a bare modifier borrows the last item's head noun
    shares_head_noun: bool = False


@dataclass(frozen=True, slots=True)
class Words:
    """The tokenizer's side of a language: its search terms and what its words are worth to a write."""

    #: the search terms of this language's words in a casefolded text (stop words dropped, stemmed)
    terms: Callable[[str], Iterable[str]]
    #: a regex for one content unit of this language (an English word, one Chinese character)
    unit: str
    #: stop words: dropped from the search terms
    stop_words: frozenset[str]
    #: not counted as content by the write score
    uninformative: frozenset[str]
    #: casefold a unit before it is compared and kept
    casefold: bool = True
    #: shorter units carry no content ("of", "to")
    min_unit_chars: int = 1


@dataclass(frozen=True, slots=True)
class Markers:
    """A language's sentence markers and the shapes of turns that say nothing about the user. The string
    fields are regex sources: ``actors.language.markers`` joins those of every configured pack into one
    case-insensitive alternation each; ``forced`` and ``discourse`` are tried pack by pack."""

    #: "remember this: …" (the trigger is cut off the content)
    forced: re.Pattern[str]
    #: "and", "so", 然后 … opening a clause: cut before rules read it
    discourse: re.Pattern[str]
    #: the words that deny or end a fact ("not", "no longer", "anymore", 不再, 已经不): a clause no rule reads
    #: is read again without them, and a fact found then is the fact denied ("I don't live in Berlin
    #: anymore" → residence Berlin, negative)
    cessation: re.Pattern[str]
    correction_prefix: str
    correction_anywhere: str
    hedge: str
    hedge_prefix: str
    small_talk: str
    first_person: str
    #: a request to the assistant, a wish: no memory in it
    request: str
    wish: str
    #: the clause tells of something that happened (an EVENT rather than a FACT)
    past: str
    #: words that only name a redacted secret beside them
    secret_labels: frozenset[str]
    #: emphasis words (the write score's emotional intensity) and task words (its task relevance)
    emphasis: str
    task: str
    #: a question about what happened rather than how things stand (recall does not favour the newest)
    past_question: str
    #: the slot a correction that names no verb is about ("not Hangzhou, Suzhou" → basic.residence), by slot
    slot_hints: tuple[tuple[str, str], ...]
    #: cue words of a query → the profile slots it is about (a question about cooking reaches the allergy
    #: slot); an ASCII cue matches a whole word, any other a substring
    slot_cues: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]


@dataclass(frozen=True, slots=True)
class LanguagePack:
    code: str
    #: whether a text is in this language; None for the fallback pack, which reads any text
    reads: Callable[[str], bool] | None
    words: Words
    phrasing: Phrasing
    #: cuts a sentence into clauses
    clause_split: re.Pattern[str]
    is_question: Callable[[str], bool]
    #: after a correction marker, whether only a short noun phrase is left ("I meant Suzhou")
    is_bare_value: Callable[[str], bool]
    #: (probe, whether the clause before spoke as "I") → (probe, whether this one does): "I love cats and
    #: hate dogs", the second clause inherits the "I"; None where a language drops subjects freely
    inherit_subject: Callable[[str, bool], tuple[str, bool]] | None
    #: tried in order; the first book that finds something wins the clause
    books: tuple[RuleBook, ...]
    markers: Markers


def choose(text: str, packs: Iterable[LanguagePack]) -> LanguagePack:
    """The pack that reads ``text``: the first specific one that claims it, else the fallback."""
    fallback = None
    for pack in packs:
        if pack.reads is None:
            fallback = fallback or pack
        elif pack.reads(text):
            return pack
    if fallback is None:
        raise ValueError("no fallback language pack configured")
    return fallback
