"""The reference numerics against every worked number of the course notes, and their properties.

Each row of the tables below cites the id of the item in the notes' catalogue
(``reference/seed_items.yaml``); the inputs and expected values are copied from it by hand, and
compared at the precision the notes print. Rows tagged ``distractor`` check that an option of
numerics (``scale=False``, ``Counted(...)``, ``ddof=1``, ...) reproduces the wrong value a named
misconception gives, so that generators can compute mistakes with the same functions.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.typing import ArrayLike

from attnquiz.engine import numerics as nx
from attnquiz.engine.numerics import ALL, WEIGHTS_ONLY, Counted

Compute = Callable[[], Any]

# Inputs of the notes' examples.
X3 = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])  # the three-token example (Q = K = V = X)
I2 = np.eye(2)  # the two-token examples (X = I, identity projections)
V2 = np.array([[1.0, 2.0], [3.0, 4.0]])  # the two-token worked problem's values
H2 = np.eye(2)  # Bahdanau's two encoder states h₁ = [1, 0], h₂ = [0, 1]
SCORES_123 = np.tile([1.0, 2.0, 3.0], (3, 1))  # causal-mask problem: every row scores [1, 2, 3]
Q_64 = np.ones((1, 64))  # with K_64, raw scores [8, 0] at d_k = 64
K_64 = np.vstack([np.full(64, 1 / 8), np.zeros(64)])
W_O_HAND = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])  # columns [1,0,1,0], [0,1,0,1]
HEADS_HAND = np.array([[[1.0, 2.0]], [[3.0, 4.0]]])  # two heads [h, T=1, d_h=2]: [1, 2] and [3, 4]
Q146_V = [[1, 0], [0, 1], [1, 1], [2, 1]]
Q_1, K_00, V_NOTES = [[1.0]], [[0.0], [0.0]], [[1, 0], [0, 2]]  # q = 1, k₁ = k₂ = 0, v₁ = [1, 0], v₂ = [0, 2]
EXECUTED_05 = [0.699, 0.539, -0.081, -0.522]  # the alignment scores program 05 printed
DK = (4, 16, 64, 256)  # the variance table's rows
NO_BIASES = Counted(biases=False)


def worked(catalogue_id: str, what: str, compute: Compute, expected: Any, decimals: int) -> Any:
    """One row: ``compute()`` rounded to ``decimals`` places must print as the notes print ``expected``."""
    return pytest.param(compute, expected, decimals, id=f"{catalogue_id}: {what}")


def exactly(catalogue_id: str, what: str, compute: Compute, expected: Any) -> Any:
    """One row of an exact result (a count, a shape, a mask)."""
    return pytest.param(compute, expected, id=f"{catalogue_id}: {what}")


def central_slope(f: Callable[[float], Any], x: float = 2.0, e: float = 1e-6) -> float:
    """The notes' check of a slope: (f(2 + e) − f(2 − e)) / 2e."""
    return float((f(x + e) - f(x - e)) / (2 * e))


# ---------------------------------------------------------------------------------------------
# The notes' worked numbers, at the notes' precision
# ---------------------------------------------------------------------------------------------

