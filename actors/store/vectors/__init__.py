"""The derived vector index: the VectorIndex seam, its Milvus and in-memory implementations, and filters."""
