"""``MilvusIndex``: the vector index in Milvus (``actors.store.vectors.index.VectorIndex``), reached over
gRPC.

Locally that is a ``milvus-lite server`` or a Milvus 2.3 standalone server
(``localstack.milvus``), never milvus-lite's embedded file mode: only one OS process may open
a milvus-lite data dir, and every Ray worker needs the index. The same ``http://host:port`` URI reaches a
Milvus standalone or cluster; the tests hold both local servers to the same behaviour.

Layout: one collection; one partition per tenant (``t_<tenant_id>``), and every search, query and delete
names that partition, then filters by user. Filter strings come only from ``actors.store.vectors.filters``.
The primary key is collection-wide, though: an upsert into one partition moves a row of the same id out of
another, and a delete naming a partition removes the id wherever it lives. Memory ids are uuid4s, so this
only matters for a bug or a hostile id, and both are stopped: upserts refuse ids indexed under another
tenant, and deletes pass on only the ids found in the tenant's own partition.

Choices measured on milvus-lite 3.2 (384-d, 50k rows, 10k per tenant, 1k per user):

* index FLAT, metric IP: exact, ~7 ms per filtered search. HNSW took 26 s to load and, because milvus-lite
  pre-filters the graph walk by user, found only 38% of the true top 10.
* a ``create_index`` the server cannot build is still saved, and loading then fails until ``drop_index``;
  opening the index therefore checks the saved index, replaces a wrong or broken one, and loads.
* after a server restart an indexed collection comes back released; a "not loaded" answer is met with one
  ``load_collection`` and a retry.
* read-your-writes: milvus-lite applies writes synchronously, so a row is visible to every client as soon
  as ``upsert`` returns. A real Milvus makes a write visible at its next time tick (every 200 ms); a
  "Strong" read waits for that tick (p50 200 ms per search on the standalone server, against 3 ms), a
  "Session" read waits only for this process's own last write to the collection (pymilvus keeps that
  timestamp per process). So the hot paths (``search``, the foreign-id check of ``upsert``) read at
  "Session": every write this process made is visible, another process's writes after at most a tick.
  The listings that must see every process's writes (``ids``, ``count``, the ids a ``delete`` removes)
  read at "Strong".

Differences of the standalone server (2.3) that this module absorbs: search hits name the primary key ``id``
(milvus-lite: ``memory_id``), so hits read it from the returned fields; a loaded partition cannot be dropped
until it is released; and searches and queries on a missing partition fail with code 65535 and a message,
not code 200.

Errors (``schemas.errors``): ``StoreUnavailable`` when the server is unreachable or timing out,
``VectorIndexError`` when Milvus refused a request, ``VectorSchemaMismatch`` when the collection exists with
another schema (e.g. another dimension).
"""

import functools
import logging
import re
import threading
import time
from collections.abc import Callable
from typing import TypeVar

import grpc
import numpy as np
from pymilvus import DataType, MilvusClient, MilvusException

from actors.store.vectors.filters import (
    ALL_ROWS,
    checked_row,
    checked_vector,
    ids_filter,
    partition_name,
    tenant_filter,
    user_filter,
)
from actors.store.vectors.index import VectorHit, VectorRow
from schemas.enums import Layer, State
from schemas.errors import InvalidInput, StoreUnavailable, VectorIndexError, VectorSchemaMismatch
from schemas.ids import check_memory_id

log = logging.getLogger(__name__)