# fmt: off
ROUNDED = [
    # additive attention and softmax
    worked("2026 T1 Quiz 1, Q13", "2 tanh 2", lambda: nx.additive_score([1, 1], [1, 2], [1, 0]), 1.93, 2),
    worked("2026 T1 Quiz 1, Q13", "projections summed [2, 2]",
           lambda: nx.additive_score([1, 1], [2, 2], [0, 0]), 1.93, 2),
    worked("s000-bahdanau-two-state-example", "alpha", lambda: nx.softmax([2, 0]), [0.881, 0.119], 3),
    worked("s000-bahdanau-two-state-example", "context",
           lambda: nx.weighted_sum(nx.softmax([2, 0]), H2), [0.881, 0.119], 3),
    worked("s000-bahdanau-two-state-example", "distractor weights over the decoder step",
           lambda: nx.weighted_sum(nx.softmax([[2.0, 0.0]], axis=0)[0], H2), [1.0, 1.0], 3),
    worked("s000-check-yourself-2", "c = softmax(e) H",
           lambda: nx.weighted_sum(nx.softmax([2, 0]), H2), [0.881, 0.119], 3),
    worked("s000-additive-attention-executed-05", "alpha",
           lambda: nx.softmax(EXECUTED_05), [0.384, 0.327, 0.176, 0.113], 3),
    worked("s000-additive-attention-executed-05", "sum=1.000000",
           lambda: nx.softmax(EXECUTED_05).sum(), 1.0, 6),
    worked("s003-softmax-refresher", "[2, 1, 0]", lambda: nx.softmax([2, 1, 0]), [0.665, 0.245, 0.090], 3),
    # weighted sums
    worked("2025 T2 Quiz 1, Q146", "output vector",
           lambda: nx.weighted_sum([0.1, 0.2, 0.5, 0.2], Q146_V), [1.00, 0.90], 2),
    worked("2025 T2 Quiz 1, Q146", "first element",
           lambda: nx.weighted_sum([0.1, 0.2, 0.5, 0.2], Q146_V)[0], 1.00, 2),
    worked("s003-wp-weighted-average", "14.0",
           lambda: nx.weighted_sum([0.7, 0.2, 0.1], [10, 20, 30]), 14.0, 1),
    worked("s003-wp-weighted-average", "distractor unweighted mean",
           lambda: nx.weighted_sum(np.full(3, 1 / 3), [10, 20, 30]), 20.0, 1),
    # two-token identity example
    worked("s000-self-attention-two-token-identity", "scaled scores row 1",
           lambda: nx.attention_scores(I2, I2)[0], [0.707, 0.0], 3),
    worked("s000-self-attention-two-token-identity", "alpha row 1",
           lambda: nx.attention_weights(I2, I2)[0], [0.670, 0.330], 3),
    worked("s000-self-attention-two-token-identity", "z_1 and z_2",
           lambda: nx.scaled_dot_product_attention(I2, I2, I2), [[0.670, 0.330], [0.330, 0.670]], 3),
    worked("s000-self-attention-two-token-identity", "distractor no sqrt(d_k)",
           lambda: nx.attention_weights(I2, I2, scale=False)[0], [0.731, 0.269], 3),
    # values, not keys
    worked("s000-values-not-keys-notes-example", "weights",
           lambda: nx.attention_weights(Q_1, K_00), [[0.5, 0.5]], 1),
    worked("s000-values-not-keys-notes-example", "z",
           lambda: nx.scaled_dot_product_attention(Q_1, K_00, V_NOTES), [[0.5, 1.0]], 1),
    worked("s000-values-not-keys-notes-example", "distractor sum of keys",
           lambda: nx.scaled_dot_product_attention(Q_1, K_00, K_00), [[0.0]], 1),
    # scaling at d_k = 64
    worked("s000-scaling-d64-raw-8-0", "raw scores",
           lambda: nx.attention_scores(Q_64, K_64, divisor=1)[0], [8.0, 0.0], 6),
    worked("s000-scaling-d64-raw-8-0", "scaled scores",
           lambda: nx.attention_scores(Q_64, K_64)[0], [1.0, 0.0], 6),
    worked("s000-scaling-d64-raw-8-0", "unscaled softmax",
           lambda: nx.attention_weights(Q_64, K_64, scale=False)[0], [0.9997, 0.0003], 4),
    worked("s000-scaling-d64-raw-8-0", "scaled softmax",
           lambda: nx.attention_weights(Q_64, K_64)[0], [0.731, 0.269], 3),
    worked("s000-scaling-d64-raw-8-0", "softmax([8, 0])", lambda: nx.softmax([8, 0]), [0.9997, 0.0003], 4),
    # two-token worked problem
    worked("s003-wp-two-token-attention", "weights",
           lambda: nx.attention_weights(I2, I2), [[0.67, 0.33], [0.33, 0.67]], 2),
    worked("s003-wp-two-token-attention", "output",
           lambda: nx.scaled_dot_product_attention(I2, I2, V2), [[1.66, 2.66], [2.34, 3.34]], 2),
    worked("s003-wp-two-token-attention", "e^0.707 = 2.028",
           lambda: np.exp(nx.attention_scores(I2, I2)[0, 0]), 2.028, 3),
    worked("s003-wp-two-token-attention", "distractor no scaling",
           lambda: nx.scaled_dot_product_attention(I2, I2, V2, scale=False), [[1.54, 2.54], [2.46, 3.46]], 2),
    worked("s003-wp-two-token-attention", "distractor A times K",
           lambda: nx.scaled_dot_product_attention(I2, I2, I2), [[0.67, 0.33], [0.33, 0.67]], 2),
    worked("s003-wp-two-token-attention", "distractor divide by d_k",
           lambda: nx.softmax(nx.attention_scores(I2, I2, divisor=2)) @ V2, [[1.76, 2.76], [2.24, 3.24]], 2),
    worked("s003-wp-two-token-attention", "softmax over queries does not discriminate here",
           lambda: nx.softmax(nx.attention_scores(I2, I2), axis=0) @ V2, [[1.66, 2.66], [2.34, 3.34]], 2),
    # three-token example (code walkthrough and worked problem)
    worked("s003-worked-numeric-3-token", "QK^T",
           lambda: nx.attention_scores(X3, X3, divisor=1), [[1, 0, 1], [0, 1, 1], [1, 1, 2]], 6),
    worked("s003-worked-numeric-3-token", "scaled", lambda: nx.attention_scores(X3, X3),
           [[0.707, 0, 0.707], [0, 0.707, 0.707], [0.707, 0.707, 1.414]], 3),
    worked("s003-worked-numeric-3-token", "row sums of exp 5.06 and 8.17",
           lambda: np.exp(nx.attention_scores(X3, X3)).sum(axis=-1)[[0, 2]], [5.06, 8.17], 2),
    worked("s003-worked-numeric-3-token", "weights", lambda: nx.attention_weights(X3, X3),
           [[0.40, 0.20, 0.40], [0.20, 0.40, 0.40], [0.25, 0.25, 0.50]], 2),
    worked("s003-worked-numeric-3-token", "token 1 output",
           lambda: nx.scaled_dot_product_attention(X3, X3, X3)[0], [0.80, 0.60], 2),
    worked("s003-worked-numeric-3-token", "distractor no scaling weights",
           lambda: nx.attention_weights(X3, X3, scale=False)[0], [0.42, 0.16, 0.42], 2),
    worked("s003-worked-numeric-3-token", "distractor no scaling output",
           lambda: nx.scaled_dot_product_attention(X3, X3, X3, scale=False)[0], [0.84, 0.58], 2),
    worked("s003-worked-numeric-3-token", "distractor softmax over queries",
           lambda: nx.softmax(nx.attention_scores(X3, X3), axis=0) @ X3,
           [[0.65, 0.45], [0.45, 0.65], [0.90, 0.90]], 2),
    worked("s003-code-three-token-attention", "output",
           lambda: nx.scaled_dot_product_attention(X3, X3, X3), [[0.8, 0.6], [0.6, 0.8], [0.75, 0.75]], 2),
    worked("s003-code-three-token-attention", "row sums",
           lambda: nx.attention_weights(X3, X3).sum(axis=-1), [1.0, 1.0, 1.0], 6),
    worked("s003-practice-task-1", "row 2 weights",
           lambda: nx.attention_weights(X3, X3)[1], [0.20, 0.40, 0.40], 2),
    worked("s003-practice-task-1", "row 2 output",
           lambda: nx.scaled_dot_product_attention(X3, X3, X3)[1], [0.60, 0.80], 2),
    # masks
    worked("s003-wp-causal-mask", "weights", lambda: nx.softmax(SCORES_123, mask=nx.causal_mask(3)),
           [[1, 0, 0], [0.269, 0.731, 0], [0.090, 0.245, 0.665]], 3),
    worked("s003-wp-causal-mask", "distractor softmax over queries",
           lambda: nx.softmax(SCORES_123, axis=0, mask=nx.causal_mask(3)),
           [[0.333, 0, 0], [0.333, 0.5, 0], [0.333, 0.5, 1]], 3),
    worked("s003-wp-causal-mask", "distractor no mask",
           lambda: nx.softmax(SCORES_123), [[0.090, 0.245, 0.665]] * 3, 3),
    worked("s003-wp-causal-mask", "distractor masked scores set to 0",
           lambda: nx.softmax(np.where(nx.causal_mask(3), SCORES_123, 0.0))[:2],
           [[0.576, 0.212, 0.212], [0.245, 0.665, 0.090]], 3),
    worked("s003-yt-padding-mask", "weights",
           lambda: nx.softmax([0.5, 1.0, 2.0], mask=nx.padding_mask(3, 2)), [0.378, 0.622, 0.0], 3),
    worked("s003-yt-padding-mask", "distractor pad not masked",
           lambda: nx.softmax([0.5, 1.0, 2.0]), [0.140, 0.231, 0.629], 3),
    worked("s003-yt-padding-mask", "distractor pad score set to 0",
           lambda: nx.softmax([0.5, 1.0, 0.0]), [0.307, 0.506, 0.186], 3),
    # W_O
    worked("s000-wo-hand-example", "concat", lambda: nx.merge_heads(HEADS_HAND), [[1, 2, 3, 4]], 6),
    worked("s000-wo-hand-example", "output", lambda: nx.merge_heads(HEADS_HAND) @ W_O_HAND, [[4, 6]], 6),
    # positions
    worked("s003-wp-sinusoidal-pos0-pos1", "position 0",
           lambda: nx.sinusoidal_positions(3, 4)[0], [0, 1, 0, 1], 3),
    worked("s003-wp-sinusoidal-pos0-pos1", "position 1",
           lambda: nx.sinusoidal_positions(3, 4)[1], [0.841, 0.540, 0.010, 1.000], 3),
    worked("s003-wp-sinusoidal-pos0-pos1", "position 1 alone",
           lambda: nx.sinusoidal_encoding(1, 4), [0.841, 0.540, 0.010, 1.000], 3),
    worked("s003-wp-sinusoidal-pos0-pos1", "denominators 1 and 100",
           lambda: [nx.pair_denominator(0, 4), nx.pair_denominator(1, 4)], [1.0, 100.0], 6),
    worked("s003-wp-sinusoidal-pos0-pos1", "frequencies 1 and 1/100",
           lambda: [nx.pair_frequency(0, 4), nx.pair_frequency(1, 4)], [1.0, 0.01], 6),
    worked("s003-wp-sinusoidal-pos0-pos1", "distractor sin/cos swapped",
           lambda: nx.sinusoidal_encoding(1, 4, sin_first=False), [0.540, 0.841, 1.000, 0.010], 3),
    worked("s003-wp-sinusoidal-pos0-pos1", "distractor exponent i/d",
           lambda: nx.sinusoidal_encoding(1, 4, pair_step=1)[2:], [0.100, 0.995], 3),
    worked("s003-yt-pe-position-2", "first pair",
           lambda: nx.sinusoidal_positions(3, 4)[2, :2], [0.909, -0.416], 3),
    # LayerNorm and residuals
    worked("s003-wp-layernorm-1234", "y",
           lambda: nx.layer_norm([1, 2, 3, 4]), [-1.342, -0.447, 0.447, 1.342], 3),
    worked("s003-wp-layernorm-1234", "y without gamma and beta",
           lambda: nx.normalise([1, 2, 3, 4]), [-1.342, -0.447, 0.447, 1.342], 3),
    worked("s003-wp-layernorm-1234", "mean 0", lambda: nx.layer_norm([1, 2, 3, 4]).mean(), 0.0, 3),
    worked("s003-wp-layernorm-1234", "distractor sample std",
           lambda: nx.normalise([1, 2, 3, 4], ddof=1), [-1.162, -0.387, 0.387, 1.162], 3),
    worked("s003-yt-layernorm-constant", "[0, 0, 0, 0]",
           lambda: nx.layer_norm([10, 10, 10, 10]), [0, 0, 0, 0], 6),
    worked("s003-yt-residual", "x + f(x)", lambda: nx.residual([1, 2], [0.1, -0.2]), [1.1, 1.8], 1),
    worked("s003-wp-skip-connection-slopes", "slope of f",
           lambda: nx.stacked_slope(0.1, 1, skip=False), 0.1, 3),
    worked("s003-wp-skip-connection-slopes", "slope of x + f(x)",
           lambda: nx.stacked_slope(0.1, 1, skip=True), 1.1, 3),
    worked("s003-wp-skip-connection-slopes", "central differences as in the notes' code",
           lambda: [central_slope(lambda x: 0.1 * x), central_slope(lambda x: nx.residual(x, 0.1 * x))],
           [0.1, 1.1], 3),
    # dot-product variance
    worked("s000-dot-product-variance-table-02", "target",
           lambda: [nx.dot_product_variance(d) for d in DK], [4, 16, 64, 256], 6),
    worked("s000-dot-product-variance-table-02", "scaled target",
           lambda: [nx.dot_product_variance(d, scaled=True) for d in DK], [1, 1, 1, 1], 6),
    worked("s003-yt-dot-product-std", "sqrt(d)",
           lambda: [math.sqrt(nx.dot_product_variance(d)) for d in (4, 64)], [2.0, 8.0], 1),
    # RNN gradient
    worked("s002-fig-rnn-gradient-vanishing", "the catalogue's inference 0.670^50",
           lambda: nx.rnn_gradient_factor(0.670, 50), 2e-9, 9),
]
# fmt: on


