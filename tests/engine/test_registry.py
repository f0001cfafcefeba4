"""The generator registry refuses functions that break the rules, at import, with the signature shown."""

from __future__ import annotations

import numpy as np
import pydantic
import pytest

from engine.answers import NumericAnswer
from engine.errors import GeneratorSpecError
from engine.registry import Registry, load_builtin_generators
from engine.variant import Variant


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
    from engine import banks

    used = {entry.spec.name for found in banks.discover() for entry in banks.load(found.name).items}
    assert set(load_builtin_generators()) <= used, "a registered generator no bank uses"
