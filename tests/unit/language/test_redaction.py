"""Redaction of secrets and identifiers (``actors.language.safety.secrets``).

``luhn_valid_card_in`` is a brute-force card finder written independently of the redactor, so the property
tests here and in ``test_extraction`` check the redactor against a second opinion, not against itself.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from stdnum import iban

from actors.language.safety.secrets import redact


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def luhn_valid_card_in(text: str) -> bool:
    """A 13–19 digit stretch (single spaces or dashes allowed between digits), not touching another digit on
    either side, that passes the Luhn check."""
    n = len(text)
    for i in range(n):
        if not text[i].isdecimal() or (i > 0 and text[i - 1].isdecimal()):
            continue
        digits, j = "", i
        while j < n and len(digits) <= 19:
            if text[j].isdecimal():
                digits += text[j]
                ends = j + 1 == n or not text[j + 1].isdecimal()
                if ends and 13 <= len(digits) <= 19 and _luhn(digits):
                    return True
                j += 1
            elif text[j] in " -" and digits and j + 1 < n and text[j + 1].isdecimal():
                j += 1
            else:
                break
    return False


SK_KEY = re.compile(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{20,}")


@st.composite
def card_numbers(draw: st.DrawFn) -> str:
    body = draw(st.text(alphabet="0123456789", min_size=12, max_size=18))
    digits = next(body + c for c in "0123456789" if _luhn(body + c))
    sep = draw(st.sampled_from(["", " ", "-"]))
    return sep.join(digits[i : i + 4] for i in range(0, len(digits), 4))


sk_keys = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", min_size=20, max_size=60
).map(lambda s: "sk-" + s)


def _cn_id(first17: str) -> str:
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    return first17 + "10X98765432"[sum(int(d) * w for d, w in zip(first17, weights, strict=True)) % 11]


# --- redaction ------------------------------------------------------------------------------------

REDACTED = [
    ("my password is hunter2", "password", "hunter2"),
    ("Password: Tr0ub4dor&3 ok", "password", "Tr0ub4dor&3"),
    ("my wifi password is secret123!", "password", "secret123"),
    ("the pin is 4821", "password", "4821"),
    ("我的密码是abc123，别忘了", "password", "abc123"),
    ("支付密码：889900", "password", "889900"),
    ("key sk-proj-abcdefghijklmnopqrstuvwx12", "api_key", "sk-proj-abcdefghij"),
    ("AKIAIOSFODNN7EXAMPLE is my aws key", "api_key", "AKIAIOSFODNN7EXAMPLE"),
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "api_key", "ghp_abcdefghij"),
    ("slack xoxb-1234567890-abcdefghij", "api_key", "xoxb-1234567890"),
    ("api key: abcd1234efgh5678", "api_key", "abcd1234efgh5678"),
    (
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
        "api_key",
        "eyJhbG",
    ),
    ("hash e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "api_key", "e3b0c44298fc"),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
        "private_key",
        "MIIEow",
    ),
    ("我的身份证号是11010519491231002X", "id_number", "11010519491231002X"),
    (f"ID {_cn_id('44030019900101123')} on file", "id_number", _cn_id("44030019900101123")),
    ("card 4111 1111 1111 1111 thanks", "card_number", "4111 1111"),
    ("pay with 5500-0000-0000-0004", "card_number", "5500-0000"),
    ("amex 378282246310005", "card_number", "378282246310005"),
    ("in 2023 4111111111111111", "card_number", "4111111111111111"),
    ("我的银行卡号是6222020200112345678", "card_number", "6222020200112345678"),
    ("call 13812345678", "phone", "13812345678"),
    ("call +86 138 1234 5678", "phone", "138 1234"),
    ("office 010-12345678", "phone", "12345678"),
    ("cell (415) 555-2671", "phone", "555-2671"),
    ("uk +44 20 7946 0958", "phone", "7946"),
    ("mail me at alex.smith+tag@example.co.uk", "email", "alex.smith"),
    ("ssn 123-45-6789", "ssn", "123-45-6789"),
    ("验证码是 482913", "verification_code", "482913"),
]


@pytest.mark.parametrize(("text", "finding", "secret"), REDACTED, ids=[t[:40] for t, _, _ in REDACTED])
def test_secrets_and_identifiers_are_replaced_by_markers(text: str, finding: str, secret: str) -> None:
    result = redact(text)
    assert secret not in result.text
    assert f"[REDACTED:{finding}]" in result.text
    assert finding in result.findings


KEPT = [
    "I'm 34 years old and was born in 1990",
    "It costs $1,299.99, about 9000 yuan",
    "The meeting is on 2023-05-01 at 3:30 in room 1203",
    "order number 4111111111111112",  # 16 digits, fails Luhn, no card keyword
    "my student number is 20190412",
    "I ran 10 km in 52 minutes",
    "the token is representative of the whole set",
    "I have 2 cats and 3 dogs",
    "我今年35岁，住在杭州",
    "call me maybe",
]


@pytest.mark.parametrize("text", KEPT)
def test_ordinary_numbers_and_words_are_kept(text: str) -> None:
    assert redact(text) == redact(text) and redact(text).text == text and redact(text).findings == []


#: countries and the shape of their account part (bank code letters, then digits)
IBAN_ACCOUNTS = [("DE", "", 18), ("NL", "ABNA", 10), ("GB", "NWBK", 14), ("CH", "", 17), ("PL", "", 24)]


@st.composite
def ibans(draw: st.DrawFn) -> str:
    """A valid IBAN of one of several countries, compact or in groups of four, upper or lower case."""
    country, bank, digits = draw(st.sampled_from(IBAN_ACCOUNTS))
    bban = bank + draw(st.text(alphabet="0123456789", min_size=digits, max_size=digits))
    number = country + iban.calc_check_digits(country + "00" + bban) + bban
    grouped = draw(st.booleans())
    shown = " ".join(number[i : i + 4] for i in range(0, len(number), 4)) if grouped else number
    return shown.lower() if draw(st.booleans()) and not grouped else shown


SENTENCES = [
    "my account for the payout is {}, I'm a carpenter",
    "IBAN: {}",
    "send it to {} please",
    "我的收款账户是{}，谢谢",
    "账户 {} 我是护士",
]


@given(ibans(), st.sampled_from(SENTENCES))
@settings(max_examples=150, deadline=None)
def test_an_iban_anywhere_in_a_sentence_is_redacted(number: str, sentence: str) -> None:
    result = redact(sentence.format(number))
    compact = number.replace(" ", "")
    assert compact[4:12] not in result.text.replace(" ", "")
    assert "[REDACTED:iban]" in result.text
    assert sentence.split("{}")[0].strip() in result.text  # the words around it are kept


ordinary_numbers = st.one_of(
    st.integers(0, 99_999_999).map(str),
    st.integers(1900, 2100).map(lambda y: f"{y}-{(y % 12) + 1:02d}-{(y % 28) + 1:02d}"),
    st.floats(0, 99_999, allow_nan=False).map(lambda x: f"${x:,.2f}"),
    st.integers(0, 23).map(lambda h: f"{h}:{h % 60:02d}"),
)
words = st.sampled_from(
    ["I", "ran", "km", "我", "今年", "岁", "in", "room", "on", "at", "about", "years", "old"]
)


@given(st.lists(st.tuples(ordinary_numbers, words), min_size=1, max_size=8))
@settings(max_examples=300, deadline=None)
def test_ordinary_numbers_dates_and_prices_are_never_redacted(pairs: list[tuple[str, str]]) -> None:
    """Numbers as a sentence has them, each followed by a word (numbers typed side by side in the grouping
    of a phone or a card number are read as one)."""
    text = " ".join(f"{number} {word}" for number, word in pairs)
    assert redact(text).findings == [], text


def test_cn_id_with_bad_checksum_is_still_redacted_next_to_its_keyword() -> None:
    assert "110105194912310021" not in redact("身份证号码：110105194912310021").text


def test_redaction_is_idempotent_and_marker_free_of_digits() -> None:
    once = redact("password: hunter2, card 4111111111111111, call 13812345678").text
    assert redact(once).text == once
    assert not re.search(r"\[REDACTED:[^\]]*\d", once)


def test_zero_width_characters_cannot_hide_a_card_number() -> None:
    assert not luhn_valid_card_in(redact("4111\u200b1111\u200b1111\u200b1111").text)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60),
            card_numbers(),
            sk_keys,
        ),
        max_size=8,
    ).map("".join)
)
def test_redact_removes_every_card_and_key_and_is_idempotent(text: str) -> None:
    result = redact(text)
    assert not luhn_valid_card_in(result.text)
    assert not SK_KEY.search(result.text)
    assert redact(result.text).text == result.text


def test_card_finder_itself_sees_cards() -> None:
    assert luhn_valid_card_in("pay with 4111 1111 1111 1111 today")
    assert luhn_valid_card_in("in 2023 4111-1111-1111-1111")
    assert not luhn_valid_card_in("order 4111 1111 1111 1112")
    assert not luhn_valid_card_in("I am 34 and born in 1990")
