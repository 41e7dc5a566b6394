"""English rules for how the user wants to be talked to, how they feel right now, what they like and reject,
what they plan, and what they learned. Runs after ``actors.language.en.facts``.

Temporary states come before tastes: "cooking is so annoying today" is a mood (``state.mood``), never a
dislike of cooking; "I hate cooking" is a dislike.
"""

from __future__ import annotations

import re

from actors.language.en.facts import ADV, I_ANY, I_NOW, IM, OBJ, TIME
from actors.language.en.syntax import PHRASING
from actors.language.lexicon import emotion_of, normalize_value, preference_slot
from actors.language.rules import (
    Finding,
    RuleBook,
    always,
    counted,
    fact,
    formatted,
    is_real_object,
    liking,
    listed,
    object_phrase,
)
from schemas.enums import Polarity

NEGATIVE = Polarity.NEGATIVE
book = RuleBook(re.IGNORECASE)
_TIME = re.compile(TIME, re.IGNORECASE)


def _phrase_value(raw: str, max_words: int = 6) -> str | None:
    phrase = object_phrase(raw, PHRASING)
    if not is_real_object(phrase):
        return None
    return normalize_value(" ".join(phrase.split()[:max_words])) or None


# --- interaction style ----------------------------------------------------------------------------

REPLIES = r"(?:answers?|repl(?:y|ies)|responses?|explanations?|messages?)"


COUNT = r"(?:one|two|three|four|five|a few|\d+)"
UNITS = r"(?:sentences?|words?|lines?|paragraphs?|bullet points?|points?)"
FORMATS = (
    r"(?:tables?|bullet(?:ed)? points?|bullets|(?:numbered\s+|bulleted\s+)?lists?|code blocks?|json|markdown|"
    r"plain text)"
)

book.rule(
    r"\b(?:keep|kept|keeping|limit|limited|limiting|cap|capped)\s+(?:your\s+|the\s+|my\s+)?"
    + REPLIES
    + r"\s+(?:to|under|within|below|at|to at most|"
    r"to no more than)\s+(?:\w+\s+)?" + UNITS + r"\b",
    r"\b(?:answer|reply|respond|explain|sum (?:it )?up)\s+(?:me\s+)?in\s+" + COUNT + r"\s+" + UNITS + r"\b",
    r"\b(?:no more than|at most)\s+" + COUNT + r"\s+" + UNITS + r"\b",
)(counted)


book.rule(
    r"\b(?:answer|reply|respond|write|give|show|format|put|present)\s+(?:me\s+|it\s+|that\s+|things\s+|"
    r"the answers?\s+|your answers?\s+)?(?:in|as|with|using|into)\s+(?:an?\s+)?(?:markdown\s+)?"
    + FORMATS
    + r"\b",
    r"\b(?:use|prefer)\s+(?:an?\s+)?" + FORMATS + r"\s+(?:in|for|when)\b",
    r"^(?:(?:please|pls|kindly|always|just|also|can you|could you|would you)\s+)*use\s+(?:an?\s+)?"
    + FORMATS
    + r"\b",
    r"\b(?:don't|do not|never)\s+use\s+(?:any\s+)?(?:emojis?|markdown|tables?|bullet points?)\b",
    # "skip the emojis", "no emojis please", "fewer emoticons", "go easy on the emojis"
    r"\b(?:skip|drop|lose|ditch|avoid|stop(?:\s+using)?|cut(?:\s+out)?|no|without|less|fewer|spare me|"
    r"go easy on|cool it with)\s+(?:the\s+|any\s+|all\s+(?:the\s+)?|those\s+|your\s+)?(?:emojis?|emoticons?|"
    r"smileys?|markdown|tables?|bullet points?)\b",
    r"\b(?:emojis?|emoticons?|smileys?)\s+(?:are\s+)?(?:not needed|unnecessary|annoying|off)\b",
)(formatted)


book.rule(
    r"\b(?:keep|make)\s+(?:your\s+|the\s+)?(?:" + REPLIES + r"\s+|it\s+|things\s+)?"
    r"(?:short|brief|concise|shorter|simple|to the point)\b",
    r"\bbe\s+(?:more\s+)?(?:concise|brief|succinct)\b",
    r"\b(?:short|shorter|brief|briefer|concise)\s+" + REPLIES,
    r"\b(?:less|not so|too)\s+(?:verbose|wordy|long-winded)\b|\bno\s+(?:long|lengthy)\s+" + REPLIES,
)(always("style.reply_length", "short"))


