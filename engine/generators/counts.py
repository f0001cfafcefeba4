"""Parameter counts: W_O, one head's W_Q, multi-head attention, the FFN, an encoder layer, a stack of layers.

Every prompt says what is counted (weights only, or weights, biases and LayerNorms as PyTorch counts
them), because the notes warn that an unstated convention makes a count ambiguous.
"""

from __future__ import annotations

import numpy as np

from attnquiz.engine import numerics
from attnquiz.engine.answers.kinds import IntegerAnswer, Mistake
from attnquiz.engine.generators import sizes
from attnquiz.engine.generators.common import MODEL_WIDTHS, group, pick
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant

D_MODEL = r"d_{\text{model}}"
D_FF = r"d_{\text{ff}}"
ALL_COUNTED = "weights, biases and the LayerNorms' $\\gamma$ and $\\beta$, as PyTorch counts them"
NO_W_O = numerics.Counted(w_o=False)


def _full_width_heads_mha(d: int, h: int, *, biases: bool) -> int:
    """MHA as if every head kept the full width d: Q, K, V are d × hd and W_O is hd × d."""
    qkv = 3 * numerics.projection_params(d, h * d, bias=biases)
    return qkv + numerics.projection_params(h * d, d, bias=biases)


def _heads_full_width_feedback(h: int) -> str:
    return (
        rf"That gives each of the ${h}$ heads full-width projections. Each head works in a slice of width "
        rf"${D_MODEL}/h$, so a projection totals $h \cdot {D_MODEL} \cdot ({D_MODEL}/h) = {D_MODEL}^2$ "
        "whatever the number of heads."
    )


@generator
def w_o_param_count(
    rng: np.random.Generator,
    /,
    *,
    d_model: int | None = None,
    heads: int | None = None,
) -> Variant:
    """Parameters in the output projection W_O of multi-head attention: d_model² (768² = 589,824)."""
    d = sizes.width(rng, d_model)
    h = sizes.heads_for(rng, d, heads)
    d_v = numerics.head_dim(d, h)
    count = numerics.projection_params(h * d_v, d)
    prompt = (
        rf"A multi-head attention layer has ${D_MODEL} = {d}$ and $h = {h}$ heads. How many parameters are "
        r"in its output projection matrix $W_O$ (the matrix only, not its bias)?"
    )
    solution = [
        rf"The concatenated heads are $h \cdot d_v = {h} \cdot {d_v} = {d}$ wide, and $W_O$ maps them back "
        rf"to ${D_MODEL} = {d}$, so $W_O$ is ${d} \times {d}$.",
        rf"Its entries: ${d}^2 = {group(count)}$.",
    ]
    mistakes = [
        Mistake(
            "counted-bias",
            numerics.projection_params(d, d, bias=True),
            rf"That adds the bias vector $b_O$ (${d}$ numbers). The question asks for the matrix $W_O$ only.",
        ),
        Mistake(
            "all-four-projections",
            numerics.mha_params(d, counted=numerics.WEIGHTS_ONLY),
            r"That counts $W_Q$, $W_K$, $W_V$ and $W_O$. The question asks for the output projection alone."
            # With four heads, full-width heads give the same number: name both ways of reaching it.
            + (
                r" (It is also what four full-width heads would give; each head is only $d_{\text{model}}/h$ "
                "wide.)"
                if h == 4
                else ""
            ),
        ),
        Mistake("heads-full-width", numerics.projection_params(h * d, d), _heads_full_width_feedback(h)),
    ]
    return Variant(
        prompt=prompt,
        answer=IntegerAnswer(count),
        solution=solution,
        mistakes=mistakes,
        inputs={"d_model": d, "heads": h},
        hint=r"Work out how wide the input and the output of $W_O$ are.",
    )


