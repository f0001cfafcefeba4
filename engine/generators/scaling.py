"""Why the scores are divided by √d_k: the spread of q·k grows with d_k and saturates the softmax."""

from __future__ import annotations

from typing import Literal

import numpy as np

from attnquiz.engine import numerics
from attnquiz.engine.answers.kinds import Mistake, NumericAnswer, VectorAnswer
from attnquiz.engine.generators.additive import (
    check_range,
    count_word,
    fixed,
    fixed_vector,
    given,
    given_vector,
)
from attnquiz.engine.generators.attention import ONE_PLACE
from attnquiz.engine.generators.common import THREE_PLACES, pick, vec
from attnquiz.engine.generators.dot_product import DIVIDE_BY_DK, NO_SQRT_DK, UNIFORM_ROWS
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant

# Head widths whose square roots are whole numbers, so that the scaled scores come out exact: the
# widths of the notes' variance table (02_dot_product_variance), as small heads really are.
SQUARE_HEAD_WIDTHS = (4, 16, 64, 256)


@generator
def scaling_saturation(
    rng: np.random.Generator,
    /,
    *,
    count: int = 2,
    d_k: int | None = None,
    scores: list[float] | None = None,
) -> Variant:
    """Softmax weights of raw scores before and after the 1/√d_k scaling: scaling stops saturation."""
    check_range("count", count, 2, 3)
    width = d_k if d_k is not None else int(pick(rng, SQUARE_HEAD_WIDTHS))
    if width < 1:
        raise ValueError(f"d_k must be positive, not {width}")
    root = float(np.sqrt(width))
    if scores is not None:
        raw = np.asarray(scores, dtype=float)
    else:
        # Scaled scores in steps of 0.5 up to 2.5, so raw = scaled·√d_k is a whole number.
        scaled_draw = rng.choice(np.arange(0, 6), size=count, replace=False) / 2.0
        raw = scaled_draw * root
    scaled = raw / root
    weights = numerics.softmax(scaled)
    unscaled = numerics.softmax(raw)
    exps = np.exp(scaled)
    prompt = (
        f"A query has the raw dot-product scores ${given_vector(raw)}$ against {count_word(len(raw))} "
        f"keys, with head width $d_k = {width}$. Compute the attention weights of scaled dot-product "
        "attention."
    )
    solution = [
        rf"Scale: $\sqrt{{{width}}} = {given(root)}$, so the scores become "
        rf"${given_vector(raw)} / {given(root)} = {fixed_vector(scaled, 3)}$.",
        rf"Softmax: $\exp$ gives ${fixed_vector(exps, 4)}$ with sum ${fixed(float(exps.sum()), 4)}$, so the "
        rf"weights are ${fixed_vector(weights, 3)}$.",
        rf"Without scaling the softmax of ${given_vector(raw)}$ would be ${fixed_vector(unscaled, 4)}$: "
        + (
            "nearly one-hot, with gradients close to zero. Scaling keeps a clear favourite without "
            "saturating."
            if unscaled.max() > 0.99
            else f"sharper, with a largest weight of ${fixed(float(unscaled.max()), 3)}$ instead of "
            f"${fixed(float(weights.max()), 3)}$; the gap grows with $d_k$."
        ),
    ]
    mistakes = [
        Mistake("no-sqrt-dk", vec(unscaled), NO_SQRT_DK),
        Mistake("uniform-rows", vec(np.full(len(raw), 1.0 / len(raw))), UNIFORM_ROWS),
        Mistake("divide-by-dk", vec(numerics.softmax(raw / width)), DIVIDE_BY_DK),
    ]
    return Variant(
        prompt=prompt,
        answer=VectorAnswer(vec(weights), THREE_PLACES),
        solution=solution,
        mistakes=mistakes,
        inputs={"d_k": width, "scores": raw},
        hint=r"Divide every score by $\sqrt{d_k}$ before the softmax.",
    )


Spread = Literal["std", "variance", "scaled-variance"]
SPREAD_WIDTHS = (4, 8, 16, 32, 64, 128, 256, 512)


@generator
def dot_product_spread(
    rng: np.random.Generator,
    /,
    *,
    d_k: int | None = None,
    ask: Spread | None = None,
) -> Variant:
    """How the spread of q·k grows with d_k for unit-variance entries, and what dividing by √d_k does."""
    width = d_k if d_k is not None else int(pick(rng, SPREAD_WIDTHS))
    if width < 1:
        raise ValueError(f"d_k must be positive, not {width}")
    asked: Spread = ask if ask is not None else pick(rng, ("std", "variance", "scaled-variance"))
    variance = numerics.dot_product_variance(width)
    scaled_variance = numerics.dot_product_variance(width, scaled=True)
    std = float(np.sqrt(variance))
    setup = (
        f"The entries of a query $q$ and a key $k$ of width $d_k = {width}$ are independent, with mean 0 "
        "and variance 1."
    )
    question = {
        "std": r"What is the standard deviation of the raw score $q \cdot k$?",
        "variance": r"What is the variance of the raw score $q \cdot k$?",
        "scaled-variance": r"What is the variance of the scaled score $q \cdot k / \sqrt{d_k}$?",
    }[asked]
    solution = [
        rf"$q \cdot k = \sum_{{i=1}}^{{{width}}} q_i k_i$ adds {width} independent products; each has mean 0 "
        r"and variance $\operatorname{Var}(q_i)\operatorname{Var}(k_i) = 1$.",
        rf"Variances of independent terms add: $\operatorname{{Var}}(q \cdot k) = d_k = {width}$, so the "
        rf"standard deviation is $\sqrt{{{width}}} "
        + (rf"= {given(std)}$." if std.is_integer() else rf"\approx {fixed(std, 2)}$."),
        rf"Dividing by $\sqrt{{d_k}}$ divides the variance by $d_k$: "
        rf"$\operatorname{{Var}}(q \cdot k / \sqrt{{d_k}}) = {given(variance)} / {width} "
        rf"= {given(scaled_variance)}$.",
    ]
    variance_not_std = "That is the variance; the standard deviation is its square root."
    std_not_variance = "That is the standard deviation; the variance is its square."
    raw_not_scaled = (
        r"That forgets the scaling: dividing by $\sqrt{d_k}$ divides the variance by $d_k$ and brings "
        "it back to 1."
    )
    scaled_not_raw = (
        r"That is the variance after dividing by $\sqrt{d_k}$; the raw dot product adds $d_k$ products, "
        "so its spread grows with $d_k$."
    )
    mistakes: list[Mistake]
    if asked == "std":
        value = std
        mistakes = [
            Mistake("variance-not-std", variance, variance_not_std),
            Mistake("scaled-not-raw", scaled_variance, scaled_not_raw),
        ]
    elif asked == "variance":
        value = variance
        mistakes = [
            Mistake("std-not-variance", std, std_not_variance),
            Mistake("scaled-not-raw", scaled_variance, scaled_not_raw),
        ]
    else:
        value = scaled_variance
        mistakes = [
            Mistake("raw-not-scaled", variance, raw_not_scaled),
            Mistake(
                "variance-divided-by-sqrt",
                variance / np.sqrt(width),
                r"That divides the variance by $\sqrt{d_k}$. Dividing a score by $\sqrt{d_k}$ divides its "
                "variance by the square, $d_k$.",
            ),
        ]
    return Variant(
        prompt=f"{setup} {question}",
        answer=NumericAnswer(value, ONE_PLACE),
        solution=solution,
        mistakes=mistakes,
        inputs={"d_k": width, "ask": asked},
        hint="Variances of independent terms add, and scaling a number by c scales its variance by c².",
    )
