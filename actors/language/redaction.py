"""What must never be stored: secrets and personal identifiers (redacted), and instructions aimed at future
prompts (flagged and neutralised). docs/trust.md#3-hostile-input.

``redact`` replaces each secret or identifier with a ``[REDACTED:<finding>]`` marker. Markers hold no digits,
so a redacted text can be scanned again without a marker itself looking like a number. Ordinary numbers
(ages, years, prices, short codes) are kept: a digit run is only removed when it has the shape of an
identifier — a checksum-valid resident ID, a Luhn-valid card number, a phone number.

``neutralize_injection`` always strips invisible and control characters (zero-width, bidi overrides, tag
characters — the usual ways to hide text from a reviewer), then looks for prompt-injection phrasing in
English and Chinese. Flagged text has the offending spans replaced by ``[FILTERED:<reason>]``; the extractor
refuses flagged turns outright.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Redacted:
    text: str
    findings: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Neutralized:
    text: str
    flagged: bool
    reasons: list[str] = field(default_factory=list)


def marker(finding: str) -> str:
    return f"[REDACTED:{finding}]"


def _splice(text: str, spans: list[tuple[int, int, str]]) -> str:
    """``text`` with each (start, end, replacement) applied; a span overlapping an earlier one is skipped."""
    pieces, last = [], 0
    for start, end, replacement in sorted(spans):
        if start < last:
            continue
        pieces += [text[last:start], replacement]
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


# --- invisible characters -------------------------------------------------------------------------

#: variation selectors 17–256 carry no glyph of their own and are used to smuggle bytes into text
_SMUGGLING_RANGES = ((0xE0100, 0xE01EF),)
_KEPT_CONTROLS = frozenset("\n\t")


def _is_invisible(ch: str) -> bool:
    if ch in _KEPT_CONTROLS:
        return False
    category = unicodedata.category(ch)
    if category in ("Cc", "Cf"):  # controls; format chars: zero-width, bidi overrides, tags, soft hyphen
        return True
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in _SMUGGLING_RANGES)


def strip_invisible(text: str) -> str:
    """Drop control and invisible format characters; keep newlines and tabs; turn CR into a newline."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.isascii() and text.isprintable():
        return text
    return "".join(ch for ch in text if not _is_invisible(ch))


# --- secrets and identifiers ----------------------------------------------------------------------

_ASCII_WORD_BEFORE = r"(?<![A-Za-z0-9])"
_SECRET_VALUE = r"[!-~]{4,}"  # one printable-ASCII run: what a password or key looks like when spoken


def _secret_like(value: str) -> bool:
    """A spoken key or token has digits or mixed case; "the token is representative" is not a secret."""
    return any(c.isdigit() for c in value) or (len(value) >= 20 and not value.islower())


#: (finding, pattern whose group 1 is the secret, which values count — None: any)
_KEYED_SECRETS: list[tuple[str, re.Pattern[str], Callable[[str], bool] | None]] = [
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
]

