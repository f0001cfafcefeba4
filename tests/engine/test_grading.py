"""engine.grading: a table of responses with their expected status, score and mistake, across every kind."""

from __future__ import annotations

import math

import pytest

from attnquiz.engine.answers.kinds import (
    Answer,
    ChoiceAnswer,
    IntegerAnswer,
    MatrixAnswer,
    Mistake,
    NumericAnswer,
    Option,
    Scoring,
    ShapeAnswer,
    VectorAnswer,
)
from attnquiz.engine.answers.rounding import rounded_early
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.grading.choices import choice_score
from attnquiz.engine.grading.grade import grade, grade_answer
from attnquiz.engine.grading.outcome import GENERIC_TAGS, Grade
from attnquiz.engine.markup import markdown as md
from attnquiz.engine.markup import plain


def _mistake(tag: str, value: object) -> Mistake:
    return Mistake(tag, value, f"Feedback for {tag}.")  # type: ignore[arg-type]


def _choice(scoring: Scoring, *, multiple: bool = True) -> ChoiceAnswer:
    if not multiple:
        return ChoiceAnswer(
            (
                Option("one", False, "Not one."),
                Option("two", True),
                Option("three", False),
                Option("four", False),
            ),
            multiple=False,
            scoring=scoring,
        )
    return ChoiceAnswer(
        (
            Option("A is true", True, "A holds."),
            Option("B is false", False, "B fails because of $\\sqrt{d_k}$."),
            Option("C is true", True),
            Option("D is false", False, ""),
            Option("E is false", False, "E fails."),
        ),
        multiple=True,
        scoring=scoring,
    )


# Each answer with the mistakes its variant lists (the values an item's generator would compute).
ANSWERS: dict[str, tuple[Answer, tuple[Mistake, ...]]] = {
    # 2026 T1 Quiz 1, Q13: 2·tanh(2) to 2 decimal places.
    "num2": (
        NumericAnswer(2 * math.tanh(2), Tolerance.decimals(2)),
        (_mistake("no-tanh", 4.0), _mistake("tanh-after-dot", math.tanh(4))),
    ),
    # The same, with the early-rounding slips its generator declares (tanh values rounded first).
    "early": (
        NumericAnswer(2 * math.tanh(2), Tolerance.decimals(2)),
        (
            _mistake("no-tanh", 4.0),
            *rounded_early(Tolerance.decimals(2), [math.tanh(2)] * 2, sum, r"the $\tanh$ values"),
        ),
    ),
    "rel": (NumericAnswer(0.3528, allow_percent=True), ()),
    "rel-no-percent": (NumericAnswer(0.3528), ()),
    "sig3": (NumericAnswer(0.0003354, Tolerance.sigfigs(3)), ()),
    "credit": (
        NumericAnswer(0.67, Tolerance.decimals(2)),
        (Mistake("half-right", 0.33, "Half of it.", score=0.5),),
    ),
    # MHA parameters at d = 768 with biases: 4d² + 4d.
    "count": (
        IntegerAnswer(4 * 768**2 + 4 * 768),
        (_mistake("no-biases", 4 * 768**2), _mistake("forgot-w-o", 3 * 768**2 + 3 * 768)),
    ),
    "vec": (
        VectorAnswer((0.881, 0.119), Tolerance.decimals(3)),
        (_mistake("wrong-axis", (1.0, 1.0)), _mistake("no-softmax", (2.0, 0.0))),
    ),
    "mat": (
        MatrixAnswer(((1.66, 2.66), (2.34, 3.34)), Tolerance.decimals(2)),
        (
            _mistake("no-sqrt-dk", ((1.54, 2.54), (2.46, 3.46))),
            _mistake("keys-not-values", ((0.67, 0.33), (0.33, 0.67))),
            _mistake("uniform-rows", ((2.0, 3.0), (2.0, 3.0))),
            _mistake("k-transpose-q", ((1.0, 2.0, 3.0), (4.0, 5.0, 6.0))),
        ),
    ),
    "shape": (
        ShapeAnswer(("T", 512)),
        (_mistake("heads-add-weights", ("T", 4096)), _mistake("one-head", ("T", 64))),
    ),
    "shape3": (ShapeAnswer(("B", "T", "d_model")), ()),
    "shape-num": (
        ShapeAnswer((50, 512)),
        (_mistake("d-ff", (50, 2048)), _mistake("layers-stacked", (300, 512))),
    ),
    "net": (_choice("net"), (_mistake("popular-pair", frozenset("BD")),)),
    "each": (_choice("each-answer"), ()),
    "aon": (_choice("all-or-nothing"), ()),
    "single": (_choice("net", multiple=False), ()),
}

