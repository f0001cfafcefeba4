"""MathML Core from the formula tree: one element per node, well-formed, TeX's spacing rules kept."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from attnquiz.engine.export.text import mathml
from attnquiz.engine.markup import tex as markup

from .samples import sample_questions


def _mathml(tex: str, display: bool = False) -> str:
    wrapped = f"$${tex}$$" if display else f"${tex}$"
    (segment,) = markup.parse(wrapped)
    assert isinstance(segment, markup.Math)
    return mathml.formula(segment)


@pytest.mark.parametrize(
    ("tex", "fragment"),
    [
        (r"\frac{a}{b}", "<mfrac><mi>a</mi><mi>b</mi></mfrac>"),
        (r"\sqrt{d_k}", "<msqrt><msub><mi>d</mi><mi>k</mi></msub></msqrt>"),
        (r"\sqrt[3]{x}", "<mroot><mi>x</mi><mn>3</mn></mroot>"),
        (r"W^\top", "<msup><mi>W</mi><mi>\u22a4</mi></msup>"),
        (r"x_i^2", "<msubsup><mi>x</mi><mi>i</mi><mn>2</mn></msubsup>"),
        (r"d_{\text{model}}", "<msub><mi>d</mi><mtext>model</mtext></msub>"),
        (r"\tanh(x)", "<mi>tanh</mi><mo>\u2061</mo>"),
        (r"589{,}824", '<mn>589</mn><mo lspace="0" rspace="0">,</mo><mn>824</mn>'),
        (r"[2, -1]", '<mo lspace="0" rspace="0">\u2212</mo><mn>1</mn>'),
        (r"a - b", "<mi>a</mi><mo>\u2212</mo><mi>b</mi>"),
        (r"\hat{y}", '<mover accent="true"><mi>y</mi><mo>^</mo></mover>'),
        (r"s_{t-1}", '<mrow><mi>t</mi><mo lspace="0" rspace="0">\u2212</mo><mn>1</mn></mrow></msub>'),
        (
            r"\begin{bmatrix}1 & 0 \\ 0 & 1\end{bmatrix}",
            '<mo fence="true" stretchy="true">[</mo><mtable><mtr><mtd><mn>1</mn></mtd>',
        ),
    ],
)
def test_nodes_map_to_mathml_elements(tex: str, fragment: str) -> None:
    assert fragment in _mathml(tex)


def test_sum_is_the_large_operator_with_limits_in_display() -> None:
    assert "<munder><mo>\u2211</mo><mi>j</mi></munder>" in _mathml(r"\sum_j x_j", display=True)
    assert "<msub><mo>\u2211</mo><mi>j</mi></msub>" in _mathml(r"\sum_j x_j")


def test_display_formulas_are_blocks() -> None:
    assert _mathml("x", display=True).startswith('<math display="block" alttext="x">')
    assert _mathml("x").startswith('<math alttext="x">')


def test_every_sample_formula_is_well_formed_xml_with_one_root() -> None:
    for question in sample_questions():
        variant = question.variant
        texts = [variant.prompt, *variant.solution, *(m.feedback for m in variant.mistakes)]
        for text in texts:
            for segment in markup.parse(text):
                if isinstance(segment, markup.Math):
                    root = ET.fromstring(mathml.formula(segment))
                    assert root.tag == "math"
