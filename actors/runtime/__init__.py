"""The Ray runtime of Hermes Memory: a fixed pool of long-lived ``UserHost`` actors, each hosting many users'
services as virtual actors (one mailbox per user), and the routing that sends a user's call straight to
its host. docs/architecture.md describes the design; everything else in ``actors`` is plain Python.
"""