class _DropMissingSessionTs(logging.Filter):
    """milvus-lite and Milvus 2.3 return no session timestamp to query iterators; pymilvus then warns on every
    paged ``ids()`` call and falls back to a client-side timestamp, which is correct for a single server."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("failed to get mvccTs")


logging.getLogger("pymilvus.client.iterator.query_iterator").addFilter(_DropMissingSessionTs())

T = TypeVar("T")

#: Milvus caps ``limit`` (and query-iterator pages) at 16384.
MAX_LIMIT = 16384
_WRITE_BATCH = 1000
_SCAN_PAGE = 4096
_INDEX = {"index_type": "FLAT", "metric_type": "IP"}

# status codes shared by Milvus and milvus-lite
_CONNECT_FAILED = 2
_COLLECTION_NOT_LOADED = 101
_PARTITION_NOT_FOUND = 200
#: what the standalone server (2.3) answers a search or query naming a missing partition
_UNEXPECTED_ERROR = 65535
_MISSING_PARTITION_MESSAGE = re.compile(r"partition name \S+ not found")
_UNREACHABLE_GRPC = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED}


def _unavailable(uri: str, exc: Exception) -> StoreUnavailable:
    return StoreUnavailable(f"Milvus at {uri} is unavailable: {getattr(exc, 'message', exc)}")


def _is_unreachable(exc: MilvusException) -> bool:
    return exc.code == _CONNECT_FAILED or exc.code in _UNREACHABLE_GRPC


def _is_missing_partition(exc: MilvusException) -> bool:
    return exc.code == _PARTITION_NOT_FOUND or (
        exc.code == _UNEXPECTED_ERROR and _MISSING_PARTITION_MESSAGE.search(str(exc.message)) is not None
    )


class MilvusIndex:
    def __init__(self, uri: str, collection: str, dim: int, timeout: float = 10.0):
        self.uri = uri
        self.collection = collection
        self.dim = dim
        self.timeout = timeout
        self._known_partitions: set[str] = set()
        self._lock = threading.Lock()
        self._client = self._connect()
        self._open_collection()

    def _connect(self, attempts: int = 5) -> MilvusClient:
        """A loaded milvus-lite server refuses new channels for a moment ("too many pings"): retry briefly."""
        for attempt in range(attempts):
            try:
                return MilvusClient(uri=self.uri, timeout=self.timeout)
            except MilvusException as exc:
                if attempt == attempts - 1 or not _is_unreachable(exc):
                    raise _unavailable(self.uri, exc) from exc
                time.sleep(0.5 * 2**attempt)
        raise AssertionError("unreachable")

    def __reduce__(self):
        # a live gRPC client cannot be pickled; Ray tasks and actors reconnect from the settings
        return (MilvusIndex, (self.uri, self.collection, self.dim, self.timeout))

    def close(self) -> None:
        self._client.close()

    # -- the VectorIndex protocol ----------------------------------------------------------------------

    def ensure_tenant(self, tenant_id: str) -> None:
        name = partition_name(tenant_id)
        with self._lock:
            if name in self._known_partitions:
                return
        if not self._run(lambda: self._client.has_partition(self.collection, name, timeout=self.timeout)):
            try:
                self._run(lambda: self._client.create_partition(self.collection, name, timeout=self.timeout))
            except VectorIndexError:
                # another process may have created it in the meantime
                if not self._run(
                    lambda: self._client.has_partition(self.collection, name, timeout=self.timeout)
                ):
                    raise
        with self._lock:
            self._known_partitions.add(name)

    def drop_tenant(self, tenant_id: str) -> None:
        name = partition_name(tenant_id)
        with self._lock:
            self._known_partitions.discard(name)
        if not self._run(lambda: self._client.has_partition(self.collection, name, timeout=self.timeout)):
            return

        def release() -> None:
            # a real Milvus refuses to drop a loaded partition (the drop fails, the partition stays)
            try:
                self._client.release_partitions(self.collection, [name], timeout=self.timeout)
            except grpc.RpcError as exc:
                if exc.code() != grpc.StatusCode.UNIMPLEMENTED:  # milvus-lite: none to release, none needed
                    raise

        # another process dropping it meanwhile is fine: both calls then find nothing to do
        self._run(release, on_missing_partition=lambda: None)
        self._run(lambda: self._client.drop_partition(self.collection, name, timeout=self.timeout))

    def upsert(self, tenant_id: str, rows: list[VectorRow]) -> None:
        checked = [checked_row(row, self.dim) for row in rows]
        if not checked:
            return
        name = partition_name(tenant_id)
        self.ensure_tenant(tenant_id)
        for start in range(0, len(checked), _WRITE_BATCH):
            batch = checked[start : start + _WRITE_BATCH]
            self._refuse_foreign_ids([row.memory_id for row in batch], name)
            data = [
                {
                    "memory_id": row.memory_id,
                    "user_id": row.user_id,
                    "layer": row.layer.value,
                    "state": row.state.value,
                    "vector": row.vector.tolist(),
                }
                for row in batch
            ]

            def write(data: list[dict] = data) -> None:
                self._client.upsert(self.collection, data, partition_name=name, timeout=self.timeout)

            self._run(write, on_missing_partition=functools.partial(self._recreate_then, tenant_id, write))

    def delete(self, tenant_id: str, memory_ids: list[str]) -> None:
        doomed = list(dict.fromkeys(check_memory_id(memory_id) for memory_id in memory_ids))
        name = partition_name(tenant_id)
        for start in range(0, len(doomed), _WRITE_BATCH):
            # the primary key is collection-wide: a delete naming this partition still removes the row
            # wherever it lives, so only ids that are in the tenant's partition are passed on
            present = self._present(doomed[start : start + _WRITE_BATCH], name, consistency="Strong")
            self._delete_present(sorted(present), name)

    def delete_user(self, tenant_id: str, user_id: str) -> None:
        # by explicit ids, not by filter: milvus-lite resolves a filtered delete across all partitions
        name = partition_name(tenant_id)
        owned = sorted(self.ids(tenant_id, user_id))
        for start in range(0, len(owned), _WRITE_BATCH):
            self._delete_present(owned[start : start + _WRITE_BATCH], name)

    def search(
        self,
        tenant_id: str,
        user_id: str,
        vector: np.ndarray,
        k: int,
        layers: frozenset[Layer] | None = None,
        states: frozenset[State] | None = None,
    ) -> list[VectorHit]:
        """Nearest items of one user inside the tenant's partition, best first (exact inner product)."""
        expr = user_filter(user_id, layers, states)
        none_wanted = layers is not None and not layers or states is not None and not states
        return self._nearest(tenant_id, expr, vector, 0 if none_wanted else k)

    def search_tenant(
        self, tenant_id: str, vector: np.ndarray, k: int, states: frozenset[State] | None = None
    ) -> list[VectorHit]:
        """Nearest items of any user of the tenant, best first: the operator's search."""
        expr = tenant_filter(states)
        return self._nearest(tenant_id, expr, vector, 0 if states is not None and not states else k)

    def _nearest(self, tenant_id: str, expr: str, vector: np.ndarray, k: int) -> list[VectorHit]:
        """The ``k`` best rows of the tenant's partition that ``expr`` (built by ``filters``) matches."""
        query = checked_vector(vector, self.dim).tolist()
        name = partition_name(tenant_id)
        if k < 1:
            return []
        found = self._run(
            lambda: self._client.search(
                self.collection,
                data=[query],
                filter=expr,
                limit=min(k, MAX_LIMIT),
                # the key by name: hits carry it as "memory_id" in milvus-lite, as "id" in Milvus 2.3
                output_fields=["memory_id", "user_id", "layer", "state"],
                partition_names=[name],
                search_params={"metric_type": _INDEX["metric_type"]},
                consistency_level="Session",
                timeout=self.timeout,
            ),
            on_missing_partition=lambda: [[]],
        )
        return [
            VectorHit(
                memory_id=hit["entity"]["memory_id"],
                score=float(hit["distance"]),
                layer=Layer(hit["entity"]["layer"]),
                state=State(hit["entity"]["state"]),
                user_id=hit["entity"]["user_id"],
            )
            for hit in found[0]
        ]

    def ids(self, tenant_id: str, user_id: str | None = None) -> set[str]:
        """Every memory id of the tenant (or one user). One query when they fit in one answer, else a query
        iterator: each query scans the partition in milvus-lite (2000 ids, 200k rows: 1.6 s vs 6-16 s)."""
        expr = ALL_ROWS if user_id is None else user_filter(user_id)
        name = partition_name(tenant_id)
        first = self._run(
            lambda: self._client.query(
                self.collection,
                filter=expr,
                output_fields=["memory_id"],
                partition_names=[name],
                limit=MAX_LIMIT,
                consistency_level="Strong",
                timeout=self.timeout,
            ),
            on_missing_partition=list,
        )
        if len(first) < MAX_LIMIT:
            return {row["memory_id"] for row in first}

        def scan() -> set[str]:
            iterator = self._client.query_iterator(
                self.collection,
                batch_size=_SCAN_PAGE,
                filter=expr,
                output_fields=["memory_id"],
                partition_names=[name],
                timeout=self.timeout,
                consistency_level="Strong",
            )
            found: set[str] = set()
            try:
                while page := iterator.next():
                    found.update(row["memory_id"] for row in page)
            finally:
                iterator.close()
            return found

        return self._run(scan, on_missing_partition=set)

    def count(self, tenant_id: str, user_id: str | None = None) -> int:
        # always with a filter: an unfiltered count(*) ignores partition_names in milvus-lite
        expr = ALL_ROWS if user_id is None else user_filter(user_id)
        name = partition_name(tenant_id)
        rows = self._run(
            lambda: self._client.query(
                self.collection,
                filter=expr,
                output_fields=["count(*)"],
                partition_names=[name],
                consistency_level="Strong",
                timeout=self.timeout,
            ),
            on_missing_partition=lambda: [{"count(*)": 0}],
        )
        return int(rows[0]["count(*)"])

    # -- keeping tenants apart under a collection-wide primary key -----------------------------------------

    def _present(self, memory_ids: list[str], partition: str | None, consistency: str) -> set[str]:
        """Which of these ids have a row, in one partition or (``None``) anywhere in the collection."""
        if not memory_ids:
            return set()
        rows = self._run(
            lambda: self._client.query(
                self.collection,
                filter=ids_filter(memory_ids),
                output_fields=["memory_id"],
                partition_names=[partition] if partition else None,
                consistency_level=consistency,
                timeout=self.timeout,
            ),
            on_missing_partition=list,
        )
        return {row["memory_id"] for row in rows}

    def _refuse_foreign_ids(self, memory_ids: list[str], partition: str) -> None:
        """An upsert of an id that lives in another tenant's partition would move that row here."""
        existing = self._present(memory_ids, None, consistency="Session")
        foreign = existing - self._present(sorted(existing), partition, "Session") if existing else set()
        if foreign:
            raise InvalidInput(
                f"{len(foreign)} memory id(s) are indexed under another tenant; refusing to move them"
            )

    def _delete_present(self, memory_ids: list[str], partition: str) -> None:
        if memory_ids:
            self._run(
                lambda: self._client.delete(
                    self.collection,
                    filter=ids_filter(memory_ids),
                    partition_name=partition,
                    timeout=self.timeout,
                ),
                on_missing_partition=lambda: None,
            )

    # -- opening and repairing the collection ----------------------------------------------------------

    def _open_collection(self) -> None:
        if not self._run(lambda: self._client.has_collection(self.collection, timeout=self.timeout)):
            try:
                self._create_collection()
                return
            except VectorIndexError:
                # lost a creation race with another process: fall through and check what it made
                if not self._run(lambda: self._client.has_collection(self.collection, timeout=self.timeout)):
                    raise
        self._check_schema()
        self._repair_index()
        self._load()

    def _create_collection(self) -> None:
        schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("memory_id", DataType.VARCHAR, is_primary=True, max_length=40)
        schema.add_field("user_id", DataType.VARCHAR, max_length=128)
        schema.add_field("layer", DataType.VARCHAR, max_length=16)
        schema.add_field("state", DataType.VARCHAR, max_length=16)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=self.dim)
        self._run(
            lambda: self._client.create_collection(
                self.collection,
                schema=schema,
                index_params=self._index_params(),
                consistency_level="Strong",
                timeout=self.timeout,
            )
        )

    def _index_params(self):
        params = self._client.prepare_index_params()
        params.add_index(field_name="vector", **_INDEX)
        return params

    def _check_schema(self) -> None:
        described = self._run(lambda: self._client.describe_collection(self.collection, timeout=self.timeout))
        fields = {field["name"]: field for field in described["fields"]}
        expected = {"memory_id", "user_id", "layer", "state", "vector"}
        dim = fields.get("vector", {}).get("params", {}).get("dim")
        if set(fields) != expected or dim is None or int(dim) != self.dim:
            raise VectorSchemaMismatch(
                f"collection {self.collection!r} has fields {sorted(fields)} and vector dim {dim}, expected "
                f"{sorted(expected)} with dim {self.dim}: use another collection name or drop it and reindex"
            )

    def _repair_index(self) -> None:
        saved = self._run(
            lambda: self._client.describe_index(self.collection, "vector", timeout=self.timeout)
        )
        wanted = saved is not None and all(str(saved.get(key, "")).upper() == v for key, v in _INDEX.items())
        if not wanted:
            log.warning("replacing vector index %s of %r with %s", saved, self.collection, _INDEX)
            self._rebuild_index(had_index=saved is not None)

    def _rebuild_index(self, had_index: bool) -> None:
        self._run(lambda: self._client.release_collection(self.collection, timeout=self.timeout))
        if had_index:
            self._run(lambda: self._client.drop_index(self.collection, "vector", timeout=self.timeout))
        self._run(
            lambda: self._client.create_index(self.collection, self._index_params(), timeout=self.timeout)
        )

    def _load(self) -> None:
        try:
            self._run(
                lambda: self._client.load_collection(self.collection, timeout=self.timeout), retry=False
            )
        except VectorIndexError as exc:
            # a saved index that cannot be built blocks loading until it is dropped
            log.warning("loading %r failed (%s); rebuilding its vector index", self.collection, exc)
            self._rebuild_index(had_index=True)
            self._run(
                lambda: self._client.load_collection(self.collection, timeout=self.timeout), retry=False
            )

    # -- error handling ---------------------------------------------------------------------------------

    def _recreate_then(self, tenant_id: str, action: Callable[[], T]) -> T:
        """The partition vanished under a cached name (a concurrent ``drop_tenant``): recreate, retry once."""
        with self._lock:
            self._known_partitions.discard(partition_name(tenant_id))
        self.ensure_tenant(tenant_id)
        return self._run(action)

    def _run(
        self,
        action: Callable[[], T],
        on_missing_partition: Callable[[], T] | None = None,
        retry: bool = True,
    ) -> T:
        """Run one client call, mapping failures: unreachable → ``StoreUnavailable``; collection not loaded
        (after a server restart) → load and retry once; missing partition → ``on_missing_partition``."""
        try:
            return action()
        except MilvusException as exc:
            if _is_unreachable(exc):
                raise _unavailable(self.uri, exc) from exc
            if exc.code == _COLLECTION_NOT_LOADED and retry:
                self._load()
                return self._run(action, on_missing_partition, retry=False)
            if on_missing_partition is not None and _is_missing_partition(exc):
                return on_missing_partition()
            raise VectorIndexError(f"Milvus refused the request: {exc.message}", exc.code) from exc
        except grpc.RpcError as exc:
            raise _unavailable(self.uri, exc) from exc
