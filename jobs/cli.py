"""The jobs' command lines: ``hermes-memory jobs <job> ...`` (a progress bar, the report as JSON) and
``python -m jobs.<module> ...`` (what ``ray job submit`` runs: counts in the job log, the report as JSON).

Both parse the arguments defined here. This module imports nothing heavy: a job's module (Ray, the store,
the service) is imported only when that job runs, so the rest of ``hermes-memory`` stays instant.

The CLI joins the Ray cluster of the local stack started from the same home (``hermes-memory up``), or the
one named by ``HERMES_RAY_ADDRESS`` / ``RAY_ADDRESS``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jobs import defaults
from schemas.settings import HermesSettings


@dataclass(frozen=True)
class JobCommand:
    module: str
    summary: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    #: (job module, settings, parsed args, progress bar?) → the run's report
    run: Callable[[Any, HermesSettings, argparse.Namespace, bool], dict[str, Any]]


def _consolidate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--hit-window-days",
        type=int,
        default=defaults.HIT_WINDOW_DAYS,
        help="evictions this recent count toward the eviction hit rate (default: %(default)s)",
    )


def _group_profile_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--min-cohort",
        type=int,
        default=defaults.MIN_COHORT,
        help="publish a feature only when this many users hold it (default: %(default)s)",
    )


def _restore_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--user", action="append", dest="users", metavar="USER", help="only this user (repeatable)"
    )
    parser.add_argument(
        "--slot",
        action="append",
        dest="slots",
        default=[],
        metavar="SLOT",
        help="restore items of this profile slot (repeatable), e.g. preference.music",
    )
    parser.add_argument("--query", help="restore items similar to this text")
    parser.add_argument(
        "--recent-days",
        type=int,
        default=defaults.RESTORE_RECENT_DAYS,
        help="without --slot/--query: relevance to the user's activity in these days (default: %(default)s)",
    )
    parser.add_argument(
        "--min-similarity",
        type=float,
        default=defaults.RESTORE_MIN_SIMILARITY,
        help="cosine to a recent item that counts as relevant (default: %(default)s)",
    )
    parser.add_argument(
        "--min-query-similarity",
        type=float,
        default=defaults.RESTORE_MIN_QUERY_SIMILARITY,
        help="cosine to --query that counts as relevant (default: %(default)s)",
    )
    parser.add_argument(
        "--limit",
        type=int,
        default=defaults.RESTORE_LIMIT,
        help="at most this many items per user (default: %(default)s)",
    )


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    """Only the common ``--tenant`` / ``--parallelism``."""


def _run_restore(
    module: Any, settings: HermesSettings, args: argparse.Namespace, bar: bool
) -> dict[str, Any]:
    plan = module.RestorePlan(
        slots=args.slots,
        recent_days=args.recent_days,
        min_similarity=args.min_similarity,
        min_query_similarity=args.min_query_similarity,
        limit=args.limit,
    )
    return module.run(
        settings,
        args.tenants,
        users=args.users,
        plan=plan,
        query=args.query,
        parallelism=args.parallelism,
        progress_bar=bar,
    )


JOBS = {
    "consolidate": JobCommand(
        "jobs.consolidate",
        "consolidate memories: decay, merges, promotions, expiry, stale pending items, eviction",
        _consolidate_arguments,
        lambda module, settings, args, bar: module.run(
            settings,
            args.tenants,
            parallelism=args.parallelism,
            hit_window_days=args.hit_window_days,
            progress_bar=bar,
        ),
    ),
    "group-profiles": JobCommand(
        "jobs.group_profiles",
        "aggregate consenting tenants' profile conclusions into cohort features (min cohort size)",
        _group_profile_arguments,
        lambda module, settings, args, bar: module.run(
            settings, args.tenants, min_cohort=args.min_cohort, parallelism=args.parallelism, progress_bar=bar
        ),
    ),
    "restore": JobCommand(
        "jobs.restore",
        "bring archived items back to long-term: by topic (--slot), by --query, or by recent activity",
        _restore_arguments,
        _run_restore,
    ),
    "reindex": JobCommand(
        "jobs.reindex",
        "rebuild tenants' vector partitions from SQL: afterwards SQL and Milvus agree",
        _no_arguments,
        lambda module, settings, args, bar: module.run(
            settings, args.tenants, parallelism=args.parallelism, progress_bar=bar
        ),
    ),
}


def _common_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tenant",
        action="append",
        dest="tenants",
        metavar="TENANT",
        help="only this tenant (repeatable; default: every tenant)",
    )
    parser.add_argument("--parallelism", type=int, help="Ray Data workers (default: the cluster's CPUs)")


def add_job_commands(commands: Any) -> None:
    """Register ``jobs <job> ...`` and ``jobs runs`` on the ``hermes-memory`` parser."""
    jobs = commands.add_parser("jobs", help="run a batch job (Ray Data) on the stack's cluster")
    which = jobs.add_subparsers(dest="job", required=True, metavar="JOB")
    for name, command in JOBS.items():
        parser = which.add_parser(name, help=command.summary, description=command.summary)
        _common_arguments(parser)
        command.add_arguments(parser)
        parser.set_defaults(run=lambda args, name=name: _run(name, args, progress_bar=True))
    runs = which.add_parser("runs", help="list recent job runs and their reports")
    runs.add_argument("--job", choices=sorted(JOBS), help="only this job")
    runs.add_argument("--limit", type=int, default=10)
    runs.set_defaults(run=_list_runs)


def run_module(name: str, argv: list[str] | None = None) -> int:
    """``python -m jobs.<module>``: counts go to the log, the report to stdout."""
    command = JOBS[name]
    parser = argparse.ArgumentParser(prog=f"python -m {command.module}", description=command.summary)
    parser.add_argument("--home", type=Path, help="state directory (default: $HERMES_HOME or .hermes)")
    _common_arguments(parser)
    command.add_arguments(parser)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    return _run(name, parser.parse_args(argv), progress_bar=False)


def _run(name: str, args: argparse.Namespace, progress_bar: bool) -> int:
    from jobs.common import connect

    command = JOBS[name]
    settings = HermesSettings().with_absolute_home(args.home)
    connect(settings)
    report = command.run(importlib.import_module(command.module), settings, args, progress_bar)
    print(json.dumps(report, indent=2, default=str, ensure_ascii=False))
    return 1 if report.get("failed") else 0


def _list_runs(args: argparse.Namespace) -> int:
    from actors.store.sql.store import MemoryStore

    store = MemoryStore.from_settings(HermesSettings().with_absolute_home(args.home))
    try:
        for run in store.jobs.runs(args.job, limit=args.limit):
            print(json.dumps(run, default=str, ensure_ascii=False))
    finally:
        store.dispose()
    return 0
