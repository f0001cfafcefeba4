"""Typst source from the formula tree and the Markdown around it."""

from __future__ import annotations

import io
import re

import pytest
from pypdf import PdfReader

from attnquiz.engine.export.pdf import typst as ts
from attnquiz.engine.export.pdf.worksheets import compile_typst
from attnquiz.engine.markup import tex as markup

from .samples import sample_plan

_EQUATION = re.compile(
    r'#math\.equation\(block: (true|false), alt: "((?:[^"\\]|\\.)*)", \$ (.*) \$\.body\)', re.S
)


def _equation(tex: str, display: bool = False) -> tuple[str, str, str]:
    """The formula's Typst call, taken apart: whether it is displayed, its alternative text, its maths."""
    (segment,) = markup.parse(f"$${tex}$$" if display else f"${tex}$")
    assert isinstance(segment, markup.Math)
    found = _EQUATION.fullmatch(ts.math(segment))
    assert found is not None, ts.math(segment)
    return found.group(1), found.group(2), found.group(3)


def _math(tex: str, display: bool = False) -> str:
    """The formula's maths as ``$...$`` (inline) or ``$ ... $`` (displayed), as Typst would write it."""
    block, _, body = _equation(tex, display)
    assert block == ("true" if display else "false")
    return f"$ {body} $" if display else f"${body}$"


@pytest.mark.parametrize(
    ("tex", "expected"),
    [
        (r"\frac{QK^\top}{\sqrt{d_k}}", "$frac(Q attach(K, t: top), sqrt(attach(d, b: k)))$"),
        (r"\sqrt[3]{x}", "$root(3, x)$"),
        (r"\operatorname{softmax}(z)", '$op("softmax") \\( z \\)$'),
        (r"d_{\text{model}}", '$attach(d, b: "model")$'),
        (r"768^2 = 589{,}824", '$attach(768, t: 2) = 589 class("normal", \\,) 824$'),
        (r"a/b, [c]", "$a \\/ b \\, \\[ c \\]$"),
        (r"\sum_j", "$attach(sum, b: j)$"),
        (r"\hat{y} \bar{x} \vec{v}", "$hat(y) overline(x) arrow(v)$"),
        (r"\begin{pmatrix}1 & 2 \\ 3 & 4\end{pmatrix}", '$display(mat(delim: "(", 1, 2; 3, 4))$'),
    ],
)
def test_formulas(tex: str, expected: str) -> None:
    assert _math(tex) == expected


def test_display_formulas_have_spaced_dollars_and_full_size_matrices() -> None:
    assert _math(r"\begin{bmatrix}1\end{bmatrix}", display=True) == '$ mat(delim: "[", 1) $'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a#b $5 *x* _y_ [z] <w> @p ~q", "a\\#b \\$5 \\*x\\* \\_y\\_ \\[z\\] \\<w\\> \\@p \\~q"),
        ("1. not a list // nor a comment", "1\\. not a list \\/\\/ nor a comment"),
        ("--original", "\\-\u2060\\-original"),
    ],
)
def test_plain_text_is_escaped(text: str, expected: str) -> None:
    assert ts.escape(text) == expected


@pytest.mark.parametrize(
    ("tex", "spoken"),
    [
        (r"d_k", "d sub k"),
        (
            r"\frac{QK^\top}{\sqrt{d_k}}",
            "fraction Q K transpose over square root of d sub k end root end fraction",
        ),
        (r"x^2 + \alpha_{t-1}", "x squared plus α sub t minus 1 end sub"),
        (r'\text{say "hi"}', 'say \\" hi \\"'),  # a quote in the spoken form stays inside the string
    ],
)
def test_every_formula_carries_its_spoken_form_as_alternative_text(tex: str, spoken: str) -> None:
    """PDF/UA asks every formula for an alternative text: the tagged PDF's /Formula gets the
    spoken form HTML's MathML ``alttext`` has (`math_speech`)."""
    _, alt, _ = _equation(tex)
    assert alt == spoken


def test_markdown_becomes_typst_markup() -> None:
    assert ts.content("**A** is *true*\n\n- one\n- $x$") == (
        '#strong[A] is #emph[true]\n\n- one\n- #math.equation(block: false, alt: "x", $ x $.body)'
    )


def test_a_semicolon_after_a_formula_or_a_styled_span_is_kept() -> None:
    """In Typst markup a ``;`` right after a ``#call(...)`` ends the call and is swallowed: text
    escapes it, so "$x$; then" keeps its semicolon in the PDF."""
    source = ts.content("Take $x$; then **y**; done")
    assert "\\; then" in source
    assert "\\; done" in source
    text = PdfReader(io.BytesIO(compile_typst(source))).pages[0].extract_text()
    assert "; then" in text
    assert "; done" in text


def test_text_right_after_a_styled_span_is_not_read_as_arguments() -> None:
    assert ts.content("**A**(true) *b*[c] `d`(e)") == '#strong[A]\\(true\\) #emph[b]\\[c\\] #raw("d")\\(e\\)'
    assert compile_typst(ts.content("**A**(true) *b*[c]")).startswith(b"%PDF-")


def test_worksheet_source_has_a_section_per_student_and_no_clock() -> None:
    plan = sample_plan(3)
    source = ts.worksheets(plan, plan.sheets, "us-letter")
    assert source.count("#start-sheet(") == 3
    assert 'paper: "us-letter"' in source
    assert "date: none" in source
    assert source == ts.worksheets(plan, plan.sheets, "us-letter")


# Bank text that would run as Typst code, or change the document, if it reached Typst unescaped: a
# file read, an evaluation, an import, a set rule, a code block that panics, labels and references,
# a heading and a list marker at the start of a line, comments, an automatic link, an escape.
TYPST_ACTIVE = [
    '#read("/etc/passwd")',
    '#eval("1 + 1")',
    '#import "@preview/evil:0.1.0": *',
    "#set text(fill: red)",
    '#{ panic("run") }',
    "<label> @label",
    "= Heading",
    "- item + item",
    "// a comment /* and a block */",
    "https://evil.example/x",
    "\\u{41} ~ #h(1em)",
]


@pytest.mark.parametrize("text", TYPST_ACTIVE)
def test_bank_text_is_shown_by_typst_never_run(text: str) -> None:
    source = ts.content(f"Before {text} after")
    shown = PdfReader(io.BytesIO(compile_typst(source))).pages[0].extract_text()
    assert _bare(f"Before {text} after") in _bare(shown)


def _bare(text: str) -> str:
    """Text without spaces and quotes: Typst sets straight quotes as curly ones (typography, not code)."""
    return re.sub(r"\s+|[\"“”'‘’]", "", text)
