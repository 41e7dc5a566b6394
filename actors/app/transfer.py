"""Export and import in the application layer (docs/export.md): a user's stored rows as the lines of
``schemas.transfer``, and lines back into the domain records an import adds.

Export reads SQL, the source of truth, in pages (``MemoryStore.transfer``), so a user of any size streams in
bounded memory. Import is run by the user's service (``Writes.import_records``, ``actors.app.resources``) on
the user's host, so it is committed under the host's fence like every other write; a memory whose text reads
as an instruction to a future prompt is refused there, as a turn would be, and secrets are redacted from what
is kept, as on every write.
"""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import BaseModel

from actors.core.memory import Alert, AuditEvent, MemoryItem, utcnow
from actors.language.safety.injection import neutralize_injection
from actors.language.safety.secrets import redact
from actors.store.sql.store import MemoryStore
from actors.store.sql.transfer import ImportBatch, Tombstone
from schemas.transfer import (
    AlertLine,
    EndLine,
    EventLine,
    HeaderLine,
    MemoryLine,
    TombstoneLine,
    UserRecord,
)

PAGE = 500


def user_lines(store: MemoryStore, tenant_id: str, user_id: str) -> Iterator[BaseModel]:
    """One user's records: tombstones, memories (by id), audit events (as written), alerts."""
    transfer = store.transfer
    for tombstone in transfer.tombstones(tenant_id, user_id):
        yield TombstoneLine.model_validate(tombstone)
    after = ""
    while page := transfer.items_after(tenant_id, user_id, after, PAGE):
        for item in page:
            yield MemoryLine.model_validate(item)
        after = page[-1].memory_id
    last_event = 0
    while events := transfer.events_after(tenant_id, user_id, last_event, PAGE):
        for _, event in events:
            yield EventLine.model_validate(event)
        last_event = events[-1][0]
    for alert in transfer.alerts(tenant_id, user_id):
        yield AlertLine.model_validate(alert)


def export_lines(store: MemoryStore, tenant_id: str, user_id: str | None) -> Iterator[BaseModel]:
    """A whole export file: the header, one user's records (or every user's, by user id), the end line."""
    yield HeaderLine(tenant_id=tenant_id, user_id=user_id, exported_at=utcnow())
    users = [user_id] if user_id is not None else store.transfer.users(tenant_id)
    records = 0
    for user in users:
        for line in user_lines(store, tenant_id, user):
            records += 1
            yield line
    yield EndLine(records=records)


def instruction_like(line: MemoryLine) -> bool:
    """Text a turn would be refused for (docs/trust.md#3-hostile-input) must not enter by import either."""
    texts = (line.content, line.value, line.source_text, line.context)
    return any(text is not None and neutralize_injection(text).flagged for text in texts)


def batch_of(tenant_id: str, user_id: str, records: list[UserRecord]) -> tuple[ImportBatch, int]:
    """The domain records of one user's import lines (whatever user id the lines name), and how many
    memories were refused as instruction-like."""
    batch = ImportBatch()
    refused = 0
    for record in records:
        values = record.model_dump(exclude={"type", "user_id", "display"})  # display: derived, not stored
        if isinstance(record, TombstoneLine):
            batch.tombstones.append(Tombstone(tenant_id, user_id, **values))
        elif isinstance(record, MemoryLine):
            if instruction_like(record):
                refused += 1
                continue
            for name in ("content", "value", "source_text", "context"):
                if values[name] is not None:  # as on every write: no secret or identifier is stored
                    values[name] = redact(values[name]).text
            batch.items.append(MemoryItem(tenant_id=tenant_id, user_id=user_id, **values))
        elif isinstance(record, EventLine):
            batch.events.append(AuditEvent(tenant_id=tenant_id, user_id=user_id, **values))
        else:
            batch.alerts.append(Alert(tenant_id=tenant_id, user_id=user_id, **values))
    return batch, refused
