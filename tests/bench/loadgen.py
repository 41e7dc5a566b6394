"""Closed-loop HTTP load for ``bench_service.py``: ``concurrency`` workers, each sending its next request
as soon as the previous one answered, until a deadline or a request budget (whichever comes first), so
every run stops by itself. Latencies are client-side wall clock (HTTP in, JSON out, all layers between).

The request bodies: recall questions and user turns in English and Chinese, about the same topics as the
seeded history (``seed.py``) but worded differently, so recalls find something and writes mostly create.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

RECALL_QUERIES = [
    "What food does the user like?",
    "Where does the user want to travel?",
    "What hobbies does the user have these days?",
    "Who did the user eat with recently?",
    "Which restaurants were recommended to the user?",
    "What should I avoid cooking for them?",
    "What did the user do last weekend?",
    "Any plans for a trip with family?",
    "What exercise does the user do?",
    "用户喜欢吃什么？",
    "用户最近在忙什么爱好？",
    "用户想去哪里旅行？",
    "上周末用户和谁一起吃饭了？",
    "有人给用户推荐过什么好吃的吗？",
]
_WRITE_FORMS = [
    "I really enjoy {hobby} on {weekday}s now.",
    "I love {food} with extra spice.",
    "I prefer {drink} in the afternoon.",
    "Remember that my {thing} is at {place} on {weekday}.",
    "我喜欢周末去{zh_place}{zh_hobby}。",
    "记住我下周{zh_day}要去{zh_place}出差。",
]
_WORDS = {
    "hobby": ["hiking", "swimming", "cycling", "bouldering", "tennis", "rowing", "jogging", "dancing"],
    "weekday": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
    "food": ["ramen", "dumplings", "curry", "tacos", "sushi", "noodles", "pho", "paella"],
    "drink": ["green tea", "black coffee", "oolong tea", "hot chocolate", "jasmine tea"],
    "thing": ["dentist appointment", "piano lesson", "book club", "team dinner", "yoga class"],
    "place": ["Baker Street", "the old harbour", "Pine Road", "the central library", "West Lake"],
    "zh_place": ["杭州", "成都", "大理", "青岛", "西安", "厦门", "苏州", "桂林"],
    "zh_hobby": ["爬山", "骑车", "游泳", "钓鱼", "露营", "划船"],
    "zh_day": ["一", "二", "三", "四", "五"],
}


def turn_body(text: str, serial: int, user: str = "bench", per_session: int = 5) -> dict:
    """A write of one turn: the ``serial``-th turn said, ``per_session`` turns to a session."""
    session = f"{user}-s{serial // per_session}"
    return {"session_id": session, "turns": [{"text": text, "dialog_id": f"{session}-d{serial}"}]}


def write_body(rng: random.Random, serial: int) -> dict:
    form = rng.choice(_WRITE_FORMS)
    return turn_body(form.format(**{name: rng.choice(words) for name, words in _WORDS.items()}), serial)


#: LoCoMo's conversations, evaluation only: read at run time from the shared data beside the checkout
LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo" / "locomo_dev.json"


def locomo_dialogue(path: Path = LOCOMO) -> tuple[list[str], list[str]]:
    """Every turn of the LoCoMo conversations, in order, and every question asked about them."""
    conversations = json.loads(path.read_text())
    turns = [
        turn["text"]
        for conversation in conversations
        for name, session in conversation["conversation"].items()
        if name.startswith("session_") and isinstance(session, list)
        for turn in session
    ]
    return turns, [qa["question"] for conversation in conversations for qa in conversation["qa"]]


def recall_body(rng: random.Random) -> dict:
    return {"query": rng.choice(RECALL_QUERIES)}


@dataclass
class Sample:
    op: str
    seconds: float
    status: int  # HTTP status; 0 when the request itself failed (timeout, connection)


@dataclass
class RunResult:
    samples: list[Sample] = field(default_factory=list)
    elapsed: float = 0.0
    unfinished: int = 0

    def of(self, op: str) -> list[Sample]:
        return [s for s in self.samples if s.op == op]

    @property
    def errors(self) -> int:
        return sum(1 for s in self.samples if s.status != 200)


def percentile(values: list[float], fraction: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


#: one request: (op name, coroutine that sends it and returns the HTTP status)
Request = tuple[str, Callable[[], Awaitable[int]]]


class Load:
    """Builds requests against one tenant of the running stack."""

    def __init__(self, client: httpx.AsyncClient, api_key: str, seed: int = 5):
        self.client = client
        self.headers = {"X-API-Key": api_key}
        self.rng = random.Random(seed)
        self._serial = itertools.count()

    async def _post(self, path: str, body: dict) -> int:
        response = await self.client.post(path, json=body, headers=self.headers)
        return response.status_code

    def recall(self, user: str) -> Request:
        body = recall_body(self.rng)
        return "recall", lambda: self._post(f"/v1/users/{user}/recall", body)

    def write(self, user: str) -> Request:
        body = write_body(self.rng, next(self._serial))
        return "write", lambda: self._post(f"/v1/users/{user}/turns", body)

    async def stats(self, attempts: int = 5) -> dict:
        """The directory's figures; a busy stack may answer 503 for a moment, so a few tries."""
        for attempt in range(attempts):
            response = await self.client.get("/v1/stats", headers=self.headers)
            if response.status_code < 500 or attempt == attempts - 1:
                response.raise_for_status()
                return response.json()
            await asyncio.sleep(2.0)
        raise AssertionError("unreachable")


async def timed(request: Request) -> Sample:
    op, send = request
    started = time.perf_counter()
    try:
        status = await send()
    except httpx.HTTPError:
        status = 0
    return Sample(op, time.perf_counter() - started, status)


async def closed_loop(
    next_request: Callable[[], Request],
    concurrency: int,
    seconds: float,
    max_requests: int,
    grace: float | None = None,
) -> RunResult:
    """Run until ``seconds`` passed or ``max_requests`` were sent. Requests in flight then are awaited for
    at most ``grace`` seconds (None: as long as they take); those still running are abandoned and counted
    in ``unfinished``, not in the latencies."""
    result = RunResult()
    budget = itertools.count()
    deadline = time.perf_counter() + seconds

    async def worker() -> None:
        while time.perf_counter() < deadline and next(budget) < max_requests:
            result.samples.append(await timed(next_request()))

    started = time.perf_counter()
    workers = [asyncio.create_task(worker()) for _ in range(concurrency)]
    _, running = await asyncio.wait(workers, timeout=None if grace is None else seconds + grace)
    for task in running:
        task.cancel()
    await asyncio.gather(*running, return_exceptions=True)
    result.unfinished = len(running)  # a worker has at most one request in flight
    result.elapsed = time.perf_counter() - started
    return result


def zipf_weights(n: int, s: float) -> list[float]:
    """P(rank k) ∝ k^-s: a few users get most of the traffic, a long tail is seen rarely."""
    return [1.0 / (k**s) for k in range(1, n + 1)]
