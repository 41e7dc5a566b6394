"""English rules for what the user *is*: allergies (and their contradictions), diet, health, name, age,
residence, hometown, work, education, family, pets, people they know, languages.

Rules run most specific first: "I don't mind peanuts" is read as contradicting a peanut allergy before any
taste rule could call it a liking. ``actors.language.en.tastes`` runs after this book.
"""

from __future__ import annotations

import re

from actors.language.en.syntax import PHRASING
from actors.language.lexicon import (
    canonical_place,
    family_role,
    is_allergen,
    normalize_value,
    occupation_of,
    singularize,
)
from actors.language.rules import (
    MENTION_IMPORTANCE,
    Finding,
    RuleBook,
    fact,
    is_real_object,
    liking,
    listed,
    object_phrase,
)
from actors.language.text import LATIN_UPPER
from schemas.enums import Polarity

NEGATIVE = Polarity.NEGATIVE
book = RuleBook(re.IGNORECASE)

ADV = (
    r"(?:(?:also|really|actually|probably|maybe|definitely|totally|absolutely|kind of|sort of|very|quite|"
    r"pretty|still|now|just|currently|so|super|severely|mildly|slightly|deathly|highly|extremely|always|"
    r"seriously|honestly|truly|genuinely|personally|originally|recently|finally|already|even|do)\s+)*"
)
#: "I", "I've", "I'd", "I'll", "I have": the subject of declarations in any tense
I_ANY = r"\bi(?:'ve|'d|'ll|\s+have|\s+had)?\s+" + ADV
#: plain present "I": tastes ("I'd like to…" is a request, not a liking)
I_NOW = r"\bi\s+" + ADV
IM = r"\b(?:i'm|i\s+am|im)\s+" + ADV
OBJ = r"(?P<obj>.+)"
NAME = rf"(?P<name>(?-i:[{LATIN_UPPER}])[\w'-]+)"
#: a capitalised word of any Latin script (Tomás, Élodie, O'Brien, Łukasz)
_CAP = rf"(?-i:[{LATIN_UPPER}])[\w'-]*\w"
#: a place named by its capitalised words (Rotterdam, Porto Alegre, São Paulo)
CAPITALISED_PLACE = rf"(?P<obj>{_CAP}(?:\s+{_CAP}){{0,2}})"
#: one capitalised word of letters only, a member's name (Max, Zoë, Łucja)
CAP_WORD = rf"(?-i:[{LATIN_UPPER}][^\W\d_]+)"
#: a full name: up to four capitalised words, particles between them (Anna Maria Lopez, Ludwig van Beethoven)
FULL_NAME = rf"(?P<name>{_CAP}(?:\s+(?:(?-i:van|von|de|da|del|der|di|le|la|bin|al)\s+)?{_CAP}){{0,3}})"
DAYS = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday"
TIME = (
    r"\b(?:tomorrow|tonight|this\s+(?:morning|afternoon|evening|weekend|week|month|year|summer|fall|autumn|"
    r"winter|spring|"
    + DAYS
    + r")|next\s+(?:week|month|year|weekend|time|"
    + DAYS
    + r")|on\s+(?:"
    + DAYS
    + r")|"
    r"(?:in|within)\s+(?:a|an|\d+|two|three|a few|few|a couple of)\s+(?:days?|weeks?|months?|hours?)|"
    r"later today|soon|by\s+(?:" + DAYS + r"|tomorrow|tonight|the end of)|coming up|upcoming)\b"
)
_TIME = re.compile(TIME, re.IGNORECASE)
_NOT_NAMES = frozenset(
    """back later when if crazy old tomorrow now anytime sometime maybe please at on in after before whenever
    soon again a an the so just really not very sure fine good ok okay here there tired happy sorry done home
    ready back busy new today tonight yesterday""".split()
)
#: capitalised words "I'm X" says of a people, a faith or a language, not a name
_NOT_GIVEN_NAMES = frozenset(
    """american british english chinese japanese korean french german spanish italian indian canadian
    australian mexican brazilian russian irish scottish welsh dutch swedish norwegian danish finnish polish
    vietnamese thai filipino indonesian malaysian taiwanese african european asian latino latina catholic
    jewish muslim buddhist hindu protestant mormon atheist vegan vegetarian gemini leo virgo libra scorpio
    aries taurus cancer capricorn aquarius pisces sagittarius""".split()
)
_NOT_PLACES = re.compile(
    r"^(?:an?|the same|the city|the country|the area|fear|peace|hope|denial|it|that|this|there|here|one|"
    r"my)\b",
    re.IGNORECASE,
)
_NOT_EMPLOYERS = frozenset(
    {"home", "myself", "a living", "night", "nights", "weekend", "the moment", "free", "it"}
)


