"""What a user sees of the two gates and the profile, over HTTP on the real stack, in Chinese and English,
each story over several sessions (issue 9): frozen conflicts and other alerts, facts in the user's own
words, restatements that confirm, declared facts that climb to core, style instructions, and what is not
a memory. docs/quality.md names the rule each test holds."""

import uuid

import pytest

from schemas.settings import Capacities, GatePolicy
from tests.stack.test_story_e2e import items, say

pytestmark = [pytest.mark.stack, pytest.mark.slow]

ZH, EN = "zh", "en"


def alerts(http, key, user):
    response = http.get(f"/v1/users/{user}/alerts", headers={"X-API-Key": key})
    assert response.status_code == 200, response.text
    return response.json()["alerts"]


def session(http, key, user, session_id):
    response = http.post(
        f"/v1/users/{user}/sessions", json={"session_id": session_id}, headers={"X-API-Key": key}
    )
    assert response.status_code == 200, response.text
    return response.json()


def profile(http, key, user):
    response = http.get(f"/v1/users/{user}/profile", headers={"X-API-Key": key})
    assert response.status_code == 200, response.text
    return {s["slot"]: s for s in response.json()["slots"]}


def active(http, key, user):
    return [i for i in items(http, key, user) if i["state"] in ("pending", "confirmed", "frozen", "unfrozen")]


# --- 1. a statement against a frozen fact: alert, pending conflict; repeated corrections alert too --------

CONFLICT = {
    ZH: (
        "我对海鲜过敏",
        "其实我现在可以吃海鲜了",
        "我住在成都",
        ("其实我搬到苏州了", "其实我搬到杭州了", "其实我搬到上海了"),
    ),
    EN: (
        "I'm allergic to shellfish",
        "actually shellfish is fine for me now",
        "I live in Chengdu",
        ("actually I moved to Suzhou", "actually I moved to Hangzhou", "actually I moved to Shanghai"),
    ),
}


@pytest.mark.parametrize("lang", [ZH, EN])
def test_frozen_conflict_alerts_and_stays_pending(http, tenant_key, lang):
    key, user = tenant_key, f"conflict-{lang}"
    allergy, retraction, home, moves = CONFLICT[lang]
    say(http, key, user, "s1", allergy, home)
    say(http, key, user, "s2", allergy, home)
    frozen = {i["slot"]: i for i in items(http, key, user, state="frozen")}
    assert set(frozen) == {"basic.allergy", "basic.residence"}
    fact = frozen["basic.allergy"]

    answer = say(http, key, user, "s3", retraction)
    assert [o["action"] for o in answer["outcomes"]] == ["conflict"]
    assert [a["kind"] for a in answer["alerts"]] == ["frozen_conflict"]
    challenger = next(i for i in active(http, key, user) if fact["memory_id"] in i["conflicts_with"])
    assert challenger["state"] == "pending" and challenger["polarity"] == "negative"
    still = next(i for i in items(http, key, user) if i["memory_id"] == fact["memory_id"])
    assert (still["state"], still["polarity"], still["content"]) == ("frozen", "positive", fact["content"])

    # the user insists in two more sessions: the frozen fact is now contested often enough to review
    say(http, key, user, "s4", retraction)
    say(http, key, user, "s5", retraction)
    review = [a for a in alerts(http, key, user) if a["kind"] == "contradiction_review"]
    assert [a["memory_id"] for a in review] == [fact["memory_id"]]
    assert next(i for i in items(http, key, user) if i["memory_id"] == fact["memory_id"])["state"] == "frozen"

    # a residence corrected again and again: each correction applies, and the third asks for a review
    for n, move in enumerate(moves):
        say(http, key, user, f"s{6 + n}", move)
    repeated = [a for a in alerts(http, key, user) if a["kind"] == "repeated_correction"]
    assert [a["memory_id"] for a in repeated] == [frozen["basic.residence"]["memory_id"]]
    assert {a["kind"] for a in alerts(http, key, user)} == {
        "frozen_conflict",
        "contradiction_review",
        "repeated_correction",
    }


