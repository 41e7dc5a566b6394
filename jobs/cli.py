"""The jobs' command lines: ``hermes-memory jobs <job> ...`` (a progress bar, the report as JSON) and
``python -m jobs.<module> ...`` (what ``ray job submit`` runs: counts in the job log, the report as JSON).
Both parse the same arguments, defined by each job module's ``add_arguments`` and run by its ``run_args``.

The CLI joins the Ray cluster of the local stack started from the same home (``hermes-memory up``), or the
one named by ``HERMES_RAY_ADDRESS`` / ``RAY_ADDRESS``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
from pathlib import Path
from typing import Any

from schemas.settings import HermesSettings

#: command name → module; each module has ``HELP``, ``add_arguments(parser)`` and ``run_args(settings,
#: args, progress_bar)``
JOBS = {
    "consolidate": "jobs.consolidate",
    "group-profiles": "jobs.group_profiles",
    "restore": "jobs.restore",
    "reindex": "jobs.reindex",
}


def add_job_commands(commands: Any) -> None:
    """Register ``jobs`` and its subcommands on the ``hermes-memory`` parser."""
    jobs = commands.add_parser("jobs", help="run a batch job (Ray Data) on the stack's cluster")
    which = jobs.add_subparsers(dest="job", required=True, metavar="JOB")
    for name, module_name in JOBS.items():
        module = importlib.import_module(module_name)
        parser = which.add_parser(name, help=module.HELP, description=module.HELP)
        _common_arguments(parser)
        module.add_arguments(parser)
        parser.set_defaults(run=lambda args, module=module: _run(module, args, progress_bar=True))
    runs = which.add_parser("runs", help="list recent job runs and their reports")
    runs.add_argument("--job", choices=sorted(JOBS), help="only this job")
    runs.add_argument("--limit", type=int, default=10)
    runs.set_defaults(run=_list_runs)


def run_module(name: str, argv: list[str] | None = None) -> int:
    """``python -m jobs.<module>``: parse, run, print the report."""
    module = importlib.import_module(JOBS[name])
    parser = argparse.ArgumentParser(prog=f"python -m {JOBS[name]}", description=module.HELP)
    parser.add_argument("--home", type=Path, help="state directory (default: $HERMES_HOME or .hermes)")
    _common_arguments(parser)
    module.add_arguments(parser)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    return _run(module, parser.parse_args(argv), progress_bar=False)


def _common_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tenant", action="append", dest="tenants", metavar="TENANT",
                        help="only this tenant (repeatable; default: every tenant)")
    parser.add_argument("--parallelism", type=int, help="Ray Data workers (default: the cluster's CPUs)")


def settings_for(home: Path | None) -> HermesSettings:
    from serve.stack import local_settings

    settings = HermesSettings()
    if home is not None:
        settings = settings.model_copy(update={"home": home})
    return local_settings(settings)


def _run(module: Any, args: argparse.Namespace, progress_bar: bool) -> int:
    from jobs.common import connect

    settings = settings_for(args.home)
    connect(settings)
    report = module.run_args(settings, args, progress_bar=progress_bar)
    print(json.dumps(report, indent=2, default=str, ensure_ascii=False))
    return 1 if report.get("failed") else 0


def _list_runs(args: argparse.Namespace) -> int:
    from actors.store.sql import MemoryStore

    store = MemoryStore.from_settings(settings_for(args.home))
    try:
        for run in store.runs(args.job, limit=args.limit):
            print(json.dumps(run, default=str, ensure_ascii=False))
    finally:
        store.dispose()
    return 0

