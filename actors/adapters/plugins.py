"""Plug-ins chosen by name: a deployment's own extractor or embedder, installed as a Python package that
declares an entry point in ``hermes_memory.extractors`` or ``hermes_memory.embedders``.

``HERMES_EXTRACTOR=acme`` (or ``HERMES_EMBEDDER=acme``) looks the name up among the built-ins first, then
among the installed entry points of the group; the entry point names a callable that builds the component
(``factory(**options)``, the options of the group: ``languages`` for an extractor, ``num_threads`` for an
embedder). What it builds must have the group's methods, or the name is refused with a message saying what
is missing; an unknown name is refused with the names that are known.
"""

from collections.abc import Callable, Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from schemas.errors import InvalidInput

EXTRACTORS = "hermes_memory.extractors"
EMBEDDERS = "hermes_memory.embedders"


def installed(group: str) -> dict[str, EntryPoint]:
    """The entry points installed in ``group``, by name (of two with one name, the first Python lists)."""
    found: dict[str, EntryPoint] = {}
    for point in entry_points(group=group):
        found.setdefault(point.name, point)
    return found


def build(
    group: str,
    name: str,
    builtins: Mapping[str, Callable[..., Any]],
    required: tuple[str, ...],
    **options: Any,
) -> Any:
    """The component ``name`` of ``group``, built with ``options``; it must have every attribute of
    ``required``."""
    factory = builtins.get(name)
    if factory is None:
        plugins = installed(group)
        point = plugins.get(name)
        if point is None:
            known = ", ".join(sorted({*builtins, *plugins}))
            raise InvalidInput(f"unknown {_kind(group)} {name!r}: known are {known} (entry points {group})")
        try:
            factory = point.load()
        except Exception as error:  # a broken plug-in package: say which one, and why
            raise InvalidInput(f"{_kind(group)} {name!r} ({point.value}) failed to load: {error}") from error
    component = factory(**options)
    missing = [attribute for attribute in required if not hasattr(component, attribute)]
    if missing:
        raise InvalidInput(f"{_kind(group)} {name!r} lacks {', '.join(missing)}")
    return component


def _kind(group: str) -> str:
    return group.rsplit(".", 1)[-1].removesuffix("s")
