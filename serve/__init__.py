"""The HTTP and Python-handle front of Hermes Memory: one Ray Serve deployment (``serve.app``) with a FastAPI
ingress (``serve.routes``), API-key authentication (``serve.auth``), one error mapping (``serve.errors``), the
tenant-scoped operations both front doors share (``serve.gateway``), and the typed HTTP client
(``serve.client``). ``serve.cli`` (the command line) and ``serve.local`` (its supervisor) run the local stack;
``serve.eval`` is the LoCoMo harness. ``serve/sdk`` is a separate package: the client without the service, and
the Hermes Agent memory provider (docs/hermes-agent.md).
"""
