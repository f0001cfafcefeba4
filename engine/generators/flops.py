"""Cost as week 2 asks it: FLOPs per token, attention's share, the crossover, score growth, block sizes."""

from __future__ import annotations

from typing import Literal

import numpy as np

from attnquiz.engine import numerics
from attnquiz.engine.answers.kinds import IntegerAnswer, Mistake, NumericAnswer
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.generators import sizes
from attnquiz.engine.generators.common import group, keeps_all, pick
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant

D_MODEL = r"d_{\text{model}}"
CONVENTION = "Count 2 FLOPs per multiply–add."
# Context lengths of real models, from BERT's 512 to long-context decoders.
CONTEXTS = (128, 256, 512, 1024, 2048, 4096, 8192, 16384)
MULTIPLY_ADDS = (
    "That counts multiply–adds, not FLOPs: each multiply–add is a multiplication and an addition, 2 FLOPs."
)
QK_ONLY = (
    r"That counts only $QK^\top$. The weighted sum $AV$ costs the same again ($2nd$ per token), "
    r"so the scores cost $4nd$."
)


def _dense_steps(d: int, f: int) -> list[str]:
    projections = numerics.projection_flops_per_token(d)
    ffn = numerics.ffn_flops_per_token(d, f)
    return [
        rf"Projections $W_Q, W_K, W_V, W_O$: four $d \times d$ products, $4 \cdot 2d^2 = 8d^2 = "
        rf"{group(projections)}$ FLOPs per token.",
        rf"FFN: $W_1$ and $W_2$, $2 \cdot 2 \cdot d \cdot d_{{\text{{ff}}}} = {group(ffn)}$ FLOPs per token.",
    ]