def _place(raw: str) -> str | None:
    phrase = object_phrase(raw, PHRASING)
    if not is_real_object(phrase) or _NOT_PLACES.match(phrase) or len(phrase.split()) > 4:
        return None
    return canonical_place(phrase) or None


# --- contradictions of an allergy, then allergies, diet and health --------------------------------


@book.rule(IM + r"(?:not|no longer)\s+(?:really\s+)?allergic\s+to\s+" + OBJ)
def _not_allergic(m: re.Match[str], clause: str) -> list[Finding] | None:
    return listed(m["obj"], PHRASING, lambda v: fact("basic.allergy", v, polarity=NEGATIVE))


@book.rule(
    r"^(?:(?:actually|now|but|and|so|well|oh)[\s,]+)*(?P<obj>[\w' -]{2,40}?)\s+(?:is|are)\s+(?:totally\s+|"
    r"perfectly\s+|completely\s+)?(?:fine|ok|okay|safe|no problem)\s+for\s+me\b",
    r"^(?:(?:actually|now|but|and|so|well|oh)[\s,]+)*(?P<obj>[\w' -]{2,40}?)\s+(?:doesn't|does not|don't|"
    r"do not)\s+(?:bother|affect)\s+me\s+(?:any\s?more|now)\b",
    r"^(?:(?:actually|now|but|and|so|well|oh)[\s,]+)*(?P<obj>[\w' -]{2,40}?)\s+no\s+longer\s+(?:bothers|"
    r"bother|affects|affect)\s+me\b",
)
def _allergen_fine(m: re.Match[str], clause: str) -> list[Finding] | None:
    """ "Shellfish is fine for me now": denies an allergy to a known allergen (and says nothing else)."""
    return listed(
        m["obj"], PHRASING, lambda v: fact("basic.allergy", v, polarity=NEGATIVE), accept=is_allergen
    )


@book.rule(
    I_NOW + r"(?:don't|do not)\s+mind\s+" + OBJ,
    I_NOW + r"(?:can|could)\s+" + ADV + r"(?:eat|have|drink|tolerate|handle)\s+" + OBJ,
    IM + r"(?:fine|okay|ok)\s+with\s+" + OBJ,
)
def _tolerates(m: re.Match[str], clause: str) -> list[Finding] | None:
    found = listed(
        m["obj"], PHRASING, lambda v: fact("basic.allergy", v, polarity=NEGATIVE), accept=is_allergen
    )
    if found or "mind" not in m.group(0).lower():
        return found
    return listed(m["obj"], PHRASING, lambda v: liking(v, confidence=0.5, inferred=True))


@book.rule(
    r"\b(?:outgrew|outgrown|grew out of|got over|gotten over|(?:i'm|i am|im)\s+over|cured of|got rid of)\s+"
    r"(?:my|the|an?)\s+(?P<obj>[\w -]{2,40}?)\s+allerg(?:y|ies)\b",
    r"\bmy\s+(?P<obj>[\w -]{2,40}?)\s+allerg(?:y|ies)\s+(?:is|are|has|have)\s+(?:gone|over|cured|"
    r"(?:gone|went)\s+away)\b",
)
def _allergy_over(m: re.Match[str], clause: str) -> list[Finding] | None:
    """ "I outgrew my peanut allergy": the allergy has ended."""
    return listed(m["obj"], PHRASING, lambda v: fact("basic.allergy", v, polarity=NEGATIVE, change=True))


@book.rule(
    IM + r"allergic\s+to\s+" + OBJ,
    I_ANY
    + r"(?:have|got|suffer from)\s+(?:an?\s+|severe\s+|mild\s+|bad\s+|serious\s+)*allerg(?:y|ies)\s+to\s+"
    + OBJ,
    I_ANY + r"(?:have|got)\s+(?:an?\s+)?(?:severe\s+|mild\s+|bad\s+|serious\s+)?(?P<obj>[\w -]{2,40}?)\s+"
    r"allerg(?:y|ies)\b",
    r"\bmy\s+(?P<obj>[\w -]{2,40}?)\s+allerg(?:y|ies)\b",
)
def _allergy(m: re.Match[str], clause: str) -> list[Finding] | None:
    return listed(m["obj"], PHRASING, lambda v: fact("basic.allergy", v))


