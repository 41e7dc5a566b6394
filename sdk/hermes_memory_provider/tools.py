"""The tools the model gets (OpenAI function-calling schemas, as Hermes Agent expects them)."""

from typing import Any

_MEMORY_ID = {"type": "string", "description": "the memory id (m_...) from a recall result"}

TOOL_SCHEMAS: list[dict[str, Any]] = [
    {
        "name": "hermes_memory_recall",
        "description": "Search what is remembered about the user. Returns the best matches with their ids.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "what to look for, in the user's words"},
                "k": {"type": "integer", "minimum": 1, "maximum": 50, "description": "how many (default 8)"},
            },
            "required": ["query"],
        },
    },
    {
        "name": "hermes_memory_remember",
        "description": "Keep something the user explicitly asked you to remember about them.",
        "parameters": {
            "type": "object",
            "properties": {
                "content": {"type": "string", "description": "the fact, as one first-person sentence"},
                "kind": {
                    "type": "string",
                    "enum": ["fact", "preference", "relation", "event", "state", "lesson"],
                    "description": "default fact",
                },
            },
            "required": ["content"],
        },
    },
    {
        "name": "hermes_memory_forget",
        "description": "Forget one memory everywhere (the user asked, or it is wrong).",
        "parameters": {
            "type": "object",
            "properties": {"memory_id": _MEMORY_ID, "reason": {"type": "string"}},
            "required": ["memory_id"],
        },
    },
    {
        "name": "hermes_memory_unfreeze",
        "description": (
            "Change a frozen (locked) fact, e.g. the user moved or an allergy was misrecorded. Audited: "
            "give the user's reason; the current dialog is recorded with it."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "memory_id": _MEMORY_ID,
                "reason": {"type": "string", "description": "why, as the user said it"},
                "new_content": {"type": "string", "description": "the corrected fact, if there is one"},
                "dialog_id": {"type": "string", "description": "defaults to the current turn"},
            },
            "required": ["memory_id", "reason"],
        },
    },
]
