"""The reference solutions of the code questions, written as a student would write them (NumPy only).

Each function is the answer to one code task of `attnquiz.engine.code.tasks`: grading runs it on the
same inputs as the student's code, and its source (read back with `inspect`) is the worked solution
and the answer key. It is trusted code and runs in quiz's own process; a student's never does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

Array = Any  # a NumPy array; kept loose so that the source reads like the course's code


def softmax(x: Array) -> Array:
    """Softmax over the last axis, safe for large scores (subtract each row's maximum first)."""
    shifted = x - np.max(x, axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=-1, keepdims=True)


def attention_weights(Q: Array, K: Array) -> Array:
    """softmax(Q Kᵀ / √d_k), one row per query."""
    d_k = Q.shape[-1]
    scores = Q @ K.T / np.sqrt(d_k)
    scores = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(axis=-1, keepdims=True)


def attention(Q: Array, K: Array, V: Array) -> Array:
    """Scaled dot-product attention: softmax(Q Kᵀ / √d_k) V."""
    d_k = Q.shape[-1]
    scores = Q @ K.T / np.sqrt(d_k)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V


def causal_mask(T: int) -> Array:
    """A (T, T) boolean mask: True where query i may look at key j (j <= i)."""
    return np.tril(np.ones((T, T), dtype=bool))


def masked_softmax(scores: Array, mask: Array) -> Array:
    """Softmax of each row over the keys the mask keeps (True); a row with no key kept gets zeros."""
    masked = np.where(mask, scores, -np.inf)
    row_max = masked.max(axis=-1, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    e = np.where(mask, np.exp(masked - row_max), 0.0)
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def split_heads(X: Array, h: int) -> Array:
    """(T, d_model) → (h, T, d_model / h): head i takes columns i·d_k to (i + 1)·d_k."""
    T, d_model = X.shape
    d_k = d_model // h
    return X.reshape(T, h, d_k).transpose(1, 0, 2)


def merge_heads(Z: Array) -> Array:
    """(h, T, d_k) → (T, h · d_k): the heads' outputs side by side, head 0 first."""
    h, T, d_k = Z.shape
    return Z.transpose(1, 0, 2).reshape(T, h * d_k)


def positional_encoding(T: int, d_model: int) -> Array:
    """Sinusoidal positions: PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(p / 10000^(2i/d))."""
    positions = np.arange(T)[:, None]
    i = np.arange(d_model // 2)[None, :]
    angles = positions / 10000 ** (2 * i / d_model)
    pe = np.zeros((T, d_model))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return pe


def layer_norm(x: Array, gamma: Array, beta: Array, eps: float = 1e-5) -> Array:
    """Normalise each token's vector over its features, then scale by gamma and shift by beta."""
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + eps) + beta


def additive_scores(s: Array, H: Array, W: Array, U: Array, v: Array) -> Array:
    """Bahdanau scores of every encoder state: e_j = vᵀ tanh(W s + U h_j), one per row of H."""
    return np.tanh(s @ W.T + H @ U.T) @ v


def encoder_layer_params(d_model: int, d_ff: int) -> int:
    """Parameters of one encoder layer: attention 4 d² + 4 d, FFN 2 d d_ff + d_ff + d, 2 LayerNorms 4 d."""
    attention = 4 * d_model * d_model + 4 * d_model
    ffn = 2 * d_model * d_ff + d_ff + d_model
    norms = 2 * 2 * d_model
    return attention + ffn + norms


def self_attention(x: Array, W_q: Array, W_k: Array, W_v: Array, mask: Array = None) -> tuple[Array, Array]:
    """The notes' ``SelfAttention.forward`` (Day 13 §5) in NumPy: ``x`` is (B, T, d_model), each W is
    (d_model, d_k) with Q = x W_q; where ``mask`` is 0 a key is hidden. Returns (out, weights)."""
    Q, K, V = x @ W_q, x @ W_k, x @ W_v
    d_k = W_q.shape[-1]
    scores = Q @ np.swapaxes(K, -2, -1) / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask == 0, -np.inf, scores)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights
