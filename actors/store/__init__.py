"""Adapters to the two stores: SQL (source of truth) and the Milvus vector index (derived, rebuildable)."""
