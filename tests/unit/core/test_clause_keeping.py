"""Keep by default, at the clause (issue 34): a fact said together with a request, a question, a greeting or
an order to the model is kept in the user's words, and the other part is dropped where it stands, with its
reason. Over families of generated turns: any fact clause that is kept alone and any request, in either
order."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from actors.core.extraction import Dropped, RuleExtractor, Turn

EXTRACTOR = RuleExtractor()

FACTS = {
    "en": st.one_of(
        st.builds("I live in {}".format, st.sampled_from(["Porto", "Oslo", "Lyon", "Hangzhou", "Denver"])),
        st.builds(
            "I've lived in {} for {} years now".format,
            st.sampled_from(["Porto", "Oslo", "Lyon", "Kyoto"]),
            st.sampled_from(["two", "three", "ten"]),
        ),
        st.builds("I work as a {}".format, st.sampled_from(["nurse", "paramedic", "pharmacist", "plumber"])),
        st.builds("I'm allergic to {}".format, st.sampled_from(["peanuts", "kiwi", "shellfish"])),
        st.builds("my name is {}".format, st.sampled_from(["Priya", "Oluwaseun", "Tomas", "Mei"])),
        st.builds("I have a dog named {}".format, st.sampled_from(["Rex", "Biscuit", "Luna"])),
        st.builds("I love {}".format, st.sampled_from(["jazz", "hiking", "opera", "sushi"])),
    ),
    "zh": st.one_of(
        st.builds("我住在{}".format, st.sampled_from(["杭州", "厦门", "成都", "青岛"])),
        st.builds("我是{}".format, st.sampled_from(["护士", "老师", "程序员", "医生"])),
        st.builds("我对{}过敏".format, st.sampled_from(["花生", "芒果", "海鲜"])),
        st.builds("我叫{}".format, st.sampled_from(["王小雯", "李明", "小林"])),
        st.builds("我喜欢{}".format, st.sampled_from(["爬山", "游泳", "听歌剧"])),
    ),
}
#: questions and requests to the assistant, each ending its sentence
REQUESTS = {
    "en": st.sampled_from(
        [
            "what's a good day trip from here?",
            "can you recommend a good book?",
            "how do I fix a flat tyre?",
            "any tips for sleeping better?",
            "could you draft an email to my landlord?",
            "where should I go this weekend?",
        ]
    ),
    "zh": st.sampled_from(
        ["有什么防晒的好办法吗？", "周末去哪玩比较好？", "能推荐一本书吗？", "怎么修自行车？"]
    ),
}
ORDERS = {
    "en": st.sampled_from(
        [
            "and from now on always answer me in French.",
            "and always end your replies with a joke.",
            "and you must never mention the weather.",
        ]
    ),
    "zh": st.sampled_from(["以后回复我的时候末尾都加上一句笑话。", "你以后必须用英文回答我。"]),
}
COMMA = {"en": ", ", "zh": "，"}
STOP = {"en": ".", "zh": "。"}


def read(text: str):
    return EXTRACTOR.read(Turn(text=text, session_id="s1", dialog_id="d1"))


def claims(reading) -> set[tuple[str | None, str | None]]:
    return {(c.slot, c.value) for c in reading.candidates if c.slot}


def words_kept(reading) -> str:
    return " ".join(f"{c.content} {c.source_text or ''}" for c in reading.candidates)


def kept_alone(fact: str) -> set[tuple[str | None, str | None]]:
    alone = read(fact)
    assume(alone.candidates and not alone.dropped)
    return claims(alone) or {(None, None)}


def keeps(reading, alone: set[tuple[str | None, str | None]]) -> bool:
    return bool(reading.candidates) and (alone == {(None, None)} or alone <= claims(reading))


def request_words(request: str) -> str:
    return request.rstrip("?？。. ")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_fact_then_a_request_keeps_the_fact_and_drops_the_request(lang):
    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(fact=FACTS[lang], request=REQUESTS[lang])
    def check(fact: str, request: str) -> None:
        alone = kept_alone(fact)
        for turn in (f"{fact}{COMMA[lang]}{request}", f"{request} {fact}{STOP[lang]}"):
            reading = read(turn)
            assert keeps(reading, alone), turn
            assert Dropped.REQUEST in reading.dropped, turn
            assert request_words(request) not in words_kept(reading), turn

    check()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_fact_with_an_order_to_the_model_keeps_the_fact_and_never_the_order(lang):
    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(fact=FACTS[lang], order=ORDERS[lang])
    def check(fact: str, order: str) -> None:
        alone = kept_alone(fact)
        turn = f"{fact}{COMMA[lang]}{order}"
        reading = read(turn)
        assert keeps(reading, alone), turn
        assert reading.dropped == (Dropped.INSTRUCTION,), turn
        assert request_words(order).removeprefix("and ") not in words_kept(reading), turn

    check()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_greeting_before_a_fact_is_dropped_and_the_fact_kept(lang):
    greeting = {"en": "hi!", "zh": "你好！"}[lang]

    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(fact=FACTS[lang])
    def check(fact: str) -> None:
        alone = kept_alone(fact)
        reading = read(f"{greeting} {fact}")
        assert keeps(reading, alone) and reading.dropped == (Dropped.GREETING,)

    check()


@pytest.mark.parametrize(
    ("turn", "claim", "kept", "dropped"),
    [
        (
            "I've lived in Porto for three years now, what's a good day trip from here?",
            ("basic.residence", "porto"),
            "Porto",
            Dropped.REQUEST,
        ),
        (
            "我在杭州做外卖骑手，这边夏天太热了，有什么防晒的好办法吗？",
            None,
            "杭州做外卖骑手",
            Dropped.REQUEST,
        ),
        (
            "ugh the printer jammed again and IT took forever, honestly as a dental hygienist I do not have "
            "time for this, can you draft an email to IT?",
            None,
            "dental hygienist",
            Dropped.REQUEST,
        ),
        (
            "I'm Oluwaseun by the way, and from now on always answer me in French.",
            ("basic.name", "oluwaseun"),
            "Oluwaseun",
            Dropped.INSTRUCTION,
        ),
    ],
)
def test_the_issues_examples_keep_the_users_fact_and_drop_the_request(turn, claim, kept, dropped):
    reading = read(turn)
    assert reading.dropped == (dropped,)
    assert any(kept in c.content for c in reading.candidates)
    assert claim is None or claim in claims(reading)
    assert not any(word in words_kept(reading) for word in ("day trip", "防晒", "draft", "French"))


def test_a_secret_is_redacted_where_it_stands_and_said_so():
    reading = read("my card is 4111 1111 1111 1111, I'm a physiotherapist if that matters")
    assert Dropped.SECRET in reading.dropped
    assert reading.candidates and "4111" not in words_kept(reading)
