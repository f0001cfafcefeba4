"""Formula answers in every key: typeset and simplified once the {{ }} values are in (golden files)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from attnquiz.engine.answers import formula_tree, parse, read_formulas, symbolic
from attnquiz.engine.answers.kinds import ExpressionAnswer
from attnquiz.engine.export.lms import question_html as lms
from attnquiz.engine.export.pdf import typst as ts
from attnquiz.engine.export.pdf.worksheets import compile_typst
from attnquiz.engine.export.text import html, markdown
from attnquiz.engine.formula import tex as formula_tex

from .golden import check_golden
from .samples import formula_plan, formula_questions


@pytest.mark.parametrize(
    ("written", "symbols", "expected"),
    [
        ("2*24*1024*T", ("T",), r"49152\,T"),
        ("4*T^2*d", ("T", "d"), "4 T^{2} d"),
        ("2*12*T*d", ("T", "d"), "24 T d"),
        ("T*T*4*d", ("T", "d"), "4 T^{2} d"),
        ("12*d^2 + 13*d", ("d",), "12 d^{2} + 13 d"),
        ("2*d + 3*d - 5*d + 1", ("d",), "1"),
        ("d(12d + 13)", ("d",), r"d \left(12 d + 13\right)"),  # a bracket is never multiplied out
        ("T*(T - 1)/2", ("T",), r"\frac{T \left(T - 1\right)}{2}"),
        ("d/(d + 1)", ("d",), r"\frac{d}{d + 1}"),
        ("-(d + 1)", ("d",), "-d - 1"),
        ("1*(d + 1)", ("d",), "d + 1"),
        ("4*d_model^2 + 4*d_model", ("d_model",), r"4 d_{\text{model}}^{2} + 4 d_{\text{model}}"),
        ("h*d_k/d_model", ("h", "d_k", "d_model"), r"\frac{h d_{k}}{d_{\text{model}}}"),
        ("T/2 - 1/3", ("T",), r"\frac{T}{2} - \frac{1}{3}"),
        ("0*d", ("d",), "0"),
    ],
)
def test_formulas_are_simplified_and_typeset(written: str, symbols: tuple[str, ...], expected: str) -> None:
    tree = read_formulas.formula(written, symbols)
    assert not isinstance(tree, parse.Invalid)
    assert formula_tex.tex(tree) == expected


def _rebuilt(value: formula_tex.Sum) -> formula_tree.Tree:
    """The simplified form as a reader's tree again, to compare its values with the original's."""
    terms: list[formula_tree.Tree] = []
    for coef, factors in value:
        product: list[formula_tree.Tree] = [("num", coef)]
        for base, exponent in factors:
            inner = ("sym", base) if isinstance(base, str) else _rebuilt(base)
            product.append(("pow", inner, exponent))
        terms.append(("mul", tuple(product)))
    return ("add", tuple(terms)) if terms else ("num", Fraction(0))


@pytest.mark.parametrize(
    "written",
    [
        "2*24*1024*T",
        "(d + 1)^2*(d - 1)/(2*d) - d/3",
        "T*(T - 1)/2 + T^2*4*T/T",
        "-(h*d_k)^2/(h + 1) + 3*h*h*d_k",
        "(d + 1)(d + 2)(d + 1) - 7",
    ],
)
def test_the_simplified_formula_equals_the_written_one(written: str) -> None:
    """A key never shows another value than the one graded: the checker finds them equal."""
    tree = read_formulas.formula(written, ("T", "d", "h", "d_k"))
    assert not isinstance(tree, parse.Invalid)
    again = _rebuilt(formula_tex.simplify(tree))
    assert symbolic.equivalent(tree, again)


def test_every_kind_of_key_shows_formula_answers_typeset() -> None:
    plan = formula_plan()
    check_golden("formulas-key.md", markdown.key(plan, plan.sheets))
    check_golden("formulas-key-brief.md", markdown.key(plan, plan.sheets, "brief"))
    check_golden("formulas-key.html", html.key(plan, plan.sheets))
    check_golden("formulas-key-brief.html", html.key(plan, plan.sheets, style="brief"))
    check_golden("formulas-key.typ", ts.key(plan, plan.sheets))
    check_golden("formulas-key-brief.typ", ts.key(plan, plan.sheets, style="brief"))
    check_golden("formulas-grid.typ", ts.key(plan, plan.sheets, style="grid"))
    for style in ("full", "brief", "grid"):
        source = ts.key(plan, plan.sheets, style=style)
        assert "2\\*24" not in source
        assert "49200 thin T" in source
        assert compile_typst(source).startswith(b"%PDF")


def test_lms_feedback_shows_the_formula_typeset() -> None:
    question = formula_questions()[0]
    assert isinstance(question.answer, ExpressionAnswer)
    assert question.answer.format() == "2*24*1031*T"  # what the reader writes back, unsimplified
    assert lms.solution_html(question).startswith(
        r'<p><strong>Answer:</strong> <span class="quiz-math"><span aria-hidden="true">\(49488\,T\)</span>'
    )


@pytest.mark.parametrize("bank_name", ["week1", "week2"])
def test_every_shipped_formula_answer_typesets_to_an_equal_formula(bank_name: str) -> None:
    """Over many seeds of every built-in formula answer: the key's TeX is in the supported subset,
    and what it shows is algebraically the answer graded."""
    from attnquiz.engine.answers.kinds import PartsAnswer
    from attnquiz.engine.bank import finding as banks
    from attnquiz.engine.markup import markdown as md

    checked = 0
    for entry in banks.load(bank_name).items:
        for seed in range(12):
            answer = entry.question(seed).answer
            answers = [p.answer for p in answer.parts] if isinstance(answer, PartsAnswer) else [answer]
            for each in answers:
                if isinstance(each, ExpressionAnswer):
                    md.check(formula_tex.answer_markup(each))
                    assert symbolic.agrees(
                        each.formula.tree, _rebuilt(formula_tex.simplify(each.formula.tree))
                    )
                    checked += 1
    assert checked >= 12 or bank_name == "week2"
