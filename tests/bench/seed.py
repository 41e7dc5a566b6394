"""Bulk seeding for ``bench_service.py``: the history that N writes per user would leave, written straight
into SQL and Milvus, because embedding a million sentences through the API would take hours here.

* A pool of distinct English and Chinese sentences (templates × fillers) is embedded once with the real E5
  model and cached as ``.npy``. Items reuse pool sentences and their vectors: a user's active items are
  distinct sentences; when a user holds more items than the pool has sentences, repeats get a ``[n]``
  suffix (new text, new hash, the same vector).
* Each user gets the gates' layout (``layout_for``): ≤50 frozen core, ≤200 pending working, ≤1000
  confirmed long-term, the rest archived — what 10k writes per user would leave.
* SQL rows go in with Core ``executemany`` (no gate, no audit rows); Milvus rows with plain ``insert`` into
  the tenant's partition of a collection created by ``MilvusIndex`` (same schema and index as the service).
  Milvus is served during seeding with a large memtable so the data lands in a few big segments.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import random
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from pymilvus import MilvusClient
from sqlalchemy import insert

from actors.core.memory import MemoryItem
from actors.store.sql.engine import build_engine
from actors.store.sql.mapping import ITEM_FIELDS
from actors.store.sql.store import MemoryStore
from actors.store.sql.tables import MemoryItemRow
from actors.store.vectors.filters import partition_name
from actors.store.vectors.milvus import MilvusIndex
from localstack.milvus import MEMTABLE_LIMIT_ENV, MilvusLiteServer
from schemas.enums import Kind, Layer, Source, State
from schemas.settings import Capacities, HermesSettings

DIM = 384
SQL_BATCH = 5000
MILVUS_BATCH = 5000
#: seeding memtable: ~80k rows per flush instead of the service's ~150
#: (see localstack.milvus)
SEED_MEMTABLE_BYTES = 128 * 1024 * 1024
HISTORY_DAYS = 180

#: '|'-separated fillers, crossed with every template that names them
_FILLERS = {
    "food": "sushi|hot pot|ramen|dumplings|tacos|curry|pizza|pho|bibimbap|falafel|paella|dim sum|noodles|"
    "barbecue|salad|steak|tofu|oysters",
    "place": "Kyoto|Lisbon|Chengdu|Hangzhou|Oslo|Hanoi|Seattle|Istanbul|Busan|Marrakesh|Tallinn|Cusco|Yunnan|"
    "Sicily|Vancouver|Tbilisi",
    "hobby": "hiking|painting|chess|cycling|baking|photography|climbing|knitting|gardening|swimming|"
    "calligraphy|running|fishing|yoga|pottery|surfing",
    "person": "my sister|my colleague Bob|my neighbour|my old roommate|my manager|my cousin|my son|my wife|"
    "a friend from school|my trainer",
    "day": "on Monday|last weekend|yesterday|in March|after work|on my birthday|during the holidays|"
    "this morning",
}
_ZH_FILLERS = {
    "food": "火锅|饺子|拉面|烤鸭|小笼包|麻辣烫|寿司|炒饭|米线|烧烤|豆腐|粥",
    "place": "杭州|成都|大理|青岛|西安|厦门|苏州|桂林|拉萨|哈尔滨|三亚|重庆",
    "hobby": "爬山|画画|下棋|骑车|烘焙|摄影|游泳|跑步|书法|钓鱼|瑜伽|弹吉他",
    "person": "我姐姐|同事小王|邻居|大学室友|我老板|表弟|我儿子|我太太",
    "day": "周一|上周末|昨天|三月份|下班后|生日那天|放假的时候|今天早上",
}
#: (template, kind, slot or None)
_TEMPLATES: list[tuple[str, Kind, str | None]] = [
    ("I really like {food}.", Kind.PREFERENCE, "preference.food"),
    ("I had {food} with {person} {day}.", Kind.EVENT, None),
    ("I want to travel to {place} next year.", Kind.PREFERENCE, "preference.travel"),
    ("I went {hobby} in {place} {day}.", Kind.EVENT, None),
    ("I have been into {hobby} lately.", Kind.PREFERENCE, "preference.hobby"),
    ("{person} recommended {food} in {place}.", Kind.RELATION, None),
    ("I do {hobby} with {person} most weekends.", Kind.PREFERENCE, "preference.hobby"),
    ("I don't enjoy {food} anymore.", Kind.PREFERENCE, "preference.food"),
    ("Plan: visit {place} with {person}.", Kind.EVENT, "task.plan"),
    ("Lesson: {hobby} {day} was too tiring.", Kind.LESSON, "task.lesson"),
    ("我很喜欢吃{food}。", Kind.PREFERENCE, "preference.food"),
    ("{day}和{person}一起去{place}吃了{food}。", Kind.EVENT, None),
    ("我最近迷上了{hobby}。", Kind.PREFERENCE, "preference.hobby"),
    ("明年想去{place}旅行。", Kind.PREFERENCE, "preference.travel"),
    ("{day}在{place}{hobby}。", Kind.EVENT, None),
    ("{person}推荐了{place}的{food}。", Kind.RELATION, None),
]


@dataclass(frozen=True, slots=True)
class PoolSentence:
    text: str
    kind: Kind
    slot: str | None
    value: str | None


def _fill(template: str, fillers: dict[str, str]) -> Iterator[tuple[str, str | None]]:
    names = [name for name in fillers if "{" + name + "}" in template]
    for combo in itertools.product(*(fillers[name].split("|") for name in names)):
        chosen = dict(zip(names, combo, strict=True))
        value = chosen.get("food") or chosen.get("hobby") or chosen.get("place")
        yield template.format(**chosen), value


def sentence_pool(size: int, seed: int = 7) -> list[PoolSentence]:
    """``size`` distinct sentences, the same for the same arguments; languages and templates interleaved."""
    streams = []
    for template, kind, slot in _TEMPLATES:
        fillers = _ZH_FILLERS if not template.isascii() else _FILLERS
        combos = list(_fill(template, fillers))
        random.Random(f"{seed}:{template}").shuffle(combos)
        streams.append(
            [PoolSentence(text, kind, slot, value.lower() if slot else None) for text, value in combos]
        )
    pool: list[PoolSentence] = []
    for row in itertools.zip_longest(*streams):
        pool.extend(s for s in row if s is not None)
        if len(pool) >= size:
            return pool[:size]
    raise ValueError(f"the templates give only {len(pool)} distinct sentences, {size} asked")


def pool_vectors(pool: list[PoolSentence], cache_dir: Path) -> tuple[np.ndarray, float | None]:
    """E5 passage vectors of the pool, cached by content; returns them and the embedding rate (sentences/s,
    None when they came from the cache)."""
    digest = hashlib.sha256("\n".join(s.text for s in pool).encode()).hexdigest()[:16]
    cached = cache_dir / f"pool-{len(pool)}-{digest}.npy"
    if cached.exists():
        return np.load(cached), None
    from actors.adapters.embedding import E5Embedder

    embedder = E5Embedder()
    started = time.perf_counter()
    vectors = np.vstack(
        [embedder.embed_passages([s.text for s in pool[i : i + 64]]) for i in range(0, len(pool), 64)]
    )
    rate = len(pool) / (time.perf_counter() - started)
    cache_dir.mkdir(parents=True, exist_ok=True)
    np.save(cached, vectors.astype(np.float32))
    return vectors.astype(np.float32), rate


@dataclass(frozen=True, slots=True)
class Layout:
    core: int
    working: int
    longterm: int
    archive: int


def layout_for(items: int, capacities: Capacities) -> Layout:
    """Where ``items`` writes end up: a few frozen facts, working full first (new items enter there), then
    long-term (what overflow promotes), the rest evicted to the archive."""
    core = min(capacities.core, capacities.frozen_limit, max(1, items // 25))
    working = min(capacities.working, items - core)
    longterm = min(capacities.longterm, items - core - working)
    return Layout(core, working, longterm, items - core - working - longterm)


@dataclass
class SeedReport:
    rows: int = 0
    sql_seconds: float = 0.0
    milvus_seconds: float = 0.0
    api_keys: dict[str, str] = field(default_factory=dict)


def _user_items(
    tenant_id: str, user_id: str, layout: Layout, pool: list[PoolSentence], rng: random.Random, now: datetime
) -> Iterator[tuple[MemoryItem, int]]:
    """The user's items with the pool index of their sentence, oldest (archived) first."""
    order = list(range(len(pool)))
    rng.shuffle(order)
    tiers = [
        (Layer.ARCHIVE, State.ARCHIVED, layout.archive),
        (Layer.LONGTERM, State.CONFIRMED, layout.longterm),
        (Layer.WORKING, State.PENDING, layout.working),
        (Layer.CORE, State.FROZEN, layout.core),
    ]
    # the active tiers take distinct sentences: they come last in ``order``'s first pass
    total = sum(count for *_, count in tiers)
    position = 0
    for layer, state, count in tiers:
        for _ in range(count):
            cycle, slot_index = divmod(total - 1 - position, len(pool))
            index = order[slot_index]
            sentence = pool[index]
            text = sentence.text if cycle == 0 else f"{sentence.text} [{cycle + 1}]"
            age_days = HISTORY_DAYS * (1 - position / total)
            created = now - timedelta(days=age_days, seconds=rng.random() * 3600)
            session = f"s{int(age_days * 2)}"
            sessions = [session] if state is State.PENDING else [session, f"{session}b", f"{session}c"]
            yield (
                MemoryItem(
                    tenant_id=tenant_id,
                    user_id=user_id,
                    content=text,
                    kind=sentence.kind,
                    layer=layer,
                    state=state,
                    slot=sentence.slot,
                    value=sentence.value,
                    importance=round(0.5 + 0.45 * rng.random(), 3),
                    confidence=round(0.6 + 0.35 * rng.random(), 3),
                    decay_score=0.5,
                    write_score=0.7,
                    access_count=rng.randrange(4),
                    source=Source.USER_DECLARED,
                    source_session_id=session,
                    source_dialog_ids=[f"{session}-d{position % 7}"],
                    confirmed_sessions=sessions,
                    created_at=created,
                    updated_at=created,
                    last_accessed_at=created,
                    frozen_at=created if state is State.FROZEN else None,
                    archived_at=created + timedelta(days=1) if state is State.ARCHIVED else None,
                    # the two turns said before it (``MemoryItem.context``), each as long as a LoCoMo turn
                    # (about 150 characters: five of the pool's sentences)
                    context="\n".join(
                        " ".join(
                            pool[order[(slot_index - 5 * turn - n) % len(pool)]].text for n in range(1, 6)
                        )
                        for turn in (1, 0)
                    ),
                ),
                index,
            )
            position += 1


