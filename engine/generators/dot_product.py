"""Scaled dot-product attention by hand: the weights and outputs of a few tokens, and its mistakes."""

from __future__ import annotations

import math

import numpy as np

from attnquiz.engine import numerics
from attnquiz.engine.answers.kinds import MatrixAnswer, Mistake, VectorAnswer
from attnquiz.engine.answers.rounding import rounded_early
from attnquiz.engine.generators.additive import (
    DRAWS,
    cannot_draw,
    check_range,
    count_word,
    fixed,
    fixed_matrix,
    fixed_vector,
    given,
    given_matrix,
    given_vector,
)
from attnquiz.engine.generators.attention import (
    UNWEIGHTED_MEAN,
    as_matrix,
    distinct_rows,
    pick_token,
    weight_terms,
)
from attnquiz.engine.generators.common import THREE_PLACES, TWO_PLACES, keeps_all, mat, small_ints, vec
from attnquiz.engine.generators.plots import weight_map
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant

NO_SQRT_DK = (
    r"That leaves out the division by $\sqrt{d_k}$: the raw scores go into the softmax, so the "
    "weights come out sharper than scaled dot-product attention gives."
)
DIVIDE_BY_DK = (
    r"That divides the scores by $d_k$ instead of $\sqrt{d_k}$, which flattens the weights too much."
)
SOFTMAX_OVER_QUERIES = (
    "That normalises each column (over the queries). For each query the softmax runs over the "
    "keys, so every row of the weight matrix sums to 1."
)
KEYS_NOT_VALUES = (
    "That is the weighted sum of the keys. Keys only decide the weights; the output is the "
    "weighted sum of the values."
)
UNIFORM_ROWS = (
    r"That gives every key the same weight. Dividing by $\sqrt{d_k}$ shrinks the scores but keeps "
    "their order, so unequal scores still give unequal weights."
)


def sdpa_mistakes(q: np.ndarray, k: np.ndarray, v: np.ndarray, *, keys: bool = True) -> list[Mistake]:
    """The scaled dot-product misconceptions of the notes, each as the whole output it produces.

    ``keys`` False leaves out keys-not-values where it cannot be told apart (K = V).
    """
    d_k = q.shape[-1]
    raw = numerics.attention_scores(q, k, divisor=1.0)
    # What attention_scores(q, k) computes, QKᵀ/√d_k, without the second product (x / 1.0 is x).
    scaled = raw / math.sqrt(d_k)
    mistakes = [
        Mistake("no-sqrt-dk", mat(numerics.softmax(raw) @ v), NO_SQRT_DK),
        Mistake("softmax-over-queries", mat(numerics.softmax(scaled, axis=-2) @ v), SOFTMAX_OVER_QUERIES),
    ]
    if keys and k.shape[-1] == v.shape[-1]:
        mistakes.append(Mistake("keys-not-values", mat(numerics.softmax(scaled) @ k), KEYS_NOT_VALUES))
    mistakes.append(Mistake("uniform-rows", mat(np.tile(v.mean(axis=0), (q.shape[0], 1))), UNIFORM_ROWS))
    mistakes.append(Mistake("divide-by-dk", mat(numerics.softmax(raw / d_k) @ v), DIVIDE_BY_DK))
    return mistakes


def _row_of(mistake: Mistake, row: int) -> Mistake:
    """Row ``row`` of a whole-matrix mistake: what the misconception gives for one token."""
    value = mistake.value
    if not isinstance(value, tuple) or not isinstance(value[row], tuple):
        raise TypeError(f"{mistake.tag}: expected a matrix value, got {value!r}")
    return Mistake(mistake.tag, vec(value[row]), mistake.feedback, mistake.score)


def _sqrt_text(d_k: int) -> str:
    """``= √d_k`` exactly when it is whole, else ``≈ √d_k`` to three places, for a solution step."""
    root = float(np.sqrt(d_k))
    return f"= {given(root)}" if root.is_integer() else rf"\approx {fixed(root, 3)}"


