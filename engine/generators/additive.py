"""Additive (Bahdanau) attention: scores, weights and the context vector."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache, lru_cache

import numpy as np

from attnquiz.engine import numerics
from attnquiz.engine.answers.kinds import Mistake, NumericAnswer, VectorAnswer
from attnquiz.engine.answers.rounding import rounded_early
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.generators.common import THREE_PLACES, TWO_PLACES, keeps_all, small_ints, vec
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant

ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth")

OVER_DECODER_STEPS = (
    "That normalises over the decoder steps instead of over the encoder states: with a single "
    r"decoder step every weight becomes 1. The softmax runs over the source positions $i$, so the "
    "weights of one decoder step sum to 1."
)
WHOLE_WEIGHT = (
    "A weight of 1 would put all of the decoder's attention on this one state. The {n} encoder "
    "states share the attention of one decoder step: their weights are the softmax of the scores, "
    "and they sum to 1."
)
LINEAR_NORMALISATION = (
    "That divides each score by the sum of the scores. Softmax exponentiates first, so every "
    "weight is positive and a bigger score gets an exponentially bigger weight."
)
NOT_NORMALISED = (
    r"That is $\exp$ of the score without dividing by the sum over the encoder states; the "
    "weights must sum to 1."
)
UNIFORM_WEIGHTS = (
    "That averages the encoder states with equal weights. The context is the weighted average: "
    "each state counts with its own attention weight."
)


def given(value: float) -> str:
    """A number as it was given, with no padding zeros: 0.06, -0.081, 10."""
    if value == 0:
        return "0"
    return _positional(float(value))


@lru_cache(maxsize=4096)  # given numbers are small and few: the same ones recur in every variant
def _positional(value: float) -> str:
    # Six significant decimals hide float noise such as 0.1 + 0.2 without rounding real inputs.
    return np.format_float_positional(value, precision=6, trim="-")


def given_vector(values: Iterable[float]) -> str:
    """A row vector of given numbers in TeX, e.g. ``[0.699, -0.081]``."""
    return "[" + ", ".join(given(float(v)) for v in values) + "]"


def given_matrix(rows: Iterable[Iterable[float]]) -> str:
    """A matrix of given numbers as a TeX bmatrix."""
    body = r" \\ ".join(" & ".join(given(float(v)) for v in row) for row in rows)
    return r"\begin{bmatrix}" + body + r"\end{bmatrix}"


def fixed(value: float, places: int) -> str:
    """A computed number to a fixed number of decimals (no "-0.000"): 0.50, 1.00."""
    return _decimals(places).format(float(value))


@cache
def _decimals(places: int) -> Tolerance:
    """``Tolerance.decimals(places)``, built once per precision (solutions format dozens of numbers)."""
    return Tolerance.decimals(places)


def fixed_vector(values: Iterable[float], places: int) -> str:
    """A computed vector in TeX, every entry to ``places`` decimals."""
    return "[" + ", ".join(fixed(float(v), places) for v in values) + "]"


def fixed_matrix(rows: Iterable[Iterable[float]], places: int) -> str:
    """A computed matrix as a TeX bmatrix, every entry to ``places`` decimals."""
    body = r" \\ ".join(" & ".join(fixed(float(v), places) for v in row) for row in rows)
    return r"\begin{bmatrix}" + body + r"\end{bmatrix}"


NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six")


def count_word(n: int) -> str:
    """Small counts in words, as prose writes them ("three encoder states")."""
    return NUMBER_WORDS[n] if 0 <= n < len(NUMBER_WORDS) else str(n)


def _vector(value: list[float] | None, draw: np.ndarray) -> np.ndarray:
    """The given vector, or the drawn one when none is given."""
    return np.asarray(value if value is not None else draw, dtype=float)


def _scores_2dp(rng: np.random.Generator, count: int) -> np.ndarray:
    """Distinct scores with two decimals in [-1.5, 2.5], the range tanh-bounded scores with small v_a have."""
    return rng.choice(np.arange(-150, 251), size=count, replace=False) / 100.0


def _weights_2dp(rng: np.random.Generator, count: int) -> np.ndarray:
    """Weights with two decimals, each at least 0.05, summing to exactly 1."""
    # A composition of 100 - 5·count into `count` non-negative parts, then 0.05 added to each.
    spare = 100 - 5 * count
    cuts = np.sort(rng.choice(np.arange(spare + count - 1), size=count - 1, replace=False))
    parts = np.diff(np.concatenate(([-1], cuts, [spare + count - 1]))) - 1
    return (parts + 5) / 100.0


def _distinct_nonzero(rows: np.ndarray) -> bool:
    """Whether no two rows are alike and none is all zeros (checked on plain lists: it runs per redraw)."""
    listed = rows.tolist()
    return len({tuple(row) for row in listed}) == len(listed) and all(any(row) for row in listed)


# How many draws a generator tries before it gives up on inputs it was partly given.
DRAWS = 2000


def cannot_draw(name: str) -> str:
    """The error for given inputs that leave no fair variant to draw."""
    return f"{name}: no fair variant can be drawn around the inputs given (try giving all of them)"


def check_range(name: str, value: int, low: int, high: int) -> None:
    """Refuse a size or index outside what the item's prompt and solution are written for."""
    if not low <= value <= high:
        raise ValueError(f"{name} must be {low} to {high}, not {value}")