_SHAPED_SECRETS: list[tuple[str, re.Pattern[str]]] = [
    (
        "private_key",
        re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)"),
    ),
    ("api_key", re.compile(_ASCII_WORD_BEFORE + r"sk-[A-Za-z0-9_\-]{16,}")),
    ("api_key", re.compile(_ASCII_WORD_BEFORE + r"(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("api_key", re.compile(_ASCII_WORD_BEFORE + r"(?:AKIA|ASIA)[0-9A-Z]{16}")),
    (
        "api_key",
        re.compile(_ASCII_WORD_BEFORE + r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
    ),
    ("api_key", re.compile(_ASCII_WORD_BEFORE + r"xox[abprs]-[A-Za-z0-9-]{10,}")),
    ("api_key", re.compile(_ASCII_WORD_BEFORE + r"AIza[0-9A-Za-z_\-]{30,}")),
    ("api_key", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    # the look-behind starts a match only at a token's first character: no quadratic rescans of long runs
    (
        "email",
        re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"),
    ),
    ("ssn", re.compile(r"(?<!\d)\d{3}-\d{2}-\d{4}(?!\d)")),
]

#: long random-looking runs: 32+ hex with letters and digits, or 32+ base64 with upper, lower and digits
_LONG_TOKEN = re.compile(_ASCII_WORD_BEFORE + r"[A-Za-z0-9+/_\-]{32,}={0,2}")


def _looks_random(token: str) -> bool:
    body = token.rstrip("=")
    has_digit = any(c.isdigit() for c in body)
    if re.fullmatch(r"[0-9a-fA-F]+", body):
        return has_digit and any(c.isalpha() for c in body)
    return has_digit and any(c.isupper() for c in body) and any(c.islower() for c in body)


_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"
_CN_ID = re.compile(r"(?<![0-9A-Za-z])(\d{17}[\dXx])(?![0-9A-Za-z])")
_CN_ID_KEYWORD = re.compile(r"身份证(?:号码?)?|resident id|id (?:card )?number", re.IGNORECASE)


def cn_id_checksum_ok(number: str) -> bool:
    """GB 11643 (ISO 7064 MOD 11-2) check digit of an 18-character Chinese resident ID."""
    if len(number) != 18 or not number[:17].isdigit():
        return False
    total = sum(int(d) * w for d, w in zip(number[:17], _ID_WEIGHTS, strict=True))
    return _ID_CHECK[total % 11] == number[17].upper()


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


#: digit groups joined by single spaces or dashes: "4111 1111-1111 1111"
_DIGIT_CHAIN = re.compile(r"\d+(?:[ -]\d+)*")
_GROUP = re.compile(r"\d+")


def _card_spans(text: str) -> Iterator[tuple[int, int]]:
    """Every Luhn-valid 13–19 digit stretch that starts and ends on digit-group boundaries.

    A card may sit inside a longer chain ("in 2023 4111 1111 1111 1111"), so each run of consecutive groups
    is tried, not only the whole chain.
    """
    for chain in _DIGIT_CHAIN.finditer(text):
        groups = [
            (g.start() + chain.start(), g.end() + chain.start()) for g in _GROUP.finditer(chain.group())
        ]
        covered_to = -1
        for i, (start, _) in enumerate(groups):
            if start < covered_to:
                continue
            digits = ""
            best: int | None = None
            for j in range(i, len(groups)):
                digits += text[groups[j][0] : groups[j][1]]
                if len(digits) > 19:
                    break
                if len(digits) >= 13 and luhn_ok(digits):
                    best = groups[j][1]
            if best is not None:
                covered_to = best
                yield start, best


_PHONES = [
    re.compile(r"(?<![\d+])(?:\+?86[ -]?)?1[3-9]\d(?:[ -]?\d{4}){2}(?!\d)"),  # Chinese mobile
    re.compile(r"(?<![\d+])0\d{2,3}-\d{7,8}(?!\d)"),  # Chinese landline
    re.compile(r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{2,5}\)?){1,4}(?!\d)"),  # international, with country code
    re.compile(r"(?<!\d)\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}(?!\d)"),  # North American
]


def _phone_digit_count_ok(span: str) -> bool:
    return 8 <= sum(c.isdigit() for c in span) <= 15


class _Redactor:
    def __init__(self, text: str):
        self.text = text
        self.findings: list[str] = []

    def replace_spans(self, finding: str, spans: list[tuple[int, int]]) -> None:
        if not spans:
            return
        self.text = _splice(self.text, [(start, end, marker(finding)) for start, end in spans])
        if finding not in self.findings:
            self.findings.append(finding)

    def apply(
        self, finding: str, pattern: re.Pattern[str], keep: Callable[[str], bool] | None = None
    ) -> None:
        spans = [m.span() for m in pattern.finditer(self.text) if keep is None or keep(m.group())]
        self.replace_spans(finding, spans)


def _redact_keyed(
    redactor: _Redactor, finding: str, pattern: re.Pattern[str], keep: Callable[[str], bool] | None
) -> None:
    """Keyed secrets end at whitespace; a sentence's closing punctuation is not part of the secret."""
    spans = []
    for m in pattern.finditer(redactor.text):
        if m.group(1).startswith("[REDACTED") or (keep is not None and not keep(m.group(1))):
            continue
        start, end = m.span(1)
        while end > start + 1 and redactor.text[end - 1] in ".,;:!?)]}\"'”":
            end -= 1
        spans.append((start, end))
    redactor.replace_spans(finding, spans)


_MAX_PASSES = 4


def redact(text: str) -> Redacted:
    """Replace secrets and personal identifiers with ``[REDACTED:<finding>]`` markers.

    Passes repeat until nothing changes: a marker can open a new word boundary ("0000sk-…" becomes
    "[REDACTED:…]sk-…" once the digits go), so one pass is not always enough.
    """
    current, findings = strip_invisible(text), []
    for _ in range(_MAX_PASSES):
        r = _Redactor(current)
        _redact_pass(r)
        findings += [f for f in r.findings if f not in findings]
        if r.text == current:
            break
        current = r.text
    return Redacted(text=current, findings=findings)


def _redact_pass(r: _Redactor) -> None:
    for finding, pattern in _SHAPED_SECRETS:
        r.apply(finding, pattern)
    for finding, pattern, keep in _KEYED_SECRETS:
        _redact_keyed(r, finding, pattern, keep)
    r.apply("api_key", _LONG_TOKEN, keep=_looks_random)
    id_spans = [
        m.span(1)
        for m in _CN_ID.finditer(r.text)
        if cn_id_checksum_ok(m.group(1)) or _CN_ID_KEYWORD.search(r.text, max(0, m.start() - 12), m.start())
    ]
    r.replace_spans("id_number", id_spans)
    # phones first for the label; cards after, so no Luhn-valid stretch can survive a phone match
    for pattern in _PHONES:
        r.apply("phone", pattern, keep=_phone_digit_count_ok)
    r.replace_spans("card_number", list(_card_spans(r.text)))


# --- prompt injection -----------------------------------------------------------------------------

_INSTRUCTION_NOUNS = (
    r"(?:instructions?|prompts?|rules|directives?|guidelines|guardrails|constraints|context|programming)"
)
_INJECTIONS: list[tuple[str, re.Pattern[str]]] = [
    (
        "override_instructions",
        re.compile(
            r"\b(?:ignore|disregard|forget|override|bypass)\b\s+(?:(?:all|any|every|the|your|my|of|previous|"
            r"prior|above|earlier|preceding|former|existing|system|original|safety)\s+){0,4}"
            + _INSTRUCTION_NOUNS,
            re.IGNORECASE,
        ),
    ),
    (
        "role_reassignment",
        re.compile(
            r"\byou\s+are\s+now\b|\bfrom\s+now\s+on,?\s+you\s+(?:are|will|must|shall|should)\b|\b(?:act|"
            r"behave)\s+as\s+(?:an?\s+)?(?:unrestricted|unfiltered|jailbroken|evil|dan)\b|"
            r"\bpretend\s+(?:that\s+)?you(?:'re|\s+are)\b|\bdeveloper\s+mode\b|\bjailbreak\b|\bDAN\s+mode\b",
            re.IGNORECASE,
        ),
    ),
    (
        "system_prompt",
        re.compile(
            r"\bsystem\s+prompt\b|^\s*system\s*:|\bnew\s+(?:system\s+)?instructions?\s*:|\b(?:reveal|print|"
            r"show|repeat|leak)\s+(?:me\s+)?(?:your|the)\s+(?:system\s+prompt|instructions|prompt)",
            re.IGNORECASE | re.MULTILINE,
        ),
    ),
    (
        "role_tag",
        re.compile(
            r"<\|[a-z_]{2,30}\|>|\[/?INST\]|<<\s*/?SYS\s*>>|</?\s*(?:system|assistant|user|"
            r"instructions?)\s*>",
            re.IGNORECASE,
        ),
    ),
    (
        "instruction_header",
        re.compile(
            r"^\s*#{2,}\s*(?:instruction|system|response|assistant|user|prompt)s?\b", re.IGNORECASE | re.M
        ),
    ),
    (
        "override_instructions",
        re.compile(
            r"(?:忽略|无视|忘记|忘掉|跳过|绕过)(?:掉)?(?:你)?(?:之前|以上|上面|前面|先前|此前|原来|原有|所有|"
            r"全部|的|一切|系统)*(?:指令|指示|规则|提示词?|设定|约束|限制|要求)"
        ),
    ),
    (
        "role_reassignment",
        re.compile(
            r"你现在(?:的身份)?是(?:一个|一名|一位)|(?:请|你要|你必须)扮演|从现在(?:开始|起)[，,]?你(?:是|要|"
            r"必须|将)|(?:进入|开启)(?:开发者|越狱)模式"
        ),
    ),
    (
        "system_prompt",
        re.compile(r"系统提示词?|新的指令[:：]|(?:输出|泄露|打印|告诉我)(?:你的)?(?:系统)?(?:提示词|指令)"),
    ),
]


def neutralize_injection(text: str) -> Neutralized:
    """Strip invisible characters; flag and defuse text that tries to instruct a future model."""
    clean = strip_invisible(text)
    # match on a width/case-folded copy so "ｉｇｎｏｒｅ" or "IGNORE" cannot slip past; spans are mapped back
    # only when folding kept the length, otherwise the whole text is withheld
    folded = unicodedata.normalize("NFKC", clean)
    same_shape = len(folded) == len(clean)
    spans = [
        (*m.span(), f"[FILTERED:{reason}]")
        for reason, pattern in _INJECTIONS
        for m in pattern.finditer(folded)
    ]
    reasons = list(dict.fromkeys(label[10:-1] for _, _, label in spans))
    if not reasons:
        return Neutralized(text=clean, flagged=False, reasons=[])
    if not same_shape:
        return Neutralized(text=f"[FILTERED:{reasons[0]}]", flagged=True, reasons=reasons)
    return Neutralized(text=_splice(clean, spans), flagged=True, reasons=reasons)
