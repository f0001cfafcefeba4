"""Self-attention and scaled dot-product attention: softmax weights, weighted sums of values, outputs."""

from __future__ import annotations

from typing import Literal

import numpy as np

from attnquiz.engine import numerics
from attnquiz.engine.answers.kinds import Mistake, NumericAnswer, ShapeAnswer, VectorAnswer, symbols
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.answers.values import Dim
from attnquiz.engine.generators import sizes
from attnquiz.engine.generators.additive import (
    DRAWS,
    LINEAR_NORMALISATION,
    ORDINALS,
    OVER_DECODER_STEPS,
    cannot_draw,
    check_range,
    count_word,
    fixed,
    fixed_vector,
    given,
    given_vector,
)
from attnquiz.engine.generators.common import (
    THREE_PLACES,
    TWO_PLACES,
    keeps_all,
    pick,
    small_ints,
    vec,
)
from attnquiz.engine.generators.plots import number_label, weight_map
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant

ONE_PLACE = Tolerance.decimals(1)

UNWEIGHTED_MEAN = (
    "That is the plain average of the values. Attention is a weighted average: each value counts "
    "with its own weight."
)


def one_decimal_weights(rng: np.random.Generator, count: int) -> np.ndarray:
    """Weights with one decimal, each at least 0.1, summing to exactly 1 (the past papers' style)."""
    cuts = np.sort(rng.choice(np.arange(1, 10), size=count - 1, replace=False))
    return np.diff(np.concatenate(([0], cuts, [10]))) / 10.0


def as_matrix(value: list[list[float]] | None, draw: np.ndarray) -> np.ndarray:
    """The given matrix, or the drawn one when none is given."""
    return np.asarray(value if value is not None else draw, dtype=float)


def distinct_rows(
    rng: np.random.Generator, shape: tuple[int, int], low: int, high: int, *, nonzero: bool = True
) -> np.ndarray:
    """Small integers with no two rows alike (and, if asked, no zero row)."""
    while True:
        drawn = small_ints(rng, shape, low, high)
        # Checked on plain lists: numpy calls on a 3×3 array cost more than the check itself.
        listed = drawn.tolist()
        if len({tuple(r) for r in listed}) == shape[0] and (not nonzero or all(any(r) for r in listed)):
            return drawn.astype(float)


def pick_token(value: int | None, rng: np.random.Generator, count: int) -> int:
    """The given 1-based token index (checked), or a drawn one."""
    chosen = value if value is not None else int(rng.integers(1, count + 1))
    check_range("token", chosen, 1, count)
    return chosen


def weight_terms(weights: np.ndarray, rows: np.ndarray, places: int | None) -> str:
    """Σ wᵢ vᵢ written out term by term, the weights to ``places`` decimals (None: as given)."""
    return " + ".join(
        (given(w) if places is None else fixed(w, places)) + rf" \cdot {given_vector(r)}"
        for w, r in zip(weights, rows, strict=True)
    )


@generator
def softmax_weights(
    rng: np.random.Generator,
    /,
    *,
    count: int = 3,
    scores: list[float] | None = None,
    setting: Literal["plain", "additive"] = "plain",
) -> Variant:
    """Turn a row of scores into softmax weights (plain integer scores, or additive alignment scores)."""
    if scores is not None:
        z = np.asarray(scores, dtype=float)
    elif setting == "plain":
        z = rng.choice(np.arange(-1, 4), size=count, replace=False).astype(float)
    else:
        # Like the executed 05 output: three-decimal alignment scores between -1 and 1.
        z = rng.choice(np.arange(-1000, 1001), size=count, replace=False) / 1000.0
    n = len(z)
    check_range("the number of scores", n, 2, 6)
    weights = numerics.softmax(z)
    exps = np.exp(z)
    if setting == "plain":
        prompt = rf"Compute $\operatorname{{softmax}}(z)$ for the scores $z = {given_vector(z)}$."
        name = r"\operatorname{softmax}(z)"
    else:
        prompt = (
            f"An additive-attention decoder scores {count_word(n)} encoder states and gets the alignment "
            "scores "
            f"$e = {given_vector(z)}$. Compute the attention weights $\\alpha$ over the encoder states."
        )
        name = r"\alpha"
    exp_list = ", ".join(rf"{fixed(float(x), 4)}" for x in exps)
    solution = [
        rf"Softmax exponentiates each score and divides by the total: $\exp$ of the scores is "
        rf"$[{exp_list}]$.",
        rf"The total is ${fixed(float(exps.sum()), 4)}$.",
        rf"Divide: ${name} \approx {fixed_vector(weights, 4)}$; the weights are positive and sum to 1, and "
        "the biggest score gets the biggest weight.",
    ]
    mistakes = []
    if setting == "additive":
        mistakes.append(Mistake("weights-over-decoder-states", vec(np.ones(n)), OVER_DECODER_STEPS))
    if z.sum() > 0:
        mistakes.append(Mistake("linear-normalisation", vec(z / z.sum()), LINEAR_NORMALISATION))
    mistakes.append(
        Mistake(
            "not-normalised",
            vec(exps),
            r"Those are the $\exp$ of the scores; softmax then divides each by their sum so that "
            "the weights sum to 1.",
        )
    )
    return Variant(
        prompt=prompt,
        answer=VectorAnswer(vec(weights), THREE_PLACES),
        solution=solution,
        mistakes=mistakes,
        inputs={"scores": z},
        hint="Exponentiate every score, then divide each by the sum of the exponentials.",
        figures=[
            weight_map(
                weights,
                title="Softmax weights" if setting == "plain" else "Attention weights over the states",
                caption="Each score's weight, shaded from 0 (light) to 1 (dark): the weights sum to 1.",
                rows=["weight"],
                cols=[f"{'z' if setting == 'plain' else 'e'} = {number_label(v)}" for v in z],
                row_title="",
                col_title="score",
                decimals=3,
            )
        ],
    )


