"""Reference numerics of the course: pure numpy functions, no randomness, no formatting.

Every answer a generator states is computed here, so that it can be checked on its own against
the notes' worked numbers and against PyTorch. Conventions follow the notes: row vectors, inputs of
shape [..., T, d], ``W`` applied on the right (``x @ W``), softmax over the last axis (the keys).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
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
    peak = np.max(z, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    e = np.exp(z - peak)
    total = np.sum(e, axis=axis, keepdims=True)
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


@dataclass(frozen=True)
class Counted:
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


def steps_to_fall_below(per_step: float, threshold: float) -> int:
    """The fewest steps after which per_stepᵏ < threshold (0 < per_step < 1)."""
    if not 0 < per_step < 1 or not 0 < threshold < 1:
        raise ValueError("per_step and threshold must lie strictly between 0 and 1")
    k = math.floor(math.log(threshold) / math.log(per_step)) + 1
    while per_step ** (k - 1) < threshold:  # guard against log rounding at exact powers
        k -= 1
    return k