@generator
def self_attention_weights(
    rng: np.random.Generator,
    /,
    *,
    tokens: int = 2,
    dim: int = 2,
    x: list[list[float]] | None = None,
    token: int | None = None,
) -> Variant:
    """The scaled dot-product weights of one token when W_Q = W_K = W_V = I (Q = K = V = X)."""
    check_range("tokens", tokens, 2, 4)
    check_range("dim", dim, 2, 3)
    for _ in range(DRAWS):
        emb = as_matrix(x, distinct_rows(rng, (tokens, dim), 0, 2))
        i = pick_token(token, rng, emb.shape[0])
        n, d_k = emb.shape
        raw = numerics.attention_scores(emb, emb, divisor=1.0)
        # The notes' identity example cannot tell the softmax axis apart; drawn embeddings can.
        # Checked first, as it is cheap.
        if x is None and len(set(raw[i - 1].tolist())) <= 1:
            continue
        # attention_scores(emb, emb) and attention_weights(emb, emb), from the raw scores
        # (x / 1.0 is x, so these are the same operations on the same numbers).
        scaled = raw / math.sqrt(d_k)
        weights = numerics.softmax(scaled)
        row = weights[i - 1]
        answer = VectorAnswer(vec(row), THREE_PLACES)
        mistakes = [
            Mistake("no-sqrt-dk", vec(numerics.softmax(raw)[i - 1]), NO_SQRT_DK),
            Mistake(
                "softmax-over-queries", vec(numerics.softmax(scaled, axis=-2)[i - 1]), SOFTMAX_OVER_QUERIES
            ),
            Mistake("uniform-rows", vec(np.full(n, 1.0 / n)), UNIFORM_ROWS),
            Mistake("divide-by-dk", vec(numerics.softmax(raw / d_k)[i - 1]), DIVIDE_BY_DK),
        ]
        if x is not None or keeps_all(answer, mistakes):
            break
    else:
        raise ValueError(cannot_draw("self_attention_weights"))
    exps = np.exp(scaled[i - 1])
    prompt = (
        f"A sentence has {count_word(n)} tokens with embeddings $X = {given_matrix(emb)}$ "
        "(one row per token). "
        r"Take $W^Q = W^K = W^V = I$, so that $Q = K = V = X$, and "
        f"$d_k = {d_k}$. Compute the scaled dot-product attention weights of token {i}: how much it "
        "attends to each token."
    )
    solution = [
        rf"Scores: $QK^\top = XX^\top = {given_matrix(raw)}$; token {i}'s row is "
        rf"${given_vector(raw[i - 1])}$.",
        rf"Divide by $\sqrt{{d_k}} = \sqrt{{{d_k}}} {_sqrt_text(d_k)}$: "
        rf"${fixed_vector(scaled[i - 1], 3)}$.",
        rf"Softmax the row: $\exp$ gives ${fixed_vector(exps, 3)}$ with sum ${fixed(float(exps.sum()), 3)}$, "
        rf"so the weights are $\alpha \approx {fixed_vector(row, 3)}$.",
    ]
    return Variant(
        prompt=prompt,
        answer=answer,
        solution=solution,
        mistakes=mistakes,
        inputs={"x": emb, "token": i},
        hint=r"Dot the token's query with every key, divide by $\sqrt{d_k}$, then softmax the row.",
        figures=[
            weight_map(
                weights,
                title=r"Attention weights $\operatorname{softmax}(QK^\top/\sqrt{d_k})$",
                caption=f"Row {i} is token {i}'s answer; every row sums to 1.",
                decimals=3,
            )
        ],
    )


def _scalar_or_vector(row: np.ndarray) -> str:
    """A one-entry row as the number itself (the notes write q = 1), longer rows as vectors."""
    return given(float(row[0])) if len(row) == 1 else given_vector(row)