@generator
def w_q_head_param_count(
    rng: np.random.Generator,
    /,
    *,
    d_model: int | None = None,
    heads: int | None = None,
) -> Variant:
    """Weights in one head's query projection W_Qⁱ: d_model · d_k (512 · 64 = 32,768)."""
    d = sizes.width(rng, d_model)
    h = sizes.heads_for(rng, d, heads)
    d_k = numerics.head_dim(d, h)
    count = numerics.projection_params(d, d_k)
    prompt = (
        rf"A multi-head attention layer has ${D_MODEL} = {d}$ split over $h = {h}$ heads of width "
        rf"$d_k = {d_k}$. How many weights are in the query projection $W_Q^{{(i)}}$ of one head "
        "(no bias)?"
    )
    solution = [
        rf"One head's $W_Q^{{(i)}}$ maps a token of width ${d}$ to a query of width ${d_k}$: "
        rf"it is ${d} \times {d_k}$.",
        rf"Its weights: ${d} \cdot {d_k} = {group(count)}$.",
        rf"All ${h}$ heads together: ${h} \cdot {group(count)} = {group(h * count)} = {d}^2$, the same as "
        "one full-width projection.",
    ]
    mistakes = [
        Mistake(
            "whole-w-q",
            numerics.projection_params(d, d),
            rf"That is $W_Q$ for all ${h}$ heads together (${d} \times {d}$). One head's query is only "
            rf"${d_k}$ wide.",
        ),
        Mistake(
            "head-q-k-v",
            3 * numerics.projection_params(d, d_k),
            r"That counts the head's $W_Q$, $W_K$ and $W_V$. The question asks for the query projection "
            "only.",
        ),
        Mistake(
            "counted-bias",
            numerics.projection_params(d, d_k, bias=True),
            rf"That adds a bias of ${d_k}$ numbers. The question asks for the weight matrix only.",
        ),
    ]
    return Variant(
        prompt=prompt,
        answer=IntegerAnswer(count),
        solution=solution,
        mistakes=mistakes,
        inputs={"d_model": d, "heads": h},
        hint="Ask how wide the input of this matrix is and how wide its output is.",
    )


@generator
def mha_param_count(
    rng: np.random.Generator,
    /,
    *,
    d_model: int | None = None,
    heads: int | None = None,
    biases: bool = True,
) -> Variant:
    """Parameters of multi-head attention: 4d² + 4d with biases (1,050,624 at 512), 4d² without."""
    d = sizes.width(rng, d_model)
    h = sizes.heads_for(rng, d, heads)
    d_k = numerics.head_dim(d, h)
    counted = numerics.ALL if biases else numerics.WEIGHTS_ONLY
    count = numerics.mha_params(d, counted=counted)
    one = numerics.projection_params(d, d, bias=biases)
    what = (
        r"the projections $W^Q$, $W^K$, $W^V$, $W^O$ and their biases"
        if biases
        else r"the weights of the Q, K, V and output projections (no biases)"
    )
    prompt = (
        rf"A multi-head self-attention layer has ${D_MODEL} = {d}$ and $h = {h}$ heads. "
        f"How many parameters does it hold, counting {what}?"
    )
    per_projection = rf"{d}^2 + {d} = {group(one)}" if biases else rf"{d}^2 = {group(one)}"
    solution = [
        rf"Each head has width $d_k = {d}/{h} = {d_k}$, so one projection over all heads holds "
        rf"$h \cdot {D_MODEL} \cdot d_k = {h} \cdot {d} \cdot {d_k} = {d}^2$ weights, as one "
        rf"${d} \times {d}$ matrix does: the heads add no weights.",
        rf"One projection{' with its bias' if biases else ''}: ${per_projection}$.",
        rf"Four projections ($Q$, $K$, $V$, $O$): $4 \cdot {group(one)} = {group(count)}$.",
    ]
    mistakes = [
        Mistake(
            "heads-add-weights", _full_width_heads_mha(d, h, biases=biases), _heads_full_width_feedback(h)
        ),
        Mistake(
            "forgot-w-o",
            numerics.mha_params(d, counted=numerics.Counted(biases=biases, w_o=False)),
            r"That leaves out the output projection $W^O$, which mixes the concatenated heads "
            rf"(${d} \times {d}${' plus its bias' if biases else ''}).",
        ),
        Mistake(
            "shared-qkv",
            2 * one,
            r"That uses one matrix for queries, keys and values. $W^Q$, $W^K$ and $W^V$ are three separately "
            "learned matrices.",
        ),
    ]
    if biases:
        mistakes.insert(
            1,
            Mistake(
                "no-biases",
                numerics.mha_params(d, counted=numerics.WEIGHTS_ONLY),
                rf"That counts the weights only. The question includes the four bias vectors, ${d}$ each.",
            ),
        )
    else:
        mistakes.insert(
            1,
            Mistake(
                "counted-biases",
                numerics.mha_params(d),
                "That adds the four bias vectors. The question asks for the weights only.",
            ),
        )
    return Variant(
        prompt=prompt,
        answer=IntegerAnswer(count),
        solution=solution,
        mistakes=mistakes,
        inputs={"d_model": d, "heads": h, "biases": biases},
        hint=r"Count one projection over all heads at once: how big is it, whatever $h$ is?",
    )


