"""The figures of ``bench_service.py``: collected while it runs, printed as one table at the end, and
dumped as JSON (``--out``)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from tests.bench.loadgen import RunResult, Sample, percentile


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.0f}"


def _latency(samples: list[Sample]) -> dict:
    ok = [s.seconds for s in samples if s.status == 200]
    return {
        "n": len(samples),
        "errors": sum(1 for s in samples if s.status != 200),
        "p50_s": percentile(ok, 0.50),
        "p95_s": percentile(ok, 0.95),
    }


def _rows(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]
    lines = [
        "  ".join(str(cell).rjust(width) for cell, width in zip(row, widths, strict=True))
        for row in [header, *rows]
    ]
    return "\n".join(lines)


@dataclass
class Report:
    plan: dict
    loadavg_start: tuple[float, float, float]
    code: str = ""
    loadavg_end: tuple[float, float, float] | None = None
    seconds: float = 0.0
    seed: dict = field(default_factory=dict)
    baselines: list[dict] = field(default_factory=list)
    levels: list[dict] = field(default_factory=list)
    memories: list[dict] = field(default_factory=list)
    churn_figures: dict = field(default_factory=dict)
    milvus: list[dict] = field(default_factory=list)
    directories: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    # ------------------------------------------------------------------------------------------ collect

    def baseline(self, label: str, samples: list[Sample]) -> None:
        self.baselines.append({"label": label, **_latency(samples)})

    def level(self, op: str, concurrency: int, result: RunResult) -> None:
        figures = _latency(result.of(op))
        ok = figures["n"] - figures["errors"]
        self.levels.append(
            {
                "op": op,
                "concurrency": concurrency,
                **figures,
                "unfinished": result.unfinished,
                "seconds": result.elapsed,
                "rps": ok / result.elapsed if result.elapsed else 0.0,
            }
        )

    def last_level_line(self) -> str:
        row = self.levels[-1]
        return (
            f"  {row['op']:6} c={row['concurrency']:<3} n={row['n']:<5} err={row['errors']:<3} "
            f"cut={row['unfinished']:<3} "
            f"p50={_ms(row['p50_s'])}ms p95={_ms(row['p95_s'])}ms {row['rps']:.1f} req/s"
        )

    def memory(self, label: str, snapshot: dict, stats: dict) -> None:
        self.memories.append({"label": label, "live": stats["live"], **snapshot})

    def directory(self, label: str, stats: dict) -> None:
        self.directories[label] = stats

    def churn(self, plan, result: RunResult, before: dict, after: dict, live_peak: int) -> None:
        seconds = result.elapsed
        activations = after["activations"] - before["activations"]
        passivations = after["passivations"] - before["passivations"]
        ok = len(result.samples) - result.errors
        self.churn_figures = {
            "users": plan.churn_users,
            "zipf_s": plan.zipf,
            "cap": plan.churn_cap,
            "concurrency": plan.churn_concurrency,
            "seconds": seconds,
            "requests": len(result.samples),
            "errors": result.errors,
            "unfinished": result.unfinished,
            "rps": ok / seconds if seconds else 0.0,
            "recall": _latency(result.of("recall")),
            "write": _latency(result.of("write")),
            "activations": activations,
            "passivations": passivations,
            "activations_per_s": activations / seconds if seconds else 0.0,
            "passivations_per_s": passivations / seconds if seconds else 0.0,
            "activations_per_request": activations / len(result.samples) if result.samples else 0.0,
            "live_peak": live_peak,
        }

    def note(self, text: str) -> None:
        self.notes.append(text)

    # ------------------------------------------------------------------------------------------- output

    def as_json(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    def table(self) -> str:
        plan = self.plan
        hot = min(plan["users"], plan["cap"])
        out = [
            f"== (a) {plan['users']} users x {plan['items']:,} memories; load on {hot} of them, "
            f"live-actor cap {plan['cap']} =="
        ]
        out.append(
            _rows(
                ["op", "conc", "n", "err", "cut", "p50 ms", "p95 ms", "req/s"],
                [
                    [
                        r["op"],
                        r["concurrency"],
                        r["n"],
                        r["errors"],
                        r["unfinished"],
                        _ms(r["p50_s"]),
                        _ms(r["p95_s"]),
                        f"{r['rps']:.1f}",
                    ]
                    for r in self.levels
                ],
            )
        )
        out.append("")
        out.append(
            _rows(
                ["baseline (concurrency 1)", "n", "p50 ms", "p95 ms"],
                [[b["label"], b["n"], _ms(b["p50_s"]), _ms(b["p95_s"])] for b in self.baselines],
            )
        )
        if len(self.baselines) == 2 and self.baselines[1]["p50_s"]:
            cold, warm = self.baselines
            out.append(f"cold / warm recall p50: x{cold['p50_s'] / warm['p50_s']:.1f}")
        if self.churn_figures:
            c = self.churn_figures
            out.append("")
            out.append(
                f"== (b) churn: {c['users']:,} users, Zipf s={c['zipf_s']}, cap {c['cap']}, "
                f"concurrency {c['concurrency']}, {c['seconds']:.0f}s =="
            )
            out.append(
                _rows(
                    [
                        "requests",
                        "errors",
                        "cut",
                        "req/s",
                        "recall p50/p95 ms",
                        "write p50/p95 ms",
                        "activations/s",
                        "passivations/s",
                        "activations/request",
                        "live peak",
                    ],
                    [
                        [
                            c["requests"],
                            c["errors"],
                            c["unfinished"],
                            f"{c['rps']:.1f}",
                            f"{_ms(c['recall']['p50_s'])}/{_ms(c['recall']['p95_s'])}",
                            f"{_ms(c['write']['p50_s'])}/{_ms(c['write']['p95_s'])}",
                            f"{c['activations_per_s']:.2f}",
                            f"{c['passivations_per_s']:.2f}",
                            f"{c['activations_per_request']:.2f}",
                            c["live_peak"],
                        ]
                    ],
                )
            )
        out.append("")
        out.append(
            _rows(
                ["directory", "activations", "passivations", "activation p50 ms", "p95 ms", "samples"],
                [
                    [
                        label,
                        s["activations"],
                        s["passivations"],
                        _num(s["activation_latency"]["p50_ms"]),
                        _num(s["activation_latency"]["p95_ms"]),
                        s["activation_latency"]["samples"],
                    ]
                    for label, s in self.directories.items()
                ],
            )
        )
        out.append("")
        out.append(
            _rows(
                [
                    "memory",
                    "live",
                    "user actors",
                    "their RSS MB",
                    "their PSS MB",
                    "PSS/actor",
                    "all procs",
                    "all RSS MB",
                    "all PSS MB",
                ],
                [_memory_row(m) for m in self.memories],
            )
        )
        out.append("")
        out.append(
            _rows(
                ["milvus-lite partition", "rows seeded", "user's rows", "search ms", "user's ids ms"],
                [
                    [m["tenant"], f"{m['rows']:,}", m["user_rows"], _ms(m["search_s"]), _ms(m["ids_s"])]
                    for m in self.milvus
                ],
            )
        )
        out.append("")
        out.extend(self.notes)
        out.append(
            "cut: requests still in flight when a phase's grace period ended, abandoned (not in latencies)"
        )
        out.append(f"measured: {self.code}")
        start, end = self.loadavg_start, self.loadavg_end or self.loadavg_start
        out.append(
            f"load average (1 min) at start {start[0]:.1f}, at end {end[0]:.1f} on {_cpus()} CPUs; "
            f"run took {self.seconds:.0f}s"
        )
        return "\n".join(out)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def _memory_row(m: dict) -> list:
    users = m["roles"].get("user actors", {"processes": 0, "rss_mb": 0.0, "pss_mb": 0.0})
    per_actor = users["pss_mb"] / users["processes"] if users["processes"] else 0.0
    total = m["total"]
    return [
        m["label"],
        m["live"],
        users["processes"],
        f"{users['rss_mb']:.0f}",
        f"{users['pss_mb']:.0f}",
        f"{per_actor:.0f}",
        total["processes"],
        f"{total['rss_mb']:.0f}",
        f"{total['pss_mb']:.0f}",
    ]


def _cpus() -> int:
    return len(os.sched_getaffinity(0))
