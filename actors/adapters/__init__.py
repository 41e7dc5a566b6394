"""Adapters to outside libraries the service uses: the embedder, field encryption and tracing."""
