"""The one error tree (``schemas.errors``): every exception the service defines is in it, drawn in its
docstring with the status it answers, and survives the pickling Ray ships it through."""

import importlib
import inspect
import pickle
import pkgutil
import re

import pytest

import actors
import cli
import evaluation
import jobs
import localstack
import schemas
import serve
from schemas import errors
from schemas.errors import HermesError
from schemas.ids import InvalidIdentifier, check_memory_id

#: the tree's lines: "├── Name   404  what it means"
DRAWN = {
    name: int(status)
    for name, status in re.findall(r"(?:^|[─\s])(\w+)\s{2,}(\d{3})\b", errors.__doc__ or "", re.MULTILINE)
}


def every_error_class() -> set[type[HermesError]]:
    def subclasses(cls: type[HermesError]) -> set[type[HermesError]]:
        found = set(cls.__subclasses__())
        return found.union(*(subclasses(c) for c in found))

    for package in (actors, cli, evaluation, jobs, localstack, schemas, serve):
        for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if "migrations" not in module.name:
                importlib.import_module(module.name)
    return {HermesError} | subclasses(HermesError)


ERRORS = sorted(every_error_class(), key=lambda cls: cls.__name__)


def test_every_error_lives_in_the_tree_and_is_drawn_with_its_status():
    classes = every_error_class()
    assert len(classes) >= 20
    for cls in classes:
        assert cls.__module__ in {"schemas.errors", "schemas.ids"}, cls
        assert DRAWN.get(cls.__name__) == cls.status_code, cls.__name__
    assert set(DRAWN) == {cls.__name__ for cls in classes}


def example(cls: type[HermesError]) -> HermesError:
    if cls is InvalidIdentifier:
        return InvalidIdentifier("memory_id", "m_" + "x" * 80)
    extra = [
        parameter
        for parameter in list(inspect.signature(cls.__init__).parameters.values())[2:]
        if parameter.kind is parameter.POSITIONAL_OR_KEYWORD
    ]
    return cls(f"{cls.__name__} happened", *(7 for _ in extra))


@pytest.mark.parametrize("cls", ERRORS, ids=lambda c: c.__name__)
def test_every_error_pickles_with_its_message_and_fields(cls):
    exc = example(cls)
    again = pickle.loads(pickle.dumps(exc))
    assert type(again) is cls and str(again) == str(exc) and vars(again) == vars(exc)


def test_an_invalid_identifier_is_invalid_input_and_a_value_error():
    with pytest.raises(InvalidIdentifier) as caught:
        check_memory_id("not-an-id")
    assert isinstance(caught.value, errors.InvalidInput) and isinstance(caught.value, ValueError)
    assert caught.value.status_code == 422 and "memory_id" in str(caught.value)
