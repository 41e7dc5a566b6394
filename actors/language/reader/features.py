"""What the reader's two models see of a clause's token states.

The clause classifier sees the mean and the maximum of the clause's token states (the mean is what the
passage vector pools, the maximum keeps a single telling word such as a negation from being averaged
away). The span tagger sees each token's state beside its neighbours' two on each side (a value is known
by what stands around it: "allergic to _", "我叫_"), the clause's mean (what the clause is about) and the
slot the classifier read, one-hot, so the same clause can be tagged for the slot it is about.
"""

from __future__ import annotations

import numpy as np

from actors.language.reader.corpus import SLOTS

#: the classifier's slot labels: every slot, then "no slot"
SLOT_LABELS = (*SLOTS, "")
#: how many tokens on each side of a token the span tagger sees
WINDOW = 2
#: the token itself, then the ones before it, then the ones after it
OFFSETS = (0, *range(-1, -WINDOW - 1, -1), *range(1, WINDOW + 1))


def clause_features(states: np.ndarray) -> np.ndarray:
    """(2 × hidden,): the mean and the maximum over the clause's tokens (zeros for no token)."""
    if len(states) == 0:
        return np.zeros(2 * states.shape[1], dtype=np.float32)
    return np.concatenate([states.mean(axis=0), states.max(axis=0)]).astype(np.float32)


def token_features(states: np.ndarray, slot: str) -> np.ndarray:
    """(tokens, (2 × ``WINDOW`` + 2) × hidden + slots + 1): each token's state and those of the ``WINDOW``
    tokens before and after it (zeros past the edges), the clause's mean, and the slot one-hot."""
    tokens, hidden = states.shape
    padded = np.zeros((tokens + 2 * WINDOW, hidden), dtype=np.float32)
    padded[WINDOW : WINDOW + tokens] = states
    shifted = [padded[WINDOW + offset : WINDOW + offset + tokens] for offset in OFFSETS]
    mean = np.broadcast_to(states.mean(axis=0) if tokens else np.zeros(hidden, np.float32), (tokens, hidden))
    slot_row = np.zeros((tokens, len(SLOT_LABELS)), dtype=np.float32)
    slot_row[:, SLOT_LABELS.index(slot)] = 1.0
    return np.concatenate([*shifted, mean, slot_row], axis=1)
