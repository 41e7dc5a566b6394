"""Families of phrasings found by the second probe set's tuned half (tests/bench/probe_wordings.py
--set 2), each a product of how it is said × what is said, with the look-alikes each must leave alone:
who calls the user by a name (大伙儿都叫我…), a hometown said with a modifier (土生土长的重庆人), a
workplace that names the employer beside the job (我在阿里巴巴做开发, not 我在医院当护士), a food refused
with the food said first (香菜我是一口都不吃的), an occasion before the statement (闲下来我就喜欢…), a part
of the body unwell now in both languages, occupations followed by a remark ("I'm an electrician,
mostly …"), and one sentence that holds two slots kept as two memories."""

from __future__ import annotations

from itertools import product

import pytest

from actors.core.extraction import Turn
from actors.core.gate.engine import GateEngine
from schemas.enums import Polarity
from schemas.settings import GatePolicy
from tests.unit.language.test_more_wordings import EXTRACTOR, read


def values(text: str, slot: str) -> list[str | None]:
    return [v for s, v, _ in read(text) if s == slot]


@pytest.mark.parametrize(
    ("callers", "name"),
    list(
        product(
            ["大伙儿都叫我", "大伙都喊我", "哥们儿平时叫我", "室友们都叫我", "周围的人一般叫我"],
            ["胖虎", "阿飞", "小七"],
        )
    ),
)
def test_who_calls_the_user_by_a_name_gives_the_name(callers: str, name: str) -> None:
    assert values(f"{callers}{name}。", "basic.name") == [name]


@pytest.mark.parametrize(
    ("modifier", "place"),
    list(product(["", "土生土长的", "地道的", "正宗的", "地地道道的"], ["重庆", "成都", "西安"])),
)
def test_a_hometown_said_with_a_modifier(modifier: str, place: str) -> None:
    assert (
        values(f"我是{modifier}{place}人。", "basic.hometown")
        == values(f"我来自{place}。", "basic.hometown")
        != []
    )


@pytest.mark.parametrize("text", ["我是土生土长的好人", "我是个地道的老实人"])
def test_a_kind_of_person_is_no_hometown(text: str) -> None:
    assert values(text, "basic.hometown") == []


@pytest.mark.parametrize(
    ("company", "job"),
    list(product(["阿里巴巴", "字节跳动", "腾讯", "小米"], ["做后端开发", "当产品经理", "做设计师"])),
)
def test_a_named_workplace_is_the_employer_beside_the_job(company: str, job: str) -> None:
    found = {s for s, _, _ in read(f"我在{company}{job}。")}
    assert {"basic.occupation", "basic.employer"} <= found


@pytest.mark.parametrize("where", ["医院", "一家律所", "学校", "幼儿园", "银行", "上海", "一所大学", "公司"])
def test_a_kind_of_workplace_or_a_city_names_no_employer(where: str) -> None:
    text = f"我在{where}当老师。"
    assert values(text, "basic.occupation") == ["teacher"]
    assert values(text, "basic.employer") == []


@pytest.mark.parametrize(
    ("food", "refusal"),
    list(
        product(
            ["香菜", "肥肉", "榴莲", "芹菜"], ["我是一口都不吃的", "我从来不吃", "我压根不碰", "我一点都不吃"]
        )
    ),
)
def test_a_food_said_first_and_refused_is_a_dislike(food: str, refusal: str) -> None:
    assert any(
        p is Polarity.NEGATIVE and s and s.startswith("preference") for s, _, p in read(food + refusal)
    )


@pytest.mark.parametrize(
    "text",
    ["今天我一口都不吃了", "晚上我从来不吃", "以后我一点都不吃了", "这个我一口都不吃", "周末我从来不吃"],
)
def test_a_time_or_a_pointer_before_a_refusal_is_no_taste(text: str) -> None:
    assert not any(s and s.startswith("preference") for s, _, _ in read(text))


@pytest.mark.parametrize(
    ("occasion", "taste"),
    list(
        product(
            ["闲下来", "闲下来的时候", "下班后", "业余时间", "休息的时候", "放假的时候"],
            ["弹吉他", "看书", "跑步"],
        )
    ),
)
def test_an_occasion_before_a_liking_is_not_the_taste(occasion: str, taste: str) -> None:
    liked = [v for s, v, p in read(f"{occasion}我就喜欢{taste}。") if s and s.startswith("preference")]
    assert liked and not any(occasion in (v or "") for v in liked)


@pytest.mark.parametrize(
    ("when", "part", "feeling"),
    list(product(["", "这两天", "今天", "最近"], ["胃", "背", "膝盖", "嗓子"], ["不舒服", "疼", "有点难受"])),
)
def test_a_part_of_the_body_unwell_now_is_a_state_in_chinese(when: str, part: str, feeling: str) -> None:
    assert ("state.situation", "sick", Polarity.POSITIVE) in read(f"我{when}{part}{feeling}。")


@pytest.mark.parametrize(
    ("part", "feeling"),
    list(
        product(
            ["throat", "back", "head", "stomach", "knees"],
            ["is sore", "is killing me", "hurts", "is so achy"],
        )
    ),
)
def test_a_part_of_the_body_unwell_now_is_a_state_in_english(part: str, feeling: str) -> None:
    verb_fixed = feeling.replace("is ", "are ") if part.endswith("s") else feeling
    assert ("state.situation", "sick", Polarity.POSITIVE) in read(f"My {part} {verb_fixed} today.")


@pytest.mark.parametrize(
    "text",
    [
        "My son's throat is sore.",
        "My knee hurt last year when I ran.",
        "My back aches since last year.",
        "The back of the room is sore about it.",
        "这道题让我头大。",
    ],
)
def test_someone_elses_or_a_past_pain_is_no_state(text: str) -> None:
    assert ("state.situation", "sick", Polarity.POSITIVE) not in read(text)


@pytest.mark.parametrize(
    ("job", "remark"),
    list(
        product(
            ["an electrician", "a plumber", "a translator", "a paramedic", "a nurse"],
            ["mostly night shifts", "it pays the bills"],
        )
    ),
)
def test_an_occupation_followed_by_a_remark_is_read(job: str, remark: str) -> None:
    assert values(f"I'm {job}, {remark}.", "basic.occupation") == [job.split()[-1]]


@pytest.mark.parametrize(
    "text", ["I'm a mess, honestly.", "I'm a wreck, to be fair.", "I'm a fan, mostly of jazz."]
)
def test_a_remark_after_no_occupation_names_none(text: str) -> None:
    assert values(text, "basic.occupation") == []


def test_one_sentence_with_two_slots_is_two_memories() -> None:
    """The gate's restatement check by the same words must not fold the employer into the job read from
    one sentence: each slot is its own memory."""
    engine = GateEngine("t", "u", policy=GatePolicy())
    for candidate in EXTRACTOR.extract(Turn("我在阿里巴巴做后端开发。", "s1", "d1")):
        engine.write(candidate)
    assert {i.slot for i in engine.active()} == {"basic.occupation", "basic.employer"}
