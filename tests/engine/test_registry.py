"""The generator registry refuses functions that break the rules, at import, with the signature shown."""

from __future__ import annotations

import inspect

import numpy as np
import pydantic
import pytest

from attnquiz.engine.answers.kinds import NumericAnswer
from attnquiz.engine.errors import GeneratorSpecError
from attnquiz.engine.registry import Registry, load_builtin_generators
from attnquiz.engine.variant import Variant


def make(value: float = 1.0) -> Variant:
    return Variant(prompt="p", answer=NumericAnswer(value), solution=["s"])


def good(rng: np.random.Generator, /, *, n: int = 2) -> Variant:
    """A fine generator."""
    return make(float(rng.integers(n)))


def no_doc(rng: np.random.Generator, /, *, n: int = 2) -> Variant:
    return make()


def rng_not_positional(rng: np.random.Generator, *, n: int = 2) -> Variant:
    """rng may be passed by keyword."""
    return make()


def wrong_first(seed: int, /, *, n: int = 2) -> Variant:
    """The first parameter is not rng."""
    return make()


def positional_param(rng: np.random.Generator, /, n: int = 2) -> Variant:
    """n is positional."""
    return make()


def unannotated(rng: np.random.Generator, /, *, n=2) -> Variant:
    """n has no annotation."""
    return make()


def no_default(rng: np.random.Generator, /, *, n: int) -> Variant:
    """n has no default."""
    return make()


def wrong_return(rng: np.random.Generator, /, *, n: int = 2) -> float:
    """Returns a float."""
    return 1.0


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (no_doc, "needs a docstring"),
        (rng_not_positional, "positional-only"),
        (wrong_first, "the first parameter must be `rng`"),
        (positional_param, "parameter 'n' must be keyword-only"),
        (unannotated, "parameter 'n' needs a type annotation"),
        (no_default, "parameter 'n' needs a default"),
        (wrong_return, "must be annotated to return `Variant`"),
    ],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_bad_generators_are_refused_with_their_signature(fn: object, message: str) -> None:
    registry = Registry()
    with pytest.raises(GeneratorSpecError, match=message) as caught:
        registry.register(fn)  # type: ignore[arg-type]
    assert f"generator {fn.__name__}(" in str(caught.value)  # type: ignore[attr-defined]


def test_a_name_registered_twice_is_refused() -> None:
    registry = Registry()
    registry.register(good)
    with pytest.raises(GeneratorSpecError, match="defined twice"):
        registry.register(good)


def test_params_are_validated_against_the_signature() -> None:
    registry = Registry()
    registry.register(good)
    spec = registry.get("good")
    assert spec is not None
    assert spec.summary == "A fine generator."
    assert spec.validate_params({"n": "3"}) == {"n": 3}
    assert spec.validate_params({}) == {"n": 2}
    with pytest.raises(pydantic.ValidationError):
        spec.validate_params({"m": 3})
    with pytest.raises(pydantic.ValidationError):
        spec.validate_params({"n": "three"})


def test_suggest_finds_a_close_name() -> None:
    registry = Registry()
    registry.register(good)
    assert registry.suggest("goud") == "good"
    assert registry.suggest("completely_else") is None


def test_every_builtin_generator_is_used_by_a_shipped_bank() -> None:
    from attnquiz.engine.bank import finding as banks

    used = {entry.spec.name for found in banks.discover() for entry in banks.load(found.name).items}
    assert set(load_builtin_generators()) <= used, "a registered generator no bank uses"


# -- the lazy built-in registry ---------------------------------------------------------------


def test_the_module_table_lists_exactly_what_each_module_registers() -> None:
    import importlib
    import pkgutil

    import attnquiz.engine.generators as package
    from attnquiz.engine.generators import GENERATOR_MODULES, MODULES

    registry = load_builtin_generators()
    every_module = sorted(m.name for m in pkgutil.iter_modules(package.__path__))
    for name in every_module:
        importlib.import_module(f"attnquiz.engine.generators.{name}")
    registered = {
        name: spec.module.removeprefix("attnquiz.engine.generators.")
        for name in registry
        if (spec := registry.get(name)) is not None and spec.module.startswith("attnquiz.engine.generators.")
    }
    # Every generator of every module of the package is in the table, under its own module.
    assert registered == MODULES
    assert set(GENERATOR_MODULES) == set(MODULES.values())
    assert set(GENERATOR_MODULES) <= set(every_module)


def _python(code: str) -> str:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_a_builtin_module_is_imported_when_one_of_its_names_is_first_used() -> None:
    out = _python(
        "import sys\n"
        "from attnquiz.engine.registry import load_builtin_generators\n"
        "registry = load_builtin_generators()\n"
        "names = list(registry)\n"
        "before = sorted(m for m in sys.modules if m.startswith('attnquiz.engine.generators.'))\n"
        "spec = registry.get('causal_mask_matrix')\n"
        "after = sorted(m for m in sys.modules if m.startswith('attnquiz.engine.generators.'))\n"
        "print(len(names), before, 'attnquiz.engine.generators.masks' in after,"
        " 'attnquiz.engine.generators.heads' in after,"
        " spec.module, spec._model is None)\n"
    )
    count, rest = out.split(" ", 1)
    assert int(count) >= 60
    # Listing names imports nothing; a name imports its module only, and builds no params model.
    assert rest == "[] True False attnquiz.engine.generators.masks True"


def test_a_builtin_module_imported_while_a_plugin_loads_registers_as_builtin() -> None:
    out = _python(
        "from attnquiz.engine.registry import Registry, generators, registering_into\n"
        "plugin = Registry(generators)\n"
        "with registering_into(plugin):\n"
        "    import attnquiz.engine.generators.masks\n"
        "print(plugin.own(), generators.get('causal_mask_matrix') is not None)\n"
    )
    assert out == "[] True"


def test_params_models_are_built_on_first_use_and_every_builtin_one_builds() -> None:
    registry = load_builtin_generators()
    for name in registry:
        spec = registry.get(name)
        assert spec is not None
        model = spec.params_model
        assert spec.params_model is model  # built once
        assert set(model.model_fields) == set(inspect.signature(spec.fn).parameters) - {"rng"}


def test_a_registry_that_is_not_lazy_refuses_unusable_annotations_at_registration() -> None:
    registry = Registry()
    with pytest.raises(GeneratorSpecError, match="cannot be validated"):
        registry.register(opaque)


class Opaque:
    """A type pydantic has no schema for."""


def opaque(rng: np.random.Generator, /, *, thing: Opaque | None = None) -> Variant:
    """Takes a thing pydantic cannot validate."""
    return make()


def test_specs_pickle_builtins_by_name_and_others_by_value() -> None:
    import pickle

    builtin = load_builtin_generators().get("additive_score")
    assert builtin is not None
    assert pickle.loads(pickle.dumps(builtin)) is builtin
    registry = Registry()
    registry.register(good)
    own = registry.get("good")
    assert own is not None
    copy = pickle.loads(pickle.dumps(own))
    assert copy == own
    assert copy is not own
    assert copy.validate_params({"n": "4"}) == {"n": 4}


def test_a_spec_is_read_only() -> None:
    spec = load_builtin_generators().get("additive_score")
    assert spec is not None
    with pytest.raises(AttributeError, match="read-only"):
        spec.name = "other"
