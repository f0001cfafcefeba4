"""Reference numerics of the course: pure numpy functions, no randomness, no formatting.

Every answer a generator states is computed here, so that it can be checked on its own against
the notes' worked numbers and against PyTorch. Conventions follow the notes: row vectors, inputs of
shape [..., T, d], ``W`` applied on the right (``x @ W``), softmax over the last axis (the keys).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from msgspec import Struct

if TYPE_CHECKING:  # numpy.typing only names types: importing it costs every question a millisecond
    from numpy.typing import ArrayLike, NDArray

    Array = NDArray[np.float64]


# ---------------------------------------------------------------------------------------------
# Softmax and attention
# ---------------------------------------------------------------------------------------------


def softmax(scores: ArrayLike, axis: int = -1, mask: ArrayLike | None = None) -> Array:
    """Numerically stable softmax; entries where ``mask`` is False get weight exactly 0.

    A row whose entries are all masked has no distribution; it comes out as zeros rather than NaN.
    """
    z = np.asarray(scores, dtype=np.float64)
    if mask is not None:
        keep = np.broadcast_to(np.asarray(mask, dtype=bool), z.shape)
        z = np.where(keep, z, -np.inf)
    # The array methods run the same reductions as np.max/np.sum without their Python dispatch,
    # which costs more than the arithmetic on the few entries the items use.
    peak = z.max(axis=axis, keepdims=True)
    if np.isfinite(peak).all():
        # Every row has a finite peak (as always without a mask): its exponentials sum to 1 at
        # least, so the guards below change nothing, and the same operations without them give the
        # same weights for a fraction of the calls.
        e = np.exp(z - peak)
        fast: Array = e / e.sum(axis=axis, keepdims=True)
        return fast
    peak = np.where(np.isfinite(peak), peak, 0.0)
    e = np.exp(z - peak)
    total = e.sum(axis=axis, keepdims=True)
    weights: Array = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    return weights


def additive_score(v: ArrayLike, s_proj: ArrayLike, h_proj: ArrayLike) -> float:
    """Bahdanau score e = vᵀ tanh(W_a s + U_a h), given the projections W_a s and U_a h."""
    inside = np.asarray(s_proj, dtype=np.float64) + np.asarray(h_proj, dtype=np.float64)
    return float(np.dot(np.asarray(v, dtype=np.float64), np.tanh(inside)))


def weighted_sum(weights: ArrayLike, values: ArrayLike) -> Array:
    """Σᵢ wᵢ vᵢ: the context (or output) vector as a weighted average of value rows."""
    return np.asarray(weights, dtype=np.float64) @ np.asarray(values, dtype=np.float64)


def attention_weights(
    q: ArrayLike, k: ArrayLike, *, scale: bool = True, mask: ArrayLike | None = None
) -> Array:
    """softmax(QKᵀ/√d_k) over the keys, for any leading batch/head dimensions; ``mask`` True keeps."""
    q_arr = np.asarray(q, dtype=np.float64)
    k_arr = np.asarray(k, dtype=np.float64)
    scores = q_arr @ np.swapaxes(k_arr, -1, -2)
    if scale:
        scores = scores / math.sqrt(q_arr.shape[-1])
    return softmax(scores, axis=-1, mask=mask)


def scaled_dot_product_attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    *,
    mask: ArrayLike | None = None,
    scale: bool = True,
) -> Array:
    """softmax(QKᵀ/√d_k)·V for shapes [..., T_q, d_k], [..., T_k, d_k], [..., T_k, d_v]."""
    return attention_weights(q, k, scale=scale, mask=mask) @ np.asarray(v, dtype=np.float64)


def attention_scores(q: ArrayLike, k: ArrayLike, *, divisor: float | None = None) -> Array:
    """QKᵀ divided by ``divisor``: √d_k when None (the scaled scores), 1 for the raw scores."""
    q_arr = np.asarray(q, dtype=np.float64)
    k_arr = np.asarray(k, dtype=np.float64)
    scores = q_arr @ np.swapaxes(k_arr, -1, -2)
    return scores / (math.sqrt(q_arr.shape[-1]) if divisor is None else divisor)


def dot_product_variance(d_k: int, *, scaled: bool = False, entry_variance: float = 1.0) -> float:
    """Var(q·k) for q, k with independent zero-mean entries of that variance: d_k·σ⁴ (÷ d_k if scaled)."""
    variance = d_k * entry_variance**2
    return float(variance / d_k if scaled else variance)


def causal_mask(t: int) -> NDArray[np.bool_]:
    """[T, T] mask that lets query i see keys 0..i (True = visible)."""
    return np.tril(np.ones((t, t), dtype=bool))


def split_heads(x: ArrayLike, heads: int) -> Array:
    """[..., T, d] → [..., h, T, d/h]."""
    arr = np.asarray(x, dtype=np.float64)
    *lead, t, d = arr.shape
    if d % heads:
        raise ValueError(f"d_model={d} is not divisible by h={heads}")
    return np.swapaxes(arr.reshape(*lead, t, heads, d // heads), -2, -3)


def merge_heads(x: ArrayLike) -> Array:
    """[..., h, T, d_h] → [..., T, h·d_h] (the concatenation of the heads)."""
    arr = np.asarray(x, dtype=np.float64)
    *lead, h, t, dh = arr.shape
    return np.swapaxes(arr, -2, -3).reshape(*lead, t, h * dh)


def multi_head_attention(
    x_q: ArrayLike,
    x_kv: ArrayLike,
    w_q: ArrayLike,
    w_k: ArrayLike,
    w_v: ArrayLike,
    w_o: ArrayLike,
    heads: int,
    *,
    b_q: ArrayLike | None = None,
    b_k: ArrayLike | None = None,
    b_v: ArrayLike | None = None,
    b_o: ArrayLike | None = None,
    mask: ArrayLike | None = None,
) -> Array:
    """Concat(head₁..headₕ)·W_O with each head = SDPA(x_q W_Qⁱ, x_kv W_Kⁱ, x_kv W_Vⁱ).

    Weights are [d_model, d_model] acting on the right; head i uses columns i·d_h..(i+1)·d_h.
    """

    def project(x: ArrayLike, w: ArrayLike, b: ArrayLike | None) -> Array:
        y = np.asarray(x, dtype=np.float64) @ np.asarray(w, dtype=np.float64)
        return y + np.asarray(b, dtype=np.float64) if b is not None else y

    q = split_heads(project(x_q, w_q, b_q), heads)
    k = split_heads(project(x_kv, w_k, b_k), heads)
    v = split_heads(project(x_kv, w_v, b_v), heads)
    concat = merge_heads(scaled_dot_product_attention(q, k, v, mask=mask))
    return project(concat, w_o, b_o)


# ---------------------------------------------------------------------------------------------
# Layer pieces
# ---------------------------------------------------------------------------------------------


def layer_norm(
    x: ArrayLike,
    *,
    gamma: ArrayLike | None = None,
    beta: ArrayLike | None = None,
    eps: float = 1e-5,
) -> Array:
    """(x − mean)/√(var + ε)·γ + β over the last axis, with the population variance (ddof 0)."""
    arr = np.asarray(x, dtype=np.float64)
    mean = arr.mean(axis=-1, keepdims=True)
    var = arr.var(axis=-1, keepdims=True)
    out: Array = (arr - mean) / np.sqrt(var + eps)
    if gamma is not None:
        out = out * np.asarray(gamma, dtype=np.float64)
    if beta is not None:
        out = out + np.asarray(beta, dtype=np.float64)
    return out


def relu(x: ArrayLike) -> Array:
    """max(0, x) elementwise."""
    return np.maximum(np.asarray(x, dtype=np.float64), 0.0)


def feed_forward(x: ArrayLike, w1: ArrayLike, b1: ArrayLike, w2: ArrayLike, b2: ArrayLike) -> Array:
    """Position-wise FFN: ReLU(x W₁ + b₁) W₂ + b₂."""
    hidden = relu(
        np.asarray(x, dtype=np.float64) @ np.asarray(w1, dtype=np.float64) + np.asarray(b1, dtype=np.float64)
    )
    return hidden @ np.asarray(w2, dtype=np.float64) + np.asarray(b2, dtype=np.float64)


def sinusoidal_positions(positions: int, d_model: int, base: float = 10000.0) -> Array:
    """PE[pos, 2i] = sin(pos/base^(2i/d)), PE[pos, 2i+1] = cos(pos/base^(2i/d)); shape [positions, d]."""
    pos = np.arange(positions, dtype=np.float64)[:, None]
    pair = np.arange(0, d_model, 2, dtype=np.float64)[None, :]
    angle = pos / base ** (pair / d_model)
    pe = np.zeros((positions, d_model))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : d_model // 2])
    return pe


def pair_frequency(i: int, d_model: int, base: float = 10000.0) -> float:
    """The angular frequency 1/base^(2i/d) of sinusoid pair i."""
    return float(base ** (-(2 * i) / d_model))


def encoder_layer(
    x: ArrayLike,
    *,
    mha: dict[str, ArrayLike],
    ffn: dict[str, ArrayLike],
    heads: int,
    ln1: tuple[ArrayLike, ArrayLike] | None = None,
    ln2: tuple[ArrayLike, ArrayLike] | None = None,
    eps: float = 1e-5,
) -> Array:
    """Post-norm encoder layer: U = LN(X + MHA(X)), Y = LN(U + FFN(U))."""
    g1, b1 = ln1 if ln1 is not None else (None, None)
    g2, b2 = ln2 if ln2 is not None else (None, None)
    attended = multi_head_attention(x, x, heads=heads, **mha)
    u = layer_norm(np.asarray(x, dtype=np.float64) + attended, gamma=g1, beta=b1, eps=eps)
    return layer_norm(u + feed_forward(u, **ffn), gamma=g2, beta=b2, eps=eps)


# ---------------------------------------------------------------------------------------------
# Parameter counts
# ---------------------------------------------------------------------------------------------


class Counted(Struct, frozen=True):
    """What a parameter count includes. The notes' "fully counted" layer (as PyTorch) includes all."""

    biases: bool = True
    norms: bool = True
    w_o: bool = True


