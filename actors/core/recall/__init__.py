"""Recall over one user's memory: the routes that find candidates, their fusion and the scored hits."""