def _printed(value: Any, decimals: int) -> Any:
    # Round like the notes' printouts (np.round) and drop -0.0, so rows compare as printed.
    return np.round(np.asarray(value, dtype=np.float64), decimals) + 0.0


@pytest.mark.parametrize(("compute", "expected", "decimals"), ROUNDED)
def test_worked_number(compute: Compute, expected: Any, decimals: int) -> None:
    value = np.asarray(compute(), dtype=np.float64)
    assert np.all(np.isfinite(value))
    assert value.shape == np.shape(expected)
    np.testing.assert_array_equal(_printed(value, decimals), np.asarray(expected, dtype=np.float64))


ENCODER_512 = nx.encoder_layer_params(512, 2048)
DENSE_768 = nx.projection_flops_per_token(768) + nx.ffn_flops_per_token(768, 3072)

# fmt: off
COUNTS = [
    exactly("s000-encoder-layer-params-d512", "MHA", lambda: nx.mha_params(512), 1_050_624),
    exactly("s000-encoder-layer-params-d512", "FFN", lambda: nx.ffn_params(512, 2048), 2_099_712),
    exactly("s000-encoder-layer-params-d512", "two LayerNorms",
            lambda: nx.layer_norm_params(512, count=2), 2_048),
    exactly("s000-encoder-layer-params-d512", "total", lambda: nx.encoder_layer_params(512, 2048), 3_152_384),
    exactly("s000-encoder-layer-params-d512", "4d^2 + 2df + f + 9d",
            lambda: 4 * 512**2 + 2 * 512 * 2048 + 2048 + 9 * 512, 3_152_384),
    exactly("s000-encoder-layer-params-d512", "distractor weights only",
            lambda: nx.encoder_layer_params(512, 2048, counted=WEIGHTS_ONLY), 3_145_728),
    exactly("s000-encoder-layer-params-d512", "distractor no LayerNorm",
            lambda: nx.encoder_layer_params(512, 2048, counted=Counted(norms=False)), 3_150_336),
    exactly("s000-encoder-layer-params-d512", "distractor MHA without biases",
            lambda: nx.mha_params(512, counted=NO_BIASES), 1_048_576),
    exactly("s000-encoder-layer-params-d512", "distractor forgot W_O and b_O",
            lambda: nx.encoder_layer_params(512, 2048, counted=Counted(w_o=False)), 2_889_728),
    exactly("s000-check-yourself-5", "biases and norms included",
            lambda: nx.encoder_layer_params(512, 2048), 3_152_384),
    exactly("s000-six-layers-params", "six layers", lambda: nx.stack_params(ENCODER_512, 6), 18_914_304),
    exactly("s000-six-layers-params", "distractor shared weights",
            lambda: nx.stack_params(ENCODER_512, 6, shared=True), 3_152_384),
    exactly("seed_items.md MC-ENC-3", "decoder layer (cross-attention, third LN)",
            lambda: nx.decoder_layer_params(512, 2048), 4_204_032),
    exactly("s003-wp-ffn-params-512", "expand",
            lambda: nx.projection_params(512, 2048, bias=True), 1_050_624),
    exactly("s003-wp-ffn-params-512", "project back",
            lambda: nx.projection_params(2048, 512, bias=True), 1_049_088),
    exactly("s003-wp-ffn-params-512", "total", lambda: nx.ffn_params(512, 2048), 2_099_712),
    exactly("s003-wp-ffn-params-512", "distractor weights only",
            lambda: nx.ffn_params(512, 2048, counted=NO_BIASES), 2_097_152),
    exactly("s003-yt-ffn-params-768", "expand",
            lambda: nx.projection_params(768, 3072, bias=True), 2_362_368),
    exactly("s003-yt-ffn-params-768", "project back",
            lambda: nx.projection_params(3072, 768, bias=True), 2_360_064),
    exactly("s003-yt-ffn-params-768", "total", lambda: nx.ffn_params(768, 3072), 4_722_432),
    exactly("s003-yt-ffn-params-768", "distractor weights only",
            lambda: nx.ffn_params(768, 3072, counted=NO_BIASES), 4_718_592),
    exactly("s003-wp-head-size-params", "per matrix", lambda: nx.projection_params(512, 512), 262_144),
    exactly("s003-wp-head-size-params", "Q, K, V, O without biases",
            lambda: nx.mha_params(512, counted=NO_BIASES), 1_048_576),
    exactly("s003-wp-head-size-params", "distractor forgot W_O",
            lambda: nx.mha_params(512, counted=Counted(biases=False, w_o=False)), 786_432),
    exactly("s003-wp-head-size-params", "head size", lambda: nx.head_dim(512, 8), 64),
    exactly("s003-yt-bert-base-head-size", "head size", lambda: nx.head_dim(768, 12), 64),
    exactly("s002-block-params-3280", "12d^2 + 13d at d = 16", lambda: nx.block_params_12d2(16), 3_280),
    exactly("s002-block-params-3280", "an encoder layer with f = 4d",
            lambda: nx.encoder_layer_params(16, 64), 3_280),
    exactly("s002-block-params-3280", "same formula at d = 512",
            lambda: nx.block_params_12d2(512), 3_152_384),
    exactly("s002-block-params-3280", "distractor 12d^2 (biases and LN left out)",
            lambda: nx.encoder_layer_params(16, 64, counted=WEIGHTS_ONLY), 3_072),
    exactly("s002-block-params-3280", "distractor 12d^2 + 9d (LN left out)",
            lambda: nx.encoder_layer_params(16, 64, counted=Counted(norms=False)), 3_216),
    exactly("2025 T3 Quiz 1, Q191", "W_O at 768", lambda: nx.projection_params(768, 768), 589_824),
    exactly("2025 T3 Quiz 1, Q191", "distractor with bias",
            lambda: nx.projection_params(768, 768, bias=True), 590_592),
    exactly("2025 T3 Quiz 1, Q191", "distractor all four projections",
            lambda: nx.mha_params(768, counted=NO_BIASES), 2_359_296),
    exactly("s000-one-head-wq-params", "one head's W_Q",
            lambda: nx.projection_params(512, nx.head_dim(512, 8)), 32_768),
    exactly("s000-score-entries", "B h T^2", lambda: nx.score_entries(4, 2, 12), 1_152),
    exactly("s000-score-entries", "doubling T quadruples", lambda: nx.score_entries(4, 2, 24), 4_608),
    exactly("s000-score-entries", "cross-attention T_q by T_k",
            lambda: nx.score_entries(4, 2, 12, 24), 2_304),
    exactly("2026 T1 End Term FN, Q4", "B T d", lambda: nx.tensor_volume((5, 20, 64)), 6_400),
    exactly("2026 T1 End Term FN, Q4", "distractor one sentence", lambda: nx.tensor_volume((20, 64)), 1_280),
    exactly("2026 T1 End Term FN, Q4", "distractor width dropped", lambda: nx.tensor_volume((5, 20)), 100),
    exactly("s002-fig-attention-dense-crossover", "n = 6d", lambda: nx.attention_dense_crossover(768), 4_608),
    exactly("s002-fig-attention-dense-crossover", "24d^2 dense FLOPs per token",
            lambda: nx.dense_flops_per_token(768), 24 * 768**2),
    exactly("s002-fig-attention-dense-crossover", "4nd at the crossover equals 24d^2",
            lambda: nx.attention_score_flops_per_token(4_608, 768), nx.dense_flops_per_token(768)),
    exactly("s002-fig-attention-dense-crossover", "from the FLOP pieces",
            lambda: nx.crossover_length(DENSE_768, 768), 4_608),
    exactly("s002-fig-attention-dense-crossover", "QK^T-only convention 12d",
            lambda: nx.crossover_length(DENSE_768, 768, products=1), 9_216),
    exactly("s002-self-check-6", "n = 6d at d = 768", lambda: nx.attention_dense_crossover(768), 4_608),
]
# fmt: on