ALL = Counted()
WEIGHTS_ONLY = Counted(biases=False, norms=False)


def projection_params(d_in: int, d_out: int, *, bias: bool = False) -> int:
    """Parameters of one linear map x·W (+ b): d_in·d_out (+ d_out)."""
    return d_in * d_out + (d_out if bias else 0)


def mha_params(d_model: int, *, counted: Counted = ALL) -> int:
    """W_Q, W_K, W_V (and W_O) with their biases if counted: 4d² + 4d fully counted.

    The number of heads does not appear: h heads of width d/h total d² per projection.
    """
    projections = 4 if counted.w_o else 3
    return projections * projection_params(d_model, d_model, bias=counted.biases)


def ffn_params(d_model: int, d_ff: int, *, counted: Counted = ALL) -> int:
    """W₁ [d, f] and W₂ [f, d] (and b₁, b₂): 2df + f + d fully counted."""
    return projection_params(d_model, d_ff, bias=counted.biases) + projection_params(
        d_ff, d_model, bias=counted.biases
    )


def layer_norm_params(d_model: int, *, count: int = 1) -> int:
    """γ and β of ``count`` affine LayerNorms: 2d each."""
    return 2 * d_model * count


def encoder_layer_params(d_model: int, d_ff: int, *, counted: Counted = ALL) -> int:
    """MHA + FFN (+ two LayerNorms): 4d² + 2df + f + 9d fully counted (3,152,384 at 512/2048)."""
    norms = layer_norm_params(d_model, count=2) if counted.norms else 0
    return mha_params(d_model, counted=counted) + ffn_params(d_model, d_ff, counted=counted) + norms


