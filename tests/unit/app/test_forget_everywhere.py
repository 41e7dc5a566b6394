"""Forget means gone (docs/trust.md#4-erasure): forgetting one memory removes its words from every place
they live — the item, its siblings' turn texts (active and archived), the summaries that merged it, the
audit payloads, the rendered snapshots, the recall structures — checked in every SQL row and in the raw
bytes of the SQLite file and its write-ahead log."""

import pytest
from sqlalchemy import create_engine, select

from actors.adapters.embedding import HashEmbedder
from actors.app.service import UserMemoryService
from actors.store.sql.store import MemoryStore
from actors.store.sql.tables import Base
from schemas import api
from schemas.enums import State
from schemas.settings import Capacities, GatePolicy


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "h.db"
    store = MemoryStore(f"sqlite:///{path}")
    store.create_schema()
    store.tenants.create("acme")
    yield store, path
    store.dispose()


def service(store, **capacities):
    policy = GatePolicy(capacities=Capacities(**capacities)) if capacities else GatePolicy()
    return UserMemoryService("acme", "alice", store=store, embedder=HashEmbedder(64), policy=policy)


def say(svc, session, *texts):
    turns = [api.TurnIn(text=t, dialog_id=f"{session}-{n}") for n, t in enumerate(texts)]
    return svc.writes.write_turns(api.WriteTurnsRequest(session_id=session, turns=turns))


def traces(store, path, needles):
    """Every place a needle is left: any column of any row, and the raw database file and its WAL."""
    found = []
    engine = create_engine(store.url if hasattr(store, "url") else f"sqlite:///{path}")
    with engine.connect() as connection:
        for table in Base.metadata.sorted_tables:
            for row in connection.execute(select(table)):
                found += [f"{table.name}: {n}" for n in needles if n in repr(tuple(row))]
    engine.dispose()
    for file in (path, path.with_name(path.name + "-wal")):
        if file.exists():
            data = file.read_bytes()
            found += [f"{file.name}: {n}" for n in needles if n.encode() in data]
    return found


def memory_with(svc, words):
    return next(i for i in svc.work.engine.items.values() if words in i.content)


@pytest.mark.parametrize(
    "turn, forgotten, kept",
    [
        ("I broke my wrist skiing in March and I love opera.", "wrist", "opera"),
        ("Remember this: my locker code word is tangerine, and I love opera.", "tangerine", "opera"),
        ("我上个月在滑雪时摔断了手腕，我喜欢听歌剧", "手腕", "歌剧"),
    ],
)
def test_forgetting_one_clause_of_a_turn_leaves_its_words_nowhere(db, turn, forgotten, kept):
    store, path = db
    svc = service(store)
    say(svc, "s1", turn)
    svc.sessions.start(api.StartSessionRequest(session_id="s2"))  # a rendered snapshot quoting both
    gone, stays = memory_with(svc, forgotten), memory_with(svc, kept)
    assert forgotten in (stays.source_text or "")  # the turn text it keeps for recall quotes the sibling
    result = svc.memories.forget(gone.memory_id, api.ForgetRequest(reason="user asked"))
    assert result.forgotten and result.detail.startswith("forgotten everywhere")
    assert traces(store, path, [forgotten]) == []
    left = svc.memories.item(stays.memory_id)
    assert kept in left.content and forgotten not in (left.source_text or "")
    hits = svc.recalls.recall(api.RecallRequest(query=forgotten, k=10)).hits
    assert all(forgotten not in h.memory.content for h in hits)


def test_an_archived_sibling_loses_the_forgotten_words_too(db):
    store, path = db
    svc = service(store)
    say(svc, "s1", "I broke my wrist skiing in March and I love opera.")
    stays = memory_with(svc, "opera")
    svc.work.engine.bounded.archive(stays, "user", "test: archived sibling")
    svc.work.commit(svc.work.engine.drain())
    assert store.memories.get("acme", "alice", stays.memory_id).state is State.ARCHIVED
    svc.memories.forget(memory_with(svc, "wrist").memory_id, api.ForgetRequest(reason="user asked"))
    assert traces(store, path, ["wrist"]) == []
    assert store.memories.get("acme", "alice", stays.memory_id).state is State.ARCHIVED


def test_a_merged_summary_is_forgotten_with_its_source_and_its_other_sources(db):
    store, path = db
    svc = service(store, working=3)
    foods = ["sourdough", "kimchi", "gazpacho", "tamales"]
    for n, food in enumerate(foods):
        say(svc, f"s{n}", f"I love eating {food}")
    summaries = [i for i in svc.work.engine.items.values() if i.merged_from]
    assert summaries, "working overflow merged the same-slot items"
    summary = summaries[0]
    source = store.memories.get("acme", "alice", summary.merged_from[0])
    merged_words = [w for w in foods if w in summary.content]
    result = svc.memories.forget(source.memory_id, api.ForgetRequest(reason="user asked"))
    assert summary.memory_id in result.also_forgotten
    assert traces(store, path, merged_words) == []
    assert all(not i.merged_from for i in svc.work.engine.items.values())


@pytest.mark.parametrize("per_request", [False, True], ids=["one request", "one turn per request"])
@pytest.mark.parametrize(
    "said, forgotten",
    [
        ("Remember this: my locker code word is tangerine.", "tangerine"),
        ("I broke my wrist skiing in March.", "wrist"),
        ("我上个月在滑雪时摔断了手腕。", "手腕"),
    ],
)
def test_a_forgotten_memory_leaves_no_word_in_the_context_of_the_turns_after_it(
    db, per_request, said, forgotten
):
    store, path = db
    svc = service(store)
    turns = [said, "I love opera and I sing in a choir."]
    for batch in [[turns[0]], [turns[1]]] if per_request else [turns]:
        say(svc, "s1", *batch)
    gone, after = memory_with(svc, forgotten), memory_with(svc, "opera")
    assert forgotten in (store.memories.get("acme", "alice", after.memory_id).context or "")  # it answered it
    svc.memories.forget(gone.memory_id, api.ForgetRequest(reason="user asked"))
    assert traces(store, path, [forgotten]) == []
    left = svc.memories.item(after.memory_id)
    assert "opera" in left.content and forgotten not in (left.context or "")
    # the session's kept turns (both turns) lost it too: the next turn's context does not bring it back
    say(svc, "s1", "I also play the cello on weekends.")
    assert memory_with(svc, "cello").context
    assert traces(store, path, [forgotten]) == []
