"""Rendezvous (highest-random-weight) hashing of users onto the host pool: every replica computes the same
host from the user key and the pool size alone, and growing the pool from n to n + 1 hosts moves only the
users the new host wins (about 1 / (n + 1) of them)."""

from __future__ import annotations

import hashlib


def _weight(key: str, host: int) -> int:
    digest = hashlib.blake2b(f"{host}\x1f{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def user_key(tenant_id: str, user_id: str) -> str:
    return f"{tenant_id}\x1e{user_id}"


def host_of(tenant_id: str, user_id: str, pool_size: int) -> int:
    """The index (0 .. pool_size - 1) of the host that serves this user."""
    key = user_key(tenant_id, user_id)
    return max(range(pool_size), key=lambda host: _weight(key, host))
