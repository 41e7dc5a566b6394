"""The Python SDK of Hermes Memory: the HTTP client (``sdk.client``) and the Hermes Agent memory provider
(``sdk/hermes_memory_provider``). ``sdk/pyproject.toml`` builds them into their own small distribution,
``hermes-memory-client`` (httpx and pydantic, no Ray, none of the service), for environments without the
service; the service's own install contains the client too (docs/hermes-agent.md)."""