book.rule(
    r"\b(?:use|in|with)\s+(?:more\s+)?(?:simple|simpler|plain|plainer|easy|everyday|layman'?s?)\s+"
    r"(?:language|words|english|terms)\b",
    r"\bexplain\s+(?:\w+\s+){0,2}?(?:to me\s+)?like\s+(?:i'?m|i\s+am)\s+(?:five|5|a kid|a child|ten|10)\b",
    r"\beli5\b",
)(always("style.tone", "simple"))


book.rule(
    r"\b(?:give|show|include|add|use)\s+(?:me\s+)?(?:more\s+|some\s+|a few\s+)?"
    r"(?:code\s+|concrete\s+|real\s+)?examples\b",
)(formatted)


book.rule(
    r"\b(?:more\s+)?(?:detailed|longer|in-depth|thorough|comprehensive)\s+" + REPLIES,
    r"\b(?:explain|answer|go)\s+(?:\w+\s+)?in(?:to)?\s+(?:more\s+)?detail\b",
)(always("style.reply_length", "detailed"))


_TONES = {
    "informal": "casual",
    "relaxed": "casual",
    "playful": "humorous",
    "funny": "humorous",
    "professional": "formal",
    "polite": "formal",
    "blunt": "direct",
    "straightforward": "direct",
    "warm": "friendly",
    "encouraging": "gentle",
}
_OPPOSITE_TONES = {
    "formal": "casual",
    "serious": "casual",
    "stiff": "casual",
    "robotic": "casual",
    "casual": "formal",
    "rude": "gentle",
    "blunt": "gentle",
    "direct": "gentle",
}
TONE = (
    r"(?P<tone>casual|informal|formal|friendly|professional|polite|direct|blunt|straightforward|gentle|"
    r"humorous|funny|serious|warm|relaxed|playful|encouraging|stiff|robotic|rude)"
)


@book.rule(
    r"\b(?:be|sound|talk|speak|write|answer|reply|respond)\s+(?:to me\s+)?(?:in\s+an?\s+)?(?P<less>more\s+|"
    r"a bit more\s+|"
    r"a little more\s+|less\s+|very\s+)?" + TONE + r"\b",
    r"\b(?:use|prefer|like)\s+(?:an?\s+)?(?P<less>more\s+|less\s+)?" + TONE + r"\s+(?:tone|style|voice)",
    r"\b(?:don't|do not)\s+be\s+(?P<less>so\s+|too\s+)?" + TONE + r"\b",
)
def _tone(m: re.Match[str], clause: str) -> list[Finding] | None:
    tone = m["tone"].lower()
    negated = (m["less"] or "").strip().lower() == "less" or re.match(r"(?:don't|do not)", m.group(0), re.I)
    tone = _OPPOSITE_TONES.get(tone) if negated else _TONES.get(tone, tone)
    return [fact("style.tone", tone)] if tone and tone not in ("stiff", "robotic", "rude") else None


@book.rule(
    r"\b(?:reply|answer|respond|talk|speak|write|chat)\s+(?:to me\s+|with me\s+)?in\s+(?P<lang>english|"
    r"chinese|mandarin|japanese|french|spanish|german|korean)\b"
)
def _reply_language(m: re.Match[str], clause: str) -> list[Finding]:
    return [fact("style.language", m["lang"].lower())]


@book.rule(
    r"\b(?:don't|do not|never|stop|no)\s+(?:ever\s+)?(?:talk(?:ing)?\s+(?:to me\s+)?about|mention(?:ing)?|"
    r"bring(?:ing)?\s+up|ask(?:ing)?\s+(?:me\s+)?about|discuss(?:ing)?|jok(?:e|es|ing)\s+about)\s+" + OBJ,
    I_NOW + r"(?:don't|do not)\s+(?:want|like)\s+to\s+(?:talk|hear|think)\s+about\s+" + OBJ,
    r"\bavoid\s+(?:talking about|the (?:topic|subject) of|topics? like|mentioning|discussing)\s+" + OBJ,
)
def _taboo(m: re.Match[str], clause: str) -> list[Finding] | None:
    return listed(m["obj"], PHRASING, lambda v: fact("style.taboo", v, polarity=NEGATIVE))


