"""Where the provider's settings come from, and which Hermes Memory user a Hermes Agent conversation is.

Settings: ``$HERMES_HOME/hermes_memory.json`` (written by ``hermes memory setup``), overridden by the
environment: ``HERMES_MEMORY_URL``, ``HERMES_MEMORY_API_KEY`` (a secret: the environment or Hermes Agent's
``.env`` only, never the JSON file), ``HERMES_MEMORY_PREFETCH_BUDGET_MS``, ``HERMES_MEMORY_TIMEOUT``.

Scoping: one Hermes Agent user is one Hermes Memory user. The first of these that is set names it:

* ``user_id`` (a gateway's platform user) → ``<platform>:<user_id>``: ids are unique per platform only;
* ``gateway_session_key`` (a stable per-chat key such as ``agent:main:telegram:dm:123``);
* ``agent_identity`` (the Hermes profile, e.g. ``coder``) → ``profile:<name>``; else ``profile:default``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: the provider's name: its plugin directory, and the value of Hermes Agent's ``memory.provider``
NAME = "hermes_memory"
CONFIG_FILE = "hermes_memory.json"
ENV_PREFIX = "HERMES_MEMORY_"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.:@-]+")
_MAX_ID = 128


@dataclass(frozen=True, slots=True)
class ProviderSettings:
    url: str = ""
    api_key: str = ""
    #: how long prefetch() waits for recall before returning what is ready
    prefetch_budget_ms: int = 800
    #: per-request timeout of the HTTP client (seconds)
    timeout: float = 5.0
    #: recall hits injected per turn
    recall_k: int = 6

    @property
    def configured(self) -> bool:
        return bool(self.url and self.api_key)

    @classmethod
    def load(cls, hermes_home: str | os.PathLike[str] | None) -> ProviderSettings:
        values: dict[str, Any] = {}
        path = Path(hermes_home) / CONFIG_FILE if hermes_home else None
        if path is not None and path.is_file():
            stored = json.loads(path.read_text(encoding="utf-8"))
            values.update({k: v for k, v in stored.items() if k in _FIELDS and k != "api_key"})
        for name in _FIELDS:
            env = os.environ.get(ENV_PREFIX + name.upper())
            if env:
                values[name] = env
        return cls(**{name: _FIELDS[name](value) for name, value in values.items()})

    @staticmethod
    def save(values: dict[str, Any], hermes_home: str) -> Path:
        """The non-secret fields into ``$HERMES_HOME/hermes_memory.json``."""
        path = Path(hermes_home) / CONFIG_FILE
        kept = {k: _FIELDS[k](v) for k, v in values.items() if k in _FIELDS and k != "api_key"}
        path.write_text(json.dumps(kept, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return path


_FIELDS: dict[str, Any] = {
    "url": str,
    "api_key": str,
    "prefetch_budget_ms": int,
    "timeout": float,
    "recall_k": int,
}


def safe_id(text: str) -> str:
    """``text`` in the service's id alphabet (``[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}``); an over-long id keeps
    a prefix and a digest of the whole, so two long ids never collapse into one."""
    cleaned = _UNSAFE.sub("-", text).lstrip("_.:@-") or "x"
    if len(cleaned) <= _MAX_ID:
        return cleaned
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    return f"{cleaned[: _MAX_ID - 17]}-{digest}"


def memory_user_id(
    *,
    platform: str = "",
    user_id: str = "",
    gateway_session_key: str = "",
    agent_identity: str = "",
    **_: Any,
) -> str:
    """The Hermes Memory user of a Hermes Agent conversation (see the module docstring)."""
    if user_id:
        return safe_id(f"{platform or 'gateway'}:{user_id}")
    if gateway_session_key:
        return safe_id(gateway_session_key)
    return safe_id(f"profile:{agent_identity or 'default'}")
