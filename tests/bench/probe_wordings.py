"""Black-box probes in new wordings: short conversations (``probe_wordings.yaml``, and a second set written
later, ``probe_wordings_2.yaml``; half Chinese, none of
their sentences anywhere else in the repository) written through ``UserMemoryService`` as a host runs it
(SQLite in a temporary directory, the real E5 embedder, the semantic reader on), then the profile and the
next session's context read back as a client would. Every second probe (by position in the file) is held
out: the rules were changed on the failures of the first part only, and the held-out figures are those
of a part nobody looked at while changing them (docs/quality.md, section 11).

A probe passes when:

* ``slot`` + ``shows``: a profile conclusion in the slot (or the slot family: ``basic``, ``preference``)
  shows the user's words (``display`` contains ``shows``; with ``polarity`` that polarity), and the next
  session's context shows them too;
* ``one_item``: besides, exactly one active memory holds it, confirmed by at least two sessions;
* ``slot`` alone (style): a conclusion in the slot;
* ``state``: the profile has a current state (showing ``shows`` if given);
* ``none``: no active memory has a slot in any of the listed families (``any``: no slot at all).

    .venv/bin/python tests/bench/probe_wordings.py                       # both parts' figures
    .venv/bin/python tests/bench/probe_wordings.py --part tuned --show   # the tuned part, each failure
    .venv/bin/python tests/bench/probe_wordings.py --set 2               # the second set (round 4)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from actors.adapters.embedding import E5Embedder  # noqa: E402
from actors.app.service import UserMemoryService  # noqa: E402
from actors.app.write import UnruledReader  # noqa: E402
from actors.language.text import has_han  # noqa: E402
from actors.language.understanding.reader import SemanticReader  # noqa: E402
from actors.store.sql.store import MemoryStore  # noqa: E402
from schemas import api  # noqa: E402
from schemas.settings import GatePolicy  # noqa: E402

#: the sets, each written in one sitting before any of it was run (``--set``)
PROBE_SETS = {
    1: Path(__file__).with_name("probe_wordings.yaml"),
    2: Path(__file__).with_name("probe_wordings_2.yaml"),
}


def in_family(slot: str | None, family: str) -> bool:
    return slot is not None and (family == "any" or slot == family or slot.startswith(family + "."))


def family_of(expect: dict[str, Any]) -> str:
    if "none" in expect:
        return "look-alike"
    if expect.get("one_item"):
        return "restatement"
    if expect.get("state"):
        return "state"
    slot = expect["slot"]
    return slot.split(".")[0] if slot.startswith(("style", "preference")) else slot.removeprefix("basic.")


def judge(svc: UserMemoryService, expect: dict[str, Any]) -> str | None:
    """None when the probe passes, else what went wrong."""
    active = svc.work.engine.active()
    if "none" in expect:
        wrong = [f"{i.slot}={i.value}" for i in active if any(in_family(i.slot, f) for f in expect["none"])]
        return f"slot read: {wrong}" if wrong else None
    profile = svc.sessions.profile()
    shows = str(expect.get("shows", "")).casefold()
    if expect.get("state"):
        states = [s.display or s.content for s in profile.state]
        if not states:
            return "no state"
        return None if any(shows in s.casefold() for s in states) else f"state shows {states}"
    conclusions = [
        (s.slot, c) for s in profile.slots if in_family(s.slot, expect["slot"]) for c in s.conclusions
    ]
    if not shows:
        return None if conclusions else f"no {expect['slot']}: {[(i.slot, i.value) for i in active]}"
    polarity = expect.get("polarity", "positive")
    shown = [
        c for _, c in conclusions if shows in (c.display or "").casefold() and c.polarity.value == polarity
    ]
    if not shown:
        found = [(slot, c.value, c.display, c.polarity.value) for slot, c in conclusions]
        return f"profile shows {found or 'nothing'}; items {[(i.slot, i.value, i.content) for i in active]}"
    context = svc.sessions.start(api.StartSessionRequest(session_id="next")).text
    if shows not in context.casefold():
        return f"next context lacks {shows!r}"
    if expect.get("one_item"):
        holding = [
            i for i in active if in_family(i.slot, expect["slot"]) and shows in (i.display or "").casefold()
        ]
        if len(holding) != 1 or len(holding[0].confirmed_sessions) < 2:
            return f"items {[(i.slot, i.value, i.confirmed_sessions) for i in holding]}"
    return None


def run(
    part: str, probes: list[dict[str, Any]], store: MemoryStore, embedder: E5Embedder, reader: SemanticReader
):
    for n, probe in enumerate(probes):
        user = f"{part}-u{n}"  # a user per probe, never shared between the halves
        svc = UserMemoryService(
            "probe",
            user,
            store=store,
            embedder=embedder,
            policy=GatePolicy(),
            reader=lambda: UnruledReader(reader),
        )
        for s, turns in enumerate(probe["sessions"]):
            request = api.WriteTurnsRequest(
                session_id=f"s{s}",
                turns=[api.TurnIn(text=t, dialog_id=f"s{s}-d{k}") for k, t in enumerate(turns)],
            )
            svc.writes.write_turns(request)
        yield probe, judge(svc, probe["expect"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--part", choices=["tuned", "held-out", "both"], default="both", help="which part to run"
    )
    parser.add_argument("--show", action="store_true", help="print each failure of the part run")
    parser.add_argument("--set", type=int, choices=sorted(PROBE_SETS), default=1, help="which probe set")
    args = parser.parse_args()
    probes = yaml.safe_load(PROBE_SETS[args.set].read_text(encoding="utf-8"))
    halves = {"tuned": probes[0::2], "held-out": probes[1::2]}
    parts = {name: part for name, part in halves.items() if args.part in (name, "both")}
    embedder = E5Embedder()
    reader = SemanticReader.load(embedder)
    print(f"load average {os.getloadavg()[0]:.1f}; {len(probes)} probes")
    with tempfile.TemporaryDirectory() as home:
        store = MemoryStore(f"sqlite:///{Path(home) / 'probes.db'}")
        store.create_schema()
        store.tenants.create("probe")
        for name, part in parts.items():
            passed: Counter[str] = Counter()
            total: Counter[str] = Counter()
            for probe, failure in run(name, part, store, embedder, reader):
                language = "zh" if has_han(str(probe["sessions"])) else "en"
                for key in (language, family_of(probe["expect"]), "all"):
                    total[key] += 1
                    passed[key] += failure is None
                if failure and args.show:
                    print(f"  FAIL [{name}] {probe['sessions']}: {failure}")
            row = " | ".join(f"{key} {passed[key]}/{total[key]}" for key in sorted(total))
            print(f"{name}: {row}")
        store.dispose()


if __name__ == "__main__":
    main()
