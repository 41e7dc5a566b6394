"""Identifier validation: every id that reaches SQL, Milvus or a filter expression passes through here.

Safe alphabets are deliberately narrow. Tenant ids become Milvus partition names (letters, digits and
underscore only); user, session and dialog ids appear inside quoted filter literals, so quotes, backslashes,
spaces and control characters are never allowed.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from typing import Annotated

from pydantic import AfterValidator

from schemas.errors import InvalidInput

TENANT_ID_PATTERN = r"^[A-Za-z][A-Za-z0-9_]{0,47}$"
USER_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}$"
MEMORY_ID_PATTERN = r"^m_[0-9a-f]{32}$"
ALERT_ID_PATTERN = r"^a_[0-9a-f]{32}$"

_TENANT = re.compile(TENANT_ID_PATTERN)
_USER = re.compile(USER_ID_PATTERN)
_MEMORY = re.compile(MEMORY_ID_PATTERN)
_ALERT = re.compile(ALERT_ID_PATTERN)


class InvalidIdentifier(InvalidInput, ValueError):
    """An identifier outside its safe alphabet; the message names the field and echoes at most 64 chars.
    A ``ValueError`` too, so a pydantic validator raising it reports a validation error."""

    def __init__(self, field: str, value: object):
        shown = repr(value)[:64]
        super().__init__(f"invalid {field}: {shown} (allowed: see the API documentation for the id alphabet)")
        self.field = field
        self.value = value

    def __reduce__(self) -> tuple[type[InvalidIdentifier], tuple[str, object]]:
        # rebuilt from its own arguments (the message is derived from them)
        return type(self), (self.field, self.value)


def _checker(field: str, pattern: re.Pattern[str]) -> Callable[[object], str]:
    def check(value: object) -> str:
        if not isinstance(value, str) or not pattern.fullmatch(value):
            raise InvalidIdentifier(field, value)
        return value

    return check


check_tenant_id = _checker("tenant_id", _TENANT)
check_user_id = _checker("user_id", _USER)
check_session_id = _checker("session_id", _USER)
check_dialog_id = _checker("dialog_id", _USER)
check_memory_id = _checker("memory_id", _MEMORY)
check_alert_id = _checker("alert_id", _ALERT)

TenantId = Annotated[str, AfterValidator(check_tenant_id)]
UserId = Annotated[str, AfterValidator(check_user_id)]
SessionId = Annotated[str, AfterValidator(check_session_id)]
DialogId = Annotated[str, AfterValidator(check_dialog_id)]
MemoryId = Annotated[str, AfterValidator(check_memory_id)]
AlertId = Annotated[str, AfterValidator(check_alert_id)]


def new_memory_id() -> str:
    return f"m_{uuid.uuid4().hex}"