C, P, W, INV = "correct", "partial", "wrong", "invalid"
LOW, SIGN, TEN, PCT, T, REV, EARLY = GENERIC_TAGS

TABLE: list[tuple[str, str, str, float, str | None]] = [
    # ---- early rounding: 2 × 0.96 for 2·tanh(2) (issue 13, defect 4) ----
    ("early", "1.92", W, 0, EARLY),
    ("early", "2*0.96", W, 0, EARLY),
    ("early", "0.96+0.96", W, 0, EARLY),
    ("early", "2.00", W, 0, EARLY),  # tanh(2) rounded to one place, written to two
    ("early", "2", W, 0, LOW),  # the answer itself rounded too coarsely: the precision slip
    ("early", "1.9", W, 0, LOW),
    ("early", "1.93", C, 1, None),
    ("early", "4", W, 0, "no-tanh"),
    # ---- a number to 2 decimal places (1.9281) ----
    ("num2", "1.93", C, 1, None),
    ("num2", "1.928", C, 1, None),
    ("num2", "1.9281", C, 1, None),
    ("num2", "1.925", C, 1, None),
    ("num2", "1.93000", C, 1, None),
    ("num2", "2*tanh(2)", C, 1, None),
    ("num2", "2tanh(2)", C, 1, None),
    ("num2", "tanh(2)*2", C, 1, None),
    ("num2", "2 * tanh(2)", C, 1, None),
    ("num2", "+1.93", C, 1, None),
    ("num2", "  1.93\n", C, 1, None),
    ("num2", "(e^4-1)/(e^4+1)*2", C, 1, None),
    ("num2", "193/100", C, 1, None),
    ("num2", "1.9", W, 0, LOW),
    ("num2", "2", W, 0, LOW),
    ("num2", "2.0", W, 0, None),  # 1.93 is 1.9 to one decimal, not 2.0
    ("num2", "1.92", W, 0, None),
    ("num2", "1.94", W, 0, None),
    ("num2", "-1.93", W, 0, SIGN),
    ("num2", "−1.93", W, 0, SIGN),
    ("num2", "19.28", W, 0, TEN),
    ("num2", "0.193", W, 0, TEN),
    ("num2", "193", W, 0, TEN),
    ("num2", "4", W, 0, "no-tanh"),
    ("num2", "4.00", W, 0, "no-tanh"),
    ("num2", "4.001", W, 0, "no-tanh"),
    ("num2", "1+3", W, 0, "no-tanh"),
    ("num2", "1.00", W, 0, "tanh-after-dot"),
    ("num2", "1", W, 0, "tanh-after-dot"),
    ("num2", "tanh(4)", W, 0, "tanh-after-dot"),
    ("num2", "0.99", W, 0, None),
    ("num2", "e", W, 0, None),
    ("num2", "0.5*pi", W, 0, None),
    ("num2", "", INV, 0, None),
    ("num2", "abc", INV, 0, None),
    ("num2", "1,93", INV, 0, None),
    ("num2", "1.93.1", INV, 0, None),
    ("num2", "__import__('os')", INV, 0, None),
    ("num2", "9**9**9", INV, 0, None),
    ("num2", "1/0", INV, 0, None),
    ("num2", "nan", INV, 0, None),
    ("num2", "inf", INV, 0, None),
    ("num2", "[1.93]", INV, 0, None),
    ("num2", "1.93 1.94", INV, 0, None),
    ("num2", "2x", INV, 0, None),
    ("num2", "1.93%", INV, 0, None),
    ("num2", "\x00", INV, 0, None),
    ("num2", "1e999999", INV, 0, None),
    ("num2", "(" * 60 + "1" + ")" * 60, INV, 0, None),
    ("num2", "1" * 5000, INV, 0, None),
    ("num2", "sqrt(-1)", INV, 0, None),
    ("num2", "1/2pi", INV, 0, None),
    ("num2", "tanh2", INV, 0, None),
    # ---- a fraction within 0.1 %, percentages allowed (0.3528) ----
    ("rel", "0.3528", C, 1, None),
    ("rel", "35.28%", C, 1, None),
    ("rel", "35.28 %", C, 1, None),
    ("rel", "0.353", C, 1, None),
    ("rel", "0.35280", C, 1, None),
    ("rel", "441/1250", C, 1, None),
    ("rel", "0.3504", W, 0, None),
    ("rel", "0.35", W, 0, LOW),
    ("rel", "35%", W, 0, LOW),
    ("rel", "0.4", W, 0, LOW),
    ("rel", "0.3", W, 0, None),
    ("rel", "35.28", W, 0, PCT),
    ("rel", "35.3", W, 0, PCT),
    ("rel", "-0.3528", W, 0, SIGN),
    ("rel", "3.528", W, 0, TEN),
    ("rel", "0.03528", W, 0, TEN),
    ("rel", "1/3", W, 0, None),
    ("rel", "35%%", INV, 0, None),
    ("rel", "%35", INV, 0, None),
    ("rel", "35%+1", INV, 0, None),
    ("rel-no-percent", "0.3528", C, 1, None),
    ("rel-no-percent", "35.28%", INV, 0, None),
    ("rel-no-percent", "35.28", W, 0, PCT),
    # ---- 3 significant figures (0.0003354) ----
    ("sig3", "0.000335", C, 1, None),
    ("sig3", "3.35e-4", C, 1, None),
    ("sig3", "3.354e-4", C, 1, None),
    ("sig3", "335.4e-6", C, 1, None),
    ("sig3", "0.00034", W, 0, LOW),
    ("sig3", "3.4e-4", W, 0, LOW),
    ("sig3", "0.000336", W, 0, None),
    ("sig3", "3.354", W, 0, TEN),
    ("sig3", "-3.35e-4", W, 0, SIGN),
    # ---- a mistake that carries credit ----
    ("credit", "0.67", C, 1, None),
    ("credit", "0.33", P, 0.5, "half-right"),
    ("credit", "0.34", W, 0, None),
    # ---- an exact count (2,362,368) ----
    ("count", "2362368", C, 1, None),
    ("count", "2,362,368", C, 1, None),
    ("count", "2 362 368", C, 1, None),
    ("count", "2_362_368", C, 1, None),
    ("count", "4*768^2+4*768", C, 1, None),
    ("count", "4*768²+4*768", C, 1, None),
    ("count", "4(768^2+768)", C, 1, None),
    ("count", "768^2*4+3072", C, 1, None),
    ("count", "2362368.0", C, 1, None),
    ("count", "2.362368e6", C, 1, None),
    ("count", "2362368/1", C, 1, None),
    ("count", "2359296", W, 0, "no-biases"),
    ("count", "2,359,296", W, 0, "no-biases"),
    ("count", "4*768^2", W, 0, "no-biases"),
    ("count", "1771776", W, 0, "forgot-w-o"),
    ("count", "2.36e6", W, 0, LOW),
    ("count", "2,360,000", W, 0, LOW),
    ("count", "2362369", W, 0, None),
    ("count", "1e7", W, 0, None),
    ("count", "-2362368", W, 0, SIGN),
    ("count", "23623680", W, 0, TEN),
    ("count", "2362.368", W, 0, TEN),
    ("count", "2.362.368", INV, 0, None),
    ("count", "3.5", INV, 0, None),
    ("count", "2362368.5", INV, 0, None),
    ("count", "2362,368", INV, 0, None),
    ("count", "x", INV, 0, None),
    ("count", "", INV, 0, None),
    # ---- a vector to 3 decimal places ([0.881, 0.119]) ----
    ("vec", "[0.881, 0.119]", C, 1, None),
    ("vec", "(0.881, 0.119)", C, 1, None),
    ("vec", "0.881 0.119", C, 1, None),
    ("vec", "0.881, 0.119", C, 1, None),
    ("vec", "[0.8808, 0.1192]", C, 1, None),
    ("vec", "[e^2/(e^2+1), 1/(e^2+1)]", C, 1, None),
    ("vec", "[[0.881, 0.119]]", C, 1, None),
    ("vec", "0.881\n0.119", C, 1, None),
    ("vec", "[0.881; 0.119]", C, 1, None),
    ("vec", "[0.88, 0.12]", W, 0, LOW),
    ("vec", "[0.881, 0.12]", W, 0, LOW),
    ("vec", "[1, 1]", W, 0, "wrong-axis"),
    ("vec", "[1.0, 1.0]", W, 0, "wrong-axis"),
    ("vec", "[2, 0]", W, 0, "no-softmax"),
    ("vec", "[-0.881, -0.119]", W, 0, SIGN),
    ("vec", "[0.119, 0.881]", W, 0, None),
    ("vec", "[0.881, 0.2]", W, 0, None),
    ("vec", "[0.881]", W, 0, None),
    ("vec", "[0.881, 0.119, 0]", W, 0, None),
    ("vec", "[1 -1]", W, 0, None),
    ("vec", "[1 - 1]", W, 0, None),
    ("vec", "0.881", INV, 0, None),
    ("vec", "[[1,2],[3,4]]", INV, 0, None),
    ("vec", "[0.881, abc]", INV, 0, None),
    ("vec", "[0.881,, 0.119]", INV, 0, None),
    ("vec", "[0.881, 0.119", INV, 0, None),
    ("vec", "", INV, 0, None),
    # ---- a 2×2 matrix to 2 decimal places ----
    ("mat", "[[1.66, 2.66], [2.34, 3.34]]", C, 1, None),
    ("mat", "1.66 2.66; 2.34 3.34", C, 1, None),
    ("mat", "[1.66 2.66; 2.34 3.34]", C, 1, None),
    ("mat", "1.66, 2.66\n2.34, 3.34", C, 1, None),
    ("mat", "((1.66,2.66),(2.34,3.34))", C, 1, None),
    ("mat", "[[1.66,2.66],\n[2.34,3.34]]", C, 1, None),
    ("mat", "[[1.663, 2.657], [2.337, 3.343]]", C, 1, None),
    ("mat", "[[1.7, 2.7], [2.3, 3.3]]", W, 0, LOW),
    ("mat", "[[1.54, 2.54], [2.46, 3.46]]", W, 0, "no-sqrt-dk"),
    ("mat", "1.54 2.54; 2.46 3.46", W, 0, "no-sqrt-dk"),
    ("mat", "[[0.67,0.33],[0.33,0.67]]", W, 0, "keys-not-values"),
    ("mat", "[[2,3],[2,3]]", W, 0, "uniform-rows"),  # exactly the mistake, though coarser than asked
    ("mat", "[[2.00, 3.00], [2.00, 3.00]]", W, 0, "uniform-rows"),
    ("mat", "[[2, 3], [2.3, 3.3]]", W, 0, LOW),
    ("mat", "[[1, 2, 3], [4, 5, 6]]", W, 0, "k-transpose-q"),
    ("mat", "[[1.66, 2.34], [2.66, 3.34]]", W, 0, T),
    ("mat", "[[1.66, 2.66], [2.34, 3.35]]", W, 0, None),
    ("mat", "[[-1.66, -2.66], [-2.34, -3.34]]", W, 0, None),
    ("mat", "[[1.66, 2.66]]", W, 0, None),
    ("mat", "[[1.66, 2.66], [2.34, 3.34], [0, 0]]", W, 0, None),
    ("mat", "1.66 2.66 2.34 3.34", INV, 0, None),
    ("mat", "1.66", INV, 0, None),
    ("mat", "[[1.66, 2.66], [2.34]]", INV, 0, None),
    ("mat", "[[1.66, 2.66], [2.34, x]]", INV, 0, None),
    # ---- a symbolic shape [T, 512] ----
    ("shape", "[T, 512]", C, 1, None),
    ("shape", "(T,512)", C, 1, None),
    ("shape", "T x 512", C, 1, None),
    ("shape", "T × 512", C, 1, None),
    ("shape", "T by 512", C, 1, None),
    ("shape", "[T, 8*64]", C, 1, None),
    ("shape", "T, 512", C, 1, None),
    ("shape", "[T 512]", C, 1, None),
    ("shape", "[T, 4096]", W, 0, "heads-add-weights"),
    ("shape", "[T, 64]", W, 0, "one-head"),
    ("shape", "[512, T]", W, 0, REV),
    ("shape", "[t, 512]", INV, 0, None),
    ("shape", "[50, 512]", W, 0, None),
    ("shape", "[T, 512, 1]", W, 0, None),
    ("shape", "512", W, 0, None),
    ("shape", "T512", INV, 0, None),
    ("shape", "[T, 512.5]", INV, 0, None),
    ("shape", "[T, 0]", INV, 0, None),
    ("shape", "[T, [512]]", INV, 0, None),
    ("shape", "", INV, 0, None),
    ("shape3", "(B, T, d_model)", C, 1, None),
    ("shape3", "[B, T, dmodel]", C, 1, None),
    ("shape3", "[B, T, d_{model}]", C, 1, None),
    ("shape3", "B x T x d_model", C, 1, None),
    ("shape3", "[B, T, D_model]", INV, 0, None),
    ("shape3", "[B, T, d]", INV, 0, None),
    ("shape3", "[T, B, d_model]", W, 0, None),
    ("shape3", "[d_model, T, B]", W, 0, REV),
    ("shape-num", "50x512", C, 1, None),
    ("shape-num", "50 × 512", C, 1, None),
    ("shape-num", "50 by 512", C, 1, None),
    ("shape-num", "(50,512)", C, 1, None),
    ("shape-num", "[50, 512,]", C, 1, None),
    ("shape-num", "50X512", C, 1, None),
    ("shape-num", "[50, 2048]", W, 0, "d-ff"),
    ("shape-num", "[300, 512]", W, 0, "layers-stacked"),
    ("shape-num", "[T, 512]", INV, 0, None),
    ("shape-num", "banana", INV, 0, None),
    ("shape", "[banana, 512]", INV, 0, None),
    # ---- multiple select, net scoring: A and C are true of five ----
    ("net", "A, C", C, 1, None),
    ("net", "ac", C, 1, None),
    ("net", "C A", C, 1, None),
    ("net", "A and C", C, 1, None),
    ("net", "{A,C}", C, 1, None),
    ("net", "(a) (c)", C, 1, None),
    ("net", "A, C, A", C, 1, None),
    ("net", "A", P, 0.5, None),
    ("net", "c", P, 0.5, None),
    ("net", "A, C, B", P, 0.5, None),
    ("net", "A, B", W, 0, None),
    ("net", "A, C, B, D", W, 0, None),
    ("net", "B", W, 0, None),
    ("net", "B, D", W, 0, "popular-pair"),
    ("net", "ABCDE", W, 0, None),
    ("net", "F", INV, 0, None),
    ("net", "", INV, 0, None),
    ("net", "A, 1", INV, 0, None),
    ("net", "hello", INV, 0, None),
    # ---- each-answer scoring ----
    ("each", "A, C", C, 1, None),
    ("each", "A", P, 0.8, None),
    ("each", "A, B", P, 0.6, None),
    ("each", "B", P, 0.4, None),
    ("each", "A, C, B", P, 0.8, None),
    ("each", "B, D, E", W, 0, None),
    # ---- all-or-nothing ----
    ("aon", "A, C", C, 1, None),
    ("aon", "A", W, 0, None),
    ("aon", "A, C, B", W, 0, None),
    # ---- single choice: B ----
    ("single", "B", C, 1, None),
    ("single", "b", C, 1, None),
    ("single", "(b)", C, 1, None),
    ("single", "B.", C, 1, None),
    ("single", "A", W, 0, None),
    ("single", "D", W, 0, None),
    ("single", "A, B", INV, 0, None),
    ("single", "E", INV, 0, None),
]