def _exp_terms(scores: np.ndarray, places: int = 4) -> str:
    """``exp(s) ≈ value`` for each score, for the solution steps."""
    return ", ".join(rf"\exp({given(s)}) \approx {fixed(float(np.exp(s)), places)}" for s in scores)


@generator
def additive_score(
    rng: np.random.Generator,
    /,
    *,
    dim: int = 2,
    h: list[float] | None = None,
    s_proj: list[float] | None = None,
    v: list[float] | None = None,
) -> Variant:
    """Score one encoder state with additive (Bahdanau) attention, e = v_aᵀ tanh(W_a s + U_a h)."""
    check_range("dim", dim, 1, 4)
    # Given inputs (the paper's) are taken as they are; only a fully drawn variant is held to the checks.
    given_any = h is not None or s_proj is not None or v is not None
    for _ in range(DRAWS):
        # A drawn h has at least one 1, the sum has no zero entry and v_a none either (as in the paper's
        # [2, 2] and [1, 1]): a zero would drop a term and make tanh-after-dot look right.
        h_vec = _vector(h, small_ints(rng, dim, 0, 1))
        s_vec = _vector(s_proj, small_ints(rng, dim, -1, 2))
        v_vec = _vector(v, rng.choice(np.array([-1.0, 1.0, 2.0]), size=dim))
        inside = s_vec + h_vec
        if not (given_any or (h_vec.any() and inside.all())):
            continue  # the cheap checks on the inputs first: no score is needed to reject these
        score = numerics.additive_score(v_vec, s_vec, h_vec)
        mistakes = [
            Mistake(
                "no-tanh",
                float(np.dot(v_vec, inside)),
                r"That is $v_a^\top (W_a s_{t-1} + U_a h_1)$ without the $\tanh$: the nonlinearity "
                "is applied to the sum before the dot product with $v_a$.",
            ),
            Mistake(
                "tanh-after-dot",
                float(np.tanh(np.dot(v_vec, inside))),
                r"That applies $\tanh$ after the dot product; the score is $v_a^\top \tanh(\cdot)$, "
                r"so $\tanh$ acts on each entry of the sum first.",
            ),
        ]
        answer = NumericAnswer(score, TWO_PLACES)
        if given_any or (abs(score) >= 0.1 and keeps_all(answer, mistakes)):
            break
    else:
        raise ValueError(cannot_draw("additive_score"))
    tanh = np.tanh(inside)
    # The score is a dot product of tanh values: rounding them first is the classic slip (1.92 for 1.93).
    mistakes += rounded_early(
        answer.tolerance, tanh, lambda t: float(np.dot(v_vec, t)), r"the $\tanh$ values"
    )
    terms = " + ".join(
        (rf"({given(a)})" if a < 0 else given(a)) + rf" \cdot \tanh({given(x)})"
        for a, x in zip(v_vec, inside, strict=True)
    )
    prompt = (
        "An encoder–decoder uses additive (Bahdanau) attention, "
        r"$e_{ti} = v_a^\top \tanh(W_a s_{t-1} + U_a h_i)$. "
        rf"Take $U_a = I$, the encoder state $h_1 = {given_vector(h_vec)}$, the projected decoder "
        rf"state $W_a s_{{t-1}} = {given_vector(s_vec)}$ and $v_a = {given_vector(v_vec)}$. "
        r"Compute the score $e_{t1}$."
    )
    solution = [
        rf"Add the projections: $W_a s_{{t-1}} + U_a h_1 = {given_vector(s_vec)} + {given_vector(h_vec)} "
        rf"= {given_vector(inside)}$.",
        rf"Apply $\tanh$ to each entry: $\tanh({given_vector(inside)}) \approx {fixed_vector(tanh, 4)}$.",
        rf"Dot with $v_a$: $e_{{t1}} = {terms} \approx {fixed(score, 4)}$, "
        rf"so $e_{{t1}} \approx {fixed(score, 2)}$.",
    ]
    return Variant(
        prompt=prompt,
        answer=answer,
        solution=solution,
        mistakes=mistakes,
        inputs={"h": h_vec, "s_proj": s_vec, "v": v_vec},
        hint=r"Add the two projected vectors, take $\tanh$ of each entry, then dot with $v_a$.",
    )