# --- temporary states -----------------------------------------------------------------------------

FEEL = (
    r"\bi(?:'m|\s+am|m|\s+feel|'m\s+feeling|\s+am\s+feeling|'ve\s+been(?:\s+feeling)?|"
    r"\s+have\s+been(?:\s+feeling)?|\s+been)\s+"
)
INTENSITY = (
    r"(?:(?:a\s+(?:bit|little)|kind of|so|really|very|super|totally|quite|pretty|extremely|just|too)\s+)*"
)
MOOD = (
    r"(?P<emo>tired|exhausted|drained|worn out|burn(?:ed|t) out|stressed(?: out)?|anxious|nervous|worried|"
    r"sad|upset|depressed|down|blue|angry|mad|furious|pissed|bored|overwhelmed|swamped|frustrated|happy|glad|"
    r"excited|thrilled|sleepy|busy|lonely|annoyed|irritated|grumpy|cranky|homesick|heartbroken|scared|afraid)"
)
VENT = (
    r"(?P<emo>annoying|frustrating|exhausting|tiring|stressful|boring|irritating|depressing|overwhelming|"
    r"draining|a pain|a drag|a nightmare|hard|tough|rough)"
)


@book.rule(
    FEEL + ADV + INTENSITY + MOOD + r"\b(?!\s+(?:of|with|at|to|that|for)\b)",
    # the subject left out: "Feeling pretty stressed out today", "Been so tired lately"
    r"^(?:(?:been|just)\s+)?(?:feeling\s+|been\s+)"
    + INTENSITY
    + MOOD
    + r"\b(?!\s+(?:of|with|at|to|that|for)\b)",
    r"^(?:[\w' -]{2,40}?)\s+(?:is|are|has been|have been|feels)\s+"
    r"(?:so|really|super|too|such|very|incredibly|extremely|quite|kind of|pretty|getting)\s+(?:\w+\s+)?"
    + VENT
    + r"\b",
    r"\b(?:today|tonight|this week|this morning|my day|work)\s+(?:is|was|has been)\s+"
    r"(?:so\s+|really\s+|super\s+|such\s+)?(?:\w+\s+)?" + VENT + r"\b",
)
def _mood(m: re.Match[str], clause: str) -> list[Finding] | None:
    mood = emotion_of(m["emo"])
    return [fact("state.mood", mood)] if mood else None


@book.rule(
    IM
    + r"(?:busy\s+)?(?:working on|preparing for|studying for|focused on|focusing on|busy with|cramming for|"
    r"getting ready for)\s+" + OBJ
)
def _focus(m: re.Match[str], clause: str) -> list[Finding] | None:
    focus = _phrase_value(m["obj"])
    return [fact("state.focus", focus)] if focus else None


_SICK = re.compile(r"sick|ill|cold|flu|fever|covid|headache|migraine|sore throat", re.IGNORECASE)


@book.rule(
    IM + r"(?P<sit>at the airport|at the hospital|in the hospital|on vacation|on holiday|on a business trip|"
    r"on a trip|traveling|travelling|on the road|sick|ill|down with (?:a|the) (?:cold|flu)|in a meeting|"
    r"on my way|working from home|at work|home sick|jet-?lagged)\b",
    I_ANY
    + r"(?:have|got|caught)\s+(?:a|the)\s+(?P<sit>cold|flu|fever|headache|migraine|sore throat|covid)\b",
)
def _situation(m: re.Match[str], clause: str) -> list[Finding] | None:
    if _TIME.search(clause) and not re.search(r"\b(?:today|tonight|this week)\b", clause, re.I):
        return None  # "I'm traveling next week" is a plan
    situation = "sick" if _SICK.fullmatch(m["sit"].split()[-1]) else normalize_value(m["sit"])
    return [fact("state.situation", situation)]


#: a part of the user's body that is unwell now: "my throat is sore", "my back is killing me"
_BODY = (
    r"(?:throat|head|back|stomach|tummy|chest|ears?|eyes?|knees?|neck|shoulders?|tooth|teeth|feet|legs?|"
    r"arms?|sinuses)"
)
#: a time other than now: a pain then is an event, not today's state
_THEN = re.compile(r"\b(?:yesterday|last\s+\w+|ago|used to|when i was)\b", re.IGNORECASE)


