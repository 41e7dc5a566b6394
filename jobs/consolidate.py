"""Consolidation (docs/jobs.md#consolidate): every user of the chosen tenants gets one consolidation pass —
decay rescoring, merges of same-topic items, promotions pending → confirmed → frozen where the rules allow,
expiry of repeatedly contradicted items, clearing of stale pending items, eviction to the archive under
capacity (the rules: ``actors.core.gate.passes``).

Ray Data reads the tenants' users from SQL (``read_sql``) and runs the pass in parallel across the cluster
(an actor pool, one worker per CPU by default); each user's pass runs under the user's lease and a fresh
claim on the user (``jobs.common.UserRunner``), so it never races a live write. Idempotent: a second run over
unchanged memories changes nothing (no user's pass finds work; nothing is committed).

Per run it reports items merged / promoted / evicted / expired / cleared, the eviction hit rate and the
profile drift (definitions: ``jobs.profiles``), and throughput. Run it as

    hermes-memory jobs consolidate [--tenant T ...]              # CLI, progress bar
    ray job submit -- python -m jobs.consolidate [--tenant T ...] # on a cluster, counts in the job log
"""

from __future__ import annotations

import logging
import math
from collections import Counter, defaultdict
from datetime import timedelta
from typing import Any

from actors.core.gate.passes import ConsolidationCounts
from actors.core.memory import utcnow
from actors.core.profile import ProfileBuilder
from jobs import defaults, profiles
from jobs.common import UserRunner, batch_job, rows_of, traced_batch
from schemas.errors import HermesError
from schemas.settings import GatePolicy, HermesSettings

log = logging.getLogger("hermes.jobs.consolidate")

JOB = "consolidate"
COUNT_FIELDS = tuple(ConsolidationCounts().as_dict())
#: most archived items read per user for the eviction figures (newest archived first)
ARCHIVED_READ = 2000


class ConsolidateUsers:
    """Ray Data worker: the pass for each user of a batch, then that user's figures."""

    def __init__(self, settings_json: str, run_id: str, trace_context: dict[str, str], hit_window_days: int):
        self.runner = UserRunner(HermesSettings.model_validate_json(settings_json), holder=run_id)
        self.run_id = run_id
        self.trace_context = trace_context
        self.hit_window = timedelta(days=hit_window_days)

    def __call__(self, batch: dict[str, Any]) -> dict[str, list]:
        rows = list(rows_of(batch))
        out: dict[str, list] = defaultdict(list)
        with traced_batch("consolidate.batch", self.trace_context, users=len(rows)):
            by_tenant: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for row in rows:
                by_tenant[row["tenant_id"]].append(row)
            for tenant_id, tenant_rows in by_tenant.items():
                user_ids = [r["user_id"] for r in tenant_rows]
                previous = self.runner.store.jobs.profile_digests(tenant_id, user_ids)
                current: dict[str, dict[str, str]] = {}
                for row in tenant_rows:
                    figures, current[row["user_id"]] = self._one(tenant_id, row["user_id"], previous)
                    for key, value in {**row, **figures}.items():
                        out[key].append(value)
                self.runner.store.jobs.save_profile_digests(tenant_id, current, self.run_id)
        return dict(out)

    def _one(
        self, tenant_id: str, user_id: str, previous: dict[str, dict[str, str]]
    ) -> tuple[dict[str, Any], dict[str, str]]:
        store = self.runner.store
        try:
            outcome = self.runner.run(tenant_id, user_id, lambda maintenance: maintenance.consolidate())
            counts, route, active = outcome.result, "lease", outcome.active
        except HermesError as exc:
            log.warning("consolidation of %s/%s failed: %s", tenant_id, user_id, exc)
            counts, route = {}, "failed"
            active = store.memories.load_active(tenant_id, user_id)
        history = store.memories.slot_history(
            tenant_id, user_id
        )  # as the profile API reads it: merged values
        digests = profiles.digests(profiles.slot_conclusions(active, history))
        drift = profiles.drift(previous.get(user_id), digests)
        moves = store.jobs.archive_moves(tenant_id, user_id, since=utcnow() - self.hit_window)
        archived = store.memories.archived(tenant_id, user_id, limit=ARCHIVED_READ)
        evictions = profiles.eviction_outcomes(moves, archived, active)
        agreement = profiles.agreement(ProfileBuilder(GatePolicy(), utcnow()).build(user_id, active, history))
        figures: dict[str, Any] = {name: int(counts.get(name, 0)) for name in COUNT_FIELDS}
        figures |= {
            "route": route,
            "changed": any(figures.values()),
            "drift": math.nan if drift is None else drift,  # NaN: no previous snapshot to compare with
            "agreement": math.nan if agreement is None else agreement,  # NaN: no conclusion yet
            "evicted_in_window": evictions.evicted,
            "missed_in_window": evictions.missed,
        }
        return figures, digests


