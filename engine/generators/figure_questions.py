"""Figure questions of the key-results page: a heatmap or a plot in the question, numbers to compute.

- ``it_referent_weight``: the hand-built seven-token heatmap in which the row for "it" puts almost
  all of its weight on "animal" (Key results, Figure 1).
- ``unscaled_saturation``: without the 1/√d_k scaling the largest weight goes to 1 as d_k grows,
  because the raw dot products grow like √d_k (Key results, the saturation figure).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from attnquiz.engine import numerics
from attnquiz.engine.answers.kinds import Mistake, NumericAnswer
from attnquiz.engine.figures import LinePlot, Series
from attnquiz.engine.generators.additive import DRAWS, cannot_draw, check_range, fixed
from attnquiz.engine.generators.common import TWO_PLACES, keeps_all
from attnquiz.engine.generators.plots import number_label, score_map, weight_map
from attnquiz.engine.generators.week2_common import tex_row
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant

# Winograd-style sentences cut to seven tokens, the pronoun last, and the token "it" refers to.
SENTENCES: dict[str, tuple[tuple[str, ...], int]] = {
    "animal": (("The", "animal", "didn't", "cross", "the", "street", "it"), 1),
    "trophy": (("The", "trophy", "doesn't", "fit", "the", "suitcase", "it"), 1),
    "street": (("The", "animal", "didn't", "cross", "the", "street", "it"), 5),
}
SENTENCE_TEXT = {
    "animal": "“The animal didn't cross the street because it was tired”",
    "trophy": "“The trophy doesn't fit in the suitcase because it is too big”",
    "street": "“The animal didn't cross the street because it was too wide”",
}

NOT_NORMALISED = (
    "That is the score itself. A weight is the softmax of the row: exponentiate every score and "
    "divide by the sum of the exponentials."
)
LINEAR = (
    "That divides the score by the sum of the scores. Softmax divides exponentials: "
    r"$e^{s_j} / \sum_k e^{s_k}$."
)
OVER_QUERIES = (
    "That normalises the column (over the queries). Each row is one word's reading: the softmax "
    "runs over the keys of the row of “it”."
)
ALL_WEIGHT = (
    "The biggest score takes most of the weight, but never all of it: every other key keeps "
    r"$e^{s_j} / \sum_k e^{s_k} > 0$."
)


def _scores(rng: np.random.Generator, n: int, it: int, referent: int) -> np.ndarray:
    """A hand-built score matrix with one decimal: small scores, the pronoun's row peaked on its referent."""
    s = rng.integers(-10, 16, size=(n, n)) / 10.0
    s[np.arange(n), np.arange(n)] += 1.0  # words read themselves a little more
    s[it] = rng.integers(-5, 16, size=n) / 10.0
    s[it, referent] = rng.integers(40, 71) / 10.0
    return np.round(s, 1)


@generator
def it_referent_weight(
    rng: np.random.Generator,
    /,
    *,
    sentence: Literal["animal", "trophy", "street"] | None = None,
    scores: list[list[float]] | None = None,
) -> Variant:
    """The weight the row of "it" puts on the word it refers to, from the heatmap of scaled scores."""
    name = sentence if sentence is not None else str(rng.choice(sorted(SENTENCES)))
    tokens, referent = SENTENCES[name]
    n, it = len(tokens), len(tokens) - 1
    for _ in range(DRAWS):
        s = np.asarray(scores, dtype=float) if scores is not None else _scores(rng, n, it, referent)
        if s.shape != (n, n):
            raise ValueError(f"scores must be a {n}×{n} matrix (one row and column per token), not {s.shape}")
        weights = numerics.softmax(s)
        row = weights[it]
        answer = NumericAnswer(float(row[referent]), TWO_PLACES)
        mistakes = [
            Mistake("not-normalised", float(s[it, referent]), NOT_NORMALISED),
            Mistake("softmax-over-queries", float(numerics.softmax(s, axis=0)[it, referent]), OVER_QUERIES),
            Mistake("whole-weight-on-one-word", 1.0, ALL_WEIGHT),
        ]
        if s[it].sum() > 0:
            mistakes.append(Mistake("linear-normalisation", float(s[it, referent] / s[it].sum()), LINEAR))
        if scores is not None or keeps_all(answer, mistakes):
            break
    else:
        raise ValueError(cannot_draw("it_referent_weight"))
    word = tokens[referent]
    exps = np.exp(s[it])
    prompt = (
        f"A hand-built self-attention example reads the sentence {SENTENCE_TEXT[name]}, cut to the seven "
        "tokens of the figure. The heatmap shows the scaled scores $q_i \\cdot k_j / \\sqrt{d_k}$ "
        "(row: the query word, column: the key word). How much of its weight does the row of “it” put "
        f"on “{word}”?"
    )
    solution = [
        f"The row of “it” holds the scores ${tex_row(s[it], 1)}$; its weights are their softmax.",
        f"Exponentiate: ${tex_row(exps, 3)}$, total ${fixed(float(exps.sum()), 3)}$.",
        f"Weight on “{word}”: ${fixed(float(exps[referent]), 3)} / {fixed(float(exps.sum()), 3)} "
        f"\\approx {fixed(float(row[referent]), 4)}$: the pronoun reads almost only the word it refers to.",
    ]
    labels = list(tokens)
    return Variant(
        prompt=prompt,
        answer=answer,
        solution=solution,
        mistakes=mistakes,
        inputs={"sentence": name, "scores": s},
        hint="Softmax the row of “it” alone: exponentiate its seven scores and divide by their sum.",
        figures=[
            score_map(
                s,
                title=r"Scaled scores $q \cdot k/\sqrt{d_k}$",
                rows=labels,
                cols=labels,
                caption="Row i: how strongly word i's query matches each word's key.",
                decimals=1,
                where="prompt",
            ),
            weight_map(
                weights,
                title="Attention weights (softmax of each row)",
                rows=labels,
                cols=labels,
                caption=f"The row of “it” puts {fixed(float(row[referent]), 2)} of its weight on “{word}”.",
                decimals=2,
            ),
        ],
    )


