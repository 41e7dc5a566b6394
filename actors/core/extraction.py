"""Rule-based extraction of memory candidates from a user's turn, Chinese and English, with no model and no
network (docs/design.md#what-gets-written). The gate decides what to keep; extraction only proposes.

Pipeline for one turn:

1. only ``role == "user"`` speaks for the user; assistant text never becomes memory;
2. ``neutralize_injection`` strips invisible characters; a turn that tries to instruct a future prompt is
   refused outright; ``redact`` then removes secrets and identifiers, so no candidate can carry one;
3. small talk ("hi", "thanks", 哈哈) and questions give nothing, but for a way of answering asked of the
   assistant ("Can you be more concise?"); what a question sentence tells before it asks is read like any
   sentence ("I've lived in Porto for years, what's a good day trip?": ``segments``);
4. each sentence is cut into clauses (``actors.language.segments``), each read in the language pack its
   script chooses (``actors.language.pack``), and every clause goes through that pack's rule books
   (``actors.language.{en,zh}.{facts,tastes}``) — declared facts, style, temporary states, tastes, plans,
   lessons; a clause no rule reads is read once more without its cessation words ("I don't live in Berlin
   anymore"): a fact found then is denied;
5. an informative clause that no rule reads becomes a low-value EVENT/FACT with no slot, so ordinary
   conversation ("I went to a support group yesterday", "Luna and Oliver are so sweet and playful") is
   remembered too, below the threshold;
6. sentence markers adjust each finding: hedges lower confidence (and cancel corrections), corrections and
   change verbs set ``is_correction``, "remember this" forces the write.

What is not kept is said where it stands (``Dropped``): a greeting, a request to the assistant, an
instruction to the model, a secret. A turn is never dropped whole because one of its clauses is one of
those; only a turn that tries to instruct a future prompt is refused whole (step 2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import Enum
from typing import Literal, Protocol, cast

from actors.adapters import plugins
from actors.core.context import slot_template
from actors.core.gate.scoring import write_score
from actors.core.memory import Candidate, utcnow
from actors.core.slots import is_style
from actors.core.style import canonical_style
from actors.language.lexicon import canonical_place, instruction, is_city, normalize_value, occupation_of
from actors.language.markers import Reading, reading
from actors.language.pack import LanguagePack, Phrasing
from actors.language.packs import PACKS, packs
from actors.language.rules import Finding, fact, object_phrase
from actors.language.safety.injection import neutralize_injection
from actors.language.safety.orders import addressed_to_assistant, order_parts, plain_value
from actors.language.safety.secrets import redact
from actors.language.segments import Clause, Sentence, segment
from actors.language.tokens import content_units, word_count
from actors.language.understanding.reader import READER_CONFIDENCE
from actors.language.understanding.reader import Reading as SemanticReading
from schemas.enums import Kind, Polarity, Source


@dataclass(frozen=True, slots=True)
class Turn:
    text: str
    session_id: str
    dialog_id: str
    role: Literal["user", "assistant"] = "user"
    at: datetime = field(default_factory=utcnow)


class Extractor(Protocol):
    def extract(self, turn: Turn) -> list[Candidate]: ...


class Dropped(Enum):
    """Why a part of a user's turn is not kept, in words a developer can act on."""

    REQUEST = "request to the assistant"
    INSTRUCTION = "instruction to the model"
    GREETING = "greeting"
    SECRET = "secret redacted"


@dataclass(frozen=True, slots=True)
class TurnReading:
    """What one turn gives: its candidates, and why each part not kept was dropped (one per clause, in
    order; a secret once per kind redacted)."""

    candidates: tuple[Candidate, ...] = ()
    dropped: tuple[Dropped, ...] = ()
    #: the turn's words as a later memory's context keeps them (``context_words``), when the extractor
    #: cleaned them while reading the turn; None when it did not (then ``context_words`` cleans them)
    said: str | None = None


