"""Command-line values converted without importing pydantic, where that gives the same value.

Typer (0.29 and later) converts every value of every parameter with a pydantic ``TypeAdapter``,
built when the command runs: that imports pydantic (about 0.1 s, a third of `quiz list`'s start)
for a bank name or a seed. `PlainValuesCommand` gives each parameter a converter that handles the
plain cases itself, exactly as typer's adapter would:

- a ``str`` parameter given a string: the string;
- an ``int`` parameter (no ``clamp``, no ``parser``) given an int, or a string of ASCII digits,
  within its ``min``/``max``: the int;
- a ``list[str]`` parameter (an argument that takes several, an option given again) given a tuple or
  list of strings: a list of them (`quiz answer`'s responses);
- an enum or ``Literal`` parameter: typer's own choice matching (`coerce_cli_choice`, which
  imports no pydantic) when the value is one of the choices.

Every other value (a negative number, a value out of range, a path, a list, a wrong choice) goes to
typer's own converter, which builds its adapter then, so its conversions and error messages are
unchanged (tests/cli/test_startup_imports.py compares both over a table of values). With a typer
that does not convert through adapters (older versions, which use click's types), or that changed
the private names used here, nothing is replaced and typer works as it always does.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Any, Literal, get_args, get_origin

import typer.core

try:  # typer ≥ 0.29: conversion through RuntimeParam objects (private names; see the docstring)
    from typer._coercion import RuntimeParam, build_runtime_param
    from typer._param_types import coerce_cli_choice
except ImportError:  # pragma: no cover - an older or a reorganised typer: typer converts everything
    RuntimeParam = None  # type: ignore[assignment,misc]

_DIGITS = re.compile(r"[0-9]{1,18}", re.ASCII)
"""A whole number as a user types it: longer ones, signs and underscores go to typer's converter."""

_UNHANDLED = object()
"""What `plain_value` returns for a value it leaves to typer's converter."""


def plain_value(annotation: Any, info: Any, value: Any) -> Any:
    """``value`` converted for a parameter of type ``annotation`` (typer's ``ParameterInfo`` ``info``),
    or `_UNHANDLED` when it is not a plain case (see the module docstring)."""
    if info.parser is not None or getattr(info, "click_type", None) is not None:
        return _UNHANDLED
    if annotation is str:
        return value if type(value) is str else _UNHANDLED
    if annotation == list[str]:
        if type(value) in (tuple, list) and all(type(each) is str for each in value):
            return list(value)
        return _UNHANDLED
    if annotation is int and not info.clamp:
        if type(value) is str and _DIGITS.fullmatch(value):
            number = int(value)
        elif type(value) is int:
            number = value
        else:
            return _UNHANDLED
        if (info.min is not None and number < info.min) or (info.max is not None and number > info.max):
            return _UNHANDLED  # typer's converter says why, in its own words
        return number
    choices = _choices(annotation)
    if choices is not None:
        try:
            return coerce_cli_choice(value, choices=choices, case_sensitive=info.case_sensitive)
        except ValueError:
            return _UNHANDLED
    return _UNHANDLED


def _choices(annotation: Any) -> tuple[Any, ...] | None:
    """The choices of an enum or ``Literal`` parameter, else None."""
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return tuple(annotation)
    if get_origin(annotation) is Literal:
        return get_args(annotation)
    return None


if RuntimeParam is not None:

    class _PlainRuntimeParam(RuntimeParam):  # a frozen dataclass, like typer's own
        """Converts the plain cases itself and hands every other value to typer's converter."""

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            plain = plain_value(self.annotation, self.parameter_info, value)
            if plain is not _UNHANDLED:
                return plain
            return build_runtime_param(param.type_descriptor)._coerce_value(value, param=param, ctx=ctx)


def use_plain_values(param: Any) -> None:
    """Give ``param`` the plain converter, unless typer has built its own or converts otherwise."""
    if RuntimeParam is None or getattr(param, "_runtime_param", _UNHANDLED) is not None:
        return  # not a typer ≥ 0.29 parameter, or its converter is built already
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None or descriptor.file_annotation is not None:
        return  # a file parameter: typer opens it
    param._runtime_param = _PlainRuntimeParam(
        parameter_info=descriptor.parameter_info, annotation=descriptor.annotation
    )


class PlainValuesCommand(typer.core.TyperCommand):
    """A typer command whose plain values are converted without pydantic (see the module docstring)."""

    def get_params(self, ctx: Any) -> list[Any]:
        # Every parameter the command parses, the --help option that typer adds included.
        params: list[Any] = super().get_params(ctx)
        for param in params:
            use_plain_values(param)
        return params


class PlainValuesGroup(typer.core.TyperGroup):
    """The app's group, whose own options (``--version``, ``--help``) are converted as a command's."""

    def get_params(self, ctx: Any) -> list[Any]:
        params: list[Any] = super().get_params(ctx)
        for param in params:
            use_plain_values(param)
        return params
