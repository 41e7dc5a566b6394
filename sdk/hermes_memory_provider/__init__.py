"""Hermes Memory for Hermes Agent: a memory provider that gives every Hermes Agent user their own bounded,
frozen-fact memory in a Hermes Memory service, over HTTP (``sdk.client``), with no Ray in the agent.

``hermes-memory-provider install`` places the plugin directory Hermes Agent discovers
(``$HERMES_HOME/plugins/hermes_memory/``); its ``register(ctx)`` comes from here.
"""

from typing import Any


def register(ctx: Any) -> None:
    """Hermes Agent's plugin hook: ``ctx.register_memory_provider(HermesMemoryProvider())``."""
    from hermes_memory_provider.provider import HermesMemoryProvider  # needs Hermes Agent installed

    ctx.register_memory_provider(HermesMemoryProvider())