def test_the_table_is_large_and_covers_every_kind_and_outcome() -> None:
    assert len(TABLE) >= 150
    kinds = {ANSWERS[key][0].kind for key, *_ in TABLE}
    assert kinds == {"numeric", "integer", "vector", "matrix", "shape", "choice"}
    assert {status for _, _, status, _, _ in TABLE} == {C, P, W, INV}
    assert set(GENERIC_TAGS) <= {tag for *_, tag in TABLE}


@pytest.mark.parametrize(("key", "response", "status", "score", "tag"), TABLE)
def test_grade(key: str, response: str, status: str, score: float, tag: str | None) -> None:
    answer, mistakes = ANSWERS[key]
    result = grade_answer(answer, response, mistakes)
    assert (result.status, result.mistake.tag if result.mistake else None) == (status, tag), result
    assert result.score == pytest.approx(score)
    assert result.counts == (status != INV)
    assert result.feedback
    md.check(result.feedback)
    plain.to_terminal(result.feedback)
    if status == INV:
        assert result.mistake is None
        assert answer.instructions() in result.feedback, "an invalid response is told what is expected"


# -- feedback -----------------------------------------------------------------------------------


def graded(key: str, response: str) -> Grade:
    answer, mistakes = ANSWERS[key]
    return grade_answer(answer, response, mistakes)


