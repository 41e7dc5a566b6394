"""The session-start context snapshot (SPEC §7): frozen core items in templated short form, long-term items
by slot with dates, recent summaries, temporary state — inside a hard character budget split about
35 / 40 / 20 / 5 — plus Hermes-compatible ``USER`` (≤ 1375 chars) and ``MEMORY`` (≤ 2200 chars) blocks.

A user with no profile yet (cold start) may get the tenant's cohort features instead, in the profile's
share of the budget, under a header saying they are common among the app's users and not known about this
user; they appear in neither the USER nor the MEMORY block, and are never the user's memory.

The caller stores the rendered snapshot once per session and hands back the stored bytes on every later
turn, so it stays byte-identical for the session (an LLM prefix cache stays valid).
"""

from collections.abc import Iterable, Sequence
from datetime import datetime

from actors.memory import MemoryItem
from actors.slots import spec
from actors.store.sql_jobs import CohortFeature
from schemas import api
from schemas.enums import Kind, Layer, Polarity
from schemas.settings import GatePolicy

BUDGET_SPLIT = {"core": 0.35, "profile": 0.40, "recent": 0.20, "state": 0.05}


def display_value(value: str) -> str:
    return value.title() if value.isascii() else value


def template(item: MemoryItem) -> str:
    """``residence: Suzhou``; an item without a slot value keeps the user's words."""
    slot_spec = spec(item.slot)
    if slot_spec is None or not item.value:
        return item.content
    shown = display_value(item.value)
    return f"{slot_spec.label}: {'not ' if item.polarity is Polarity.NEGATIVE else ''}{shown}"


def fit(lines: Iterable[str], limit: int) -> str:
    """Whole lines while they fit; a single over-long line is cut with an ellipsis."""
    kept: list[str] = []
    used = 0
    for line in lines:
        cost = len(line) + (1 if kept else 0)
        if used + cost <= limit:
            kept.append(line)
            used += cost
        elif not kept and limit > 1:
            kept.append(line[: limit - 1] + "…")
            break
        else:
            break
    return "\n".join(kept)


def _dated(item: MemoryItem) -> str:
    return f"- [{item.updated_at:%Y-%m-%d}] {item.content}"


def _by_value(items: list[MemoryItem]) -> list[MemoryItem]:
    return sorted(items, key=lambda i: (-(i.importance * i.confidence), i.memory_id))


def cohort_lines(cohort: Sequence[CohortFeature]) -> list[str]:
    """``- music: Jazz (62% of users)``, most widely shared first."""
    lines = []
    for feature in cohort:
        slot_spec = spec(feature.slot)
        label = slot_spec.label if slot_spec else feature.slot
        negation = "not " if feature.polarity is Polarity.NEGATIVE else ""
        lines.append(f"- {label}: {negation}{display_value(feature.value)} ({feature.share:.0%} of users)")
    return lines


def render_session_context(
    active: list[MemoryItem],
    policy: GatePolicy,
    session_id: str,
    now: datetime,
    budget_chars: int | None = None,
    cohort: Sequence[CohortFeature] = (),
) -> api.SessionContext:
    budget = budget_chars or policy.context_budget_chars
    frozen = sorted((i for i in active if i.is_frozen), key=lambda i: (i.slot or "~", i.memory_id))
    profile = [i for i in active if i.layer is Layer.LONGTERM and i.kind is not Kind.STATE]
    states = sorted((i for i in active if i.kind is Kind.STATE), key=lambda i: i.created_at, reverse=True)
    recent = sorted(
        (i for i in active if i.layer is Layer.WORKING and i.kind is not Kind.STATE),
        key=lambda i: (not i.merged_from, -i.created_at.timestamp(), i.memory_id),
    )
    core_lines = [f"- {template(i)}" for i in frozen]
    profile_lines = [
        f"- [{i.updated_at:%Y-%m-%d}] {(spec(i.slot).label + ': ') if spec(i.slot) else ''}{i.content}"
        for i in sorted(_by_value(profile), key=lambda i: i.slot or "~")
    ]
    recent_lines = [_dated(i) for i in recent]
    state_lines = [f"- {i.content}" for i in states[:3]]
    sections = {
        "core": fit(core_lines, int(budget * BUDGET_SPLIT["core"])),
        "profile": fit(profile_lines, int(budget * BUDGET_SPLIT["profile"])),
    }
    if cohort and not (core_lines or profile_lines):  # cold start: the profile's share goes to the cohort
        sections["cohort"] = fit(cohort_lines(cohort), int(budget * BUDGET_SPLIT["profile"]))
    sections["recent"] = fit(recent_lines, int(budget * BUDGET_SPLIT["recent"]))
    sections["state"] = fit(state_lines, int(budget * BUDGET_SPLIT["state"]))
    headers = {
        "core": "# Core facts",
        "profile": "# Profile",
        "recent": "# Recent",
        "state": "# Current state",
        "cohort": "# Common among this app's users (cohort-derived: not known about this user)",
    }
    parts = [f"{headers[name]}\n{body}" for name, body in sections.items() if body]
    text = fit("\n\n".join(parts).split("\n"), budget)
    user_block = fit(core_lines + [line for line in profile_lines if "] " in line], policy.user_block_chars)
    memory_block = fit(recent_lines + profile_lines, policy.memory_block_chars)
    return api.SessionContext(
        session_id=session_id,
        created_at=now,
        text=text,
        memory_block=memory_block,
        user_block=user_block,
        sections=sections,
    )
