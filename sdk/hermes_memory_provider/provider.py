"""``HermesMemoryProvider``: Hermes Agent's ``MemoryProvider`` contract on top of the Hermes Memory client.

What each hook does here:

* ``initialize``: resolves the settings and the user (``config.memory_user_id``), decides whether this
  context may write (subagent, cron and flush contexts never do), and starts fetching the session's
  snapshot in the background: ``initialize`` makes no blocking call.
* ``system_prompt_block``: the session's frozen context snapshot (``POST /v1/users/{u}/sessions``), which
  the service keeps byte-identical for the whole session, so the model's prompt cache holds.
* ``prefetch``: recall for the coming turn, waiting at most ``prefetch_budget_ms``; what is not ready by
  then is not waited for (a finished background recall queued by ``queue_prefetch`` is used instead).
* ``sync_turn``: queues the user's words as a turn (never the assistant's) on a writer thread and returns.
* ``on_memory_write``: mirrors the built-in memory tool (add / replace / remove) as explicit memories.
* tools: ``hermes_memory_recall``, ``hermes_memory_remember``, ``hermes_memory_forget`` and
  ``hermes_memory_unfreeze`` (audited: a reason and the dialog id are recorded); each answers JSON with
  ``ok`` and either its result or ``error`` + ``detail``.

Failure never reaches the agent: an unreachable service makes ``is_available()`` false (from what the last
call saw; it makes no network call itself), the prompt block and prefetch empty, writes logged and dropped,
tools answer ``{"ok": false, "error": "unavailable"}``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

from agent.memory_provider import MemoryProvider
from hermes_memory_provider.config import NAME, ProviderSettings, memory_user_id, safe_id
from hermes_memory_provider.tools import TOOL_SCHEMAS
from tools.daemon_pool import DaemonThreadPoolExecutor  # Hermes Agent's: never holds the process open

from schemas.api import MAX_QUERY_CHARS, MAX_TURN_CHARS, RecallResponse, WriteResult
from sdk.client import (
    HermesClient,
    HermesConnectionError,
    HermesHTTPError,
    RetryPolicy,
    ServiceUnavailableError,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

#: contexts that read memory but never write it (they would put a scheduler's or a helper's words
#: into the user's memory)
READ_ONLY_CONTEXTS = frozenset({"subagent", "cron", "flush"})
#: recalls allowed under way at once (prefetch and queue_prefetch)
MAX_RECALLS = 2
_RETRY = RetryPolicy(attempts=2, backoff_seconds=0.1, max_retry_after=2.0)
_BLOCK_HEADER = "# Hermes Memory: what you know about this user (fixed for this session)"
_BLOCK_TOOLS = (
    "Tools: hermes_memory_recall (search it), hermes_memory_remember (keep something the user asked you "
    "to remember), hermes_memory_forget, hermes_memory_unfreeze (change a frozen fact; give the reason)."
)


class HermesMemoryProvider(MemoryProvider):
    def __init__(self, settings: ProviderSettings | None = None):
        self._settings = settings
        self._client: HermesClient | None = None
        self._user = ""
        self._session = ""
        self._writes = True
        self._reachable: bool | None = None  # None: not tried yet
        self._turns = 0
        #: distinguishes this run of a session from an earlier one with the same id (a /resume): turn
        #: numbers restart, dialog ids and idempotency keys must not repeat
        self._run = ""
        self._mirrored = 0
        self._snapshot: Future[str] | None = None
        #: recalls under way (query, future): at most MAX_RECALLS, so a slow service never piles them up
        self._recalls: list[tuple[str, Future[RecallResponse]]] = []
        #: the newest recall that finished, whenever it finished: what prefetch serves when a fresh one
        #: is not ready within the budget
        self._latest: RecallResponse | None = None
        self._lock = threading.Lock()
        self._readers: ThreadPoolExecutor | None = None
        self._writer: ThreadPoolExecutor | None = None

    # ------------------------------------------------------------------------------------- lifecycle

    @property
    def name(self) -> str:
        return NAME

    def is_available(self) -> bool:
        settings = self._settings or ProviderSettings.load(_default_home())
        return settings.configured and self._reachable is not False

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self._settings = self._settings or ProviderSettings.load(kwargs.get("hermes_home") or _default_home())
        self._user = memory_user_id(**kwargs)
        context = kwargs.get("agent_context") or "primary"
        self._writes = context not in READ_ONLY_CONTEXTS and kwargs.get("platform") != "cron"
        if not self._settings.configured:
            log.warning("Hermes Memory: no URL or API key configured; the provider stays inactive")
            return
        self._client = HermesClient(
            self._settings.url, self._settings.api_key, timeout=self._settings.timeout, retry=_RETRY
        )
        # daemon workers: a request stuck on a dead service never delays the agent's exit (shutdown
        # gives queued writes a bounded flush first)
        self._readers = DaemonThreadPoolExecutor(MAX_RECALLS + 1, thread_name_prefix="hermes-memory-read")
        self._writer = DaemonThreadPoolExecutor(1, thread_name_prefix="hermes-memory-write")
        self._switch_to(session_id)

    def on_session_switch(self, new_session_id: str, **kwargs: Any) -> None:
        if self._client is not None and new_session_id:
            self.flush(self._settings.timeout if self._settings else 5.0)
            self._switch_to(new_session_id)

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        self.flush(self._settings.timeout if self._settings else 5.0)

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        # the snapshot stays in the system prompt; what matters is that queued turns land first
        self.on_session_end(messages)
        return ""

    def shutdown(self) -> None:
        if self._client is None:
            return
        self.flush(self._settings.timeout if self._settings else 5.0)
        for pool in (self._readers, self._writer):
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
        self._client.close()
        self._client = None

    def flush(self, timeout: float) -> bool:
        """Wait until the writes queued so far have been sent (or ``timeout`` passes)."""
        if self._writer is None:
            return True
        try:
            self._writer.submit(lambda: None).result(timeout=timeout)
            return True
        except (FutureTimeout, RuntimeError):
            return False

    # ---------------------------------------------------------------------------- context and recall

    def system_prompt_block(self) -> str:
        if self._snapshot is None or self._settings is None:
            return ""
        try:
            return self._snapshot.result(timeout=self._settings.timeout)
        except FutureTimeout:
            return ""
        except Exception as exc:  # an unreachable service leaves the prompt without memory
            log.warning("Hermes Memory: no session snapshot (%s)", exc)
            return ""

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        if self._readers is None or self._settings is None or not query.strip():
            return ""
        fresh = self._recall_in_background(query)
        if fresh is not None:
            try:
                return _recalled_text(fresh.result(timeout=self._settings.prefetch_budget_ms / 1000))
            except FutureTimeout:
                pass  # not ready within the budget: the turn does not wait for it
            except Exception as exc:
                log.info("Hermes Memory: recall failed (%s)", exc)
        latest = self._latest
        return _recalled_text(latest) if latest is not None else ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        if self._readers is not None and query.strip():
            self._recall_in_background(query)

    def recalls_settled(self, timeout: float) -> bool:
        """Wait until no recall is under way (or ``timeout`` passes): a deterministic state for tests."""
        with self._lock:
            running = [future for _, future in self._recalls]
        try:
            for future in running:
                future.exception(timeout=timeout)
            return True
        except FutureTimeout:
            return False

    # ---------------------------------------------------------------------------------------- writes

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        # only the user's words become memories: the assistant's reply is never sent
        # a paste longer than this is cut: the request stays under the service's 1 MiB body limit
        text = (user_content or "").strip()[: MAX_TURN_CHARS * 100]
        if not self._writes or self._writer is None or not text:
            return
        session = safe_id(session_id) if session_id else self._session
        dialog_id = self.current_dialog_id(session)
        self._turns += 1
        chunks = [text[i : i + MAX_TURN_CHARS] for i in range(0, len(text), MAX_TURN_CHARS)]
        request = {
            "session_id": session,
            "turns": [{"role": "user", "text": chunk, "dialog_id": dialog_id} for chunk in chunks],
        }
        self._writer.submit(self._send_write, HermesClient.write_turns, request, f"{dialog_id}.{text}")

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        if not self._writes or self._writer is None:
            return
        old_text = (metadata or {}).get("old_text", "")
        if action in {"replace", "remove"}:
            self._writer.submit(self._forget_matching, old_text or content, f"built-in memory {action}")
        if action in {"add", "replace"} and content.strip():
            self._mirrored += 1
            dialog_id = safe_id(f"{self._session}.{self._run}.builtin.{self._mirrored}")
            request = {
                "content": content.strip()[:MAX_TURN_CHARS],
                "kind": "fact",
                "session_id": self._session,
                "dialog_ids": [dialog_id],
                # the agent wrote it, not the user: inferred, kept because it was asked to be kept
                "source": "inferred",
                "remember": True,
            }
            self._writer.submit(self._send_write, HermesClient.write_memory, request, f"{target}.{content}")

    def current_dialog_id(self, session: str = "") -> str:
        """The dialog id the current turn's words are written under (and unfreezes are audited with)."""
        return safe_id(f"{session or self._session}.{self._run}.t{self._turns + 1}")

    # ----------------------------------------------------------------------------------------- tools

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return TOOL_SCHEMAS

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        handler = _TOOLS.get(tool_name)
        if handler is None:
            return _result(False, error="unknown_tool", detail=tool_name)
        if self._client is None:
            return _result(False, error="unavailable", detail="Hermes Memory is not configured")
        if handler.writes and not self._writes:
            return _result(
                False, error="read_only_context", detail="this agent context does not write memory"
            )
        try:
            return _result(True, **handler.run(self, args))
        except (KeyError, TypeError, ValueError) as exc:
            return _result(False, error="invalid_arguments", detail=str(exc))
        except HermesHTTPError as exc:
            unavailable = isinstance(exc, ServiceUnavailableError)
            return _result(False, error="unavailable" if unavailable else exc.error, detail=exc.detail)
        except HermesConnectionError as exc:
            return _result(False, error="unavailable", detail=str(exc))

    def _tool_recall(self, args: dict[str, Any]) -> dict[str, Any]:
        request = {"query": str(args["query"])[:MAX_QUERY_CHARS], "k": int(args.get("k", 8))}
        hits = self._call(HermesClient.recall, self._user, request).hits
        return {"hits": [_hit(hit) for hit in hits]}

    def _tool_remember(self, args: dict[str, Any]) -> dict[str, Any]:
        dialog_id = self.current_dialog_id()
        request = {
            "content": str(args["content"]),
            "kind": str(args.get("kind", "fact")),
            "session_id": self._session,
            "dialog_ids": [dialog_id],
            "remember": True,
        }
        result = self._call(
            HermesClient.write_memory, self._user, request, _key(self._user, dialog_id, request["content"])
        )
        return {"outcomes": [o.model_dump(mode="json") for o in result.outcomes], "dialog_id": dialog_id}

    def _tool_forget(self, args: dict[str, Any]) -> dict[str, Any]:
        reason = str(args.get("reason") or "asked in conversation")
        result = self._call(HermesClient.forget, self._user, str(args["memory_id"]), {"reason": reason})
        return result.model_dump(mode="json")

    def _tool_unfreeze(self, args: dict[str, Any]) -> dict[str, Any]:
        request = {
            "reason": str(args["reason"]),
            "dialog_id": str(args.get("dialog_id") or self.current_dialog_id()),
        }
        if args.get("new_content"):
            request["new_content"] = str(args["new_content"])
        memory = self._call(HermesClient.unfreeze, self._user, str(args["memory_id"]), request)
        return {
            "memory": _memory(memory),
            "audited": {"reason": request["reason"], "dialog_id": request["dialog_id"]},
        }

    # --------------------------------------------------------------------------------------- helpers

    def _call(self, method: Callable[..., T], *args: Any) -> T:
        """``method(client, *args)``, a ``HermesClient`` method, recording whether the service answered (for
        ``is_available``)."""
        assert self._client is not None
        try:
            result = method(self._client, *args)
        except (HermesConnectionError, ServiceUnavailableError):
            self._reachable = False
            raise
        except HermesHTTPError:
            self._reachable = True
            raise
        self._reachable = True
        return result

    def _switch_to(self, session_id: str) -> None:
        self._session = safe_id(session_id or "hermes-session")
        self._turns = 0
        self._run = uuid.uuid4().hex[:6]
        assert self._readers is not None
        self._snapshot = self._readers.submit(self._open_session, self._session)

    def _open_session(self, session: str) -> str:
        context = self._call(HermesClient.start_session, self._user, {"session_id": session})
        # deterministic wrapping of a server-frozen text: the block is the same bytes all session
        body = context.text.strip() or "Nothing is remembered about this user yet."
        return f"{_BLOCK_HEADER}\n{body}\n\n{_BLOCK_TOOLS}"

    def _recall_in_background(self, query: str) -> Future[RecallResponse] | None:
        """The recall for ``query``: one already under way, else a new one, else None when
        ``MAX_RECALLS`` are still running (the service is slow: do not add to its load)."""
        assert self._readers is not None and self._settings is not None
        with self._lock:
            self._recalls = [(q, future) for q, future in self._recalls if not future.done()]
            for running_query, future in self._recalls:
                if running_query == query:
                    return future
            if len(self._recalls) >= MAX_RECALLS:
                return None
            request = {
                "query": query[:MAX_QUERY_CHARS],
                "k": self._settings.recall_k,
                "session_id": self._session,
            }
            future = self._readers.submit(self._call, HermesClient.recall, self._user, request)
            self._recalls.append((query, future))
        future.add_done_callback(self._keep_latest)
        return future

    def _keep_latest(self, future: Future[RecallResponse]) -> None:
        if not future.cancelled() and future.exception() is None:
            self._latest = future.result()

    def _send_write(self, method: Callable[..., WriteResult], request: dict[str, Any], identity: str) -> None:
        try:
            self._call(method, self._user, request, _key(self._user, request["session_id"], identity))
        except Exception as exc:  # a lost write is logged; it never reaches the agent
            log.warning("Hermes Memory: %s dropped (%s)", method.__name__, exc)

    def _forget_matching(self, text: str, reason: str) -> None:
        """Forget the mirrored memory whose content is ``text`` (the built-in tool removed or replaced it)."""
        try:
            hits = self._call(HermesClient.recall, self._user, {"query": text[:MAX_QUERY_CHARS], "k": 5}).hits
            for hit in hits:
                if hit.memory.content.strip() == text.strip():
                    self._call(HermesClient.forget, self._user, hit.memory.memory_id, {"reason": reason})
        except Exception as exc:
            log.warning("Hermes Memory: mirrored %s failed (%s)", reason, exc)

    # ---------------------------------------------------------------------------------- configuration

    def get_config_schema(self) -> list[dict[str, Any]]:
        return [
            {
                "key": "url",
                "description": "Hermes Memory URL",
                "required": True,
                "default": "http://127.0.0.1:8000",
                "env_var": "HERMES_MEMORY_URL",
            },
            {
                "key": "api_key",
                "description": "Hermes Memory tenant API key",
                "secret": True,
                "required": True,
                "env_var": "HERMES_MEMORY_API_KEY",
            },
            {
                "key": "prefetch_budget_ms",
                "description": "Longest wait for recall before a turn (ms)",
                "default": "800",
            },
        ]

    def save_config(self, values: dict[str, Any], hermes_home: str) -> None:
        ProviderSettings.save(values, hermes_home)