def read_turn(extractor: Extractor, turn: Turn) -> TurnReading:
    """The turn read by ``extractor``; a plug-in that only proposes candidates says nothing of what it
    dropped."""
    if isinstance(extractor, RuleExtractor):
        return extractor.read(turn)
    return TurnReading(tuple(extractor.extract(turn)))


#: a clause longer than this is no simple statement; rules read only its head (bounds regex work)
MAX_PROBE_CHARS = 400
MAX_CONTENT_CHARS = 500
MAX_CANDIDATES_PER_TURN = 24
HEDGE_CONFIDENCE_FACTOR = 0.6
FORCED_IMPORTANCE = 0.9
FORCED_CONFIDENCE = 0.85
GENERIC_IMPORTANCE = 0.35
GENERIC_CONFIDENCE = 0.6
#: content words an unruled clause needs to be remembered, with and without a first-person word
GENERIC_MIN_WORDS_FIRST_PERSON = 3
GENERIC_MIN_WORDS = 4

_CONTRAST = re.compile(
    r"\bnot\s+(?!only\b|just\b)(?:in\s+|at\s+|an?\s+|"
    r"the\s+)?(?P<old>[\w' -]{1,40}?)\s*,?\s+but\s+(?:rather\s+)?(?:in\s+|at\s+|an?\s+|"
    r"the\s+)?(?P<new>[\w' -]{1,40})|"
    r"不是(?P<old_zh>[^，,。]{1,15}?)[，,]?\s*(?:而)?是(?P<new_zh>[^，,。]{1,15})",
    re.IGNORECASE,
)
#: the markers of every pack, for the helpers called without an extractor's own
_ALL = reading(packs())

_SPEAKER_TAG = re.compile(r"^(?P<name>[A-Z][\w'.-]{0,30}(?: [A-Z][\w'.-]{0,30})?):[ \t]+(?=\S)")
#: "Remember: …", "Correction: …" are markers the sentence rules read, never speakers
_NOT_SPEAKERS = frozenset(
    "remember note notes correction update reminder important ps p.s. fyi btw edit todo warning "
    "question answer q a actually also summary re subject".split()
)


_REDACTED = re.compile(r"\[REDACTED:[a-z_]+\]")
#: the slots a clause can deny (``_denied``): what the user is and what they like
_DENIABLE_SLOTS = ("basic.", "preference.")


def only_secrets(content: str, markers: Reading | None = None) -> bool:
    """After redaction, nothing but placeholders and the words naming them remain: storing it would put
    "[REDACTED]" in every later context, and says nothing about the user."""
    if not _REDACTED.search(content):
        return False
    labels = (markers or _ALL).secret_labels
    return all(unit in labels for unit in content_units(content))


def is_small_talk(text: str, markers: Reading | None = None) -> bool:
    return bool((markers or _ALL).small_talk.match(text.strip()))


def _slot_value(slot: str | None, raw: str, phrasing: Phrasing) -> str:
    phrase = object_phrase(raw, phrasing)
    if slot in ("basic.residence", "basic.hometown"):
        return canonical_place(phrase)
    if slot == "basic.occupation":
        return occupation_of(phrase) or normalize_value(phrase)
    return normalize_value(phrase)


def _corrected_value(sentence: str, new: str, phrasing: Phrasing, markers: Reading) -> Finding | None:
    """The finding for the new value of a correction that names no verb of its own ("不是杭州，是苏州")."""
    slot = next((s for pattern, s in markers.slot_hints if pattern.search(sentence)), None)
    if slot is None:
        if is_city(canonical_place(object_phrase(new, phrasing))):
            slot = "basic.residence"
        elif occupation_of(object_phrase(new, phrasing)):
            slot = "basic.occupation"
    value = _slot_value(slot, new, phrasing) if slot else None
    return fact(slot, value, change=True) if slot and value else None