def test_precision_too_low_says_so_and_names_the_precision_asked() -> None:
    result = graded("num2", "1.9")
    assert "precision is too low" in result.feedback
    assert "2 decimal places" in result.feedback


def test_a_named_mistake_gives_its_own_feedback() -> None:
    assert graded("num2", "4").feedback == "Feedback for no-tanh."
    assert graded("mat", "[[1.54, 2.54], [2.46, 3.46]]").feedback == "Feedback for no-sqrt-dk."


def test_a_wrong_vector_names_the_entries_that_are_off() -> None:
    assert "entry 2 is off" in graded("vec", "[0.881, 0.2]").feedback
    assert "every entry is off" in graded("vec", "[0.5, 0.5]").feedback
    assert "has 2 entries; you gave 1" in graded("vec", "[0.881]").feedback
    answer = VectorAnswer((1.0, 2.0, 3.0, 4.0), Tolerance.decimals(2))
    assert "entries 2 and 3 are off" in grade_answer(answer, "[1, 0, 0, 4]").feedback
    assert "entries 1, 2 and 4 are off" in grade_answer(answer, "[0, 0, 3, 0]").feedback


@pytest.mark.parametrize(
    ("response", "words"),
    [
        ("[768, 5.9e5]", "entry 2 is written with too few digits"),
        ("[800, 589824]", "entry 1 is written with too few digits"),
        ("[768, 590000]", "entry 2 is written with too few digits"),
        ("[8e2, 5.9e5]", "entries 1 and 2 are written with too few digits"),
        ("[768, 589,824]", "Inside a list a comma separates entries"),
        ("[768, 589 824]", "you gave 3"),
    ],
)
def test_exact_vectors_of_large_integers_name_the_right_entries(response: str, words: str) -> None:
    # Issue 14, defect 8: a right entry (768) is never "written with too few digits".
    answer = VectorAnswer((768, 589824), Tolerance.exact())
    result = grade_answer(answer, response)
    assert result.status == "wrong"
    assert words in result.feedback


