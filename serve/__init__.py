"""The HTTP and Python-handle front of Hermes Memory: one Ray Serve deployment (``serve.app``) with a FastAPI
ingress (``serve.routes``), API-key authentication (``serve.auth``), one error mapping (``serve.errors``),
the tenant-scoped operations both front doors share (``serve.gateway``), and a small HTTP client
(``serve.client``). ``serve.cli`` and ``serve.stack`` run the local stack.
"""
