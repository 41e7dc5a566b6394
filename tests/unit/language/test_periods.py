"""Periods named in questions, English and Chinese."""

from datetime import UTC, datetime

import pytest

from actors.language.periods import named_period

NOW = datetime(2023, 11, 20, tzinfo=UTC)


def day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


@pytest.mark.parametrize(
    ("question", "start", "end"),
    [
        ("What painting did Melanie show on October 13, 2023?", day(2023, 10, 13), day(2023, 10, 14)),
        ("What did Gina find on 1 February, 2023?", day(2023, 2, 1), day(2023, 2, 2)),
        ("When did Melanie go camping in June?", day(2023, 6, 1), day(2023, 7, 1)),
        ("What did I do in December?", day(2022, 12, 1), day(2023, 1, 1)),  # the latest December
        ("Which trip did Ana take in May 2022?", day(2022, 5, 1), day(2022, 6, 1)),
        ("What did we cook in 2022?", day(2022, 1, 1), day(2023, 1, 1)),
        ("我2023年5月去了哪里？", day(2023, 5, 1), day(2023, 6, 1)),
        ("五月我们做了什么？", day(2023, 5, 1), day(2023, 6, 1)),
        ("十二月的会议是哪天？", day(2022, 12, 1), day(2023, 1, 1)),
        ("我们5月20日见过面吗？", day(2023, 5, 20), day(2023, 5, 21)),
    ],
)
def test_a_named_period_is_found(question, start, end):
    period = named_period(question, NOW)
    assert period is not None and (period.start, period.end) == (start, end)


@pytest.mark.parametrize(
    "question",
    ["may I ask what you cooked?", "what should I avoid cooking?", "February 30 plans?", "周末去哪玩？"],
)
def test_no_period_where_none_is_named(question):
    assert named_period(question, NOW) is None