DENIED = {
    ZH: (
        ("我是素食者", "我住在成都", "我对花生过敏"),
        # each session denies all three in other words than the last
        (
            ("我现在吃肉了", "我已经不住在成都了", "花生我现在可以吃了"),
            ("其实我不吃素了", "我不再住在成都了", "其实我对花生不过敏"),
            ("我不再吃素了", "其实我不住成都了", "我现在吃花生没问题了"),
        ),
    ),
    EN: (
        ("I'm vegetarian", "I live in Chengdu", "I'm allergic to peanuts"),
        (
            ("I eat meat now", "I don't live in Chengdu anymore", "I outgrew my peanut allergy"),
            (
                "actually I'm not vegetarian anymore",
                "I no longer live in Chengdu",
                "peanuts don't bother me anymore",
            ),
            (
                "I started eating meat again",
                "I'm not living in Chengdu anymore",
                "I can eat peanuts now, no problem",
            ),
        ),
    ),
}


@pytest.mark.parametrize("lang", [ZH, EN])
def test_denials_in_any_words_are_frozen_conflicts(http, tenant_key, lang):
    key, user = tenant_key, f"denied-{lang}"
    facts, denials = DENIED[lang]
    say(http, key, user, "s1", *facts)
    say(http, key, user, "s2", *facts)
    frozen = {i["slot"]: i for i in items(http, key, user, state="frozen")}
    assert set(frozen) == {"basic.diet_restriction", "basic.residence", "basic.allergy"}

    first = say(http, key, user, "s3", *denials[0])
    assert [o["action"] for o in first["outcomes"]] == ["conflict"] * 3
    assert sorted(a["kind"] for a in first["alerts"]) == ["frozen_conflict"] * 3
    for n, wording in enumerate(denials[1:]):
        answer = say(http, key, user, f"s{4 + n}", *wording)
        assert [o["action"] for o in answer["outcomes"]] == ["conflict"] * 3, wording
    # one pending challenger per fact, restated in three sessions, and one review each; nothing applied
    challengers = [i for i in active(http, key, user) if i["state"] == "pending"]
    assert sorted((i["slot"], i["polarity"], len(i["confirmed_sessions"])) for i in challengers) == [
        (slot, "negative", 3) for slot in sorted(frozen)
    ]
    review = {a["memory_id"] for a in alerts(http, key, user) if a["kind"] == "contradiction_review"}
    assert review == {i["memory_id"] for i in frozen.values()}
    assert {i["memory_id"] for i in items(http, key, user, state="frozen")} == review


# --- 2. the user's own words in the context, the blocks and the profile ----------------------------------


def test_facts_keep_the_users_words(http, tenant_key):
    key = tenant_key
    say(http, key, "wei", "s1", "我住在成都", "我对海鲜过敏", "我喜欢吃火锅")
    say(http, key, "wei", "s2", "I live in Chengdu", "我对海鲜过敏", "我喜欢吃火锅")
    say(http, key, "ann", "s1", "I live in Chengdu", "I'm allergic to seafood", "I love hotpot")
    say(http, key, "ann", "s2", "I live in Chengdu", "I'm allergic to seafood", "I love hotpot")

    zh = session(http, key, "wei", "s3")
    assert "residence: 成都" in zh["text"] and "allergy: 海鲜" in zh["text"]
    assert "residence: 成都" in zh["user_block"] and "food: 火锅" in zh["user_block"]
    assert not {"Chengdu", "Seafood", "Hotpot"} & set(zh["text"].replace(":", " ").split())
    slots = profile(http, key, "wei")
    home = slots["basic.residence"]["conclusions"][0]
    assert (home["value"], home["display"]) == ("chengdu", "成都")  # canonical kept for matching
    assert slots["preference.food"]["conclusions"][0]["display"] == "火锅"
    assert len([i for i in active(http, key, "wei") if i["slot"] == "basic.residence"]) == 1

    en = session(http, key, "ann", "s3")
    assert "residence: Chengdu" in en["text"] and "allergy: Seafood" in en["text"]
    assert "food: Hotpot" in en["user_block"]
    assert profile(http, key, "ann")["basic.residence"]["conclusions"][0]["display"] == "Chengdu"


# --- 3. restatements confirm rather than multiply --------------------------------------------------------

