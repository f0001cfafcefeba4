"""The reference numerics against PyTorch's own modules, in float64 (skipped where torch is missing).

Conventions differ in one place: numerics multiplies row vectors on the right (``x @ W``), while
``torch.nn.Linear`` stores ``W`` as [out, in] and computes ``x @ W.T``. Every weight copied from a
torch module is therefore transposed. Torch initialises biases to 0 and LayerNorm to γ = 1, β = 0;
the tests overwrite every parameter with random values so that each one is really compared.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from attnquiz.engine import numerics as nx
from attnquiz.engine.numerics import WEIGHTS_ONLY, Counted

torch = pytest.importorskip("torch")
F = torch.nn.functional

ATOL = 1e-10
F64 = torch.float64


def _randomise(module: Any, seed: int) -> None:
    """Every parameter of ``module`` drawn from N(0, 1/fan-in) (vectors from N(0, 1))."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for param in module.parameters():
            fan_in = param.shape[-1] if param.dim() > 1 else 1
            param.copy_(torch.randn(param.shape, generator=gen, dtype=F64) / fan_in**0.5)


def _np(tensor: Any) -> np.ndarray:
    return np.asarray(tensor.detach().numpy())


def _mha_weights(mha: Any) -> dict[str, np.ndarray]:
    """numerics' keyword arguments for a torch.nn.MultiheadAttention (packed in_proj, [3d, d])."""
    d = mha.embed_dim
    w, b = _np(mha.in_proj_weight), _np(mha.in_proj_bias)
    return {
        "w_q": w[:d].T,
        "w_k": w[d : 2 * d].T,
        "w_v": w[2 * d :].T,
        "w_o": _np(mha.out_proj.weight).T,
        "b_q": b[:d],
        "b_k": b[d : 2 * d],
        "b_v": b[2 * d :],
        "b_o": _np(mha.out_proj.bias),
    }


def _inputs(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=shape)


# ---------------------------------------------------------------------------------------------
# Multi-head attention
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("d", "heads", "t_q", "t_k"),
    [
        pytest.param(16, 1, 5, 5, id="one-head"),
        pytest.param(16, 4, 5, 5, id="4-heads-self"),
        pytest.param(16, 4, 3, 7, id="4-heads-cross"),
        pytest.param(24, 8, 6, 4, id="8-heads-of-width-3"),
        pytest.param(64, 8, 9, 9, id="8-heads-of-width-8"),
    ],
)
def test_multi_head_attention_matches_torch(d: int, heads: int, t_q: int, t_k: int) -> None:
    mha = torch.nn.MultiheadAttention(d, heads, batch_first=True, dtype=F64).eval()
    _randomise(mha, seed=d + heads)
    x_q, x_kv = _inputs(1, 2, t_q, d), _inputs(2, 2, t_k, d)
    with torch.no_grad():
        expected, weights = mha(
            torch.from_numpy(x_q),
            torch.from_numpy(x_kv),
            torch.from_numpy(x_kv),
            need_weights=True,
            average_attn_weights=False,
        )
    kw = _mha_weights(mha)
    ours = nx.multi_head_attention(x_q, x_kv, heads=heads, **kw)
    np.testing.assert_allclose(ours, _np(expected), rtol=0, atol=ATOL)
    # The per-head weights [B, h, T_q, T_k] too.
    q = nx.split_heads(x_q @ kw["w_q"] + kw["b_q"], heads)
    k = nx.split_heads(x_kv @ kw["w_k"] + kw["b_k"], heads)
    np.testing.assert_allclose(nx.attention_weights(q, k), _np(weights), rtol=0, atol=ATOL)


@pytest.mark.parametrize("heads", [1, 2, 4])
def test_causal_multi_head_attention_matches_torch(heads: int) -> None:
    d, t = 8, 6
    mha = torch.nn.MultiheadAttention(d, heads, batch_first=True, dtype=F64).eval()
    _randomise(mha, seed=10 + heads)
    x = _inputs(3, 2, t, d)
    causal = nx.causal_mask(t)
    with torch.no_grad():
        # torch's boolean attn_mask marks what is hidden; ours marks what is visible.
        expected, _ = mha(
            *(torch.from_numpy(x),) * 3, attn_mask=torch.from_numpy(~causal), need_weights=False
        )
    ours = nx.multi_head_attention(x, x, heads=heads, mask=causal, **_mha_weights(mha))
    np.testing.assert_allclose(ours, _np(expected), rtol=0, atol=ATOL)


def test_key_padding_mask_matches_torch() -> None:
    d, heads, t = 8, 2, 5
    mha = torch.nn.MultiheadAttention(d, heads, batch_first=True, dtype=F64).eval()
    _randomise(mha, seed=20)
    x = _inputs(4, 2, t, d)
    real = np.stack([nx.padding_mask(t, 5), nx.padding_mask(t, 3)])  # [B, T_k]: True = real token
    with torch.no_grad():
        expected, _ = mha(
            *(torch.from_numpy(x),) * 3, key_padding_mask=torch.from_numpy(~real), need_weights=False
        )
    mask = real[:, None, None, :]  # broadcast over heads and queries: [B, 1, 1, T_k]
    ours = nx.multi_head_attention(x, x, heads=heads, mask=mask, **_mha_weights(mha))
    np.testing.assert_allclose(ours, _np(expected), rtol=0, atol=ATOL)