_DIETS = {"meat": "vegetarian", "animal products": "vegan", "celiac": "gluten-free", "coeliac": "gluten-free"}


@book.rule(
    I_ANY + r"(?:started|start|begun|began)\s+eating\s+(?P<food>meat|animal products)\b",
    I_ANY + r"eat\s+(?P<food>meat|animal products)\s+(?:again|now|these days)\b",
    IM + r"eating\s+(?P<food>meat|animal products)\s+(?:again|now|these days)\b",
)
def _diet_ended(m: re.Match[str], clause: str) -> list[Finding]:
    """ "I started eating meat again": a vegetarian (or vegan) diet has ended."""
    diet = "vegan" if m["food"].lower() == "animal products" else "vegetarian"
    return [fact("basic.diet_restriction", diet, polarity=NEGATIVE, change=True)]


@book.rule(
    IM + r"(?:an?\s+)?(?P<diet>vegetarian|vegan|pescatarian|lactose[- ]intolerant|gluten[- ]free|celiac|"
    r"coeliac)\b",
    IM + r"on\s+an?\s+(?P<diet>keto|vegan|vegetarian|low[- ]carb|gluten[- ]free|paleo|low[- ]sugar)\s+diet",
    I_ANY + r"(?:only\s+)?(?:eat|keep)\s+(?P<diet>halal|kosher)\b",
    I_ANY
    + r"(?:don't|do not|never|can't|cannot)\s+eat\s+(?P<diet>meat|animal products|pork|beef|red meat|lamb)\b",
)
def _diet(m: re.Match[str], clause: str) -> list[Finding]:
    diet = (
        m["diet"]
        .lower()
        .replace("-", " ")
        .replace("gluten free", "gluten-free")
        .replace("low carb", "low-carb")
    )
    if diet in _DIETS:
        diet = _DIETS[diet]
    elif diet in ("pork", "beef", "red meat", "lamb"):
        diet = f"no {diet}"
    return [fact("basic.diet_restriction", diet)]


_CONDITIONS = {
    "diabetic": "diabetes",
    "asthmatic": "asthma",
    "epileptic": "epilepsy",
    "hypertension": "high blood pressure",
}


@book.rule(
    I_ANY + r"(?:have|got|suffer from|was diagnosed with|been diagnosed with)\s+"
    r"(?:type\s+\d\s+)?(?P<cond>diabetes|asthma|high blood pressure|hypertension|adhd|depression|anxiety|"
    r"migraines?|celiac disease|eczema|arthritis|insomnia|heart disease|epilepsy|autism|ptsd|cancer)\b",
    IM + r"(?P<cond>diabetic|asthmatic|epileptic)\b",
)
def _health(m: re.Match[str], clause: str) -> list[Finding]:
    condition = m["cond"].lower()
    return [fact("basic.health", _CONDITIONS.get(condition, singularize(condition)))]


# --- who the user is ------------------------------------------------------------------------------


_GREETING = (
    r"^(?:(?:hi|hello|hey|hiya|yo|greetings|good (?:morning|afternoon|evening))"
    r"(?:\s+(?:there|all|everyone))?[,!. ]+)?"
)


@book.rule(
    r"\bmy\s+(?:full\s+|first\s+|real\s+)?name(?:'s|\s+is)\s+" + FULL_NAME,
    r"\b(?:call me|i go by|i'm called|i am called|(?:people|everyone|everybody|friends|my friends|they|most "
    r"people)\s+(?:call|calls)\s+me|you can call me|just call me|the name's|name's)\s+" + FULL_NAME,
    _GREETING
    + r"(?:i'm|i am|im|this is|it's|it is)\s+"
    + FULL_NAME
    + r"\s*(?:[,.!]|$|\s+(?:here|speaking)\b)",
    _GREETING + FULL_NAME + r"\s+(?:here\b|speaking\s*(?:[,.!]|$))",  # "Public speaking scares me" is none
    r"\bmy\s+name(?:'s|\s+is)\s+(?P<name>[a-z][\w'-]+)$",
)
def _name(m: re.Match[str], clause: str) -> list[Finding] | None:
    words = m["name"].strip("'.-").split()
    while words and words[-1].casefold() in _NOT_NAMES:
        words.pop()  # "I'm Anna Today" is no surname
    name = " ".join(words)
    if not words or words[0].casefold() in _NOT_NAMES | _NOT_GIVEN_NAMES or len(name) < 2:
        return None
    return [fact("basic.name", name.casefold())]


