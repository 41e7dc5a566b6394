"""Cutting a user turn into sentences and clauses, and reading the markers that change what a clause means.

A turn may say several things ("I live in Hangzhou and I'm allergic to peanuts"): each clause is matched on
its own. Some markers belong to the whole sentence rather than to one clause:

* *forced* — "remember this: …", 记住…, 帮我记一下… (the trigger is cut off the content);
* *correction* — "actually …", "I meant …", 其实…, 更正一下…, "Y, not X";
* *hedge* — "I think …", "maybe", 我觉得…, 可能… (lower confidence, never a correction);
* *question* — questions the user asks are not memories.

Chinese drops the subject freely ("其实我搬家了，现在住苏州"), so a Chinese clause may match without 我;
an English clause that starts with a bare verb after "and"/"but" inherits the "I" of its sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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

_FORCED_EN = re.compile(
    r"^(?:(?:hey|ok|okay|also|and|oh|so|please|pls|btw|by the way)[,\s]+)*(?:can you |could you |would you |"
    r"will you |you should |make sure (?:to |you )?)?(?:please\s+)?(?:remember|don't forget|do not forget|"
    r"keep in mind|make a note|note down|take note|save this|memorize|store this)\b(?!\s+(?:when|how|what|"
    r"where|who|why|the time|me|us|him|her|them)\b)(?:\s*(?:this|that|it|the following|for me|"
    r"for later))*\s*(?:[:：,，\-—]\s*|\s+that\s+|[.!。！]*$|\s+)",
    re.IGNORECASE,
)
_FORCED_ZH = re.compile(
    r"^(?:请|麻烦你?|你|帮我|一定要|务必|千万)*(?:记住|记一下|记下来|记下|记好|牢记|别忘了|不要忘了|别忘记|"
    r"帮我记一下|帮我记住|记着)了?(?:这个|这件事|这一点|一点|哦|啊|哈|喔)?\s*[:：，,。!！]?\s*"
)
_CORRECTION_PREFIX = re.compile(
    r"^(?:(?:oh|oops|sorry|no|wait|well|hmm)[,!.\s]+)*(?:actually|in fact|correction|to correct (?:that|"
    r"myself)|let me correct (?:that|myself)|i meant|no wait|wait no|scratch that|to be precise)\b[,:]?\s*|"
    r"^(?:其实|更正一下|更正|纠正一下|纠正|说错了|我说错了|不对|搞错了|我是说|准确地说|确切地说)[，,：:\s]*",
    re.IGNORECASE,
)
_CORRECTION_ANYWHERE = re.compile(
    r"\b(?:actually|in fact|i meant|no longer)\b|,\s*not\s+\w|\bnot\s+[\w' -]{1,40}?\s*,?\s+but\s+|其实|"
    r"更正|纠正|说错了|不是[^，,。]{1,15}?[，,]?\s*(?:而)?是|搬家了|搬到|搬去|改成",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"\b(?:i think|i guess|i believe|i suppose|i feel like|maybe|perhaps|probably|possibly|might|not sure|"
    r"not certain|kind of|sort of)\b|我觉得|我感觉|可能|好像|也许|大概|或许|似乎|应该是|不太确定|不确定|"
    r"估计|说不定",
    re.IGNORECASE,
)
_HEDGE_PREFIX = re.compile(
    r"^(?:i think|i guess|i believe|i suppose|i feel like|maybe|perhaps|probably)(?:\s+that)?[,\s]+|"
    r"^(?:我觉得|我感觉|我估计|可能|好像|也许|大概|或许)[，,\s]*",
    re.IGNORECASE,
)
_DISCOURSE_ZH = re.compile(r"^(?:嗯+|哦+|啊+|对了|另外|而且|还有|然后|不过|但是|所以|就是|反正|话说)[，,\s]*")
_DISCOURSE_EN = re.compile(
    r"^(?:(?:and|but|so|also|oh|well|btw|by the way|plus|anyway|yeah|um|uh)\b[,\s]*)+", re.I
)

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


def strip_forced(text: str) -> tuple[str, bool]:
    for pattern in (_FORCED_EN, _FORCED_ZH):
        m = pattern.match(text)
        if m:
            return text[m.end() :].strip(), True
    return text, False


def is_question(text: str, pack: LanguagePack) -> bool:
    body = text.rstrip(" .。!！~～")
    if body.endswith(("?", "？")):
        return True
    return pack.is_question(body)


def _clauses(sentence: str, pack: LanguagePack, packs: tuple[LanguagePack, ...]) -> list[Clause]:
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
            probe = _DISCOURSE_EN.sub("", probe)
            probe = _DISCOURSE_ZH.sub("", probe)
            probe = _CORRECTION_PREFIX.sub("", probe)
            probe = _HEDGE_PREFIX.sub("", probe)
            if probe == before:
                break
        if pack.inherit_subject is not None:
            probe, speaks_as_i = pack.inherit_subject(probe, speaks_as_i)
        if probe:
            clauses.append(Clause(text=text, probe=probe, pack=choose(text, packs)))
    return clauses


def segment(text: str, packs: tuple[LanguagePack, ...]) -> list[Sentence]:
    """The sentences of a (redacted) turn, each with its clauses and sentence-level markers, each sentence
    and each clause read in the pack its script chooses among ``packs``."""
    text = re.sub(r"[ \t]+", " ", text.translate(_QUOTES))
    sentences: list[Sentence] = []
    for raw in _split_sentences(text):
        body, forced = strip_forced(" ".join(raw.split()))
        pack = choose(body, packs)
        question = bool(body) and is_question(body, pack) and not forced
        if forced:
            body = body.rstrip("?？ ")
        sentences.append(
            Sentence(
                text=body,
                pack=pack,
                clauses=_clauses(body, pack, packs) if body and not question else [],
                forced=forced,
                correction=bool(_CORRECTION_PREFIX.match(body) or _CORRECTION_ANYWHERE.search(body)),
                hedged=bool(_HEDGE.search(body)),
                question=question,
            )
        )
    return sentences