def test_coarse_matrix_entries_are_named_by_position() -> None:
    answer = MatrixAnswer(((768, 589824), (12, 64)), Tolerance.exact())
    result = grade_answer(answer, "[[768, 5.9e5], [12, 64]]")
    assert "entry (1, 2) is written with too few digits" in result.feedback


def test_a_mistake_of_large_integers_is_printed_without_grouping_inside_lists() -> None:
    vector = VectorAnswer((768, 589824), Tolerance.exact())
    assert Mistake("x", (768, 1179648), "").format(vector) == "[768, 1179648]"
    matrix = MatrixAnswer(((1, 2), (3, 4)), Tolerance.exact())
    assert Mistake("x", ((1000, 2), (3, 40000)), "").format(matrix) == "[[1000, 2], [3, 40000]]"
    assert Mistake("x", 1179648, "").format(IntegerAnswer(589824)) == "1,179,648"


def test_a_wrong_matrix_names_the_entries_or_the_shape() -> None:
    assert "entry (2, 2) is off" in graded("mat", "[[1.66, 2.66], [2.34, 3.35]]").feedback
    assert "2×2 matrix; you gave a 1×2" in graded("mat", "[[1.66, 2.66]]").feedback
    assert "transpose" in graded("mat", "[[1.66, 2.34], [2.66, 3.34]]").feedback


