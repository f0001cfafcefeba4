"""Keys and sheets as paper: true minus signs, headings kept with what they head, instructions in
maths rather than keyboard syntax, weights printed, the single choice's circles."""

from __future__ import annotations

import pytest

from attnquiz.engine.answers.kinds import MatrixAnswer, NumericAnswer, VectorAnswer
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.export.pdf import typst as ts
from attnquiz.engine.plan.class_plan import ClassPlan, Sheet
from attnquiz.engine.seeding import variant_code
from attnquiz.engine.variant import Question, Variant


@pytest.mark.parametrize(
    ("written", "printed"),
    [
        ("-0.5", "\u22120.5"),
        ("[-1.00, 2.00]", "[\u22121.00, 2.00]"),
        ("[[0.5, -1], [-.5, 2]]", "[[0.5, \u22121], [\u2212.5, 2]]"),
        ("(a) -3 | (b) 4", "(a) \u22123 | (b) 4"),
        ("9.5e-07", "9.5e\u221207"),
        ("d_k-1", "d_k-1"),  # a hyphen between names is not a minus
        ("week-1", "week-1"),
    ],
)
def test_negative_numbers_get_true_minus_signs(written: str, printed: str) -> None:
    assert ts.minus_signs(written) == printed


def _plan(*answers: NumericAnswer | VectorAnswer | MatrixAnswer) -> ClassPlan:
    questions = tuple(
        Question(
            "paper", f"item-{n}", "made up", "topic", 1, variant_code(1), Variant("Compute.", answer, ())
        )
        for n, answer in enumerate(answers, 1)
    )
    sheet = Sheet(1, 1, variant_code(1), questions)
    return ClassPlan("paper", "Paper", 2026, tuple(q.item_id for q in questions), (sheet,))


def test_every_key_prints_negative_answers_with_minus_signs() -> None:
    plan = _plan(NumericAnswer(-0.5, Tolerance.decimals(2)), VectorAnswer((-1.0, 2.0), Tolerance.decimals(1)))
    for style in ("grid", "brief", "full"):
        source = ts.key(plan, plan.sheets, style=style)
        assert ts.escape("\u22120.50") in source, style
        assert ts.escape("[\u22121.0, 2.0]") in source, style
        assert ts.escape("-0.50") not in source


def test_the_grid_keeps_each_heading_with_its_table() -> None:
    """A heading is sticky (Typst moves it to the next page with the table it heads)."""
    plan = _plan(NumericAnswer(1.0))
    source = ts.key(plan, plan.sheets, style="grid")
    heading = next(
        line for line in source.splitlines() if line.startswith("#block(") and "marking grid" in line
    )
    assert "sticky: true" in heading


def _formula_sheets(fmt: str) -> str:
    from attnquiz.engine.export.text import html, markdown

    from .samples import formula_plan, sample_plan

    plans = [formula_plan(1), sample_plan(1)]
    if fmt == "typ":
        return "".join(ts.worksheets(p, p.sheets) for p in plans)
    if fmt == "html":
        return "".join(html.worksheets(p, p.sheets) for p in plans)
    return "".join(markdown.worksheets(p, p.sheets) for p in plans)


@pytest.mark.parametrize("fmt", ["typ", "html", "md"])
def test_paper_says_what_to_write_not_how_to_type_it(fmt: str) -> None:
    text = _formula_sheets(fmt)
    for keyboard in ("d^2", "d**2", "3*d", "[[a, b]", "a b; c d", "e.g. [a, b]", "type", "Tick one box"):
        assert keyboard not in text, keyboard
    assert "Write a formula in" in text
    assert "Fill in one circle" in text


def test_a_part_prints_its_weight_and_the_carry_forward_note_comes_before_a() -> None:
    from attnquiz.engine.answers.kinds import IntegerAnswer, Part, PartsAnswer

    answer = PartsAnswer(
        (
            Part("a", "Count the heads.", IntegerAnswer(4), weight=1),
            Part("b", "Double it.", IntegerAnswer(8), weight=2.5, uses=("a",), recompute=lambda a: 2 * a),
        )
    )
    question = Question(
        "paper", "chain", "made up", "topic", 1, variant_code(1), Variant("A stem.", answer, ())
    )
    plan = ClassPlan("paper", "Paper", 2026, ("chain",), (Sheet(1, 1, variant_code(1), (question,)),))
    from attnquiz.engine.export.text import html, markdown

    sheets = (
        ts.worksheets(plan, plan.sheets),
        html.worksheets(plan, plan.sheets),
        markdown.worksheets(plan, plan.sheets),
    )
    for escaped in sheets:
        text = escaped.replace("\\", "")  # Typst's and Markdown's escapes
        note = text.index("error carried forward")
        assert text.index("A stem") < note < text.index("Count the heads")
        assert (
            text.index("1 mark")
            < text.index("Count the heads")
            < text.index("2.5 marks")
            < text.index("Double it")
        )


def test_a_single_choice_has_round_bubbles_and_says_so_before_its_options() -> None:
    from attnquiz.engine.export.text import html

    typst_text = _formula_sheets("typ")
    assert "#options(bubble, " in typst_text
    assert "#options(tick, " in typst_text
    assert "radius: 50%" in typst_text
    assert typst_text.index("Fill in one circle") < typst_text.index("#options(bubble, ")
    from .samples import sample_plan

    plan = sample_plan(1)
    page = html.worksheets(plan, plan.sheets)
    assert page.index("Fill in one circle") < page.index('class="tick bubble"')