@generator
def per_token_flops(
    rng: np.random.Generator,
    /,
    *,
    part: Literal["dense", "scores"] = "dense",
    d_model: int | None = None,
    context: int | None = None,
    heads: int | None = None,
) -> Variant:
    """FLOPs per token of one layer: the dense parts (24d² with d_ff = 4d) or the attention scores (4nd)."""
    d = sizes.width(rng, d_model)
    n = context if context is not None else int(pick(rng, CONTEXTS))
    # With two heads one head's 4n·d/2 equals the Q·K-only 2nd, and the two slips could not be told apart.
    h = sizes.heads_for(rng, d, heads, at_least=3 if part == "scores" else 2)
    f = 4 * d
    if part == "dense":
        answer = numerics.dense_flops_per_token(d)
        projections = numerics.projection_flops_per_token(d)
        ffn = numerics.ffn_flops_per_token(d, f)
        if projections + ffn != answer:
            raise ValueError("the dense pieces do not add up to 24d²")
        prompt = (
            rf"One Transformer layer has ${D_MODEL} = {d}$ and $d_{{\text{{ff}}}} = 4d = {f}$. How many "
            "FLOPs per token do its dense parts cost: the Q, K, V and output projections and the "
            f"FFN? {CONVENTION}"
        )
        solution = [
            *_dense_steps(d, f),
            rf"Dense total: $8d^2 + 16d^2 = 24d^2 = 24 \cdot {d}^2 = {group(answer)}$ FLOPs per token, "
            "whatever the context length.",
        ]
        mistakes = [
            Mistake("multiply-adds", answer // 2, MULTIPLY_ADDS),
            Mistake(
                "forgot-w-o",
                numerics.projection_flops_per_token(d, matrices=3) + ffn,
                "That leaves out the output projection $W_O$, a fourth $d \\times d$ product.",
            ),
            Mistake(
                "ffn-only",
                ffn,
                "That is the FFN alone; the four attention projections add another $8d^2$.",
            ),
            Mistake(
                "projections-only",
                projections,
                "That is the attention projections alone; the FFN, twice as wide, adds $16d^2$.",
            ),
        ]
        inputs: dict[str, object] = {"part": part, "d_model": d}
        hint = "Count the multiply–adds of each weight matrix a token passes through."
    else:
        answer = numerics.score_flops_per_token(n, d)
        d_k = numerics.head_dim(d, h)
        prompt = (
            rf"One Transformer layer has ${D_MODEL} = {d}$ and $h = {h}$ heads, and the context holds "
            rf"$n = {group(n)}$ tokens. How many FLOPs per token do the attention-score parts cost: "
            rf"$QK^\top$ and the weighted sum $AV$, over all heads? {CONVENTION}"
        )
        solution = [
            rf"Per head, a query of width $d_k = {d}/{h} = {d_k}$ is scored against $n$ keys: "
            rf"$2 n d_k$ FLOPs; the {h} heads together: $2 n d_k h = 2nd$.",
            r"The weighted sum of $n$ value vectors costs the same $2nd$ again.",
            rf"Total: $4nd = 4 \cdot {group(n)} \cdot {d} = {group(answer)}$ FLOPs per token: it grows "
            "with the context, unlike the dense parts.",
        ]
        mistakes = [
            Mistake("qk-only", numerics.score_flops_per_token(n, d, products=1), QK_ONLY),
            Mistake(
                "one-head-only",
                numerics.score_flops_per_token(n, d_k),
                rf"That is one head. Each of the {h} heads has width $d_k = d/h$, so together they "
                "cost as much as one head of the full width $d$.",
            ),
            Mistake(
                "whole-sequence",
                numerics.score_flops_per_token(n, d) * n,
                r"That is the cost of all $n$ tokens together ($4n^2 d$); the question asks per token.",
            ),
        ]
        inputs = {"part": part, "d_model": d, "context": n, "heads": h}
        hint = "Each query is scored against every key in the context, and every value is weighted."
    return Variant(
        prompt=prompt,
        answer=IntegerAnswer(answer),
        solution=solution,
        mistakes=mistakes,
        inputs=inputs,
        hint=hint,
    )


@generator
def attention_flop_share(
    rng: np.random.Generator,
    /,
    *,
    d_model: int | None = None,
    context: int | None = None,
) -> Variant:
    """The fraction of a layer's FLOPs per token spent on attention scores: 4nd / (24d² + 4nd)."""
    d = sizes.width(rng, d_model)
    n = context if context is not None else int(pick(rng, CONTEXTS))
    dense = numerics.dense_flops_per_token(d)
    scores = numerics.score_flops_per_token(n, d)
    share = scores / (dense + scores)
    prompt = (
        rf"A Transformer layer has ${D_MODEL} = {d}$ and $d_{{\text{{ff}}}} = 4d$, and the context holds "
        rf"$n = {group(n)}$ tokens. Per token, the dense parts (projections and FFN) cost $24d^2$ FLOPs "
        r"and the attention scores ($QK^\top$ and $AV$) cost $4nd$. What fraction of the layer's "
        "FLOPs per token goes to the attention scores?"
    )
    solution = [
        rf"Dense: $24 \cdot {d}^2 = {group(dense)}$. "
        rf"Scores: $4 \cdot {group(n)} \cdot {d} = {group(scores)}$.",
        rf"Share: ${group(scores)} / ({group(dense)} + {group(scores)}) \approx {share:.4f}$.",
        rf"In general $4nd/(24d^2 + 4nd) = n/(6d + n)$: one half exactly at $n = 6d = {group(6 * d)}$, "
        "and the scores take over beyond it.",
    ]
    mistakes = [
        Mistake(
            "ratio-not-share",
            scores / dense,
            "That is the ratio of score FLOPs to dense FLOPs; the share divides by the total, "
            "dense plus scores.",
        ),
        Mistake(
            "dense-share",
            dense / (dense + scores),
            "That is the dense parts' share; the attention scores take the rest.",
        ),
        Mistake(
            "qk-only",
            numerics.score_flops_per_token(n, d, products=1)
            / (dense + numerics.score_flops_per_token(n, d, products=1)),
            QK_ONLY,
        ),
    ]
    return Variant(
        prompt=prompt,
        answer=NumericAnswer(share, Tolerance.sigfigs(3)),
        solution=solution,
        mistakes=mistakes,
        inputs={"d_model": d, "context": n},
        hint="A share is a part divided by the whole.",
    )


@generator
def flops_crossover(
    rng: np.random.Generator,
    /,
    *,
    d_model: int | None = None,
    d_ff: int | None = None,
) -> Variant:
    """The context length where attention-score FLOPs per token equal the dense FLOPs: n = 2d + d_ff."""
    d = sizes.width(rng, d_model)
    f = sizes.ffn_width(rng, d, d_ff)
    projections = numerics.projection_flops_per_token(d)
    ffn = numerics.ffn_flops_per_token(d, f)
    dense = projections + ffn
    n = numerics.crossover_length(dense, d)
    prompt = (
        rf"A Transformer layer has ${D_MODEL} = d = {d}$ and $d_{{\text{{ff}}}} = {f}$. Per token, its "
        "dense parts are the four projections and the FFN, and its attention-score parts are "
        r"$QK^\top$ and $AV$ over a context of $n$ tokens. "
        f"{CONVENTION} At what context length $n$ do the attention scores cost as much as the "
        "dense parts?"
    )
    shorthand = r" (the notes' $24d^2$ with $d_{\text{ff}} = 4d$)" if f == 4 * d else ""
    solution = [
        *_dense_steps(d, f),
        rf"Dense total: ${group(dense)}$ FLOPs per token{shorthand}.",
        rf"Scores: $QK^\top$ and $AV$ cost $2nd$ each, $4nd = {group(4 * d)}\,n$ FLOPs per token.",
        rf"Equal when ${group(4 * d)}\,n = {group(dense)}$: $n = {group(n)}$"
        + (r" $= 6d$." if f == 4 * d else r" $= 2d + d_{\text{ff}}$.")
        + " Longer contexts make attention the bigger cost.",
    ]
    mistakes = [
        Mistake("qk-only", numerics.crossover_length(dense, d, products=1), QK_ONLY),
        Mistake(
            "forgot-ffn",
            numerics.crossover_length(projections, d),
            "That leaves the FFN out of the dense cost; "
            + (
                "it is the larger dense part."
                if ffn > projections
                else "it costs as much as the four projections together."
                if ffn == projections
                else "it is part of every layer's dense cost."
            ),
        ),
        Mistake(
            "dropped-d",
            dense // 4,
            r"That divides the dense cost by 4 only; the score cost is $4nd$, so divide by $4d$.",
        ),
    ]
    return Variant(
        prompt=prompt,
        answer=IntegerAnswer(n),
        solution=solution,
        mistakes=mistakes,
        inputs={"d_model": d, "d_ff": f},
        hint=r"Write both costs per token, then solve for $n$.",
    )


GROWTH_LENGTHS = (12, 64, 128, 256, 512, 1024, 2048)


@generator
def score_growth(
    rng: np.random.Generator,
    /,
    *,
    batch: int | None = None,
    heads: int | None = None,
    t_from: int | None = None,
    factor: int | None = None,
) -> Variant:
    """By what factor the score entries B·h·T² grow when T grows k-fold: k² (doubling T quadruples)."""
    b = sizes.batch(rng, batch)
    h = heads if heads is not None else int(pick(rng, (2, 4, 8, 12, 16)))
    t = t_from if t_from is not None else int(pick(rng, GROWTH_LENGTHS))
    k = factor if factor is not None else int(pick(rng, (2, 2, 3, 4, 8)))
    if k < 2:
        raise ValueError(f"the length must grow at least 2-fold, not {k}")
    before = numerics.score_entries(b, h, t)
    after = numerics.score_entries(b, h, k * t)
    growth = after // before
    prompt = (
        rf"Attention layers with $h = {h}$ heads process a batch of $B = {b}$ sequences. The sequences "
        rf"grow from $T = {group(t)}$ to $T = {group(k * t)}$ tokens. By what factor does the number of "
        "entries in the attention-score tensor grow?"
    )
    solution = [
        r"The score tensor is $[B, h, T, T]$: $B \cdot h \cdot T^2$ entries, one per query–key pair.",
        rf"Before: ${b} \cdot {h} \cdot {group(t)}^2 = {group(before)}$; after: "
        rf"${b} \cdot {h} \cdot {group(k * t)}^2 = {group(after)}$.",
        rf"Factor: ${group(after)} / {group(before)} = {k}^2 = {growth}$. $B$ and $h$ cancel; the dense "
        rf"layers' cost grows only {k}-fold.",
    ]
    mistakes = [
        Mistake(
            "linear-in-length",
            k,
            rf"Attention is not linear in length: $T$ queries each look at $T$ keys, so {k} times "
            rf"the length gives ${k}^2$ times the scores.",
        ),
        Mistake(
            "unchanged",
            1,
            "The weights do not depend on the length, but the scores do: one per query–key pair.",
        ),
    ]
    return Variant(
        prompt=prompt,
        answer=IntegerAnswer(growth),
        solution=solution,
        mistakes=mistakes,
        inputs={"batch": b, "heads": h, "t_from": t, "factor": k},
        hint="How does the number of query–key pairs grow with T?",
    )


@generator
def decoder_score_entries(
    rng: np.random.Generator,
    /,
    *,
    block: Literal["self", "cross"] = "self",
    batch: int | None = None,
    heads: int | None = None,
    t_target: int | None = None,
    t_source: int | None = None,
) -> Variant:
    """Score entries of a decoder's masked self-attention (B·h·T²) or cross-attention (B·h·T_tgt·T_src)."""
    given_any = any(v is not None for v in (batch, heads, t_target, t_source))
    while True:
        b = sizes.batch(rng, batch)
        h = heads if heads is not None else int(pick(rng, (2, 4, 8, 12, 16)))
        t = sizes.length(rng, t_target, at_most=256)
        mistakes: list[Mistake]
        if block == "self":
            entries = numerics.score_entries(b, h, t)
            prompt = (
                rf"A decoder's masked self-attention has $h = {h}$ heads and processes a batch of $B = {b}$ "
                rf"target sequences of $T = {t}$ tokens. How many entries does its attention-score tensor "
                "hold, masked entries included?"
            )
            solution = [
                r"Each head scores every query against every key: "
                rf"$T \times T = {t} \times {t}$ per sequence.",
                r"The causal mask sets the entries above the diagonal to $-\infty$, but they are still "
                rf"entries of the tensor: $[B, h, T, T] = [{b}, {h}, {t}, {t}]$.",
                rf"Entries: $B \cdot h \cdot T^2 = {b} \cdot {h} \cdot {group(t * t)} = {group(entries)}$.",
            ]
            mistakes = [
                Mistake(
                    "mask-removes-entries",
                    b * h * (t * t - numerics.causal_masked_entries(t)),
                    r"The mask does not remove entries: it writes $-\infty$ into them, so the tensor "
                    r"still has $T^2$ scores per head and sequence.",
                ),
                Mistake(
                    "linear-in-length",
                    b * h * t,
                    r"That gives one score per token; $T$ queries each look at $T$ keys.",
                ),
            ]
            inputs: dict[str, object] = {"block": block, "batch": b, "heads": h, "t_target": t}
        else:
            s = (
                t_source
                if t_source is not None
                else int(pick(rng, [v for v in sizes.LENGTHS if v != t and v <= 256]))
            )
            if s == t:
                raise ValueError("the source and target lengths must differ")
            entries = numerics.score_entries(b, h, t, s)
            prompt = (
                rf"A decoder's cross-attention has $h = {h}$ heads. A batch holds $B = {b}$ sentence pairs: "
                rf"target sequences of $T_{{\text{{tgt}}}} = {t}$ tokens and source sequences of "
                rf"$T_{{\text{{src}}}} = {s}$ tokens. How many entries does the cross-attention score "
                "tensor hold?"
            )
            solution = [
                r"Queries come from the decoder (one per target token), keys from the encoder's output "
                r"(one per source token).",
                r"Each head and sentence has a "
                rf"$T_{{\text{{tgt}}}} \times T_{{\text{{src}}}} = {t} \times {s}$ score matrix: "
                rf"the tensor is $[{b}, {h}, {t}, {s}]$.",
                rf"Entries: ${b} \cdot {h} \cdot {t} \cdot {s} = {group(entries)}$.",
            ]
            mistakes = [
                Mistake(
                    "target-squared",
                    numerics.score_entries(b, h, t),
                    "That is the decoder's self-attention. In cross-attention the keys are the source "
                    "tokens, so each target token has one score per source token.",
                ),
                Mistake(
                    "source-squared",
                    numerics.score_entries(b, h, s),
                    "That is the encoder's self-attention. In cross-attention the queries are the "
                    "target tokens.",
                ),
            ]
            inputs = {"block": block, "batch": b, "heads": h, "t_target": t, "t_source": s}
        mistakes += [
            Mistake(
                "forgot-heads",
                entries // h,
                "That is one head's scores; every head computes its own score matrix.",
            ),
            Mistake(
                "forgot-batch",
                entries // b,
                "That is one sequence's scores; every sequence in the batch has its own.",
            ),
        ]
        # B = h or h = T would give two slips one number, and a repeated size hides which axis is
        # which in the tensor's shape: redraw.
        sizes_used = [b, h, t] if block == "self" else [b, h, t, s]
        distinct = len(set(sizes_used)) == len(sizes_used)
        if given_any or (distinct and keeps_all(IntegerAnswer(entries), mistakes)):
            break
    return Variant(
        prompt=prompt,
        answer=IntegerAnswer(entries),
        solution=solution,
        mistakes=mistakes,
        inputs=inputs,
        hint="Write the shape of the score tensor first: batch, heads, queries, keys.",
    )


# (blocks, d_model, model) of published models with d_ff = 4d, biases and LayerNorms.
BLOCK_MODELS = (
    (12, 768, "BERT-base"),
    (24, 1024, "BERT-large"),
    (12, 768, "GPT-2 small"),
    (24, 1024, "GPT-2 medium"),
    (4, 256, "BERT-mini"),
    (2, 128, "BERT-tiny"),
)


@generator
def blocks_param_count(
    rng: np.random.Generator,
    /,
    *,
    layers: int | None = None,
    d_model: int | None = None,
    model: str | None = None,
) -> Variant:
    """Parameters of N Transformer blocks with d_ff = 4d, fully counted: N·(12d² + 13d)."""
    if layers is None and d_model is None:
        n, d, name = pick(rng, BLOCK_MODELS)
    else:
        n = layers if layers is not None else int(pick(rng, (1, 6, 12)))
        d = sizes.width(rng, d_model)
        name = model
    if n < 1:
        raise ValueError(f"layers must be at least 1, not {n}")
    per_block = numerics.block_params_12d2(d)
    total = numerics.stack_params(per_block, n)
    who = f" ({name})" if name else ""
    blocks = "one Transformer block" if n == 1 else f"{n} Transformer blocks{who}"
    prompt = (
        rf"How many parameters {'does' if n == 1 else 'do'} {blocks} hold with ${D_MODEL} = d = {d}$ and "
        r"$d_{\text{ff}} = 4d$? Count weights, biases and LayerNorm parameters "
        "(no embeddings)."
    )
    solution = [
        r"Attention: $4d^2 + 4d$; FFN: $2d \cdot 4d + 4d + d = 8d^2 + 5d$; two LayerNorms: $4d$.",
        rf"One block: $12d^2 + 13d = 12 \cdot {d}^2 + 13 \cdot {d} = {group(per_block)}$.",
    ]
    if n > 1:
        solution.append(
            rf"{n} blocks, each with its own weights: ${n} \times {group(per_block)} = {group(total)}$."
        )

    def times(per: int) -> int:
        return numerics.stack_params(per, n)

    mistakes = [
        Mistake(
            "weights-only",
            times(numerics.encoder_layer_params(d, 4 * d, counted=numerics.WEIGHTS_ONLY)),
            r"That is $12d^2$, the weight matrices alone; the biases and LayerNorms add $13d$ per block.",
        ),
        Mistake(
            "no-norms",
            times(numerics.encoder_layer_params(d, 4 * d, counted=numerics.Counted(norms=False))),
            r"That leaves out the two LayerNorms, whose $\gamma$ and $\beta$ add $4d$ per block.",
        ),
        Mistake(
            "no-biases",
            times(numerics.encoder_layer_params(d, 4 * d, counted=numerics.Counted(biases=False))),
            r"That leaves out the biases: $4d$ in attention and $4d + d$ in the FFN.",
        ),
        Mistake(
            "forgot-w-o",
            times(numerics.encoder_layer_params(d, 4 * d, counted=numerics.Counted(w_o=False))),
            r"That leaves out the output projection $W_O$ and its bias, $d^2 + d$ per block.",
        ),
    ]
    if n > 1:
        mistakes.insert(
            0,
            Mistake(
                "shared-layer-weights",
                numerics.stack_params(per_block, n, shared=True),
                "That is one block. The blocks share their architecture, not their weights.",
            ),
        )
    return Variant(
        prompt=prompt,
        answer=IntegerAnswer(total),
        solution=solution,
        mistakes=mistakes,
        inputs={"layers": n, "d_model": d, "model": name},
        hint="Count attention, FFN and LayerNorms of one block as multiples of d² and d.",
    )