@book.rule(
    r"\bmy\s+"
    + _BODY
    + r"\s+(?:is|are|feels?|has been|have been)\s+"
    + INTENSITY
    + r"(?:sore|aching|achy|killing me|hurting|throbbing|pounding|swollen|blocked|stuffed up|upset|"
    r"on fire)\b",
    r"\bmy\s+" + _BODY + r"\s+(?:hurts|aches|is hurting|are hurting)\b",
    r"\bi(?:'m|\s+am|\s+might be|\s+may be)\s+(?:\w+\s+)?(?:coming|going)\s+down\s+with\s+"
    r"(?:something|a|the)\b",
)
def _unwell(m: re.Match[str], clause: str) -> list[Finding] | None:
    if _TIME.search(clause) or _THEN.search(clause):
        return None  # a pain of another time ("my back aches since last year") is no state of today
    return [fact("state.situation", "sick")]


# --- tastes ---------------------------------------------------------------------------------------

#: a taste is the clause's own statement: "I" opens it (after a few fillers), so the relative clause in
#: "a job I enjoy every day" is not a liking of "every day"
OPENING = (
    r"^(?:(?:honestly|really|also|and|but|so|now|oh|well|yeah|yes|personally|generally|usually|still|just|"
    r"totally|definitely|seriously|though|lately|recently|these days|nowadays|on (?:the )?weekends?|"
    r"at (?:the )?weekends?|every weekend|in my (?:free|spare) time|after work|on sundays|on saturdays|"
    r"in the (?:evenings?|mornings?))[\s,]+)*"
)

DISLIKE_I = (
    r"hate|dislike|detest|loathe|despise|can't stand|cannot stand|can not stand|don't like|do not like|"
    r"don't really like|don't enjoy|do not enjoy|don't care for|didn't like|never liked|avoid"
)
_REVOLTING = (
    r"(?:just\s+|so\s+|really\s+|absolutely\s+|pretty\s+)?(?:disgusting|gross|revolting|unbearable|awful|"
    r"horrible|nasty|vile)"
)
DISLIKE_IM = (
    r"not a (?:big |huge )?fan of|not (?:really )?into|sick of|tired of|fed up with|not interested in|"
    r"not crazy about"
)


@book.rule(
    OPENING + r"(?:" + I_NOW + r"(?:" + DISLIKE_I + r")|" + IM + r"(?:" + DISLIKE_IM + r"))\s+" + OBJ,
    r"^(?:please\s+)?(?:stop|quit)\s+(?:recommending|suggesting|showing|sending|giving)\s+(?:me\s+)?" + OBJ,
    r"\b(?:don't|do not|never)\s+(?:recommend|suggest|show me|send me|"
    r"give me)\s+(?:me\s+)?(?:any\s+)?(?:more\s+)?" + OBJ,
    r"^no\s+more\s+" + OBJ,
    I_NOW + r"(?:don't|do not|never)\s+(?:eat|drink)\s+" + OBJ,
    # the taste first, judged by the user: "Olives are disgusting to me", "cilantro tastes like soap" (not
    # "the traffic is awful": a judgement without "to me" or a taste or smell is no taste)
    OPENING + r"(?P<obj>[\w' -]{2,30}?)\s+(?:(?:is|are)\s+" + _REVOLTING + r"\s+to\s+me|"
    r"(?:taste|tastes|smell|smells)\s+(?:" + _REVOLTING + r"|like soap)(?:\s+to\s+me)?)\s*[.!]?$",
)
def _dislike(m: re.Match[str], clause: str) -> list[Finding] | None:
    return listed(m["obj"], PHRASING, lambda v: liking(v, NEGATIVE))


