"""The reader's training part stays apart from the sets it is judged on: the blind probe
(``tests/bench/probe_blind.yaml``) and the issue's examples (``tests/stack/test_issue_examples.py``). A
training turn that paraphrases one of their turns closely would let the reader learn the test; this
measures closeness as the cosine of character 2- and 3-gram TF-IDF vectors (IDF over the training turns),
which finds a turn reworded around the same distinctive words ("i hit snooze six times" / "that's why I
hit snooze 6 times": 0.69) and leaves ordinary sentences of the same slot apart ("i live in Montreal" /
"I live alone": 0.41).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import yaml
from scipy.sparse import csr_matrix

from actors.language.reader.corpus import CORPUS
from tests.stack.test_issue_examples import CASES

#: the closeness from which a training turn counts as a paraphrase of a test turn
NEAR = 0.45
PROBE = Path(__file__).parents[2] / "bench" / "probe_blind.yaml"


def grams(text: str) -> list[str]:
    folded = text.casefold()
    return [folded[i : i + n] for n in (2, 3) for i in range(len(folded) - n + 1)]


def tf_idf(texts: list[str], vocabulary: dict[str, int], idf: np.ndarray) -> csr_matrix:
    rows, cols, values = [], [], []
    for row, text in enumerate(texts):
        counts: dict[int, int] = {}
        for gram in grams(text):
            if gram in vocabulary:
                counts[vocabulary[gram]] = counts.get(vocabulary[gram], 0) + 1
        weights = np.array([(1 + np.log(c)) * idf[col] for col, c in counts.items()])
        norm = float(np.linalg.norm(weights)) or 1.0
        rows += [row] * len(counts)
        cols += list(counts)
        values += list(weights / norm)
    return csr_matrix((values, (rows, cols)), shape=(len(texts), len(vocabulary)))


def user_turns(sessions: Iterable[Iterable[object]]) -> list[str]:
    return [turn for session in sessions for turn in session if isinstance(turn, str)]


def test_no_training_turn_paraphrases_a_turn_of_the_blind_probe_or_the_issue_examples():
    training = [
        (record["id"], record["text"])
        for path in sorted(CORPUS.glob("train_*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and (record := json.loads(line))
    ]
    probe = yaml.safe_load(PROBE.read_text(encoding="utf-8"))["conversations"]
    tests = [turn for c in probe for turn in user_turns(c["sessions"])]
    tests += [turn for case in CASES for turn in user_turns(case.sessions)]

    frequency: dict[str, int] = {}
    for _, text in training:
        for gram in set(grams(text)):
            frequency[gram] = frequency.get(gram, 0) + 1
    vocabulary = {gram: col for col, gram in enumerate(frequency)}
    idf = np.log(len(training) / (1 + np.array(list(frequency.values()), dtype=np.float64)))
    closeness = (
        tf_idf(tests, vocabulary, idf) @ tf_idf([t for _, t in training], vocabulary, idf).T
    ).toarray()

    near = sorted(
        (float(closeness[t, r]), training[r][0], tests[t])
        for t, r in zip(*np.nonzero(closeness >= NEAR), strict=True)
    )
    assert not near, "training turns too close to a test turn: " + "; ".join(
        f"{turn_id} ~ {test!r} ({score:.2f})" for score, turn_id, test in near
    )
