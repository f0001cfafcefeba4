"""The generator registry: ``@generator`` checks a function's signature at import and records it by name.

A generator is ``fn(rng: np.random.Generator, /, *, <params with annotations and defaults>) ->
Variant`` with a docstring. Its keyword-only parameters become a pydantic model, so a bank's
``params:`` (and ``original:`` inputs) are validated against the function's own signature and a
wrong one is reported at its own line.

Start-up time matters (a student starts ``quiz run`` many times a day), so the built-in registry is
lazy in two ways, neither of which loosens a check: a built-in generator module is imported the
first time one of its names is asked for (the names come from the explicit table
``attnquiz.engine.generators.MODULES``, which a test holds equal to what the modules register), and a
generator's params model is built by pydantic the first time it validates something. Every
signature rule is still checked when the function is registered, at import.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from importlib import import_module
from typing import TYPE_CHECKING, Any

import numpy as np
from msgspec import Struct

from attnquiz.engine.errors import GeneratorSpecError
from attnquiz.engine.variant import Variant

if TYPE_CHECKING:
    import pydantic

GeneratorFn = Callable[..., Variant]
Fields = Mapping[str, tuple[Any, Any]]


class GeneratorSpec:
    """A registered generator: its function, the model of its parameters, and its one-line summary.

    The params model is either given (``params_model=``) or built from ``fields`` (name → (type,
    default)) on first use: pydantic needs about a millisecond per model, and a session needs the
    models of no generator when its bank comes from the cache (see `attnquiz.engine.bank.finding`).
    """

    __slots__ = ("_fields", "_model", "fn", "module", "name", "summary")

    def __init__(
        self,
        name: str,
        fn: GeneratorFn,
        params_model: type[pydantic.BaseModel] | None = None,
        summary: str = "",
        module: str = "?",
        *,
        fields: Fields | None = None,
    ) -> None:
        if params_model is None and fields is None:
            raise TypeError("GeneratorSpec needs params_model or fields")
        self.name = name
        self.fn = fn
        self.summary = summary
        self.module = module
        self._fields = dict(fields) if fields is not None else None
        self._model = params_model

    @property
    def params_model(self) -> type[pydantic.BaseModel]:
        """The pydantic model of the keyword-only parameters (built on first use)."""
        if self._model is None:
            self._model = _params_model(self.name, self._fields or {})
        return self._model

    def validate_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The parameters converted to the annotated types; raises pydantic.ValidationError."""
        model = self.params_model.model_validate(dict(params))
        return {name: getattr(model, name) for name in type(model).model_fields}

    def signature(self) -> str:
        """``name(rng, /, *, a: int = 2, ...)`` as shown in error messages."""
        return f"{self.name}{inspect.signature(self.fn)}"

    def parameters(self) -> list[Parameter]:
        """The parameters a bank's ``params:`` may give, with their types and defaults, in order."""
        hints = typing.get_type_hints(self.fn)
        return [
            Parameter(param.name, type_text(hints.get(param.name, Any)), param.default)
            for param in list(inspect.signature(self.fn).parameters.values())[1:]
        ]

    def _identity(self) -> tuple[Any, ...]:
        params = self._model if self._fields is None else tuple(self._fields.items())
        return (self.name, self.fn, self.summary, self.module, params)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GeneratorSpec):
            return NotImplemented
        return self is other or self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash((self.name, self.module))

    def __repr__(self) -> str:
        return f"GeneratorSpec(name={self.name!r}, module={self.module!r})"

    def __setattr__(self, name: str, value: Any) -> None:
        # Frozen like the dataclass it replaces; only the lazily built model may be filled in.
        if name != "_model" and hasattr(self, name):
            raise AttributeError(f"GeneratorSpec is read-only: cannot set {name!r}")
        object.__setattr__(self, name, value)

    def __reduce__(self) -> tuple[Any, ...]:
        # A built-in generator pickles as its name (so a cached bank refers to the code of the
        # running quiz, imported on demand); any other spec as its parts.
        if is_builtin(self):
            return (_builtin_spec, (self.name,))
        # A model built from fields is a class made at run time (not importable): rebuilt on use instead.
        model = self._model if self._fields is None else None
        return (_rebuild_spec, (self.name, self.fn, model, self.summary, self.module, self._fields))


class Parameter(Struct, frozen=True):
    """One keyword parameter of a generator, as `quiz generators` lists it."""

    name: str
    type: str
    default: Any