def decoder_layer_params(d_model: int, d_ff: int, *, counted: Counted = ALL) -> int:
    """Masked self-attention + cross-attention + FFN (+ three LayerNorms): 4,204,032 at 512/2048."""
    norms = layer_norm_params(d_model, count=3) if counted.norms else 0
    return 2 * mha_params(d_model, counted=counted) + ffn_params(d_model, d_ff, counted=counted) + norms


def stack_params(per_layer: int, layers: int, *, shared: bool = False) -> int:
    """N independently parameterised layers hold N times one layer (once if weights were shared)."""
    return per_layer if shared else per_layer * layers


def block_params_12d2(d_model: int) -> int:
    """The notes' per-block shorthand with d_ff = 4d, fully counted: 12d² + 13d."""
    return encoder_layer_params(d_model, 4 * d_model)


# ---------------------------------------------------------------------------------------------
# Cost and sizes
# ---------------------------------------------------------------------------------------------


def score_entries(batch: int, heads: int, t_q: int, t_k: int | None = None) -> int:
    """Entries of the attention-score tensor [B, h, T_q, T_k]: B·h·T² for self-attention."""
    return batch * heads * t_q * (t_q if t_k is None else t_k)


def tensor_volume(shape: tuple[int, ...]) -> int:
    """Number of entries of a tensor of this shape."""
    return math.prod(shape)