# ---------------------------------------------------------------------------------------------
# Scaled dot-product attention and LayerNorm
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape_q", "shape_k", "d_v"),
    [
        pytest.param((4, 3), (4, 3), 3, id="2d"),
        pytest.param((2, 5, 4), (2, 7, 4), 6, id="batched-cross"),
        pytest.param((2, 3, 6, 8), (2, 3, 6, 8), 8, id="batch-and-heads"),
    ],
)
def test_sdpa_matches_torch(shape_q: tuple[int, ...], shape_k: tuple[int, ...], d_v: int) -> None:
    q = _inputs(5, *shape_q)
    k = _inputs(6, *shape_k)
    v = _inputs(7, *shape_k[:-1], d_v)
    tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))
    expected = F.scaled_dot_product_attention(tq, tk, tv)
    np.testing.assert_allclose(nx.scaled_dot_product_attention(q, k, v), _np(expected), rtol=0, atol=ATOL)
    unscaled = F.scaled_dot_product_attention(tq, tk, tv, scale=1.0)
    np.testing.assert_allclose(
        nx.scaled_dot_product_attention(q, k, v, scale=False), _np(unscaled), rtol=0, atol=ATOL
    )


@pytest.mark.parametrize("t", [1, 2, 5, 9])
def test_causal_sdpa_matches_torch(t: int) -> None:
    q, k, v = (_inputs(seed, 2, 3, t, 4) for seed in (8, 9, 10))
    expected = F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v)), is_causal=True)
    ours = nx.scaled_dot_product_attention(q, k, v, mask=nx.causal_mask(t))
    np.testing.assert_allclose(ours, _np(expected), rtol=0, atol=ATOL)


def test_boolean_mask_sdpa_matches_torch() -> None:
    q, k, v = _inputs(11, 2, 4, 3), _inputs(12, 2, 6, 3), _inputs(13, 2, 6, 5)
    mask = np.random.default_rng(14).random((2, 4, 6)) < 0.6
    mask[..., 0] = True  # torch gives NaN for a fully masked row; ours gives zeros (tested elsewhere)
    # For F.scaled_dot_product_attention a boolean mask marks what takes part, as ours does.
    expected = F.scaled_dot_product_attention(
        *(torch.from_numpy(a) for a in (q, k, v)), attn_mask=torch.from_numpy(mask)
    )
    ours = nx.scaled_dot_product_attention(q, k, v, mask=mask)
    np.testing.assert_allclose(ours, _np(expected), rtol=0, atol=ATOL)


@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("eps", [1e-5, 1e-3])
def test_layer_norm_matches_torch(affine: bool, eps: float) -> None:
    x = _inputs(15, 3, 4, 10) * 5 + 2
    gamma, beta = (_inputs(16, 10), _inputs(17, 10)) if affine else (None, None)
    expected = F.layer_norm(
        torch.from_numpy(x),
        (10,),
        weight=None if gamma is None else torch.from_numpy(gamma),
        bias=None if beta is None else torch.from_numpy(beta),
        eps=eps,
    )
    np.testing.assert_allclose(
        nx.layer_norm(x, gamma=gamma, beta=beta, eps=eps), _np(expected), rtol=0, atol=ATOL
    )


def test_layer_norm_of_the_notes_example_matches_torch() -> None:
    # s003-wp-layernorm-1234: PyTorch also uses the population variance and ε inside the root.
    expected = F.layer_norm(torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=F64), (4,))
    np.testing.assert_allclose(nx.layer_norm([1.0, 2.0, 3.0, 4.0]), _np(expected), rtol=0, atol=ATOL)


# ---------------------------------------------------------------------------------------------
# The encoder layer
# ---------------------------------------------------------------------------------------------


def _encoder_layer_kwargs(layer: Any) -> dict[str, Any]:
    return {
        "mha": _mha_weights(layer.self_attn),
        "ffn": {
            "w1": _np(layer.linear1.weight).T,
            "b1": _np(layer.linear1.bias),
            "w2": _np(layer.linear2.weight).T,
            "b2": _np(layer.linear2.bias),
        },
        "heads": layer.self_attn.num_heads,
        "ln1": (_np(layer.norm1.weight), _np(layer.norm1.bias)),
        "ln2": (_np(layer.norm2.weight), _np(layer.norm2.bias)),
        "eps": layer.norm1.eps,
    }