@pytest.mark.parametrize(("compute", "expected"), COUNTS)
def test_worked_count(compute: Compute, expected: int) -> None:
    value = compute()
    assert type(value) is int
    assert value == expected


def _mha_output_shape(batch: int, t: int, d: int, heads: int) -> tuple[int, ...]:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(batch, t, d))
    w_q, w_k, w_v, w_o = (rng.normal(size=(d, d)) for _ in range(4))
    return nx.multi_head_attention(x, x, w_q, w_k, w_v, w_o, heads).shape


def _encoder_stack_output_shape(t: int, d: int, heads: int, d_ff: int, layers: int) -> tuple[int, ...]:
    # One random set of weights reused by every layer: only the shape is at stake here.
    rng = np.random.default_rng(4)
    scale = 1 / math.sqrt(d)
    mha: dict[str, ArrayLike] = {
        k: rng.normal(scale=scale, size=(d, d)) for k in ("w_q", "w_k", "w_v", "w_o")
    }
    ffn: dict[str, ArrayLike] = {
        "w1": rng.normal(scale=scale, size=(d, d_ff)),
        "b1": np.zeros(d_ff),
        "w2": rng.normal(scale=1 / math.sqrt(d_ff), size=(d_ff, d)),
        "b2": np.zeros(d),
    }
    x = rng.normal(size=(t, d))
    for _ in range(layers):
        x = nx.encoder_layer(x, mha=mha, ffn=ffn, heads=heads)
    assert np.all(np.isfinite(x))
    return x.shape


