"""Scoring ranked dialog ids against LoCoMo evidence, after the ranking is done.

This is the only place that reads a question's ``evidence``. Three figures per category:

* **evidence recall@10** (and **@30**) — the share of a question's evidence turns found among its first 10
  (30) ranked dialog ids, averaged over the questions that have evidence;
* **session recall_any@5** — 1 when any evidence turn's session (``D3`` of ``D3:7``) is among the first 5
  distinct sessions of the ranking, averaged likewise.

Category 5 (adversarial: the answer is not in the conversation) is skipped, as in the LoCoMo paper.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
SKIPPED_CATEGORIES = frozenset({5})
_DIA_ID = re.compile(r"D\d+:\d+")


@dataclass(frozen=True, slots=True)
class Graded:
    category: int
    evidence: frozenset[str]


def session_of(dia_id: str) -> str:
    return dia_id.split(":", 1)[0]


def load_evidence(path: Path) -> dict[tuple[str, int], Graded]:
    """(sample_id, question_index) → category and evidence; questions without evidence are left out."""
    graded: dict[tuple[str, int], Graded] = {}
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    for sample in raw if isinstance(raw, list) else [raw]:
        for index, qa in enumerate(sample.get("qa") or []):
            # evidence entries are sometimes "D8:6; D9:17" in one string
            evidence = frozenset(_DIA_ID.findall(" ".join(map(str, qa.get("evidence") or []))))
            category = qa.get("category")
            if evidence and isinstance(category, int) and category not in SKIPPED_CATEGORIES:
                graded[(str(sample["sample_id"]), index)] = Graded(category, evidence)
    return graded


def evidence_recall(ranked: list[str], evidence: frozenset[str], k: int = 10) -> float:
    return len(evidence & set(ranked[:k])) / len(evidence)


def session_recall_any(ranked: list[str], evidence: frozenset[str], k: int = 5) -> float:
    sessions = list(dict.fromkeys(session_of(d) for d in ranked))[:k]
    return float(bool({session_of(e) for e in evidence} & set(sessions)))


@dataclass
class Figures:
    """Per-category means of the figures; ``overall`` is over all graded questions."""

    recall_at_10: dict[str, float]
    session_any_at_5: dict[str, float]
    counts: dict[str, int]
    recall_at_30: dict[str, float]


def score(rankings: Iterable[dict], graded: dict[tuple[str, int], Graded]) -> Figures:
    recall: dict[str, list[float]] = defaultdict(list)
    deeper: dict[str, list[float]] = defaultdict(list)
    sessions: dict[str, list[float]] = defaultdict(list)
    for line in rankings:
        grade = graded.get((str(line["sample_id"]), int(line["question_index"])))
        if grade is None:
            continue
        ranked = list(line["ranked_dia_ids"])
        for bucket in (CATEGORY_NAMES.get(grade.category, f"category {grade.category}"), "overall"):
            recall[bucket].append(evidence_recall(ranked, grade.evidence))
            deeper[bucket].append(evidence_recall(ranked, grade.evidence, 30))
            sessions[bucket].append(session_recall_any(ranked, grade.evidence))
    return Figures(
        recall_at_10={b: sum(v) / len(v) for b, v in recall.items()},
        session_any_at_5={b: sum(v) / len(v) for b, v in sessions.items()},
        counts={b: len(v) for b, v in recall.items()},
        recall_at_30={b: sum(v) / len(v) for b, v in deeper.items()},
    )


def table(results: dict[str, Figures]) -> str:
    """One row per category (and overall), three columns per system."""
    if not results:
        return "(no graded questions)"
    buckets = [*CATEGORY_NAMES.values(), "overall"]
    present = [b for b in buckets if any(b in f.counts for f in results.values())]
    systems = list(results)
    head = f"{'category':<13}{'n':>5}  " + "  ".join(
        f"{s + ' R@10':>12}{s + ' S@5':>12}{s + ' R@30':>12}" for s in systems
    )
    rows = [head, "-" * len(head)]
    for bucket in present:
        n = max(f.counts.get(bucket, 0) for f in results.values())
        cells = "  ".join(
            f"{results[s].recall_at_10.get(bucket, float('nan')):>12.3f}"
            f"{results[s].session_any_at_5.get(bucket, float('nan')):>12.3f}"
            f"{results[s].recall_at_30.get(bucket, float('nan')):>12.3f}"
            for s in systems
        )
        rows.append(f"{bucket:<13}{n:>5}  {cells}")
    return "\n".join(rows)