@generator
def weighted_average(
    rng: np.random.Generator,
    /,
    *,
    count: int = 3,
    values: list[float] | None = None,
    weights: list[float] | None = None,
) -> Variant:
    """What one token receives: the weighted average of scalar values under given attention weights."""
    check_range("count", count, 2, 5)
    for _ in range(DRAWS):
        vals = np.asarray(
            values if values is not None else rng.choice(np.arange(5, 55, 5), size=count, replace=False),
            dtype=float,
        )
        w = np.asarray(weights if weights is not None else one_decimal_weights(rng, len(vals)), dtype=float)
        if w.shape != vals.shape:
            raise ValueError(f"{len(w)} weights for {len(vals)} values")
        result = float(numerics.weighted_sum(w, vals))
        answer = NumericAnswer(result, ONE_PLACE)
        mistakes = [Mistake("unweighted-mean", float(vals.mean()), UNWEIGHTED_MEAN)]
        top = np.flatnonzero(w == w.max())
        if len(top) == 1:
            mistakes.append(
                Mistake(
                    "only-top-weight",
                    float(vals[top[0]]),
                    "That takes only the value with the biggest weight. Attention is soft: every value "
                    "contributes in proportion to its weight.",
                )
            )
        if values is not None or weights is not None or keeps_all(answer, mistakes):
            break
    else:
        raise ValueError(cannot_draw("weighted_average"))
    # Rounded so that float noise (0.7 * 10 = 7.000000000000001) does not reach the text.
    terms = [given(round(float(p), 9)) for p in w * vals]
    prompt = (
        f"A token attends to {count_word(len(vals))} tokens whose values are ${given_vector(vals)}$, "
        f"with attention weights ${given_vector(w)}$. What does the token receive?"
    )
    solution = [
        "The weights say how much to listen to each value, and they sum to 1.",
        f"Multiply each value by its weight: ${', '.join(terms)}$.",
        rf"Add them up: ${' + '.join(terms)} = {given(round(result, 9))}$.",
    ]
    return Variant(
        prompt=prompt,
        answer=answer,
        solution=solution,
        mistakes=mistakes,
        inputs={"values": vals, "weights": w},
        hint="Multiply each value by its weight and add the products.",
    )


