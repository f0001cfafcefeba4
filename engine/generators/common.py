"""Helpers generators share: drawing small "nice" inputs and writing numbers, vectors and matrices in TeX."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from attnquiz.engine.answers.kinds import Answer, Mistake
from attnquiz.engine.answers.tolerance import Tolerance, format_number
from attnquiz.engine.answers.values import Matrix, Vector
from attnquiz.engine.variant import kept_mistakes

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

TWO_PLACES = Tolerance.decimals(2)
THREE_PLACES = Tolerance.decimals(3)
FOUR_SIGFIGS = Tolerance.sigfigs(4)

# Model widths that real Transformers use, with head counts that divide them.
MODEL_WIDTHS = (64, 128, 256, 384, 512, 768, 1024)
HEADS_FOR_WIDTH = {
    64: (1, 2, 4, 8),
    128: (2, 4, 8),
    256: (4, 8),
    384: (6, 12),
    512: (8, 16),
    768: (12, 16),
    1024: (16,),
}


def num(value: float, places: int | None = None) -> str:
    """A number for prose and TeX: integers plainly, others to ``places`` decimals (or 4 s.f.)."""
    if places is not None and not float(value).is_integer():
        text = f"{value:.{places}f}"
        return "0" if float(text) == 0 else text.replace("-", "-")
    return format_number(float(value), FOUR_SIGFIGS)


def sentence_start(text: str) -> str:
    """``text`` with its first letter capitalised, to open a sentence ("the original Transformer" → "The …").

    Only the first character changes, so the rest (a name such as "BERT-base") stays as written.
    """
    return text[:1].upper() + text[1:]


def group(value: int) -> str:
    """An integer with thousands grouped for TeX: 589{,}824."""
    return f"{value:,}".replace(",", "{,}")


def tex_vector(values: Iterable[Any], places: int | None = None) -> str:
    """A row vector in TeX, e.g. ``[1, 0]``."""
    return "[" + ", ".join(num(float(v), places) for v in values) + "]"


def tex_matrix(rows: Iterable[Iterable[Any]], places: int | None = None) -> str:
    """A matrix as a TeX bmatrix."""
    body = r" \\ ".join(" & ".join(num(float(v), places) for v in row) for row in rows)
    return r"\begin{bmatrix}" + body + r"\end{bmatrix}"


def small_ints(
    rng: np.random.Generator, size: int | Sequence[int], low: int = -2, high: int = 2
) -> np.ndarray:
    """Integers in [low, high], for inputs a student can handle by hand."""
    return rng.integers(low, high + 1, size=size)


def pick(rng: np.random.Generator, options: Sequence[Any]) -> Any:
    """One of ``options``, uniformly."""
    return options[int(rng.integers(len(options)))]


def keeps_all(answer: Answer, mistakes: Sequence[Mistake]) -> bool:
    """Whether every mistake has a value of its own: none reads as the answer, none repeats another.

    Generators redraw their inputs until this holds, so that no misconception gives the right answer
    by luck and no wrong answer is named after the wrong misconception.
    """
    return len(kept_mistakes(answer, mistakes)) == len(mistakes)


def vec(values: ArrayLike) -> Vector:
    """A vector as the plain tuple of floats the answer kinds hold."""
    # tolist() gives the same Python floats as float() on each entry, in one call.
    return tuple(np.ravel(np.asarray(values, dtype=np.float64)).tolist())


def mat(rows: ArrayLike) -> Matrix:
    """A matrix as the plain tuple of row tuples the answer kinds hold."""
    arr = np.asarray(rows, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"a matrix needs two dimensions, not {arr.ndim}")
    return tuple(tuple(row) for row in arr.tolist())
