"""Multi-head attention: head width, the shapes of split and concatenated heads, and W_O mixing the heads."""

from __future__ import annotations

from typing import Literal

import numpy as np

from attnquiz.engine import numerics
from attnquiz.engine.answers.kinds import IntegerAnswer, Mistake, ShapeAnswer, VectorAnswer, symbols
from attnquiz.engine.answers.tolerance import EXACT
from attnquiz.engine.generators import sizes
from attnquiz.engine.generators.common import pick, sentence_start, small_ints, tex_matrix, tex_vector
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant

D_MODEL = r"d_{\text{model}}"


def _shape(dims: tuple[numerics.Dim, ...]) -> str:
    return "[" + ", ".join(str(d) for d in dims) + "]"


@generator
def concat_width(
    rng: np.random.Generator,
    /,
    *,
    d_model: int | None = None,
    heads: int | None = None,
) -> Variant:
    """Shape of the concatenated head outputs, [T, h·d_v] = [T, d_model], before W_O."""
    d = sizes.width(rng, d_model)
    h = sizes.heads_for(rng, d, heads)
    d_v = numerics.head_dim(d, h)
    per_head = numerics.split_heads_shape(("T", d), h)
    head = per_head[1:]
    concat = numerics.merge_heads_shape(per_head)
    prompt = (
        rf"A multi-head self-attention layer has ${D_MODEL} = {d}$ and $h = {h}$ heads, each of width "
        rf"$d_k = d_v = {D_MODEL}/h$. It reads a sequence of $T$ tokens. What is the shape of the "
        r"concatenated head outputs $\operatorname{Concat}(H_1, \ldots, H_h)$, before $W^O$ is applied? "
        r"Keep $T$ as a symbol."
    )
    solution = [
        rf"Each head has width $d_v = {D_MODEL}/h = {d}/{h} = {d_v}$, so each $H_i$ is ${_shape(head)}$.",
        rf"Concatenating the ${h}$ heads side by side adds their widths: "
        rf"$h \cdot d_v = {h} \cdot {d_v} = {d}$.",
        rf"So the concatenation is ${_shape(concat)}$: back to ${D_MODEL}$, the width the residual "
        rf"connection needs, and $W^O$ is ${d} \times {d}$.",
    ]
    mistakes = [
        Mistake(
            "heads-full-width",
            numerics.merge_heads_shape((h, "T", d)),
            rf"That gives every head the full width ${d}$. Each head works in a slice of width "
            rf"${D_MODEL}/h$, so ${h}$ heads together are only ${d}$ wide.",
        ),
        Mistake(
            "one-head",
            head,
            "That is the shape of one head's output. The concatenation puts all the heads side by side, "
            "so their widths add up.",
        ),
    ]
    return Variant(
        prompt=prompt,
        # d_k and d_v are defined from given numbers; naming them is not what this item asks for.
        answer=ShapeAnswer(concat, symbols=symbols(T=None, d_model=d, h=h, d_k=d_v, d_v=d_v)),
        solution=solution,
        mistakes=mistakes,
        inputs={"d_model": d, "heads": h},
        hint=r"Work out one head's width first, then put $h$ of them side by side.",
    )


@generator
def head_size(
    rng: np.random.Generator,
    /,
    *,
    d_model: int | None = None,
    heads: int | None = None,
    model: str | None = None,
) -> Variant:
    """The head size d_k = d_model / h of a multi-head layer (BERT-base: 768 / 12 = 64)."""
    d = sizes.width(rng, d_model)
    h = sizes.heads_for(rng, d, heads)
    name = model if model is not None else sizes.model_name(d, h)
    d_k = numerics.head_dim(d, h)
    who = f"{sentence_start(name)} has" if name else "A Transformer has"
    prompt = (
        rf"{who} ${D_MODEL} = {d}$ and $h = {h}$ attention heads. "
        r"What is the head size $d_k$, the width each head works in?"
    )
    solution = [
        rf"The heads split the model width evenly: $d_k = {D_MODEL}/h = {d}/{h} = {d_k}$ "
        rf"with remainder ${d % h}$. The head count must divide ${D_MODEL}$ exactly, which is what the "
        "code's `assert d_model % n_heads == 0` checks.",
        rf"The ${h}$ heads together are $h \cdot d_k = {h} \cdot {d_k} = {d}$ wide, so splitting "
        "into heads adds no parameters and no compute.",
    ]
    mistakes = [
        Mistake(
            "heads-full-width",
            d,
            rf"That keeps every head at the full width ${D_MODEL}$. Each head works in a slice of width "
            rf"${D_MODEL}/h$, so that $h$ heads together are still ${D_MODEL}$ wide.",
        ),
    ]
    return Variant(
        prompt=prompt,
        answer=IntegerAnswer(d_k),
        solution=solution,
        mistakes=mistakes,
        inputs={"d_model": d, "heads": h, "model": name},
        hint=r"The heads share the model width out evenly.",
    )


