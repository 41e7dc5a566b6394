"""Reading a LoCoMo-format file for the evaluation, touching only what a memory system may see.

A LoCoMo sample holds ``conversation`` (speakers, ``session_N`` turn lists, ``session_N_date_time``) and
``qa`` (questions). The reader takes each question's text and category and nothing else: the ``answer``,
``evidence``, ``observation``, ``event_summary`` and ``session_summary`` fields are never read here (the
scorer in ``evaluation.metrics`` reads ``evidence`` on its own, after ranking), so the ranking cannot peek
at what it is graded on, and a file stripped of those fields runs the same.

Both speakers' turns are utterances of one user (a LoCoMo conversation is one memory owner). The speaker's
name leads every turn (``"Caroline: I went to …"``): questions are asked in the third person, turns are
spoken in the first, and the name is what ties them. A shared photo's caption is part of what was said.
The memory system and the baselines read the same ``Utterance.text``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

_SESSION_KEY = re.compile(r"^session_(\d+)$")
_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%d %B, %Y", "%d %B %Y", "%Y-%m-%d")
#: turns of one session are spaced this far apart, so their order survives as time order
TURN_SPACING = timedelta(seconds=30)


@dataclass(frozen=True, slots=True)
class Utterance:
    dia_id: str
    speaker: str
    text: str
    at: datetime


@dataclass(frozen=True, slots=True)
class Session:
    number: int
    at: datetime
    utterances: tuple[Utterance, ...]


@dataclass(frozen=True, slots=True)
class Question:
    sample_id: str
    index: int
    text: str
    category: int | None


@dataclass(frozen=True, slots=True)
class Conversation:
    sample_id: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    @property
    def utterances(self) -> list[Utterance]:
        return [u for s in self.sessions for u in s.utterances]

    @property
    def ended_at(self) -> datetime:
        return max(u.at for u in self.utterances) if self.utterances else datetime(2000, 1, 1, tzinfo=UTC)


def parse_session_date(text: str | None) -> datetime | None:
    if not text:
        return None
    cleaned = " ".join(str(text).split())
    for pattern in _DATE_FORMATS:
        try:
            return datetime.strptime(cleaned, pattern).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def utterance_text(turn: dict) -> str:
    text = " ".join(str(turn.get("text", "")).split())
    caption = turn.get("blip_caption")
    if caption:
        text = f"{text} [shares a photo: {' '.join(str(caption).split())}]".strip()
    return f"{turn.get('speaker', 'someone')}: {text}"


def _sessions(conversation: dict) -> tuple[Session, ...]:
    numbered = sorted(
        (int(m.group(1)), turns)
        for key, turns in conversation.items()
        if (m := _SESSION_KEY.match(key)) and isinstance(turns, list)
    )
    sessions: list[Session] = []
    previous = datetime(2000, 1, 1, tzinfo=UTC)
    for number, turns in numbered:
        # an undated session follows the one before it
        start = parse_session_date(conversation.get(f"session_{number}_date_time")) or previous + timedelta(
            days=1
        )
        utterances = tuple(
            Utterance(
                dia_id=str(t["dia_id"]),
                speaker=str(t.get("speaker", "")),
                text=utterance_text(t),
                at=start + n * TURN_SPACING,
            )
            for n, t in enumerate(turns)
            if t.get("dia_id") and str(t.get("text", "")).strip()
        )
        if utterances:
            sessions.append(Session(number=number, at=start, utterances=utterances))
            previous = start
    return tuple(sessions)


def _questions(sample_id: str, qa: list[dict]) -> tuple[Question, ...]:
    # only "question" and "category" are read: see the module docstring
    return tuple(
        Question(sample_id=sample_id, index=n, text=str(q["question"]), category=_category(q.get("category")))
        for n, q in enumerate(qa)
    )


def _category(value: object) -> int | None:
    try:
        return int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return None


def load_conversations(path: Path) -> list[Conversation]:
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    samples = raw if isinstance(raw, list) else [raw]
    return [
        Conversation(
            sample_id=str(sample["sample_id"]),
            sessions=_sessions(sample["conversation"]),
            questions=_questions(str(sample["sample_id"]), sample.get("qa") or []),
        )
        for sample in samples
    ]
