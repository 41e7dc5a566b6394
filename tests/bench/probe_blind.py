"""A blind black-box probe of Hermes Memory's promises about what it remembers (a benchmark, not a test).

It sends every conversation of ``tests/bench/probe_blind.yaml`` (written before any run and never tuned
on) through the HTTP API of a real local stack, one user per conversation, the sessions in order, one turn
per request as an agent does, then looks at what the service answers (memories, profile, alerts, a new
session's context, recall) and prints the pass rate overall, per language, per check family and per topic;
``--show`` prints each failed check with what was seen.

    flock /tmp/hermes-bench.lock .venv/bin/python tests/bench/probe_blind.py --show

Without ``--url`` it starts its own stack (``hermes-memory up --detach``) in a temporary home on a free
port and stops it at the end; with ``--url URL --key KEY`` it uses a running one.

Matching. "X is contained in a text" is case-insensitive, with ``_`` and ``-`` read as spaces (so a
canonical value "ux_designer" contains "UX designer"). A memory's texts are its ``content``, ``display``
and ``value``; a profile conclusion's are its ``value`` and ``display``. Active memories are those in the
states pending, confirmed, frozen or unfrozen. A check's ``slot`` is one slot name, a family ending in
``.*`` ("preference.*") or a list of either.

Checks (each one line in the YAML):

``kept: X``
    some active memory's texts contain X.
``not_stored: X``
    X appears nowhere: in no memory of any state or layer (the whole list, archive included), not in the
    context of a new session (its text, both blocks and every section), and in no recall hit (queries: X
    itself and every user turn of the conversation that contains X). For this check both X and the texts
    are also compared with all whitespace and ``-`` removed, so a card number or IBAN cannot slip through
    by being regrouped.
``profile_has: {slot, contains?, polarity?}``
    a current conclusion (``conclusions``, not ``history``) of a matching slot contains X (without
    ``contains``: the slot has any conclusion); polarity defaults to positive.
``profile_lacks: {slot, contains?, polarity?}``
    no current conclusion of a matching slot contains X (without ``contains``: the slots have no
    conclusion at all); without ``polarity`` conclusions of either polarity count.
``current: {slot, contains}``
    the value is the slot's current value: for a single-valued slot its first (heaviest) conclusion, for a
    multi-valued slot any positive conclusion, contains X.
``not_current: {slot, contains}``
    no positive current conclusion of the slot contains X (history may).
``one_memory: {slot?, contains, confirmed_sessions_at_least}``
    exactly one active memory (of a matching slot, if given) contains X, and the sessions behind it (its
    ``source_session_id`` and its ``confirmed_sessions``) number at least N.
``alert: {kind?, contains?}``
    an open alert of that kind whose message, or the texts of the memory it is about or of a related
    memory, contain X.
``no_alert: true``
    the user has no open alert.
``recall_has: {query, contains}``
    a recall (k = 8) for the query returns a hit whose memory's texts contain X.
``context_has: X``
    a new session's context text contains X.
``any_of: [check, ...]``
    at least one of the checks passes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import httpx
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_FILE = Path(__file__).with_suffix(".yaml")
ACTIVE_STATES = {"pending", "confirmed", "frozen", "unfrozen"}
RECALL_K = 8
CHECK_SESSION = "probe-check"
RETRIES = 5


# ------------------------------------------------------------------------------------------ the material


@dataclass(frozen=True)
class Conversation:
    id: str
    lang: str
    topic: str
    #: each session a list of turns: a string is a user turn, {"assistant": text} an assistant turn
    sessions: list[list[Any]]
    checks: list[dict[str, Any]]

    def user_turns(self) -> Iterator[str]:
        for session in self.sessions:
            for turn in session:
                if isinstance(turn, str):
                    yield turn


def load(path: Path) -> list[Conversation]:
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))["conversations"]
    return [Conversation(**item) for item in raw]


# --------------------------------------------------------------------------------------- talking to it


class Api:
    """The HTTP calls an agent makes, retried on 5xx and connection errors (writes idempotently)."""

    def __init__(self, client: httpx.Client, api_key: str):
        self.client = client
        self.headers = {"X-API-Key": api_key}

    def call(self, method: str, path: str, *, idempotency_key: str | None = None, **kwargs: Any) -> Any:
        headers = dict(self.headers)
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        for attempt in range(RETRIES):
            try:
                answer = self.client.request(method, path, headers=headers, **kwargs)
            except httpx.TransportError:
                if attempt == RETRIES - 1:
                    raise
                time.sleep(2**attempt)
                continue
            if answer.status_code >= 500 and attempt < RETRIES - 1:
                time.sleep(float(answer.headers.get("Retry-After", 2**attempt)))
                continue
            answer.raise_for_status()
            return answer.json()
        raise AssertionError("unreachable")

    def play(self, user: str, conversation: Conversation) -> None:
        """Every turn in order, one per request: session ``s1``, ``s2`` …, dialog ids ``d1``, ``d2`` …"""
        dialog = 0
        for number, session in enumerate(conversation.sessions, start=1):
            for turn in session:
                dialog += 1
                role, text = ("user", turn) if isinstance(turn, str) else ("assistant", turn["assistant"])
                body = {
                    "session_id": f"s{number}",
                    "turns": [{"role": role, "text": text, "dialog_id": f"d{dialog}"}],
                }
                self.call("POST", f"/v1/users/{user}/turns", json=body, idempotency_key=f"{user}.d{dialog}")

    def memories(self, user: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        while True:
            page = self.call("GET", f"/v1/users/{user}/memories", params={"limit": 100, "offset": len(items)})
            items += page["items"]
            if not page["items"] or len(items) >= page["total"]:
                return items


class UserView:
    """What the service answers about one user after the conversation, fetched once per question."""

    def __init__(self, api: Api, user: str, conversation: Conversation):
        self.api, self.user, self.conversation = api, user, conversation
        self._recalls: dict[str, list[dict[str, Any]]] = {}

    @cached_property
    def memories(self) -> list[dict[str, Any]]:
        listed = self.api.memories(self.user)
        archived = self.api.call(
            "GET", f"/v1/users/{self.user}/memories", params={"layer": "archive", "limit": 100}
        )
        seen = {item["memory_id"] for item in listed}
        return listed + [item for item in archived["items"] if item["memory_id"] not in seen]

    @cached_property
    def active(self) -> list[dict[str, Any]]:
        return [item for item in self.memories if item["state"] in ACTIVE_STATES]

    @cached_property
    def profile(self) -> dict[str, Any]:
        return self.api.call("GET", f"/v1/users/{self.user}/profile")

    @cached_property
    def alerts(self) -> list[dict[str, Any]]:
        return self.api.call("GET", f"/v1/users/{self.user}/alerts")["alerts"]

    @cached_property
    def context(self) -> dict[str, Any]:
        return self.api.call("POST", f"/v1/users/{self.user}/sessions", json={"session_id": CHECK_SESSION})

    def recall(self, query: str) -> list[dict[str, Any]]:
        if query not in self._recalls:
            body = {"query": query[:2000], "k": RECALL_K}
            self._recalls[query] = self.api.call("POST", f"/v1/users/{self.user}/recall", json=body)["hits"]
        return self._recalls[query]

    def memory(self, memory_id: str) -> dict[str, Any] | None:
        for item in self.memories:
            if item["memory_id"] == memory_id:
                return item
        try:
            return self.api.call("GET", f"/v1/users/{self.user}/memories/{memory_id}")["memory"]
        except httpx.HTTPStatusError:
            return None


# ------------------------------------------------------------------------------------------ the checks


def _norm(text: str) -> str:
    return text.lower().replace("_", " ").replace("-", " ")


def _squeeze(text: str) -> str:
    return "".join(text.lower().replace("-", "").split())


def contains(texts: list[str | None], needle: str) -> bool:
    return any(text and _norm(needle) in _norm(text) for text in texts)


def memory_texts(item: dict[str, Any]) -> list[str | None]:
    return [item.get("content"), item.get("display"), item.get("value")]


def slot_matches(pattern: str | list[str], slot: str | None) -> bool:
    if slot is None:
        return False
    patterns = [pattern] if isinstance(pattern, str) else pattern
    return any(slot == p or (p.endswith(".*") and slot.startswith(p[:-1])) for p in patterns)


def conclusions(view: UserView, spec: dict[str, Any], polarity: str | None) -> Iterator[tuple[dict, dict]]:
    """(slot, conclusion) for every current conclusion of a matching slot, of that polarity if given."""
    for slot in view.profile["slots"]:
        if slot_matches(spec["slot"], slot["slot"]):
            for conclusion in slot["conclusions"]:
                if polarity is None or conclusion["polarity"] == polarity:
                    yield slot, conclusion


def _conclusion_has(conclusion: dict[str, Any], needle: str | None) -> bool:
    return needle is None or contains([conclusion.get("value"), conclusion.get("display")], needle)


def _profile_seen(view: UserView, spec: dict[str, Any]) -> str:
    found = [
        f"{s['slot']}={c.get('display') or c['value']}({c['polarity']})"
        for s, c in conclusions(view, spec, None)
    ]
    return "profile: " + (", ".join(found) or "nothing in that slot")


def check_kept(view: UserView, needle: str) -> tuple[bool, str]:
    ok = any(contains(memory_texts(item), needle) for item in view.active)
    return ok, "active memories: " + " | ".join(item["content"] for item in view.active)


def check_not_stored(view: UserView, needle: str) -> tuple[bool, str]:
    def leaks(text: str | None) -> bool:
        return bool(text) and (_norm(needle) in _norm(text) or _squeeze(needle) in _squeeze(text))

    where = [
        f"memory {item['state']}: {item['content']}"
        for item in view.memories
        if any(map(leaks, memory_texts(item)))
    ]
    context = view.context
    context_texts = [
        context["text"],
        context["memory_block"],
        context["user_block"],
        *context["sections"].values(),
    ]
    if any(map(leaks, context_texts)):
        where.append("the session context")
    queries = [needle, *(turn for turn in view.conversation.user_turns() if leaks(turn))]
    for query in queries:
        for hit in view.recall(query):
            if any(map(leaks, memory_texts(hit["memory"]))):
                where.append(f"recall for {query[:40]!r}: {hit['memory']['content']}")
    return not where, "; ".join(where) or "nowhere"


def check_profile_has(view: UserView, spec: dict[str, Any]) -> tuple[bool, str]:
    polarity = spec.get("polarity", "positive")
    ok = any(_conclusion_has(c, spec.get("contains")) for _, c in conclusions(view, spec, polarity))
    return ok, _profile_seen(view, spec)


def check_profile_lacks(view: UserView, spec: dict[str, Any]) -> tuple[bool, str]:
    ok = not any(
        _conclusion_has(c, spec.get("contains")) for _, c in conclusions(view, spec, spec.get("polarity"))
    )
    return ok, _profile_seen(view, spec)


def check_current(view: UserView, spec: dict[str, Any]) -> tuple[bool, str]:
    ok = False
    for slot in view.profile["slots"]:
        if slot_matches(spec["slot"], slot["slot"]) and slot["conclusions"]:
            candidates = slot["conclusions"][:1] if slot["single_valued"] else slot["conclusions"]
            ok = ok or any(
                c["polarity"] == "positive" and _conclusion_has(c, spec["contains"]) for c in candidates
            )
    return ok, _profile_seen(view, spec)


def check_not_current(view: UserView, spec: dict[str, Any]) -> tuple[bool, str]:
    ok = not any(_conclusion_has(c, spec["contains"]) for _, c in conclusions(view, spec, "positive"))
    return ok, _profile_seen(view, spec)


def check_one_memory(view: UserView, spec: dict[str, Any]) -> tuple[bool, str]:
    found = [
        item
        for item in view.active
        if contains(memory_texts(item), spec["contains"])
        and ("slot" not in spec or slot_matches(spec["slot"], item["slot"]))
    ]
    sessions = [{item["source_session_id"], *item["confirmed_sessions"]} - {None} for item in found]
    ok = len(found) == 1 and len(sessions[0]) >= spec["confirmed_sessions_at_least"]
    seen = [
        f"{item['slot']} {item['state']} {item['content']!r} sessions={sorted(s)}"
        for item, s in zip(found, sessions, strict=True)
    ]
    return ok, f"{len(found)} matching active: " + " | ".join(seen)


def check_alert(view: UserView, spec: dict[str, Any]) -> tuple[bool, str]:
    def about(alert: dict[str, Any]) -> list[str | None]:
        texts: list[str | None] = [alert["message"]]
        for memory_id in [alert["memory_id"], *alert["related_ids"]]:
            item = view.memory(memory_id) if memory_id else None
            texts += memory_texts(item) if item else []
        return texts

    ok = any(
        spec.get("kind") in (None, alert["kind"])
        and ("contains" not in spec or contains(about(alert), spec["contains"]))
        for alert in view.alerts
    )
    return ok, "open alerts: " + (" | ".join(f"{a['kind']}: {a['message']}" for a in view.alerts) or "none")


def check_no_alert(view: UserView, _spec: Any) -> tuple[bool, str]:
    return not view.alerts, "open alerts: " + (
        " | ".join(f"{a['kind']}: {a['message']}" for a in view.alerts) or "none"
    )


def check_recall_has(view: UserView, spec: dict[str, Any]) -> tuple[bool, str]:
    hits = view.recall(spec["query"])
    ok = any(contains(memory_texts(hit["memory"]), spec["contains"]) for hit in hits)
    return ok, "hits: " + " | ".join(hit["memory"]["content"] for hit in hits)


def check_context_has(view: UserView, needle: str) -> tuple[bool, str]:
    return contains([view.context["text"]], needle), "context: " + view.context["text"].replace("\n", " / ")


def check_any_of(view: UserView, options: list[dict[str, Any]]) -> tuple[bool, str]:
    results = [evaluate(view, option) for option in options]
    return any(ok for ok, _ in results), " OR ".join(detail for _, detail in results)


CHECKS: dict[str, Callable[[UserView, Any], tuple[bool, str]]] = {
    "kept": check_kept,
    "not_stored": check_not_stored,
    "profile_has": check_profile_has,
    "profile_lacks": check_profile_lacks,
    "current": check_current,
    "not_current": check_not_current,
    "one_memory": check_one_memory,
    "alert": check_alert,
    "no_alert": check_no_alert,
    "recall_has": check_recall_has,
    "context_has": check_context_has,
    "any_of": check_any_of,
}


def family(check: dict[str, Any]) -> str:
    (name,) = check
    return name


def evaluate(view: UserView, check: dict[str, Any]) -> tuple[bool, str]:
    name = family(check)
    return CHECKS[name](view, check[name])


@dataclass
class Result:
    conversation: Conversation
    check: dict[str, Any]
    ok: bool
    detail: str = field(repr=False)


def run_conversation(api: Api, user: str, conversation: Conversation) -> list[Result]:
    api.play(user, conversation)
    view = UserView(api, user, conversation)
    return [Result(conversation, check, *evaluate(view, check)) for check in conversation.checks]


# ---------------------------------------------------------------------------------------------- a stack


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def own_stack() -> Iterator[tuple[str, str]]:
    """``hermes-memory up --detach`` in a temporary home on a free port: (base URL, demo tenant key)."""
    home = Path(tempfile.mkdtemp(prefix="hermes-probe-"))
    port = _free_port()
    cli = [sys.executable, "-m", "cli.main", "--home", str(home)]
    env = {key: value for key, value in os.environ.items() if not key.startswith("HERMES_")}
    # Their output names the demo key, which has no business in a benchmark's report.
    quiet = {"cwd": ROOT, "env": env, "stdout": subprocess.DEVNULL}
    try:
        subprocess.run([*cli, "up", "--port", str(port), "--detach", "--timeout", "600"], check=True, **quiet)
        print(f"own stack on http://127.0.0.1:{port} (home {home})")
        yield f"http://127.0.0.1:{port}", (home / "demo.key").read_text().strip()
    finally:
        subprocess.run([*cli, "down"], check=False, **quiet)
        shutil.rmtree(home, ignore_errors=True)


# ---------------------------------------------------------------------------------------------- report


def _rate(results: list[Result]) -> str:
    passed = sum(r.ok for r in results)
    return f"{passed}/{len(results)} ({100 * passed / len(results):.1f} %)" if results else "-"


def report(results: list[Result], show: bool) -> None:
    print(f"checks passed: {_rate(results)}")
    by_conversation: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        by_conversation[r.conversation.id].append(r)
    whole = sum(all(r.ok for r in rs) for rs in by_conversation.values())
    print(f"conversations with every check passed: {whole}/{len(by_conversation)}")
    for title, key in (
        ("language", lambda r: r.conversation.lang),
        ("check family", lambda r: family(r.check)),
        ("topic", lambda r: r.conversation.topic),
    ):
        groups: dict[str, list[Result]] = defaultdict(list)
        for r in results:
            groups[key(r)].append(r)
        print(f"\nby {title}:")
        for name in sorted(groups):
            print(f"  {name:<18} {_rate(groups[name])}")
    if show:
        print("\nfailures:")
        for r in results:
            if not r.ok:
                where = f"{r.conversation.id} [{r.conversation.lang}/{r.conversation.topic}]"
                print(f"- {where} {json.dumps(r.check, ensure_ascii=False)}")
                print(f"    seen: {r.detail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--url", help="a running stack's base URL (default: start one)")
    parser.add_argument("--key", help="a tenant API key of that stack")
    parser.add_argument("--only", nargs="*", default=[], help="conversation ids to run")
    parser.add_argument("--show", action="store_true", help="print every failed check with what was seen")
    args = parser.parse_args(argv)
    conversations = [c for c in load(args.file) if not args.only or c.id in args.only]
    run = uuid.uuid4().hex[:8]
    print(f"load average before the run: {os.getloadavg()}")
    with own_stack() if args.url is None else _given(args.url, args.key) as (url, key):
        started = time.monotonic()
        with httpx.Client(base_url=url, timeout=180) as client:
            api = Api(client, key)
            results = [r for c in conversations for r in run_conversation(api, f"probe-{run}-{c.id}", c)]
        elapsed = time.monotonic() - started
    turns = sum(len(s) for c in conversations for s in c.sessions)
    print(f"{len(conversations)} conversations, {turns} turns, {len(results)} checks, {elapsed:.0f} s")
    print(f"load average after the run: {os.getloadavg()}")
    report(results, args.show)
    return 0


@contextmanager
def _given(url: str, key: str | None) -> Iterator[tuple[str, str]]:
    if not key:
        raise SystemExit("--url needs --key")
    yield url, key


if __name__ == "__main__":
    sys.exit(main())