@book.rule(
    IM + r"(?P<age>\d{1,3})\s*(?:years?\s+old|yrs?\s+old|y/?o)\b",
    IM + r"(?P<age>\d{1,3})(?=\s*(?:$|[,.!]|\s+(?:and|but|now|this year)\b))",
    I_ANY + r"turned\s+(?P<age>\d{1,3})\b",
)
def _age(m: re.Match[str], clause: str) -> list[Finding] | None:
    age = int(m["age"])
    return [fact("basic.age", str(age))] if 0 < age <= 120 else None


@book.rule(r"\bmy\s+birthday\s+is\s+(?:on\s+)?(?P<obj>.+)")
def _birthday(m: re.Match[str], clause: str) -> list[Finding] | None:
    day = object_phrase(m["obj"], PHRASING)
    if not day or _TIME.search(day) or re.search(r"\b(?:today|coming|soon)\b", day, re.I):
        return None
    return [fact("basic.birthday", normalize_value(day))]


@book.rule(
    I_ANY + r"(?:live|lived|reside|resided|been living|love living|like living|enjoy living)\s+"
    r"(?:with\s+(?:my\s+)?[\w' -]{2,30}?\s+)?in\s+" + OBJ,
    IM + r"(?:living|based|located|staying|settled)\s+in\s+" + OBJ,
    r"\bmy\s+(?:home|house|apartment|flat|place)\s+is\s+in\s+" + OBJ,
    # home named as a place: "these days home is Rotterdam", "home for me is Leeds now"
    r"^(?:(?:these days|nowadays|now|right now|currently|for now),?\s+)?home\s+(?:for\s+me\s+)?"
    r"(?:is|has been)\s+(?:now\s+)?" + CAPITALISED_PLACE,
    # the place first: "Leeds is where I live now", "Leeds is home", "Leeds is my home these days"
    r"^"
    + CAPITALISED_PLACE
    + r"\s+(?:is|has been)\s+(?:where\s+(?:i\s+live|i'm\s+based|i\s+am\s+based|i\s+call\s+home)\b|"
    r"my\s+home(?:\s+(?:now|these days|nowadays))?\s*[.!]?$)",
)
def _residence(m: re.Match[str], clause: str) -> list[Finding] | None:
    place = _place(m["obj"])
    return [fact("basic.residence", place)] if place else None


@book.rule(I_ANY + r"(?:moved|relocated)\s+(?:back\s+|over\s+|here\s+)?to\s+" + OBJ)
def _moved(m: re.Match[str], clause: str) -> list[Finding] | None:
    place = _place(m["obj"])
    if not place or _TIME.search(clause):  # "I'm moving to X next month" is a plan, not yet a residence
        return None
    return [fact("basic.residence", place, change=True)]


@book.rule(
    IM + r"(?:originally\s+)?from\s+" + OBJ,
    I_ANY + r"(?:grew up|was born(?: and raised)?|was raised)\s+in\s+" + OBJ,
    r"\bmy\s+hometown\s+is\s+" + OBJ,
    I_ANY + r"moved\s+(?:here\s+|over\s+)?from\s+" + OBJ,
)
def _hometown(m: re.Match[str], clause: str) -> list[Finding] | None:
    place = _place(m["obj"])
    if not place:
        return None
    return [fact("basic.hometown", place, confidence=0.75 if "moved" in m.group(0).lower() else 0.9)]


def _employer(raw: str) -> str | None:
    phrase = object_phrase(raw, PHRASING)
    if not is_real_object(phrase) or len(phrase.split()) > 5:
        return None
    value = normalize_value(phrase, a_name=True)
    return value if value and value not in _NOT_EMPLOYERS else None


def _occupation_and_employer(m: re.Match[str], occupation: str) -> list[Finding]:
    found = [fact("basic.occupation", occupation)]
    employer = _employer(m["org"]) if m["org"] else None
    if employer:
        found[0].swap = (m.group("at") + object_phrase(m["org"], PHRASING), "")
        found.append(fact("basic.employer", employer))
    return found


