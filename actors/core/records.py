"""What the core answers with, beside the memory records of ``memory.py``: the USER profile
(``actors.core.profile``), the session-start context (``actors.core.context``) and the cohort features a
cold-start context may show. Plain dataclasses: the application layer maps them to the API models
(``actors.app.responses``), the SQL store reads and writes cohort features as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from actors.core.relations import Edge
from schemas.enums import Polarity, State

# ------------------------------------------------------------------------------------------- profile


@dataclass(frozen=True, slots=True)
class SlotConclusion:
    """One value of a profile slot and the memories behind it (a current conclusion, or a past value)."""

    #: the canonical value, the same in every language ("chengdu"): what restatements are matched on
    value: str
    #: the value in the user's own words ("成都" for one who wrote 成都)
    display: str
    polarity: Polarity
    #: support from the backing memories, lowered by each contradicting claim
    confidence: float
    #: the backing memory ids, oldest first
    memory_ids: list[str]
    #: when the value was last stated (for history: when it stopped being current)
    updated_at: datetime
    #: ranking weight among a slot's values: confidence × recency × negative priority
    weight: float = 0.0
    state: State | None = None
    frozen: bool = False
    #: distinct sessions that stated the value
    sessions: int = 0
    first_stated_at: datetime | None = None
    #: memory ids of active claims that contradict this value (flagged, not resolved)
    contested_by: list[str] = field(default_factory=list)
    #: history only: the memory that replaced this value
    superseded_by: str | None = None


@dataclass(frozen=True, slots=True)
class ProfileSlot:
    slot: str
    label: str
    single_valued: bool
    #: the slot's confidence: one conflicting memory lowers it, it does not flip the conclusion
    confidence: float
    #: heaviest first; a single-valued slot has exactly one
    conclusions: list[SlotConclusion]
    #: superseded values, newest first
    history: list[SlotConclusion] = field(default_factory=list)
    #: basic | preference | style | relation | task
    group: str = ""


@dataclass(frozen=True, slots=True)
class CurrentState:
    """A temporary state (mood, current focus): working memory only, never a profile conclusion."""

    slot: str
    value: str | None
    #: the state in the user's words: the word they used for it (感冒 for "sick"), else their sentence
    display: str | None
    content: str
    memory_id: str
    stated_at: datetime


@dataclass(frozen=True, slots=True)
class Profile:
    user_id: str
    slots: list[ProfileSlot]
    #: the entity edges the memories link (``user –colleague→ Bob``)
    relations: list[Edge] = field(default_factory=list)
    #: the current temporary state, newest per ``state.*`` slot
    state: list[CurrentState] = field(default_factory=list)
    generated_at: datetime | None = None


# ----------------------------------------------------------------------------------- session context


@dataclass(frozen=True, slots=True)
class SessionContextSnapshot:
    """The session-start context as rendered: stored once per session, so byte-identical afterwards."""

    session_id: str
    created_at: datetime
    #: the snapshot handed to the model
    text: str
    #: Hermes Agent's MEMORY block (entries joined by ``"\\n§\\n"``)
    memory_block: str
    #: Hermes Agent's USER block
    user_block: str
    #: section name → its rendered body
    sections: dict[str, str]


@dataclass(frozen=True, slots=True)
class CohortFeature:
    """A value many of a tenant's users hold (``jobs.group_profiles``), shown to users with no profile yet."""

    slot: str
    polarity: Polarity
    value: str
    users: int
    cohort_size: int
    share: float
