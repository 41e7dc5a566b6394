"""The command line's doors to a tenant: export and import over the running stack's HTTP API, a tenant's
keys, and the operator's controls of a tenant (policy, quotas, consent, key rotation).

    hermes-memory export [--user U] [--out FILE]          a user's (or the tenant's) JSON Lines export
    hermes-memory import FILE [--user U]                  sent in parts under 1 MB (an import is idempotent)
    hermes-memory keys mint USER [--label L] | list | revoke KEY_ID [--grace S] | rotate [--overlap S]
    hermes-memory tenant show|policy|limits|consent|rotate-key TENANT ...
    hermes-memory user consent USER --tenant T [--group-profiles yes|no]

Export, import and keys talk to the stack at ``--url`` (default: the configured host and port) with
``--key`` (default: ``$HERMES_API_KEY``, else the demo tenant's key file); they answer JSON on stdout. The
operator's commands change the SQL store directly, through the same validated code as the admin HTTP
routes (``actors.app.tenant_admin``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

from actors.app.tenant_admin import TenantAdmin
from localstack import stack
from schemas.api_tenant import TenantLimitsIn
from schemas.errors import InvalidInput, ServiceRefused
from schemas.ids import check_tenant_id, check_user_id
from schemas.settings import HermesSettings
from schemas.transfer import MEDIA_TYPE

#: an import request's body stays under the service's 1 MB limit
PART_BYTES = 900 * 1024
TIMEOUT = 300.0
Settings = Callable[[argparse.Namespace], HermesSettings]


# ------------------------------------------------------------------------------------ over HTTP


def _client(args: argparse.Namespace, settings: HermesSettings) -> httpx.Client:
    url = args.url or f"http://{settings.http_host}:{settings.http_port}"
    key = args.key or os.environ.get("HERMES_API_KEY")
    demo = stack.StackPaths(settings.home).demo_key_file
    if not key and demo.exists():
        key = demo.read_text().strip()
    if not key:
        raise InvalidInput("no API key: give --key, set HERMES_API_KEY, or start the stack (demo.key)")
    return httpx.Client(base_url=url, headers={"X-API-Key": key}, timeout=TIMEOUT)


def _checked(response: httpx.Response) -> httpx.Response:
    if response.is_error:
        response.read()
        try:
            detail = response.json().get("detail", response.text)
        except ValueError:
            detail = response.text
        raise ServiceRefused(f"{response.status_code}: {detail}")
    return response


def _print(answer: httpx.Response) -> int:
    print(json.dumps(_checked(answer).json(), indent=2))
    return 0


def parts(lines: Iterator[bytes], limit: int = PART_BYTES) -> Iterator[bytes]:
    """Whole lines gathered into bodies of at most ``limit`` bytes (a longer line goes alone)."""
    part = bytearray()
    for line in lines:
        if not line.strip():
            continue
        line = line if line.endswith(b"\n") else line + b"\n"
        if part and len(part) + len(line) > limit:
            yield bytes(part)
            part.clear()
        part += line
    if part:
        yield bytes(part)


def run_export(args: argparse.Namespace, settings: HermesSettings) -> int:
    path = f"/v1/users/{check_user_id(args.user)}/export" if args.user else "/v1/export"
    with contextlib.ExitStack() as scope:
        out = scope.enter_context(open(args.out, "wb")) if args.out else sys.stdout.buffer
        client = scope.enter_context(_client(args, settings))
        response = scope.enter_context(client.stream("GET", path))
        for chunk in _checked(response).iter_bytes():
            out.write(chunk)
        out.flush()
    return 0


def run_import(args: argparse.Namespace, settings: HermesSettings) -> int:
    path = f"/v1/users/{check_user_id(args.user)}/import" if args.user else "/v1/import"
    totals: dict[str, dict[str, int]] = {}
    lines = 0
    with _client(args, settings) as client, open(args.file, "rb") as source:
        for body in parts(iter(source)):
            answer = _checked(client.post(path, content=body, headers={"Content-Type": MEDIA_TYPE})).json()
            lines += answer["lines"]
            for user in answer["users"]:
                total = totals.setdefault(user["user_id"], {})
                for name, value in user.items():
                    if name != "user_id":
                        total[name] = total.get(name, 0) + value
    print(json.dumps({"lines": lines, "users": [{"user_id": u, **t} for u, t in totals.items()]}, indent=2))
    return 0


def run_keys(args: argparse.Namespace, settings: HermesSettings) -> int:
    with _client(args, settings) as client:
        if args.keys_command == "mint":
            return _print(client.post("/v1/keys", json={"user_id": args.user, "label": args.label}))
        if args.keys_command == "list":
            return _print(client.get("/v1/keys"))
        if args.keys_command == "revoke":
            return _print(client.delete(f"/v1/keys/{args.key_id}", params={"grace_seconds": args.grace}))
        return _print(client.post("/v1/keys/rotate", json={"overlap_seconds": args.overlap}))


# ----------------------------------------------------------------------------- the operator's


def policy_changes(assignments: list[str]) -> dict[str, Any]:
    """``capacities.working=50`` ... as the nested changes ``TenantAdmin.change_policy`` takes; values are
    JSON (numbers, true/false, quoted strings), else taken as text."""
    changes: dict[str, Any] = {}
    for assignment in assignments:
        name, separator, raw = assignment.partition("=")
        if not separator or not name:
            raise InvalidInput(f"--set {assignment!r}: expected FIELD=VALUE, e.g. capacities.working=50")
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
        *parents, leaf = name.split(".")
        node = changes
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return changes


def _yes(text: str) -> bool:
    if text.lower() in {"yes", "true", "1", "on"}:
        return True
    if text.lower() in {"no", "false", "0", "off"}:
        return False
    raise InvalidInput(f"expected yes or no, got {text!r}")


def run_tenant(args: argparse.Namespace, settings: HermesSettings) -> int:
    admin = TenantAdmin(stack.open_store(settings), check_tenant_id(args.tenant))
    answer: Any
    if args.tenant_command == "show":
        answer = admin.settings()
    elif args.tenant_command == "policy":
        answer = admin.change_policy(policy_changes(args.set)) if args.set else admin.settings()
    elif args.tenant_command == "limits":
        answer = admin.set_limits(TenantLimitsIn(max_users=args.max_users, requests_per_minute=args.rpm))
    elif args.tenant_command == "consent":
        answer = admin.set_group_profile_consent(_yes(args.group_profiles))
    else:
        answer = admin.rotate_key(args.overlap)
    print(answer.model_dump_json(indent=2))
    return 0


def run_user_consent(args: argparse.Namespace, settings: HermesSettings) -> int:
    admin = TenantAdmin(stack.open_store(settings), check_tenant_id(args.tenant))
    user = check_user_id(args.user)
    if args.group_profiles is None:
        answer = admin.user_consent(user)
    else:
        answer = admin.set_user_consent(user, _yes(args.group_profiles))
    print(answer.model_dump_json(indent=2))
    return 0


# ------------------------------------------------------------------------------------ the parser


def add_door_commands(commands: Any, tenant_commands: Any, settings: Settings) -> None:
    """The commands above, on the ``hermes-memory`` parser (``tenant_commands``: its ``tenant`` actions)."""

    def running(command: Callable[[argparse.Namespace, HermesSettings], int]) -> Callable[..., int]:
        return lambda args: command(args, settings(args))

    def over_http(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
        parser.add_argument(
            "--url", help="the stack's URL (default: http://$HERMES_HTTP_HOST:$HERMES_HTTP_PORT)"
        )
        parser.add_argument("--key", help="a tenant API key (default: $HERMES_API_KEY, else demo.key)")
        return parser

    export = over_http(commands.add_parser("export", help="export a user, or the tenant, as JSON Lines"))
    export.add_argument("--user", help="one user (default: every user of the tenant)")
    export.add_argument("--out", type=Path, help="file to write (default: stdout)")
    export.set_defaults(run=running(run_export))

    imports = over_http(commands.add_parser("import", help="import a JSON Lines export (idempotent)"))
    imports.add_argument("file", type=Path, help="an export file")
    imports.add_argument(
        "--user", help="import a one-user file as this user (default: as the users it names)"
    )
    imports.set_defaults(run=running(run_import))

    keys = commands.add_parser("keys", help="the tenant's keys: per-user keys, rotation")
    key_commands = keys.add_subparsers(dest="keys_command", required=True, metavar="ACTION")
    mint = over_http(key_commands.add_parser("mint", help="a key that reaches one user only; printed once"))
    mint.add_argument("user", help="the user the key reaches")
    mint.add_argument("--label", default="", help="a name for the key")
    over_http(key_commands.add_parser("list", help="per-user keys and rotated-out keys in their overlap"))
    revoke = over_http(key_commands.add_parser("revoke", help="revoke a key, now or after --grace seconds"))
    revoke.add_argument("key_id", help="k_ and 16 hex digits, as listed")
    revoke.add_argument("--grace", type=float, default=0.0, help="seconds it keeps working (default 0)")
    rotate = over_http(
        key_commands.add_parser("rotate", help="a new tenant key; the old one works --overlap s")
    )
    rotate.add_argument("--overlap", type=float, default=300.0, help="seconds both keys work (default 300)")
    keys.set_defaults(run=running(run_keys))

    show = tenant_commands.add_parser("show", help="a tenant's policy, quotas and consent")
    policy = tenant_commands.add_parser("policy", help="show or change a tenant's gate policy (validated)")
    policy.add_argument(
        "--set", action="append", metavar="FIELD=VALUE", help="e.g. capacities.working=50 (repeatable)"
    )
    limits = tenant_commands.add_parser("limits", help="set a tenant's quotas (omitted: unlimited)")
    limits.add_argument("--max-users", type=int, help="most users the tenant may hold")
    limits.add_argument("--rpm", type=int, help="requests per minute")
    consent = tenant_commands.add_parser("consent", help="whether the tenant's users count in group profiles")
    consent.add_argument("group_profiles", metavar="yes|no")
    rotate_key = tenant_commands.add_parser("rotate-key", help="a new key; the old one works --overlap s")
    rotate_key.add_argument(
        "--overlap", type=float, default=300.0, help="seconds both keys work (default 300)"
    )
    for parser in (show, policy, limits, consent, rotate_key):
        parser.add_argument("tenant", help="the tenant id")
        parser.set_defaults(run=running(run_tenant))

    user = commands.add_parser("user", help="one user's settings")
    user_commands = user.add_subparsers(dest="user_command", required=True, metavar="ACTION")
    user_consent = user_commands.add_parser(
        "consent", help="show, give or withdraw consent to group profiles"
    )
    user_consent.add_argument("user", help="the user id")
    user_consent.add_argument("--tenant", required=True, help="the user's tenant")
    user_consent.add_argument("--group-profiles", metavar="yes|no", help="the answer (omitted: show it)")
    user_consent.set_defaults(run=running(run_user_consent))
