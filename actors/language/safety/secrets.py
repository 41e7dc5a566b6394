"""Secrets and personal identifiers, found by their shape and never stored (docs/trust.md#3-hostile-input).

``redact`` replaces each one with a ``[REDACTED:<finding>]`` marker before a text reaches any store. The
shapes are checked by well-kept libraries rather than patterns of our own:

* **account and identity numbers** by their check digits (``python-stdnum``): IBANs (ISO 13616, mod 97),
  card numbers (Luhn, 13–19 digits), Chinese resident ids (GB 11643), US social security numbers;
* **phone numbers** by the numbering plans of ``phonenumbers`` (international with ``+``, and national
  numbers of the regions in ``PHONE_REGIONS``);
* **keys and tokens** by ``detect-secrets``' detectors of provider formats (AWS, GitHub, GitLab, Slack,
  Stripe, JWT, OpenAI, …) and its Shannon entropy of base64 and hex runs;
* **what the user names as secret** — "my password is …", 密码是…, "api key: …", a verification code, a
  passport number, a number said after 身份证 or "card" — by the words that name it.

Markers hold no digits, so a redacted text can be scanned again without a marker itself looking like a
number. Ordinary numbers (ages, years, prices, dates, short codes) are kept: a digit run goes only when it
has an identifier's shape and checksum.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache

import phonenumbers
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString, HexHighEntropyString
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector
from stdnum import iban, luhn
from stdnum.cn import ric
from stdnum.us import ssn

from actors.language.safety.invisible import strip_invisible
from actors.language.safety.spans import Span, splice


@dataclass(frozen=True, slots=True)
class Redacted:
    text: str
    findings: list[str] = field(default_factory=list)


def marker(finding: str) -> str:
    return f"[REDACTED:{finding}]"


# --- what the user names as secret -----------------------------------------------------------------

_SECRET_VALUE = r"[!-~]{4,}"  # one printable-ASCII run: what a password or key looks like when spoken


def _secret_like(value: str) -> bool:
    """A spoken key or token has digits or mixed case; "the token is representative" is not a secret."""
    return any(c.isdigit() for c in value) or (len(value) >= 20 and not value.islower())


#: (finding, pattern whose group 1 is the secret, which values count — None: any)
_NAMED_SECRETS: list[tuple[str, re.Pattern[str], Callable[[str], bool] | None]] = [
    (
        "password",
        re.compile(
            r"\b(?:pass(?:word|wd|code|phrase)|pwd|pin(?:\s+code)?)\b(?:\s+(?:for|to|of|on)\s+[\w.@-]+)?"
            r"\s*(?:is|was|=|:)\s*(?:now\s+)?[\"'“]?(" + _SECRET_VALUE + ")",
            re.IGNORECASE,
        ),
        None,
    ),
    (
        "password",
        re.compile(r"(?:密码|口令|PIN码?)\s*(?:是|为|改成了?|[:：=])\s*([!-~]{3,})", re.IGNORECASE),
        None,
    ),
    (
        "api_key",
        re.compile(
            r"\b(?:api[\s_-]?key|access[\s_-]?key|secret(?:[\s_-]?key)?|auth[\s_-]?token|access[\s_-]?token|"
            r"token|bearer)\b\s*(?:is|was|=|:)?\s*[\"'“]?([A-Za-z0-9_\-./+=]{12,})",
            re.IGNORECASE,
        ),
        _secret_like,
    ),
    (
        "api_key",
        re.compile(r"(?:密钥|秘钥|令牌|token)\s*(?:是|为|[:：=])\s*([!-~]{8,})", re.IGNORECASE),
        _secret_like,
    ),
    (
        "card_number",
        re.compile(
            r"(?:银行卡号?|信用卡号?|卡号|card\s+(?:number|no\.?)|card)\s*(?:是|为|is|"
            r"[:：])?\s*(\d[\d -]{11,22}\d)",
            re.I,
        ),
        None,
    ),
    (
        "verification_code",
        re.compile(r"(?:验证码|verification code|otp)\s*(?:是|为|is|[:：=])\s*(\d{4,8})", re.IGNORECASE),
        None,
    ),
    (
        "passport",
        re.compile(
            r"(?:passport(?:\s+(?:number|no\.?))?|护照号?码?)\s*(?:is|是|[:：])?\s*([A-Z]{1,2}\d{6,9})", re.I
        ),
        None,
    ),
    (
        "id_number",
        re.compile(
            r"(?:身份证(?:号码?)?|resident id|id (?:card )?number)\s*(?:是|为|is|[:：])?\s*(\d{17}[\dXx])",
            re.I,
        ),
        None,
    ),
]


def _named_spans(text: str) -> Iterator[Span]:
    """Named secrets end at whitespace; a sentence's closing punctuation is not part of the secret."""
    for finding, pattern, keep in _NAMED_SECRETS:
        for m in pattern.finditer(text):
            if m.group(1).startswith("[REDACTED") or (keep is not None and not keep(m.group(1))):
                continue
            start, end = m.span(1)
            while end > start + 1 and text[end - 1] in ".,;:!?)]}\"'”":
                end -= 1
            yield start, end, finding