RESTATED = {
    ZH: (
        ("我是一名护士", "我在医院上夜班，是护士"),
        ("我周末喜欢去钓鱼", "周末我最喜欢钓鱼了", "我很喜欢周末去钓鱼"),
    ),
    EN: (
        ("I'm a nurse", "I work night shifts as a nurse"),
        (
            "I love fishing on weekends",
            "On weekends I like to go fishing",
            "Fishing on weekends is my favourite",
        ),
    ),
}

RESTATED_AGAIN = {
    ZH: (
        ("我是老师", "我在中学教数学", "作为老师，我暑假有空"),
        ("我喜欢周末去爬山", "周末我一般都去爬山", "爬山是我周末最爱的活动"),
        ("我喜欢看科幻电影", "我周末经常看科幻电影", "科幻片是我的最爱"),
    ),
    EN: (
        ("I'm a teacher", "I teach maths at a high school", "As a teacher, I get summers off"),
        (
            "I love hiking on weekends",
            "I go hiking most Saturdays",
            "Weekends are for hiking, that's my thing",
        ),
        ("I love sci-fi movies", "I watch sci-fi films every weekend", "Sci-fi is my favorite genre"),
    ),
}
#: the value each kept item holds: the first statement's
RESTATED_VALUES = {
    ZH: [("basic.occupation", "teacher"), ("preference.content", "科幻电影"), ("preference.sport", "hiking")],
    EN: [
        ("basic.occupation", "teacher"),
        ("preference.content", "sci-fi movie"),
        ("preference.sport", "hiking"),
    ],
}


@pytest.mark.parametrize("lang", [ZH, EN])
def test_restatements_in_other_words_confirm_too(http, tenant_key, lang):
    key, user = tenant_key, f"restate-again-{lang}"
    for n, said in enumerate(zip(*RESTATED_AGAIN[lang], strict=True)):
        say(http, key, user, f"s{n + 1}", *said)
    mine = active(http, key, user)
    assert sorted((i["slot"] or "(none)", i["value"] or "(none)") for i in mine) == RESTATED_VALUES[lang]
    assert all(i["state"] in ("confirmed", "frozen") and len(i["confirmed_sessions"]) >= 2 for i in mine)


@pytest.mark.parametrize("lang", [ZH, EN])
def test_restatements_confirm_rather_than_multiply(http, tenant_key, lang):
    key, user = tenant_key, f"restate-{lang}"
    jobs, weekends = RESTATED[lang]
    for n, (job, weekend) in enumerate(zip((*jobs, None), weekends, strict=True)):
        say(http, key, user, f"s{n + 1}", *(t for t in (job, weekend) if t))
    mine = active(http, key, user)
    work = [i for i in mine if i["slot"] == "basic.occupation"]
    assert [(i["value"], i["confirmed_sessions"]) for i in work] == [("nurse", ["s1", "s2"])]
    assert work[0]["state"] in ("confirmed", "frozen")
    assert [i for i in mine if i["slot"] is None] == []  # no slot-less second fact beside them
    hobby = [i for i in mine if i["slot"] == "preference.hobby"]
    assert [(i["value"], i["confirmed_sessions"]) for i in hobby] == [("fishing", ["s1", "s2", "s3"])]
    assert hobby[0]["state"] in ("confirmed", "frozen")
    assert not [i for i in mine if i["slot"] == "task.plan"]  # a habit liked, not one weekend's plan
    conclusion = profile(http, key, user)["preference.hobby"]["conclusions"][0]
    assert conclusion["value"] == "fishing" and conclusion["sessions"] == 3


# --- 4. declared facts climb the state machine; a full core alerts ---------------------------------------

DECLARED = {
    ZH: (
        "记住：我的车停在公司地下二层",
        "记住：我的健身房柜子是27号",
        "记住：我妹妹的婚礼在里斯本",
        "记住：我每周一坐早班车",
    ),
    EN: (
        "Remember that I park on level three at work",
        "Remember that my gym locker is number 27",
        "Remember that my sister's wedding is in Lisbon",
        "Remember that I take the early train on Mondays",
    ),
}