def _is_bare_value(clause: Clause, markers: Reading) -> bool:
    """ "I meant Suzhou" / "我是说苏州": after the marker only a short noun phrase is left."""
    probe = clause.probe
    if markers.first_person.search(probe):
        return False
    return clause.pack.is_bare_value(probe)


def _contrast(sentence: Sentence, markers: Reading) -> Finding | None:
    m = _CONTRAST.search(sentence.text)
    if not m:
        return None
    zh = m["new_zh"] is not None  # the pattern is bilingual: the branch that matched names the language
    new = m["new_zh"] if zh else m["new"]
    # "not from Hangzhou but I live there": a clause, not a corrected value
    if markers.first_person.search(new):
        return None
    return _corrected_value(sentence.text, new, PACKS["zh" if zh else "en"].phrasing, markers)


def _generic(clause: Clause, markers: Reading) -> Finding | None:
    """Ordinary content no rule reads: remembered, but as a low-value point. What the user says of
    themselves needs three content words; what they tell of the world around them ("Luna and Oliver are so
    sweet and playful") needs more, and wishes ("Take care and enjoy the rest of your day") give nothing."""
    probe = clause.probe
    if is_small_talk(probe, markers) or markers.request.match(probe) or markers.wish.match(probe):
        return None
    needed = GENERIC_MIN_WORDS_FIRST_PERSON if markers.first_person.search(probe) else GENERIC_MIN_WORDS
    if word_count(content_units(probe)) < needed:
        return None
    kind = Kind.EVENT if markers.past.search(probe) else Kind.FACT
    return Finding(
        slot=None, kind=kind, value=None, importance=GENERIC_IMPORTANCE, confidence=GENERIC_CONFIDENCE
    )


def _not_of_the_user(clause: Clause, markers: Reading, continues: bool) -> Dropped | None:
    """Why a clause nothing was read in is not kept, when it is something other than a thin statement. A
    bare verb that ``continues`` a sentence whose clauses before it were kept goes on with their narration
    ("we roast marshmallows, tell stories around the campfire"): kept, as keeping is the default."""
    if is_small_talk(clause.probe, markers):
        return Dropped.GREETING
    if markers.request.match(clause.probe) and not continues:
        return Dropped.REQUEST
    return None


def _sentence_as_clause(sentence: Sentence) -> Clause:
    return Clause(
        text=sentence.text,
        probe=" ".join(c.probe for c in sentence.clauses),
        pack=sentence.pack,
    )


def _read_books(probe: str, pack: LanguagePack) -> list[Finding]:
    for book in pack.books:
        found = book.match(probe)
        if found:
            return found
    return []


def _denied(clause: Clause) -> list[Finding]:
    """The fact a clause denies or says has ended ("I'm not vegetarian anymore", "I don't live in Berlin any
    more", 我已经不住在成都了): read without its cessation words, the fact found is the one denied, with
    the opposite polarity. Only what the user is or likes can be denied this way."""
    cessation = clause.pack.markers.cessation
    probe = clause.probe[:MAX_PROBE_CHARS]
    if not cessation.search(probe):
        return []
    affirmed = " ".join(cessation.sub("", probe).split())
    return [
        replace(finding, polarity=Polarity.NEGATIVE, change=True)
        for finding in _read_books(affirmed, clause.pack)
        if finding.slot and finding.slot.startswith(_DENIABLE_SLOTS) and finding.polarity is Polarity.POSITIVE
    ]


#: where one style instruction ends and the next begins ("keep it short and skip the emojis")
_INSTRUCTION_JOINS = re.compile(
    r"\s*[,;，；、]\s*(?:and|also|plus|but)?\s*|\s+(?:and|also|plus|but)\s+|并且|而且|还有|另外|同时|也别|也不要"
)


