"""The user operations declared once (``actors.app.operations``): each declares its effect, the service
satisfies the Protocols, and every layer above offers each operation under its name, with the operation's
parameters and answer; the public layers (gateway, Serve handle, clients) agree on parameters and defaults."""

import inspect
import sys
import typing
from collections.abc import Callable

import pytest

from actors.app.operations import Effect, MaintenanceOperations, UserOperations, effect_of
from actors.app.service import UserMemoryService
from actors.runtime.host import UserHost
from serve.app import HermesMemory
from serve.client import AsyncHermesClient, HermesClient
from serve.gateway import Gateway


def declared(protocol: type) -> dict[str, Callable]:
    return {
        name: member
        for name, member in vars(protocol).items()
        if inspect.isfunction(member) and not name.startswith("_")
    }


USER_OPERATIONS = declared(UserOperations)
HOST = UserHost.__ray_actor_class__  # the class behind the Ray actor
HANDLE = HermesMemory.func_or_class  # the class behind the Serve deployment and its ingress


def parameters(function: Callable) -> list[inspect.Parameter]:
    """The caller's parameters: without ``self`` and those Ray adds (``_ray_trace_ctx``)."""
    return [p for p in inspect.signature(function).parameters.values() if not p.name.startswith("_")][1:]


def names(function: Callable) -> list[str]:
    return [p.name for p in parameters(function)]


def shape(function: Callable, drop: int) -> list[tuple[str, object]]:
    """Names and defaults of the caller's parameters after the first ``drop``."""
    return [(p.name, p.default) for p in parameters(function)[drop:]]


def answer(function: Callable, home: type | None = None) -> object:
    """The function's return type, its annotation resolved in ``home``'s module when given: once a test has
    started the host as a traced Ray actor, Ray has wrapped its methods in functions of its own module."""
    module = vars(sys.modules[home.__module__]) if home is not None else None
    return typing.get_type_hints(function, globalns=module)["return"]


def test_every_user_operation_declares_its_effect():
    assert len(USER_OPERATIONS) >= 13
    effects = {name: effect_of(operation) for name, operation in USER_OPERATIONS.items()}
    # only the two writes can bring a new user into a tenant: the user quota checks them alone
    storing = {name for name, effect in effects.items() if effect is Effect.STORES}
    assert storing == {"write_turns", "write_memory"}


@pytest.mark.parametrize("protocol", [UserOperations, MaintenanceOperations])
def test_the_service_satisfies_the_protocol(protocol):
    for name, operation in declared(protocol).items():
        implementation = getattr(UserMemoryService, name)
        wanted, offered = parameters(operation), parameters(implementation)
        hints, offered_hints = typing.get_type_hints(operation), typing.get_type_hints(implementation)
        assert [(p.name, p.default, hints[p.name]) for p in wanted] == [
            (p.name, p.default, offered_hints[p.name]) for p in offered[: len(wanted)]
        ], name
        # what the service takes beyond the Protocol (who acts, for the audit) has a default
        assert all(p.default is not inspect.Parameter.empty for p in offered[len(wanted) :]), name
        assert answer(implementation) == answer(operation), name


#: the public layers take the caller's idempotency key where the service takes the write's request id
PUBLIC = {"request_id": "idempotency_key"}
#: per layer: its class, the parameters before and after the operation's own, and those it names otherwise
LAYERS = {
    "host": (HOST, ("tenant_id", "user_id"), ("trace_context",), {}),
    "gateway": (Gateway, ("tenant_id", "user_id"), (), PUBLIC),
    "handle": (HANDLE, ("api_key", "user_id"), (), PUBLIC),
    "client": (HermesClient, ("user_id",), (), PUBLIC),
    "async client": (AsyncHermesClient, ("user_id",), (), PUBLIC),
}


@pytest.mark.parametrize("layer, before, after, renamed", LAYERS.values(), ids=LAYERS)
def test_every_layer_offers_each_user_operation(layer, before, after, renamed):
    for name, operation in USER_OPERATIONS.items():
        method = getattr(layer, name)
        own = [renamed.get(parameter, parameter) for parameter in names(operation)]
        assert names(method) == [*before, *own, *after], name
        assert answer(method, layer) == answer(operation), name


@pytest.mark.parametrize("layer", [Gateway, HermesClient, AsyncHermesClient])
def test_the_public_layers_mirror_the_serve_handle(layer):
    # the ingress wraps the class: its own methods are those defined in serve.app
    handle_methods = [
        name
        for name, member in inspect.getmembers(HANDLE, inspect.iscoroutinefunction)
        if not name.startswith("_") and member.__module__ == "serve.app"
    ]
    assert len(handle_methods) >= 14
    for name in handle_methods:
        # the handle takes (api_key, ...), the gateway (tenant_id, ...), the client (...); create_tenant
        # takes the admin key on each
        handle_drop = 0 if name == "create_tenant" else 1
        layer_drop = handle_drop if layer is Gateway else 0
        assert shape(getattr(layer, name), layer_drop) == shape(getattr(HANDLE, name), handle_drop), name
