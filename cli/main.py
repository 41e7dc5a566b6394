"""``hermes-memory``: start and stop the local stack, manage tenants, run the evaluation, print the version.

    hermes-memory up [--host H] [--port P] [--detach] [--timeout S]
    hermes-memory down [--timeout S]
    hermes-memory tenant create NAME [--display-name TEXT]
    hermes-memory eval locomo --data FILE --out RANKED.jsonl [--k 50] [--system memory|bm25|dense|fused|all]
                              [--holdout SAMPLE_ID,...]
    hermes-memory jobs consolidate|group-profiles|restore|reindex [--tenant T ...] [job options]
    hermes-memory jobs runs [--job JOB]
    hermes-memory mcp [--url URL] [--key KEY] [--user ID]    (the MCP tools over stdio, for desktop agents)
    hermes-memory export|import|keys|tenant show|policy|limits|consent|rotate-key|user consent ... (cli.doors)
    hermes-memory version

Every command takes ``--home DIR`` (default ``$HERMES_MEMORY_HOME`` or ``.hermes``); all other configuration
comes from the ``HERMES_*`` environment variables read by ``HermesSettings``.
"""

import argparse
import asyncio
import os
import sys
from importlib import metadata
from pathlib import Path

from cli.doors import add_door_commands
from jobs.cli import add_job_commands
from localstack import stack
from schemas.errors import HermesError
from schemas.ids import check_tenant_id
from schemas.settings import HermesSettings