@book.rule(
    r"(?:" + I_ANY + r"(?:work|worked|been working)|" + IM + r"working)\s+"
    # what the work is like may come first: "I work night shifts as a nurse"
    r"(?:(?:night|day|early|late|long|double|weekend|evening|morning)\s+(?:shifts?|hours)\s+|nights\s+|"
    r"part[- ]time\s+|full[- ]time\s+|remotely\s+|from home\s+|(?:in|at)\s+(?:an?\s+|the\s+)?[\w-]+\s+)?as\s+"
    r"(?:an?\s+)?(?P<occ>[\w -]+?)(?:(?P<at>\s+(?:at|for)\s+)(?P<org>.+))?$"
)
def _works_as(m: re.Match[str], clause: str) -> list[Finding] | None:
    occupation = object_phrase(m["occ"], PHRASING)
    if not is_real_object(occupation):
        return None
    return _occupation_and_employer(m, normalize_value(occupation))


@book.rule(
    # a remark after a comma leaves the occupation whole: "I'm an electrician, mostly residential jobs"
    IM + r"an?\s+(?P<occ>[\w -]+?)(?:(?P<at>\s+(?:at|for|with)\s+)(?P<org>[^,;]+?))?(?:\s*[,;]\s.*)?$",
    I_ANY + r"been\s+an?\s+(?P<occ>[\w -]+?)\s+(?:for|since)\s+[\w -]+$(?P<at>)(?P<org>)",
    r"\bmy\s+(?:job|occupation|profession|career)\s+is\s+(?:an?\s+)?(?P<occ>[\w -]+?)(?P<at>)(?P<org>)$",
)
def _is_a(m: re.Match[str], clause: str) -> list[Finding] | None:
    occupation = occupation_of(object_phrase(m["occ"], PHRASING))
    return _occupation_and_employer(m, occupation) if occupation else None


_SCHOOL_SUBJECTS = (
    r"math|maths|mathematics|english|science|physics|chemistry|biology|history|geography|art|music|french|"
    r"spanish|german|chinese|literature|economics|computer science|kindergarten|(?:high|middle|primary|"
    r"elementary|grade|secondary)\s+school|college|university"
)


@book.rule(
    I_NOW + r"teach\s+(?:[\w-]+\s+){0,3}?(?:at|in)\s+(?:an?\s+|the\s+|my\s+)?(?:[\w-]+\s+){0,2}?"
    r"(?:school|college|university|academy|kindergarten)\b",
    I_NOW + r"teach\s+(?:" + _SCHOOL_SUBJECTS + r")\b",
)
def _teaches(m: re.Match[str], clause: str) -> list[Finding]:
    """ "I teach maths at a high school": the user is a teacher (what and where stay in the content)."""
    return [fact("basic.occupation", "teacher")]


@book.rule(r"^as\s+an?\s+(?P<occ>[\w -]{2,30}?)\s*(?:,?\s+(?=(?:i|i'm|i've|my|we)\b)|$)(?P<at>)(?P<org>)")
def _as_a(m: re.Match[str], clause: str) -> list[Finding] | None:
    """ "As a nurse, I work weekends": an occupation the user speaks as (known occupations only)."""
    occupation = occupation_of(object_phrase(m["occ"], PHRASING))
    return _occupation_and_employer(m, occupation) if occupation else None


@book.rule(
    I_ANY + r"(?:quit(?:\s+being|\s+my\s+job\s+as)?|left\s+my\s+job\s+as|stopped being|gave up being|"
    r"retired as|retired from being)\s+an?\s+(?P<occ>[\w -]{2,30}?)(?:\s+(?:last|this|a|two|three|\d+)\b.*)?$"
)
def _occupation_ended(m: re.Match[str], clause: str) -> list[Finding] | None:
    """ "I quit my job as a nurse", "I stopped being a teacher last year": the occupation has ended."""
    occupation = occupation_of(object_phrase(m["occ"], PHRASING))
    return [fact("basic.occupation", occupation, polarity=NEGATIVE, change=True)] if occupation else None


