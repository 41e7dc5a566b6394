"""English markers: the words that change what a sentence means (remember this, a correction, a hedge),
and the shapes of turns that say nothing about the user (small talk, requests, wishes). Regex sources;
``actors.language.markers`` joins those of the configured packs, case-insensitively."""

import re

from actors.language.pack import Markers

MARKERS = Markers(
    forced=re.compile(
        r"^(?:(?:hey|ok|okay|also|and|oh|so|please|pls|btw|by the way)[,\s]+)*(?:can you |could you |"
        r"would you |will you |you should |make sure (?:to |you )?)?(?:please\s+)?(?:remember|"
        r"don't forget|do not forget|keep in mind|make a note|note down|take note|"
        r"note(?=\s+that\b(?!\s+down\b))|for the record|save this|memorize|"
        r"store this)\b(?!\s+(?:when|how|what|where|who|why|the time|me|us|him|her|them)\b)(?:\s*(?:this|"
        r"that|it|the following|for me|for later))*\s*(?:[:：,，\-—]\s*|\s+that\s+|[.!。！]*$|\s+)",
        re.IGNORECASE,
    ),
    discourse=re.compile(
        r"^(?:(?:and|but|so|also|oh|well|btw|by the way|plus|anyway|yeah|um|uh|from now on|going forward|"
        r"in (?:the )?future|henceforth)\b[,\s]*)+",
        re.I,
    ),
    cessation=re.compile(
        r"\b(?:no longer|not|don't|do not|doesn't|does not|am not|any ?more|no more)\b", re.IGNORECASE
    ),
    correction_prefix=(
        r"^(?:(?:oh|oops|sorry|no|wait|well|hmm)[,!.\s]+)*(?:actually|in fact|correction|"
        r"to correct (?:that|myself)|let me correct (?:that|myself)|i meant|no wait|wait no|scratch that|"
        r"to be precise)\b[,:]?\s*"
    ),
    correction_anywhere=(
        r"\b(?:actually|in fact|i meant|no longer)\b|,\s*not\s+\w|"
        r"\bnot\s+[\w' -]{1,40}?\s*,?\s+but\s+"
    ),
    hedge=(
        r"\b(?:i think|i guess|i believe|i suppose|i feel like|maybe|perhaps|probably|possibly|might|"
        r"not sure|not certain|kind of|sort of)\b"
    ),
    hedge_prefix=(
        r"^(?:i think|i guess|i believe|i suppose|i feel like|maybe|perhaps|probably)"
        r"(?:\s+that)?[,\s]+"
    ),
    small_talk=(
        r"^(?:(?:hi|hello|hey|yo|thanks|thank you|thx|ty|ok|okay|k|sure|cool|great|nice|lol|lmao|haha+|"
        r"hehe|bye|goodbye|see you|see ya|good (?:morning|night|evening|afternoon)|yes|no|yep|nope|yeah|"
        r"yup|wow|awesome|got it|sounds good|np|no problem|you're welcome|how are you|what's up|sup|"
        r"alright|right|indeed|exactly|agreed|same|me too|you too|cheers|welcome|hmm+|uh huh|oh|ah|"
        r"aha)[\s,!.?~]*)+$"
    ),
    first_person=r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|we've|our|us)\b",
    request=(
        r"^(?:please|pls|help|tell|give|show|write|make|find|recommend|suggest|explain|translate|list|"
        r"let's|summari[sz]e|can|could|would|will|remind|check|look|search|book|order|send|create|draft|"
        r"compose|fix|imagine)\b"
    ),
    wish=(
        r"^(?:take care|enjoy|have (?:a|an|fun)|good luck|best of luck|keep (?:it up|going|up)|congrat\w*|"
        r"wishing|happy (?:birthday|holidays|new year)|hang in there|stay (?:safe|strong)|see you)\b"
    ),
    past=(
        r"\b(?:yesterday|last|ago|went|did|was|were|had|just|recently|this morning|earlier|finally|"
        r"\w{3,}ed)\b"
    ),
    #: words that only name the secret beside them ("my password is …"): nothing to remember
    secret_labels=frozenset(
        "password passcode passwd pwd pin key api token secret card credit debit bank account phone mobile "
        "cell number code ssn login new".split()
    ),
    emphasis=(
        r"\b(?:really|so|very|extremely|absolutely|totally|super|always|never|hate|love|adore|awful|terrible|"
        r"amazing|can't stand|sick of|fed up|seriously|deathly|severe(?:ly)?)\b"
    ),
    task=(
        r"\b(?:deadline|due|meeting|exam|interview|project|task|report|presentation|appointment|flight|"
        r"tomorrow|tonight|next (?:week|month|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
        r"by (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow))\b"
    ),
    past_question=(
        r"\b(?:when|what|where|who|how|why|which)\b[^?]*?\b(?:did|was|were|had|has|have)\b|"
        r"^(?:did|was|were|had|has|have)\b|"
        r"\b(?:ago|ever|used to|last (?:time|week|weekend|month|year|summer|winter|spring|fall)|first time|"
        r"before|earlier|previously|back then|in (?:19|20)\d\d)\b"
    ),
    slot_hints=(
        ("basic.residence", r"\b(?:live|living|lives|moved|move|based|reside)\b"),
        ("basic.allergy", r"allerg"),
        ("basic.name", r"\bname\b|\bcalled\b"),
        ("basic.occupation", r"\bwork(?:s|ing)? as\b|\bjob\b|occupation|profession"),
        ("basic.employer", r"\bwork(?:s|ing)? (?:at|for)\b|\bemployer\b|\bcompany\b"),
        ("basic.hometown", r"\bfrom\b|hometown"),
    ),
    slot_cues=(
        (
            (
                "eat",
                "eating",
                "food",
                "cook",
                "cooking",
                "dinner",
                "lunch",
                "breakfast",
                "meal",
                "restaurant",
                "recipe",
                "snack",
                "dish",
                "menu",
                "allergy",
                "allergic",
            ),
            ("basic.allergy", "basic.diet_restriction", "preference.food"),
        ),
        (("drink", "coffee", "tea", "beverage"), ("preference.drink", "basic.allergy")),
        (("live", "living", "city", "address", "home", "move", "moved", "where"), ("basic.residence",)),
        (("name", "called"), ("basic.name",)),
        (("job", "work", "occupation", "career", "office"), ("basic.occupation", "basic.employer")),
        (("pet", "dog", "cat"), ("basic.pet",)),
        (
            (
                "family",
                "wife",
                "husband",
                "kid",
                "kids",
                "child",
                "children",
                "daughter",
                "son",
                "mother",
                "father",
            ),
            ("basic.family",),
        ),
        (("recommend", "recommendation", "suggest"), ("preference.content", "style.taboo")),
        (("reply", "answer", "respond"), ("style.reply_length", "style.tone", "style.language")),
        (("health", "medicine", "doctor", "sick"), ("basic.health", "basic.allergy")),
    ),
)