@pytest.mark.parametrize("lang", [ZH, EN])
def test_declared_facts_climb_to_core_and_a_full_core_alerts(http, sql_store, lang):
    policy = GatePolicy(capacities=Capacities(core=3))
    key = sql_store.tenants.create(f"t_{uuid.uuid4().hex[:16]}", "small core", policy=policy)
    user, declared = f"declare-{lang}", DECLARED[lang]
    say(http, key, user, "s1", *declared)
    assert {i["state"] for i in active(http, key, user)} == {"pending"}
    say(http, key, user, "s2", *declared)
    assert {(i["state"], i["layer"]) for i in active(http, key, user)} == {("confirmed", "longterm")}
    third = say(http, key, user, "s3", *declared)
    mine = active(http, key, user)
    assert len(mine) == 4 and all(len(i["confirmed_sessions"]) == 3 for i in mine)
    frozen = [i for i in mine if i["state"] == "frozen"]
    assert len(frozen) == 3 and {i["layer"] for i in frozen} == {"core"}
    assert all(i["confidence"] > 0.9 for i in frozen)
    waiting = next(i for i in mine if i["state"] != "frozen")
    assert (waiting["state"], waiting["layer"]) == ("confirmed", "longterm")
    full = [a for a in third["alerts"] if a["kind"] == "core_full"]
    assert [a["memory_id"] for a in full] == [waiting["memory_id"]]
    # the alert names the core item of lowest value: what a reviewer would evict to make room
    assert len(full[0]["related_ids"]) == 1 and full[0]["related_ids"][0] in {i["memory_id"] for i in frozen}
    detail = http.get(
        f"/v1/users/{user}/memories/{frozen[0]['memory_id']}", headers={"X-API-Key": key}
    ).json()
    freeze = next(e for e in detail["audit"] if e["action"] == "freeze")
    assert freeze["reason"].startswith("declared_restated")


# --- 5. style instructions become style slots ------------------------------------------------------------

STYLE = {
    ZH: (
        ("回答控制在三句话以内", "style.reply_length", "at most 3 sentences"),
        ("用表格回答我", "style.format", "table"),
    ),
    EN: (
        ("Please keep answers to three sentences", "style.reply_length", "at most 3 sentences"),
        ("Answer me in a table", "style.format", "table"),
    ),
}


@pytest.mark.parametrize("lang", [ZH, EN])
def test_style_instructions_become_style_slots(http, tenant_key, lang):
    # an instruction is kept as a value of the closed vocabulary (actors/core/style.py), stored and shown
    # as the service's template, never in the words it was given in (docs/quality.md#7)
    key, user = tenant_key, f"style-{lang}"
    texts = [text for text, _, _ in STYLE[lang]]
    say(http, key, user, "s1", *texts)
    say(http, key, user, "s2", *texts)
    by_slot = {i["slot"]: i for i in active(http, key, user)}
    for text, slot, value in STYLE[lang]:
        item = by_slot[slot]
        assert item["value"] == value and item["state"] == "confirmed", item
        assert item["content"].endswith(value) and text not in item["content"]
    user_block = session(http, key, user, "s3")["user_block"]
    assert all(value in user_block for _, _, value in STYLE[lang])


# --- 6. questions and bare secrets are not memories ------------------------------------------------------

NOT_MEMORIES = {
    ZH: (
        "周末去哪玩比较好？",
        "周末去哪玩比较好",
        "你觉得我该学什么乐器",
        "记住：我的银行卡号是4111111111111111",
        "密码是 Abc!2345xyz",
    ),
    EN: (
        "Where should I go this weekend?",
        "where is a good place to go this weekend",
        "Remember this: sk-proj-abcdef0123456789abcdef0123456789",
        "My password is hunter2xyz, my card is 4111 1111 1111 1111",
        "4111 1111 1111 1111",
    ),
}


@pytest.mark.parametrize("lang", [ZH, EN])
def test_questions_and_bare_secrets_store_nothing(http, tenant_key, lang):
    key, user = tenant_key, f"nothing-{lang}"
    for n, text in enumerate(NOT_MEMORIES[lang]):
        answer = say(http, key, user, f"s{n + 1}", text)
        assert (answer["outcomes"], answer["ignored_turns"]) == ([], 1), text
    assert items(http, key, user) == []
    context = session(http, key, user, "s9")
    assert "REDACTED" not in context["text"] + context["memory_block"] + context["user_block"]
