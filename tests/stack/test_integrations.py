"""The adapters where agent code lives, each driven by the framework's own classes against the real stack
(no LLM: the graph's nodes and the frameworks' MCP clients call the store and the tools directly).

* LangGraph: ``integrations.langgraph.HermesStore`` under a compiled ``StateGraph`` whose nodes take the
  store, synchronously and asynchronously; then the store's own get / search / delete.
* The OpenAI Agents SDK (``agents.mcp.MCPServerStreamableHttp``, ``MCPServerStdio``) and pydantic-ai
  (``pydantic_ai.mcp.MCPToolset``) list and call the tools of the MCP door.

CrewAI is not tested: it pins ``mcp<2`` and ``pydantic<2.13``, so it cannot be installed beside this
package's ``mcp`` 2 and pydantic (its MCP adapter reaches the same streamable HTTP endpoint).
"""

import asyncio
import json
import sys
import uuid
from typing import Any, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore, InvalidNamespaceError

from integrations.langgraph import HermesStore
from sdk.client import HermesClient

pytestmark = pytest.mark.slow


class Conversation(TypedDict, total=False):
    user_id: str
    message: str
    question: str
    recalled: list[str]


def remember(state: Conversation, *, store: BaseStore) -> Conversation:
    store.put((state["user_id"],), f"turn-{uuid.uuid4().hex[:12]}", {"text": state["message"]})
    return {}


def recall(state: Conversation, *, store: BaseStore) -> Conversation:
    found = store.search((state["user_id"],), query=state["question"], limit=3)
    return {"recalled": [item.value["content"] for item in found]}


async def aremember(state: Conversation, *, store: BaseStore) -> Conversation:
    await store.aput((state["user_id"],), f"turn-{uuid.uuid4().hex[:12]}", {"text": state["message"]})
    return {}


async def arecall(state: Conversation, *, store: BaseStore) -> Conversation:
    found = await store.asearch((state["user_id"],), query=state["question"], limit=3)
    return {"recalled": [item.value["content"] for item in found]}


def graph_of(store: BaseStore, write: Any, read: Any) -> Any:
    builder = StateGraph(Conversation)
    builder.add_node("remember", write)
    builder.add_node("recall", read)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    return builder.compile(store=store)


def test_langgraph_store_under_a_graph(serve_app, tenant_key):
    with HermesClient(serve_app, tenant_key) as client:
        store = HermesStore(client)
        graph = graph_of(store, remember, recall)
        out = graph.invoke(
            {
                "user_id": "lg",
                "message": "I'm allergic to peanuts",
                "question": "what should I avoid cooking?",
            }
        )
        assert out["recalled"] and "peanuts" in out["recalled"][0]
        agraph = graph_of(store, aremember, arecall)
        out = asyncio.run(
            agraph.ainvoke({"user_id": "lg2", "message": "I live in Lisbon", "question": "where do I live?"})
        )
        assert out["recalled"] and "Lisbon" in out["recalled"][0]
        assert "peanuts" not in json.dumps(out)  # another namespace is another user

        # the store's own calls: a statement's key finds the memory kept from it; delete forgets it
        store.put(("lg",), "pet-1", {"content": "My dog is called Rex", "kind": "fact", "slot": "basic.pet"})
        kept = store.get(("lg",), "pet-1")
        assert kept is not None and kept.value["content"] == "My dog is called Rex"
        assert store.get(("lg",), kept.key) == kept  # and by its memory id
        listed = store.search(("lg",))
        assert {item.key for item in listed} >= {kept.key} and len(listed) == 2
        assert [i.key for i in store.search(("lg",), filter={"kind": "fact", "slot": "basic.pet"})] == [
            kept.key
        ]
        store.delete(("lg",), "pet-1")
        assert store.get(("lg",), "pet-1") is None and store.get(("lg",), kept.key) is None
        assert client.list_memories("lg").total == 1
        with pytest.raises(ValueError):
            store.put(("lg",), listed[0].key, {"text": "overwrite"})  # a memory is never overwritten
        with pytest.raises(InvalidNamespaceError):
            store.search(("memories", "lg"))
        assert HermesStore(client, prefix=("memories",)).search(("memories", "lg"))[0].key == listed[-1].key


def mcp_headers(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_openai_agents_sdk_mcp_servers(serve_app, tenant_key):
    from agents.mcp import MCPServerStdio, MCPServerStreamableHttp

    async def drive() -> tuple[set[str], Any, Any]:
        http = MCPServerStreamableHttp(
            params={"url": f"{serve_app}/mcp", "headers": mcp_headers(tenant_key)}, name="hermes"
        )
        async with http:
            names = {tool.name for tool in await http.list_tools()}
            await http.call_tool("remember", {"user_id": "oa", "session_id": "s1", "text": "I'm vegetarian"})
        stdio = MCPServerStdio(
            params={
                "command": sys.executable,
                "args": ["-m", "cli.main", "mcp", "--url", serve_app, "--key", tenant_key],
            },
            client_session_timeout_seconds=120,
        )
        async with stdio:
            recalled = await stdio.call_tool("recall", {"user_id": "oa", "query": "what do I eat?"})
            missing = await stdio.call_tool("profile", {})
        return names, recalled, missing

    names, recalled, missing = asyncio.run(drive())
    assert {"recall", "remember", "start_session", "unfreeze"} <= names
    assert (
        not recalled.is_error and "vegetarian" in recalled.structured_content["hits"][0]["memory"]["content"]
    )
    assert missing.is_error and "user_id is required" in missing.content[0].text


def test_pydantic_ai_mcp_toolset(serve_app, tenant_key):
    from pydantic_ai.mcp import MCPToolset

    async def drive() -> tuple[set[str], Any, Any]:
        toolset = MCPToolset(f"{serve_app}/mcp", headers=mcp_headers(tenant_key), tool_error_behavior="error")
        async with toolset:
            names = {tool.name for tool in await toolset.list_tools()}
            written = await toolset.direct_call_tool(
                "remember", {"user_id": "pa", "session_id": "s1", "text": "I live in Porto"}
            )
            context = await toolset.direct_call_tool("start_session", {"user_id": "pa", "session_id": "s2"})
        return names, written, context

    names, written, context = asyncio.run(drive())
    assert {"recall", "remember", "forget", "profile"} <= names
    assert written["outcomes"][0]["action"] == "created"
    assert "Porto" in context["text"]
