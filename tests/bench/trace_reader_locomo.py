"""Which decisions of the semantic reader cost LoCoMo evidence: the memory system of ``hermes-memory eval
locomo`` run twice in one process, reader on and off, every gate write traced (what the candidate was, whether
the reader gave it its slot, whether it was folded into an existing item), then, for each evidence turn the
reader-off run ranks in a question's top 10 and the reader-on run does not, what happened to that turn.

    .venv/bin/python tests/bench/trace_reader_locomo.py --data /work/shared/data/locomo/locomo_dev.json \
        --samples conv-26,conv-30,conv-41
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from actors.adapters.embedding import E5Embedder  # noqa: E402
from actors.app.write import UnruledReader  # noqa: E402
from actors.core.gate.engine import GateEngine  # noqa: E402
from actors.language.understanding.reader import SemanticReader  # noqa: E402
from evaluation.data import load_conversations  # noqa: E402
from evaluation.locomo import (  # noqa: E402
    CachingEmbedder,
    MemorySystem,
    memory_backend,
    ranked_dia_ids,
    user_id_for,
)
from evaluation.metrics import load_evidence, session_recall_any  # noqa: E402
from schemas import api  # noqa: E402
from schemas.settings import GatePolicy  # noqa: E402

TRACE: list[dict[str, Any]] = []
_write = GateEngine.write


def _traced_write(self, cand, *, near_duplicates=(), actor="user"):  # type: ignore[no-untyped-def]
    existed = set(self.items)
    outcome, changes = _write(self, cand, near_duplicates=near_duplicates, actor=actor)
    TRACE.append(
        {
            "user": self.user_id,
            "dia": cand.dialog_ids[0] if cand.dialog_ids else None,
            "content": cand.content,
            "slot": cand.slot,
            "value": cand.value,
            "kind": cand.kind.value,
            "read": cand.as_ruled is not None,  # the reader gave it its slot (``actors.app.write.read``)
            "action": outcome.action,
            "fold": outcome.memory_id in existed,
            "memory_id": outcome.memory_id,
        }
    )
    return outcome, changes


GateEngine.write = _traced_write  # type: ignore[method-assign]


def run(conversations, embedder, reader) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    TRACE.clear()
    out: dict[str, Any] = {"ranked": {}, "items": {}}
    with tempfile.TemporaryDirectory() as workdir, memory_backend(Path(workdir)) as store:
        system = MemorySystem(store, embedder, GatePolicy())
        system.reader = None if reader is None else UnruledReader(reader)
        for conversation in conversations:
            svc = system.ingest(conversation)
            embedder.embed_queries([q.text for q in conversation.questions])
            for q in conversation.questions:
                hits = svc.recall(api.RecallRequest(query=q.text[: api.MAX_QUERY_CHARS], k=50))
                out["ranked"][f"{conversation.sample_id}#{q.index}"] = ranked_dia_ids(hits)
            out["items"][svc.user_id] = [
                {
                    "memory_id": i.memory_id,
                    "state": i.state.value,
                    "layer": i.layer.value,
                    "slot": i.slot,
                    "value": i.value,
                    "kind": i.kind.value,
                    "dias": list(i.source_dialog_ids),
                    "merged": bool(i.merged_from),
                    "superseded_by": i.superseded_by,
                }
                for i in svc.engine.items.values()
            ]
    out["trace"] = list(TRACE)
    return out


def fate(dia: str, user: str, run: dict[str, Any]) -> str:
    """What one run did with one turn."""
    writes = [t for t in run["trace"] if t["dia"] == dia and t["user"] == user]
    if not writes:
        return "no candidate"
    items = {i["memory_id"]: i for i in run["items"][user]}
    holders = [i for i in items.values() if dia in i["dias"]]
    read = [t for t in writes if t["read"]]
    who = "reader" if read else "rules"
    if any(t["fold"] for t in (read or writes)):
        return f"{who}: folded into an existing item"
    states = []
    for t in read or writes:
        item = items.get(t["memory_id"])
        if item is None:
            states.append("gone")
            continue
        if item["state"] == "superseded":
            by = items.get(item["superseded_by"] or "")
            states.append("merged into a summary" if by and by["merged"] else "superseded")
        else:
            states.append(item["state"])
    kinds = ",".join(sorted({t["kind"] for t in read})) if read else ""
    active = [h for h in holders if h["state"] not in ("superseded", "expired", "archived")]
    where = "/".join(sorted(set(states)))
    return f"{who}: created ({where}{', ' + kinds if kinds else ''}{', held active' if active else ''})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--samples", default="", help="comma-separated sample ids (default: all)")
    parser.add_argument("--save", type=Path, help="write both runs' traces here (JSON)")
    args = parser.parse_args()
    wanted = set(filter(None, args.samples.split(",")))
    conversations = [c for c in load_conversations(args.data) if not wanted or c.sample_id in wanted]
    graded = load_evidence(args.data)
    embedder = CachingEmbedder(E5Embedder())
    runs = {
        "off": run(conversations, embedder, None),
        "on": run(conversations, embedder, SemanticReader.load(embedder)),
    }
    if args.save:
        args.save.write_text(json.dumps(runs))
    on, off = runs["on"], runs["off"]
    read = [t for t in on["trace"] if t["read"]]
    print(f"reader-on writes {len(on['trace'])}, read by the reader {len(read)}:")
    print("  by outcome", Counter("folded" if t["fold"] else t["action"] for t in read))
    print("  by slot", Counter(t["slot"] for t in read).most_common(12))
    print("  by kind", Counter(t["kind"] for t in read))
    lost: Counter[str] = Counter()
    gained: Counter[str] = Counter()
    s5: Counter[tuple[str, str]] = Counter()
    for key, ranked_on in on["ranked"].items():
        sample, index = key.split("#")
        grade = graded.get((sample, int(index)))
        if grade is None:
            continue
        user = user_id_for(sample)
        ranked_off = off["ranked"][key]
        top_on, top_off = set(ranked_on[:10]), set(ranked_off[:10])
        for dia in grade.evidence:
            if dia in top_off and dia not in top_on:
                lost[fate(dia, user, on)] += 1
            elif dia in top_on and dia not in top_off:
                gained[fate(dia, user, on)] += 1
        a, b = session_recall_any(ranked_on, grade.evidence), session_recall_any(ranked_off, grade.evidence)
        if a != b:
            why = [fate(d, user, on) for d in sorted(grade.evidence)]
            s5[("lost" if a < b else "gained", "; ".join(sorted(set(why))))] += 1
    print(
        "\nevidence turns in the top 10 with the reader off, not on — what the reader-on run did with them:"
    )
    for why, n in lost.most_common():
        print(f"  {n:4d}  {why}")
    print("\nevidence turns in the top 10 with the reader on, not off:")
    for why, n in gained.most_common():
        print(f"  {n:4d}  {why}")
    print("\nquestions whose S@5 differs (direction; what happened to their evidence turns):")
    for (direction, why), n in s5.most_common():
        print(f"  {n:4d}  {direction:6s} {why}")


if __name__ == "__main__":
    main()
