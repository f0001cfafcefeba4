"""The generator registry: ``@generator`` checks a function's signature at import and records it by name.

A generator is ``fn(rng: np.random.Generator, /, *, <params with annotations and defaults>) ->
Variant`` with a docstring. Its keyword-only parameters become a pydantic model, so a bank's
``params:`` (and ``original:`` inputs) are validated against the function's own signature and a
wrong one is reported at its own line.
"""

from __future__ import annotations

import difflib
import inspect
import typing
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np
import pydantic

from engine.errors import GeneratorSpecError
from engine.variant import Variant

GeneratorFn = Callable[..., Variant]


@dataclass(frozen=True)
class GeneratorSpec:
    """A registered generator: its function, the model of its parameters, and its one-line summary."""

    name: str
    fn: GeneratorFn
    params_model: type[pydantic.BaseModel]
    summary: str
    module: str

    def validate_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The parameters converted to the annotated types; raises pydantic.ValidationError."""
        model = self.params_model.model_validate(dict(params))
        return {name: getattr(model, name) for name in type(model).model_fields}

    def signature(self) -> str:
        """``name(rng, /, *, a: int = 2, ...)`` as shown in error messages."""
        return f"{self.name}{inspect.signature(self.fn)}"


class Registry:
    """Generators by name. The module-level ``generators`` holds the built-in ones; a bank with
    plugins gets a registry of its own whose ``parent`` is the built-in one; tests make their own.
    """

    def __init__(self, parent: Registry | None = None) -> None:
        self._specs: dict[str, GeneratorSpec] = {}
        self._parent = parent

    def register(self, fn: GeneratorFn) -> GeneratorFn:
        """Check ``fn`` against the generator rules and record it under its function name."""
        spec = _make_spec(fn)
        other = self.get(spec.name)
        if other is not None:
            raise GeneratorSpecError(
                f"generator {spec.name!r} is defined twice: in {other.module} and in {spec.module}"
            )
        self._specs[spec.name] = spec
        return fn

    def adopt(self, spec: GeneratorSpec) -> None:
        """Record a generator already checked by another registry (a plugin's, for its bank)."""
        other = self.get(spec.name)
        if other is not None and other is not spec:
            raise GeneratorSpecError(
                f"generator {spec.name!r} is defined twice: in {other.module} and in {spec.module}"
            )
        self._specs[spec.name] = spec

    def get(self, name: str) -> GeneratorSpec | None:
        """The generator of that name, if registered here or in the parent registry."""
        spec = self._specs.get(name)
        if spec is None and self._parent is not None:
            return self._parent.get(name)
        return spec

    def own(self) -> list[str]:
        """The names registered here (not in the parent), sorted."""
        return sorted(self._specs)

    def suggest(self, name: str) -> str | None:
        """The registered name closest to a misspelt one."""
        close = difflib.get_close_matches(name, list(self), n=1, cutoff=0.6)
        return close[0] if close else None

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[str]:
        names = set(self._specs)
        if self._parent is not None:
            names.update(self._parent)
        return iter(sorted(names))

    def __len__(self) -> int:
        return len(list(iter(self)))


def _make_spec(fn: GeneratorFn) -> GeneratorSpec:
    name = getattr(fn, "__name__", repr(fn))
    try:
        shown = f"{name}{inspect.signature(fn)}"
    except (TypeError, ValueError) as exc:
        raise GeneratorSpecError(f"{name!r} has no inspectable signature") from exc

    def fail(message: str) -> GeneratorSpecError:
        return GeneratorSpecError(f"generator {shown}: {message}")

    doc = inspect.getdoc(fn)
    if not doc:
        raise fail("needs a docstring (its first line is what `quiz list` shows)")
    try:
        hints = typing.get_type_hints(fn)
    except (NameError, TypeError) as exc:
        raise fail(f"its annotations cannot be resolved ({exc})") from exc

    parameters = list(inspect.signature(fn).parameters.values())
    if (
        not parameters
        or parameters[0].name != "rng"
        or parameters[0].kind is not inspect.Parameter.POSITIONAL_ONLY
    ):
        raise fail("the first parameter must be `rng`, positional-only (`rng: np.random.Generator, /`)")
    if hints.get("rng") is not np.random.Generator:
        raise fail("`rng` must be annotated `np.random.Generator`")
    if hints.get("return") is not Variant:
        raise fail("must be annotated to return `Variant`")

    fields: dict[str, Any] = {}
    for param in parameters[1:]:
        if param.kind is not inspect.Parameter.KEYWORD_ONLY:
            raise fail(f"parameter {param.name!r} must be keyword-only (put it after `*`)")
        if param.name not in hints:
            raise fail(f"parameter {param.name!r} needs a type annotation")
        if param.default is inspect.Parameter.empty:
            raise fail(f"parameter {param.name!r} needs a default, so that `params:` may omit it")
        fields[param.name] = (hints[param.name], param.default)

    model = pydantic.create_model(
        f"{name}_params",
        __config__=pydantic.ConfigDict(extra="forbid", frozen=True),
        **fields,
    )
    return GeneratorSpec(
        name=name,
        fn=fn,
        params_model=model,
        summary=doc.splitlines()[0].strip(),
        module=getattr(fn, "__module__", "?"),
    )


generators = Registry()

# While a bank's plugin module is being imported, its @generator functions go to the bank's own
# registry rather than the built-in one (see engine.plugins).
_registering_into: ContextVar[Registry | None] = ContextVar("registering_into", default=None)


def generator(fn: GeneratorFn) -> GeneratorFn:
    """Decorator: check a generator function and register it (see the module docstring)."""
    target = _registering_into.get() or generators
    return target.register(fn)


@contextmanager
def registering_into(registry: Registry) -> Iterator[None]:
    """Within this block, ``@generator`` registers into ``registry``."""
    token = _registering_into.set(registry)
    try:
        yield
    finally:
        _registering_into.reset(token)


def load_builtin_generators() -> Registry:
    """Import the built-in generator modules (registering them) and return the registry."""
    import engine.generators  # noqa: F401  (imported for its registrations)

    return generators
