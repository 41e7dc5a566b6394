"""The per-user application layer: the user service and the one typed declaration of its operations."""