class _Tool:
    def __init__(self, run: Any, writes: bool):
        self.run = run
        self.writes = writes


_TOOLS = {
    "hermes_memory_recall": _Tool(HermesMemoryProvider._tool_recall, writes=False),
    "hermes_memory_remember": _Tool(HermesMemoryProvider._tool_remember, writes=True),
    "hermes_memory_forget": _Tool(HermesMemoryProvider._tool_forget, writes=True),
    "hermes_memory_unfreeze": _Tool(HermesMemoryProvider._tool_unfreeze, writes=True),
}


def _default_home() -> str | None:
    try:
        from hermes_constants import get_hermes_home

        return str(get_hermes_home())
    except Exception:  # outside Hermes Agent: the environment alone configures it
        return None


def _key(*parts: str) -> str:
    """An idempotency key stable for the same write: a resent turn is applied once."""
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:40]


def _result(ok: bool, **fields: Any) -> str:
    return json.dumps({"ok": ok, **fields}, ensure_ascii=False)


def _memory(memory: Any) -> dict[str, Any]:
    return {
        "memory_id": memory.memory_id,
        "content": memory.content,
        "layer": memory.layer,
        "state": memory.state,
        "kind": memory.kind,
        "source_dialog_ids": memory.source_dialog_ids,
    }


def _hit(hit: Any) -> dict[str, Any]:
    return {**_memory(hit.memory), "score": round(hit.score.total, 4), "routes": hit.routes}


def _recalled_text(response: RecallResponse) -> str:
    if not response.hits:
        return ""
    lines = ["Recalled from Hermes Memory (most relevant first):"]
    for hit in response.hits:
        memory = hit.memory
        lines.append(f"- {memory.content} [{memory.kind}, {memory.state}, {memory.memory_id}]")
    return "\n".join(lines)