class Totals:
    """A run's figures over every user, and per tenant (``by_tenant``) with each user's own figures."""

    def __init__(self, per_user: bool = True) -> None:
        self.counts: Counter[str] = Counter()
        self.routes: Counter[str] = Counter()
        self.users = self.memories = self.changed = 0
        self.drifts: list[float] = []
        self.agreements: list[float] = []
        self.evictions = profiles.EvictionOutcomes()
        self.per_user = per_user
        self.by_tenant: dict[str, Totals] = {}
        self.user_figures: dict[str, dict[str, Any]] = {}

    def add(self, row: dict[str, Any]) -> None:
        self.users += 1
        self.memories += row["items"]
        self.changed += bool(row["changed"])
        self.routes[row["route"]] += 1
        self.counts.update({name: row[name] for name in COUNT_FIELDS})
        if not math.isnan(row["drift"]):
            self.drifts.append(row["drift"])
        if not math.isnan(row["agreement"]):
            self.agreements.append(row["agreement"])
        self.evictions += profiles.EvictionOutcomes(row["evicted_in_window"], row["missed_in_window"])
        if self.per_user:
            self.by_tenant.setdefault(row["tenant_id"], Totals(per_user=False)).add(row)
            self.by_tenant[row["tenant_id"]].user_figures[row["user_id"]] = {
                "profile_drift": _rounded(row["drift"]),
                "profile_agreement": _rounded(row["agreement"]),
                "eviction_hit_rate": _rounded(
                    profiles.EvictionOutcomes(row["evicted_in_window"], row["missed_in_window"]).hit_rate
                ),
                "evictions_in_window": int(row["evicted_in_window"]),
                "evictions_missed": int(row["missed_in_window"]),
            }

    def report(self, hit_window_days: int) -> dict[str, Any]:
        hit_rate = self.evictions.hit_rate
        report: dict[str, Any] = {
            "users": self.users,
            "memories": self.memories,
            "users_changed": self.changed,
            "via_lease": self.routes["lease"],
            "failed": self.routes["failed"],
            **{name: self.counts[name] for name in COUNT_FIELDS},
            "eviction_hit_rate": None if hit_rate is None else round(hit_rate, 4),
            "evictions_in_window": self.evictions.evicted,
            "evictions_missed": self.evictions.missed,
            "hit_window_days": hit_window_days,
            "profile_drift": round(sum(self.drifts) / len(self.drifts), 4) if self.drifts else None,
            "users_compared": len(self.drifts),
            "users_drifted": sum(d > 0 for d in self.drifts),
            "profile_agreement": (
                round(sum(self.agreements) / len(self.agreements), 4) if self.agreements else None
            ),
        }
        if self.per_user:
            report["tenants"] = {
                tenant: {**totals.report(hit_window_days), "per_user": totals.user_figures}
                for tenant, totals in sorted(self.by_tenant.items())
            }
            report["extraction"] = extraction_figures()
        return report


def _rounded(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else round(float(value), 4)


def extraction_figures() -> dict[str, Any]:
    """The semantic reader's figures on the labelled set shipped with the project (held-out part): the same
    for every tenant, recomputed each run from the shipped model (docs/quality.md, the semantic reader)."""
    from actors.language.understanding.figures import figures, summary

    return summary(figures(*shipped_vectors()))


def shipped_vectors() -> tuple[Any, float]:
    import numpy as np

    from actors.language.understanding.reader import SHIPPED

    with np.load(SHIPPED) as shipped:
        return shipped["vectors"].astype(np.float32), float(shipped["threshold"])


def run(
    settings: HermesSettings,
    tenants: list[str] | None = None,
    *,
    parallelism: int | None = None,
    hit_window_days: int = defaults.HIT_WINDOW_DAYS,
    progress_bar: bool = False,
) -> dict[str, Any]:
    """One consolidation run over the tenants (default: all); returns the run's report."""
    with batch_job(settings, JOB, tenants, parallelism, progress_bar) as job:
        with job.record(hit_window_days=hit_window_days) as current:
            users = job.users(job.tenants)
            totals = Totals()
            progress = job.progress(users.count() if users is not None else 0)
            if users is not None:
                for rows in job.map(
                    users, ConsolidateUsers, current, run_id=current.run_id, hit_window_days=hit_window_days
                ):
                    for row in rows:
                        totals.add(row)
                    progress.update(len(rows), changed=totals.changed, evicted=totals.counts["evicted"])
            progress.close()
            current.report = totals.report(hit_window_days)
        return current.report


def main(argv: list[str] | None = None) -> int:
    from jobs.cli import run_module

    return run_module(JOB, argv)


if __name__ == "__main__":
    raise SystemExit(main())
