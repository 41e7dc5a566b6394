"""The local stack supervisor: SQL schema, a Milvus server (``localstack.milvus``, the child process every Ray
process connects to), Ray and Serve on one machine, started in order and stopped in reverse."""
