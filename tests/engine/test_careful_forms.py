"""What a careful human types is read: a shape as ``[100; 768]`` where ``;`` separates the cells of a
comma-decimal spreadsheet's answers file, a formula whose help text and examples use the item's own
symbols, and "did you mean d_model?" for a name of the same stem."""

from __future__ import annotations

import pytest

from attnquiz.engine.answers import parse, read_formulas, read_shapes
from attnquiz.engine.answers.kinds import ExpressionAnswer, ShapeAnswer, symbols
from attnquiz.engine.bank.finding import load
from attnquiz.engine.classwork.grading import grade_text
from attnquiz.engine.export.lms.model import asked
from attnquiz.engine.grading.grade import grade_answer
from attnquiz.engine.plan.class_plan import plan_class

SEED = 7


@pytest.mark.parametrize(
    ("response", "dims"),
    [
        ("[100; 768]", (100, 768)),
        ("100;768", (100, 768)),
        ("(T; 512)", ("T", 512)),
        ("[2; 16; 512]", (2, 16, 512)),
    ],
)
def test_a_shape_with_semicolons_between_its_dimensions_is_read(
    response: str, dims: tuple[object, ...]
) -> None:
    assert read_shapes.shape(response) == dims


def test_a_matrix_typed_for_a_shape_is_still_refused() -> None:
    assert isinstance(read_shapes.shape("[1, 2; 3, 4]"), parse.Invalid)


def test_a_semicolon_answers_file_grades_shapes_written_with_semicolons() -> None:
    bank = load("week2")
    item = "cross-attention-output"
    plan = plan_class(bank, students=4, master_seed=SEED, items=[item])
    lines = [f"student;code;{item}"]
    for sheet in plan.sheets:
        answer = sheet.questions[0].answer
        assert isinstance(answer, ShapeAnswer)
        typed = "[" + "; ".join(str(d) for d in answer.dims) + "]"
        lines.append(f'{sheet.student};{sheet.code};"{typed}"')
    marks = grade_text(bank, "\n".join(lines) + "\n", master_seed=SEED)
    assert not marks.problems
    assert [row.cells[0].status for row in marks.rows] == ["correct"] * 4


@pytest.mark.parametrize(
    ("names", "typed", "meant"),
    [
        (("d_model", "d_ff"), "d", "d_model or d_ff"),
        (("d_model", "T"), "D_model", "d_model"),
        (("n", "d"), "d_model", "d"),
        (("d_model",), "d_modle", "d_model"),
        (("h", "d_v"), "d", "d_v"),
    ],
)
def test_an_unknown_name_of_the_same_stem_gets_a_did_you_mean(
    names: tuple[str, ...], typed: str, meant: str
) -> None:
    found = read_formulas.formula(f"2*{typed}", names)
    assert isinstance(found, parse.Invalid)
    assert f"Did you mean {meant}?" in found.reason


def test_an_unrelated_name_gets_no_guess() -> None:
    found = read_formulas.formula("2*x", ("d", "n"))
    assert isinstance(found, parse.Invalid)
    assert "Did you mean" not in found.reason


def test_a_shape_dimension_of_the_same_stem_gets_a_did_you_mean() -> None:
    answer = ShapeAnswer(("B", "T", "d_model"), symbols=symbols(B=None, T=None, d_model=None))
    graded = grade_answer(answer, "[B, T, d]")
    assert graded.status == "invalid"
    assert "Did you mean d_model?" in graded.feedback


@pytest.mark.parametrize(
    ("value", "names"), [("2*d_model*d_ff + d_ff", ("d_model", "d_ff")), ("h^2*d_v^2", ("h", "d_v"))]
)
def test_formula_help_and_examples_use_the_item_s_own_symbols(value: str, names: tuple[str, ...]) -> None:
    answer = ExpressionAnswer(value, names)
    for text in (answer.instructions(), asked(answer)):
        assert names[0] in text
        # no example in a d the question does not have
        assert "d^2" not in text
        assert "3*d " not in text
        assert "3d," not in text
    # Every example the help text gives is a formula the grader reads in these symbols.
    examples = [
        read_formulas.example_formula(names),
        f"3*{names[0]}",
        f"{names[0]}**2",
        f"{names[-1]}/(2*{names[0]})",
    ]
    for example in examples:
        assert not isinstance(read_formulas.formula(example, names), parse.Invalid), example
