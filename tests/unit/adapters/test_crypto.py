"""Encryption of content at rest (``actors.adapters.crypto``): the cipher itself, then the SQL store with a
key in the environment — nothing the user said is readable in the database file, and everything reads back."""

import base64
import os

import pytest

from actors.adapters.crypto import (
    CONTENT_KEY_ENV,
    ContentCipher,
    ContentKeyError,
    item_context,
    seal,
    unseal,
)
from actors.adapters.embedding import HashEmbedder
from actors.app.service import UserMemoryService
from actors.store.sql.store import MemoryStore
from schemas import api
from schemas.settings import GatePolicy

SECRET_WORD = "Quillonberg"


def new_key() -> str:
    return base64.urlsafe_b64encode(os.urandom(32)).decode()


@pytest.fixture
def keyed(monkeypatch):
    key = new_key()
    monkeypatch.setenv(CONTENT_KEY_ENV, key)
    return key


def test_cipher_round_trip_binds_the_row_and_refuses_tampering():
    cipher = ContentCipher(os.urandom(32))
    token = cipher.seal("我对花生过敏", "item/m_1/content")
    assert token.startswith("enc1:") and "花生" not in token
    assert cipher.open(token, "item/m_1/content") == "我对花生过敏"
    assert cipher.seal("same", "c") != cipher.seal("same", "c")  # a fresh nonce every time
    with pytest.raises(ContentKeyError):
        cipher.open(token, "item/m_2/content")  # moved to another row
    with pytest.raises(ContentKeyError):
        cipher.open(token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB"), "item/m_1/content")
    with pytest.raises(ContentKeyError):
        ContentCipher(os.urandom(31)).open(token, "item/m_1/content")  # a key that is not 32 bytes


def test_without_a_key_nothing_is_sealed_and_sealed_values_refuse_to_open(monkeypatch):
    monkeypatch.delenv(CONTENT_KEY_ENV, raising=False)
    assert seal("plain", "c") == "plain" and unseal("plain", "c") == "plain"
    monkeypatch.setenv(CONTENT_KEY_ENV, new_key())
    token = seal("plain", "c")
    assert unseal(token, "c") == "plain"
    monkeypatch.setenv(CONTENT_KEY_ENV, new_key())
    with pytest.raises(ContentKeyError):
        unseal(token, "c")  # the wrong key
    monkeypatch.delenv(CONTENT_KEY_ENV)
    with pytest.raises(ContentKeyError):
        unseal(token, "c")  # no key at all
    monkeypatch.setenv(CONTENT_KEY_ENV, "not base64!")
    with pytest.raises(ContentKeyError):
        seal("plain", "c")


def test_store_keeps_content_sealed_on_disk_and_reads_it_back(tmp_path, keyed):
    store = MemoryStore(f"sqlite:///{tmp_path / 'h.db'}")
    store.create_schema()
    store.tenants.create("acme")
    service = UserMemoryService(
        "acme", "alice", store=store, embedder=HashEmbedder(64), policy=GatePolicy()
    )
    turns = [api.TurnIn(text=f"Remember this: my boat is named {SECRET_WORD}", dialog_id="d1")]
    written = service.writes.write_turns(api.WriteTurnsRequest(session_id="s1", turns=turns))
    memory_id = written.outcomes[0].memory_id
    snapshot = service.sessions.start(api.StartSessionRequest(session_id="s2"))
    assert SECRET_WORD in snapshot.text
    assert SECRET_WORD in store.memories.get("acme", "alice", memory_id).content
    assert SECRET_WORD in str(store.audit.events("acme", "alice", memory_id)[0].after)
    assert store.snapshots.get("acme", "alice", "s2") == snapshot.model_dump_json()
    store.dispose()
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("h.db"))
    assert SECRET_WORD.encode() not in raw and b"boat" not in raw
    assert unseal(seal("x", item_context(memory_id, "content")), item_context(memory_id, "content")) == "x"