@generator
def additive_softmax_weight(
    rng: np.random.Generator,
    /,
    *,
    states: int = 3,
    scores: list[float] | None = None,
    index: int | None = None,
) -> Variant:
    """Turn the additive scores of one decoder step into the attention weight of one encoder state."""
    for _ in range(DRAWS):
        e = _vector(scores, _scores_2dp(rng, states))
        n = len(e)
        check_range("the number of encoder states", n, 2, 6)
        i = index if index is not None else int(rng.integers(1, n + 1))
        check_range("index", i, 1, n)
        alpha = numerics.softmax(e)
        exps = np.exp(e)
        answer = NumericAnswer(float(alpha[i - 1]), TWO_PLACES)
        # "Normalised over the decoder steps" would give 1 here, but so does any guess that one state
        # takes all the attention: a 1 is answered for what it is, not named as that misconception.
        mistakes = [
            Mistake("not-normalised", float(exps[i - 1]), NOT_NORMALISED),
            Mistake("whole-weight-on-one-state", 1.0, WHOLE_WEIGHT.format(n=count_word(n))),
        ]
        if e.sum() > 0:
            mistakes.append(Mistake("linear-normalisation", float(e[i - 1] / e.sum()), LINEAR_NORMALISATION))
        if scores is not None or index is not None or keeps_all(answer, mistakes):
            break
    else:
        raise ValueError(cannot_draw("additive_softmax_weight"))
    listed = ", ".join(rf"$e_{{t{j + 1}}} = {given(s)}$" for j, s in enumerate(e))
    prompt = (
        f"At decoder step $t$, additive (Bahdanau) attention gives the {count_word(n)} encoder states "
        f"the scores "
        f"{listed}. Compute the attention weight $\\alpha_{{t{i}}}$ that the decoder puts on encoder "
        f"state {i}."
    )
    solution = [
        r"The weights are a softmax over the encoder states: "
        rf"$\alpha_{{t{i}}} = \frac{{\exp(e_{{t{i}}})}}{{\sum_j \exp(e_{{tj}})}}$.",
        f"Exponentiate each score: ${_exp_terms(e)}$.",
        rf"Add them: $\sum_j \exp(e_{{tj}}) \approx {fixed(float(exps.sum()), 4)}$.",
        rf"Divide: $\alpha_{{t{i}}} \approx {fixed(float(exps[i - 1]), 4)} / {fixed(float(exps.sum()), 4)} "
        rf"\approx {fixed(float(alpha[i - 1]), 4)}$.",
    ]
    return Variant(
        prompt=prompt,
        answer=answer,
        solution=solution,
        mistakes=mistakes,
        inputs={"scores": e, "index": i},
        hint="Softmax the scores over the encoder states: exponentiate each, then divide by the total.",
    )