def test_a_wrong_shape_names_the_dimensions() -> None:
    assert "dimension 1 is off" in graded("shape", "[64, 512]").feedback
    assert "case-sensitive; it uses T" in graded("shape", "[t, 512]").feedback
    assert "dimensions 1 and 2 are off" in graded("shape3", "[T, B, d_model]").feedback
    assert "2 dimensions; you gave 3" in graded("shape", "[T, 512, 1]").feedback


def test_a_wrong_kind_is_invalid_and_says_what_was_read() -> None:
    result = graded("vec", "0.881")
    assert "single number" in result.feedback
    assert result.read_as == "0.881"
    result = graded("vec", "[[1,2],[3,4]]")
    assert "2×2 matrix" in result.feedback
    assert "[3, 4]" in result.read_as


def test_choice_feedback_quotes_wrong_ticks_and_hides_the_untouched_right_ones() -> None:
    result = graded("net", "A, C, B")
    assert "**B** is false: B fails because of" in result.feedback
    assert "score 0.50" in result.feedback
    result = graded("net", "A, D")
    assert "**D** is false." in result.feedback
    assert "1 true option is not ticked" in result.feedback
    assert "C" not in result.feedback.replace("C is", "")  # the missed option is not named
    assert "**A**" not in result.feedback  # right ticks are not commented on
    result = graded("net", "B, D, E")
    assert "2 true options are not ticked" in result.feedback
    assert "**E** is false: E fails." in result.feedback
    assert "Feedback for popular-pair." in graded("net", "B, D").feedback


