"""Cutting a user turn into sentences and clauses, and reading the markers that change what a clause means.

A turn may say several things ("I live in Hangzhou and I'm allergic to peanuts"): each clause is matched on
its own. Some markers belong to the whole sentence rather than to one clause:

* *forced* — "remember this: …", 记住…, 帮我记一下… (the trigger is cut off the content);
* *correction* — "actually …", "I meant …", 其实…, 更正一下…, "Y, not X";
* *hedge* — "I think …", "maybe", 我觉得…, 可能… (lower confidence, never a correction);
* *question* — questions the user asks are not memories; what a question sentence tells before it asks
  ("I've lived in Porto for years, what's a good day trip?") is a sentence of its own.

Each sentence and each clause is read in the language pack its script chooses (``actors.language.pack``):
the sentence's pack cuts it into clauses and tells a question; the markers are those of every configured
pack (``actors.language.markers``). Chinese drops the subject freely ("其实我搬家了，现在住苏州"), so a
Chinese clause may match without 我; an English clause that starts with a bare verb after "and"/"but"
inherits the "I" of its sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from actors.language.markers import Reading, reading
from actors.language.pack import LanguagePack, choose


@dataclass(slots=True)
class Clause:
    #: the user's words (quotes straightened, spaces collapsed): what a candidate's content is cut from
    text: str
    #: what rules match against: leading discourse markers and hedges removed, an inherited "I " prepended
    probe: str
    #: the language the clause is read in (chosen by its script)
    pack: LanguagePack


@dataclass(slots=True)
class Sentence:
    text: str
    #: the language the sentence is read in (chosen by its script): its clause syntax and questions
    pack: LanguagePack
    clauses: list[Clause] = field(default_factory=list)
    forced: bool = False
    correction: bool = False
    hedged: bool = False
    question: bool = False


_QUOTES = str.maketrans({"’": "'", "‘": "'", "`": "'", "“": '"', "”": '"'})
#: the Chinese terminators are captured: a "？" that ends a sentence must still mark it a question
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[!?])(?=[^\s!?.])|([。！？；;\n]+)|(?:\.{3}|…+)\s*")

#: chat drops apostrophes ("I dont like it"); rules are written with them
_BARE_CONTRACTIONS = re.compile(
    r"\b(do|ca|did|does|is|was|are|would|could|should|have|has|wo)nt\b|\b(i)ve\b", re.IGNORECASE
)


def _split_sentences(text: str) -> list[str]:
    """The sentences of a text; one that ended with a full-width "？" keeps a "?": it reads as a question."""
    parts = _SENTENCE_END.split(text)
    sentences = []
    for body, end in zip(parts[::2], [*parts[1::2], None], strict=True):
        if body and body.strip(" \t\"'()[]-—"):
            sentences.append(body.strip() + ("?" if end and "？" in end else ""))
    return sentences


def strip_forced(text: str, markers: Reading) -> tuple[str, bool]:
    for pattern in markers.forced:
        m = pattern.match(text)
        if m:
            return text[m.end() :].strip(), True
    return text, False


def is_question(text: str, pack: LanguagePack) -> bool:
    body = text.rstrip(" .。!！~～")
    if body.endswith(("?", "？")):
        return True
    return pack.is_question(body)


#: where a question sentence may be cut: what a user tells before they ask is set off by a comma
_COMMAS = frozenset(",，")


def _comma_parts(body: str) -> list[str]:
    parts, start = [], 0
    for n, char in enumerate(body):
        if char in _COMMAS:
            parts.append(body[start:n])
            start = n + 1
    return [*parts, body[start:]]


def _told_and_asked(body: str, pack: LanguagePack, packs: tuple[LanguagePack, ...]) -> list[tuple[str, bool]]:
    """A question sentence cut at its commas into runs of what it tells and what it asks, each with whether
    it asks: a part asks when it reads as a question in its own language, and the last part asks for the
    whole sentence. "I've lived in Porto for three years now, what's a good day trip from here?" tells one
    thing and asks one; a fact is not lost because a question follows it."""
    parts = [p.strip() for p in _comma_parts(body)]
    runs: list[tuple[str, bool]] = []
    for n, part in enumerate(parts):
        if not part:
            continue
        asks = n == len(parts) - 1 or is_question(part, choose(part, packs))
        if runs and runs[-1][1] == asks:
            joint = "，" if pack.code == "zh" else ", "
            runs[-1] = (runs[-1][0] + joint + part, asks)
        else:
            runs.append((part, asks))
    return runs


def _without_closing_marker(probe: str, markers: Reading) -> str:
    """A clause closed by a discourse marker of several words ("I'm Oluwaseun by the way"): read without
    it, as a clause it opens is (one-word markers such as "well" or "so" also end ordinary clauses)."""
    for n, char in enumerate(probe):
        tail = probe[n + 1 :]
        if char == " " and " " in tail and any(d.fullmatch(tail) for d in markers.discourse):
            return probe[:n].rstrip(" ,")
    return probe


def _clauses(
    sentence: str, pack: LanguagePack, packs: tuple[LanguagePack, ...], markers: Reading
) -> list[Clause]:
    pieces = pack.clause_split.split(sentence)
    clauses: list[Clause] = []
    speaks_as_i = False  # "I love cats and hate dogs": the second clause inherits the "I"
    for piece in pieces:
        text = piece.strip(" ,，.。")
        if not text:
            continue
        probe = _BARE_CONTRACTIONS.sub(lambda m: f"{m[1]}n't" if m[1] else f"{m[2]}'ve", text)
        for _ in range(3):  # markers stack: "oh, actually, I think …"
            before = probe
            for discourse in markers.discourse:
                probe = discourse.sub("", probe)
            probe = markers.correction_prefix.sub("", probe)
            probe = markers.hedge_prefix.sub("", probe)
            if probe == before:
                break
        probe = _without_closing_marker(probe, markers)
        if pack.inherit_subject is not None:
            probe, speaks_as_i = pack.inherit_subject(probe, speaks_as_i)
        if probe:
            clauses.append(Clause(text=text, probe=probe, pack=choose(text, packs)))
    return clauses


def segment(text: str, packs: tuple[LanguagePack, ...]) -> list[Sentence]:
    """The sentences of a (redacted) turn, each with its clauses and sentence-level markers, each sentence
    and each clause read in the pack its script chooses among ``packs``."""
    markers = reading(packs)
    text = re.sub(r"[ \t]+", " ", text.translate(_QUOTES))
    sentences: list[Sentence] = []
    for raw in _split_sentences(text):
        body, forced = strip_forced(" ".join(raw.split()), markers)
        pack = choose(body, packs)
        question = bool(body) and is_question(body, pack) and not forced
        if forced:
            body = body.rstrip("?？ ")
        runs = _told_and_asked(body, pack, packs) if question else [(body, False)]
        sentences += [_sentence(part, packs, markers, forced, asks) for part, asks in runs]
    return sentences


def _sentence(
    body: str, packs: tuple[LanguagePack, ...], markers: Reading, forced: bool, question: bool
) -> Sentence:
    pack = choose(body, packs)
    return Sentence(
        text=body,
        pack=pack,
        clauses=_clauses(body, pack, packs, markers) if body and not question else [],
        forced=forced,
        correction=bool(markers.correction_prefix.match(body) or markers.correction_anywhere.search(body)),
        hedged=bool(markers.hedge.search(body)),
        question=question,
    )