# fmt: off
SHAPES = [
    exactly("2026 T1 Quiz 2, Q2", "concat width [T, 512]",
            lambda: nx.merge_heads_shape(nx.split_heads_shape(("T", 512), 8)), ("T", 512)),
    exactly("s000-mha-base-sizes", "heads of width 64",
            lambda: nx.split_heads(np.zeros((1, 5, 512)), 8).shape, (1, 8, 5, 64)),
    exactly("s000-mha-base-sizes", "concat [B, T, 512]",
            lambda: nx.merge_heads(nx.split_heads(np.zeros((1, 5, 512)), 8)).shape, (1, 5, 512)),
    exactly("s000-mha-shape-check-executed-03", "heads [B, h, T, d_k]",
            lambda: nx.split_heads(np.zeros((2, 5, 16)), 4).shape, (2, 4, 5, 4)),
    exactly("s000-mha-shape-check-executed-03", "heads by the shape rule",
            lambda: nx.split_heads_shape((2, 5, 16), 4), (2, 4, 5, 4)),
    exactly("s000-mha-shape-check-executed-03", "MHA output",
            lambda: _mha_output_shape(2, 5, 16, 4), (2, 5, 16)),
    exactly("2026 T1 Quiz 1, Q4", "sixth layer by the shape rule",
            lambda: nx.encoder_stack_shape((50, 512), heads=8, d_ff=2048, layers=6), (50, 512)),
    exactly("s000-encoder-6-layer-shape", "six computed layers",
            lambda: _encoder_stack_output_shape(50, 512, 8, 2048, 6), (50, 512)),
    exactly("s003-wp-shape-tracking-block", "FFN hidden",
            lambda: nx.ffn_hidden_shape((2, 5, 16), 64), (2, 5, 64)),
    exactly("s003-wp-shape-tracking-block", "block output",
            lambda: nx.encoder_layer_shape((2, 5, 16), heads=4, d_ff=64), (2, 5, 16)),
    exactly("s003-wp-shape-tracking-block", "computed block output",
            lambda: _encoder_stack_output_shape(5, 16, 4, 64, 1), (5, 16)),
    exactly("s004-toy-self-attention-shape", "(4, 8)",
            lambda: nx.scaled_dot_product_attention(*(np.ones((4, 8)),) * 3).shape, (4, 8)),
    exactly("s002-self-check-1", "QK^T is n_q by n_k",
            lambda: nx.scores_shape(("n_q", "d_k"), ("n_k", "d_k")), ("n_q", "n_k")),
    exactly("s002-self-check-1", "output is n_q by d_v",
            lambda: nx.matmul_shape(("n_q", "n_k"), ("n_k", "d_v")), ("n_q", "d_v")),
    exactly("s002-self-check-1", "computed with n_q=3, n_k=5, d_v=6",
            lambda: nx.scaled_dot_product_attention(np.ones((3, 4)), np.ones((5, 4)), np.ones((5, 6))).shape,
            (3, 6)),
    exactly("s003-common-error-qk-transpose", "Q K^T is (3, 3)",
            lambda: nx.matmul_shape((3, 2), (2, 3)), (3, 3)),
    exactly("s003-common-error-qk-transpose", "distractor K^T Q is (2, 2)",
            lambda: nx.matmul_shape((2, 3), (3, 2)), (2, 2)),
    exactly("s003-selfattention-module-shapes", "weights (1, 6, 6)",
            lambda: nx.attention_weights(np.ones((1, 6, 16)), np.ones((1, 6, 16))).shape, (1, 6, 6)),
    exactly("s003-causal-mask-T6", "first three rows",
            lambda: nx.causal_mask(6)[:3].astype(int).tolist(),
            [[1, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0], [1, 1, 1, 0, 0, 0]]),
    exactly("s004-causal-word-12", "word 12 sees words 1-12",
            lambda: [int(i) + 1 for i in np.flatnonzero(nx.causal_mask(20)[11])], list(range(1, 13))),
    exactly("s003-yt-padding-mask", "padding mask",
            lambda: nx.padding_mask(3, 2).tolist(), [True, True, False]),
]
# fmt: on


@pytest.mark.parametrize(("compute", "expected"), SHAPES)
def test_worked_shape(compute: Compute, expected: Any) -> None:
    assert compute() == expected


def test_qk_without_transpose_does_not_fit() -> None:
    # s003-common-error-qk-transpose: Q @ K with Q, K of shape (3, 2) is a shape error.
    with pytest.raises(ValueError, match="inner sizes"):
        nx.matmul_shape((3, 2), (3, 2))


def test_layer_norm_of_a_constant_is_zero_not_nan() -> None:
    # s003-yt-layernorm-constant: ε avoids 0/0.
    assert np.all(nx.layer_norm([10.0, 10.0, 10.0, 10.0]) == 0.0)


@pytest.mark.parametrize(
    ("d_k", "printed_var", "printed_scaled"),
    [(4, 4.04, 1.011), (16, 15.87, 0.992), (64, 63.83, 0.997), (256, 253.99, 0.992)],
    ids=[f"s000-dot-product-variance-table-02: d_k={d}" for d in DK],
)
def test_variance_table_is_a_sample_of_the_target(
    d_k: int, printed_var: float, printed_scaled: float
) -> None:
    # The notes' run drew 20,000 pairs; with unit-normal entries the sample variance of q·k has
    # standard error d_k·√((2 + 6/d_k)/20000). Every printed row lies within 3 of them of the target.
    target = nx.dot_product_variance(d_k)
    standard_error = d_k * math.sqrt((2 + 6 / d_k) / 20_000)
    assert abs(printed_var - target) < 3 * standard_error
    assert abs(printed_scaled - nx.dot_product_variance(d_k, scaled=True)) < 3 * standard_error / d_k


@pytest.mark.parametrize(
    ("d_k", "printed"),
    [(4, 2.0), (64, 8.0)],
    ids=["s003-yt-dot-product-std: d=4", "s003-yt-dot-product-std: d=64"],
)
def test_dot_product_spread_matches_the_notes_run(d_k: int, printed: float) -> None:
    # The notes' own code (seed 0, 20,000 pairs, d = 4 drawn before d = 64) prints 2.0 and 8.0.
    rng = np.random.default_rng(0)
    spreads = {}
    for d in (4, 64):
        q = rng.normal(size=(20_000, d))
        k = rng.normal(size=(20_000, d))
        spreads[d] = float((q * k).sum(axis=1).std())
    assert round(spreads[d_k], 1) == printed
    assert round(math.sqrt(nx.dot_product_variance(d_k)), 1) == printed


def test_position_similarity_depends_only_on_the_offset() -> None:
    # s002-fig-pe-relative-offset: PE(p)·PE(p+k) = Σᵢ cos(k·ωᵢ) for p = 0, 20, 100, k < 50, d = 64.
    pe = nx.sinusoidal_positions(150, 64)
    omega = np.array([nx.pair_frequency(i, 64) for i in range(32)])
    for k in range(50):
        expected = float(np.cos(k * omega).sum())
        for p in (0, 20, 100):
            assert float(pe[p] @ pe[p + k]) == pytest.approx(expected, abs=1e-12)
            assert nx.position_similarity(p, p + k, 64) == pytest.approx(expected, abs=1e-12)


