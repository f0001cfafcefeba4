"""Formula answers (`expression`): read by quiz's own reader, compared exactly at random points.

Tables of equivalent and wrong forms, every listed mistake of every formula item named when typed
back, unknown symbols and hostile input invalid, and sympy never imported to grade a formula.
"""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

from attnquiz.engine.answers import formula_tree, read_formulas, symbolic
from attnquiz.engine.answers.kinds import ExpressionAnswer, Mistake, ShapeAnswer, symbols
from attnquiz.engine.answers.values import Formula
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.generators import formulas
from attnquiz.engine.grading.grade import grade, grade_answer

BLOCK = ExpressionAnswer("12*d^2 + 13*d", ("d",))
BLOCK_MISTAKES = (
    Mistake("layernorm-forgotten", Formula.of("12d^2 + 9d", ["d"]), "LayerNorm forgotten."),
    Mistake("weights-only", Formula.of("12d^2", ["d"]), "Biases and LayerNorm forgotten."),
)


@pytest.mark.parametrize(
    "response",
    [
        "12d^2 + 13d",
        "d(12d+13)",
        "13*d + 12*d**2",
        "12 d² + 13 d",
        "(12d + 13) d",
        "d*(13 + 12*d)",
        "24d^2/2 + 13d",
        "12·d^2 + 13·d",
        "12×d^2+13×d",
        "(12d^2 + 13d)",
        "d^2*12 + d*13",
        "(d+1)(12d+1) - 1",
    ],
)
def test_an_equivalent_form_is_correct(response: str) -> None:
    result = grade_answer(BLOCK, response, BLOCK_MISTAKES)
    assert result.status == "correct", result.feedback


@pytest.mark.parametrize(
    ("response", "tag"),
    [
        ("12d^2 + 14d", None),
        ("13d^2 + 12d", None),
        ("12d^3 + 13d", None),
        ("12d^2 + 13", None),
        ("12d^2 + 9d", "layernorm-forgotten"),
        ("d(12d + 9)", "layernorm-forgotten"),
        ("12 d**2", "weights-only"),
        ("-12d^2 - 13d", "sign-error"),
    ],
)
def test_a_changed_formula_is_wrong_and_a_listed_mistake_is_named(response: str, tag: str | None) -> None:
    result = grade_answer(BLOCK, response, BLOCK_MISTAKES)
    assert result.status == "wrong", result.feedback
    assert (result.mistake.tag if result.mistake else None) == tag


@pytest.mark.parametrize(
    "response", ["4 d_model^2 + 4 d_model", "4dmodel^2+4dmodel", "4 d_{model}(d_{model} + 1)"]
)
def test_names_with_subscripts_are_read_in_every_spelling(response: str) -> None:
    answer = ExpressionAnswer("4*d_model^2 + 4*d_model", ("d_model",))
    assert grade_answer(answer, response).status == "correct"


def test_an_unknown_symbol_is_invalid_and_the_question_s_symbols_are_listed() -> None:
    answer = ExpressionAnswer("B*h*T^2", ("B", "h", "T"))
    result = grade_answer(answer, "B*h*t^2")
    assert result.status == "invalid"
    assert "`t`" in result.feedback
    assert "B, h, T" in result.feedback
    # Declared names run together are their product, and the echo says how it was read (issue 26).
    run_together = grade_answer(answer, "BhT^2")
    assert run_together.status == "correct", run_together.feedback
    assert run_together.read_as == "B*h*T^2"


@pytest.mark.parametrize(
    "response",
    [
        "(d+1)^100000",
        "d^d^d",
        "d^d",
        "9**9**9",
        "(d+1)^12*(d+1)^12",
        "*".join(["d"] * 500),
        "(" * 60 + "d" + ")" * 60,
        "1" * 5000,
        "d" * 3000,
        "__import__('os').system('true')",
        "sqrt(d)",
        "d^(1/2)",
        "exp(d)",
        "",
        "12d^2 +",
        "[d, d]",
        "d\x00",
        "1/0*d",
    ],
)
def test_hostile_or_unreadable_formulas_are_invalid(response: str) -> None:
    result = grade_answer(BLOCK, response)
    assert result.status in {"invalid", "wrong"}, result.feedback
    if response != "1/0*d":
        assert result.status == "invalid", response


