"""``BatchingEmbedder``: one model shared by every user of a host; texts of concurrent calls are embedded in
one model call. A single worker thread runs the model; whatever arrives while it is busy joins the next
batch, so a lone call waits for nothing and a burst is embedded at batch speed (docs/architecture.md)."""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from actors.adapters.embedding import Embedder

Mode = Literal["passage", "query"]
#: most texts in one model call: bigger batches gain little speed per text and delay the first waiter
MAX_BATCH_TEXTS = 64


@dataclass(slots=True)
class _Request:
    mode: Mode
    texts: list[str]
    done: Future[np.ndarray] = field(default_factory=Future)


class BatchingEmbedder:
    """The ``Embedder`` protocol over a shared model, thread-safe; counts calls and texts for the stats."""

    def __init__(self, model: Embedder):
        self.model = model
        self.dim = model.dim
        self.model_calls = 0
        self.texts = 0
        self._queue: queue.SimpleQueue[_Request] = queue.SimpleQueue()
        self._worker = threading.Thread(target=self._run, name="embedder", daemon=True)
        self._worker.start()

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self._submit("passage", texts)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self._submit("query", texts)

    def _submit(self, mode: Mode, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        request = _Request(mode, list(texts))
        self._queue.put(request)
        return request.done.result()

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]
            size = len(batch[0].texts)
            while size < MAX_BATCH_TEXTS:
                try:
                    request = self._queue.get_nowait()
                except queue.Empty:
                    break
                batch.append(request)
                size += len(request.texts)
            for mode in ("query", "passage"):
                self._embed([r for r in batch if r.mode == mode], mode)

    def _embed(self, requests: list[_Request], mode: Mode) -> None:
        if not requests:
            return
        texts = [text for r in requests for text in r.texts]
        embed = self.model.embed_queries if mode == "query" else self.model.embed_passages
        try:
            vectors = np.asarray(embed(texts), dtype=np.float32)
        except Exception as exc:  # every waiter must hear of the failure, not hang
            for r in requests:
                r.done.set_exception(exc)
            return
        self.model_calls += 1
        self.texts += len(texts)
        start = 0
        for r in requests:
            r.done.set_result(vectors[start : start + len(r.texts)])
            start += len(r.texts)