def _random_layer(rng: np.random.Generator, d: int, d_ff: int) -> dict[str, Any]:
    return {
        "mha": {
            **{name: rng.normal(size=(d, d)) / math.sqrt(d) for name in ("w_q", "w_k", "w_v", "w_o")},
            **{name: rng.normal(size=d) for name in ("b_q", "b_k", "b_v", "b_o")},
        },
        "ffn": {
            "w1": rng.normal(size=(d, d_ff)) / math.sqrt(d),
            "b1": rng.normal(size=d_ff),
            "w2": rng.normal(size=(d_ff, d)) / math.sqrt(d_ff),
            "b2": rng.normal(size=d),
        },
        "ln1": (rng.normal(size=d), rng.normal(size=d)),
        "ln2": (rng.normal(size=d), rng.normal(size=d)),
    }


def test_shuffling_tokens_without_positions_shuffles_the_output() -> None:
    # s002-self-check-3 and s002-fig-shuffle-invariance: an encoder layer is permutation-equivariant
    # (shuffled in, identically shuffled out) until positional encodings are added.
    rng = np.random.default_rng(11)
    d, t = 8, 6
    layer = _random_layer(rng, d, 16)
    x = rng.normal(size=(t, d))
    order = rng.permutation(t)
    out = nx.encoder_layer(x, heads=2, **layer)
    np.testing.assert_allclose(nx.encoder_layer(x[order], heads=2, **layer), out[order], atol=1e-12)
    pe = nx.sinusoidal_positions(t, d)
    with_pe = nx.encoder_layer(x + pe, heads=2, **layer)
    shuffled_with_pe = nx.encoder_layer(x[order] + pe, heads=2, **layer)
    assert np.max(np.abs(shuffled_with_pe - with_pe[order])) > 0.1


# ---------------------------------------------------------------------------------------------
# Multi-head attention and the encoder layer, from their definitions
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("d", "heads"), [(8, 1), (8, 2), (12, 3), (16, 4), (16, 16)])
def test_mha_is_concat_of_heads_times_w_o(d: int, heads: int) -> None:
    rng = np.random.default_rng(d * 100 + heads)
    x_q = rng.normal(size=(2, 3, d))
    x_kv = rng.normal(size=(2, 5, d))
    w_q, w_k, w_v, w_o = (rng.normal(size=(d, d)) for _ in range(4))
    b_q, b_k, b_v, b_o = (rng.normal(size=d) for _ in range(4))
    mask = rng.random((3, 5)) < 0.7
    mask[:, 0] = True
    out = nx.multi_head_attention(
        x_q, x_kv, w_q, w_k, w_v, w_o, heads, b_q=b_q, b_k=b_k, b_v=b_v, b_o=b_o, mask=mask
    )
    width = d // heads
    concat = []
    for i in range(heads):
        cols = slice(i * width, (i + 1) * width)  # head i owns these columns of each projection
        q = x_q @ w_q[:, cols] + b_q[cols]
        k = x_kv @ w_k[:, cols] + b_k[cols]
        v = x_kv @ w_v[:, cols] + b_v[cols]
        scores = np.where(mask, q @ np.swapaxes(k, -1, -2) / math.sqrt(width), -np.inf)
        weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
        concat.append(weights / weights.sum(axis=-1, keepdims=True) @ v)
    expected = np.concatenate(concat, axis=-1) @ w_o + b_o
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-12)


def test_one_head_mha_is_sdpa_of_the_projections() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(size=(4, 6))
    w_q, w_k, w_v, w_o = (rng.normal(size=(6, 6)) for _ in range(4))
    expected = nx.scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v) @ w_o
    np.testing.assert_allclose(nx.multi_head_attention(x, x, w_q, w_k, w_v, w_o, 1), expected, atol=1e-12)


def test_encoder_layer_is_post_norm() -> None:
    rng = np.random.default_rng(6)
    layer = _random_layer(rng, 8, 32)
    x = rng.normal(size=(2, 5, 8))
    (g1, b1), (g2, b2) = layer["ln1"], layer["ln2"]
    u = nx.layer_norm(x + nx.multi_head_attention(x, x, heads=4, **layer["mha"]), gamma=g1, beta=b1)
    y = nx.layer_norm(u + nx.feed_forward(u, **layer["ffn"]), gamma=g2, beta=b2)
    np.testing.assert_allclose(nx.encoder_layer(x, heads=4, **layer), y, atol=1e-12)


def test_encoder_layer_without_affine_norms_gives_unit_rows() -> None:
    rng = np.random.default_rng(7)
    layer = _random_layer(rng, 8, 32)
    del layer["ln1"], layer["ln2"]
    out = nx.encoder_layer(rng.normal(size=(5, 8)), heads=2, **layer)
    np.testing.assert_allclose(out.mean(axis=-1), 0.0, atol=1e-12)
    np.testing.assert_allclose(out.var(axis=-1), 1.0, atol=1e-3)  # ε = 1e-5 keeps it just under 1


def test_feed_forward_is_relu_between_two_maps() -> None:
    x = np.array([[1.0, -1.0]])
    w1 = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 1.0]])
    b1 = np.array([0.0, 0.5, -2.0])  # hidden before ReLU: [1, -0.5, -1] → [1, 0, 0]
    w2 = np.array([[1.0], [10.0], [100.0]])
    np.testing.assert_array_equal(nx.feed_forward(x, w1, b1, w2, np.array([0.25])), [[1.25]])
    np.testing.assert_array_equal(nx.relu([-1.0, 0.0, 2.0]), [0.0, 0.0, 2.0])


def test_layer_norm_affine_and_epsilon() -> None:
    x = np.array([[1.0, 2.0, 3.0, 4.0], [2.0, 2.0, 2.0, 6.0]])
    gamma, beta = np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.0, 1.0, 0.0, -1.0])
    expected = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-3) * gamma + beta
    np.testing.assert_allclose(nx.layer_norm(x, gamma=gamma, beta=beta, eps=1e-3), expected, atol=1e-14)


@pytest.mark.parametrize(("positions", "d"), [(5, 4), (7, 6), (3, 5), (10, 64)])
def test_sinusoidal_positions_follow_the_formula(positions: int, d: int) -> None:
    pe = nx.sinusoidal_positions(positions, d)
    assert pe.shape == (positions, d)
    for pos in range(positions):
        for j in range(d):
            angle = pos / 10000 ** ((j - j % 2) / d)  # dimensions 2i and 2i+1 share the angle
            assert pe[pos, j] == pytest.approx(math.sin(angle) if j % 2 == 0 else math.cos(angle), abs=1e-12)
        if d % 2 == 0:
            np.testing.assert_allclose(nx.sinusoidal_encoding(pos, d), pe[pos], atol=1e-12)


