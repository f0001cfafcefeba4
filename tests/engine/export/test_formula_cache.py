"""Renderings remembered per formula (`markup.by_formula`) are the renderings made afresh: for the
inline and display form of the same source, in every renderer that remembers them, and after the
cache has been filled past its bound and started afresh."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from attnquiz.engine.export.text import mathml
from attnquiz.engine.markup import plain
from attnquiz.engine.markup import speech as math_speech
from attnquiz.engine.markup import tex as markup

SOURCES = [
    r"e_{ti} = v_a^\top \tanh(W_a s_{t-1} + U_a h_i)",
    r"\frac{QK^\top}{\sqrt{d_k}}",
    r"\begin{bmatrix}1 & 2 \\ 3 & 4\end{bmatrix}",
    r"\sum_{i=1}^{n} x_i^2",
    "589{,}824",
    r"\hat{y}",
    "x",
]
RENDERERS: list[Callable[[markup.Math], str]] = [math_speech.speech, mathml.formula, plain._unicode]


def _maths(source: str) -> list[markup.Math]:
    """The formula inline and displayed, as the text reader makes them."""
    found = [s for text in (f"${source}$", f"$${source}$$") for s in markup.parse(text)]
    return [m for m in found if isinstance(m, markup.Math)]


@pytest.mark.parametrize("render", RENDERERS, ids=lambda r: r.__qualname__)
@pytest.mark.parametrize("source", SOURCES)
def test_a_remembered_rendering_is_the_rendering(render: Callable[[markup.Math], str], source: str) -> None:
    fresh = render.__wrapped__  # type: ignore[attr-defined]
    inline, display = _maths(source)
    for _ in range(2):  # made, then remembered
        assert render(inline) == fresh(inline)
        assert render(display) == fresh(display)


def test_the_cache_starts_afresh_past_its_bound() -> None:
    calls: list[str] = []

    @markup.by_formula
    def render(math: markup.Math) -> str:
        calls.append(math.source)
        return math.source.upper()

    maths = [m for n in range(markup._FORMULA_CACHE + 5) for m in _maths(f"x_{{{n}}}")[:1]]
    assert [render(m) for m in maths] == [m.source.upper() for m in maths]
    assert len(calls) == len(maths)
    assert render(maths[-1]) == maths[-1].source.upper()
    assert len(calls) == len(maths)  # the newest is still remembered
    assert render(maths[0]) == maths[0].source.upper()
    assert len(calls) == len(maths) + 1  # the oldest was forgotten, and is made again
