"""Prompt injection: text that tries to instruct a future prompt, in English and Chinese
(docs/trust.md#3-hostile-input).

``neutralize_injection`` always strips invisible and control characters (``invisible``), then looks for
prompt-injection phrasing. Flagged text has the offending spans replaced by ``[FILTERED:<reason>]``; the
extractor refuses flagged turns outright.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from actors.language.safety.invisible import strip_invisible
from actors.language.safety.spans import splice


@dataclass(frozen=True, slots=True)
class Neutralized:
    text: str
    flagged: bool
    reasons: list[str] = field(default_factory=list)


def filtered(reason: str) -> str:
    return f"[FILTERED:{reason}]"


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
    spans = [(*m.span(), reason) for reason, pattern in _INJECTIONS for m in pattern.finditer(folded)]
    reasons = list(dict.fromkeys(reason for _, _, reason in spans))
    if not reasons:
        return Neutralized(text=clean, flagged=False, reasons=[])
    if len(folded) != len(clean):
        return Neutralized(text=filtered(reasons[0]), flagged=True, reasons=reasons)
    return Neutralized(text=splice(clean, spans, filtered)[0], flagged=True, reasons=reasons)
