"""The HTTP and Python-handle front of Hermes Memory, and nothing else: one Ray Serve deployment
(``serve.app``) with a FastAPI ingress (``serve.routes``), API-key authentication (``serve.auth``), one error
mapping (``serve.errors``), the tenant-scoped door both front doors share (``serve.gateway``) and the HTTP
spans (``serve.telemetry``). The typed HTTP client and the Hermes Agent memory provider live in ``sdk/``
(docs/hermes-agent.md); the command line, the local stack and the evaluation harness are doors of their own
(``cli``, ``localstack``, ``evaluation``; docs/design.md).
"""
