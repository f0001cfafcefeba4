"""The code tasks: what a student writes, the reference (`attnquiz.engine.code.reference`), the named
mistakes as mutants of it, and how each task's test inputs are drawn.

A mutant is the reference with one mistake from the notes' "Mistakes people make" applied; a student
whose outputs equal a mutant's on every test made that mistake. Each task draws its inputs so that the
reference and every mutant disagree on at least one test (`quiz check` proves it over many seeds):
shapes where a transposition would pass unnoticed are avoided, and the edge cases the notes name —
scores large enough to overflow a naive softmax, a constant row for LayerNorm's epsilon, a fully
masked row — are among the hidden tests. The PyTorch task (a module, not a function) is in
`attnquiz.engine.code.torch_attention`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from attnquiz.engine.code import reference as ref
from attnquiz.engine.code.task_model import MASK_AFTER, MASK_ZERO, Args, CodeTask, Mutant
from attnquiz.engine.code.torch_attention import SELF_ATTENTION


def _ints(rng: np.random.Generator, shape: tuple[int, ...], low: int = -3, high: int = 4) -> Any:
    return rng.integers(low, high, size=shape).astype(float)


def _normal(rng: np.random.Generator, shape: tuple[int, ...], scale: float = 1.0) -> Any:
    return np.round(rng.normal(0.0, scale, size=shape), 3)


def _sizes(rng: np.random.Generator) -> tuple[int, int, int]:
    """(T, d_k, d_v) with T, d_k and d_v all different, so that a forgotten transpose or keys
    taken for values change the shape."""
    while True:
        t, d_k, d_v = (int(x) for x in rng.integers(2, 7, size=3))
        if len({t, d_k, d_v}) == 3:
            return t, d_k, d_v


def _stable(x: Any, axis: int = -1) -> Any:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _naive(x: Any, axis: int = -1) -> Any:
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


# ---- feedback, in the words of the notes ----------------------------------------------------

NO_SCALE = (
    r"You left out the $1/\sqrt{d_k}$: the scores of long vectors grow like $\sqrt{d_k}$ and make the "
    "softmax peaky. Divide `Q @ K.T` by `np.sqrt(d_k)`, with `d_k = Q.shape[-1]`."
)
SCALE_BY_D = (
    r"You divided by $d_k$; the scale is $\sqrt{d_k}$ (it brings the variance of a score back to about 1)."
)
WRONG_AXIS = (
    "Your softmax runs over the wrong axis (over the queries, down each column). Softmax runs over the "
    "keys for each query: `axis=-1`, so that each row sums to 1."
)
NO_TRANSPOSE = (
    "`Q @ K` is {shape:Q} @ {shape:K}: the inner sizes must match; transpose K. `Q @ K.T` is "
    "(T, d_k) @ (d_k, T), a (T, T) score matrix."
)
KEYS_NOT_VALUES = "The weighted sum is over the values, not the keys: `weights @ V`."
UNSTABLE = (
    "Your softmax overflows on large scores: `np.exp(1000)` is `inf` and `inf / inf` is `nan`. "
    "Subtract each row's maximum before `np.exp` (it changes nothing else)."
)
NO_KEEPDIMS = (
    "The row sums need `keepdims=True`: `e.sum(axis=-1)` has shape (T,), which NumPy lines up with "
    "the columns, not the rows."
)
WHOLE_MATRIX = "You divided by the sum of the whole matrix; each row is normalised by its own sum."
WRONG_TRIANGLE = (
    "That is the wrong triangle: query $i$ may see keys $1, \\ldots, i$ (itself and earlier tokens), so "
    "the mask is lower-triangular: `np.tril`."
)
STRICT = "A token may look at itself: the diagonal is kept (`np.tril`, not `np.tril(..., k=-1)`)."
MASKED_ROW_NAN = (
    "A row with every key masked gives `nan` (`exp(-inf)` sums to 0 and 0/0 is `nan`); such a row "
    "(a padding query) must get zero weights."
)
RESHAPE_ONLY = (
    "`X.reshape(h, T, d_k)` keeps the numbers in memory order, so a head gets whole tokens, not a "
    "slice of every token's features. Reshape to (T, h, d_k), then transpose to (h, T, d_k)."
)
NO_HEAD_AXIS_FIRST = (
    "The heads' axis comes first: (h, T, d_k). Transpose the (T, h, d_k) reshape: `.transpose(1, 0, 2)`."
)
INTERLEAVED = (
    "Head $i$ takes the contiguous columns $i\\,d_k$ to $(i+1)\\,d_k - 1$, not every $h$-th column: "
    "reshape to (T, h, d_k), not (T, d_k, h)."
)
MERGE_RESHAPE_ONLY = (
    "`Z.reshape(T, h * d_k)` mixes tokens across heads: bring the tokens first with `Z.transpose(1, 0, 2)`, "
    "then reshape, so each row is one token's heads side by side."
)
STACKED = (
    "The heads are concatenated along the features, not stacked as more tokens: the result is (T, h·d_k)."
)
SUMMED = "Heads are concatenated, not added: the result is (T, h·d_k), and $W^O$ mixes them afterwards."
EXPONENT_I = (
    "The exponent is $2i/d$ for pair $i$ (columns $2i$ and $2i+1$), not $i/d$: `10000 ** (2 * i / d_model)`."
)
COLUMN_INDEX = (
    "Both columns of a pair share one frequency, $10000^{2i/d}$: the cosine column $2i+1$ uses the "
    "exponent of its pair, not its own column index."
)
SWAPPED = "Sine goes in the even columns ($2i$) and cosine in the odd ones ($2i+1$)."
HALVES = "The sines and cosines interleave (even columns sine, odd columns cosine); they are not two halves."
FROM_ONE = "Positions start at 0: the first token's encoding is [0, 1, 0, 1, …]."
LN_WRONG_AXIS = (
    "LayerNorm normalises each token's vector over its features (`axis=-1`), not each feature over the "
    "tokens (that is closer to BatchNorm)."
)
UNBIASED = "LayerNorm uses the population variance (divide by $d$), NumPy's default `var`; not `ddof=1`."
NO_EPS = (
    "Without the $\\epsilon$ a constant vector divides 0 by 0 and gives `nan`: the tiny $\\epsilon$ "
    "inside the square root keeps it finite."
)
NO_AFFINE = "You left out the learned scale and shift: `gamma * x_hat + beta`."
NO_SQRT = "Divide by the standard deviation, $\\sqrt{\\sigma^2 + \\epsilon}$, not by the variance."
NO_TANH = "The score is $v^\\top \\tanh(W s + U h_j)$: the tanh comes before the dot product with $v$."
TANH_OUTSIDE = "tanh goes inside, on the vector $W s + U h_j$; then the dot product with $v$ gives the score."
SUM_NOT_V = "The last step is the dot product with the learned vector $v$, not a plain sum of the entries."
SOFTMAXED = "These are the weights (the softmax of the scores); the task asks for the raw scores $e_j$."
NO_BIASES = (
    "You counted the weights only: every linear layer has a bias too (4 d in attention, d_ff + d in the FFN)."
)
NO_LAYERNORM = (
    "An encoder layer has two LayerNorms, each with a scale and a shift of width d: 4 d parameters."
)
NO_W_O = "Attention has four d × d matrices: $W^Q$, $W^K$, $W^V$ and the output projection $W^O$."
ONE_LAYERNORM = "There are two LayerNorms (after attention and after the FFN), each with 2 d parameters."


# ---- the tasks ------------------------------------------------------------------------------


def _qkv(rng: np.random.Generator) -> Args:
    t, d_k, d_v = _sizes(rng)
    return _normal(rng, (t, d_k)), _normal(rng, (t, d_k)), _normal(rng, (t, d_v))


def _qkv_edges(rng: np.random.Generator) -> list[Args]:
    q, k, v = _qkv(rng)
    # Every score above 700 (30² √d_k at least): np.exp overflows in a naive softmax.
    return [(np.abs(q) * 40 + 30, np.abs(k) * 40 + 30, v)]


def _scaled(q: Any, k: Any) -> Any:
    return q @ k.T / np.sqrt(q.shape[-1])


ATTENTION_MUTANTS = (
    Mutant("no-scale", lambda q, k, v: _stable(q @ k.T) @ v, NO_SCALE),
    Mutant("scale-by-d", lambda q, k, v: _stable(q @ k.T / q.shape[-1]) @ v, SCALE_BY_D),
    Mutant("softmax-over-queries", lambda q, k, v: _stable(_scaled(q, k), axis=0) @ v, WRONG_AXIS),
    Mutant("no-transpose", lambda q, k, v: _stable(q @ k / np.sqrt(q.shape[-1])) @ v, NO_TRANSPOSE),
    Mutant("keys-not-values", lambda q, k, v: _stable(_scaled(q, k)) @ k, KEYS_NOT_VALUES),
    Mutant("unstable-softmax", lambda q, k, v: _naive(_scaled(q, k)) @ v, UNSTABLE),
)
WEIGHTS_MUTANTS = (
    Mutant("no-scale", lambda q, k: _stable(q @ k.T), NO_SCALE),
    Mutant("scale-by-d", lambda q, k: _stable(q @ k.T / q.shape[-1]), SCALE_BY_D),
    Mutant("softmax-over-queries", lambda q, k: _stable(_scaled(q, k), axis=0), WRONG_AXIS),
    Mutant("no-transpose", lambda q, k: _stable(q @ k / np.sqrt(q.shape[-1])), NO_TRANSPOSE),
    Mutant("unstable-softmax", lambda q, k: _naive(_scaled(q, k)), UNSTABLE),
)


def _scores(rng: np.random.Generator) -> Args:
    while True:
        t, s = (int(x) for x in rng.integers(2, 7, size=2))
        if t != s:
            return (_normal(rng, (t, s), 2.0),)


def _score_edges(rng: np.random.Generator) -> list[Args]:
    (x,) = _scores(rng)
    return [(np.abs(x) * 300 + 1000,), (np.zeros((3, 4)),)]


SOFTMAX_MUTANTS = (
    Mutant("unstable-softmax", _naive, UNSTABLE),
    Mutant("softmax-over-queries", lambda x: _stable(x, axis=0), WRONG_AXIS),
    Mutant(
        "no-keepdims",
        lambda x: (
            np.exp(x - x.max(axis=-1, keepdims=True)) / np.exp(x - x.max(axis=-1, keepdims=True)).sum(axis=-1)
        ),
        NO_KEEPDIMS,
    ),
    Mutant("whole-matrix", lambda x: np.exp(x - x.max()) / np.exp(x - x.max()).sum(), WHOLE_MATRIX),
)


def _length(rng: np.random.Generator) -> Args:
    return (int(rng.integers(3, 8)),)


CAUSAL_MUTANTS = (
    Mutant("wrong-triangle", lambda t: np.triu(np.ones((t, t), dtype=bool)), WRONG_TRIANGLE),
    Mutant("no-self", lambda t: np.tril(np.ones((t, t), dtype=bool), k=-1), STRICT),
)


def _masked(rng: np.random.Generator) -> Args:
    while True:
        t, s = (int(x) for x in rng.integers(2, 7, size=2))
        mask = rng.random((t, s)) < 0.6
        if mask.any(axis=-1).all() and not mask.all():
            return _normal(rng, (t, s), 2.0), mask


def _masked_edges(rng: np.random.Generator) -> list[Args]:
    scores, mask = _masked(rng)
    hidden_row = mask.copy()
    hidden_row[0] = False  # a padding query: nothing to look at
    return [(scores, hidden_row), (np.abs(scores) * 300 + 1000, mask)]


def _minus_inf(scores: Any, mask: Any) -> Any:
    return np.where(mask, scores, -np.inf)


MASKED_MUTANTS = (
    Mutant("masked-score-zero", lambda s, m: _stable(np.where(m, s, 0.0)), MASK_ZERO),
    Mutant("mask-after-softmax", lambda s, m: _stable(s) * m, MASK_AFTER),
    Mutant("masked-row-nan", lambda s, m: _stable(_minus_inf(s, m)), MASKED_ROW_NAN),
    Mutant(
        "unstable-softmax",
        lambda s, m: ref.masked_softmax(s, m) if np.abs(s).max() < 700 else _naive(_minus_inf(s, m)),
        UNSTABLE,
    ),
)


def _heads_input(rng: np.random.Generator) -> Args:
    while True:
        t, h, d_k = (int(x) for x in rng.integers(2, 5, size=3))
        if t != h and h != d_k:
            return _ints(rng, (t, h * d_k), -9, 10), h


SPLIT_MUTANTS = (
    Mutant("reshape-only", lambda x, h: x.reshape(h, x.shape[0], x.shape[1] // h), RESHAPE_ONLY),
    Mutant("no-transpose", lambda x, h: x.reshape(x.shape[0], h, x.shape[1] // h), NO_HEAD_AXIS_FIRST),
    Mutant(
        "interleaved-columns",
        lambda x, h: x.reshape(x.shape[0], x.shape[1] // h, h).transpose(2, 0, 1),
        INTERLEAVED,
    ),
)


def _merge_input(rng: np.random.Generator) -> Args:
    while True:
        h, t, d_k = (int(x) for x in rng.integers(2, 5, size=3))
        if t != h and h != d_k and t != d_k:
            return (_ints(rng, (h, t, d_k), -9, 10),)


MERGE_MUTANTS = (
    Mutant("reshape-only", lambda z: z.reshape(z.shape[1], z.shape[0] * z.shape[2]), MERGE_RESHAPE_ONLY),
    Mutant("stacked-heads", lambda z: z.reshape(z.shape[0] * z.shape[1], z.shape[2]), STACKED),
    Mutant("summed-heads", lambda z: z.sum(axis=0), SUMMED),
)


def _pe_size(rng: np.random.Generator) -> Args:
    return int(rng.integers(3, 9)), 2 * int(rng.integers(2, 7))


def _pe(t: int, d: int, *, exponent: Callable[[Any, int], Any] | None = None, start: int = 0) -> Any:
    positions = np.arange(start, start + t)[:, None]
    i = np.arange(d // 2)[None, :]
    angles = positions / 10000 ** ((exponent or (lambda i, d: 2 * i / d))(i, d))
    pe = np.zeros((t, d))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return pe


def _pe_columns(t: int, d: int) -> Any:
    columns = np.arange(d)[None, :]
    angles = np.arange(t)[:, None] / 10000 ** (columns / d)
    return np.where(columns % 2 == 0, np.sin(angles), np.cos(angles))


def _pe_swapped(t: int, d: int) -> Any:
    pe = _pe(t, d)
    return np.concatenate([pe[:, 1::2, None], pe[:, 0::2, None]], axis=2).reshape(t, d)


def _pe_halves(t: int, d: int) -> Any:
    pe = _pe(t, d)
    return np.concatenate([pe[:, 0::2], pe[:, 1::2]], axis=1)


PE_MUTANTS = (
    Mutant("exponent-i", lambda t, d: _pe(t, d, exponent=lambda i, d: i / d), EXPONENT_I),
    Mutant("column-exponent", _pe_columns, COLUMN_INDEX),
    Mutant("sin-cos-swapped", _pe_swapped, SWAPPED),
    Mutant("halves", _pe_halves, HALVES),
    Mutant("positions-from-one", lambda t, d: _pe(t, d, start=1), FROM_ONE),
)


def _ln_input(rng: np.random.Generator) -> Args:
    while True:
        t, d = (int(x) for x in rng.integers(2, 7, size=2))
        if t != d:
            x = _normal(rng, (t, d), 3.0) + _ints(rng, (t, 1), -5, 6)
            return x, _normal(rng, (d,)) + 1.0, _normal(rng, (d,))


def _ln_edges(rng: np.random.Generator) -> list[Args]:
    x, gamma, beta = _ln_input(rng)
    x = x.copy()
    x[0] = 7.0  # a constant vector: the notes' "why the tiny epsilon"
    return [(x, gamma, beta)]


def _ln(
    x: Any, gamma: Any, beta: Any, *, axis: int = -1, ddof: int = 0, eps: float = 1e-5, root: bool = True
) -> Any:
    mean = x.mean(axis=axis, keepdims=True)
    var = x.var(axis=axis, keepdims=True, ddof=ddof)
    spread = np.sqrt(var + eps) if root else var + eps
    return gamma * (x - mean) / spread + beta


LN_MUTANTS = (
    Mutant("over-tokens", lambda x, g, b: _ln(x, g, b, axis=0), LN_WRONG_AXIS),
    Mutant("unbiased-variance", lambda x, g, b: _ln(x, g, b, ddof=1), UNBIASED),
    Mutant("no-epsilon", lambda x, g, b: _ln(x, g, b, eps=0.0), NO_EPS),
    Mutant("no-scale-shift", lambda x, g, b: _ln(x, 1.0, 0.0), NO_AFFINE),
    Mutant("divide-by-variance", lambda x, g, b: _ln(x, g, b, root=False), NO_SQRT),
)


def _additive_input(rng: np.random.Generator) -> Args:
    while True:
        t, d_s, d_h, a = (int(x) for x in rng.integers(2, 5, size=4))
        s, h = _ints(rng, (d_s,), -2, 3), _ints(rng, (t, d_h), -2, 3)
        w, u, v = _normal(rng, (a, d_s), 0.5), _normal(rng, (a, d_h), 0.5), _ints(rng, (a,), -2, 3)
        if np.any(v):
            return s, h, w, u, v


def _pre(s: Any, h: Any, w: Any, u: Any) -> Any:
    return s @ w.T + h @ u.T


ADDITIVE_MUTANTS = (
    Mutant("no-tanh", lambda s, h, w, u, v: _pre(s, h, w, u) @ v, NO_TANH),
    Mutant("tanh-outside", lambda s, h, w, u, v: np.tanh(_pre(s, h, w, u) @ v), TANH_OUTSIDE),
    Mutant("sum-not-v", lambda s, h, w, u, v: np.tanh(_pre(s, h, w, u)).sum(axis=-1), SUM_NOT_V),
    Mutant("softmaxed", lambda s, h, w, u, v: _stable(np.tanh(_pre(s, h, w, u)) @ v), SOFTMAXED),
)


def _widths(rng: np.random.Generator) -> Args:
    d = int(rng.choice([64, 128, 256, 512, 768, 1024]))
    return d, int(d * rng.choice([2, 4, 4, 8]))


ENCODER_MUTANTS = (
    Mutant("no-biases", lambda d, f: 4 * d * d + 2 * d * f + 4 * d, NO_BIASES),
    Mutant("no-layernorm", lambda d, f: 4 * d * d + 4 * d + 2 * d * f + f + d, NO_LAYERNORM),
    Mutant("no-w-o", lambda d, f: 3 * d * d + 3 * d + 2 * d * f + f + d + 4 * d, NO_W_O),
    Mutant("one-layernorm", lambda d, f: 4 * d * d + 4 * d + 2 * d * f + f + d + 2 * d, ONE_LAYERNORM),
)


def _none(rng: np.random.Generator) -> list[Args]:
    return []


TASKS: dict[str, CodeTask] = {
    task.name: task
    for task in (
        CodeTask(
            "attention",
            "attention",
            ("Q", "K", "V"),
            "Write `attention(Q, K, V)`: scaled dot-product attention, $\\operatorname{softmax}(Q K^\\top / "
            "\\sqrt{d_k})\\,V$, "
            "for one sequence. `Q` and `K` are (T, d_k) and `V` is (T, d_v) NumPy arrays; return the (T, "
            "d_v) output.",
            ref.attention,
            ATTENTION_MUTANTS,
            _qkv,
            _qkv_edges,
        ),
        CodeTask(
            "attention-weights",
            "attention_weights",
            ("Q", "K"),
            "Write `attention_weights(Q, K)`: the attention weights $\\operatorname{softmax}(Q K^\\top / "
            "\\sqrt{d_k})$, one row "
            "per query. `Q` and `K` are (T, d_k) NumPy arrays; return the (T, T) weights, each row summing "
            "to 1.",
            ref.attention_weights,
            WEIGHTS_MUTANTS,
            lambda rng: _qkv(rng)[:2],
            lambda rng: [case[:2] for case in _qkv_edges(rng)],
        ),
        CodeTask(
            "softmax",
            "softmax",
            ("x",),
            "Write `softmax(x)`: the softmax of each row of a 2-D array `x` (over the last axis), "
            "numerically "
            "stable: it must work for scores in the thousands.",
            ref.softmax,
            SOFTMAX_MUTANTS,
            _scores,
            _score_edges,
        ),
        CodeTask(
            "causal-mask",
            "causal_mask",
            ("T",),
            "Write `causal_mask(T)`: a (T, T) boolean array that is True where query $i$ may look at key $j$ "
            "(a decoder's causal mask: itself and earlier tokens).",
            ref.causal_mask,
            CAUSAL_MUTANTS,
            _length,
            lambda rng: [(1,), (2,), (9,)],
        ),
        CodeTask(
            "masked-softmax",
            "masked_softmax",
            ("scores", "mask"),
            "Write `masked_softmax(scores, mask)`: the softmax of each row of `scores` over the keys where "
            "the "
            "boolean `mask` is True; hidden keys get weight exactly 0. A row whose keys are all hidden (a "
            "padding query) gets all-zero weights, not `nan`. Scores may be in the thousands.",
            ref.masked_softmax,
            MASKED_MUTANTS,
            _masked,
            _masked_edges,
        ),
        CodeTask(
            "split-heads",
            "split_heads",
            ("X", "h"),
            "Write `split_heads(X, h)`: split a (T, d_model) array into `h` heads of width $d_k = "
            "d_{model}/h$, "
            "returning an (h, T, d_k) array whose head $i$ holds columns $i\\,d_k$ to $(i+1)\\,d_k - 1$.",
            ref.split_heads,
            SPLIT_MUTANTS,
            _heads_input,
            _none,
        ),
        CodeTask(
            "merge-heads",
            "merge_heads",
            ("Z",),
            "Write `merge_heads(Z)`: the inverse of splitting into heads. `Z` is (h, T, d_k); return the "
            "(T, h·d_k) concatenation, each token's heads side by side, head 0 first.",
            ref.merge_heads,
            MERGE_MUTANTS,
            _merge_input,
            _none,
        ),
        CodeTask(
            "positional-encoding",
            "positional_encoding",
            ("T", "d_model"),
            "Write `positional_encoding(T, d_model)`: the (T, d_model) sinusoidal encoding of positions "
            "$0, \\ldots, T-1$, with $PE_{p,2i} = \\sin(p / 10000^{2i/d})$ and $PE_{p,2i+1} = \\cos(p / "
            "10000^{2i/d})$ "
            "($d$ even).",
            ref.positional_encoding,
            PE_MUTANTS,
            _pe_size,
            lambda rng: [(1, 2), (2, 16)],
        ),
        CodeTask(
            "layer-norm",
            "layer_norm",
            ("x", "gamma", "beta", "eps=1e-5"),
            "Write `layer_norm(x, gamma, beta, eps=1e-5)`: LayerNorm of each row of the (T, d) array `x` "
            "(each token's vector): subtract its mean, divide by $\\sqrt{\\sigma^2 + \\epsilon}$, then "
            "scale by "
            "`gamma` and shift by `beta` (both of width d).",
            ref.layer_norm,
            LN_MUTANTS,
            _ln_input,
            _ln_edges,
        ),
        CodeTask(
            "additive-scores",
            "additive_scores",
            ("s", "H", "W", "U", "v"),
            "Write `additive_scores(s, H, W, U, v)`: Bahdanau's additive scores $e_j = v^\\top \\tanh(W s + "
            "U h_j)$ "
            "of the decoder state `s` against every encoder state $h_j$ (the rows of `H`); return the vector "
            "of the T scores (not the softmax weights).",
            ref.additive_scores,
            ADDITIVE_MUTANTS,
            _additive_input,
            _none,
        ),
        CodeTask(
            "encoder-layer-params",
            "encoder_layer_params",
            ("d_model", "d_ff"),
            "Write `encoder_layer_params(d_model, d_ff)`: the number of parameters of one Transformer "
            "encoder "
            "layer: multi-head self-attention ($W^Q, W^K, W^V, W^O$ with biases), the feed-forward network "
            "(two linear layers with biases) and its two LayerNorms. Return an integer.",
            ref.encoder_layer_params,
            ENCODER_MUTANTS,
            _widths,
            lambda rng: [(2, 8), (512, 2048)],
            hidden=4,
        ),
        SELF_ATTENTION,
    )
}


def task(name: str) -> CodeTask:
    """The code task called ``name``."""
    return TASKS[name]