@generator
def ffn_param_count(
    rng: np.random.Generator,
    /,
    *,
    d_model: int | None = None,
    d_ff: int | None = None,
) -> Variant:
    """Parameters of the position-wise FFN with biases: 2·d·d_ff + d_ff + d (2,099,712 at 512/2048)."""
    d = sizes.width(rng, d_model)
    f = sizes.ffn_width(rng, d, d_ff)
    count = numerics.ffn_params(d, f)
    expand = numerics.projection_params(d, f, bias=True)
    back = numerics.projection_params(f, d, bias=True)
    prompt = (
        rf"The feed-forward network of a Transformer block expands ${D_MODEL} = {d}$ to ${D_FF} = {f}$ "
        rf"and projects back: $\operatorname{{FFN}}(x) = \operatorname{{ReLU}}(xW_1 + b_1)W_2 + b_2$. "
        "How many parameters does it hold, including biases?"
    )
    solution = [
        rf"Expand: $W_1$ is ${d} \times {f}$ and $b_1$ has ${f}$ entries: "
        rf"${group(d * f)} + {group(f)} = {group(expand)}$.",
        rf"Project back: $W_2$ is ${f} \times {d}$ and $b_2$ has ${d}$ entries: "
        rf"${group(f * d)} + {group(d)} = {group(back)}$.",
        rf"Total: ${group(expand)} + {group(back)} = {group(count)}$.",
    ]
    mistakes = [
        Mistake(
            "no-biases",
            numerics.ffn_params(d, f, counted=numerics.WEIGHTS_ONLY),
            rf"That counts the weights only. The question includes $b_1$ (${f}$) and $b_2$ (${d}$).",
        ),
        Mistake(
            "expand-only",
            expand,
            r"That is the first layer only. The FFN also projects back with $W_2$ and $b_2$.",
        ),
    ]
    return Variant(
        prompt=prompt,
        answer=IntegerAnswer(count),
        solution=solution,
        mistakes=mistakes,
        inputs={"d_model": d, "d_ff": f},
        hint="Count each of the two linear layers: its weight matrix and its bias vector.",
    )


def _layer_mistakes(d: int, f: int, h: int, *, times: int = 1) -> list[Mistake]:
    """The MC-PAR-2 family of wrong encoder-layer counts (and ``times`` layers of them)."""
    full = numerics.encoder_layer_params(d, f)
    ffn_biases = numerics.ffn_params(d, f) - numerics.ffn_params(d, f, counted=numerics.WEIGHTS_ONLY)
    heads_full = (
        _full_width_heads_mha(d, h, biases=True)
        + numerics.ffn_params(d, f)
        + numerics.layer_norm_params(d, count=2)
    )
    return [
        Mistake(
            "weights-only",
            times * numerics.encoder_layer_params(d, f, counted=numerics.WEIGHTS_ONLY),
            "That counts the weight matrices only. The question includes every bias and the LayerNorms' "
            r"$\gamma$ and $\beta$.",
        ),
        Mistake(
            "no-norms",
            times * numerics.encoder_layer_params(d, f, counted=numerics.Counted(norms=False)),
            r"That leaves out the two LayerNorms: each has a $\gamma$ and a $\beta$ of width "
            rf"${D_MODEL}$, $4 \cdot {d} = {group(4 * d)}$ in all.",
        ),
        Mistake(
            "no-ffn-biases",
            times * (full - ffn_biases),
            rf"That leaves out the FFN's biases $b_1$ (${f}$) and $b_2$ (${d}$).",
        ),
        Mistake(
            "forgot-w-o",
            times * numerics.encoder_layer_params(d, f, counted=NO_W_O),
            rf"That leaves out $W^O$ and its bias (${group(d * d + d)}$), the projection that mixes "
            "the heads.",
        ),
        Mistake(
            "cross-attention-in-encoder",
            times * numerics.decoder_layer_params(d, f),
            "That is a decoder layer: cross-attention (and a third LayerNorm) belong to the decoder. An "
            "encoder layer has one self-attention block and one FFN.",
        ),
        Mistake("heads-add-weights", times * heads_full, _heads_full_width_feedback(h)),
    ]


def _layer_solution(d: int, f: int) -> list[str]:
    mha = numerics.mha_params(d)
    ffn = numerics.ffn_params(d, f)
    norms = numerics.layer_norm_params(d, count=2)
    total = numerics.encoder_layer_params(d, f)
    return [
        rf"Attention: four ${d} \times {d}$ projections with biases, "
        rf"$4 \cdot {d}^2 + 4 \cdot {d} = {group(mha)}$ (the number of heads does not matter).",
        rf"FFN: $2 \cdot {d} \cdot {f} + {f} + {d} = {group(ffn)}$.",
        rf"Two LayerNorms, $\gamma$ and $\beta$ each: $4 \cdot {d} = {group(norms)}$.",
        rf"One layer: ${group(mha)} + {group(ffn)} + {group(norms)} = {group(total)}$.",
    ]