def dense_flops_per_token(d_model: int) -> int:
    """Dense (projection + FFN with f = 4d) FLOPs per token per layer, the notes' 24d²."""
    return 24 * d_model * d_model


def attention_score_flops_per_token(n: int, d_model: int) -> int:
    """QKᵀ and AV FLOPs per token per layer for context length n, the notes' 4nd."""
    return 4 * n * d_model


def attention_dense_crossover(d_model: int) -> int:
    """The context length where 4nd equals 24d²: n = 6d (4608 at d = 768)."""
    return 24 * d_model * d_model // (4 * d_model)


def rnn_gradient_factor(per_step: float, steps: int) -> float:
    """The gradient scale after ``steps`` steps of an RNN whose Jacobian shrinks it by ``per_step``."""
    return float(per_step**steps)


_EXACT_STEPS = 10_000


def steps_to_fall_below(per_step: float, threshold: float) -> int:
    """The fewest steps k after which per_stepᵏ < threshold (0 < per_step < 1).

    Decided on the numbers as written, as by hand: 0.03³ = 0.000027 is not below 0.000027 (k = 4),
    although the binary float 0.03**3 is, and the log ratio rounds either way at such powers.
    """
    if not 0 < per_step < 1 or not 0 < threshold < 1:
        raise ValueError("per_step and threshold must lie strictly between 0 and 1")
    k = max(1, math.floor(math.log(threshold) / math.log(per_step)))  # a first guess, corrected below
    # Exact powers of a k-step answer have about k times the digits; no quiz asks for that many.
    exact = k <= _EXACT_STEPS
    from fractions import Fraction  # only this function's questions need exact powers

    p, t = Fraction(str(float(per_step))), Fraction(str(float(threshold)))

    def below(n: int) -> bool:
        return p**n < t if exact else per_step**n < threshold

    while not below(k):
        k += 1
    while k > 1 and below(k - 1):
        k -= 1
    return k


# ---------------------------------------------------------------------------------------------
# Shapes (dimensions may be symbols such as "T" where a question keeps them symbolic)
# ---------------------------------------------------------------------------------------------

Dim = int | str


def head_dim(d_model: int, heads: int) -> int:
    """The width d_k = d_model / h of one head; h must divide d_model (512 / 8 = 64)."""
    if heads < 1 or d_model % heads:
        raise ValueError(f"d_model={d_model} is not divisible by h={heads}")
    return d_model // heads


def matmul_shape(a: tuple[Dim, ...], b: tuple[Dim, ...]) -> tuple[Dim, ...]:
    """Shape of A @ B: [..., n, k] @ [k, m] or batched [..., n, k] @ [..., k, m] gives [..., n, m]."""
    if len(a) < 2 or len(b) < 2 or (len(b) > 2 and b[:-2] != a[:-2]):
        raise ValueError(f"cannot multiply {list(a)} by {list(b)}")
    if a[-1] != b[-2]:
        raise ValueError(f"inner sizes differ: {list(a)} @ {list(b)}")
    return (*a[:-1], b[-1])


def split_heads_shape(shape: tuple[Dim, ...], heads: int) -> tuple[Dim, ...]:
    """[..., T, d] → [..., h, T, d/h], the layout `split_heads` produces."""
    *lead, t, d = shape
    if not isinstance(d, int):
        raise ValueError("the model width must be a number to split it into heads")
    return (*lead, heads, t, head_dim(d, heads))