HeadsAsk = Literal["heads", "scores", "concat"]


@generator
def mha_head_shapes(
    rng: np.random.Generator,
    /,
    *,
    batch: int | None = None,
    tokens: int | None = None,
    d_model: int | None = None,
    heads: int | None = None,
    ask: HeadsAsk | None = None,
) -> Variant:
    """Shapes inside batched multi-head attention: split heads [B,h,T,d_k], scores [B,h,T,T], concat."""
    b = sizes.batch(rng, batch)
    d = sizes.width(rng, d_model)
    h = sizes.heads_for(rng, d, heads)
    t = sizes.length(rng, tokens, avoid=(d, numerics.head_dim(d, h), h, b))
    what: HeadsAsk = ask if ask is not None else pick(rng, ("heads", "scores", "concat"))
    d_k = numerics.head_dim(d, h)
    x = (b, t, d)
    q = numerics.split_heads_shape(numerics.matmul_shape(x, (d, d)), h)
    scores = numerics.scores_shape(q, q)
    concat = numerics.merge_heads_shape(numerics.matmul_shape(scores, q))
    no_transpose = (b, t, h, d_k)
    setup = (
        rf"A multi-head self-attention layer has ${D_MODEL} = {d}$ and $h = {h}$ heads. Its input $X$ has "
        rf"shape $[B, T, {D_MODEL}] = {_shape(x)}$. The projections $Q = XW^Q$, $K = XW^K$ and "
        r"$V = XW^V$ are split into heads laid out as $[B, h, T, d_k]$."
    )
    first = rf"The head width is $d_k = {D_MODEL}/h = {d}/{h} = {d_k}$."
    split = (
        rf"$Q = XW^Q$ is ${_shape(numerics.matmul_shape(x, (d, d)))}$; reshaping the last axis into "
        rf"${h}$ heads of ${d_k}$ gives ${_shape(no_transpose)}$, and moving the head axis forward gives "
        rf"${_shape(q)}$."
    )
    if what == "heads":
        question = r"What is the shape of $Q$ after the split into heads?"
        answer = q
        steps = [first, split]
        mistakes = [
            Mistake(
                "no-transpose",
                no_transpose,
                "That is the reshape before the head axis is moved forward: the heads are laid out as "
                "[B, h, T, d_k], so each head holds a T × d_k block.",
            ),
            Mistake(
                "heads-full-width",
                (b, h, t, d),
                rf"That keeps every head at the full width ${d}$. The heads share the ${D_MODEL}$ "
                rf"dimensions, so each is ${d}/{h}$ wide.",
            ),
        ]
    elif what == "scores":
        question = r"What is the shape of the scaled scores $QK^\top/\sqrt{d_k}$ for all heads at once?"
        answer = scores
        steps = [
            first,
            split,
            rf"Per head, $QK^\top$ is $[T, d_k] \times [d_k, T] = [{t}, {t}]$: one score for every query "
            rf"and key. With the batch and head axes in front: ${_shape(scores)}$.",
        ]
        mistakes = [
            Mistake(
                "keys-transposed-first",
                numerics.matmul_shape((*q[:-2], q[-1], q[-2]), q),
                r"That is $K^\top Q$, a $d_k \times d_k$ matrix. The scores compare every query with every "
                r"key, so they are $QK^\top$ with shape $T \times T$ per head.",
            ),
            Mistake(
                "one-head",
                (b, t, t),
                "Each head computes its own T × T score matrix, so the head axis stays in the shape.",
            ),
        ]
    else:
        question = r"What is the shape of the concatenated head outputs, before $W^O$?"
        answer = concat
        steps = [
            first,
            split,
            rf"Each head's output $AV$ is $[T, T] \times [T, d_k] = [{t}, {d_k}]$, so all heads give "
            rf"${_shape(numerics.matmul_shape(scores, q))}$.",
            rf"Concatenating the heads puts their widths side by side: ${h} \cdot {d_k} = {d}$, "
            rf"so the result is ${_shape(concat)}$.",
        ]
        mistakes = [
            Mistake(
                "heads-full-width",
                (b, t, h * d),
                rf"That gives every head the full width ${d}$. Each head is ${d}/{h}$ wide, so the "
                rf"concatenation is back to ${D_MODEL}$.",
            ),
            Mistake(
                "heads-not-merged",
                numerics.matmul_shape(scores, q),
                "That is the per-head output with the head axis still separate. Concatenation merges the "
                "heads into one feature axis.",
            ),
        ]
    return Variant(
        prompt=f"{setup} {question}",
        # d_k is the size to work out: a response that keeps it as a name is asked for its value.
        answer=ShapeAnswer(answer, symbols=symbols(B=b, T=t, d_model=d, h=h, d_k=None)),
        solution=steps,
        mistakes=mistakes,
        inputs={"batch": b, "tokens": t, "d_model": d, "heads": h, "ask": what},
        hint=r"Find the head width $d_k$ first, then follow one head's matrices.",
    )