@generator
def encoder_layer_param_count(
    rng: np.random.Generator,
    /,
    *,
    d_model: int | None = None,
    heads: int | None = None,
    d_ff: int | None = None,
) -> Variant:
    """Parameters of one encoder layer, fully counted: 4d² + 2d·d_ff + d_ff + 9d (3,152,384 at 512/2048)."""
    d = sizes.width(rng, d_model)
    h = sizes.heads_for(rng, d, heads)
    f = sizes.ffn_width(rng, d, d_ff)
    total = numerics.encoder_layer_params(d, f)
    prompt = (
        rf"A Transformer encoder layer (self-attention and an FFN, each followed by a LayerNorm) has "
        rf"${D_MODEL} = {d}$, $h = {h}$ heads and ${D_FF} = {f}$. How many learnable parameters does it "
        f"hold, counting {ALL_COUNTED}?"
    )
    return Variant(
        prompt=prompt,
        answer=IntegerAnswer(total),
        solution=_layer_solution(d, f),
        mistakes=_layer_mistakes(d, f, h),
        inputs={"d_model": d, "heads": h, "d_ff": f},
        hint="Count attention, the FFN and the two LayerNorms separately, then add.",
    )


@generator
def encoder_stack_param_count(
    rng: np.random.Generator,
    /,
    *,
    d_model: int | None = None,
    heads: int | None = None,
    d_ff: int | None = None,
    layers: int | None = None,
) -> Variant:
    """Parameters of N encoder layers, each with its own weights: N times one layer (6 · 3,152,384)."""
    d = sizes.width(rng, d_model)
    h = sizes.heads_for(rng, d, heads)
    f = sizes.ffn_width(rng, d, d_ff)
    n = int(layers) if layers is not None else int(pick(rng, (2, 3, 4, 6, 8, 12, 24)))
    one = numerics.encoder_layer_params(d, f)
    total = numerics.stack_params(one, n)
    prompt = (
        rf"A Transformer encoder stacks $N = {n}$ identical layers, each with ${D_MODEL} = {d}$, $h = {h}$ "
        rf"heads and ${D_FF} = {f}$. How many learnable parameters do the {n} layers hold together, counting "
        f"{ALL_COUNTED} (no embeddings, positions or task head)?"
    )
    solution = [
        *_layer_solution(d, f),
        rf"Identical layers share the architecture, not the weights: each of the ${n}$ layers learns its "
        rf"own, so the stack holds ${n} \cdot {group(one)} = {group(total)}$.",
    ]
    shared = Mistake(
        "shared-layer-weights",
        numerics.stack_params(one, n, shared=True),
        "That is one layer. Identical layers share the architecture, not the parameters: each layer has its "
        "own separately learned weights.",
    )
    return Variant(
        prompt=prompt,
        answer=IntegerAnswer(total),
        solution=solution,
        mistakes=[shared, *_layer_mistakes(d, f, h, times=n)],
        inputs={"d_model": d, "heads": h, "d_ff": f, "layers": n},
        hint="Count one layer first; then ask whether the layers share their weights.",
    )


