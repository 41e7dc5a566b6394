"""Batch jobs on Ray Data (docs/jobs.md): consolidation, group profiles, archive restore, reindex.

Each job module has ``run(settings, ...)`` (what tests and the benchmark call, inside a connected Ray
process), the arguments of its command line, and ``main`` for ``python -m jobs.<module>`` (what ``ray job
submit`` runs). ``jobs.common`` holds what they share; ``docs/jobs.md`` describes them for operators.
"""
