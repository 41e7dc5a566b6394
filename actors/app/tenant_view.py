"""One tenant seen whole, read-only, for operators (the web console): its users and how full each one's
memory is against the tenant's capacities, its gate policy, its alerts across users, its memories by
id (what the operator's search of ``actors.app.tenant_search`` reads back), and its export.

``TenantView`` answers with the API models of ``schemas.api_tenant`` and ``schemas.api``, reading SQL
(``MemoryStore.views``) inside the one tenant it was opened for; it never writes. Everything that changes a
user's memory — resolving an alert included — is a user command through the user's host and its fenced
commit (``actors.app.commands``), so the host's copy of the user and SQL never disagree.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Any

from actors.app.commands import alert_status
from actors.app.transfer import export_lines
from actors.core.context import BUDGET_SPLIT
from actors.core.memory import MemoryItem
from actors.store.sql.store import MemoryStore
from actors.store.sql.tenant_views import UserCounts
from schemas.api import AlertFilter, AlertList, AlertOut
from schemas.api_tenant import (
    ExtractionFigures,
    LayerUsage,
    TenantPolicy,
    TenantQuality,
    TenantQualityFigures,
    UserList,
    UserQuality,
    UserQualityFigures,
    UserSummary,
)
from schemas.enums import Layer
from schemas.settings import Capacities
from schemas.transfer import exported_line

#: how many recent consolidation runs ``quality`` looks through for the last successful one
QUALITY_RUNS_READ = 20


class TenantView:
    def __init__(self, store: MemoryStore, tenant_id: str):
        self._store = store
        self.tenant_id = tenant_id

    def users(self, query: str = "", limit: int = 50) -> UserList:
        """The users holding memories whose id contains ``query`` (case-insensitive), by user id."""
        found, truncated = self._store.views.user_counts(self.tenant_id, query=query, limit=limit)
        capacities = self._capacities()
        return UserList(users=[summary_of(counts, capacities) for counts in found], truncated=truncated)

    def user_summary(self, user_id: str) -> UserSummary:
        """One user's tier usage (all zero for a user without memories: reading never creates a user)."""
        return summary_of(self._store.views.counts_of(self.tenant_id, user_id), self._capacities())

    def policy(self) -> TenantPolicy:
        return TenantPolicy(
            tenant_id=self.tenant_id,
            policy=self._store.tenants.policy(self.tenant_id),
            context_budget_split=dict(BUDGET_SPLIT),
        )

    def quality(self) -> TenantQuality:
        """The tenant's quality figures from the last successful consolidation run that covered it
        (``jobs.consolidate``): eviction hit rate, profile drift and agreement for the tenant and each user,
        and the semantic reader's figures on the shipped labelled set; figures None before such a run."""
        run, report = self._last_run()
        figures, extraction = report.get("tenants", {}).get(self.tenant_id), report.get("extraction")
        return TenantQuality(
            tenant_id=self.tenant_id,
            **run,
            figures=TenantQualityFigures.model_validate(figures) if figures else None,
            extraction=ExtractionFigures.model_validate(extraction) if extraction else None,
        )

    def user_quality(self, user_id: str) -> UserQuality:
        """One user's figures from the same run as ``quality``; None for a user that run did not see."""
        run, report = self._last_run()
        figures = report.get("tenants", {}).get(self.tenant_id, {}).get("per_user", {}).get(user_id)
        return UserQuality(
            tenant_id=self.tenant_id,
            user_id=user_id,
            **run,
            figures=UserQualityFigures.model_validate(figures) if figures else None,
        )

    def _last_run(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The newest succeeded consolidation run whose report covers this tenant (a run over other tenants
        says nothing of it): its identity and its report; both empty before such a run."""
        for run in self._store.jobs.runs("consolidate", QUALITY_RUNS_READ):
            report = run["report"] or {}
            if run["status"] == "succeeded" and self.tenant_id in report.get("tenants", {}):
                identity = {
                    "run_id": run["run_id"],
                    "finished_at": run["finished_at"],
                    "hit_window_days": report.get("hit_window_days"),
                }
                return identity, report
        return {}, {}

    def alerts(self, status: AlertFilter = "open", limit: int = 100) -> AlertList:
        """The alerts of every user of the tenant, newest first."""
        found = self._store.alerts.find(self.tenant_id, None, alert_status(status))
        return AlertList(alerts=[AlertOut.model_validate(alert) for alert in found[:limit]])

    def export(self, user_id: str | None) -> Iterator[bytes]:
        """One user's export file (``user_id`` None: every user's), line by line as SQL is read in pages
        (``actors.app.transfer``); nothing is read until the first line is asked for."""
        return (exported_line(line) for line in export_lines(self._store, self.tenant_id, user_id))

    def memories(self, memory_ids: Collection[str]) -> list[MemoryItem]:
        """The tenant's memories with these ids, whichever user holds them (only those SQL holds)."""
        return self._store.views.tenant_items(self.tenant_id, memory_ids)

    def _capacities(self) -> Capacities:
        return self._store.tenants.policy(self.tenant_id).capacities


def summary_of(counts: UserCounts, capacities: Capacities) -> UserSummary:
    tiers = {
        Layer.WORKING: capacities.working,
        Layer.LONGTERM: capacities.longterm,
        Layer.CORE: capacities.core,
    }
    layers = [
        LayerUsage(layer=layer, used=counts.active.get(layer, 0), capacity=capacity)
        for layer, capacity in tiers.items()
    ]
    layers.append(LayerUsage(layer=Layer.ARCHIVE, used=counts.archived, capacity=None))
    return UserSummary(
        user_id=counts.user_id,
        layers=layers,
        frozen=counts.frozen,
        frozen_limit=capacities.frozen_limit,
        open_alerts=counts.open_alerts,
        last_write_at=counts.last_write_at,
    )