@book.rule(
    r"\bmy\s+(?:absolute\s+|all-time\s+)?favou?rite\s+(?P<cat>[\w -]{2,30}?)\s+(?:is|are|was|has to be)\s+"
    + OBJ,
    r"^(?P<obj>[\w' -]{2,40}?)\s+(?:is|are)\s+my\s+(?:absolute\s+|all-time\s+)?favou?rite\b(?P<cat>)",
    r"^(?P<obj>[\w' -]{2,40}?)\s+(?:is|are)\s+(?:totally\s+|really\s+|definitely\s+)?my\s+(?:thing|passion|"
    r"jam|go-to)\b",
    r"^(?:my\s+)?(?:weekends|saturdays|sundays|evenings|summers|holidays|free time|days off)\s+(?:are|is)\s+"
    r"(?:all\s+|always\s+|usually\s+)?(?:for|about)\s+" + OBJ,
)
def _favourite(m: re.Match[str], clause: str) -> list[Finding] | None:
    category = m.groupdict().get("cat")
    topic = preference_slot(normalize_value(category)) if category else None
    slot = topic if topic and topic != "preference.general" else None
    return listed(m["obj"], PHRASING, lambda v: liking(v, slot=slot))


HABITUALLY = (
    r"(?:(?:most|every|each|on|at|on the|at the)\s+(?:\w+\s+)?(?:weekends?|saturdays?|sundays?|mondays?|"
    r"tuesdays?|wednesdays?|thursdays?|fridays?|mornings?|evenings?|nights?|days?|weeks?|summers?|winters?)|"
    r"a lot|often|regularly|whenever i can|all the time|every chance i get)\b"
)


@book.rule(
    I_NOW + r"(?:usually\s+|often\s+|regularly\s+|sometimes\s+)?go\s+(?P<obj>[a-z]+ing)\s+" + HABITUALLY,
    I_NOW + r"(?:usually|often|regularly)\s+go\s+(?P<obj>[a-z]+ing)\b",
    I_NOW + r"(?:usually\s+|often\s+|regularly\s+)?(?P<verb>play|drink|eat|practi[cs]e|watch|read|listen to|"
    r"cook|bake)\s+(?P<obj>(?!(?:and|or|with|to)\b)[\w -]{2,30}?)\s+" + HABITUALLY,
)
def _habit(m: re.Match[str], clause: str) -> list[Finding] | None:
    """ "I go hiking most Saturdays", "I watch sci-fi films every weekend": a pastime the user keeps up is
    one they like (what they cook or bake is the cooking: "cooking italian dish")."""
    verb = (m.groupdict().get("verb") or "").lower()
    if verb in ("cook", "bake"):
        return [liking(normalize_value(f"{verb[:-1] if verb.endswith('e') else verb}ing {m['obj']}"))]
    return listed(m["obj"], PHRASING, lambda v: liking(v))


LIKE_I = r"like|love|enjoy|adore|prefer|dig|fancy|am into|really like|absolutely love"
LIKE_IM = (
    r"into|a (?:big |huge )?fan of|fond of|keen on|passionate about|obsessed with|crazy about|addicted to|"
    r"hooked on|interested in|loving|enjoying"
)
LIKE_SINCE = (
    r"\bi(?:'ve|\s+have)\s+(?:always\s+|long\s+|really\s+)*(?:loved|liked|enjoyed|adored|been\s+(?:really\s+)?"
    r"(?:passionate about|into|a (?:big |huge )?fan of|fond of|obsessed with|interested in))"
)


@book.rule(
    OPENING + r"(?:" + I_NOW + r"(?P<verb>" + LIKE_I + r")|" + IM + r"(?:" + LIKE_IM + r"))\s+" + OBJ,
    OPENING + LIKE_SINCE + r"\s+" + OBJ,
)
def _like(m: re.Match[str], clause: str) -> list[Finding] | None:
    obj = m["obj"]
    if (m.groupdict().get("verb") or "").lower() == "prefer":
        obj = re.split(r"\s+to\s+", obj, maxsplit=1)[0]
    return listed(obj, PHRASING, lambda v: liking(v))


# --- plans, goals, lessons ------------------------------------------------------------------------


