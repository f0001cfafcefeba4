"""Early rounding of intermediate values (issue 13, defect 4): a generic slip, named with its feedback."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnquiz.engine.answers.rounding import ROUNDED_EARLY, rounded_early
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.grading.grade import grade
from attnquiz.engine.grading.outcome import GENERIC_TAGS
from attnquiz.engine.markup import markdown as md

WEEK1 = banks.load("week1")


def test_the_issue_s_case_is_named() -> None:
    question = WEEK1.get("additive-score").original()
    assert question.answer.format() == "1.93"
    for response in ("1.92", "2*0.96", "0.96 + 0.96"):
        result = grade(question, response)
        assert result.status == "wrong"
        assert result.mistake is not None, response
        assert result.mistake.tag == ROUNDED_EARLY
        assert "tanh" in result.feedback
        assert "round only the final result" in result.feedback
        md.check(result.feedback)
    assert grade(question, "1.93").status == "correct"


def test_the_slip_is_counted_with_the_generic_ones() -> None:
    assert ROUNDED_EARLY in GENERIC_TAGS


@pytest.mark.parametrize(
    ("tolerance", "places"),
    [(Tolerance.decimals(2), ["to 2 decimal places", "to 1 decimal place"]),
     (Tolerance.sigfigs(3), ["to 3 significant figures", "to 2 significant figures"]),
     (Tolerance.relative(1e-3), ["to 3 significant figures", "to 2 significant figures"]),
     (Tolerance.decimals(0), ["to the nearest whole number"]),
     (Tolerance.decimals(1), ["to 1 decimal place", "to the nearest whole number"]),
     (Tolerance.exact(), [])],
)  # fmt: skip
def test_intermediates_are_rounded_as_a_student_rounds_them(tolerance: Tolerance, places: list[str]) -> None:
    mistakes = rounded_early(tolerance, [math.tanh(2), math.tanh(1.5)], sum, "the values")
    assert [next(p for p in places if p in m.feedback) for m in mistakes] == places
    assert all(m.tag == ROUNDED_EARLY for m in mistakes)


def test_rounding_is_half_up_as_written_and_values_keep_their_kind() -> None:
    (two, _) = rounded_early(Tolerance.decimals(2), [0.125, 2.675], lambda x: x, "the values")
    assert two.value == (0.13, 2.68)
    (matrix, _) = rounded_early(
        Tolerance.decimals(2), [0.333, 0.667], lambda w: np.reshape(w, (1, 2)) @ np.eye(2), "w"
    )
    assert matrix.value == ((0.33, 0.67),)
    # Intermediates that the rounding leaves as they are give no mistake at that precision.
    assert [m.value for m in rounded_early(Tolerance.decimals(2), [0.5, 0.25], sum, "v")] == [0.8]


def _named_or_right(item: str, seed: int, response: str) -> None:
    question = WEEK1.get(item).question(seed)
    result = grade(question, response)
    if result.status == "correct":
        return  # this variant's rounding does not change the answer at the precision asked
    assert result.mistake is not None, (item, seed, response, question.answer.format(), result)


def _fixed(values: np.ndarray, places: int) -> np.ndarray:
    return np.array([float(Tolerance.decimals(places).format(float(v))) for v in values.ravel()]).reshape(
        values.shape
    )


@pytest.mark.parametrize("seed", range(150))
def test_additive_score_rounded_early_is_named_over_many_seeds(seed: int) -> None:
    inputs = WEEK1.get("additive-score").question(seed).variant.inputs
    inside = np.array(inputs["h"]) + np.array(inputs["s_proj"])
    for places in (2, 1):
        early = float(np.dot(inputs["v"], _fixed(np.tanh(inside), places)))
        _named_or_right("additive-score", seed, Tolerance.decimals(2).format(early))


def _softmax_rows(scores: np.ndarray) -> np.ndarray:
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights: np.ndarray = e / e.sum(axis=-1, keepdims=True)
    return weights


@pytest.mark.parametrize("seed", range(150))
def test_attention_outputs_from_rounded_weights_are_named_over_many_seeds(seed: int) -> None:
    inputs = WEEK1.get("sdpa-two-tokens").question(seed).variant.inputs
    q, k, v = (np.array(inputs[name], dtype=float) for name in ("q", "k", "v"))
    weights = _softmax_rows(q @ k.T / math.sqrt(q.shape[1]))
    for places in (2, 1):
        out = _fixed(weights, places) @ v
        text = "[" + ", ".join("[" + ", ".join(f"{x:.2f}" for x in row) + "]" for row in out) + "]"
        _named_or_right("sdpa-two-tokens", seed, text)
    token = WEEK1.get("sdpa-three-tokens").question(seed).variant.inputs
    x = np.array(token["x"], dtype=float)
    row = _softmax_rows(x @ x.T / math.sqrt(x.shape[1]))[token["token"] - 1]
    for places in (2, 1):
        out = _fixed(row, places) @ x
        _named_or_right("sdpa-three-tokens", seed, "[" + ", ".join(f"{e:.2f}" for e in out) + "]")


@pytest.mark.parametrize("seed", range(150))
def test_weighted_sums_from_rounded_weights_are_named_over_many_seeds(seed: int) -> None:
    context = WEEK1.get("bahdanau-two-states").question(seed).variant.inputs
    alpha = _softmax_rows(np.array(context["scores"], dtype=float))
    for places in (3, 2):
        out = _fixed(alpha, places) @ np.array(context["h"], dtype=float)
        _named_or_right("bahdanau-two-states", seed, "[" + ", ".join(f"{e:.3f}" for e in out) + "]")
    attend = WEEK1.get("values-not-keys").question(seed).variant.inputs
    q, k, v = (np.array(attend[name], dtype=float) for name in ("q", "k", "v"))
    weights = _softmax_rows(k @ q / math.sqrt(k.shape[1]))
    for places in (2, 1):
        out = _fixed(weights, places) @ v
        _named_or_right("values-not-keys", seed, "[" + ", ".join(f"{e:.2f}" for e in out) + "]")
