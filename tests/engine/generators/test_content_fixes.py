"""Issue 13, defect 5: content that misled students, checked over many seeds.

- `rnn-gradient-decay` said "(small recurrent weights)" for every γ, even 0.95, and its linear-decay
  mistake was 2.2e-16 instead of 0 for (γ, k) = (0.8, 5) and (0.9, 10), so a typed 0 was not named;
- `additive-softmax-weight` named any answer 1 "weights over decoder states", a guess it cannot tell
  from that misconception;
- `head-size` opened about 6 % of its prompts in lower case ("the original Transformer (base) has").
"""

from __future__ import annotations

import numpy as np
import pytest
from msgspec.structs import replace

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loaded import Bank
from attnquiz.engine.generators import heads, rnn
from attnquiz.engine.grading import grade as grading
from attnquiz.engine.grading.outcome import Grade
from attnquiz.engine.variant import Question, Variant

SEEDS = range(400)


@pytest.fixture(scope="module")
def week1() -> Bank:
    return banks.load("week1")


def _rng() -> np.random.Generator:
    return np.random.default_rng(0)


def named(got: Grade) -> str | None:
    """The tag of the mistake a grade names, if any."""
    return got.mistake.tag if got.mistake is not None else None


# ---- rnn-gradient-decay and rnn-decay-steps: the remark follows the drawn factor ----


@pytest.mark.parametrize("item", ["rnn-gradient-decay", "rnn-decay-steps"])
def test_small_recurrent_weights_is_said_only_of_a_small_factor(week1: Bank, item: str) -> None:
    entry = week1.get(item)
    seen = set()
    for seed in SEEDS:
        question = entry.question(seed)
        gamma = question.variant.inputs["per_step"]
        seen.add(gamma)
        if "small recurrent weights" in question.variant.prompt:
            assert gamma <= 0.7, (seed, gamma)
        if gamma >= 0.9:
            assert "just below the size that would keep it steady" in question.variant.prompt, seed
    assert max(seen) >= 0.95, "the seeds should cover both ends of the factors"
    assert min(seen) <= 0.6, "the seeds should cover both ends of the factors"


def test_the_original_keeps_its_wording(week1: Bank) -> None:
    # 0.67 is a small factor: the paper's setting still says so.
    assert "(small recurrent weights)." in week1.get("rnn-gradient-decay").original().variant.prompt


@pytest.mark.parametrize(("gamma", "steps"), [(0.8, 5), (0.9, 10), (0.5, 2), (0.95, 20)])
def test_a_linear_decay_to_exactly_zero_is_zero_and_named(gamma: float, steps: int) -> None:
    variant = rnn.rnn_gradient_decay(_rng(), per_step=gamma, steps=steps)
    linear = {m.tag: m.value for m in variant.mistakes}["linear-decay"]
    assert linear == 0  # not the float residue 2.2e-16
    question = week1_question(variant)
    assert named(grading.grade(question, "0")) == "linear-decay"


def test_linear_decay_is_exact_whenever_it_is_listed(week1: Bank) -> None:
    entry = week1.get("rnn-gradient-decay")
    for seed in SEEDS:
        question = entry.question(seed)
        inputs = question.variant.inputs
        mistakes = {m.tag: m.value for m in question.variant.mistakes}
        exact = round(1 - inputs["steps"] * (1 - inputs["per_step"]), 10)
        if "linear-decay" in mistakes:
            assert mistakes["linear-decay"] == exact, seed
            assert named(grading.grade(question, f"{exact:g}")) == "linear-decay", seed
        else:
            assert exact < 0, seed  # the misconception reaches below zero: no value to name


def week1_question(variant: Variant) -> Question:
    """The rnn-gradient-decay question around a variant built directly."""
    return replace(banks.load("week1").get("rnn-gradient-decay").question(0), variant=variant)


# ---- additive-softmax-weight: a 1 is not a misconception ----


def test_a_weight_of_one_is_never_named_weights_over_decoder_states(week1: Bank) -> None:
    entry = week1.get("additive-softmax-weight")
    for seed in SEEDS:
        question = entry.question(seed)
        assert "weights-over-decoder-states" not in {m.tag for m in question.variant.mistakes}, seed
        got = grading.grade(question, "1")
        assert got.status == "wrong", seed
        assert named(got) == "whole-weight-on-one-state", seed
        assert "all of the decoder's attention on this one state" in got.feedback
        assert "decoder steps" not in got.feedback


# ---- head-size: the sentence starts with a capital ----


def test_a_named_model_opens_the_head_size_prompt_with_a_capital() -> None:
    variant = heads.head_size(_rng(), d_model=512, heads=8)
    assert variant.prompt.startswith("The original Transformer (base) has")
    assert heads.head_size(_rng(), d_model=768, heads=12).prompt.startswith("BERT-base has")
