"""The local stack supervisor: SQL schema, a Milvus server, Ray and Serve on one machine."""
