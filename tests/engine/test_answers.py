"""Tests of the answer kinds: tolerances, matching, formatting and the normalisation of mistakes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnquiz.engine.answers.kinds import (
    ChoiceAnswer,
    IntegerAnswer,
    MatrixAnswer,
    Mistake,
    NumericAnswer,
    Option,
    ShapeAnswer,
    VectorAnswer,
    answer_json,
)
from attnquiz.engine.answers.tolerance import Tolerance, format_number
from attnquiz.engine.answers.values import format_value, normalise_value

TWO_TANH_2 = 2 * math.tanh(2)  # 1.92806..., the notes' Q13 score

# ---------------------------------------------------------------------------------------------
# Tolerance
# ---------------------------------------------------------------------------------------------

ACCEPTS = [
    # (tolerance, target, value, accepted)
    pytest.param(Tolerance.decimals(2), TWO_TANH_2, 1.93, True, id="2dp-1.93-for-1.9281"),
    pytest.param(Tolerance.decimals(2), TWO_TANH_2, 1.9281, True, id="2dp-more-digits"),
    pytest.param(Tolerance.decimals(2), TWO_TANH_2, 1.92, False, id="2dp-1.92-refused"),
    pytest.param(Tolerance.decimals(2), TWO_TANH_2, 1.94, False, id="2dp-1.94-refused"),
    pytest.param(Tolerance.decimals(2), TWO_TANH_2, 1.9, False, id="2dp-1.9-too-coarse"),
    pytest.param(Tolerance.decimals(2), -TWO_TANH_2, -1.93, True, id="2dp-negative"),
    pytest.param(Tolerance.decimals(2), -TWO_TANH_2, 1.93, False, id="2dp-sign-error"),
    pytest.param(Tolerance.decimals(3), 0.0099998, 0.010, True, id="3dp-pe-0.010"),
    pytest.param(Tolerance.decimals(3), 0.0099998, 0.0, False, id="3dp-pe-0-refused"),
    pytest.param(Tolerance.decimals(0), 2.5, 3.0, True, id="0dp-tie-up"),
    pytest.param(Tolerance.decimals(0), 2.5, 2.0, True, id="0dp-tie-down"),
    pytest.param(Tolerance.decimals(0), 2.5, 3.6, False, id="0dp-far"),
    pytest.param(Tolerance.sigfigs(3), 589_824, 590_000, True, id="3sf-590000"),
    pytest.param(Tolerance.sigfigs(3), 589_824, 589_000, False, id="3sf-589000-refused"),
    pytest.param(Tolerance.sigfigs(2), 0.0012345, 0.0012, True, id="2sf-small"),
    pytest.param(Tolerance.sigfigs(2), 0.0012345, 0.0013, False, id="2sf-small-refused"),
    pytest.param(Tolerance.sigfigs(3), 9.9996, 10.0, True, id="3sf-carry-into-10"),
    pytest.param(Tolerance.sigfigs(3), -0.881, -0.881, True, id="3sf-negative"),
    pytest.param(Tolerance.sigfigs(2), 0.0, 0.004, True, id="2sf-zero-target"),
    pytest.param(Tolerance.sigfigs(2), 0.0, 0.006, False, id="2sf-zero-target-refused"),
    pytest.param(Tolerance.relative(), 1000.0, 1000.9, True, id="rel-inside"),
    pytest.param(Tolerance.relative(), 1000.0, 1001.1, False, id="rel-outside"),
    pytest.param(Tolerance.relative(), -1000.0, -999.1, True, id="rel-negative"),
    pytest.param(Tolerance.relative(), 0.0, 1e-10, True, id="rel-atol-near-zero"),
    pytest.param(Tolerance.relative(), 0.0, 1e-8, False, id="rel-atol-refused"),
    pytest.param(Tolerance.relative(0.05, 0.01), 0.1, 0.108, True, id="rel-custom-atol"),
    pytest.param(Tolerance.exact(), 589_824, 589_824.0, True, id="exact-float-equal"),
    pytest.param(Tolerance.exact(), 589_824, 589_825, False, id="exact-off-by-one"),
    pytest.param(Tolerance.exact(), 3, 3.000000001, False, id="exact-tiny-difference"),
    pytest.param(Tolerance.decimals(2), 1.0, math.nan, False, id="nan-value"),
    pytest.param(Tolerance.relative(), math.inf, math.inf, False, id="inf-target"),
    pytest.param(Tolerance.exact(), 1.0, math.inf, False, id="exact-inf"),
]


@pytest.mark.parametrize(("tolerance", "target", "value", "accepted"), ACCEPTS)
def test_accepts(tolerance: Tolerance, target: float, value: float, accepted: bool) -> None:
    assert tolerance.accepts(target, value) is accepted


@pytest.mark.parametrize(
    ("tolerance", "target", "width"),
    [
        pytest.param(Tolerance.decimals(2), 1.9281, 0.0051, id="2dp"),
        pytest.param(Tolerance.decimals(0), 12.0, 0.51, id="0dp"),
        pytest.param(Tolerance.sigfigs(3), 589_824, 510.0, id="3sf-large"),
        pytest.param(Tolerance.sigfigs(3), 0.881, 0.00051, id="3sf-below-one"),
        pytest.param(Tolerance.sigfigs(1), -40.0, 5.1, id="1sf-negative"),
        pytest.param(Tolerance.sigfigs(2), 0.0, 0.0051, id="2sf-zero"),
        pytest.param(Tolerance.relative(1e-3), 2000.0, 2.0, id="rel"),
        pytest.param(Tolerance.relative(1e-3, 1e-6), 0.0, 1e-6, id="rel-atol"),
        pytest.param(Tolerance.exact(), 7.0, 0.0, id="exact"),
    ],
)
def test_half_width(tolerance: Tolerance, target: float, width: float) -> None:
    assert tolerance.half_width(target) == pytest.approx(width, rel=1e-12)


@pytest.mark.parametrize("places", [0, 1, 2, 3, 4])
def test_correctly_rounded_answers_are_always_accepted(places: int) -> None:
    # Whatever the target, writing it rounded to the places asked for is right, even at the worst
    # case just under a rounding boundary.
    rng = np.random.default_rng(places)
    for target in [*rng.uniform(-5, 5, 200), 0.0049999999, 1.9949999999, 2.5]:
        for tolerance in (Tolerance.decimals(places), Tolerance.sigfigs(places + 1)):
            assert tolerance.accepts(float(target), float(tolerance.format(float(target)))), (
                tolerance,
                target,
            )


@pytest.mark.parametrize(
    ("tolerance", "value", "text"),
    [
        pytest.param(Tolerance.decimals(2), TWO_TANH_2, "1.93", id="2dp"),
        pytest.param(Tolerance.decimals(2), 1.0, "1.00", id="2dp-trailing-zeros"),
        pytest.param(Tolerance.decimals(3), -0.0004, "0.000", id="3dp-no-negative-zero"),
        pytest.param(Tolerance.decimals(3), -0.416, "-0.416", id="3dp-negative"),
        pytest.param(Tolerance.decimals(0), 6399.7, "6400", id="0dp"),
        pytest.param(Tolerance.sigfigs(3), 0.88079, "0.881", id="3sf"),
        pytest.param(Tolerance.sigfigs(2), 0.0012345, "0.0012", id="2sf-small"),
        pytest.param(Tolerance.sigfigs(3), 1.23e-7, "1.23e-07", id="3sf-tiny-scientific"),
        pytest.param(Tolerance.sigfigs(3), 9.9996, "10.0", id="3sf-carry-keeps-3-figures"),
        pytest.param(Tolerance.sigfigs(2), 0.099996, "0.10", id="2sf-carry-keeps-2-figures"),
        pytest.param(Tolerance.sigfigs(3), -9.9996, "-10.0", id="3sf-negative-carry"),
        pytest.param(Tolerance.sigfigs(3), 0.0, "0", id="3sf-zero"),
        pytest.param(Tolerance.exact(), 3.0, "3", id="exact-integer"),
        pytest.param(Tolerance.exact(), 0.5, "0.5", id="exact-fraction"),
        pytest.param(Tolerance.relative(), 1 / 3, "0.3333", id="rel-4sf"),
        pytest.param(Tolerance.relative(1e-6), 2 / 3, "0.6666667", id="rel-7sf"),
    ],
)
def test_format(tolerance: Tolerance, value: float, text: str) -> None:
    assert tolerance.format(value) == text


@pytest.mark.parametrize(
    ("tolerance", "words", "json"),
    [
        pytest.param(Tolerance.decimals(2), "to 2 decimal places", {"decimals": 2}, id="decimals"),
        pytest.param(Tolerance.decimals(1), "to 1 decimal place", {"decimals": 1}, id="decimal-singular"),
        pytest.param(Tolerance.decimals(0), "to the nearest whole number", {"decimals": 0}, id="decimals-0"),
        pytest.param(Tolerance.sigfigs(3), "to 3 significant figures", {"sigfigs": 3}, id="sigfigs"),
        pytest.param(Tolerance.sigfigs(1), "to 1 significant figure", {"sigfigs": 1}, id="sigfig-singular"),
        pytest.param(Tolerance.exact(), "exactly", {"exact": True}, id="exact"),
        pytest.param(
            Tolerance.relative(1e-3, 1e-9),
            "to within 0.1 % of the exact value",
            {"rtol": 1e-3, "atol": 1e-9},
            id="relative",
        ),
    ],
)
def test_describe_and_json(tolerance: Tolerance, words: str, json: dict[str, object]) -> None:
    assert tolerance.describe() == words
    assert tolerance.to_json() == json


def test_tolerances_are_values() -> None:
    assert Tolerance.decimals(2) == Tolerance.decimals(2)
    assert Tolerance.decimals(2) != Tolerance.sigfigs(2)
    assert len({Tolerance.decimals(2), Tolerance.decimals(2), Tolerance.exact()}) == 2


@pytest.mark.parametrize(
    ("value", "tolerance", "text"),
    [
        pytest.param(589_824.0, Tolerance.sigfigs(3), "589824", id="integer-plainly"),
        pytest.param(0.8807970779778823, Tolerance.decimals(3), "0.881", id="real-at-precision"),
        pytest.param(1 / 3, Tolerance.relative(), "0.3333", id="default"),
        pytest.param(-2.0, Tolerance.decimals(2), "-2", id="negative-integer"),
    ],
)
def test_format_number(value: float, tolerance: Tolerance, text: str) -> None:
    assert format_number(value, tolerance) == text


# ---------------------------------------------------------------------------------------------
# Answer kinds
# ---------------------------------------------------------------------------------------------

Q13 = NumericAnswer(TWO_TANH_2, Tolerance.decimals(2))
W_O = IntegerAnswer(589_824)
BAHDANAU = VectorAnswer((0.8807970779778823, 0.11920292202211755), Tolerance.decimals(3))
TWO_TOKEN = MatrixAnswer(((1.6605, 2.6605), (2.3395, 3.3395)), Tolerance.decimals(2))
CONCAT = ShapeAnswer(("T", 512))
ENCODER_OUT = ShapeAnswer((50, 512))
MULTI = ChoiceAnswer(
    (
        Option("path length O(1)", True),
        Option("RNN path O(1)", False, "an RNN needs O(T) steps"),
        Option("parallel training", True),
        Option("computes Q, K, V", True),
    ),
)
SINGLE = ChoiceAnswer((Option("plain RNN", True), Option("Transformer", False)), multiple=False)

MATCHES = [
    pytest.param(Q13, 1.93, True, id="numeric-right"),
    pytest.param(Q13, 1.92, False, id="numeric-wrong"),
    pytest.param(Q13, 2, False, id="numeric-int-wrong"),
    pytest.param(Q13, (1.93,), False, id="numeric-given-a-vector"),
    pytest.param(Q13, frozenset({"A"}), False, id="numeric-given-letters"),
    pytest.param(W_O, 589_824, True, id="integer-right"),
    pytest.param(W_O, 589_824.0, True, id="integer-as-float"),
    pytest.param(W_O, 590_592, False, id="integer-with-bias"),
    pytest.param(W_O, (589_824,), False, id="integer-given-a-vector"),
    pytest.param(BAHDANAU, (0.881, 0.119), True, id="vector-right"),
    pytest.param(BAHDANAU, (0.8805, 0.1195), True, id="vector-within-tolerance"),
    pytest.param(BAHDANAU, (0.881, 0.121), False, id="vector-one-entry-off"),
    pytest.param(BAHDANAU, (0.119, 0.881), False, id="vector-reversed"),
    pytest.param(BAHDANAU, (0.881, 0.119, 0.0), False, id="vector-too-long"),
    pytest.param(BAHDANAU, (0.881,), False, id="vector-too-short"),
    pytest.param(BAHDANAU, 0.881, False, id="vector-given-a-number"),
    pytest.param(BAHDANAU, ((0.881, 0.119),), False, id="vector-given-a-matrix"),
    pytest.param(TWO_TOKEN, ((1.66, 2.66), (2.34, 3.34)), True, id="matrix-right"),
    pytest.param(TWO_TOKEN, ((1.54, 2.54), (2.46, 3.46)), False, id="matrix-no-scaling"),
    pytest.param(TWO_TOKEN, ((1.66, 2.66),), False, id="matrix-missing-row"),
    pytest.param(TWO_TOKEN, ((1.66, 2.66), (2.34,)), False, id="matrix-short-row"),
    pytest.param(TWO_TOKEN, (1.66, 2.66, 2.34, 3.34), False, id="matrix-flattened"),
    pytest.param(CONCAT, ("T", 512), True, id="shape-symbolic-right"),
    pytest.param(CONCAT, ("T", 4096), False, id="shape-heads-full-width"),
    pytest.param(CONCAT, (512, "T"), False, id="shape-order"),
    pytest.param(ENCODER_OUT, (50, 512), True, id="shape-right"),
    pytest.param(ENCODER_OUT, (50, 2048), False, id="shape-d-ff"),
    pytest.param(ENCODER_OUT, (50, 512, 1), False, id="shape-extra-dim"),
    pytest.param(MULTI, frozenset({"A", "C", "D"}), True, id="multi-right"),
    pytest.param(MULTI, frozenset({"A", "C"}), False, id="multi-subset"),
    pytest.param(MULTI, frozenset({"A", "B", "C", "D"}), False, id="multi-superset"),
    pytest.param(MULTI, ("A", "C", "D"), False, id="multi-not-a-set"),
    pytest.param(SINGLE, frozenset({"A"}), True, id="single-right"),
    pytest.param(SINGLE, frozenset({"B"}), False, id="single-wrong"),
]


@pytest.mark.parametrize(("answer", "value", "matched"), MATCHES)
def test_matches(answer: object, value: object, matched: bool) -> None:
    assert answer.matches(value) is matched  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        pytest.param(Q13, "1.93", id="numeric"),
        pytest.param(W_O, "589,824", id="integer-grouped"),
        pytest.param(BAHDANAU, "[0.881, 0.119]", id="vector"),
        pytest.param(TWO_TOKEN, "[[1.66, 2.66], [2.34, 3.34]]", id="matrix"),
        pytest.param(CONCAT, "[T, 512]", id="shape-symbolic"),
        pytest.param(ENCODER_OUT, "[50, 512]", id="shape"),
        pytest.param(MULTI, "A, C, D", id="multi"),
        pytest.param(SINGLE, "A", id="single"),
    ],
)
def test_format_of_kinds(answer: object, text: str) -> None:
    assert answer.format() == text  # type: ignore[attr-defined]


def test_no_decimals_asks_for_a_whole_number() -> None:
    """`decimals: 0` is said as people say it, never "to 0 decimal places"."""
    answer = NumericAnswer(6399.7, Tolerance.decimals(0))
    assert answer.instructions() == "Give a whole number, rounded to the nearest one."
    assert answer.format() == "6400"
    assert answer.matches(6400.0)
    vector = VectorAnswer((1.4, 2.6), Tolerance.decimals(0))
    assert "each to the nearest whole number" in vector.instructions()
    assert "0 decimal" not in vector.instructions()


def test_instructions_state_the_precision_and_the_form() -> None:
    assert Q13.instructions() == "Give a number to 2 decimal places."
    assert "exactly" in W_O.instructions()
    assert "2 numbers" in BAHDANAU.instructions()
    assert "to 3 decimal places" in BAHDANAU.instructions()
    assert "2×2" in TWO_TOKEN.instructions()
    assert "to 2 decimal places" in TWO_TOKEN.instructions()
    assert "2 dimensions" in CONCAT.instructions()
    assert "T" in CONCAT.instructions()
    assert "T" not in ENCODER_OUT.instructions().replace("Give the", "")
    assert "all that apply" in MULTI.instructions()
    assert "one" in SINGLE.instructions().lower()
    assert "all that apply" not in SINGLE.instructions()


def test_kinds_hold_plain_python_values() -> None:
    numeric = NumericAnswer(np.float64(0.25))
    assert type(numeric.value) is float
    integer = IntegerAnswer(np.int64(1_050_624))  # type: ignore[arg-type]
    assert type(integer.value) is int
    assert type(IntegerAnswer(6400.0).value) is int  # type: ignore[arg-type]
    vector = VectorAnswer(np.array([1, 2]))  # type: ignore[arg-type]
    assert vector.values == (1.0, 2.0)
    assert all(type(v) is float for v in vector.values)
    matrix = MatrixAnswer(np.eye(2))  # type: ignore[arg-type]
    assert matrix.rows == ((1.0, 0.0), (0.0, 1.0))
    assert matrix.shape == (2, 2)
    shape = ShapeAnswer((np.int64(2), "T", 16))  # type: ignore[arg-type]
    assert shape.dims == (2, "T", 16)
    assert type(shape.dims[0]) is int
    assert shape.symbolic
    assert not ENCODER_OUT.symbolic


@pytest.mark.parametrize(
    ("build", "message"),
    [
        pytest.param(lambda: IntegerAnswer(2.5), "integer answer", id="integer-fraction"),  # type: ignore[arg-type]
        pytest.param(lambda: MatrixAnswer(()), "rows of one length", id="matrix-empty"),
        pytest.param(lambda: MatrixAnswer(((1.0, 2.0), (3.0,))), "rows of one length", id="matrix-ragged"),
        pytest.param(lambda: ChoiceAnswer((Option("a", True),)), "2 to 26 options", id="choice-one-option"),
        pytest.param(
            lambda: ChoiceAnswer(tuple(Option(str(i), i == 0) for i in range(27))),
            "2 to 26 options",
            id="choice-27-options",
        ),
        pytest.param(
            lambda: ChoiceAnswer((Option("a", False), Option("b", False))),
            "at least one correct",
            id="choice-none-correct",
        ),
        pytest.param(
            lambda: ChoiceAnswer((Option("a", True), Option("b", True)), multiple=False),
            "exactly one correct option, not 2",
            id="single-two-correct",
        ),
        pytest.param(
            lambda: ChoiceAnswer((Option("a", False), Option("b", False)), multiple=False),
            "at least one correct",
            id="single-none-correct",
        ),
        pytest.param(
            lambda: ChoiceAnswer((Option("a", True), Option("b", False)), scoring="majority"),  # type: ignore[arg-type]
            "unknown scoring",
            id="choice-unknown-scoring",
        ),
    ],
)
def test_invalid_answers_are_refused(build: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()  # type: ignore[operator]


@pytest.mark.parametrize("scoring", ["net", "all-or-nothing", "each-answer"])
def test_choice_accepts_every_scoring_scheme(scoring: str) -> None:
    answer = ChoiceAnswer((Option("a", True), Option("b", False)), scoring=scoring)  # type: ignore[arg-type]
    assert answer.scoring == scoring


def test_choice_letters() -> None:
    assert MULTI.letters == "ABCD"
    assert MULTI.correct_letters == frozenset({"A", "C", "D"})
    assert SINGLE.correct_letters == frozenset({"A"})
    many = ChoiceAnswer(tuple(Option(str(i), i == 25) for i in range(26)), multiple=False)
    assert many.letters[-1] == "Z"
    assert many.correct_letters == frozenset({"Z"})
    all_true = ChoiceAnswer((Option("a", True), Option("b", True)))
    assert all_true.correct_letters == frozenset({"A", "B"})


def test_answer_json() -> None:
    assert answer_json(Q13) == {"kind": "numeric", "value": TWO_TANH_2, "tolerance": {"decimals": 2}}
    assert answer_json(W_O) == {"kind": "integer", "value": 589_824, "tolerance": {"exact": True}}
    assert answer_json(CONCAT)["value"] == ["T", 512]
    assert answer_json(TWO_TOKEN)["value"] == [[1.6605, 2.6605], [2.3395, 3.3395]]
    choice = answer_json(MULTI)
    assert choice["value"] == ["A", "C", "D"]
    assert choice["multiple"] is True
    assert choice["scoring"] == "net"
    assert [o["letter"] for o in choice["options"]] == ["A", "B", "C", "D"]
    assert choice["options"][1] == {
        "letter": "B",
        "text": "RNN path O(1)",
        "correct": False,
        "why": "an RNN needs O(T) steps",
    }


# ---------------------------------------------------------------------------------------------
# Mistakes
# ---------------------------------------------------------------------------------------------

NORMALISED = [
    pytest.param(np.float64(0.731), 0.731, float, id="numpy-float"),
    pytest.param(np.float32(0.5), 0.5, float, id="numpy-float32"),
    pytest.param(np.int64(3_145_728), 3_145_728, int, id="numpy-int"),
    pytest.param(np.float64(2304.0), 2304, int, id="integral-float-to-int"),
    pytest.param(4.0, 4, int, id="python-integral-float"),
    pytest.param(2**60 + 0.0, 2.0**60, float, id="huge-float-stays-float"),
    pytest.param(np.array([0.731, 0.269]), (0.731, 0.269), tuple, id="numpy-vector"),
    pytest.param(np.array([1.0, 0.0]), (1, 0), tuple, id="numpy-integral-vector"),
    pytest.param(np.array([[0.67, 0.33], [0.33, 0.67]]), ((0.67, 0.33), (0.33, 0.67)), tuple, id="matrix"),
    pytest.param([[1, 2], [3, 4]], ((1, 2), (3, 4)), tuple, id="nested-lists"),
    pytest.param(("T", np.int64(4096)), ("T", 4096), tuple, id="symbolic-shape"),
    pytest.param({"A", "C"}, frozenset({"A", "C"}), frozenset, id="set-of-letters"),
    pytest.param(frozenset({"B"}), frozenset({"B"}), frozenset, id="frozenset"),
]


@pytest.mark.parametrize(("raw", "plain", "kind"), NORMALISED)
def test_mistake_values_are_normalised(raw: object, plain: object, kind: type) -> None:
    mistake = Mistake("tag", raw, "feedback")  # type: ignore[arg-type]
    assert mistake.value == plain
    assert type(mistake.value) is kind
    assert normalise_value(raw) == plain


def test_normalised_entries_are_plain_python() -> None:
    value = normalise_value(np.array([[0.5, 1.0], [2.0, 0.25]]))
    assert isinstance(value, tuple)
    for row in value:
        assert isinstance(row, tuple)
        assert all(type(v) in (int, float) for v in row)


def test_a_string_is_not_a_mistake_value() -> None:
    with pytest.raises(TypeError, match="mistake value"):
        Mistake("tag", "1.93", "feedback")  # type: ignore[arg-type]


def test_mistakes_compare_and_hash_as_values() -> None:
    a = Mistake("no-sqrt-dk", np.array([0.731, 0.269]), "feedback")  # type: ignore[arg-type]
    b = Mistake("no-sqrt-dk", [0.731, 0.269], "feedback")  # type: ignore[arg-type]
    assert a == b
    assert hash(a) == hash(b)


@pytest.mark.parametrize(
    ("mistake", "answer", "text"),
    [
        pytest.param(Mistake("no-tanh", 4.0, "f"), Q13, "4.00", id="numeric"),
        pytest.param(Mistake("counted-bias", 590_592, "f"), W_O, "590,592", id="integer"),
        pytest.param(Mistake("no-sqrt-dk", (0.7311, 0.2689), "f"), BAHDANAU, "[0.731, 0.269]", id="vector"),
        pytest.param(
            Mistake("uniform", ((2, 3), (2, 3)), "f"), TWO_TOKEN, "[[2.00, 3.00], [2.00, 3.00]]", id="matrix"
        ),
        pytest.param(Mistake("heads-full-width", ("T", 4096), "f"), CONCAT, "[T, 4096]", id="shape"),
        pytest.param(Mistake("picked-b", frozenset({"C", "B"}), "f"), MULTI, "B, C", id="letters"),
    ],
)
def test_mistake_format_follows_the_answer(mistake: Mistake, answer: object, text: str) -> None:
    assert mistake.format(answer) == text  # type: ignore[arg-type]


def test_mistake_json() -> None:
    assert Mistake("t", np.array([[1.5, 2.0]]), "why").to_json() == {  # type: ignore[arg-type]
        "tag": "t",
        "value": [[1.5, 2]],
        "feedback": "why",
    }
    assert Mistake("t", {"C", "A"}, "why").to_json()["value"] == ["A", "C"]  # type: ignore[arg-type]
    assert Mistake("t", np.float64(0.5), "why", score=0.5).score == 0.5


@pytest.mark.parametrize(
    ("value", "tolerance", "text"),
    [
        pytest.param(0.12345, Tolerance.decimals(2), "0.12", id="number"),
        pytest.param(1_048_576, Tolerance.exact(), "1,048,576", id="count"),
        pytest.param((0.5, 1), Tolerance.decimals(1), "[0.5, 1.0]", id="vector"),
        pytest.param(("T", 64), Tolerance.exact(), "[T, 64]", id="shape"),
        pytest.param(frozenset({"D", "A"}), Tolerance.exact(), "A, D", id="letters"),
    ],
)
def test_format_value(value: object, tolerance: Tolerance, text: str) -> None:
    assert format_value(value, tolerance) == text  # type: ignore[arg-type]
