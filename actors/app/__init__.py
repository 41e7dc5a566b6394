"""The per-user application layer: the user service, the user commands that are its operations, declared
once (``commands``), the batch jobs' maintenance passes, and the tenant's read-only view."""
