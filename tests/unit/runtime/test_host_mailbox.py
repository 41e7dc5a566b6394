"""A host's calls for one user wait in the user's mailbox; what a call needs that does not depend on the
user's memory is done before it waits. The host class runs here in this process, on SQLite and the hashing
embedder, without Ray: the test holds a user's mailbox itself."""

import asyncio
import time
import uuid

import pytest

from actors.app.commands import Recall, WriteMemory
from actors.runtime.host import UserHost
from actors.store.sql.store import MemoryStore
from actors.store.sql.tenants import TenantLimits
from schemas.api import RecallRequest, WriteMemoryRequest
from schemas.settings import HermesSettings


@pytest.fixture
def host(tmp_path):
    settings = HermesSettings(
        home=tmp_path,
        sql_url=f"sqlite:///{tmp_path / 'hermes.db'}",
        milvus_uri="http://127.0.0.1:9",  # no index: recall reads what memory holds
        embedder="hash",
        hosts=1,
    )
    store = MemoryStore.from_settings(settings)
    store.create_schema()
    tenant_id = f"t_{uuid.uuid4().hex[:12]}"
    store.create_tenant(tenant_id, limits=TenantLimits())
    plain_host = UserHost.__ray_metadata__.modified_class  # the actor's own class, run in this process
    yield plain_host(0, settings.model_dump_json(), 1), tenant_id
    store.dispose()


async def until(condition) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, "the host never reached the expected state"
        await asyncio.sleep(0.005)


def test_a_recall_waiting_for_the_users_mailbox_has_its_query_embedded_meanwhile(host):
    host, tenant_id = host
    note = WriteMemoryRequest(
        content="My sister Anna moved to Lyon", kind="fact", session_id="s1", dialog_ids=["d1"], remember=True
    )

    async def scenario() -> None:
        await host.run(tenant_id, "anna", WriteMemory(request=note, request_id="w1"))
        mailbox = host._residents[(tenant_id, "anna")].mailbox
        async with mailbox:  # another call of this user runs
            before = host.embedder.texts
            recall = asyncio.ensure_future(
                host.run(tenant_id, "anna", Recall(request=RecallRequest(query="where does Anna live?")))
            )
            await until(lambda: host.embedder.texts == before + 1)
            assert not recall.done()  # embedded while waiting: the mailbox is still held
        found = await recall
        assert "Lyon" in found.hits[0].memory.content
        assert host.embedder.texts == before + 1  # and not embedded again in the call

    asyncio.run(scenario())
