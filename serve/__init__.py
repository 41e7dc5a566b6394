"""The HTTP and Python-handle front of Hermes Memory: one Ray Serve deployment (``serve.app``) with a FastAPI
ingress (``serve.routes``), API-key authentication (``serve.auth``), one error mapping (``serve.errors``), the
tenant-scoped door both front doors share (``serve.gateway``). ``serve.cli`` (the command line) and
``serve.local`` (its supervisor) run the local stack; ``serve.eval`` is the LoCoMo harness. The typed HTTP
client and the Hermes Agent memory provider live in ``sdk/`` (docs/hermes-agent.md).
"""