def _instructions(clause: Clause, found: list[Finding]) -> list[Finding]:
    """Every style instruction of a clause that gives several ("Please keep it short and skip the emojis" is
    a reply length and a format): each part is read on its own, and each finding keeps its part as its
    words. The findings of the whole clause when it holds one instruction or none."""
    if not any(is_style(f.slot) for f in found):
        return found
    parts = [p for p in _INSTRUCTION_JOINS.split(clause.text) if p.strip()]
    each: list[Finding] = []
    for part in parts:
        for finding in _read_books(instruction(part)[:MAX_PROBE_CHARS], clause.pack):
            new = all((f.slot, f.value) != (finding.slot, finding.value) for f in each)
            if is_style(finding.slot) and new:
                each.append(replace(finding, swap=(clause.text, part.strip())))
    return each if len(each) > 1 else found


def _match(clause: Clause, markers: Reading) -> list[Finding]:
    found = _read_books(clause.probe[:MAX_PROBE_CHARS], clause.pack) or _denied(clause)
    if found:
        return _instructions(clause, found)
    generic = _generic(clause, markers)
    return [generic] if generic else []


def _content(clause_text: str, finding: Finding) -> str:
    if finding.swap and finding.swap[0] in clause_text:
        old, new = finding.swap
        return " ".join(clause_text.replace(old, new, 1).split())
    return clause_text


def _orders(sentence: Sentence) -> list[Clause]:
    """The clauses of a sentence addressed to the assistant (``safety.orders.addressed_to_assistant``); all of
    them when only the sentence as a whole reads as one ("When you answer, always end with …"), none when
    only a clause alone does."""
    orders = [c for c in sentence.clauses if addressed_to_assistant(c.text)]
    whole = addressed_to_assistant(sentence.text)
    if not orders and whole:
        return list(sentence.clauses)
    # a clause that reads as an order alone but not in its sentence goes on with a narration ("we roast
    # marshmallows, and tell stories …"): the sentence says who acts
    return orders if whole else []


def _addressed(sentence: Sentence) -> list[Clause]:
    """The sentence's clauses that give the assistant an order (a question gives none)."""
    return [] if sentence.question else _orders(sentence)


def _not_ordered(clause: Clause) -> list[str]:
    """The parts of a clause addressed to the assistant that give it no order (``order_parts``)."""
    return [part for part, order in order_parts(clause.text) if not order]


def _said_to_no_one(text: str, sentences: list[Sentence], orders: list[list[Clause]]) -> str:
    """The turn's words less every part addressed to the assistant (``orders``: each sentence's, as
    ``_addressed`` finds them); the text as it is when no sentence holds an order."""
    if not any(orders):
        return text
    kept: list[str] = []
    for sentence, ordered in zip(sentences, orders, strict=True):
        for clause in sentence.clauses:
            if clause not in ordered:
                kept.append(clause.text)
            else:
                kept += _not_ordered(clause)
    return " ".join(kept)


def _read_ordered(clause: Clause, markers: Reading) -> list[tuple[Finding, str]]:
    """A clause that gives the assistant an order: its parts that are orders give only their slot findings
    (words ``ORDER``); the parts that say something of the user are read like any clause."""
    found: list[tuple[Finding, str]] = []
    parts = order_parts(clause.text)
    if len(parts) == 1 or all(order for _, order in parts):
        parts = [(clause.probe, True)]
    for text, order in parts:
        part = Clause(text=text, probe=text, pack=clause.pack)
        if order:
            asked = _instructions(part, _read_books(text[:MAX_PROBE_CHARS], clause.pack))
            found += [(f, ORDER) for f in asked if f.slot]
        else:
            found += [(f, _content(text, f)) for f in _match(part, markers)]
    return found


def _with_words(clause: Clause, markers: Reading) -> list[tuple[Finding, str]]:
    return [(f, _content(clause.text, f)) for f in _match(clause, markers)]


Findings = list[tuple[Finding, str]]


@dataclass(frozen=True, slots=True)
class _SentenceReading:
    """One sentence read: its findings with their words, why each part not kept was dropped, and the
    sentence's words less those parts (what the turn text kept for recall quotes of it)."""

    found: Findings
    dropped: list[Dropped]
    kept: str


