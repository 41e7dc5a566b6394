"""The HTTP and Python-handle front of Hermes Memory, and nothing else: one Ray Serve deployment
(``serve.app``) with a FastAPI ingress (``serve.routes``), API-key authentication (``serve.auth``), one error
mapping (``serve.errors``), the tenant-scoped operations both front doors share (``serve.gateway``), the HTTP
spans (``serve.telemetry``) and the typed HTTP client (``serve.client``). ``serve/sdk`` is a separate
package: the client without the service, and the Hermes Agent memory provider (docs/hermes-agent.md).
The command line, the local stack and the evaluation harness are doors of their own (``cli``,
``localstack``, ``evaluation``; docs/design.md).
"""