# fmt: off
INVALID = [
    pytest.param(lambda: nx.split_heads(np.zeros((2, 10)), 3), "not divisible", id="split-heads"),
    pytest.param(lambda: nx.head_dim(512, 7), "not divisible", id="head-dim"),
    pytest.param(lambda: nx.head_dim(512, 0), "not divisible", id="head-dim-zero"),
    pytest.param(lambda: nx.steps_to_fall_below(1.0, 0.5), "strictly between", id="steps-per-step-1"),
    pytest.param(lambda: nx.steps_to_fall_below(0.5, 0.0), "strictly between", id="steps-threshold-0"),
    pytest.param(lambda: nx.stacked_slope(0.1, 0, skip=True), "at least 1", id="slope-no-layers"),
    pytest.param(lambda: nx.crossover_length(1000, 768), "whole multiple", id="crossover-not-whole"),
    pytest.param(lambda: nx.padding_mask(3, 4), "cannot hold", id="padding-too-many"),
    pytest.param(lambda: nx.pair_denominator(2, 4), "does not exist", id="pair-out-of-range"),
    pytest.param(lambda: nx.sinusoidal_encoding(1, 5), "even", id="encoding-odd-width"),
    pytest.param(lambda: nx.encoder_layer_shape((5, 16), heads=3, d_ff=64), "not divisible",
                 id="shape-heads-not-dividing"),
]
# fmt: on


@pytest.mark.parametrize(("call", "message"), INVALID)
def test_invalid_inputs_are_refused(call: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------

finite = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)
small_dims = st.integers(min_value=1, max_value=4)


@st.composite
def score_rows(draw: st.DrawFn) -> np.ndarray:
    shape = draw(st.tuples(small_dims, st.integers(min_value=1, max_value=6)))
    return draw(arrays(np.float64, shape, elements=finite))


@given(score_rows(), st.floats(min_value=-1e3, max_value=1e3))
@settings(max_examples=150, deadline=None)
def test_softmax_rows_sum_to_one_and_ignore_a_shift(scores: np.ndarray, shift: float) -> None:
    weights = nx.softmax(scores)
    assert np.all(weights >= 0)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(nx.softmax(scores + shift), weights, rtol=0, atol=1e-12)