@generator
def additive_context_component(
    rng: np.random.Generator,
    /,
    *,
    states: int = 3,
    dim: int = 2,
    weights: list[float] | None = None,
    h: list[list[float]] | None = None,
    component: int | None = None,
) -> Variant:
    """Build the additive-attention context vector from given weights and read off one component."""
    for _ in range(DRAWS):
        alpha = _vector(weights, _weights_2dp(rng, states))
        n = len(alpha)
        check_range("the number of encoder states", n, 2, 6)
        if h is not None:
            states_h = np.asarray(h, dtype=float)
        else:
            states_h = small_ints(rng, (n, dim), -1, 3).astype(float)
            while not _distinct_nonzero(states_h):
                states_h = small_ints(rng, (n, dim), -1, 3).astype(float)
        if states_h.shape[0] != n:
            raise ValueError(f"{n} weights need {n} encoder states, not {states_h.shape[0]}")
        width = states_h.shape[1]
        j = component if component is not None else int(rng.integers(1, width + 1))
        check_range("component", j, 1, width)
        context = numerics.weighted_sum(alpha, states_h)
        column = states_h[:, j - 1]
        answer = NumericAnswer(float(context[j - 1]), TWO_PLACES)
        # The weights are given, so the misconceptions left are about using them: leaving them out,
        # averaging the states instead, or reading off the wrong component.
        mistakes = [
            Mistake(
                "weights-ignored",
                float(column.sum()),
                "That adds the encoder states without their weights. Each state counts with its own "
                r"attention weight $\alpha_{ti}$, and the weights of one decoder step sum to 1.",
            ),
            Mistake("uniform-weights", float(column.mean()), UNIFORM_WEIGHTS),
        ]
        for other in (j + 1, j - 1):
            if 1 <= other <= width:
                mistakes.append(
                    Mistake(
                        "wrong-component",
                        float(context[other - 1]),
                        f"That is the {ORDINALS[other - 1]} component of $c_t$; the question asks for the "
                        f"{ORDINALS[j - 1]}.",
                    )
                )
        given_any = weights is not None or h is not None or component is not None
        if given_any or keeps_all(answer, mistakes):
            break
    else:
        raise ValueError(cannot_draw("additive_context_component"))
    listed = ", ".join(rf"$h_{k + 1} = {given_vector(row)}$" for k, row in enumerate(states_h))
    weight_list = ", ".join(rf"$\alpha_{{t{k + 1}}} = {fixed(a, 2)}$" for k, a in enumerate(alpha))
    terms = " + ".join(
        rf"{fixed(a, 2)} \cdot " + (f"({given(x)})" if x < 0 else given(x))
        for a, x in zip(alpha, column, strict=True)
    )
    prompt = (
        f"At decoder step $t$, additive attention over the encoder states {listed} gives the weights "
        f"{weight_list}. Build the context vector $c_t$ and give its {ORDINALS[j - 1]} component."
    )
    solution = [
        r"The context is the weighted sum of the encoder states: $c_t = \sum_i \alpha_{ti} h_i$.",
        f"Its {ORDINALS[j - 1]} component uses the {ORDINALS[j - 1]} entry of each state: "
        rf"$c_{{t}}[{j}] = {terms} = {given(round(float(context[j - 1]), 9))}$.",
        rf"The whole vector is $c_t = {given_vector(np.round(context, 9))}$.",
    ]
    return Variant(
        prompt=prompt,
        answer=answer,
        solution=solution,
        mistakes=mistakes,
        inputs={"weights": alpha, "h": states_h, "component": j},
        hint="Multiply each encoder state by its weight and add the results.",
    )