@generator
def weighted_sum_element(
    rng: np.random.Generator,
    /,
    *,
    tokens: int = 4,
    dim: int = 2,
    weights: list[float] | None = None,
    values: list[list[float]] | None = None,
    element: int | None = None,
) -> Variant:
    """One element of the attention output: the weighted sum of value vectors under given weights."""
    check_range("tokens", tokens, 2, 6)
    check_range("dim", dim, 2, 4)
    for _ in range(DRAWS):
        w = np.asarray(weights if weights is not None else one_decimal_weights(rng, tokens), dtype=float)
        v = as_matrix(values, distinct_rows(rng, (len(w), dim), 0, 2))
        if v.shape[0] != len(w):
            raise ValueError(f"{len(w)} weights need {len(w)} value vectors, not {v.shape[0]}")
        width = v.shape[1]
        j = element if element is not None else int(rng.integers(1, width + 1))
        check_range("element", j, 1, width)
        output = numerics.weighted_sum(w, v)
        column = v[:, j - 1]
        answer = NumericAnswer(float(output[j - 1]), TWO_PLACES)
        mistakes = [
            Mistake("unweighted-mean", float(column.mean()), UNWEIGHTED_MEAN),
            Mistake(
                "weights-ignored",
                float(column.sum()),
                "That adds the values without their weights. Each value is multiplied by its weight, "
                "and the weights sum to 1.",
            ),
        ]
        for other in (j + 1, j - 1):
            if 1 <= other <= width:
                mistakes.append(
                    Mistake(
                        "wrong-element",
                        float(output[other - 1]),
                        f"That is the {ORDINALS[other - 1]} element of the output; the question asks for "
                        f"the {ORDINALS[j - 1]}.",
                    )
                )
        # The paper's own values average to its answer (1.00); drawn ones tell every mistake apart.
        given_any = weights is not None or values is not None or element is not None
        if given_any or keeps_all(answer, mistakes):
            break
    else:
        raise ValueError(cannot_draw("weighted_sum_element"))
    listed = ", ".join(rf"$v_{k + 1} = {given_vector(row)}$" for k, row in enumerate(v))
    prompt = (
        f"Attention weights ${given_vector(w)}$ are applied to the value vectors {listed}. "
        f"What is the {ORDINALS[j - 1]} element of the output?"
    )
    solution = [
        rf"The output is the weighted sum of the values: $z = \sum_i w_i v_i = {weight_terms(w, v, None)}$.",
        rf"So $z = {fixed_vector(output, 2)}$.",
        f"Its {ORDINALS[j - 1]} element is ${fixed(float(output[j - 1]), 2)}$.",
    ]
    return Variant(
        prompt=prompt,
        answer=answer,
        solution=solution,
        mistakes=mistakes,
        inputs={"weights": w, "values": v, "element": j},
        hint="Multiply each value vector by its weight, add them, and read off the element asked for.",
    )


Tensor = Literal["Q", "K", "V", "A", "Z"]
TENSOR_NAMES = {
    "Q": "the queries $Q$",
    "K": "the keys $K$",
    "V": "the values $V$",
    "A": r"the attention weights $A = \operatorname{softmax}(QK^\top/\sqrt{d_k})$",
    "Z": "the head's output $Z = AV$",
}