@book.rule(
    I_ANY + r"(?:have|got)\s+(?:an?|my|the|two|three|some|another)\s+(?P<obj>.+?)\s+" + TIME,
    r"\bmy\s+(?P<obj>[\w -]{2,30}?)\s+is\s+" + TIME,
    IM + r"(?:going to|gonna|planning to|planning on|about to)\s+" + OBJ,
    IM
    + r"(?P<timed>flying to|heading to|leaving for|traveling to|travelling to|driving to|visiting|moving to|"
    r"taking|starting|meeting)\s+" + OBJ,
    I_NOW + r"(?:plan to|intend to)\s+" + OBJ,
    r"\bi(?P<timed>'ll|\s+will|\s+need to|\s+have to|\s+must)\s+" + ADV + OBJ,
    IM + r"(?P<timed2>supposed to|scheduled to|due to)\s+" + OBJ,
    IM + r"(?P<trip>traveling|travelling|flying out|going away|going on (?:a\s+)?(?:trip|vacation|holiday|"
    r"business trip))\b(?P<obj>)",
)
def _plan(m: re.Match[str], clause: str) -> list[Finding] | None:
    groups = m.groupdict()
    if (groups.get("timed") or groups.get("timed2") or groups.get("trip")) and not _TIME.search(clause):
        return None
    plan = _phrase_value(m["obj"]) or (normalize_value(groups["trip"]) if groups.get("trip") else None)
    return [fact("task.plan", plan, confidence=0.8)] if plan else None


_NOT_GOALS = re.compile(
    r"^(?:know|ask|see if|check|understand|say|tell|talk|thank|share|mention|make sure|let you|hear|"
    r"be honest|clarify|add|point out|go back|try it|do that|do this)\b",
    re.IGNORECASE,
)


@book.rule(
    I_ANY + r"(?:want to|wanna|would like to|like to|love to|would love to|hope to|aim to|dream of)\s+" + OBJ,
    IM + r"(?:trying|hoping|aiming|determined)\s+to\s+" + OBJ,
    r"\bmy\s+(?:goal|dream|plan|resolution|aim)\s+(?:is|for this year is)\s+(?:to\s+)?" + OBJ,
)
def _goal(m: re.Match[str], clause: str) -> list[Finding] | None:
    if _NOT_GOALS.match(m["obj"]):
        return None
    goal = _phrase_value(m["obj"])
    return [fact("task.goal", goal, confidence=0.8)] if goal else None


#: a lesson's subject is a thing or a method, not a person ("Your hard work paid off" is praise)
THING = r"^(?!(?:i|i'm|you|your|we|it's|that's|he|she|they|his|her|their)\b)(?P<obj>[\w' -]{2,60}?)\s+"
_DEMONSTRATIVE = re.compile(r"^(?:that|this|the|my|our|your|those|these)\s+", re.IGNORECASE)


def _lesson_value(raw: str) -> str | None:
    """What worked or failed: "that approach" → "approach"; a bare "it"/"that" says too little."""
    return _phrase_value(_DEMONSTRATIVE.sub("", raw.strip()))


@book.rule(
    THING + r"(?:really\s+|actually\s+|totally\s+)?(?:worked|works)\s+(?:really\s+|very\s+|so\s+|pretty\s+)?"
    r"(?:well|great|wonders|perfectly|like a charm|for me)\b",
    THING + r"(?:really\s+)?(?:helped|helps)\s+(?:me\s+)?(?:a lot|a ton|so much|tremendously)\b",
    THING + r"(?:paid off|did the trick|was a success|was worth it)\b",
    r"\bwhat\s+(?:really\s+)?(?:worked|helped)\s+(?:was|is)\s+" + OBJ,
)
def _lesson_worked(m: re.Match[str], clause: str) -> list[Finding] | None:
    what = _lesson_value(m["obj"])
    return [fact("task.lesson", what, confidence=0.8)] if what else None


@book.rule(
    THING + r"(?:didn't|did not|doesn't|does not|never)\s+(?:really\s+)?(?:work|help)\b",
    THING + r"(?:failed|backfired|was a (?:mistake|disaster|waste of time|bad idea)|"
    r"made (?:it|things|everything) worse)\b",
)
def _lesson_failed(m: re.Match[str], clause: str) -> list[Finding] | None:
    what = _lesson_value(m["obj"])
    return [fact("task.lesson", what, polarity=NEGATIVE, confidence=0.8)] if what else None


@book.rule(
    r"\b(?:lesson learned|i learned (?:that|the hard way that)|"
    r"next time i(?P<avoid>'ll not| won't| shouldn't| will not| should not| must not)?"
    r"(?:'ll| will| should| need to| must)?)[:,]?\s+" + OBJ
)
def _lesson_noted(m: re.Match[str], clause: str) -> list[Finding] | None:
    what = _phrase_value(m["obj"])
    if not what:
        return None
    return [fact("task.lesson", what, polarity=NEGATIVE if m["avoid"] else Polarity.POSITIVE, confidence=0.8)]
