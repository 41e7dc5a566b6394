"""English below the sentence: how clauses are cut, what a question looks like, where an object phrase ends
and how a listed object splits into items."""

from __future__ import annotations

import re

from actors.language.pack import Phrasing

CLAUSE_SPLIT = re.compile(
    r"\s*;\s*|,?\s+(?:and|but|so|although|though|while|whereas|because|plus)\s+(?=(?:i|i'm|i've|i'd|i'll|my|"
    r"we|our)\b)|,\s+(?=(?:i|i'm|i've|i'd|i'll|my|also|not|but|and)\b)|\s+(?:and|but)\s+(?=(?:hate|dislike|"
    r"don't|do not|love|like|prefer|enjoy|can't|am|have|live|work)\b)|\s+[-—–]+\s+",
    re.IGNORECASE,
)
FIRST_PERSON_OPENING = re.compile(r"^i(?:'m|'ve|'d|\s)", re.IGNORECASE)
BARE_VERB = re.compile(
    r"^(?:hate|dislike|don't|do not|love|like|prefer|enjoy|can't|am|have|live|work)\b", re.I
)

_QUESTION = re.compile(
    r"^(?:(?:do|does|did|can|could|would|will|are|is|was|should|shall|may|have|has|am)\s+(?:you|it|there|we|"
    r"they|he|she|i|this|that)\b|(?:what|how|why|when|where|who|which|whose)\s+(?:is|are|was|were|'s|do|"
    r"does|did|can|could|should|would|will|about|if|kind|time)\b|(?:what|how|why)'s\b|"
    # "any good sushi places around here": a question with its verb left out
    r"any\s+(?:good|nice|great|decent|cheap|fun|chance|recommendations?|ideas?|suggestions?|tips?|advice|"
    r"thoughts?)\b)",
    re.IGNORECASE,
)


def inherit_subject(probe: str, speaks_as_i: bool) -> tuple[str, bool]:
    """ "I love cats and hate dogs": a clause opening on a bare verb after one spoken as "I" gets its "I"."""
    if speaks_as_i and BARE_VERB.match(probe):
        probe = "I " + probe
    return probe, bool(FIRST_PERSON_OPENING.match(probe))


def is_question(body: str) -> bool:
    """A sentence (terminal punctuation already stripped) that opens like a question."""
    return bool(_QUESTION.match(body))


def is_bare_value(probe: str) -> bool:
    return len(probe.split()) <= 3


OBJECT_END = re.compile(
    r"[,;:!?()\"]|\s+-\s+|\s+(?:in|on|at|with|when|because|since|for|during|after|before|while|if|as|so|but|"
    r"though|although|from|every|each|over|than|rather than|instead of|which|who|whenever|unless|until|like|"
    r"lately|recently|nowadays|these days|right now|now|anymore|any more|too|a lot|so much|very much|more|"
    r"even|especially|and then|or so|to be honest|tbh|haha|lol|cause|cuz|ever since|and all|and stuff|"
    r"and everything|at all|all the time|to me|for me|ago|today|tonight|tomorrow|yesterday|(?:this|next|"
    r"last)\s+(?:week|weekend|month|year|morning|evening|time))\b|\s+\d",
    re.IGNORECASE,
)
PROTECTED_PAIRS = re.compile(
    r"\b(?:rock and roll|salt and pepper|mac and cheese|fish and chips|drum and bass|sweet and sour|r&b|"
    r"black and white|arts and crafts|peanut butter and jelly)\b",
    re.IGNORECASE,
)
ITEM_SPLIT = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|&|plus|as well as)\s+|\s*/\s*", re.I)

PHRASING = Phrasing(
    object_end=OBJECT_END, item_split=ITEM_SPLIT, protected=PROTECTED_PAIRS, shares_head_noun=True
)