# --- keys and tokens: detect-secrets -----------------------------------------------------------------

_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)")
#: keys of the "sk-…" family (OpenAI's project keys, Anthropic's, Stripe's test and publishable keys) that
#: detect-secrets' detectors do not cover: their prefix is the shape, whatever the entropy of the rest
_PREFIXED_KEY = re.compile(r"(?<![A-Za-z0-9])(?:sk|pk|rk)[-_][A-Za-z0-9_\-]{16,}")
#: a mail address is an identifier; the look-behind starts a match only at a token's first character
_EMAIL = re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")


@cache
def _provider_detectors() -> tuple[RegexBasedDetector, ...]:
    """detect-secrets' detectors of provider key formats; none of them needs a keyword or a file name."""
    return (
        AWSKeyDetector(), DiscordBotTokenDetector(), GitHubTokenDetector(), GitLabTokenDetector(),
        JwtTokenDetector(), MailchimpDetector(), NpmDetector(), OpenAIDetector(), PypiTokenDetector(),
        SendGridDetector(), SlackDetector(), SquareOAuthDetector(), StripeDetector(),
        TelegramBotTokenDetector(), TwilioKeyDetector(),
    )  # fmt: skip


#: the finding of a key or token: the least specific, so a checked number of the same span names it instead
RANDOM = "api_key"
#: no provider's key is shorter (Slack's are the shortest); shorter runs are words and numbers
MIN_KEY_CHARS = 16
_BASE64 = Base64HighEntropyString()
_HEX = HexHighEntropyString()
_TOKEN_CHARS = frozenset(string.ascii_letters + string.digits + "+/-_=.")
#: shorter runs are words, numbers and short codes; the entropy of a run this long tells a key from a word
MIN_RANDOM_RUN = 20


def _runs(text: str, chars: frozenset[str]) -> Iterator[tuple[int, int]]:
    """The maximal runs of ``chars`` in ``text``, as (start, end)."""
    start = None
    for i, ch in enumerate(text):
        if ch in chars:
            if start is None:
                start = i
        elif start is not None:
            yield start, i
            start = None
    if start is not None:
        yield start, len(text)


def _looks_random(token: str) -> bool:
    """A key or a hash: letters and digits mixed, and more entropy than a word or a number of that length."""
    body = token.strip(".=")
    if len(body) < MIN_RANDOM_RUN or not any(c.isdigit() for c in body) or not any(c.isalpha() for c in body):
        return False
    if all(c in string.hexdigits for c in body):
        return _HEX.calculate_shannon_entropy(body) > _HEX.entropy_limit
    return _BASE64.calculate_shannon_entropy(body) > _BASE64.entropy_limit


def _key_spans(text: str) -> Iterator[Span]:
    for m in _PRIVATE_KEY.finditer(text):
        yield m.start(), m.end(), "private_key"
    for m in _EMAIL.finditer(text):
        yield m.start(), m.end(), "email"
    for m in _PREFIXED_KEY.finditer(text):
        yield m.start(), m.end(), RANDOM
    for start, end in _runs(text, _TOKEN_CHARS):
        token = text[start:end].rstrip(".")
        if len(token) < MIN_KEY_CHARS:
            continue
        if _looks_random(token) or any(
            True for detector in _provider_detectors() for _ in detector.analyze_string(token)
        ):
            yield start, start + len(token), RANDOM


# --- numbers with check digits: python-stdnum --------------------------------------------------------

#: digits, and the single spaces or dashes people group them with: "4111 1111-1111 1111"
_GROUPING = frozenset(" -")


def _digit_groups(text: str) -> Iterator[list[tuple[int, int]]]:
    """Each chain of digit groups joined by single spaces or dashes, as the groups' (start, end)."""
    chain: list[tuple[int, int]] = []
    for start, end in _runs(text, frozenset(string.digits)):
        if chain and not (start - chain[-1][1] == 1 and text[chain[-1][1]] in _GROUPING):
            yield chain
            chain = []
        chain.append((start, end))
    if chain:
        yield chain