@given(score_rows(), st.data())
@settings(max_examples=150, deadline=None)
def test_masked_entries_get_exactly_zero(scores: np.ndarray, data: st.DataObject) -> None:
    mask = data.draw(arrays(np.bool_, scores.shape))
    weights = nx.softmax(scores, mask=mask)
    assert np.all(np.isfinite(weights))
    assert np.all(weights[~mask] == 0.0)
    kept = mask.any(axis=-1)
    np.testing.assert_allclose(weights[kept].sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    # A fully masked row has no distribution: zeros, not NaN.
    assert np.all(weights[~kept] == 0.0)
    # Masking is the same as dropping the entries and renormalising.
    for row, keep, w in zip(scores, mask, weights, strict=True):
        if keep.any():
            np.testing.assert_allclose(w[keep], nx.softmax(row[keep]), rtol=0, atol=1e-12)


def test_fully_masked_rows_are_zero_not_nan() -> None:
    mask = np.array([[True, False, False], [False, False, False]])
    weights = nx.softmax(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), mask=mask)
    np.testing.assert_array_equal(weights, [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    out = nx.scaled_dot_product_attention(np.ones((2, 2)), np.ones((3, 2)), np.ones((3, 2)), mask=mask)
    np.testing.assert_array_equal(out, [[1.0, 1.0], [0.0, 0.0]])


def test_softmax_is_stable_for_huge_scores() -> None:
    # A naive exp overflows (inf/inf) or underflows (0/0) on these.
    np.testing.assert_allclose(nx.softmax([1000.0, 1000.0]), [0.5, 0.5])
    np.testing.assert_allclose(nx.softmax([-1000.0, -1000.0 - math.log(3)]), [0.75, 0.25])
    np.testing.assert_allclose(nx.softmax([1e300, 0.0]), [1.0, 0.0])
    np.testing.assert_allclose(nx.softmax([[1000.0], [0.0]], axis=0), [[1.0], [0.0]])


@given(st.data())
@settings(max_examples=60, deadline=None)
def test_sdpa_over_leading_dims_equals_looping(data: st.DataObject) -> None:
    b, h, t_q, t_k = (data.draw(small_dims) for _ in range(4))
    d_k, d_v = data.draw(small_dims), data.draw(small_dims)
    elements = st.floats(min_value=-5, max_value=5)
    q = data.draw(arrays(np.float64, (b, h, t_q, d_k), elements=elements))
    k = data.draw(arrays(np.float64, (b, h, t_k, d_k), elements=elements))
    v = data.draw(arrays(np.float64, (b, h, t_k, d_v), elements=elements))
    mask = data.draw(st.none() | arrays(np.bool_, (t_q, t_k)))
    scale = data.draw(st.booleans())
    out = nx.scaled_dot_product_attention(q, k, v, mask=mask, scale=scale)
    assert out.shape == (b, h, t_q, d_v)
    for i in range(b):
        for j in range(h):
            one = nx.scaled_dot_product_attention(q[i, j], k[i, j], v[i, j], mask=mask, scale=scale)
            np.testing.assert_allclose(out[i, j], one, rtol=0, atol=1e-12)


@given(st.data())
@settings(max_examples=60, deadline=None)
def test_split_and_merge_heads_round_trip(data: st.DataObject) -> None:
    lead = data.draw(st.lists(small_dims, max_size=2))
    t, heads, width = data.draw(small_dims), data.draw(small_dims), data.draw(small_dims)
    x = data.draw(arrays(np.float64, (*lead, t, heads * width), elements=finite))
    split = nx.split_heads(x, heads)
    assert split.shape == (*lead, heads, t, width)
    assert nx.split_heads_shape(x.shape, heads) == split.shape
    for i in range(heads):  # head i holds columns i·d_h … (i+1)·d_h
        np.testing.assert_array_equal(split[..., i, :, :], x[..., i * width : (i + 1) * width])
    np.testing.assert_array_equal(nx.merge_heads(split), x)
    assert nx.merge_heads_shape(split.shape) == x.shape


@given(
    st.integers(min_value=1, max_value=128),
    st.integers(min_value=1, max_value=16),
    st.booleans(),
    st.booleans(),
)
@settings(max_examples=100, deadline=None)
def test_mha_params_do_not_depend_on_the_number_of_heads(
    width: int, heads: int, biases: bool, w_o: bool
) -> None:
    # Counted head by head: each head has W_Q, W_K, W_V of [d, d/h] (and biases of d/h); W_O is
    # [h·d/h, d]. The total is the same as for one head of full width.
    d = width * heads
    per_head = 3 * (d * width + (width if biases else 0))
    output = (heads * width * d + (d if biases else 0)) if w_o else 0
    counted = Counted(biases=biases, w_o=w_o)
    assert heads * per_head + output == nx.mha_params(d, counted=counted)
    assert nx.mha_params(d, counted=counted) == (4 if w_o else 3) * (d * d + (d if biases else 0))


@pytest.mark.parametrize("heads", [1, 2, 4, 8, 16])
def test_mha_with_more_heads_uses_the_same_weights(heads: int) -> None:
    # One set of [d, d] matrices serves any h that divides d: splitting adds no parameters.
    rng = np.random.default_rng(9)
    x = rng.normal(size=(3, 16))
    w_q, w_k, w_v, w_o = (rng.normal(size=(16, 16)) for _ in range(4))
    assert nx.multi_head_attention(x, x, w_q, w_k, w_v, w_o, heads).shape == (3, 16)


@pytest.mark.parametrize("counted", [ALL, WEIGHTS_ONLY, Counted(norms=False), Counted(w_o=False), NO_BIASES])
@pytest.mark.parametrize(("d", "f"), [(16, 64), (512, 2048), (768, 3072)])
def test_layer_counts_are_sums_of_their_parts(counted: Counted, d: int, f: int) -> None:
    norms = nx.layer_norm_params(d) if counted.norms else 0
    mha = nx.mha_params(d, counted=counted)
    ffn = nx.ffn_params(d, f, counted=counted)
    assert nx.encoder_layer_params(d, f, counted=counted) == mha + ffn + 2 * norms
    assert nx.decoder_layer_params(d, f, counted=counted) == 2 * mha + ffn + 3 * norms
    assert nx.stack_params(nx.encoder_layer_params(d, f, counted=counted), 6) == 6 * (mha + ffn + 2 * norms)


@given(st.integers(min_value=1, max_value=4096))
@settings(max_examples=50, deadline=None)
def test_crossover_is_6d(d: int) -> None:
    n = nx.attention_dense_crossover(d)
    assert n == 6 * d
    assert nx.attention_score_flops_per_token(n, d) == nx.dense_flops_per_token(d)
    assert nx.attention_score_flops_per_token(n - 1, d) < nx.dense_flops_per_token(d)


@given(st.integers(min_value=1, max_value=8), st.integers(min_value=1, max_value=8), st.integers(1, 512))
@settings(max_examples=50, deadline=None)
def test_score_entries_grow_with_the_square_of_length(batch: int, heads: int, t: int) -> None:
    assert nx.score_entries(batch, heads, 2 * t) == 4 * nx.score_entries(batch, heads, t)
    assert nx.score_entries(batch, heads, t) == nx.tensor_volume((batch, heads, t, t))


@st.composite
def decay_cases(draw: st.DrawFn) -> tuple[float, float]:
    per_step = draw(st.floats(min_value=1e-3, max_value=0.999))
    # Thresholds at (or printed near) exact powers are where a float or log formula tips wrongly.
    exact_power = st.integers(min_value=1, max_value=40).map(lambda e: per_step**e)
    printed_power = exact_power.map(lambda t: float(f"{t:.3g}"))
    rounded_step = round(per_step, 2) or 0.5
    rounded_power = st.integers(min_value=1, max_value=12).map(lambda e: float(f"{rounded_step**e:.12g}"))
    choice = draw(st.sampled_from(["any", "exact", "printed", "rounded"]))
    if choice == "rounded":
        return rounded_step, draw(rounded_power)
    options = {
        "any": st.floats(min_value=1e-12, max_value=0.999),
        "exact": exact_power,
        "printed": printed_power,
    }
    return per_step, draw(options[choice])


@given(decay_cases())
@settings(max_examples=300, deadline=None)
def test_steps_to_fall_below_is_the_least_such_k(case: tuple[float, float]) -> None:
    per_step, threshold = case
    if not (0 < per_step < 1 and 0 < threshold < 1):
        return
    k = nx.steps_to_fall_below(per_step, threshold)
    # Judged on the decimals as written (as a student computes), not on binary floats.
    p, t = Fraction(str(per_step)), Fraction(str(threshold))
    assert p**k < t
    assert not p ** (k - 1) < t


@pytest.mark.parametrize(
    ("per_step", "threshold", "steps"),
    [
        pytest.param(0.5, 0.25, 3, id="exact-power-0.5^2"),
        pytest.param(0.08, 0.000512, 4, id="exact-power-0.08^3-log-rounds-down"),
        pytest.param(0.03, 2.7e-05, 4, id="exact-power-0.03^3-float-says-below"),
        pytest.param(0.1, 0.001, 4, id="exact-power-0.1^3"),
        pytest.param(0.9, 0.5, 7, id="0.9^7=0.478"),
        pytest.param(0.999, 1e-4, 9206, id="long-exact"),
        pytest.param(0.9999, 1e-9, 207_223, id="beyond-exact-range"),
        pytest.param(0.670, 2e-9, 51, id="s002-fig-rnn-gradient-vanishing-0.670^50=2.01e-9"),
    ],
)
def test_steps_to_fall_below_cases(per_step: float, threshold: float, steps: int) -> None:
    assert nx.steps_to_fall_below(per_step, threshold) == steps


@given(st.integers(min_value=1, max_value=6), st.integers(min_value=2, max_value=6), st.data())
@settings(max_examples=40, deadline=None)
def test_causal_attention_ignores_the_future(heads: int, t: int, data: st.DataObject) -> None:
    # Changing the last token leaves every earlier output untouched.
    d = heads * data.draw(small_dims)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = rng.normal(size=(t, d))
    w_q, w_k, w_v, w_o = (rng.normal(size=(d, d)) for _ in range(4))
    causal = nx.causal_mask(t)
    out = nx.multi_head_attention(x, x, w_q, w_k, w_v, w_o, heads, mask=causal)
    changed = x.copy()
    changed[-1] += 10.0
    out_changed = nx.multi_head_attention(changed, changed, w_q, w_k, w_v, w_o, heads, mask=causal)
    np.testing.assert_allclose(out_changed[:-1], out[:-1], rtol=0, atol=1e-12)
    assert np.all(nx.attention_weights(x, x, mask=causal)[~causal] == 0.0)
    assert nx.causal_masked_entries(t) == t * (t - 1) // 2


@given(arrays(np.float64, st.tuples(small_dims, st.integers(2, 8)), elements=finite))
@settings(max_examples=80, deadline=None)
def test_layer_norm_centres_and_scales_each_row(x: np.ndarray) -> None:
    out = nx.layer_norm(x)
    np.testing.assert_allclose(out.mean(axis=-1), 0.0, atol=1e-9)
    var = x.var(axis=-1)
    np.testing.assert_allclose(out.var(axis=-1), var / (var + 1e-5), atol=1e-9)
    np.testing.assert_allclose(nx.normalise(x), out, atol=1e-12)


@given(st.floats(min_value=-0.99, max_value=2.0), st.integers(min_value=1, max_value=12))
@settings(max_examples=60, deadline=None)
def test_skip_connections_add_one_to_each_slope(slope: float, layers: int) -> None:
    assert nx.stacked_slope(slope, layers, skip=True) == pytest.approx((1 + slope) ** layers, rel=1e-12)
    assert nx.stacked_slope(slope, layers, skip=False) == pytest.approx(slope**layers, rel=1e-12, abs=1e-300)
