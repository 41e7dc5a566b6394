"""Plug-ins by name: a tiny package, installed for the test as a module plus a ``dist-info`` directory with
``entry_points.txt`` on ``sys.path`` (what ``pip install`` leaves), declares an extractor and an embedder;
the settings name them, ``make_extractor``/``make_embedder`` build them, and a user's service writes and
recalls with them. Broken plug-ins are refused with a message naming what is wrong."""

import textwrap

import pytest

from actors.adapters.embedding import make_embedder
from actors.adapters.plugins import EMBEDDERS, EXTRACTORS, installed
from actors.app.service import UserMemoryService
from actors.core.extraction import Turn, make_extractor
from schemas import api
from schemas.enums import Kind
from schemas.errors import InvalidInput
from schemas.settings import GatePolicy, HermesSettings

PLUGIN_MODULE = '''
import zlib

import numpy as np

from actors.core.memory import Candidate
from schemas.enums import Kind


class ShoutExtractor:
    """Every user turn ending in "!" is one fact, whole."""

    def __init__(self, languages=None):
        self.languages = languages

    def extract(self, turn):
        if turn.role != "user" or not turn.text.endswith("!"):
            return []
        return [Candidate(content=turn.text.rstrip("!"), kind=Kind.FACT, session_id=turn.session_id,
                          dialog_ids=[turn.dialog_id], importance=0.9, confidence=0.9, write_score=0.9)]


class LetterEmbedder:
    """A vector of letter counts, normalised: texts sharing letters point the same way."""

    dim = 26

    def __init__(self, num_threads=None):
        self.num_threads = num_threads

    def embed_passages(self, texts):
        rows = np.zeros((len(texts), self.dim), np.float32)
        for row, text in zip(rows, texts):
            for char in text.lower():
                if "a" <= char <= "z":
                    row[ord(char) - 97] += 1
            row /= max(float(np.linalg.norm(row)), 1e-9)
        return rows

    embed_queries = embed_passages


class NoMethods:
    def __init__(self, **options):
        pass
'''

ENTRY_POINTS = f"""
[{EXTRACTORS}]
shout = tiny_hermes_plugin:ShoutExtractor
hollow = tiny_hermes_plugin:NoMethods

[{EMBEDDERS}]
letters = tiny_hermes_plugin:LetterEmbedder
missing = tiny_hermes_plugin_absent:Nothing
"""


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    (tmp_path / "tiny_hermes_plugin.py").write_text(textwrap.dedent(PLUGIN_MODULE))
    dist_info = tmp_path / "tiny_hermes_plugin-0.1.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: tiny-hermes-plugin\nVersion: 0.1\n")
    (dist_info / "entry_points.txt").write_text(ENTRY_POINTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_the_settings_name_plugins_and_the_factories_build_them(plugin, monkeypatch):
    assert {"shout", "hollow"} <= set(installed(EXTRACTORS)) and "letters" in installed(EMBEDDERS)
    monkeypatch.setenv("HERMES_EXTRACTOR", "shout")
    monkeypatch.setenv("HERMES_EMBEDDER", "letters")
    settings = HermesSettings()
    extractor = make_extractor(settings.extractor, settings.extractor_languages)
    embedder = make_embedder(settings.embedder, num_threads=2)
    assert type(extractor).__name__ == "ShoutExtractor" and extractor.languages == ("en", "zh")
    assert type(embedder).__name__ == "LetterEmbedder" and embedder.num_threads == 2 and embedder.dim == 26
    (found,) = extractor.extract(Turn("My boat is called Tern!", "s1", "d1"))
    assert (found.content, found.kind) == ("My boat is called Tern", Kind.FACT)
    assert extractor.extract(Turn("I live in Lisbon", "s1", "d2")) == []  # the plug-in reads, not the rules


def test_a_users_memory_runs_on_the_plugins(plugin, store):
    service = UserMemoryService(
        "acme",
        "alice",
        store=store,
        embedder=make_embedder("letters"),
        policy=GatePolicy(),
        extractor=make_extractor("shout"),
    )
    turns = [
        api.TurnIn(text="My boat is called Tern!", dialog_id="d1"),
        api.TurnIn(text="hello", dialog_id="d2"),
    ]
    written = service.writes.write_turns(api.WriteTurnsRequest(session_id="s1", turns=turns))
    assert [outcome.action for outcome in written.outcomes] == ["created"]
    stored = store.memories.load_active("acme", "alice")
    assert [item.content for item in stored] == ["My boat is called Tern"]
    assert stored[0].embedding is not None and len(stored[0].embedding) == 26 * 4  # the plug-in's vector
    hits = service.recalls.recall(api.RecallRequest(query="what is my boat called")).hits
    assert [hit.memory.content for hit in hits][:1] == ["My boat is called Tern"]


def test_broken_or_unknown_plugins_are_refused_with_a_reason(plugin):
    with pytest.raises(InvalidInput, match=r"unknown extractor 'llm': known are hollow, rules, shout"):
        make_extractor("llm")
    with pytest.raises(InvalidInput, match="extractor 'hollow' lacks extract"):
        make_extractor("hollow")
    with pytest.raises(
        InvalidInput, match=r"embedder 'missing' \(tiny_hermes_plugin_absent:Nothing\) failed"
    ):
        make_embedder("missing")
    with pytest.raises(ValueError, match="extractor"):
        HermesSettings(extractor="bad name; rm")