def _checked_spans(text: str, chain: list[tuple[int, int]]) -> Iterator[Span]:
    """Within one chain, every stretch of whole groups that is a card, a resident id or a social security
    number. A card may sit inside a longer chain ("in 2023 4111 1111 1111 1111"), so each run of consecutive
    groups is tried, the longest valid one from each start kept."""
    covered_to = -1
    for i, (start, _) in enumerate(chain):
        if start < covered_to:
            continue
        digits, best = "", None
        for j in range(i, len(chain)):
            digits += text[chain[j][0] : chain[j][1]]
            if len(digits) > 19:
                break
            if 13 <= len(digits) <= 19 and luhn.is_valid(digits):
                best = (chain[j][1], "card_number")
            elif len(digits) == 9 and j == i + 2 and ssn.is_valid(text[start : chain[j][1]]):
                best = (chain[j][1], "ssn")
        if best is not None:
            covered_to = best[0]
            yield start, best[0], best[1]


def _resident_id_spans(text: str) -> Iterator[Span]:
    """18-character Chinese resident ids whose check character (a digit or X) is right."""
    for start, end in _runs(text, frozenset(string.digits + "Xx")):
        if end - start == 18 and ric.is_valid(text[start:end]):
            yield start, end, "id_number"


_ASCII_ALNUM = frozenset(string.ascii_letters + string.digits)
_IBAN_CHARS = _ASCII_ALNUM | {" "}


def _iban_spans(text: str) -> Iterator[Span]:
    """IBANs, compact or in groups of four: a country code, two check digits, then the account; the longest
    stretch from a country code that passes mod 97 is the IBAN."""
    for start, end in _runs(text, _IBAN_CHARS):
        i = start
        while i < end - 15:
            if (
                text[i : i + 2].isalpha()
                and text[i + 2 : i + 4].isdigit()
                and (i == 0 or text[i - 1] not in _ASCII_ALNUM)
            ):
                found = next(
                    (
                        stop
                        for stop in range(min(end, i + 42), i + 15, -1)
                        if not text[stop - 1].isspace()
                        and (stop == len(text) or text[stop] not in _ASCII_ALNUM)
                        and iban.is_valid(text[i:stop].upper())
                    ),
                    None,
                )
                if found is not None:
                    yield i, found, "iban"
                    i = found
                    continue
            i += 1


# --- phone numbers: phonenumbers ---------------------------------------------------------------------

#: national numbers (without "+") are read in these regions' plans, each with the digits a national number
#: has there as written (China: 11 with the trunk 0 or a mobile's 1; the US: 10); international ones anywhere
PHONE_REGIONS = {"CN": 11, "US": 10}
MAX_PHONE_DIGITS = 15
#: an international number ("+44 20 7946 0958") has at least this many digits besides its "+"
MIN_INTERNATIONAL_DIGITS = 8


def _phone_spans(text: str) -> Iterator[Span]:
    if sum(c.isdigit() for c in text) < MIN_INTERNATIONAL_DIGITS:
        return
    for region, national_digits in PHONE_REGIONS.items():
        for match in phonenumbers.PhoneNumberMatcher(
            text, region, leniency=phonenumbers.Leniency.STRICT_GROUPING
        ):
            digits = sum(c.isdigit() for c in match.raw_string)
            least = MIN_INTERNATIONAL_DIGITS if match.raw_string.startswith("+") else national_digits
            if least <= digits <= MAX_PHONE_DIGITS:
                yield match.start, match.end, "phone"


# --- redaction ---------------------------------------------------------------------------------------


def _spans(text: str) -> list[Span]:
    """Every secret's span, the most specific finding first where two cover the same characters."""
    spans = [*_key_spans(text), *_named_spans(text), *_iban_spans(text), *_resident_id_spans(text)]
    spans += _phone_spans(text)
    for chain in _digit_groups(text):
        spans += _checked_spans(text, chain)
    return spans


_MAX_PASSES = 4


def redact(text: str) -> Redacted:
    """Replace secrets and personal identifiers with ``[REDACTED:<finding>]`` markers.

    Passes repeat until nothing changes: a marker can open a new word boundary ("0000sk-…" becomes
    "[REDACTED:…]sk-…" once the digits go), so one pass is not always enough.
    """
    current, findings = strip_invisible(text), []
    for _ in range(_MAX_PASSES):
        spans = _spans(current)
        if not spans:
            break
        current, found = splice(current, spans, marker, weakest=RANDOM)
        findings += [f for f in found if f not in findings]
    return Redacted(text=current, findings=findings)
