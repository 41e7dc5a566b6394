"""Periods a question names, in English or Chinese: "in June", "on October 13, 2023", "1 February, 2023",
"in 2022", "2023年5月", "五月", "5月20日". The time recall route grounds them in the dates memories were said
on (``actors.core.recall.routes.TimeRoute``).

A month without a year is the latest such month not after now (asked in March, "in June" is last June); a
relative phrase ("last week") is not read here: it says little about *which* dated memory is meant.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

_MONTHS = {name.lower(): n for n, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): n for n, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MONTH_NAMES = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"
#: "13 October 2023", "October 13, 2023", "Oct 13", "June", "June 2023" (the day before or after the month)
_EN_DATE = re.compile(
    rf"\b(?:{_DAY}\s+(?:of\s+)?)?({_MONTH_NAMES})\b\.?(?:\s+{_DAY}\b)?,?(?:\s+{_YEAR}\b)?", re.IGNORECASE
)
#: month names that are also ordinary words: months only when capitalised ("in May", not "may I")
_WORDS_TOO = frozenset({"may", "march", "mar"})
_EN_YEAR = re.compile(rf"\b(?:in|of|during|since)\s+{_YEAR}\b", re.IGNORECASE)
_ZH_NUMERALS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_ZH_MONTH = r"(\d{1,2}|十[一二]?|[一二三四五六七八九])"
_ZH_DATE = re.compile(rf"(?:{_YEAR}年)?{_ZH_MONTH}月(?:(\d{{1,2}})[日号])?")
_ZH_YEAR = re.compile(rf"{_YEAR}年")


@dataclass(frozen=True, slots=True)
class Period:
    start: datetime
    end: datetime  # exclusive

    def contains(self, moment: datetime) -> bool:
        return self.start <= moment < self.end


def _zh_number(text: str) -> int:
    if text.isdigit():
        return int(text)
    if text.startswith("十"):
        return 10 + (_ZH_NUMERALS[text[1]] if len(text) > 1 else 0)
    return _ZH_NUMERALS[text]


def _period(year: int | None, month: int, day: int | None, now: datetime) -> Period | None:
    if year is None:
        year = now.year if month <= now.month else now.year - 1
    try:
        if day is not None:
            start = datetime(year, month, day, tzinfo=UTC)
            return Period(start, start + timedelta(days=1))
        start = datetime(year, month, 1, tzinfo=UTC)
    except ValueError:
        return None  # "February 30": no such day
    return Period(start, datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC))


def named_period(text: str, now: datetime) -> Period | None:
    """The first period the text names, or None."""
    for found in _EN_DATE.finditer(text):
        name = found.group(2)
        if name.lower() in _WORDS_TOO and not name[0].isupper():
            continue
        day = found.group(1) or found.group(3)
        year = found.group(4)
        return _period(int(year) if year else None, _MONTHS[name.lower()], int(day) if day else None, now)
    zh = _ZH_DATE.search(text)
    if zh:
        year, month, day = zh.group(1), _zh_number(zh.group(2)), zh.group(3)
        if 1 <= month <= 12:
            return _period(int(year) if year else None, month, int(day) if day else None, now)
    whole_year = _EN_YEAR.search(text) or _ZH_YEAR.search(text)
    if whole_year:
        year_number = int(whole_year.group(1))
        return Period(datetime(year_number, 1, 1, tzinfo=UTC), datetime(year_number + 1, 1, 1, tzinfo=UTC))
    return None