@pytest.mark.parametrize(
    ("d", "heads", "d_ff", "t"),
    [
        pytest.param(16, 4, 64, 5, id="d16-h4-f64"),
        pytest.param(32, 8, 48, 7, id="d32-h8-f48"),
        pytest.param(12, 1, 24, 3, id="one-head"),
    ],
)
@pytest.mark.parametrize("grad", [False, True], ids=["inference", "autograd"])
def test_encoder_layer_matches_torch(d: int, heads: int, d_ff: int, t: int, grad: bool) -> None:
    layer = torch.nn.TransformerEncoderLayer(
        d,
        heads,
        dim_feedforward=d_ff,
        dropout=0.0,
        activation="relu",
        batch_first=True,
        norm_first=False,
        dtype=F64,
    ).eval()
    _randomise(layer, seed=d + heads + d_ff)
    x = _inputs(18, 2, t, d)
    # Under no_grad torch may take its fused "fast path"; with autograd on it runs the plain one.
    with torch.set_grad_enabled(grad):
        expected = layer(torch.from_numpy(x))
    ours = nx.encoder_layer(x, **_encoder_layer_kwargs(layer))
    np.testing.assert_allclose(ours, _np(expected), rtol=0, atol=ATOL)


def test_six_layer_encoder_matches_torch() -> None:
    # 2026 T1 Quiz 1, Q4 at toy width: six independently parameterised layers keep [B, T, d].
    d, heads, d_ff, t = 16, 4, 32, 6
    layer = torch.nn.TransformerEncoderLayer(d, heads, d_ff, dropout=0.0, batch_first=True, dtype=F64)
    encoder = torch.nn.TransformerEncoder(layer, num_layers=6, enable_nested_tensor=False).eval()
    _randomise(encoder, seed=30)
    x = _inputs(19, 2, t, d)
    with torch.no_grad():
        expected = encoder(torch.from_numpy(x))
    ours = x
    for each in encoder.layers:
        ours = nx.encoder_layer(ours, **_encoder_layer_kwargs(each))
    assert ours.shape == (2, t, d)
    np.testing.assert_allclose(ours, _np(expected), rtol=0, atol=ATOL)


# ---------------------------------------------------------------------------------------------
# Parameter counts (modules built on the "meta" device: shapes only, no memory)
# ---------------------------------------------------------------------------------------------


def _count(module: Any) -> int:
    return int(sum(p.numel() for p in module.parameters()))


@pytest.mark.parametrize(("d", "heads"), [(512, 1), (512, 8), (512, 16), (768, 12), (64, 4)])
def test_mha_params_match_torch_for_any_head_count(d: int, heads: int) -> None:
    assert _count(torch.nn.MultiheadAttention(d, heads, device="meta")) == nx.mha_params(d)
    without_bias = torch.nn.MultiheadAttention(d, heads, bias=False, device="meta")
    assert _count(without_bias) == nx.mha_params(d, counted=Counted(biases=False))


@pytest.mark.parametrize(("d", "heads", "d_ff"), [(512, 8, 2048), (768, 12, 3072), (16, 4, 64), (64, 2, 100)])
def test_layer_params_match_torch(d: int, heads: int, d_ff: int) -> None:
    encoder = torch.nn.TransformerEncoderLayer(d, heads, d_ff, device="meta")
    decoder = torch.nn.TransformerDecoderLayer(d, heads, d_ff, device="meta")
    assert _count(encoder) == nx.encoder_layer_params(d, d_ff)
    assert _count(decoder) == nx.decoder_layer_params(d, d_ff)
    ffn = torch.nn.Sequential(
        torch.nn.Linear(d, d_ff, device="meta"), torch.nn.Linear(d_ff, d, device="meta")
    )
    assert _count(ffn) == nx.ffn_params(d, d_ff)
    assert _count(torch.nn.LayerNorm(d, device="meta")) == nx.layer_norm_params(d)


def test_notes_counts_match_torch() -> None:
    # s000-encoder-layer-params-d512 ("torch count=3,152,384; equal=True"), MC-ENC-3, s002-block-params-3280.
    assert _count(torch.nn.TransformerEncoderLayer(512, 8, 2048, device="meta")) == 3_152_384
    assert _count(torch.nn.TransformerDecoderLayer(512, 8, 2048, device="meta")) == 4_204_032
    assert (
        _count(torch.nn.TransformerEncoderLayer(16, 4, 64, device="meta"))
        == nx.block_params_12d2(16)
        == 3_280
    )


def test_stack_params_match_torch() -> None:
    # s000-six-layers-params: TransformerEncoder deep-copies the layer, so the six do not share weights.
    layer = torch.nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True, device="meta")
    encoder = torch.nn.TransformerEncoder(layer, num_layers=6, enable_nested_tensor=False)
    assert _count(encoder) == nx.stack_params(nx.encoder_layer_params(512, 2048), 6) == 18_914_304


def test_torch_bias_false_is_weights_only_plus_layer_norm_scales() -> None:
    # torch's bias=False also drops LayerNorm's β but keeps γ: that is neither of our conventions,
    # but it is WEIGHTS_ONLY plus the two γ vectors.
    layer = torch.nn.TransformerEncoderLayer(512, 8, 2048, bias=False, device="meta")
    assert _count(layer) == nx.encoder_layer_params(512, 2048, counted=WEIGHTS_ONLY) + 2 * 512