@book.rule(IM + r"(?P<occ>retired|unemployed|self-employed|a stay-at-home (?:mom|dad|parent)|between jobs)\b")
def _work_status(m: re.Match[str], clause: str) -> list[Finding]:
    return [fact("basic.occupation", normalize_value(m["occ"]))]


@book.rule(
    r"(?:" + I_ANY + r"(?:work|worked|been working)|" + IM + r"working)\s+(?:at|for)\s+(?P<org>.+)",
    I_ANY + r"(?P<change>joined|started (?:working )?at|got a job at|got hired (?:at|by))\s+"
    r"(?P<org2>.+)",
)
def _works_at(m: re.Match[str], clause: str) -> list[Finding] | None:
    groups = m.groupdict()
    employer = _employer(groups.get("org") or groups["org2"])
    return [fact("basic.employer", employer, change=bool(groups.get("change")))] if employer else None


@book.rule(
    I_ANY + r"(?:study|studied|majored in|major in|have a degree in|got a degree in|got my degree in|"
    r"graduated from|"
    r"went to college at|went to university at)\s+" + OBJ,
    IM + r"(?:studying|majoring in)\s+" + OBJ,
    IM + r"(?:a\s+)?(?:student|freshman|sophomore|grad student|phd student|undergrad)\s+at\s+" + OBJ,
)
def _education(m: re.Match[str], clause: str) -> list[Finding] | None:
    subject = object_phrase(m["obj"], PHRASING)
    if not is_real_object(subject) or len(subject.split()) > 5:
        return None
    return [fact("basic.education", normalize_value(subject))]


# --- family, pets, people -------------------------------------------------------------------------

ROLE = (
    r"(?P<role>wife|husband|spouse|partner|boyfriend|girlfriend|fianc[ée]e?|daughters?|sons?|kids?|children|"
    r"child|babies|baby|mom|mum|mother|dad|father|parents|brothers?|sisters?|siblings?|grandma|grandmother|"
    r"grandpa|grandfather|grandchildren|grandkids?|twins)"
)
_ROLE_ALIASES = {
    "babies": "child",
    "baby": "child",
    "twins": "child",
    "siblings": "sibling",
    "grandkids": "grandchild",
    "grandkid": "grandchild",
    "grandchildren": "grandchild",
}


def _role(word: str) -> str:
    word = word.lower()
    return _ROLE_ALIASES.get(word) or family_role(singularize(word)) or singularize(word)


def _member(role: str, name: str | None) -> str:
    return f"{role}:{name.casefold()}" if name and name.casefold() not in _NOT_NAMES else role


@book.rule(
    I_ANY + r"(?:have|got)\s+(?:an?|one|two|three|four|five|six|\d+)\s+(?:(?:little|young|older|younger|baby|"
    r"teenage|grown|grown-up|big|twin|wonderful|amazing|beautiful|lovely)\s+)*" + ROLE + r"\b"
    r"(?:\s*,?\s*(?:named|called)\s+" + NAME + r")?",
    r"\bmy\s+(?:\w+\s+)?" + ROLE + r"(?:'s\s+name\s+is|\s+is\s+(?:named|called))\s+" + NAME,
    r"\bmy\s+" + ROLE + rf",?\s+(?P<name>{CAP_WORD})\b",
    rf"^(?P<name>{CAP_WORD})\s+is\s+my\s+(?:\w+\s+)?" + ROLE + r"\b",
)
def _family(m: re.Match[str], clause: str) -> list[Finding]:
    return [fact("basic.family", _member(_role(m["role"]), m["name"]))]


@book.rule(
    IM + r"(?:happily\s+)?married(?:\s+to\s+" + NAME + r")?",
    IM + r"(?:a\s+)?(?:single\s+)?(?P<parent>mom|mother|dad|father|parent)\s+(?:of|to)\s+\w+",
)
def _married_or_parent(m: re.Match[str], clause: str) -> list[Finding]:
    if "parent" in m.groupdict() and m["parent"]:
        return [fact("basic.family", "child")]
    return [fact("basic.family", _member("spouse", m["name"]))]


@book.rule(
    r"^my\s+(?P<role>wife|husband|daughter|son|kids?|children|boyfriend|girlfriend|fianc[ée]e?|partner)\b"
)
def _family_mention(m: re.Match[str], clause: str) -> list[Finding]:
    """ "My daughter loves dinosaurs": the user has a daughter (a weaker signal than a declaration)."""
    role = _role(m["role"])
    return [fact("basic.family", role, confidence=0.7, inferred=True, importance=MENTION_IMPORTANCE)]