def _asked(sentence: Sentence, markers: Reading) -> _SentenceReading:
    """A question: "Can you be more concise?" asks for a way of answering, an instruction, the one thing a
    question holds, and only when it is a request to the assistant ("is it ok if I answer in a table?" is
    not); anything else it asks is not kept."""
    found: Findings = []
    if markers.request.match(sentence.text):
        request = replace(_sentence_as_clause(sentence), text=sentence.text.rstrip("?？ "))
        asked = _instructions(request, _read_books(request.text[:MAX_PROBE_CHARS], sentence.pack))
        found = [(finding, ORDER) for finding in asked if is_style(finding.slot)]
    if found:
        return _SentenceReading(found, [], "")
    reason = Dropped.INSTRUCTION if addressed_to_assistant(sentence.text) else Dropped.REQUEST
    return _SentenceReading([], [reason], "")


def _read_clauses(sentence: Sentence, markers: Reading, orders: list[Clause]) -> _SentenceReading:
    """The findings of each clause of a sentence, why each clause not kept was dropped, and the words of
    the others. Of a clause addressed to the assistant only its slot findings are kept
    (``_read_ordered``), and only its parts that say something of the user are words kept."""
    found: Findings = []
    dropped: list[Dropped] = []
    kept: list[str] = []
    for clause in sentence.clauses:
        if clause in orders:
            found += _read_ordered(clause, markers)
            dropped.append(Dropped.INSTRUCTION)
            kept += _not_ordered(clause)
            continue
        read = _with_words(clause, markers)
        reason = None if read else _not_of_the_user(clause, markers, continues=bool(kept) and not dropped)
        found += read
        dropped += [reason] if reason else []
        kept += [] if reason else [clause.text]
    return _SentenceReading(found, dropped, " ".join(kept) if dropped else sentence.text)


def _read(
    sentence: Sentence, forced: bool, correction: bool, markers: Reading, orders: list[Clause]
) -> _SentenceReading:
    """Every finding of one sentence, each with the words it came from, and why each part not kept was
    dropped. Of a clause addressed to the assistant only its slot findings are kept, with the words
    ``ORDER`` (``_as_stated`` gives them the service's template): an instruction is never stored in the
    words it was given in."""
    if not sentence.text:
        return _SentenceReading([], [], "")
    if sentence.question:
        return _asked(sentence, markers)
    clauses = _read_clauses(sentence, markers, orders)
    if orders:
        return clauses
    contrast = _contrast(sentence, markers)
    if contrast:
        return _SentenceReading([(contrast, sentence.text)], [], sentence.text)
    found, dropped = clauses.found, clauses.dropped
    if dropped:  # a sentence with a part not kept is kept clause by clause
        pass
    elif len(found) == 1 and not found[0][0].swap:
        found = [(found[0][0], sentence.text)]
    elif all(f.slot is None and not f.swap for f, _ in found):
        # ordinary content is kept as the sentence it was said in: clauses too thin to stand alone
        # ("I had a bit of a setback recently - another rejection") still make an informative sentence
        whole = _generic(_sentence_as_clause(sentence), markers)
        found = [(whole, sentence.text)] if whole else found
    if (
        not found
        and correction
        and len(sentence.clauses) == 1
        and _is_bare_value(sentence.clauses[0], markers)
    ):
        clause = sentence.clauses[0]
        corrected = _corrected_value(sentence.text, clause.probe, clause.pack.phrasing, markers)
        if corrected:
            found = [(corrected, sentence.text)]
    if not found and forced and not is_small_talk(sentence.text, markers):
        kind = Kind.EVENT if markers.past.search(sentence.text) else Kind.FACT
        found = [(Finding(slot=None, kind=kind, value=None, importance=FORCED_IMPORTANCE), sentence.text)]
    if found and not clauses.found:
        # the whole sentence was read (forced, a bare corrected value): none of its clauses was dropped
        return _SentenceReading(found, [], sentence.text)
    return _SentenceReading(found, dropped, clauses.kept)