@generator
def w_o_mix(
    rng: np.random.Generator,
    /,
    *,
    head_outputs: list[list[int]] | None = None,
    w_o: list[list[int]] | None = None,
) -> Variant:
    """Apply W^O to the concatenated outputs of two heads for one token (the notes' [4, 6] example)."""
    # Redraw until the heads are not all zero, no column of W^O is zero, and the output differs
    # from plain addition of the heads (which the notes' own W^O cannot be told apart from).
    for _ in range(100):
        heads = (
            np.asarray(head_outputs, dtype=float)
            if head_outputs is not None
            else small_ints(rng, (2, 2), -2, 4).astype(float)
        )
        concat = heads.reshape(-1)
        w = (
            np.asarray(w_o, dtype=float)
            if w_o is not None
            else small_ints(rng, (concat.size, heads.shape[1]), -1, 2).astype(float)
        )
        if w.ndim != 2 or w.shape[0] != concat.size:
            raise ValueError(f"W^O needs {concat.size} rows for the {concat.size} concatenated entries")
        output = numerics.weighted_sum(concat, w)
        added = heads.sum(axis=0)
        given = head_outputs is not None and w_o is not None
        if given or (concat.any() and w.any(axis=0).all() and not np.array_equal(output, added)):
            break
    n_heads = heads.shape[0]
    head_list = ", ".join(rf"$H_{i + 1} = {tex_vector(row)}$" for i, row in enumerate(heads))
    heads_tex = ", ".join(f"H_{i + 1}" for i in range(n_heads))
    terms = [
        " + ".join(rf"({int(c)})({int(w[r, j])})" for r, c in enumerate(concat)) for j in range(w.shape[1])
    ]
    prompt = (
        f"A toy multi-head attention layer has {n_heads} heads. For one token the heads output "
        f"{head_list}. The output projection is "
        rf"$W^O = {tex_matrix(w)}$. "
        rf"What is the layer's output $\operatorname{{Concat}}({heads_tex})\,W^O$ for this token?"
    )
    solution = [
        rf"Concatenate the heads side by side: ${tex_vector(concat)}$, a row of width ${concat.size}$.",
        rf"Multiply on the right by $W^O$ ({w.shape[0]} × {w.shape[1]}): entry $j$ is the concatenation "
        "dotted with column $j$ of $W^O$.",
        *(rf"Column {j + 1}: ${term} = {int(output[j])}$." for j, term in enumerate(terms)),
        rf"So the output is ${tex_vector(output)}$.",
    ]
    mistakes = [
        Mistake(
            "heads-added",
            tuple(float(v) for v in added),
            r"That adds the heads together. $W^O$ is a learned mixture of every entry of the "
            r"concatenation, so multiply by it rather than summing the heads.",
        ),
        Mistake(
            "forgot-w-o",
            tuple(float(v) for v in concat),
            r"That is the concatenation alone. The layer's output is the concatenation multiplied by "
            r"$W^O$, which mixes the heads.",
        ),
    ]
    return Variant(
        prompt=prompt,
        answer=VectorAnswer(tuple(float(v) for v in output), EXACT),
        solution=solution,
        mistakes=mistakes,
        inputs={"head_outputs": heads.astype(int), "w_o": w.astype(int)},
        hint=r"Concatenate first, then take the dot product with each column of $W^O$.",
    )
