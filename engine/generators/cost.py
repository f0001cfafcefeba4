"""Cost of attention: score entries B·h·T², their growth with length, and the attention/dense crossover."""

from __future__ import annotations

import numpy as np

from attnquiz.engine import numerics
from attnquiz.engine.answers.kinds import IntegerAnswer, Mistake
from attnquiz.engine.generators import sizes
from attnquiz.engine.generators.common import group, pick
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant

D_MODEL = r"d_{\text{model}}"
SCORE_LENGTHS = (6, 8, 10, 12, 16, 20, 24, 32, 50, 64, 100, 128, 256, 512)
SCORE_BATCHES = (2, 3, 4, 8, 16, 32)
SCORE_HEADS = (2, 4, 8, 12, 16)
TIMES = {2: "twice", 3: "three times", 4: "four times"}


def _draw_scores_setup(
    rng: np.random.Generator, batch: int | None, heads: int | None, tokens: int | None
) -> tuple[int, int, int]:
    """B, h and T, drawn all different: with B = h (or h = T, B = T) two misconceptions give one number."""
    while True:
        b = int(batch) if batch is not None else int(pick(rng, SCORE_BATCHES))
        h = int(heads) if heads is not None else int(pick(rng, SCORE_HEADS))
        t = int(tokens) if tokens is not None else int(pick(rng, SCORE_LENGTHS))
        if len({b, h, t}) == 3 or None not in (batch, heads, tokens):
            return b, h, t


@generator
def score_entries(
    rng: np.random.Generator,
    /,
    *,
    batch: int | None = None,
    heads: int | None = None,
    tokens: int | None = None,
) -> Variant:
    """Entries of the attention-score tensor of one self-attention layer: B·h·T² (4·2·12² = 1,152)."""
    b, h, t = _draw_scores_setup(rng, batch, heads, tokens)
    entries = numerics.score_entries(b, h, t)
    prompt = (
        rf"A self-attention layer with $h = {h}$ heads processes a batch of $B = {b}$ sequences of "
        rf"$T = {t}$ tokens each. How many entries does its attention-score tensor hold (all heads and all "
        "sequences together)?"
    )
    solution = [
        rf"Each head scores every query against every key: a $T \times T = {t} \times {t}$ matrix, "
        rf"${group(t * t)}$ entries.",
        rf"There is one such matrix per head and per sequence, so the tensor is $[B, h, T, T] = "
        rf"[{b}, {h}, {t}, {t}]$.",
        rf"Entries: $B \cdot h \cdot T^2 = {b} \cdot {h} \cdot {group(t * t)} = {group(entries)}$.",
    ]
    mistakes = [
        Mistake(
            "linear-in-length",
            b * h * t,
            r"That gives one score per token. There are $T$ queries and each looks at all $T$ keys, "
            r"so each head has $T^2$ scores.",
        ),
        Mistake(
            "one-head",
            numerics.score_entries(b, 1, t),
            r"Each head computes its own $T \times T$ score matrix, so multiply by the number of heads too.",
        ),
        Mistake(
            "one-sequence",
            numerics.score_entries(1, h, t),
            "Every sequence of the batch has its own score matrices, so multiply by the batch size too.",
        ),
    ]
    return Variant(
        prompt=prompt,
        answer=IntegerAnswer(entries),
        solution=solution,
        mistakes=mistakes,
        inputs={"batch": b, "heads": h, "tokens": t},
        hint="Write down the shape of the score tensor, then multiply its dimensions.",
    )


