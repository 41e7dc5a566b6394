"""Export and import (docs/export.md): a user's memory, or the whole tenant's, as JSON Lines.

Export streams from SQL in pages as it is read; a per-user key may export its own user. Import takes a
JSON Lines body (at most the request body limit: a larger file is sent in parts, which is safe because an
import adds only what is missing) and hands each user's records to that user's host as ``ImportRecords``
commands, so they are committed under its fence like any write. Import needs a tenant key: it writes
states and layers the gates did not decide, which is an operator's act, not an agent's.
"""

import json
from collections.abc import Iterator
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Request
from fastapi.responses import StreamingResponse
from pydantic import ValidationError

from actors.app.commands import ImportRecords
from schemas.errors import Forbidden, InvalidInput
from schemas.transfer import (
    LINE,
    MAX_LINE_BYTES,
    MEDIA_TYPE,
    EndLine,
    HeaderLine,
    ImportRequest,
    ImportResult,
    ImportSummary,
    UserRecord,
)
from serve.gateway import Gateway
from serve.routes.deps import GatewayDep, TenantDep, UserIdPath

router = APIRouter(prefix="/v1", tags=["export"])
#: records per command to a user's host
IMPORT_BATCH = 2000


async def tenant_key_only(
    gateway: GatewayDep, api_key: Annotated[str | None, Header(alias="X-API-Key")] = None
) -> str:
    """The caller's tenant, for a tenant key only (a per-user key is refused, even on its own user)."""
    grant = await gateway.auth.grant_for(api_key)
    if grant.user_id is not None:
        raise Forbidden(f"this API key is bound to user {grant.user_id!r}: importing needs a tenant key")
    return grant.tenant_id


TenantKeyDep = Annotated[str, Depends(tenant_key_only)]


def _download(lines: Iterator[bytes], filename: str) -> StreamingResponse:
    headers = {"Content-Disposition": f'attachment; filename="{filename}"'}
    # a sync iterator: Starlette reads it in a worker thread, one page of SQL at a time
    return StreamingResponse(lines, media_type=MEDIA_TYPE, headers=headers)


@router.get(
    "/users/{user_id}/export",
    summary="Export one user's memory as JSON Lines (streamed)",
    response_class=StreamingResponse,
)
async def export_user(user_id: UserIdPath, tenant: TenantDep, gateway: GatewayDep) -> StreamingResponse:
    lines = await gateway.read_tenant(tenant, lambda view: view.export(user_id))
    return _download(lines, f"{tenant}-{user_id}.jsonl")


@router.get(
    "/export",
    summary="Export every user of the tenant as JSON Lines (streamed)",
    response_class=StreamingResponse,
)
async def export_tenant(tenant: TenantDep, gateway: GatewayDep) -> StreamingResponse:
    lines = await gateway.read_tenant(tenant, lambda view: view.export(None))
    return _download(lines, f"{tenant}.jsonl")


def _problems(error: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in problem['loc'])}: {problem['msg']}" for problem in error.errors()
    )


def parse_lines(body: bytes) -> tuple[int, dict[str, list[UserRecord]]]:
    """The records of a JSON Lines body by user, in file order; a bad line is a 422 naming its number.
    Header and end lines are checked (format and version) and skipped: records take the importer's
    tenant."""
    by_user: dict[str, list[UserRecord]] = {}
    count = 0
    for number, raw in enumerate(body.splitlines(), start=1):
        if not raw.strip():
            continue
        if len(raw) > MAX_LINE_BYTES:
            raise InvalidInput(f"line {number}: longer than {MAX_LINE_BYTES} bytes")
        try:
            line = LINE.validate_python(json.loads(raw))
        except ValidationError as error:
            raise InvalidInput(f"line {number}: {_problems(error)}"[:2000]) from None
        except ValueError:  # not JSON (UnicodeDecodeError is a ValueError too)
            raise InvalidInput(f"line {number}: not a JSON object") from None
        count += 1
        if not isinstance(line, HeaderLine | EndLine):
            by_user.setdefault(line.user_id, []).append(line)
    return count, by_user


async def _import(gateway: Gateway, tenant: str, by_user: dict[str, list[UserRecord]]) -> list[ImportResult]:
    """Each user's records to that user's host, as ``ImportRecords`` commands of at most ``IMPORT_BATCH``."""
    results = []
    for user_id, records in by_user.items():
        total = ImportResult(user_id=user_id)
        for start in range(0, len(records), IMPORT_BATCH):
            command = ImportRecords(request=ImportRequest(records=records[start : start + IMPORT_BATCH]))
            total.add(await gateway.run(tenant, user_id, command))
        results.append(total)
    return results


@router.post("/users/{user_id}/import", summary="Import one user's JSON Lines export (tenant key)")
async def import_user(
    user_id: UserIdPath, request: Request, tenant: TenantKeyDep, gateway: GatewayDep
) -> ImportSummary:
    lines, by_user = parse_lines(await request.body())
    if len(by_user) > 1:
        raise InvalidInput(f"this file holds {len(by_user)} users: import it with POST /v1/import")
    records = next(iter(by_user.values()), [])
    return ImportSummary(lines=lines, users=await _import(gateway, tenant, {user_id: records}))


@router.post("/import", summary="Import a tenant's JSON Lines export, each user into that user (tenant key)")
async def import_tenant(request: Request, tenant: TenantKeyDep, gateway: GatewayDep) -> ImportSummary:
    lines, by_user = parse_lines(await request.body())
    return ImportSummary(lines=lines, users=await _import(gateway, tenant, by_user))