@generator
def values_not_keys(
    rng: np.random.Generator,
    /,
    *,
    tokens: int = 2,
    key_dim: int = 2,
    q: list[float] | None = None,
    k: list[list[float]] | None = None,
    v: list[list[float]] | None = None,
) -> Variant:
    """One query attends over a few tokens: the output is the weighted sum of the values, not the keys."""
    check_range("tokens", tokens, 2, 4)
    check_range("key_dim", key_dim, 1, 3)
    while True:
        query = np.asarray(q if q is not None else small_ints(rng, key_dim, -1, 2), dtype=float)
        keys = as_matrix(k, distinct_rows(rng, (tokens, len(query)), -1, 1))
        vals = as_matrix(v, distinct_rows(rng, (keys.shape[0], 2), 0, 2))
        raw_scores = keys @ query
        # Drawn keys must differ from the values, or summing the keys would give the right answer.
        if q is not None or (len(set(raw_scores.tolist())) > 1 and not np.array_equal(keys, vals)):
            break
    if keys.shape[0] != vals.shape[0]:
        raise ValueError(f"{keys.shape[0]} keys need {keys.shape[0]} values, not {vals.shape[0]}")
    n, d_k = keys.shape
    scores = numerics.attention_scores(query[None, :], keys)[0]
    weights = numerics.softmax(scores)
    z = numerics.weighted_sum(weights, vals)
    exps = np.exp(scores)
    prompt = (
        f"One query attends to {count_word(n)} tokens with scaled dot-product attention ($d_k = {d_k}$). "
        "The query "
        f"is $q = {_scalar_or_vector(query)}$, the keys are "
        + ", ".join(rf"$k_{j + 1} = {_scalar_or_vector(row)}$" for j, row in enumerate(keys))
        + ", and the values are "
        + ", ".join(rf"$v_{j + 1} = {given_vector(row)}$" for j, row in enumerate(vals))
        + ". Compute the attention output $z$."
    )
    scaling = (
        r"; with $d_k = 1$, dividing by $\sqrt{d_k}$ changes nothing"
        if d_k == 1
        else rf", and divided by $\sqrt{{{d_k}}}$ they are ${fixed_vector(scores, 3)}$"
    )
    solution = [
        rf"Scores: $q \cdot k_j$ for each key gives ${given_vector(raw_scores)}${scaling}.",
        rf"Softmax over the keys: $\exp$ gives ${fixed_vector(exps, 3)}$, so the weights are "
        rf"${fixed_vector(weights, 3)}$.",
        rf"Weight the values (not the keys): $z = {weight_terms(weights, vals, 3)} "
        rf"\approx {fixed_vector(z, 2)}$.",
    ]
    key_sum = numerics.weighted_sum(weights, keys)
    mistakes = []
    if d_k == vals.shape[1]:
        mistakes.append(Mistake("keys-not-values", vec(key_sum), KEYS_NOT_VALUES))
    elif not key_sum.any():
        # Summing zero keys gives the zero vector whatever its width: the notes' own example.
        mistakes.append(Mistake("keys-not-values", vec(np.zeros(vals.shape[1])), KEYS_NOT_VALUES))
    mistakes += [
        Mistake("no-sqrt-dk", vec(numerics.weighted_sum(numerics.softmax(raw_scores), vals)), NO_SQRT_DK),
        Mistake(
            "scores-as-weights",
            vec(numerics.weighted_sum(scores, vals)),
            "That weights the values by the scores themselves. The scores go through a softmax over "
            "the keys first, so that the weights are positive and sum to 1.",
        ),
        Mistake("unweighted-mean", vec(vals.mean(axis=0)), UNWEIGHTED_MEAN),
    ]
    mistakes += rounded_early(
        TWO_PLACES, weights, lambda w: numerics.weighted_sum(np.asarray(w), vals), "the weights"
    )
    return Variant(
        prompt=prompt,
        answer=VectorAnswer(vec(z), TWO_PLACES),
        solution=solution,
        mistakes=mistakes,
        inputs={"q": query, "k": keys, "v": vals},
        hint="The keys only decide the weights; the output mixes the values.",
    )


@generator
def sdpa_outputs(
    rng: np.random.Generator,
    /,
    *,
    tokens: int = 2,
    d_k: int = 2,
    d_v: int = 2,
    q: list[list[float]] | None = None,
    k: list[list[float]] | None = None,
    v: list[list[float]] | None = None,
) -> Variant:
    """The whole output matrix softmax(QKᵀ/√d_k)·V for a few tokens."""
    check_range("tokens", tokens, 2, 3)
    check_range("d_k", d_k, 1, 3)
    check_range("d_v", d_v, 1, 3)
    given_any = q is not None or k is not None or v is not None
    for _ in range(DRAWS):
        qm = as_matrix(q, distinct_rows(rng, (tokens, d_k), 0, 2))
        km = as_matrix(k, distinct_rows(rng, (tokens, d_k), 0, 2))
        vm = as_matrix(v, distinct_rows(rng, (km.shape[0], d_v), 0, 4))
        raw = numerics.attention_scores(qm, km, divisor=1.0)
        # Drawn tokens attend differently (no two rows of the output alike), every column of V varies,
        # and every misconception gives a wrong matrix of its own. The checks on the inputs come
        # first: they are cheap and reject most draws before any softmax is computed.
        if not (
            given_any
            or (all(len(set(r.tolist())) > 1 for r in raw) and all(len(set(c.tolist())) > 1 for c in vm.T))
        ):
            continue
        # softmax(QKᵀ/√d_k)·V from the raw scores: the same operations scaled_dot_product_attention
        # does (x / 1.0 is x), kept for the solution instead of being computed twice.
        scaled = raw / math.sqrt(qm.shape[1])
        weights = numerics.softmax(scaled)
        out = weights @ vm
        if not (given_any or len({tuple(np.round(r, 2)) for r in out}) == len(out)):
            continue
        answer = MatrixAnswer(mat(out), TWO_PLACES)
        mistakes = sdpa_mistakes(qm, km, vm)
        if given_any or keeps_all(answer, mistakes):
            break
    else:
        raise ValueError(cannot_draw("sdpa_outputs"))
    # AV mixes the rows of V with the weights: rounding the weights first is the classic slip.
    mistakes += rounded_early(
        answer.tolerance, weights.ravel(), lambda w: np.reshape(w, weights.shape) @ vm, "the weights"
    )
    width = qm.shape[1]
    prompt = (
        f"{count_word(qm.shape[0]).capitalize()} tokens have $Q = {given_matrix(qm)}$, "
        f"$K = {given_matrix(km)}$ and "
        rf"$V = {given_matrix(vm)}$. Compute $\operatorname{{softmax}}(QK^\top / \sqrt{{d_k}})\,V$ with "
        f"$d_k = {width}$."
    )
    solution = [
        rf"$QK^\top = {given_matrix(raw)}$.",
        rf"Divide by $\sqrt{{{width}}} {_sqrt_text(width)}$: ${fixed_matrix(scaled, 3)}$.",
        rf"Softmax each row (over the keys): $A \approx {fixed_matrix(weights, 3)}$; every row sums to 1.",
        rf"Multiply by $V$: $AV \approx {fixed_matrix(out, 2)}$.",
    ]
    return Variant(
        prompt=prompt,
        answer=answer,
        solution=solution,
        mistakes=mistakes,
        inputs={"q": qm, "k": km, "v": vm},
        hint=r"Score every query against every key, divide by $\sqrt{d_k}$, softmax each row, then mix "
        "the rows of $V$.",
        figures=[
            weight_map(
                weights,
                title=r"Attention weights $A = \operatorname{softmax}(QK^\top/\sqrt{d_k})$",
                caption="Row $i$ mixes the rows of $V$ with these weights; every row sums to 1.",
                decimals=3,
            )
        ],
    )