DISTRIBUTION = "hermes-memory"


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.run(args)
    except HermesError as exc:
        print(f"hermes-memory: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("hermes-memory: interrupted", file=sys.stderr)
        return 130


def _settings(args: argparse.Namespace) -> HermesSettings:
    settings = HermesSettings()
    if args.home is not None:
        settings = settings.model_copy(update={"home": args.home})
    return stack.local_settings(settings, getattr(args, "host", None), getattr(args, "port", None))


def _cmd_up(args: argparse.Namespace) -> int:
    settings = _settings(args)
    paths = stack.StackPaths(settings.home)
    base_url = f"http://{settings.http_host}:{settings.http_port}"
    if args.detach:
        foreground = [sys.executable, "-m", "cli.main", "--home", str(paths.home), "up"]
        foreground += ["--host", settings.http_host, "--port", str(settings.http_port)]
        pid = stack.start_detached(foreground, paths, base_url, timeout=args.timeout)
        print(f"Hermes Memory is serving on {base_url} (pid {pid}); logs: {paths.log_file}")
        if paths.demo_key_file.exists():
            print(f"demo tenant API key: {paths.demo_key_file.read_text().strip()}")
        print("stop it with: hermes-memory down")
        return 0
    stack.refuse_if_running(paths)
    local = stack.LocalStack(settings)

    def announce() -> None:
        print(f"\nHermes Memory is serving on {base_url}  (OpenAPI: {base_url}/docs)")
        new_key = local.ensure_demo_tenant()
        if new_key is not None:
            print(f"created tenant 'demo'; API key: {new_key}  (saved to {paths.demo_key_file})")
        else:
            print(f"tenant 'demo' API key: see {paths.demo_key_file}")
        if settings.admin_key:
            print("admin endpoints (/admin/...) accept the X-Admin-Key from HERMES_ADMIN_KEY")
        print("Press Ctrl-C to stop.", flush=True)

    stack.serve_until_signalled(local, announce)
    print("Hermes Memory stopped.")
    return 0


def _cmd_down(args: argparse.Namespace) -> int:
    paths = stack.StackPaths(_settings(args).home)
    pid = stack.stop_running(paths, timeout=args.timeout)
    if pid is None:
        print(f"no stack is running from {paths.home}")
    else:
        print(f"stopped the stack (pid {pid})")
    return 0


def _cmd_tenant_create(args: argparse.Namespace) -> int:
    tenant_id = check_tenant_id(args.name)
    store = stack.open_store(_settings(args))
    # The key alone on stdout, so `KEY=$(hermes-memory tenant create acme)` works.
    print(store.tenants.create(tenant_id, args.display_name or tenant_id))
    return 0


def _cmd_eval_locomo(args: argparse.Namespace) -> int:
    from evaluation import locomo  # heavy imports (embedder, Milvus) only for this command

    systems = list(locomo.SYSTEMS) if args.system == "all" else [args.system]
    holdout = frozenset(filter(None, (args.holdout or "").split(",")))
    locomo.run(args.data, args.out, k=args.k, systems=systems, holdout=holdout)
    return 0


def _cmd_mcp(args: argparse.Namespace) -> int:
    from mcp_door.stdio import serve_stdio  # the MCP SDK only for this command

    if not args.url or not args.key:
        need = "give --url and --key (or HERMES_MEMORY_URL and HERMES_MEMORY_API_KEY)"
        print(f"hermes-memory mcp: {need}", file=sys.stderr)
        return 2
    asyncio.run(serve_stdio(args.url, args.key, args.user or None))
    return 0


def _cmd_version(args: argparse.Namespace) -> int:
    print(f"{DISTRIBUTION} {_version()}")
    return 0


def _version() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        # Running from a checkout that was never pip-installed: pyproject.toml is the source of truth.
        import tomllib

        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        return tomllib.loads(pyproject.read_text())["project"]["version"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hermes-memory", description="Hermes Memory: the local stack and tools."
    )
    parser.add_argument("--home", type=Path, help="state directory (default: $HERMES_MEMORY_HOME or .hermes)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    up = commands.add_parser("up", help="start Milvus, Ray and Serve; serve HTTP until Ctrl-C")
    up.add_argument("--host", help="HTTP bind address (default: $HERMES_HTTP_HOST or 127.0.0.1)")
    up.add_argument("--port", type=int, help="HTTP port (default: $HERMES_HTTP_PORT or 8000)")
    up.add_argument("--detach", action="store_true", help="run in the background; stop with `down`")
    up.add_argument("--timeout", type=float, default=300.0, help="seconds --detach waits for /healthz")
    up.set_defaults(run=_cmd_up)

    down = commands.add_parser("down", help="stop the stack started by `up` from this home")
    down.add_argument("--timeout", type=float, default=60.0, help="seconds to wait before killing it")
    down.set_defaults(run=_cmd_down)

    tenant = commands.add_parser("tenant", help="manage tenants")
    tenant_commands = tenant.add_subparsers(dest="tenant_command", required=True, metavar="ACTION")
    create = tenant_commands.add_parser("create", help="create a tenant and print its API key")
    create.add_argument("name", help="tenant id: a letter, then letters, digits or _ (max 48)")
    create.add_argument("--display-name", help="human-readable name (default: the tenant id)")
    create.set_defaults(run=_cmd_tenant_create)
    add_door_commands(commands, tenant_commands, _settings)

    evaluation = commands.add_parser("eval", help="run an evaluation")
    benchmarks = evaluation.add_subparsers(dest="benchmark", required=True, metavar="BENCHMARK")
    locomo = benchmarks.add_parser(
        "locomo", help="LoCoMo retrieval: memory service vs raw-turn BM25 and dense"
    )
    locomo.add_argument("--data", type=Path, required=True, help="a LoCoMo-format JSON file")
    locomo.add_argument(
        "--out", type=Path, required=True, help="ranked dialog ids, one JSON line per question"
    )
    locomo.add_argument(
        "--k",
        type=int,
        default=50,
        choices=range(1, 51),
        metavar="{1..50}",
        help="hits recalled per question (default 50)",
    )
    locomo.add_argument(
        "--system",
        choices=["memory", "bm25", "dense", "fused", "all"],
        default="memory",
        help="what ranks: the memory service (default), a raw-turn baseline, or all four "
        "(baselines then write beside --out as NAME.bm25.jsonl, NAME.dense.jsonl, NAME.fused.jsonl)",
    )
    locomo.add_argument(
        "--holdout",
        metavar="SAMPLE_ID,...",
        help="conversations kept out of tuning: figures are printed for them and for the rest apart",
    )
    locomo.set_defaults(run=_cmd_eval_locomo)

    add_job_commands(commands)

    mcp = commands.add_parser("mcp", help="serve the MCP tools over stdio, as a client of a running stack")
    mcp.add_argument("--url", default=os.environ.get("HERMES_MEMORY_URL"), help="the stack's base URL")
    mcp.add_argument("--key", default=os.environ.get("HERMES_MEMORY_API_KEY"), help="the tenant's API key")
    mcp.add_argument(
        "--user", default=os.environ.get("HERMES_MEMORY_USER"), help="bind every call to this user"
    )
    mcp.set_defaults(run=_cmd_mcp)

    version = commands.add_parser("version", help="print the version")
    version.set_defaults(run=_cmd_version)
    return parser


if __name__ == "__main__":
    sys.exit(main())
