"""Dimension and symbol names in any spelling: ``d_model``, ``dmodel``, ``d_{model}``, ``d_\\text{model}``
and ``dₘₒdₑₗ`` are one name, for shapes (`attnquiz.engine.answers.read_shapes`) and formulas
(`attnquiz.engine.answers.read_formulas`) alike.

Its own module so that reading a formula does not import the shape and matrix readers.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

_SUBSCRIPT_BRACES = re.compile(r"_\{(\w+)\}")
_TEX_WORD = re.compile(r"\\(?:text|textrm|mathrm|mathit|operatorname)\s*\{([^{}]*)\}")
_SUBSCRIPT_LETTERS = dict(zip("ₐₑₒₓₕₖₗₘₙₚₛₜᵢⱼᵣᵤᵥ₀₁₂₃₄₅₆₇₈₉", "aeoxhklmnpstijruv0123456789", strict=True))
_SUBSCRIPT_RUN = re.compile(f"[{''.join(_SUBSCRIPT_LETTERS)}]+")


def _subscripts_as_underscores(text: str) -> str:
    """``dₖ`` → ``d_k``, ``dₘₒdₑₗ`` → ``d_model``: the terminal's rendering of a subscript, typed back."""
    return _SUBSCRIPT_RUN.sub(lambda m: "_" + "".join(_SUBSCRIPT_LETTERS[c] for c in m.group()), text)


def spell_dimensions(text: str) -> str:
    """A shape's dimension names in one spelling: ``d_{\\text{model}}``, ``d_{model}`` and ``dₖ`` become
    ``d_model`` and ``d_k`` (`canonical_symbol` then makes ``dmodel`` and ``d_model`` agree)."""
    return _SUBSCRIPT_BRACES.sub(r"_\1", _TEX_WORD.sub(r"\1", _subscripts_as_underscores(text)))


def similar_symbols(text: str, names: Sequence[str]) -> list[str]:
    """The declared names a student probably meant by an unknown one: the same name in another case
    (D_model), a name with the same stem (d for d_model, d_model for d, d_k for dk), or one a typo
    away (d_modle)."""
    typed = canonical_symbol(text)
    stem = text.split("_")[0]
    found: list[str] = []
    for name in names:
        canonical = canonical_symbol(name)
        if (
            canonical.lower() == typed.lower()
            or name.split("_")[0] == stem
            or (len(typed) > 1 and canonical.startswith(typed))
        ):
            found.append(name)
    import difflib  # a suggestion is made only for a name that is not declared

    close = difflib.get_close_matches(text, list(names), n=2, cutoff=0.75)
    return list(dict.fromkeys([*found, *close]))[:3]


@functools.lru_cache(maxsize=4096)  # the few names of a bank's shapes, asked for at every shape graded
def canonical_symbol(name: str) -> str:
    """A dimension name without subscript marks, so ``d_model``, ``dmodel`` and ``d_{model}`` agree.

    Case still matters (``T`` is not ``t``), and no other aliases are made: a bare ``d`` could
    mean d_model, d_k or d_ff.
    """
    return spell_dimensions(name).replace("_", "").replace("{", "").replace("}", "")


__all__ = ["canonical_symbol", "similar_symbols", "spell_dimensions"]