@generator
def sdpa_token_output(
    rng: np.random.Generator,
    /,
    *,
    tokens: int = 3,
    dim: int = 2,
    x: list[list[float]] | None = None,
    token: int | None = None,
) -> Variant:
    """One token's new vector under scaled dot-product self-attention with Q = K = V = X."""
    check_range("tokens", tokens, 2, 4)
    check_range("dim", dim, 2, 3)
    for _ in range(DRAWS):
        emb = as_matrix(x, distinct_rows(rng, (tokens, dim), 0, 2))
        i = pick_token(token, rng, emb.shape[0])
        # A drawn token must score the tokens differently; checked first, as it is cheap.
        if x is None and len(set((emb @ emb.T)[i - 1].tolist())) <= 1:
            continue
        out = numerics.scaled_dot_product_attention(emb, emb, emb)
        answer = VectorAnswer(vec(out[i - 1]), TWO_PLACES)
        mistakes = [_row_of(m, i - 1) for m in sdpa_mistakes(emb, emb, emb, keys=False)]
        if x is not None or keeps_all(answer, mistakes):
            break
    else:
        raise ValueError(cannot_draw("sdpa_token_output"))
    n, d_k = emb.shape
    raw = numerics.attention_scores(emb, emb, divisor=1.0)[i - 1]
    scaled = numerics.attention_scores(emb, emb)[i - 1]
    weights = numerics.softmax(scaled)
    mistakes += rounded_early(answer.tolerance, weights, lambda w: np.asarray(w) @ emb, "the weights")
    exps = np.exp(scaled)
    prompt = (
        f"After projection, {count_word(n)} tokens have $Q = K = V = {given_matrix(emb)}$ "
        "(row $i$ is token $i$) and "
        f"$d_k = {d_k}$. Compute token {i}'s new vector after scaled dot-product self-attention."
    )
    solution = [
        rf"Token {i}'s query against every key: $q_{i} K^\top = {given_vector(raw)}$.",
        rf"Divide by $\sqrt{{{d_k}}} {_sqrt_text(d_k)}$: ${fixed_vector(scaled, 3)}$.",
        rf"Softmax: $\exp$ gives ${fixed_vector(exps, 3)}$ with sum ${fixed(float(exps.sum()), 3)}$, so the "
        rf"weights are ${fixed_vector(weights, 3)}$.",
        rf"Mix the values: ${weight_terms(weights, emb, 3)} \approx {fixed_vector(out[i - 1], 2)}$.",
    ]
    return Variant(
        prompt=prompt,
        answer=answer,
        solution=solution,
        mistakes=mistakes,
        inputs={"x": emb, "token": i},
        hint=rf"Only row {i} of the weight matrix is needed: scores, divide by $\sqrt{{d_k}}$, softmax, mix.",
        figures=[
            weight_map(
                numerics.softmax(numerics.attention_scores(emb, emb)),
                title=r"Attention weights $\operatorname{softmax}(QK^\top/\sqrt{d_k})$",
                caption=f"Token {i}'s row holds the weights that mix the values; every row sums to 1.",
                decimals=3,
            )
        ],
    )