def type_text(hint: Any) -> str:
    """An annotation as an author reads it: ``list[float] | None``, ``'plain' | 'additive'``."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Literal:
        return " | ".join(repr(arg) for arg in args)
    if origin in {typing.Union, types.UnionType}:
        return " | ".join(type_text(arg) for arg in args)
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[{', '.join(type_text(arg) for arg in args)}]" if args else name
    if hint is type(None):
        return "None"
    return str(getattr(hint, "__name__", hint))


def catalogue(registry: Registry | None = None) -> list[dict[str, Any]]:
    """Every generator of ``registry`` (default: the built-in ones) with its summary and parameters,
    as `quiz generators --json` prints it (a default that JSON cannot hold is given as its repr)."""
    import json

    def plain(value: Any) -> Any:
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            return repr(value)
        return value

    registry = registry or generators
    listed = []
    for name in registry:
        spec = registry.get(name)
        if spec is None:
            continue
        listed.append(
            {
                "name": spec.name,
                "summary": spec.summary,
                "module": spec.module,
                "parameters": [
                    {"name": p.name, "type": p.type, "default": plain(p.default)} for p in spec.parameters()
                ],
            }
        )
    return listed


def is_builtin(spec: GeneratorSpec) -> bool:
    """Whether ``spec`` is the built-in generator of its name (it pickles as that name)."""
    return generators._specs.get(spec.name) is spec


def builtin_spec(name: str) -> GeneratorSpec:
    """The built-in generator of that name, its module imported now (see `is_builtin`)."""
    return _builtin_spec(name)


def _builtin_spec(name: str) -> GeneratorSpec:
    """The built-in generator of that name (used when a cached bank is unpickled)."""
    spec = generators.get(name)
    if spec is None:
        raise LookupError(f"no built-in generator {name!r}")
    return spec


def _rebuild_spec(
    name: str,
    fn: GeneratorFn,
    model: type[pydantic.BaseModel] | None,
    summary: str,
    module: str,
    fields: Fields | None,
) -> GeneratorSpec:
    return GeneratorSpec(name, fn, model, summary, module, fields=fields)


def _params_model(name: str, fields: Fields) -> type[pydantic.BaseModel]:
    import pydantic  # here, not at the top: most runs of quiz build no params model at all

    definitions: dict[str, Any] = dict(fields)
    try:
        return pydantic.create_model(
            f"{name}_params", __config__=pydantic.ConfigDict(extra="forbid", frozen=True), **definitions
        )
    except pydantic.PydanticUserError as exc:
        raise GeneratorSpecError(f"generator {name}: its parameters cannot be validated ({exc})") from exc


class Registry:
    """Generators by name. The module-level ``generators`` holds the built-in ones; a bank with
    plugins gets a registry of its own whose ``parent`` is the built-in one; tests make their own.
    """

    def __init__(self, parent: Registry | None = None, *, lazy: Mapping[str, str] | None = None) -> None:
        """A registry over ``parent``; ``lazy`` maps names to the modules that register them on import.

        A registry without ``lazy`` builds each params model at registration, so that a plugin's
        unusable annotation is reported when its module is imported.
        """
        self._specs: dict[str, GeneratorSpec] = {}
        self._parent = parent
        self._lazy = dict(lazy) if lazy is not None else None

    def register(self, fn: GeneratorFn) -> GeneratorFn:
        """Check ``fn`` against the generator rules and record it under its function name."""
        spec = _make_spec(fn)
        if self._lazy is None:
            spec.params_model  # noqa: B018  (built now: a plugin's bad annotation fails at its import)
        # Not self.get: the module being imported may be the lazy table's entry for this very name.
        other = self._specs.get(spec.name) or (self._parent.get(spec.name) if self._parent else None)
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
        if spec is None and self._lazy is not None and name in self._lazy:
            self._import(self._lazy[name])
            spec = self._specs.get(name)
            if spec is None:
                raise GeneratorSpecError(
                    f"generator {name!r} is listed in attnquiz.engine.generators.MODULES under "
                    f"{self._lazy[name]} but that module does not register it"
                )
        if spec is None and self._parent is not None:
            return self._parent.get(name)
        return spec

    def _import(self, module: str) -> None:
        # Registered here whoever asks: a plugin being imported may be what triggers the import.
        with registering_into(self):
            import_module(module)

    def own(self) -> list[str]:
        """The names registered here (not in the parent), sorted."""
        return sorted({*self._specs, *(self._lazy or {})})

    def suggest(self, name: str) -> str | None:
        """The registered name closest to a misspelt one."""
        import difflib  # only to suggest a name for one that is not found

        close = difflib.get_close_matches(name, list(self), n=1, cutoff=0.6)
        return close[0] if close else None

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        if name in self._specs or (self._lazy is not None and name in self._lazy):
            return True  # a name of the lazy table is registered once its module is imported
        return self._parent is not None and name in self._parent

    def __iter__(self) -> Iterator[str]:
        names = {*self._specs, *(self._lazy or {})}
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

    fields: dict[str, tuple[Any, Any]] = {}
    for param in parameters[1:]:
        if param.kind is not inspect.Parameter.KEYWORD_ONLY:
            raise fail(f"parameter {param.name!r} must be keyword-only (put it after `*`)")
        if param.name not in hints:
            raise fail(f"parameter {param.name!r} needs a type annotation")
        if param.default is inspect.Parameter.empty:
            raise fail(f"parameter {param.name!r} needs a default, so that `params:` may omit it")
        fields[param.name] = (hints[param.name], param.default)

    return GeneratorSpec(
        name=name,
        fn=fn,
        summary=first_sentence(doc),
        module=getattr(fn, "__module__", "?"),
        fields=fields,
    )


_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bcf)[.?!](?=\s+[A-Z])")


def first_sentence(doc: str) -> str:
    """The summary of a generator: the first sentence of its docstring, whole, however many lines it
    is wrapped over (a docstring's first line alone may stop mid-sentence)."""
    paragraph = " ".join(doc.strip().split("\n\n")[0].split())
    end = _SENTENCE_END.search(paragraph)
    return paragraph[: end.end()] if end else paragraph


def _builtin_table() -> dict[str, str]:
    from attnquiz.engine.generators import MODULES  # the package's __init__ imports no generator module

    return {name: f"attnquiz.engine.generators.{module}" for name, module in MODULES.items()}


generators = Registry(lazy=_builtin_table())

# While a bank's plugin module is being imported, its @generator functions go to the bank's own
# registry rather than the built-in one (see attnquiz.engine.bank.plugins).
_registering_into: ContextVar[Registry | None] = ContextVar("registering_into", default=None)


def generator(fn: GeneratorFn) -> GeneratorFn:
    """Decorator: check a generator function and register it (see the module docstring)."""
    builtin = getattr(fn, "__module__", "").startswith("attnquiz.engine.generators.")
    # A built-in module imported while a plugin loads still registers into the built-in registry.
    target = generators if builtin else (_registering_into.get() or generators)
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
    """The registry of the built-in generators (each module is imported when one of its names is used)."""
    return generators