def seed_tenant(
    settings: HermesSettings,
    tenant_id: str,
    user_ids: list[str],
    items_per_user: int,
    pool: list[PoolSentence],
    vectors: np.ndarray,
    *,
    seed: int = 11,
    progress=print,
) -> SeedReport:
    """Create the tenant (its API key is in the report) and bulk-load every user's history."""
    report = SeedReport()
    store = MemoryStore.from_settings(settings)
    store.create_schema()
    report.api_keys[tenant_id] = store.tenants.create(tenant_id, "benchmark tenant")
    store.dispose()
    layout = layout_for(items_per_user, settings.policy.capacities)
    engine = build_engine(settings.resolved_sql_url())
    milvus = MilvusClient(uri=settings.milvus_uri, timeout=120)
    MilvusIndex(settings.milvus_uri, settings.milvus_collection, DIM).ensure_tenant(tenant_id)
    partition = partition_name(tenant_id)
    rng = random.Random(seed)
    now = datetime.now(UTC)
    background = ThreadPoolExecutor(max_workers=1)
    rows: list[dict] = []
    entities: list[dict] = []
    started = time.perf_counter()
    # Milvus inserts run in a thread, overlapping the SQL inserts (the server is another process)
    inserting: Future[None] | None = None

    def insert_vectors(batch: list[dict]) -> None:
        t0 = time.perf_counter()
        milvus.insert(settings.milvus_collection, batch, partition_name=partition)
        report.milvus_seconds += time.perf_counter() - t0

    def flush() -> None:
        nonlocal inserting
        if inserting is not None:
            inserting.result()
        if entities:
            inserting = background.submit(insert_vectors, list(entities))
        if rows:
            t0 = time.perf_counter()
            with engine.begin() as connection:
                connection.execute(insert(MemoryItemRow.__table__), rows)
            report.sql_seconds += time.perf_counter() - t0
        report.rows += len(rows)
        rows.clear()
        entities.clear()

    for number, user_id in enumerate(user_ids, 1):
        for item, index in _user_items(tenant_id, user_id, layout, pool, rng, now):
            vector = vectors[index]
            item.embedding = vector.tobytes()
            record = {name: getattr(item, name) for name in ITEM_FIELDS}
            rows.append(record)
            entities.append(
                {
                    "memory_id": item.memory_id,
                    "user_id": user_id,
                    "layer": item.layer.value,
                    "state": item.state.value,
                    "vector": vector,
                }
            )
            if len(rows) >= SQL_BATCH:
                flush()
        if number % max(1, len(user_ids) // 10) == 0:
            progress(
                f"  seeded {number}/{len(user_ids)} users of {tenant_id} ({report.rows + len(rows)} rows, "
                f"{time.perf_counter() - started:.0f}s)"
            )
    flush()
    if inserting is not None:
        inserting.result()
    background.shutdown()
    milvus.close()
    engine.dispose()
    store = MemoryStore.from_settings(settings)
    store.database.refresh_statistics()  # as a big import does: else the planner takes the table for empty
    store.dispose()
    return report


class SeedingMilvus:
    """The stack's milvus-lite data dir served with a large memtable while seeding, then stopped (the stack
    serves it again with its own settings)."""

    def __init__(self, data_dir: Path):
        self._server = MilvusLiteServer(data_dir)

    def __enter__(self) -> str:
        previous = os.environ.get(MEMTABLE_LIMIT_ENV)
        os.environ[MEMTABLE_LIMIT_ENV] = str(SEED_MEMTABLE_BYTES)
        try:
            self._server.start(timeout=120)
        finally:
            if previous is None:
                os.environ.pop(MEMTABLE_LIMIT_ENV)
            else:
                os.environ[MEMTABLE_LIMIT_ENV] = previous
        return self._server.uri

    def __exit__(self, *exc_info: object) -> None:
        self._server.stop(timeout=300)


def flush_collection(uri: str, collection: str) -> None:
    """Seal the memtable into segments: milvus-lite searches unflushed rows by brute force in Python."""
    client = MilvusClient(uri=uri, timeout=900)
    try:
        client.flush(collection, timeout=900)
    finally:
        client.close()
