"""Rule-based extraction of memory candidates from a user's turn, Chinese and English, with no model and no
network (docs/design.md#what-gets-written). The gate decides what to keep; extraction only proposes.

Pipeline for one turn:

1. only ``role == "user"`` speaks for the user; assistant text never becomes memory;
2. ``neutralize_injection`` strips invisible characters; a turn that tries to instruct a future prompt is
   refused outright; ``redact`` then removes secrets and identifiers, so no candidate can carry one;
3. small talk ("hi", "thanks", 哈哈) and questions give nothing;
4. each sentence is cut into clauses (``actors.language.segments``) and every clause goes through the rule
   books (``actors.language.{en,zh}.{facts,tastes}``) — declared facts, style, temporary states, tastes,
   plans, lessons;
5. an informative clause that no rule reads becomes a low-value EVENT/FACT with no slot, so ordinary
   conversation ("I went to a support group yesterday", "Luna and Oliver are so sweet and playful") is
   remembered too, below the threshold;
6. sentence markers adjust each finding: hedges lower confidence (and cancel corrections), corrections and
   change verbs set ``is_correction``, "remember this" forces the write.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol

from actors.core.gate.scoring import content_units, write_score
from actors.core.memory import Candidate, utcnow
from actors.language.en import facts as en_facts
from actors.language.en import tastes as en_tastes
from actors.language.lexicon import canonical_place, is_city, normalize_value, occupation_of
from actors.language.redaction import neutralize_injection, redact
from actors.language.rules import Finding, fact, object_phrase
from actors.language.segments import Clause, Sentence, segment
from actors.language.zh import facts as zh_facts
from actors.language.zh import tastes as zh_tastes
from schemas.enums import Kind, Source


@dataclass(frozen=True, slots=True)
class Turn:
    text: str
    session_id: str
    dialog_id: str
    role: Literal["user", "assistant"] = "user"
    at: datetime = field(default_factory=utcnow)


class Extractor(Protocol):
    def extract(self, turn: Turn) -> list[Candidate]: ...


_EN_BOOKS = (en_facts.book, en_tastes.book)
_ZH_BOOKS = (zh_facts.book, zh_tastes.book, *_EN_BOOKS)

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

_SMALL_TALK = re.compile(
    r"^(?:(?:hi|hello|hey|yo|thanks|thank you|thx|ty|ok|okay|k|sure|cool|great|nice|lol|lmao|haha+|hehe|bye|"
    r"goodbye|see you|see ya|good (?:morning|night|evening|afternoon)|yes|no|yep|nope|yeah|yup|wow|awesome|"
    r"got it|sounds good|np|no problem|you're welcome|how are you|what's up|sup|alright|right|indeed|"
    r"exactly|agreed|same|me too|you too|cheers|welcome|hmm+|uh huh|oh|ah|aha)[\s,!.?~]*)+$|^(?:(?:你好|"
    r"您好|嗨|哈+|呵+|嘿+|谢谢|多谢|感谢|好的|好|嗯+|哦+|噢|喔|行|可以|拜拜|再见|早上好|早安|晚安|午安|收到|"
    r"明白|了解|没问题|对|是的|不客气|在吗|ok+)[啊呀哦吧了呢啦嘛！!。.~～，,\s]*)+$",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(
    r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|we've|our|us)\b|我|咱", re.IGNORECASE
)
_REQUEST = re.compile(
    r"^(?:please|pls|help|tell|give|show|write|make|find|recommend|suggest|explain|translate|list|let's|"
    r"summari[sz]e|can|could|would|will|remind|check|look|search|book|order|send|create|draft|compose|fix|"
    r"imagine)\b|^(?:帮我|请|给我|你|麻烦|能不能|可以|能否|能帮|替我|告诉我|推荐)",
    re.IGNORECASE,
)
_WISH = re.compile(
    r"^(?:take care|enjoy|have (?:a|an|fun)|good luck|best of luck|keep (?:it up|going|up)|congrat\w*|"
    r"wishing|happy (?:birthday|holidays|new year)|hang in there|stay (?:safe|strong)|see you)\b|"
    r"^(?:保重|祝你|祝您|加油|玩得开心|生日快乐|新年快乐)",
    re.IGNORECASE,
)
_PAST = re.compile(
    r"\b(?:yesterday|last|ago|went|did|was|were|had|just|recently|this morning|earlier|finally|\w{3,}ed)\b|"
    r"昨天|上周|上个月|刚才|之前|去年|前几天|前天|刚刚|[了过]",
    re.IGNORECASE,
)
_CONTRAST = re.compile(
    r"\bnot\s+(?!only\b|just\b)(?:in\s+|at\s+|an?\s+|"
    r"the\s+)?(?P<old>[\w' -]{1,40}?)\s*,?\s+but\s+(?:rather\s+)?(?:in\s+|at\s+|an?\s+|"
    r"the\s+)?(?P<new>[\w' -]{1,40})|"
    r"不是(?P<old_zh>[^，,。]{1,15}?)[，,]?\s*(?:而)?是(?P<new_zh>[^，,。]{1,15})",
    re.IGNORECASE,
)
_SLOT_HINTS = (
    (re.compile(r"\b(?:live|living|lives|moved|move|based|reside)\b|住|搬|定居", re.I), "basic.residence"),
    (re.compile(r"allerg|过敏", re.I), "basic.allergy"),
    (re.compile(r"\bname\b|\bcalled\b|名字|我叫", re.I), "basic.name"),
    (
        re.compile(r"\bwork(?:s|ing)? as\b|\bjob\b|occupation|profession|职业|是一名", re.I),
        "basic.occupation",
    ),
    (re.compile(r"\bwork(?:s|ing)? (?:at|for)\b|\bemployer\b|\bcompany\b|公司|上班", re.I), "basic.employer"),
    (re.compile(r"\bfrom\b|hometown|老家|家乡|来自", re.I), "basic.hometown"),
)


_SPEAKER_TAG = re.compile(r"^(?P<name>[A-Z][\w'.-]{0,30}(?: [A-Z][\w'.-]{0,30})?):[ \t]+(?=\S)")
#: "Remember: …", "Correction: …" are markers the sentence rules read, never speakers
_NOT_SPEAKERS = frozenset(
    "remember note notes correction update reminder important ps p.s. fyi btw edit todo warning "
    "question answer q a actually also summary re subject".split()
)


_REDACTED = re.compile(r"\[REDACTED:[a-z_]+\]")
#: words that only name the secret beside them ("my password is …", "银行卡号是…"): nothing to remember
_SECRET_LABELS = frozenset(
    "password passcode passwd pwd pin key api token secret card credit debit bank account phone mobile cell "
    "number code ssn login new".split()
) | frozenset("密码银行卡号手机电话身份证账户新信用验口令")


def only_secrets(content: str) -> bool:
    """After redaction, nothing but placeholders and the words naming them remain: storing it would put
    "[REDACTED]" in every later context, and says nothing about the user."""
    if not _REDACTED.search(content):
        return False
    return all(unit in _SECRET_LABELS for unit in content_units(content))


def is_small_talk(text: str) -> bool:
    return bool(_SMALL_TALK.match(text.strip()))


def _slot_value(slot: str | None, raw: str, zh: bool) -> str:
    phrase = object_phrase(raw, zh)
    if slot in ("basic.residence", "basic.hometown"):
        return canonical_place(phrase)
    if slot == "basic.occupation":
        return occupation_of(phrase) or normalize_value(phrase)
    return normalize_value(phrase)


def _corrected_value(sentence: str, new: str, zh: bool) -> Finding | None:
    """The finding for the new value of a correction that names no verb of its own ("不是杭州，是苏州")."""
    slot = next((s for pattern, s in _SLOT_HINTS if pattern.search(sentence)), None)
    if slot is None:
        if is_city(canonical_place(object_phrase(new, zh))):
            slot = "basic.residence"
        elif occupation_of(object_phrase(new, zh)):
            slot = "basic.occupation"
    value = _slot_value(slot, new, zh) if slot else None
    return fact(slot, value, change=True) if slot and value else None


def _is_bare_value(clause: Clause) -> bool:
    """ "I meant Suzhou" / "我是说苏州": after the marker only a short noun phrase is left."""
    probe = clause.probe
    if _FIRST_PERSON.search(probe):
        return False
    return len(probe) <= 8 if clause.zh else len(probe.split()) <= 3


def _contrast(sentence: Sentence) -> Finding | None:
    m = _CONTRAST.search(sentence.text)
    if not m:
        return None
    zh = m["new_zh"] is not None
    new = m["new_zh"] if zh else m["new"]
    if _FIRST_PERSON.search(new):  # "not from Hangzhou but I live there": a clause, not a corrected value
        return None
    return _corrected_value(sentence.text, new, zh)


def _generic(clause: Clause) -> Finding | None:
    """Ordinary content no rule reads: remembered, but as a low-value point. What the user says of
    themselves needs three content words; what they tell of the world around them ("Luna and Oliver are so
    sweet and playful") needs more, and wishes ("Take care and enjoy the rest of your day") give nothing."""
    probe = clause.probe
    if is_small_talk(probe) or _REQUEST.match(probe) or _WISH.match(probe):
        return None
    units = content_units(probe)
    cjk = sum(1 for u in units if "\u3400" <= u[0] <= "\u9fff")
    needed = GENERIC_MIN_WORDS_FIRST_PERSON if _FIRST_PERSON.search(probe) else GENERIC_MIN_WORDS
    if (len(units) - cjk) + cjk / 2 < needed:
        return None
    kind = Kind.EVENT if _PAST.search(probe) else Kind.FACT
    return Finding(
        slot=None, kind=kind, value=None, importance=GENERIC_IMPORTANCE, confidence=GENERIC_CONFIDENCE
    )


def _sentence_as_clause(sentence: Sentence) -> Clause:
    return Clause(
        text=sentence.text,
        probe=" ".join(c.probe for c in sentence.clauses),
        zh=any(c.zh for c in sentence.clauses),
    )


def _match(clause: Clause) -> list[Finding]:
    probe = clause.probe[:MAX_PROBE_CHARS]
    for book in _ZH_BOOKS if clause.zh else _EN_BOOKS:
        found = book.match(probe)
        if found:
            return found
    generic = _generic(clause)
    return [generic] if generic else []


def _content(clause_text: str, finding: Finding) -> str:
    if finding.swap and finding.swap[0] in clause_text:
        old, new = finding.swap
        return " ".join(clause_text.replace(old, new, 1).split())
    return clause_text


def _read(sentence: Sentence, forced: bool, correction: bool) -> list[tuple[Finding, str]]:
    """Every finding of one sentence, each with the words it came from."""
    if sentence.question or not sentence.text:
        return []
    contrast = _contrast(sentence)
    if contrast:
        return [(contrast, sentence.text)]
    found = [(f, _content(c.text, f)) for c in sentence.clauses for f in _match(c)]
    if len(found) == 1 and not found[0][0].swap:
        found = [(found[0][0], sentence.text)]
    elif all(f.slot is None and not f.swap for f, _ in found):
        # ordinary content is kept as the sentence it was said in: clauses too thin to stand alone
        # ("I had a bit of a setback recently - another rejection") still make an informative sentence
        whole = _generic(_sentence_as_clause(sentence))
        found = [(whole, sentence.text)] if whole else found
    if not found and correction and len(sentence.clauses) == 1 and _is_bare_value(sentence.clauses[0]):
        corrected = _corrected_value(sentence.text, sentence.clauses[0].probe, sentence.clauses[0].zh)
        if corrected:
            found = [(corrected, sentence.text)]
    if not found and forced and not is_small_talk(sentence.text):
        kind = Kind.EVENT if _PAST.search(sentence.text) else Kind.FACT
        found = [(Finding(slot=None, kind=kind, value=None, importance=FORCED_IMPORTANCE), sentence.text)]
    return found


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


class RuleExtractor:
    """The rule-based extractor: deterministic, no LLM, no network; safe on any input text.

    A turn led by a speaker tag ("Caroline: …", as in transcripts) is read without it, and every candidate
    keeps it, so a memory says who said it even when the rules cut the turn into several points.
    """

    def extract(self, turn: Turn) -> list[Candidate]:
        if turn.role != "user":
            return []
        neutral = neutralize_injection(turn.text)
        if neutral.flagged:
            return []
        speaker, text = split_speaker(redact(neutral.text).text)
        if is_small_talk(text):
            return []
        candidates: list[Candidate] = []
        seen: set[tuple[str, str | None, str]] = set()
        carry_forced = carry_correction = False
        for sentence in segment(text):
            forced = sentence.forced or carry_forced
            correction = sentence.correction or carry_correction
            found = _read(sentence, forced, correction)
            # a marker-only sentence ("Remember this." / "更正一下。") speaks for the sentence after it
            carry_forced = forced and not found and not sentence.text
            carry_correction = correction and not found and not sentence.question
            for finding, words in found:
                candidate = self._candidate(
                    turn, finding, _trimmed(words), sentence.hedged, forced, correction
                )
                if speaker and candidate.content:
                    candidate.content = f"{speaker}: {candidate.content}"
                whole = _trimmed(f"{speaker}: {text}" if speaker else text)
                candidate.source_text = whole if whole != candidate.content else None
                key = (candidate.slot or "", candidate.value, candidate.polarity.value)
                if candidate.slot is None:
                    key = ("", candidate.content.casefold(), "")
                if candidate.content and key not in seen and not only_secrets(candidate.content):
                    seen.add(key)
                    candidates.append(candidate)
        if len(candidates) > MAX_CANDIDATES_PER_TURN:
            best = sorted(candidates, key=lambda c: c.write_score, reverse=True)[:MAX_CANDIDATES_PER_TURN]
            keep = {id(c) for c in best}
            candidates = [c for c in candidates if id(c) in keep]
        return candidates

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
