"""The per-user application service: one user's operations over the core, the language layer and
the stores."""
