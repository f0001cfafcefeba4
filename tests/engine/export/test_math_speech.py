"""Every formula of the HTML pages carries its spoken form in MathML's ``alttext`` (issue 31)."""

from __future__ import annotations

import re
from html import unescape

import pytest

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.export.text import html
from attnquiz.engine.markup import tex as markup
from attnquiz.engine.markup.speech import speech
from attnquiz.engine.practice.planning import plan_practice

CASES = [
    (r"d_k", "d sub k"),
    (r"s_{t-1}", "s sub t minus 1 end sub"),
    (r"x^2 + y^3", "x squared plus y cubed"),
    (r"e^{x_i}", "e to the power x sub i end power"),
    (r"QK^T", "Q K transpose"),
    (r"\frac{a}{b}", "a over b"),
    (r"\frac{QK^T}{\sqrt{d_k}}", "fraction Q K transpose over square root of d sub k end root end fraction"),
    (r"\sqrt{d}", "square root of d"),
    (r"\sqrt[3]{x}", "root 3 of x"),
    (r"\hat{y}", "y hat"),
    (r"\mathrm{softmax}(x)_i \le 1", "softmax ( x ) sub i is at most 1"),
    (r"\sum_{i=1}^{n} x_i", "sum from i equals 1 to n of x sub i"),
    (r"a \cdot b = -c", "a times b equals minus c"),
    (r"\alpha \approx 0.5", "α is approximately 0.5"),
    (
        r"\begin{bmatrix}1 & -2 \\ 3 & 4\end{bmatrix}",
        "matrix 2 by 2 row 1: 1, minus 2; row 2: 3, 4; end matrix",
    ),
    (r"abc", "a b c"),
]


@pytest.mark.parametrize(("tex", "said"), CASES)
def test_a_formula_is_said_in_words(tex: str, said: str) -> None:
    (math,) = [s for s in markup.parse(f"${tex}$") if isinstance(s, markup.Math)]
    assert speech(math) == said


@pytest.mark.parametrize(("tex", "said"), CASES)
def test_the_html_formula_carries_the_spoken_form(tex: str, said: str) -> None:
    (alt,) = re.findall(r'<math[^>]* alttext="([^"]*)"', html.content(f"${tex}$"))
    assert unescape(alt) == said


def test_alttext_is_escaped() -> None:
    page = html.content(r"$a < b \text{ and \"q\" & c}$")
    (alt,) = re.findall(r'<math[^>]* alttext="([^"]*)"', page)
    assert "<" not in alt
    assert '"' not in alt
    assert unescape(alt).startswith("a is less than b")


@pytest.mark.parametrize("key", ["week1", "week2"])
def test_every_formula_of_a_bank_has_a_spoken_form(key: str) -> None:
    plan = plan_practice(banks.load(key), seed=11, count=500)
    seen = 0
    for planned in plan.questions:
        question = planned.build()
        for text in (question.variant.prompt, *question.variant.solution):
            page = html.content(text)
            maths = re.findall(r"<math\b[^>]*>", page)
            seen += len(maths)
            for tag in maths:
                found = re.search(r'alttext="([^"]+)"', tag)
                assert found, (question.item_id, tag)
                assert found.group(1).strip(), (question.item_id, tag)
    assert seen > 100