SATURATION_WIDTHS = (4, 9, 16, 25, 36, 49, 64)
"""Key widths whose square roots are whole (2 to 8): the unscaled scores stay hand-sized."""

SCALED = (
    r"That is the weight with the $1/\sqrt{d_k}$ scaling. Without it the raw dot products are "
    r"$\sqrt{d_k}$ times larger, and the softmax of larger numbers is more peaked."
)
DIVIDED_BY_DK = r"That divides by $d_k$; the question takes the raw dot products, with no scaling at all."
UNIFORM = "That is 1/n, the weight of every key when the scores are all equal; these scores are not."


@generator
def unscaled_saturation(
    rng: np.random.Generator,
    /,
    *,
    keys: int = 4,
    d_k: int | None = None,
    pattern: list[float] | None = None,
) -> Variant:
    """The largest softmax weight of raw (unscaled) dot products that grow like √d_k."""
    check_range("keys", keys if pattern is None else len(pattern), 3, 6)
    for _ in range(DRAWS):
        width = d_k if d_k is not None else int(rng.choice(SATURATION_WIDTHS))
        root = math.isqrt(width)
        if root * root != width:
            raise ValueError(f"d_k must be a perfect square (its root multiplies the scores), not {width}")
        if pattern is not None:
            z = np.asarray(pattern, dtype=float)
        else:
            z = rng.choice(np.arange(-10, 11), size=keys, replace=False) / 10.0
        raw = root * z
        answer = NumericAnswer(float(numerics.softmax(raw).max()), TWO_PLACES)
        scaled = float(numerics.softmax(z).max())
        mistakes = [
            Mistake("scaled", scaled, SCALED),
            Mistake("divide-by-dk", float(numerics.softmax(raw / width).max()), DIVIDED_BY_DK),
            Mistake("uniform", 1.0 / len(z), UNIFORM),
        ]
        # A drawn variant is on the way up: not yet 1.00 as written, and clearly above the scaled weight.
        drawn_ok = answer.value < 0.99 and answer.value - scaled > 0.1
        if pattern is not None or d_k is not None or (drawn_ok and keeps_all(answer, mistakes)):
            break
    else:
        raise ValueError(cannot_draw("unscaled_saturation"))
    n = len(z)
    exps = np.exp(raw - raw.max())
    prompt = (
        f"A query is scored against {n} keys. Its scaled scores $q \\cdot k_j / \\sqrt{{d_k}}$ are "
        f"${tex_row(z, 1)}$, and $d_k = {width}$. The plot shows, for these scores, the largest "
        "softmax weight with and without the $1/\\sqrt{d_k}$ scaling as $d_k$ grows. Compute the "
        f"largest weight **without** the scaling at $d_k = {width}$."
    )
    solution = [
        f"Without the scaling the scores are the raw dot products: $\\sqrt{{{width}}} = {root}$ times "
        f"the scaled ones, ${tex_row(raw, 1)}$.",
        "Softmax, after subtracting the largest score (the same weights, smaller numbers): "
        f"$e^{{s_j - {number_label(raw.max()).replace('−', '-')}}} \\approx {tex_row(exps, 4)}$, "
        f"total ${fixed(float(exps.sum()), 4)}$.",
        f"Largest weight: $1 / {fixed(float(exps.sum()), 4)} \\approx {fixed(answer.value, 4)}$, against "
        f"${fixed(float(numerics.softmax(z).max()), 4)}$ with the scaling: the unscaled softmax saturates "
        "towards a single key as $d_k$ grows.",
    ]
    return Variant(
        prompt=prompt,
        answer=answer,
        solution=solution,
        mistakes=mistakes,
        inputs={"keys": n, "d_k": width, "pattern": z},
        hint=r"Multiply every scaled score by $\sqrt{d_k}$, then softmax; only the largest weight is asked.",
        figures=[_saturation_plot(z, width)],
    )


def _saturation_plot(z: np.ndarray, width: int) -> LinePlot:
    """Largest weight against log₂ d_k from 1 to 4096: unscaled (√d_k · z) and scaled (z)."""
    exponents = np.linspace(0.0, 12.0, 49)
    # Every curve point at once: row i is √(2^eᵢ)·z (the same factors and products as one point at a
    # time), and the softmax of each row is what the softmax of that row alone gives.
    factors = np.array([math.sqrt(2.0**e) for e in exponents])
    unscaled = numerics.softmax(factors[:, None] * z).max(axis=-1).tolist()
    scaled = [float(numerics.softmax(z).max())] * len(exponents)
    return LinePlot(
        x=exponents.tolist(),
        series=[Series(r"without $1/\sqrt{d_k}$", unscaled), Series(r"with $1/\sqrt{d_k}$", scaled)],
        title="Largest attention weight as $d_k$ grows",
        caption=rf"$d_k = {width}$ is at $\log_2 d_k = {math.log2(width):g}$.",
        x_label=r"$\log_2 d_k$",
        y_label="largest weight",
        where="prompt",
    )