def test_single_choice_feedback_explains_the_wrong_pick() -> None:
    assert "**A** is not the answer: Not one." in graded("single", "A").feedback


def test_correct_expressions_are_told_the_value_at_the_precision_asked() -> None:
    result = graded("num2", "2*tanh(2)")
    assert result.feedback == "Correct: that is 1.93 to 2 decimal places."
    assert result.read_as == "2*tanh(2) = 1.92806"


def test_read_as_echoes_the_response_as_read() -> None:
    assert graded("num2", "1.93").read_as == "1.93"
    assert graded("count", "589,824").read_as == "589824"
    assert graded("vec", "0.881 0.119").read_as == "[0.881, 0.119]"
    assert graded("mat", "1 2; 3 4").read_as == "[[1, 2], [3, 4]]"
    assert graded("shape3", "B x T x d_{model}").read_as == "[B, T, d_model]"
    assert graded("net", "c a").read_as == "A, C"
    assert graded("num2", "abc").read_as == ""


def test_a_percentage_slip_restates_the_students_number_without_revealing_the_answer() -> None:
    assert "write 0.353 or 35.3%" in graded("rel", "35.3").feedback
    assert "write it as 0.353" in graded("rel-no-percent", "35.3").feedback


def test_a_thousands_point_in_a_count_is_explained() -> None:
    assert "decimal point" in graded("count", "2362.368").feedback