@generator
def block_params_12d2(
    rng: np.random.Generator,
    /,
    *,
    d_model: int | None = None,
) -> Variant:
    """Parameters of one block with d_ff = 4d, fully counted: 12d² + 13d (3,280 at d = 16)."""
    d = int(d_model) if d_model is not None else int(pick(rng, (16, 32, *MODEL_WIDTHS)))
    f = 4 * d
    total = numerics.block_params_12d2(d)
    prompt = (
        rf"A Transformer block of width $d = {d}$ has self-attention with biases, an FFN with "
        rf"${D_FF} = 4d$ and biases, and two LayerNorms. How many learnable parameters does it hold, "
        rf"counting {ALL_COUNTED}?"
    )
    solution = [
        r"Weights: four $d \times d$ projections ($4d^2$) and the FFN's $d \times 4d$ and $4d \times d$ "
        r"($8d^2$): $12d^2$.",
        r"Biases: $4d$ for the projections and $4d + d$ for the FFN; LayerNorms: $2 \cdot 2d = 4d$. "
        r"Together $13d$.",
        rf"So $12d^2 + 13d = 12 \cdot {group(d * d)} + 13 \cdot {d} = {group(12 * d * d)} + {group(13 * d)} "
        rf"= {group(total)}$.",
    ]
    full = numerics.encoder_layer_params(d, f)
    ffn_biases = numerics.ffn_params(d, f) - numerics.ffn_params(d, f, counted=numerics.WEIGHTS_ONLY)
    mistakes = [
        Mistake(
            "weights-only",
            numerics.encoder_layer_params(d, f, counted=numerics.WEIGHTS_ONLY),
            r"That is $12d^2$, the weight matrices only. The question includes the biases and the "
            r"LayerNorms, another $13d$.",
        ),
        Mistake(
            "no-norms",
            numerics.encoder_layer_params(d, f, counted=numerics.Counted(norms=False)),
            r"That is $12d^2 + 9d$: it leaves out the two LayerNorms' $\gamma$ and $\beta$ ($4d$).",
        ),
        Mistake(
            "no-ffn-biases",
            full - ffn_biases,
            r"That leaves out the FFN's biases, $4d$ for $b_1$ and $d$ for $b_2$.",
        ),
        Mistake(
            "forgot-w-o",
            numerics.encoder_layer_params(d, f, counted=NO_W_O),
            r"That leaves out $W^O$ and its bias ($d^2 + d$), the projection that mixes the heads.",
        ),
    ]
    return Variant(
        prompt=prompt,
        answer=IntegerAnswer(total),
        solution=solution,
        mistakes=mistakes,
        inputs={"d_model": d},
        hint=r"Write the weights and the biases as multiples of $d^2$ and $d$ with $d_{\text{ff}} = 4d$.",
    )


@generator
def params_vs_length(
    rng: np.random.Generator,
    /,
    *,
    d_model: int | None = None,
    heads: int | None = None,
    d_ff: int | None = None,
    t_short: int | None = None,
    t_long: int | None = None,
) -> Variant:
    """An encoder layer's parameter count does not depend on the sequence length T."""
    d = sizes.width(rng, d_model)
    h = sizes.heads_for(rng, d, heads)
    f = sizes.ffn_width(rng, d, d_ff)
    t1 = int(t_short) if t_short is not None else int(pick(rng, (8, 10, 16, 20, 32, 50, 64, 100, 128)))
    t2 = int(t_long) if t_long is not None else t1 * int(pick(rng, (2, 4, 5, 8, 10)))
    if t2 % t1 or t2 <= t1:
        raise ValueError(f"the longer length must be a multiple of the shorter one ({t1}), not {t2}")
    count = numerics.encoder_layer_params(d, f)
    ratio = t2 // t1
    prompt = (
        rf"An encoder layer with ${D_MODEL} = {d}$, $h = {h}$ heads and ${D_FF} = {f}$ uses sinusoidal "
        "positional encodings (no learned position table). Counting weights, biases and LayerNorms, it "
        f"has ${group(count)}$ parameters while it reads sentences of $T = {t1}$ tokens. How many "
        f"parameters does the same layer have when it reads sentences of $T = {t2}$ tokens?"
    )
    scores_short = numerics.score_entries(1, h, t1)
    scores_long = numerics.score_entries(1, h, t2)
    solution = [
        rf"Every weight matrix is sized by ${D_MODEL}$ and ${D_FF}$ only: $W^Q, W^K, W^V, W^O$ are "
        rf"${d} \times {d}$, $W_1$ is ${d} \times {f}$, $W_2$ is ${f} \times {d}$. None has a dimension $T$; "
        "the same weights are applied at every position.",
        rf"So the count stays ${group(count)}$. What grows with $T$ are the activations and the compute: "
        rf"the score matrices per sentence go from ${h} \cdot {t1}^2 = {group(scores_short)}$ to "
        rf"${h} \cdot {t2}^2 = {group(scores_long)}$ entries.",
        "(Only a learned position table, one row per position, would grow with the maximum length.)",
    ]
    mistakes = [
        Mistake(
            "linear-in-length",
            count * ratio,
            "Parameters are not per token: the same weight matrices are shared by every position, so a "
            "longer sentence changes the activations and the compute, not the weights.",
        ),
        Mistake(
            "quadratic-in-length",
            count * ratio * ratio,
            r"The attention scores grow like $T^2$, but they are activations computed from the weights, "
            "not parameters. The layer's weights do not depend on T.",
        ),
    ]
    return Variant(
        prompt=prompt,
        answer=IntegerAnswer(count),
        solution=solution,
        mistakes=mistakes,
        inputs={"d_model": d, "heads": h, "d_ff": f, "t_short": t1, "t_long": t2},
        hint="Look at the shapes of the weight matrices: does any of them involve T?",
    )