#: the words of a finding read in a clause addressed to the assistant: none are kept (``_as_stated``)
ORDER = ""


def _as_stated(finding: Finding, words: str, turn_text: str) -> tuple[Finding, str] | None:
    """What a finding is stored as. A style instruction is kept only as a value of the closed vocabulary
    (``actors.core.style``), and it and any finding of a clause addressed to the assistant are stored as the
    service's template (``reply length: short``, ``content: not horror film``), in the user's spelling of
    the value; a value of such a clause that is no plain phrase (an address, digits, markup) is dropped."""
    if is_style(finding.slot):
        # the instruction's own words map into the vocabulary first ("use bullet points" → bullet points),
        # else the rule's key ("skip the emojis" → no emoji)
        slot = cast(str, finding.slot)
        said = canonical_style(slot, finding.said) if finding.said else None
        value = said or canonical_style(slot, finding.value)
        if value is None:
            return None
        finding = replace(finding, value=value)
    elif words is not ORDER:
        return finding, words
    elif not plain_value(finding.value):
        return None
    stated = slot_template(finding.slot, finding.value, finding.polarity, turn_text)
    return (finding, stated) if stated else None


def _trimmed(text: str) -> str:
    text = text.strip(" ,，;；")
    if len(text) > MAX_CONTENT_CHARS:
        cut = text[:MAX_CONTENT_CHARS]
        text = cut.rsplit(" ", 1)[0] if " " in cut[MAX_CONTENT_CHARS // 2 :] else cut
    # re-redact after cutting: a cut inside a long digit run can leave a new card-shaped stretch
    return redact(text).text


def split_speaker(text: str) -> tuple[str | None, str]:
    """ "Caroline: I went to…" → ("Caroline", "I went to…"): a transcript's speaker tag, not a marker."""
    m = _SPEAKER_TAG.match(text)
    if m is None or m["name"].casefold() in _NOT_SPEAKERS:
        return None, text
    return m["name"], text[m.end() :]


@dataclass(frozen=True, slots=True)
class _Cleaned:
    """A turn as a memory may keep its words: secrets and identifiers redacted, split from its speaker,
    segmented, with each sentence's clauses addressed to the assistant (``_addressed``)."""

    speaker: str | None
    text: str
    secrets: int  # how many secrets were redacted
    sentences: list[Sentence]
    orders: list[list[Clause]]
    #: the text less every part addressed to the assistant (``_said_to_no_one``)
    said_to_no_one: str

    @property
    def said(self) -> str:
        """The turn's words as a later memory's context keeps them (``context_words``)."""
        said = self.said_to_no_one
        return _trimmed(f"{self.speaker}: {said}" if self.speaker and said else said)


def _cleaned(text: str, languages: tuple[LanguagePack, ...]) -> _Cleaned | None:
    """``text`` cleaned as a memory is, or None when it tries to instruct a future model (nothing of it can
    be trusted)."""
    neutral = neutralize_injection(text)
    if neutral.flagged:
        return None
    redacted = redact(neutral.text)
    speaker, said = split_speaker(redacted.text)
    sentences = segment(said, languages)
    orders = [_addressed(sentence) for sentence in sentences]
    return _Cleaned(
        speaker, said, len(redacted.findings), sentences, orders, _said_to_no_one(said, sentences, orders)
    )


def context_words(text: str, languages: tuple[LanguagePack, ...] | None = None) -> str:
    """A turn's words as a later memory's context keeps them (``actors.core.said_before``), whoever said it,
    cleaned exactly as a memory is: nothing of a turn that tries to instruct a future model, secrets and
    identifiers redacted, parts addressed to the assistant cut out."""
    cleaned = _cleaned(text, languages or packs())
    return "" if cleaned is None else cleaned.said


def make_extractor(name: str = "rules", languages: str | tuple[str, ...] | None = None) -> Extractor:
    """The extractor the settings name (``HERMES_EXTRACTOR``, ``HERMES_EXTRACTOR_LANGUAGES``): ``rules``, or a
    plug-in's name (entry point group ``hermes_memory.extractors``, ``actors.adapters.plugins``), built with
    ``languages``, a comma-separated string or a tuple of pack codes (None: every pack)."""
    if isinstance(languages, str):
        languages = tuple(code.strip() for code in languages.split(",") if code.strip())
    extractor: Extractor = plugins.build(
        plugins.EXTRACTORS, name, {"rules": RuleExtractor}, ("extract",), languages=languages
    )
    return extractor


class RuleExtractor:
    """The rule-based extractor: deterministic, no LLM, no network; safe on any input text.

    A turn led by a speaker tag ("Caroline: …", as in transcripts) is read without it, and every candidate
    keeps it, so a memory says who said it even when the rules cut the turn into several points.

    ``languages`` names the language packs it reads with (``actors.language.packs``; all by default): each
    sentence and clause is read in the pack its script chooses, English being the fallback.
    """

    def __init__(self, languages: tuple[str, ...] | list[str] | None = None):
        self.packs: tuple[LanguagePack, ...] = packs(languages)
        self.markers = reading(self.packs)

    def extract(self, turn: Turn) -> list[Candidate]:
        return list(self.read(turn).candidates)

    def read(self, turn: Turn) -> TurnReading:
        """The turn's candidates, and why each part of it not kept was dropped."""
        if turn.role != "user":
            return TurnReading()
        cleaned = _cleaned(turn.text, self.packs)
        if cleaned is None:  # an attempt on a future prompt: nothing of the turn can be trusted
            return TurnReading(dropped=(Dropped.INSTRUCTION,), said="")
        secrets = [Dropped.SECRET] * cleaned.secrets
        speaker, text, said = cleaned.speaker, cleaned.text, cleaned.said
        # a clause that gives the assistant an order keeps no words: they stay out of the store
        sentences, orders = cleaned.sentences, cleaned.orders
        if is_small_talk(text, self.markers):
            return TurnReading(dropped=(*secrets, Dropped.GREETING), said=said)
        readings: list[tuple[Sentence, bool, bool, _SentenceReading, Findings]] = []
        carry_forced = carry_correction = False
        for sentence, ordered in zip(sentences, orders, strict=True):
            forced = sentence.forced or carry_forced
            correction = sentence.correction or carry_correction
            read = _read(sentence, forced, correction, self.markers, ordered)
            found = [
                stated
                for finding, words in read.found
                if (stated := _as_stated(finding, words, sentence.text)) is not None
            ]
            readings.append((sentence, forced, correction, read, found))
            # a marker-only sentence ("Remember this." / "更正一下。") speaks for the sentence after it
            carry_forced = forced and not found and not sentence.text
            carry_correction = correction and not found and not sentence.question
        dropped = secrets + [reason for *_, read, _ in readings for reason in read.dropped]
        # the turn text kept for recall holds none of the parts not kept
        turn_text = (
            " ".join(r.kept for *_, r, _ in readings if r.kept) if len(dropped) > len(secrets) else text
        )
        # each candidate's source: the same for all (a secret scan), the context's words when the same text
        if turn_text and turn_text == cleaned.said_to_no_one:
            whole = said
        elif any(found for *_, found in readings):
            whole = _trimmed(f"{speaker}: {turn_text}" if speaker else turn_text)
        else:
            whole = ""
        candidates: list[Candidate] = []
        seen: set[tuple[str, str | None, str]] = set()
        for sentence, forced, correction, _, found in readings:
            for finding, words in found:
                candidate = self._candidate(
                    turn, finding, _trimmed(words), sentence.hedged, forced, correction
                )
                if speaker and candidate.content:
                    candidate.content = f"{speaker}: {candidate.content}"
                candidate.source_text = whole if whole and whole != candidate.content else None
                key = (candidate.slot or "", candidate.value, candidate.polarity.value)
                if candidate.slot is None:
                    key = ("", candidate.content.casefold(), "")
                if (
                    candidate.content
                    and key not in seen
                    and not only_secrets(candidate.content, self.markers)
                ):
                    seen.add(key)
                    candidates.append(candidate)
        if len(candidates) > MAX_CANDIDATES_PER_TURN:
            best = sorted(candidates, key=lambda c: c.write_score, reverse=True)[:MAX_CANDIDATES_PER_TURN]
            keep = {id(c) for c in best}
            candidates = [c for c in candidates if id(c) in keep]
        return TurnReading(tuple(candidates), tuple(dropped), said)

    @staticmethod
    def _candidate(
        turn: Turn, finding: Finding, content: str, hedged: bool, forced: bool, correction: bool
    ) -> Candidate:
        temporary = finding.kind is Kind.STATE
        inferred = hedged or finding.inferred
        importance = max(finding.importance, FORCED_IMPORTANCE) if forced else finding.importance
        # "remember this" is the user's own declaration, however plain its words: as sure as a declared fact
        confidence = max(finding.confidence, FORCED_CONFIDENCE) if forced else finding.confidence
        confidence *= HEDGE_CONFIDENCE_FACTOR if hedged else 1.0
        value = redact(finding.value).text if finding.value else None
        return Candidate(
            content=content,
            kind=finding.kind,
            session_id=turn.session_id,
            dialog_ids=[turn.dialog_id],
            polarity=finding.polarity,
            slot=finding.slot,
            value=value,
            importance=round(importance, 3),
            confidence=round(confidence, 3),
            source=Source.INFERRED if inferred else Source.USER_DECLARED,
            is_correction=(correction or finding.change)
            and finding.slot is not None
            and not hedged
            and not temporary,
            forced=forced,
            observed_at=turn.at,
            write_score=write_score(
                content, finding.kind, slot=finding.slot, forced=forced, inferred=inferred
            ),
        )


@dataclass(frozen=True, slots=True)
class ClauseReading:
    """What a clause reader read in a candidate no rule gave a slot (``actors.app.write.read``): its slot and
    value (normalized as the rules' values are), and what changes the reading — a denial or a retraction
    (``negative``: a withdrawal of a basic fact, ``slots.is_withdrawal``), a change of an earlier value
    (``correction``), a state that holds for a while only (``temporary``: never frozen)."""

    slot: str
    value: str
    negative: bool = False
    correction: bool = False
    temporary: bool = False

    @classmethod
    def of(cls, reading: SemanticReading) -> ClauseReading:
        """The semantic reader's reading: a slot, a value and a polarity, no flags."""
        return cls(reading.slot, reading.value, reading.negative)


def read_as(candidate: Candidate, reading: ClauseReading) -> Candidate:
    """A slot-less candidate as a reader read its clause (``actors.app.write.read``): the reading's slot and
    value, a weaker signal than a rule's, so a lower confidence. What the rules made of it (a slot-less
    memory) is kept beside the reading: the gate keeps it if the reading restates. A change read in the
    clause is a correction (it supersedes, or waits with its alert where the old value is frozen or vital);
    a temporary state is a state, never frozen."""
    polarity = Polarity.NEGATIVE if reading.negative else Polarity.POSITIVE
    finding = fact(reading.slot, reading.value, polarity=polarity, confidence=READER_CONFIDENCE)
    kind = Kind.STATE if reading.temporary else finding.kind
    return replace(
        candidate,
        as_ruled=replace(candidate),
        slot=reading.slot,
        value=reading.value,
        kind=kind,
        polarity=polarity,
        importance=max(candidate.importance, finding.importance),
        confidence=finding.confidence,
        is_correction=reading.correction and kind is not Kind.STATE,
        write_score=write_score(candidate.content, kind, slot=reading.slot, forced=candidate.forced),
    )