def test_to_json_has_exactly_the_documented_fields() -> None:
    data = graded("num2", "4").to_json()
    assert data == {
        "status": "wrong",
        "score": 0.0,
        "feedback": "Feedback for no-tanh.",
        "mistake": "no-tanh",
        "read_as": "4",
    }
    assert graded("num2", "1.93").to_json()["mistake"] is None


# -- choice_score ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scoring", "ticked", "score"),
    [
        ("net", "AC", 1.0),
        ("net", "A", 0.5),
        ("net", "AB", 0.0),
        ("net", "ACB", 0.5),
        ("net", "ABCDE", 0.0),
        ("net", "", 0.0),
        ("each-answer", "AC", 1.0),
        ("each-answer", "A", 0.8),
        ("each-answer", "ABCDE", 0.4),
        ("each-answer", "BDE", 0.0),
        ("each-answer", "", 0.6),
        ("all-or-nothing", "AC", 1.0),
        ("all-or-nothing", "A", 0.0),
    ],
)
def test_choice_score_follows_the_scheme(scoring: Scoring, ticked: str, score: float) -> None:
    assert choice_score(_choice(scoring), frozenset(ticked)) == pytest.approx(score)


def test_choice_score_of_a_single_choice_is_right_or_wrong_whatever_the_scheme() -> None:
    for scoring in ("net", "each-answer", "all-or-nothing"):
        answer = _choice(scoring, multiple=False)
        assert choice_score(answer, frozenset("B")) == 1.0
        assert choice_score(answer, frozenset("A")) == 0.0


def test_choice_score_refuses_letters_that_are_not_options() -> None:
    with pytest.raises(ValueError, match="not options"):
        choice_score(_choice("net"), frozenset("AZ"))


def test_grade_uses_the_question_and_its_variants_mistakes() -> None:
    from attnquiz.engine.bank import finding as banks

    question = banks.load("week1").get("additive-score").original()
    assert grade(question, "2*tanh(2)").status == "correct"
    assert grade(question, "1.93").status == "correct"
    assert grade(question, "1.9").mistake is not None
    assert grade(question, "4").to_json()["mistake"] == "no-tanh"
    invalid = grade(question, "__import__('os')")
    assert invalid.status == "invalid"
    assert not invalid.counts
    assert "__import__" in invalid.feedback


def test_the_instructions_in_invalid_feedback_show_as_written_once_rendered() -> None:
    """Feedback is Markdown and the instructions plain text: once rendered, `3*d` and `d**2` keep
    their stars and `d_model` its underscore (they were taken for emphasis)."""
    from attnquiz.engine.answers.kinds import ExpressionAnswer

    answer = ExpressionAnswer("4*d^2 + 4*d", ("d", "d_model"))
    for response in ("2df", "4x", "((d"):
        graded = grade_answer(answer, response, ())
        assert graded.status == "invalid"
        assert answer.instructions() in plain.to_terminal(graded.feedback), response