#: a breed names its animal: "a golden retriever" is a dog
_DOG_BREEDS = (
    "golden retriever", "labrador retriever", "labrador", "poodle", "beagle", "husky", "corgi",
    "french bulldog", "bulldog", "german shepherd", "dachshund", "chihuahua", "pug", "terrier", "spaniel",
    "border collie", "collie", "shiba inu", "greyhound", "rottweiler", "doberman", "schnauzer", "pomeranian",
)  # fmt: skip
_CAT_BREEDS = ("tabby", "siamese", "persian", "maine coon", "ragdoll", "sphynx", "british shorthair")
BREEDS = {**dict.fromkeys(_DOG_BREEDS, "dog"), **dict.fromkeys(_CAT_BREEDS, "cat")}
PET = (
    r"(?P<pet>cats?|dogs?|pupp(?:y|ies)|kittens?|kitty|rabbits?|bunn(?:y|ies)|hamsters?|parrots?|goldfish|"
    r"turtles?|tortoises?|birds?|horses?|guinea pigs?|snakes?|lizards?|"
    + "|".join(sorted(BREEDS, key=len, reverse=True))
    + r")"
)


@book.rule(
    I_ANY + r"(?:have|got|own|adopted|rescued)\s+(?:an?|one|two|three|four|\d+)\s+"
    r"(?:(?:new|little|cute|rescue|pet|black|white|small|big|old|young|sweet|fluffy)\s+)*" + PET + r"\b"
    r"(?:\s*,?\s*(?:named|called)\s+(?P<name>\w+))?",
    r"\bmy\s+(?:\w+\s+)?" + PET + r"(?:'s\s+name\s+is|\s+is\s+(?:named|called))\s+(?P<name>\w+)",
    r"\bmy\s+" + PET + r"\s+is\s+an?\s+(?:[\w-]+\s+){0,3}?(?:named|called)\s+(?P<name>\w+)",
    r"\bmy\s+" + PET + rf",?\s+(?P<name>{CAP_WORD})\b",
    rf"^(?P<name>{CAP_WORD}),?\s+my\s+(?:\w+\s+)?" + PET + r"\b",
)
def _pet(m: re.Match[str], clause: str) -> list[Finding]:
    animal = BREEDS.get(m["pet"].lower()) or normalize_value(m["pet"])
    return [fact("basic.pet", _member(animal, m["name"]))]


SOCIAL = (
    r"(?P<role>colleague|coworker|co-worker|friend|best friend|buddy|boss|manager|supervisor|classmate|"
    r"roommate|flatmate|neighbou?r|mentor|teammate|teacher|client|therapist|doctor|landlord|"
    r"business partner)s?"
)


@book.rule(
    rf"^(?P<name>{CAP_WORD}(?:\s+{CAP_WORD})?)\s+(?:is|was)\s+my\s+(?:\w+\s+)?" + SOCIAL + r"\b",
    r"\bmy\s+(?:\w+\s+)?" + SOCIAL + rf",?\s+(?P<name>{CAP_WORD})\b",
)
def _social(m: re.Match[str], clause: str) -> list[Finding] | None:
    name = m["name"]
    if name.casefold() in _NOT_NAMES:
        return None
    return [fact("relation.social", name.casefold(), confidence=0.85)]


LANGUAGES = (
    r"(?:english|chinese|mandarin|cantonese|japanese|korean|french|german|spanish|italian|portuguese|russian|"
    r"arabic|hindi|swedish|dutch)"
)


@book.rule(
    I_ANY
    + r"(?:speak|can speak)\s+(?:fluent\s+)?(?P<obj>"
    + LANGUAGES
    + r"(?:(?:\s*,\s*|\s+and\s+)"
    + LANGUAGES
    + r")*)",
    IM + r"fluent\s+in\s+(?P<obj>" + LANGUAGES + r"(?:(?:\s*,\s*|\s+and\s+)" + LANGUAGES + r")*)",
    r"\bmy\s+(?:native|first|mother)\s+(?:language|tongue)\s+is\s+(?P<obj>" + LANGUAGES + r")",
)
def _language(m: re.Match[str], clause: str) -> list[Finding] | None:
    return listed(m["obj"], PHRASING, lambda v: fact("basic.language", v))