@generator
def score_entries_longer(
    rng: np.random.Generator,
    /,
    *,
    batch: int | None = None,
    heads: int | None = None,
    tokens: int | None = None,
    factor: int | None = None,
) -> Variant:
    """Score entries after the sequence length grows k-fold: k² times as many (doubling T: 1,152 → 4,608)."""
    b, h, t = _draw_scores_setup(rng, batch, heads, tokens)
    k = int(factor) if factor is not None else int(pick(rng, (2, 2, 3, 4)))
    before = numerics.score_entries(b, h, t)
    after = numerics.score_entries(b, h, k * t)
    prompt = (
        rf"A self-attention layer with $h = {h}$ heads processes a batch of $B = {b}$ sequences of "
        rf"$T = {t}$ tokens; its attention-score tensor holds ${group(before)}$ entries. The sequences are "
        rf"made {TIMES.get(k, f'{k} times')} as long, $T = {k * t}$, with the same batch and heads. How many "
        "entries does the score tensor hold now?"
    )
    solution = [
        r"The score tensor is $[B, h, T, T]$: $T$ queries each scored against $T$ keys, so it grows like "
        r"$T^2$.",
        rf"Making $T$ {TIMES.get(k, f'{k} times')} as long multiplies the entries by ${k}^2 = {k * k}$: "
        rf"${group(before)} \cdot {k * k} = {group(after)}$.",
        rf"Check: $B \cdot h \cdot T^2 = {b} \cdot {h} \cdot {k * t}^2 = {group(after)}$.",
    ]
    mistakes = [
        Mistake(
            "linear-in-length",
            before * k,
            r"Attention is not linear in length: there are $T$ queries each looking at $T$ keys, so "
            rf"{TIMES.get(k, f'{k} times')} the length gives ${k}^2 = {k * k}$ times the scores.",
        ),
        Mistake(
            "unchanged",
            before,
            "The weights do not change with the length, but the scores do: one score per query–key pair.",
        ),
    ]
    return Variant(
        prompt=prompt,
        answer=IntegerAnswer(after),
        solution=solution,
        mistakes=mistakes,
        inputs={"batch": b, "heads": h, "tokens": t, "factor": k},
        hint=r"How does the number of query–key pairs grow when $T$ grows?",
    )


@generator
def attention_dense_crossover(
    rng: np.random.Generator,
    /,
    *,
    d_model: int | None = None,
) -> Variant:
    """The context length where attention-score FLOPs equal the dense layers' FLOPs: n = 6d (4,608 at 768)."""
    d = sizes.width(rng, d_model)
    f = 4 * d
    projections = numerics.projection_flops_per_token(d)
    ffn = numerics.ffn_flops_per_token(d, f)
    dense = projections + ffn
    n = numerics.crossover_length(dense, d)
    prompt = (
        rf"Count the FLOPs of one Transformer layer per token, at 2 FLOPs per multiply–add, with "
        rf"$d = {D_MODEL} = {d}$. The dense parts are the four $d \times d$ projections ($Q$, $K$, $V$, $O$) "
        r"and the FFN with $d_{\text{ff}} = 4d$. The attention-score parts are $QK^\top$ and the "
        r"weighted sum $AV$, each $2 \cdot n \cdot d$ FLOPs per token for a context of $n$ tokens. "
        r"At what context length $n$ do the attention-score FLOPs equal the dense FLOPs?"
    )
    solution = [
        rf"Projections: $4 \cdot 2d^2 = 8d^2$; FFN: $2 \cdot 2 \cdot d \cdot 4d = 16d^2$; dense total "
        rf"$24d^2 = {group(dense)}$ FLOPs per token.",
        rf"Scores: $QK^\top$ and $AV$ give $2 \cdot n \cdot d + 2 \cdot n \cdot d = 4nd = "
        rf"{group(4 * d)}\,n$ FLOPs per token.",
        rf"Equal when $4nd = 24d^2$, i.e. $n = 6d = 6 \cdot {d} = {group(n)}$. Beyond that, the "
        r"$n^2$ cost of attention dominates the layer.",
    ]
    mistakes = [
        Mistake(
            "qk-only",
            numerics.crossover_length(dense, d, products=1),
            r"That counts only $QK^\top$. The weighted sum $AV$ costs the same $2 \cdot n \cdot d$ "
            r"again, so the scores cost $4nd$ and the crossover is at $6d$.",
        ),
        Mistake(
            "forgot-ffn",
            numerics.crossover_length(projections, d),
            r"That leaves the FFN out of the dense cost. The FFN ($16d^2$) is the larger dense part.",
        ),
        Mistake(
            "forgot-projections",
            numerics.crossover_length(ffn, d),
            r"That leaves the $Q$, $K$, $V$, $O$ projections ($8d^2$) out of the dense cost.",
        ),
    ]
    return Variant(
        prompt=prompt,
        answer=IntegerAnswer(n),
        solution=solution,
        mistakes=mistakes,
        inputs={"d_model": d},
        hint=r"Write both costs per token as multiples of $d^2$ and of $nd$, then set them equal.",
    )