@generator
def attention_shapes(
    rng: np.random.Generator,
    /,
    *,
    symbolic: bool | None = None,
    tensor: Tensor | None = None,
    batch: int | None = None,
    length: int | None = None,
    d_model: int | None = None,
    heads: int | None = None,
) -> Variant:
    """The shape of Q, K, V, the weights A or the output Z of one head, for X of shape [B, T, d_model]."""
    sym = symbolic if symbolic is not None else bool(rng.random() < 0.3)
    name: Tensor = tensor if tensor is not None else pick(rng, ("Q", "K", "V", "A", "Z"))
    b: Dim
    t: Dim
    dk: Dim
    dv: Dim
    dm: Dim
    if sym:
        b, t, dk, dv, dm = "B", "T", "d_k", "d_v", "d_model"
        setting = (
            r"The input $X$ has shape $[B, T, d_{\text{model}}]$, and one attention head projects it with "
            r"learned matrices $W^Q$, $W^K$ (width $d_k$) and $W^V$ (width $d_v$)."
        )
    else:
        dm_i = sizes.width(rng, d_model)
        # At least two heads: with one, a head is as wide as the model and the question is moot.
        h = sizes.heads_for(rng, dm_i, heads)
        dk = dv = numerics.head_dim(dm_i, h)
        # B, T, d_k and d_model all differ, so that no wrong axis can pass for the right one.
        b = sizes.batch(rng, batch)
        while batch is None and b in (dk, dm_i):
            b = sizes.batch(rng)
        t = sizes.length(rng, length, avoid=(b, dk, dm_i))
        dm = dm_i
        setting = (
            f"A batch of {b} sequences of {t} tokens, $X$ of shape $[{b}, {t}, {dm_i}]$, goes into "
            f"multi-head self-attention with $d_{{\\text{{model}}}} = {dm_i}$ and $h = {h}$ "
            f"head{'s' if h != 1 else ''}; each head has $d_k = d_v = d_{{\\text{{model}}}}/h$. "
            "Consider one head."
        )
    x_shape = (b, t, dm)
    q_shape = numerics.matmul_shape(x_shape, (dm, dk))
    v_shape = numerics.matmul_shape(x_shape, (dm, dv))
    a_shape = numerics.scores_shape(q_shape, q_shape)
    shapes: dict[str, tuple[Dim, ...]] = {
        "Q": q_shape,
        "K": q_shape,
        "V": v_shape,
        "A": a_shape,
        "Z": numerics.matmul_shape(a_shape, v_shape),
    }
    answer = shapes[name]
    prompt = f"{setting} What is the shape of {TENSOR_NAMES[name]}?"
    solution = [
        rf"The projections act on the last axis: $Q = XW^Q$ and $K = XW^K$ are "
        rf"$[{b}, {t}, {dk}]$, "
        rf"$V = XW^V$ is $[{b}, {t}, {dv}]$.",
        rf"$QK^\top$ pairs every query with every key: $[{t}, {dk}] \times "
        rf"[{dk}, {t}] = [{t}, {t}]$ per sequence, so $A$ is $[{b}, {t}, {t}]$.",
        rf"$Z = AV$: $[{t}, {t}] \times [{t}, {dv}] = [{t}, {dv}]$ per "
        rf"sequence, so $Z$ is $[{b}, {t}, {dv}]$.",
    ]
    full = x_shape
    mistakes = [
        Mistake(
            "no-batch-dim",
            answer[1:],
            "That drops the batch axis: every sequence of the batch has its own "
            f"{'weights' if name == 'A' else 'rows'}, so the shape keeps the batch axis in front.",
        )
    ]
    if name in ("Q", "K", "V", "Z"):
        mistakes.append(
            Mistake(
                "full-width-head",
                full,
                r"That is the model width. One head projects to its own width "
                r"($d_k$ or $d_v$); only the concatenation of all heads is $d_{\text{model}}$ wide.",
            )
        )
    if sym and name in ("V", "Z"):
        mistakes.append(
            Mistake(
                "dk-for-dv",
                (*answer[:-1], dk),
                r"That uses $d_k$, the width of the queries and keys. The values have their own width "
                r"$d_v$ (set by $W^V$), and the output $Z = AV$ mixes value vectors, so its last axis "
                r"is $d_v$.",
            )
        )
    if sym and name in ("Q", "K"):
        mistakes.append(
            Mistake(
                "dv-for-dk",
                (*answer[:-1], dv),
                r"That uses $d_v$, the width of the values. Queries and keys are compared by dot "
                r"products, so they share their own width $d_k$ (set by $W^Q$ and $W^K$).",
            )
        )
    if name == "Z":
        mistakes.append(
            Mistake(
                "weights-not-output",
                shapes["A"],
                "That is the shape of the weight matrix $A$; the output mixes value vectors, so it has "
                "one value-width vector per token.",
            )
        )
    if name == "A":
        pairs = "the weights $QK^\\top$ hold one number per (query, key) pair."
        if shapes["Z"] == shapes["Q"]:
            # With d_k = d_v the two wrong shapes are one: say both names, not only the first.
            per_token = [
                Mistake(
                    "queries-not-weights",
                    shapes["Q"],
                    "That is the shape of $Q$, $K$, $V$ and of the output $Z = AV$, one row per token; "
                    + pairs,
                )
            ]
        else:
            per_token = [
                Mistake(
                    "output-not-weights", shapes["Z"], f"That is the shape of the output $Z = AV$; {pairs}"
                ),
                Mistake("queries-not-weights", shapes["Q"], f"That is the shape of $Q$ (and $K$); {pairs}"),
            ]
        mistakes += [
            *per_token,
            Mistake(
                "kt-q-not-q-kt",
                (b, dk, dk),
                r"That is $K^\top Q$: the scores are $QK^\top$, one per (query, key) pair, so the last two "
                "axes are both the sequence length.",
            ),
        ]
    # The names each prompt uses; in numbers, d_k = d_v = d_model/h is a size to work out.
    named = (
        symbols(B=None, T=None, d_model=None, d_k=None, d_v=None)
        if sym
        else symbols(d_model=dm_i, h=h, d_k=None, d_v=None)
    )
    return Variant(
        prompt=prompt,
        answer=ShapeAnswer(answer, symbols=named),
        solution=solution,
        mistakes=mistakes,
        inputs={"symbolic": sym, "tensor": name, "shape_x": [b, t, dm]},
        hint=r"Projections change only the last axis; $QK^\top$ pairs every query with every key.",
    )
