"""A LangGraph ``BaseStore`` over the Hermes Memory client: a graph's long-term memory kept by the gates.

    from langgraph.graph import StateGraph
    from integrations.langgraph import HermesStore
    from sdk.client import HermesClient

    store = HermesStore(HermesClient("http://127.0.0.1:8000", api_key))
    graph = builder.compile(store=store)          # nodes take `store: BaseStore` and use it

A namespace is one user: ``(user_id,)``, or ``(*prefix, user_id)`` for a store built with a prefix
(``HermesStore(client, prefix=("memories",))`` reads ``("memories", "alice")``). Any other namespace is an
``InvalidNamespaceError``. The items are the user's memories:

* ``put(ns, key, {"text": ...})`` writes a turn in the user's words (extraction and the gates decide what
  is kept); ``put(ns, key, {"content": ..., "kind": "preference", "slot": ..., "value": ...})`` writes one
  structured memory. ``key`` is the statement's dialog id (its provenance); ``session_id`` in the value,
  else the store's session. Hermes names the memories it keeps; a memory is never overwritten in place,
  so a put on a memory id is refused (say the correction instead, as the user would).
* ``search(ns, query=...)`` is recall, best first, ``score`` its total; without a query it lists the
  memories, newest first. ``filter`` matches values of the item's fields.
* ``get(ns, key)``: by memory id, or the memory kept from the statement ``key``.
* ``delete(ns, key)``: forgets that memory, or every memory kept from the statement ``key``.

An item's ``key`` is its memory id and its ``value`` the memory as the API shows it (content, kind, slot,
value, layer, state, provenance). ``list_namespaces`` is not offered: the tenant's users are listed by
``GET /v1/users``. The async methods run the synchronous client in a worker thread.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from schemas.api import MemoryOut
from schemas.ids import MEMORY_ID_PATTERN
from sdk.client import HermesClient, NotFoundError

DEFAULT_SESSION = "langgraph"
MAX_RECALL = 50  # RecallRequest.k
PAGE = 500  # the API's largest page of memories


def is_memory_id(key: str) -> bool:
    return re.fullmatch(MEMORY_ID_PATTERN, key) is not None


class HermesStore(BaseStore):
    supports_ttl = False

    def __init__(self, client: HermesClient, prefix: tuple[str, ...] = (), session_id: str = DEFAULT_SESSION):
        self.client = client
        self.prefix = prefix
        self.session_id = session_id

    # ------------------------------------------------------------------------------------- batches

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get(op.namespace, op.key)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, PutOp):
            if op.value is None:
                self._delete(op.namespace, op.key)
            else:
                self._put(op.namespace, op.key, op.value)
            return None
        if isinstance(op, ListNamespacesOp):
            raise NotImplementedError("Hermes Memory lists a tenant's users with GET /v1/users")
        raise TypeError(f"unknown store operation {type(op).__name__}")

    # ----------------------------------------------------------------------------------- mapping

    def user_of(self, namespace: tuple[str, ...]) -> str:
        if len(namespace) != len(self.prefix) + 1 or namespace[: len(self.prefix)] != self.prefix:
            raise InvalidNamespaceError(f"a namespace is {(*self.prefix, '<user_id>')!r}, not {namespace!r}")
        return namespace[-1]

    def _item(self, namespace: tuple[str, ...], memory: MemoryOut, score: float | None = None) -> SearchItem:
        value = memory.model_dump(mode="json")
        return SearchItem(
            namespace=namespace,
            key=memory.memory_id,
            value=value,
            created_at=memory.created_at,
            updated_at=memory.updated_at,
            score=score,
        )

    def _memories(self, user_id: str) -> Iterator[MemoryOut]:
        offset = 0
        while True:
            page = self.client.list_memories(user_id, limit=PAGE, offset=offset)
            yield from page.items
            offset += len(page.items)
            if not page.items or offset >= page.total:
                return

    def _from_statement(self, user_id: str, key: str) -> list[MemoryOut]:
        return [memory for memory in self._memories(user_id) if key in memory.source_dialog_ids]

    # -------------------------------------------------------------------------------- operations

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        user_id = self.user_of(namespace)
        if is_memory_id(key):
            try:
                return self._item(namespace, self.client.get_memory(user_id, key).memory)
            except NotFoundError:
                return None
        kept = self._from_statement(user_id, key)
        return self._item(namespace, kept[0]) if kept else None

    def _search(self, op: SearchOp) -> list[SearchItem]:
        namespace = op.namespace_prefix
        user_id = self.user_of(namespace)
        if op.query:
            wanted = min(MAX_RECALL, op.offset + op.limit)
            hits = self.client.recall(user_id, {"query": op.query, "k": wanted}).hits
            found = [self._item(namespace, hit.memory, hit.score.total) for hit in hits]
        else:
            page = self.client.list_memories(user_id, limit=min(PAGE, op.offset + op.limit))
            found = [self._item(namespace, memory) for memory in page.items]
        if op.filter:
            found = [item for item in found if all(item.value.get(k) == v for k, v in op.filter.items())]
        return found[op.offset : op.offset + op.limit]

    def _put(self, namespace: tuple[str, ...], key: str, value: Mapping[str, Any]) -> None:
        user_id = self.user_of(namespace)
        if is_memory_id(key):
            raise ValueError(f"{key} is a memory: it changes through what the user says, not by overwriting")
        session_id = value.get("session_id") or self.session_id
        if "text" in value:
            turn = {"text": value["text"], "dialog_id": key}
            self.client.write_turns(user_id, {"session_id": session_id, "turns": [turn]}, idempotency_key=key)
            return
        fields = {name: v for name, v in value.items() if name != "session_id"}
        memory = {**fields, "session_id": session_id, "dialog_ids": [key]}
        self.client.write_memory(user_id, memory, idempotency_key=key)

    def _delete(self, namespace: tuple[str, ...], key: str) -> None:
        user_id = self.user_of(namespace)
        if is_memory_id(key):
            doomed = [key]
        else:
            doomed = [memory.memory_id for memory in self._from_statement(user_id, key)]
        for memory_id in doomed:
            try:
                self.client.forget(user_id, memory_id, {"reason": "deleted through the LangGraph store"})
            except NotFoundError:
                pass  # already forgotten: a delete is idempotent