def scores_shape(q_shape: tuple[Dim, ...], k_shape: tuple[Dim, ...]) -> tuple[Dim, ...]:
    """Shape of QKᵀ for Q [..., T_q, d_k] and K [..., T_k, d_k]: [..., T_q, T_k]."""
    if q_shape[:-2] != k_shape[:-2] or q_shape[-1] != k_shape[-1]:
        raise ValueError(f"queries {list(q_shape)} and keys {list(k_shape)} do not fit")
    return (*q_shape[:-1], k_shape[-2])


def merge_heads_shape(shape: tuple[Dim, ...]) -> tuple[Dim, ...]:
    """[..., h, T, d_v] → [..., T, h·d_v], the concatenation `merge_heads` produces."""
    *lead, heads, t, width = shape
    if not (isinstance(heads, int) and isinstance(width, int)):
        raise ValueError("the number of heads and the head width must be numbers to concatenate")
    return (*lead, t, heads * width)


def ffn_hidden_shape(shape: tuple[Dim, ...], d_ff: int) -> tuple[Dim, ...]:
    """The FFN's hidden activation ReLU(x W₁ + b₁) for x [..., d]: [..., d_ff]."""
    d = shape[-1]
    return matmul_shape(shape, (d, d_ff))


def encoder_layer_shape(shape: tuple[Dim, ...], *, heads: int, d_ff: int) -> tuple[Dim, ...]:
    """Track [..., T, d] through MHA (split, QKᵀ, AV, concat, W_O), both residuals and the FFN.

    Raises ValueError where a product does not fit or a residual addition would get unequal shapes.
    """
    d = shape[-1]
    if not isinstance(d, int):
        raise ValueError("the model width must be a number")
    q = split_heads_shape(matmul_shape(shape, (d, d)), heads)
    weights = scores_shape(q, q)
    attended = matmul_shape(merge_heads_shape(matmul_shape(weights, q)), (d, d))
    if attended != shape:
        raise ValueError(f"residual X + MHA(X) needs equal shapes: {list(shape)} vs {list(attended)}")
    out = matmul_shape(ffn_hidden_shape(attended, d_ff), (d_ff, d))
    if out != attended:
        raise ValueError(f"residual U + FFN(U) needs equal shapes: {list(attended)} vs {list(out)}")
    return out


def encoder_stack_shape(shape: tuple[Dim, ...], *, heads: int, d_ff: int, layers: int) -> tuple[Dim, ...]:
    """The output shape after ``layers`` encoder layers (each keeps [..., T, d_model])."""
    for _ in range(layers):
        shape = encoder_layer_shape(shape, heads=heads, d_ff=d_ff)
    return shape


# ---------------------------------------------------------------------------------------------
# FLOP pieces behind the attention/dense crossover (2 FLOPs per multiply-add)
# ---------------------------------------------------------------------------------------------


def projection_flops_per_token(d_model: int, *, matrices: int = 4) -> int:
    """The Q, K, V and O projections (``matrices`` d×d maps) per token: 2·4·d² = 8d²."""
    return 2 * matrices * d_model * d_model


def ffn_flops_per_token(d_model: int, d_ff: int) -> int:
    """W₁ [d, f] and W₂ [f, d] per token: 2·2·d·f (16d² when f = 4d)."""
    return 2 * 2 * d_model * d_ff


def score_flops_per_token(n: int, d_model: int, *, products: int = 2) -> int:
    """QKᵀ and AV per token for context length n: ``products``·2·n·d (4nd for both)."""
    return products * 2 * n * d_model


def crossover_length(dense_flops: int, d_model: int, *, products: int = 2) -> int:
    """The context length n where ``products``·2·n·d equals ``dense_flops`` (exact division required)."""
    per_n = score_flops_per_token(1, d_model, products=products)
    if dense_flops % per_n:
        raise ValueError(f"{dense_flops} FLOPs is not a whole multiple of {per_n} per unit of length")
    return dense_flops // per_n


# ---------------------------------------------------------------------------------------------
# Week 2: positions, masks, normalisation, residual paths and tokens
# ---------------------------------------------------------------------------------------------


def pair_denominator(i: int, d_model: int, base: float = 10000.0, *, pair_step: int = 2) -> float:
    """The number base^(pair_step·i/d) that divides the position in sinusoid pair i (100 at i = 1, d = 4).

    ``pair_step`` 2 is the paper's exponent 2i/d; 1 reproduces the slip of writing i/d, and 4 the
    slip of putting the dimension index 2i where the pair index i belongs.
    """
    if not 0 <= i < d_model // 2:
        raise ValueError(f"pair {i} does not exist for d_model={d_model}")
    return float(base ** (pair_step * i / d_model))