@generator
def additive_context_vector(
    rng: np.random.Generator,
    /,
    *,
    states: int = 2,
    dim: int = 2,
    scores: list[float] | None = None,
    h: list[list[float]] | None = None,
) -> Variant:
    """Softmax the additive scores of one decoder step and build the context vector from the states."""
    for _ in range(DRAWS):
        e = _vector(scores, small_ints(rng, states, 0, 3))
        while scores is None and len(set(e.tolist())) == 1:
            e = small_ints(rng, states, 0, 3).astype(float)
        n = len(e)
        check_range("the number of encoder states", n, 2, 6)
        if h is not None:
            states_h = np.asarray(h, dtype=float)
        else:
            states_h = small_ints(rng, (n, dim), 0, 2).astype(float)
            while not _distinct_nonzero(states_h):
                states_h = small_ints(rng, (n, dim), 0, 2).astype(float)
        if states_h.shape[0] != n:
            raise ValueError(f"{n} scores need {n} encoder states, not {states_h.shape[0]}")
        alpha = numerics.softmax(e)
        context = numerics.weighted_sum(alpha, states_h)
        answer = VectorAnswer(vec(context), THREE_PLACES)
        mistakes = [
            Mistake("weights-over-decoder-states", vec(states_h.sum(axis=0)), OVER_DECODER_STEPS),
            Mistake(
                "scores-as-weights",
                vec(numerics.weighted_sum(e, states_h)),
                "That weights the states by the raw scores. The scores go through a softmax first, "
                "so that the weights are positive and sum to 1.",
            ),
            Mistake("uniform-weights", vec(states_h.mean(axis=0)), UNIFORM_WEIGHTS),
        ]
        if states_h.shape[1] == n:
            mistakes.append(
                Mistake(
                    "weights-not-context",
                    vec(alpha),
                    r"Those are the attention weights $\alpha$; the context vector is the sum of the "
                    "encoder states weighted by them.",
                )
            )
        # The notes' own states are the unit vectors, where the context equals the weights; drawn
        # states never are, so that every misconception gives a wrong answer of its own.
        if scores is not None or h is not None or keeps_all(answer, mistakes):
            break
    else:
        raise ValueError(cannot_draw("additive_context_vector"))
    # The context is a weighted sum: rounding the weights first is the slip to name.
    mistakes += rounded_early(
        answer.tolerance, alpha, lambda a: numerics.weighted_sum(np.asarray(a), states_h), "the weights"
    )
    exps = np.exp(e)
    listed = ", ".join(rf"$h_{k + 1} = {given_vector(row)}$" for k, row in enumerate(states_h))
    terms = " + ".join(
        rf"{fixed(a, 3)} \cdot {given_vector(row)}" for a, row in zip(alpha, states_h, strict=True)
    )
    prompt = (
        f"At one decoder step, additive attention gives the encoder states {listed} the scores "
        f"$e = {given_vector(e)}$. Compute the context vector $c_t$."
    )
    solution = [
        f"Exponentiate the scores: ${_exp_terms(e)}$; their sum is ${fixed(float(exps.sum()), 4)}$.",
        rf"Divide by the sum to get the weights: $\alpha \approx {fixed_vector(alpha, 3)}$ (they sum to 1).",
        rf"Weight the states and add: $c_t = {terms} \approx {fixed_vector(context, 3)}$.",
    ]
    return Variant(
        prompt=prompt,
        answer=answer,
        solution=solution,
        mistakes=mistakes,
        inputs={"scores": e, "h": states_h},
        hint="Softmax the scores into weights, then take the weighted sum of the encoder states.",
    )
