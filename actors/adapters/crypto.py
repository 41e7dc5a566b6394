"""Optional encryption of memory content at rest (docs/trust.md#5-encryption-at-rest-optional; issue 5).

With ``HERMES_CONTENT_KEY`` set, every text that carries what a user said is sealed before it reaches SQL
and opened when it is read: an item's ``content`` and ``value``, audit payloads (they snapshot content), and
session snapshots (rendered content). Ids, enums, scores, hashes and embeddings stay clear: the store
queries them, and none of them spells the content out. Hermes never writes the key anywhere: it lives in
the environment of each process that touches SQL (on a Ray cluster, pass it through the pod's secret or
``runtime_env={"env_vars": ...}``).

* The key: 32 random bytes, URL-safe base64 (``python -c "import base64, os;
  print(base64.urlsafe_b64encode(os.urandom(32)).decode())"``).
* AES-256-GCM with a fresh 96-bit nonce per value; the row's identity (memory id and field, or the audit or
  snapshot scope) is the associated data, so a sealed value moved to another row fails to open.
* A sealed value is ``enc1:`` + base64(nonce ‖ ciphertext). Values without the prefix are returned as they
  are, so rows written before encryption was switched on stay readable (they are sealed when next written).

Errors: ``ContentKeyError`` (HTTP 503) when a sealed value meets a missing, malformed or wrong key, or a
tampered row.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from functools import lru_cache
from typing import Any, overload

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from schemas.errors import ContentKeyError

CONTENT_KEY_ENV = "HERMES_CONTENT_KEY"
SEALED_PREFIX = "enc1:"
_NONCE_BYTES = 12
#: the only key of a sealed JSON payload (audit before/after)
_SEALED_JSON_KEY = "sealed"


class ContentCipher:
    def __init__(self, key: bytes):
        if len(key) != 32:
            raise ContentKeyError(f"{CONTENT_KEY_ENV} must hold 32 bytes (URL-safe base64), not {len(key)}")
        self._aead = AESGCM(key)

    def seal(self, text: str, context: str) -> str:
        nonce = os.urandom(_NONCE_BYTES)
        sealed = self._aead.encrypt(nonce, text.encode(), context.encode())
        return SEALED_PREFIX + base64.urlsafe_b64encode(nonce + sealed).decode()

    def open(self, token: str, context: str) -> str:
        try:
            raw = base64.urlsafe_b64decode(token.removeprefix(SEALED_PREFIX))
            plain = self._aead.decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], context.encode())
        except (InvalidTag, binascii.Error, ValueError):
            raise ContentKeyError("stored content could not be opened: wrong key or tampered row") from None
        return plain.decode()


@lru_cache(maxsize=4)
def _cipher_for(encoded_key: str) -> ContentCipher:
    try:
        key = base64.urlsafe_b64decode(encoded_key.encode())
    except (binascii.Error, ValueError):
        raise ContentKeyError(f"{CONTENT_KEY_ENV} is not URL-safe base64") from None
    return ContentCipher(key)


def current_cipher() -> ContentCipher | None:
    """The cipher of the key in the environment, or None when encryption at rest is off."""
    encoded = os.environ.get(CONTENT_KEY_ENV, "")
    return _cipher_for(encoded) if encoded else None


def seal(text: str | None, context: str) -> str | None:
    cipher = current_cipher()
    return text if text is None or cipher is None else cipher.seal(text, context)


@overload
def unseal(text: str, context: str) -> str: ...


@overload
def unseal(text: None, context: str) -> None: ...


@overload
def unseal(text: str | None, context: str) -> str | None: ...


def unseal(text: str | None, context: str) -> str | None:
    if text is None or not text.startswith(SEALED_PREFIX):
        return text
    cipher = current_cipher()
    if cipher is None:
        raise ContentKeyError(f"stored content is encrypted and {CONTENT_KEY_ENV} is not set")
    return cipher.open(text, context)


def seal_json(payload: dict[str, Any] | None, context: str) -> dict[str, Any] | None:
    if payload is None or current_cipher() is None:
        return payload
    return {_SEALED_JSON_KEY: seal(json.dumps(payload, ensure_ascii=False), context)}


def unseal_json(payload: dict[str, Any] | None, context: str) -> dict[str, Any] | None:
    if isinstance(payload, dict) and set(payload) == {_SEALED_JSON_KEY}:
        opened: dict[str, Any] = json.loads(unseal(payload[_SEALED_JSON_KEY], context))
        return opened
    return payload


def item_context(memory_id: str, field: str) -> str:
    """Associated data of an item's text field: memory ids are unique across tenants."""
    return f"item/{memory_id}/{field}"


def audit_context(tenant_id: str, user_id: str, memory_id: str | None) -> str:
    return f"audit/{tenant_id}/{user_id}/{memory_id or ''}"


def snapshot_context(tenant_id: str, user_id: str, session_id: str) -> str:
    return f"snapshot/{tenant_id}/{user_id}/{session_id}"
