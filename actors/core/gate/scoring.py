"""Write score: how much a candidate deserves to outlive its session (docs/design.md#what-gets-written). 0..1;
the gate compares it with ``GatePolicy.write_threshold`` (0.6 by default) and keeps lower-scoring points in
working memory only.

The score is a band chosen by *timeliness* — how long the kind of thing stays true — and a position inside
that band from *information density*, *emotional intensity* and *task relevance*:

    band (floor, width) by what the candidate is:
        declared basic fact ........ 0.80 + 0.15   (residence, allergy, name: stay true for years)
        preference / style / relation 0.65 + 0.15
        plan, goal, lesson .......... 0.50 + 0.25  (true until done; relevant to tasks)
        other personal content ...... 0.25 + 0.30  (ordinary conversation: below the default threshold)
        temporary state ............. 0.10 + 0.25  (a mood fades within the day)
    score = floor + width * (0.5·density + 0.3·emotion + 0.2·task relevance)
    a basic fact that is only inferred (hedged, or merely mentioned) drops to the preference band
    explicit "remember this" → at least 0.95

So the threshold separates durable facts and tastes from chatter and moods whatever the wording, while
inside a band a dense, emphatic, task-related sentence outranks a vague one. Repetition is not scored here:
the gate sees restatements (confirmations) across sessions, a single turn cannot.
"""

from __future__ import annotations

import re

from actors.language.markers import reading
from actors.language.packs import packs
from actors.language.tokens import content_units, word_count
from schemas.enums import Kind

_NUMBER = re.compile(r"\d")
_PROPER_NOUN = re.compile(r"(?<=[a-z,;]\s)[A-Z][a-z]+")
_MARKER = re.compile(r"\[(?:REDACTED|FILTERED):[a-z_]+\]")

#: emphasis and task words of every language pack (``actors.language.<code>.markers``)
_WORDS = reading(packs())

_BANDS: dict[str, tuple[float, float]] = {
    "basic": (0.80, 0.15),
    "preference": (0.65, 0.15),
    "task": (0.50, 0.25),
    "other": (0.25, 0.30),
    "state": (0.10, 0.25),
}
FORCED_FLOOR = 0.95


def information_density(text: str) -> float:
    """0..1 from content words (two CJK characters count as one word), numbers and proper nouns."""
    words = word_count(content_units(text))
    numbers = len(_NUMBER.findall(_MARKER.sub(" ", text))) > 0
    names = len(_PROPER_NOUN.findall(text))
    return min(1.0, words / 10 + 0.15 * numbers + 0.1 * min(names, 3))


def emotional_intensity(text: str) -> float:
    """0..1 from emphasis words and exclamation marks."""
    hits = len(_WORDS.emphasis.findall(text)) + min(text.count("!") + text.count("！"), 3) * 0.5
    return min(1.0, hits / 3)


def task_relevance(text: str) -> float:
    return 1.0 if _WORDS.task.search(text) else 0.0


def _band(kind: Kind, slot: str | None, inferred: bool) -> tuple[float, float]:
    if kind is Kind.STATE or (slot or "").startswith("state."):
        return _BANDS["state"]
    if slot is None:
        return _BANDS["other"]
    if slot.startswith("basic."):
        return _BANDS["preference" if inferred else "basic"]
    if slot.startswith("task."):
        return _BANDS["task"]
    return _BANDS["preference"]


def write_score(
    text: str,
    kind: Kind,
    *,
    slot: str | None = None,
    forced: bool = False,
    inferred: bool = False,
    emotion: float | None = None,
    task: float | None = None,
) -> float:
    """The write score of a candidate whose content is ``text`` (see the module docstring for the formula).

    ``emotion`` and ``task`` override the intensities read from the text (a caller that knows better, e.g. a
    structured write tied to an active task, passes them in).
    """
    floor, width = _band(kind, slot, inferred)
    e = emotional_intensity(text) if emotion is None else min(max(emotion, 0.0), 1.0)
    r = task_relevance(text) if task is None else min(max(task, 0.0), 1.0)
    score = floor + width * (0.5 * information_density(text) + 0.3 * e + 0.2 * r)
    if forced:
        score = max(score, FORCED_FLOOR)
    return round(min(score, 1.0), 4)
