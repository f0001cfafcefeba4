"""The attention items of week 1: the notes' numbers, the mistakes they name, every variant recomputed."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from attnquiz.engine import numerics
from attnquiz.engine.answers.kinds import MatrixAnswer, Mistake, NumericAnswer, ShapeAnswer, VectorAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loaded import BankItem, NoOriginalError
from attnquiz.engine.generators import additive, attention, dot_product, scaling
from attnquiz.engine.grading import grade as grading
from attnquiz.engine.variant import Question
from tests.engine.generators.grading_checks import assert_grades_as_itself

SEEDS = range(100)
BANK = banks.load("week1")

# The notes' answers at the precision they print, and the wrong values the catalogue of the notes
# derives for the misconceptions they warn about (reference/seed_items.md).
NOTES: list[tuple[str, str, dict[str, str]]] = [
    ("additive-score", "1.93", {"no-tanh": "4.00"}),
    ("bahdanau-two-states", "[0.881, 0.119]", {"weights-over-decoder-states": "[1.000, 1.000]"}),
    ("additive-weights", "[0.384, 0.327, 0.176, 0.113]", {}),
    ("weighted-average", "14.0", {"unweighted-mean": "20.0"}),
    ("weighted-sum-first-element", "1.00", {"wrong-element": "0.90"}),
    ("softmax-refresher", "[0.665, 0.245, 0.090]", {}),
    ("self-attention-identity", "[0.670, 0.330]", {"no-sqrt-dk": "[0.731, 0.269]"}),
    ("values-not-keys", "[0.50, 1.00]", {"keys-not-values": "[0.00, 0.00]"}),
    ("attention-shapes", "[B, T, T]", {"kt-q-not-q-kt": "[B, d_k, d_k]"}),
    (
        "sdpa-two-tokens",
        "[[1.66, 2.66], [2.34, 3.34]]",
        {
            "no-sqrt-dk": "[[1.54, 2.54], [2.46, 3.46]]",
            "keys-not-values": "[[0.67, 0.33], [0.33, 0.67]]",
            "uniform-rows": "[[2.00, 3.00], [2.00, 3.00]]",
            "divide-by-dk": "[[1.76, 2.76], [2.24, 3.24]]",
        },
    ),
    (
        "sdpa-three-tokens",
        "[0.80, 0.60]",
        {"softmax-over-queries": "[0.65, 0.45]", "no-sqrt-dk": "[0.84, 0.58]"},
    ),
    ("sdpa-three-tokens-row2", "[0.60, 0.80]", {}),
    ("scaling-saturation", "[0.731, 0.269]", {"uniform-rows": "[0.500, 0.500]"}),
    ("dot-product-variance", "8.0", {"variance-not-std": "64.0"}),
]

# Misconceptions the catalogue marks as non-discriminating for the notes' own inputs: they give the
# right answer there, so the original must not list them.
NOT_DISCRIMINATING = [
    ("sdpa-two-tokens", "softmax-over-queries"),
    ("self-attention-identity", "softmax-over-queries"),
    ("values-not-keys", "no-sqrt-dk"),
]

ATTENTION_IDS = [
    "additive-score",
    "additive-softmax-weight",
    "additive-context",
    "bahdanau-two-states",
    "additive-weights",
    "weighted-average",
    "weighted-sum-first-element",
    "softmax-refresher",
    "self-attention-identity",
    "values-not-keys",
    "attention-shapes",
    "sdpa-two-tokens",
    "sdpa-three-tokens",
    "sdpa-three-tokens-row2",
    "scaling-saturation",
    "dot-product-variance",
]


def mistakes_by_tag(question: Question) -> dict[str, Mistake]:
    return {m.tag: m for m in question.variant.mistakes}


def softmax(scores: Sequence[float]) -> list[float]:
    """Written out with math.exp, independently of attnquiz.engine.numerics."""
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    return [e / sum(exps) for e in exps]


def attend(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """softmax(QKᵀ/√d_k)V row by row, with the softmax above."""
    rows = []
    for query in q:
        weights = softmax([float(query @ key) / math.sqrt(q.shape[1]) for key in k])
        rows.append(sum(w * value for w, value in zip(weights, v, strict=True)))
    return np.array(rows)


def close(answer: Any, expected: Any) -> bool:
    return bool(np.allclose(np.asarray(answer, dtype=float), np.asarray(expected, dtype=float), atol=1e-12))


# ---------------------------------------------------------------------------------------------
# The notes' own instances
# ---------------------------------------------------------------------------------------------


def test_every_attention_item_is_in_the_bank_in_its_section() -> None:
    ids = [entry.id for entry in BANK.items]
    assert all(item in ids for item in ATTENTION_IDS)
    topics = {BANK.get(item).item.topic for item in ATTENTION_IDS}
    assert topics == {"additive-attention", "self-attention", "scaled-dot-product"}


@pytest.mark.parametrize(("item", "answer", "wrong"), NOTES, ids=[row[0] for row in NOTES])
def test_original_reproduces_the_notes(item: str, answer: str, wrong: Mapping[str, str]) -> None:
    question = BANK.get(item).original()
    assert question.answer.format() == answer
    named = mistakes_by_tag(question)
    for tag, text in wrong.items():
        assert tag in named, f"{item}: the original does not list {tag}"
        assert named[tag].format(question.answer) == text


@pytest.mark.parametrize(("item", "tag"), NOT_DISCRIMINATING)
def test_original_drops_mistakes_that_give_the_right_answer(item: str, tag: str) -> None:
    assert tag not in mistakes_by_tag(BANK.get(item).original())


def test_unscaled_saturation_matches_the_notes_to_four_places() -> None:
    question = BANK.get("scaling-saturation").original()
    unscaled = mistakes_by_tag(question)["no-sqrt-dk"].value
    assert isinstance(unscaled, tuple)
    assert [round(float(v), 4) for v in unscaled] == [0.9997, 0.0003]  # type: ignore[arg-type]


def test_self_attention_identity_second_token_is_the_mirror_image() -> None:
    item = BANK.get("self-attention-identity")
    variant = item.spec.fn(np.random.default_rng(0), x=[[1, 0], [0, 1]], token=2)
    assert variant.answer.format() == "[0.330, 0.670]"


def test_the_issue_example_response_is_recognised_as_no_sqrt_dk_on_the_original() -> None:
    question = BANK.get("sdpa-two-tokens").original()
    response = ((1.54, 2.54), (2.46, 3.46))
    assert not question.answer.matches(response)
    tolerance = question.answer.tolerance
    matched = [m.tag for m in question.variant.mistakes if MatrixAnswer(m.value, tolerance).matches(response)]  # type: ignore[arg-type]
    assert matched[:1] == ["no-sqrt-dk"]


def test_the_issue_example_grades_as_no_sqrt_dk() -> None:
    grade = grading.grade(BANK.get("sdpa-two-tokens").original(), "[[1.54, 2.54], [2.46, 3.46]]")
    assert grade.status == "wrong"
    assert grade.mistake is not None
    assert grade.mistake.tag == "no-sqrt-dk"


@pytest.mark.parametrize("item", ATTENTION_IDS)
def test_the_key_grades_correct_and_each_mistake_is_named_by_the_grader(item: str) -> None:
    assert_grades_as_itself(BANK.get(item), SEEDS)


@pytest.mark.parametrize(
    ("item", "derived"), [("additive-softmax-weight", "0.35"), ("additive-context", "1.36")]
)
def test_papers_not_in_the_notes_have_no_original_and_say_why(item: str, derived: str) -> None:
    entry = BANK.get(item)
    assert not entry.has_original
    text = " ".join(note.text for note in entry.item.note)
    assert "not in the notes" in text
    assert derived in text
    with pytest.raises(NoOriginalError, match="no original"):
        entry.original()


# ---------------------------------------------------------------------------------------------
# Every variant, recomputed from its own inputs
# ---------------------------------------------------------------------------------------------


def check_additive_softmax_weight(q: Question) -> None:
    scores, index = q.variant.inputs["scores"], q.variant.inputs["index"]
    assert len(set(scores)) == len(scores)
    assert isinstance(q.answer, NumericAnswer)
    assert close(q.answer.value, softmax(scores)[index - 1])


def check_additive_context(q: Question) -> None:
    weights, h, j = q.variant.inputs["weights"], q.variant.inputs["h"], q.variant.inputs["component"]
    assert math.isclose(sum(weights), 1.0)
    assert min(weights) >= 0.05 - 1e-12
    assert all(math.isclose(round(w, 2), w) for w in weights)
    assert isinstance(q.answer, NumericAnswer)
    assert close(q.answer.value, sum(w * row[j - 1] for w, row in zip(weights, h, strict=True)))


def check_context_vector(q: Question) -> None:
    scores, h = q.variant.inputs["scores"], np.array(q.variant.inputs["h"])
    assert len(set(scores)) > 1
    assert isinstance(q.answer, VectorAnswer)
    assert close(q.answer.values, np.array(softmax(scores)) @ h)


def check_softmax(q: Question) -> None:
    scores = q.variant.inputs["scores"]
    assert isinstance(q.answer, VectorAnswer)
    assert close(q.answer.values, softmax(scores))
    assert math.isclose(sum(q.answer.values), 1.0)


def check_weighted_average(q: Question) -> None:
    values, weights = q.variant.inputs["values"], q.variant.inputs["weights"]
    assert math.isclose(sum(weights), 1.0)
    assert all(math.isclose(round(w, 1), w) for w in weights)
    assert isinstance(q.answer, NumericAnswer)
    assert close(q.answer.value, sum(w * v for w, v in zip(weights, values, strict=True)))


def check_weighted_element(q: Question) -> None:
    weights, values, j = q.variant.inputs["weights"], q.variant.inputs["values"], q.variant.inputs["element"]
    assert math.isclose(sum(weights), 1.0)
    assert min(weights) >= 0.1 - 1e-12
    assert isinstance(q.answer, NumericAnswer)
    assert close(q.answer.value, sum(w * row[j - 1] for w, row in zip(weights, values, strict=True)))


def check_self_attention_weights(q: Question) -> None:
    x, i = np.array(q.variant.inputs["x"]), q.variant.inputs["token"]
    assert isinstance(q.answer, VectorAnswer)
    assert close(q.answer.values, softmax([float(x[i - 1] @ row) / math.sqrt(x.shape[1]) for row in x]))


def check_values_not_keys(q: Question) -> None:
    query, keys, vals = (np.array(q.variant.inputs[name], dtype=float) for name in ("q", "k", "v"))
    assert isinstance(q.answer, VectorAnswer)
    assert close(q.answer.values, attend(query[None, :], keys, vals)[0])
    key_sum = np.array(softmax(keys @ query / math.sqrt(len(query)))) @ keys
    assert "keys-not-values" in mistakes_by_tag(q) or q.answer.matches(tuple(key_sum.tolist()))


def check_sdpa_outputs(q: Question) -> None:
    qm, km, vm = (np.array(q.variant.inputs[name], dtype=float) for name in ("q", "k", "v"))
    assert isinstance(q.answer, MatrixAnswer)
    assert close(q.answer.rows, attend(qm, km, vm))


def check_sdpa_token(q: Question) -> None:
    x, i = np.array(q.variant.inputs["x"], dtype=float), q.variant.inputs["token"]
    assert isinstance(q.answer, VectorAnswer)
    assert close(q.answer.values, attend(x, x, x)[i - 1])


def check_scaling(q: Question) -> None:
    d_k, raw = q.variant.inputs["d_k"], q.variant.inputs["scores"]
    root = math.sqrt(d_k)
    assert d_k in scaling.SQUARE_HEAD_WIDTHS
    assert root.is_integer()
    assert all(float(s).is_integer() for s in raw), "raw scores are whole numbers"
    assert isinstance(q.answer, VectorAnswer)
    assert close(q.answer.values, softmax([s / root for s in raw]))


def check_spread(q: Question) -> None:
    d_k, ask = q.variant.inputs["d_k"], q.variant.inputs["ask"]
    expected = {"std": math.sqrt(d_k), "variance": d_k, "scaled-variance": 1.0}[ask]
    assert isinstance(q.answer, NumericAnswer)
    assert close(q.answer.value, expected)


def check_shapes(q: Question) -> None:
    assert isinstance(q.answer, ShapeAnswer)
    b, t, d_model = q.variant.inputs["shape_x"]
    dims = q.answer.dims
    assert dims[:2] == (b, t)
    if q.variant.inputs["tensor"] == "A":
        assert dims[2] == t
    elif q.variant.inputs["symbolic"]:
        assert dims[2] in {"d_k", "d_v"}
    else:
        assert isinstance(d_model, int)
        assert isinstance(dims[2], int)
        assert d_model % dims[2] == 0


CHECKS: dict[str, Callable[[Question], None]] = {
    "additive-softmax-weight": check_additive_softmax_weight,
    "additive-context": check_additive_context,
    "bahdanau-two-states": check_context_vector,
    "additive-weights": check_softmax,
    "softmax-refresher": check_softmax,
    "weighted-average": check_weighted_average,
    "weighted-sum-first-element": check_weighted_element,
    "self-attention-identity": check_self_attention_weights,
    "values-not-keys": check_values_not_keys,
    "sdpa-two-tokens": check_sdpa_outputs,
    "sdpa-three-tokens": check_sdpa_token,
    "sdpa-three-tokens-row2": check_sdpa_token,
    "scaling-saturation": check_scaling,
    "dot-product-variance": check_spread,
    "attention-shapes": check_shapes,
}


@pytest.mark.parametrize("item", sorted(CHECKS))
def test_every_variant_answer_recomputes_from_its_inputs(item: str) -> None:
    entry: BankItem = BANK.get(item)
    for seed in SEEDS:
        CHECKS[item](entry.question(seed))


@pytest.mark.parametrize("item", ATTENTION_IDS)
def test_prompts_leave_the_precision_to_the_instructions_and_have_a_hint(item: str) -> None:
    entry = BANK.get(item)
    for seed in range(30):
        variant = entry.question(seed).variant
        assert "decimal" not in variant.prompt
        assert "significant" not in variant.prompt
        assert variant.hint
        assert variant.solution


@pytest.mark.parametrize(
    ("item", "tag", "share"),
    [
        ("sdpa-two-tokens", "no-sqrt-dk", 0.9),
        ("sdpa-two-tokens", "softmax-over-queries", 0.9),
        ("sdpa-three-tokens", "no-sqrt-dk", 0.9),
        ("self-attention-identity", "no-sqrt-dk", 0.9),
        ("values-not-keys", "keys-not-values", 0.9),
        ("scaling-saturation", "no-sqrt-dk", 0.9),
        ("bahdanau-two-states", "weights-over-decoder-states", 0.9),
        ("weighted-sum-first-element", "unweighted-mean", 0.5),
        ("attention-shapes", "no-batch-dim", 1.0),
    ],
)
def test_the_notes_mistakes_are_named_in_most_variants(item: str, tag: str, share: float) -> None:
    entry = BANK.get(item)
    named = sum(tag in mistakes_by_tag(entry.question(seed)) for seed in SEEDS)
    assert named >= share * len(SEEDS)


def test_symbolic_and_numeric_shapes_and_every_tensor_are_asked() -> None:
    entry = BANK.get("attention-shapes")
    seen = {(q.variant.inputs["symbolic"], q.variant.inputs["tensor"]) for q in map(entry.question, SEEDS)}
    assert {tensor for _, tensor in seen} == {"Q", "K", "V", "A", "Z"}
    assert {symbolic for symbolic, _ in seen} == {True, False}


def test_every_spread_question_is_asked() -> None:
    entry = BANK.get("dot-product-variance")
    asked = {entry.question(seed).variant.inputs["ask"] for seed in SEEDS}
    assert asked == {"std", "variance", "scaled-variance"}


# ---------------------------------------------------------------------------------------------
# Inputs that do not fit are refused with a clear message
# ---------------------------------------------------------------------------------------------


def test_bad_inputs_are_refused() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="3 weights need 3 encoder states"):
        additive.additive_context_component(rng, weights=[0.2, 0.3, 0.5], h=[[1, 0], [0, 1]])
    with pytest.raises(ValueError, match="2 keys need 2 values"):
        dot_product.values_not_keys(rng, q=[1], k=[[0], [0]], v=[[1, 0]])
    with pytest.raises(ValueError, match="tokens must be 2 to 4"):
        dot_product.self_attention_weights(rng, tokens=9)
    with pytest.raises(ValueError, match="not divisible"):
        attention.attention_shapes(rng, symbolic=False, d_model=512, heads=3)
    with pytest.raises(ValueError, match="index must be 1 to 3"):
        additive.additive_softmax_weight(rng, scores=[1.0, 2.0, 0.5], index=4)


# ---------------------------------------------------------------------------------------------
# Helpers and the reference maths they rely on
# ---------------------------------------------------------------------------------------------


def test_one_decimal_weights_are_positive_tenths_summing_to_one() -> None:
    rng = np.random.default_rng(1)
    for count in (2, 3, 4, 5):
        for _ in range(50):
            weights = attention.one_decimal_weights(rng, count)
            assert len(weights) == count
            assert math.isclose(weights.sum(), 1.0)
            assert np.all(weights >= 0.1 - 1e-12)
            assert np.allclose(np.round(weights, 1), weights)


@pytest.mark.parametrize(
    ("value", "text"), [(0.06, "0.06"), (-0.081, "-0.081"), (10.0, "10"), (-0.0, "0"), (0.1 + 0.2, "0.3")]
)
def test_given_numbers_are_written_as_given(value: float, text: str) -> None:
    assert additive.given(value) == text


def test_fixed_numbers_keep_their_places_and_never_show_minus_zero() -> None:
    assert additive.fixed_vector([1.0, 0.9], 2) == "[1.00, 0.90]"
    assert additive.fixed(-0.0001, 2) == "0.00"


def test_attention_scores_divide_by_root_dk_unless_told_otherwise() -> None:
    eye = np.eye(2)
    assert np.allclose(numerics.attention_scores(eye, eye), eye / math.sqrt(2))
    assert np.allclose(numerics.attention_scores(eye, eye, divisor=1.0), eye)
    weights = numerics.softmax(numerics.attention_scores(eye, eye))
    assert np.allclose(weights, numerics.attention_weights(eye, eye))


def test_dot_product_variance_grows_with_dk_and_scaling_brings_it_back_to_one() -> None:
    assert numerics.dot_product_variance(64) == 64.0
    assert numerics.dot_product_variance(64, scaled=True) == 1.0
    assert numerics.dot_product_variance(16, entry_variance=2.0) == 64.0
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(20000, 64)), rng.normal(size=(20000, 64))
    assert abs(float((q * k).sum(axis=1).std()) - math.sqrt(numerics.dot_product_variance(64))) < 0.2
