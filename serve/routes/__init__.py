"""The HTTP routes, one router per area; ``serve.app`` mounts them on the FastAPI ingress."""