def sinusoidal_encoding(
    position: float,
    d_model: int,
    base: float = 10000.0,
    *,
    pair_step: int = 2,
    sin_first: bool = True,
) -> Array:
    """PE of one position: [sin(pos/den₀), cos(pos/den₀), sin(pos/den₁), ...] with den_i = base^(2i/d).

    Equal to a row of `sinusoidal_positions`. ``sin_first=False`` puts the cosine in the even
    dimensions (sine and cosine swapped); ``pair_step=1`` uses the exponent i/d.
    """
    if d_model < 2 or d_model % 2:
        raise ValueError(f"d_model must be even, not {d_model}")
    denominators = np.array(
        [pair_denominator(i, d_model, base, pair_step=pair_step) for i in range(d_model // 2)]
    )
    angle = float(position) / denominators
    even, odd = (np.sin(angle), np.cos(angle)) if sin_first else (np.cos(angle), np.sin(angle))
    out = np.empty(d_model)
    out[0::2] = even
    out[1::2] = odd
    return out


def position_similarity(
    p: float, q: float, d_model: int, base: float = 10000.0, *, pair_step: int = 2
) -> float:
    """PE(p)·PE(q) = Σᵢ cos((p − q)/den_i): a function of the offset p − q alone."""
    return float(
        np.dot(
            sinusoidal_encoding(p, d_model, base, pair_step=pair_step),
            sinusoidal_encoding(q, d_model, base, pair_step=pair_step),
        )
    )


def padding_mask(length: int, real: int) -> NDArray[np.bool_]:
    """[T] key mask of a padded sentence: True for the first ``real`` tokens, False for the padding."""
    if not 0 < real <= length:
        raise ValueError(f"a sentence of {length} positions cannot hold {real} real tokens")
    return np.arange(length) < real


def causal_masked_entries(t: int) -> int:
    """Entries of a [T, T] causal mask that hide a key from its query (above the diagonal): T(T−1)/2."""
    return int(np.count_nonzero(~causal_mask(t)))


def normalise(x: ArrayLike, *, eps: float = 1e-5, ddof: int = 0, centre: bool = True) -> Array:
    """(x − mean)/√(var + ε) over the last axis, without γ and β (`layer_norm` with ddof 0, centred).

    ``ddof=1`` divides by the sample standard deviation and ``centre=False`` skips the mean: the
    two slips the normalisation items recognise.
    """
    arr = np.asarray(x, dtype=np.float64)
    var = arr.var(axis=-1, keepdims=True, ddof=ddof)
    shifted = arr - arr.mean(axis=-1, keepdims=True) if centre else arr
    out: Array = shifted / np.sqrt(var + eps)
    return out


def residual(x: ArrayLike, sublayer_out: ArrayLike) -> Array:
    """The skip connection x + Sublayer(x)."""
    out: Array = np.asarray(x, dtype=np.float64) + np.asarray(sublayer_out, dtype=np.float64)
    return out


def stacked_slope(slope: float, layers: int, *, skip: bool) -> float:
    """d(output)/d(input) through ``layers`` layers whose sub-layer is f(x) = slope·x.

    With skip connections each layer is x + f(x), slope 1 + a, so L layers give (1 + a)ᴸ;
    without them the slopes multiply to aᴸ.
    """
    if layers < 1:
        raise ValueError(f"layers must be at least 1, not {layers}")
    return float((1.0 + slope) ** layers if skip else slope**layers)


def encode_tokens(tokens: list[str], vocab: dict[str, int]) -> list[int]:
    """Token ids: each token looked up in the vocabulary."""
    missing = [t for t in tokens if t not in vocab]
    if missing:
        raise ValueError(f"not in the vocabulary: {', '.join(missing)}")
    return [vocab[t] for t in tokens]


def decode_ids(ids: list[int], vocab: dict[str, int]) -> list[str]:
    """Tokens from ids, through the reversed vocabulary."""
    inverse = {v: k for k, v in vocab.items()}
    if len(inverse) != len(vocab):
        raise ValueError("two tokens share an id, so ids cannot be decoded")
    return [inverse[i] for i in ids]


# ---------------------------------------------------------------------------------------------
# Code walkthroughs: what the notes' snippets compute and print
# ---------------------------------------------------------------------------------------------


def rnn_encoder_states(x: ArrayLike, w_xh: ArrayLike, w_hh: ArrayLike, b: ArrayLike) -> Array:
    """Hidden states of a plain tanh RNN, hₜ = tanh(xₜW_xh + hₜ₋₁W_hh + b) with h₀ = 0: [T, hidden].

    The seq2seq context is the last row: one vector of the hidden size, however long the input.
    """
    xs = np.asarray(x, dtype=np.float64)
    wx = np.asarray(w_xh, dtype=np.float64)
    wh = np.asarray(w_hh, dtype=np.float64)
    bias = np.asarray(b, dtype=np.float64)
    h = np.zeros(wh.shape[0])
    states = np.empty((xs.shape[0], wh.shape[0]))
    for t, x_t in enumerate(xs):
        h = np.tanh(x_t @ wx + h @ wh + bias)
        states[t] = h
    return states


def rnn_context_shape(tokens: Dim, hidden: int) -> tuple[Dim, ...]:
    """Shape of the seq2seq context c = h_T of an RNN encoder read over ``tokens`` steps: [hidden]."""
    if isinstance(tokens, int) and tokens < 1:
        raise ValueError(f"an encoder reads at least one token, not {tokens}")
    return (hidden,)


def path_length(i: int, j: int, *, recurrent: bool) -> int:
    """Steps between positions i and j: |j − i| recurrent updates in an RNN, one attention layer otherwise."""
    if i == j:
        return 0
    return abs(j - i) if recurrent else 1


def additive_alignment(s_proj: ArrayLike, h_proj: ArrayLike, v: ArrayLike) -> Array:
    """The whole alignment table of additive attention: αₜᵢ = softmaxᵢ(vᵀ tanh(W_a sₜ₋₁ + U_a hᵢ)).

    ``s_proj`` holds W_a sₜ₋₁ for every decoder step [T_target, a], ``h_proj`` holds U_a hᵢ for every
    encoder state [T_source, a]; the result is [T_target, T_source] and every row sums to 1.
    """
    s = np.asarray(s_proj, dtype=np.float64)
    h = np.asarray(h_proj, dtype=np.float64)
    scores = np.tanh(s[:, None, :] + h[None, :, :]) @ np.asarray(v, dtype=np.float64)
    return softmax(scores, axis=-1)


def alignment_shape(t_target: Dim, t_source: Dim) -> tuple[Dim, ...]:
    """Shape of the additive-attention alignment table: one row per decoder step, [T_target, T_source]."""
    return (t_target, t_source)


def visible_positions(t: int, position: int) -> int:
    """How many positions (itself included) the token at 1-based ``position`` sees under a causal mask."""
    if not 1 <= position <= t:
        raise ValueError(f"position {position} is not in a sequence of {t}")
    return int(np.count_nonzero(causal_mask(t)[position - 1]))


def transformer_params(
    d_model: int,
    d_ff: int,
    *,
    layers: int,
    vocab: int,
    counted: Counted = ALL,
    embeddings: int = 1,
    cross_attention: bool = True,
) -> int:
    """An encoder–decoder Transformer: ``layers`` encoder and decoder layers plus the token embeddings.

    ``embeddings`` counts the V×d tables: 1 when source, target and output share one table (the
    original base model), 3 when none is tied, 0 to leave them out. Positions are sinusoidal
    (nothing to learn). Without ``cross_attention`` a decoder layer is counted as an encoder layer.
    """
    decoder = (
        decoder_layer_params(d_model, d_ff, counted=counted)
        if cross_attention
        else encoder_layer_params(d_model, d_ff, counted=counted)
    )
    per_pair = encoder_layer_params(d_model, d_ff, counted=counted) + decoder
    return layers * per_pair + embeddings * vocab * d_model


def relative_gap(value: float, reference: float) -> float:
    """How far ``value`` falls short of ``reference``, as a fraction of the reference: (ref − value)/ref."""
    if reference == 0:
        raise ValueError("a gap relative to 0 is not defined")
    return (reference - value) / reference