def test_a_quotient_is_compared_exactly_and_a_zero_denominator_is_never_a_match() -> None:
    answer = ExpressionAnswer("T*(T - 1)/2", ("T",))
    for right in ["T(T-1)/2", "(T^2 - T)/2", "T^2/2 - T/2", "0.5 T^2 - 0.5 T", "(T-1)*T/2"]:
        assert grade_answer(answer, right).status == "correct", right
    for wrong in ["T^2/2", "T(T+1)/2", "(T-1)/(2T)", "T/(T-T)"]:
        assert grade_answer(answer, wrong).status in {"wrong", "invalid"}, wrong


def test_the_tree_is_built_by_quiz_s_reader_and_sympy_only_sees_the_tree() -> None:
    tree = read_formulas.formula("d(12d + 13)", ("d",))
    assert isinstance(tree, tuple)
    assert formula_tree.formula_text(tree) == "d*(12*d + 13)"
    built = symbolic.to_sympy(tree)
    import sympy

    assert sympy.expand(built) == 12 * sympy.Symbol("d", positive=True) ** 2 + 13 * sympy.Symbol(
        "d", positive=True
    )
    assert symbolic.evaluate(tree, {"d": Fraction(512)}) == 12 * 512**2 + 13 * 512


FORMULA_ITEMS = [
    ("week1", "block-params-formula"),
    ("week1", "mha-params-formula"),
    ("week1", "ffn-params-formula"),
    ("week1", "w-o-params-formula"),
    ("week1", "score-entries-formula"),
    ("week1", "attention-dense-ratio-formula"),
    ("week1", "stack-params-formula"),
    ("week2", "masked-entries-formula"),
]


@pytest.mark.parametrize(("bank", "item"), FORMULA_ITEMS)
def test_every_formula_item_grades_its_key_and_names_each_listed_mistake(bank: str, item: str) -> None:
    entry = banks.load(bank).get(item)
    for seed in range(6):
        question = entry.question(seed)
        answer = question.answer
        assert isinstance(answer, ExpressionAnswer)
        assert grade(question, answer.value).status == "correct"
        assert question.variant.mistakes, item
        for mistake in question.variant.mistakes:
            result = grade(question, mistake.format(answer))
            assert result.mistake is not None, (item, mistake.tag)
            assert result.mistake.tag == mistake.tag, (item, mistake.tag)


def test_a_formula_that_disagrees_with_the_numerics_is_refused_when_the_variant_is_built() -> None:
    with pytest.raises(ValueError, match="the numerics"):
        formulas.checked("12*d^2 + 12*d", ["d"], lambda **p: 12 * p["d"] ** 2 + 13 * p["d"])
    assert formulas.block_params_formula(np.random.default_rng(0)).answer.format().startswith("12*")


def test_sympy_is_never_imported_to_grade_a_formula() -> None:
    code = """
import sys
from attnquiz.main import app
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.grading.grade import grade
try:
    app(["--help"])
except SystemExit:
    pass
bank = banks.load("week1")
grade(bank.get("additive-score").original(), "1.93")
question = bank.get("block-params-formula").question(1)
before = "sympy" in sys.modules
grade(question, question.answer.format())
print(before, "sympy" in sys.modules)
"""
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.split()[-2:] == ["False", "False"], result.stdout


@pytest.mark.parametrize(
    ("response", "status"),
    [
        ("[B, T, h*d_k]", "correct"),
        ("[B, T, d_k*h]", "correct"),
        ("[B, T, h·dₖ]", "correct"),
        ("(B, T, h * dk)", "correct"),
        ("[B, T, d_model]", "correct"),
        ("[B, T, 2*h*d_k]", "wrong"),
        ("[B, T, h*h*d_k]", "wrong"),
        ("[B, T, h*q]", "invalid"),
    ],
)
def test_a_shape_takes_a_product_of_symbols_the_item_states(response: str, status: str) -> None:
    answer = ShapeAnswer(
        ("B", "T", "d_model"),
        symbols=symbols(B=None, T=None, d_model=None, h=None, d_k=None),
        products=(("d_model", "h*d_k"),),
    )
    assert grade_answer(answer, response).status == status, response


def test_a_product_of_names_with_numbers_is_that_number() -> None:
    answer = ShapeAnswer((7, 512), symbols=symbols(T=7, d_model=512, h=8, d_k=64))
    assert grade_answer(answer, "[T, h*d_k]").status == "correct"
    assert grade_answer(answer, "[T, 8*d_k]").status == "correct"
    assert grade_answer(answer, "[T, 4*d_k]").status == "wrong"
