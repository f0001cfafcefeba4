"""The TeX subset: what generators may write, and how it reads in a terminal."""

from __future__ import annotations

import pytest

from attnquiz.engine.markup import markdown as md
from attnquiz.engine.markup import plain
from attnquiz.engine.markup import tex as markup


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"$\sqrt{d_k}$", "√dₖ"),
        (r"$\frac{QK^\top}{\sqrt{d_k}}$", "QKᵀ/√dₖ"),
        (r"$e^{2}/(e^{2}+1)$", "e²/(e² + 1)"),
        (r"$\alpha_{ti}$", "αₜᵢ"),
        (r"$W^O$", "W^O"),
        (r"$d_{\text{model}}$", "d_model"),
        (r"$768^2 = 589{,}824$", "768² = 589,824"),
        (r"$v_a^\top \tanh(x)$", "vₐᵀ tanh(x)"),
        (r"$s_{t-1}$", "sₜ₋₁"),
        (r"$\operatorname{softmax}(z)$", "softmax(z)"),
        (r"$B \cdot h \cdot T^2$", "B·h·T²"),
        (r"$\begin{bmatrix}1 & 0 \\ 0 & 1\end{bmatrix}$", "[[1, 0], [0, 1]]"),
        (r"$\mathbb{R}^{T \times d}$", "ℝ^(T×d)"),
        (r"$e^{0.707}$", "e^(0.707)"),
        (r"$2 \times 10^{-9}$", "2 × 10⁻⁹"),
        (r"$a \approx 0.881$", "a ≈ 0.881"),
        ("**Bold** and `code` stay readable", "Bold and code stay readable"),
        (r"costs \$5", "costs $5"),
        (r"costs \$5 and $x^2$", "costs $5 and x²"),
        (r"$-x + (-2) \cdot 3 - 1$", "−x + (−2)·3 − 1"),
        (r"$[-0.5, 1]$", "[−0.5, 1]"),
        (r"$5 + 4 + \cdots + 0$", "5 + 4 + ⋯ + 0"),
        (r"$-\infty - 1$", "−∞ − 1"),
    ],
)
def test_terminal_rendering(text: str, expected: str) -> None:
    assert plain.to_terminal(text) == expected


def test_display_matrices_are_aligned_tables() -> None:
    text = r"$$\begin{bmatrix}1.5 & -2 \\ 10 & 3\end{bmatrix}$$"
    assert plain.to_terminal(text).splitlines() == [
        "    ⎡ 1.5  −2 ⎤",
        "    ⎣  10   3 ⎦",
    ]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (r"$\foo{x}$", r"unsupported TeX command \\foo"),
        (r"$\frac{1}{2$", "missing }"),
        (r"$x}$", "unbalanced }"),
        ("one $ dollar", "unmatched"),
        (r"$x^1^2$", "double superscript"),
        (r"$\begin{array}1\end{array}$", "unsupported environment"),
        (r"$\begin{bmatrix}1 & 2 \\ 3\end{bmatrix}$", "different lengths"),
    ],
)
def test_text_outside_the_subset_is_refused(text: str, problem: str) -> None:
    with pytest.raises(markup.MarkupError, match=problem):
        md.check(text)


def test_parse_splits_text_and_formulas() -> None:
    segments = markup.parse(r"Let $x = 1$ and $$y$$ end")
    kinds = [type(s).__name__ for s in segments]
    assert kinds == ["Text", "Math", "Text", "Math", "Text"]
    display = segments[3]
    assert isinstance(display, markup.Math)
    assert display.display
