"""The write path's gates: the bounded gate (tier capacities, compression, decay) and the frozen gate
(locked facts)."""
