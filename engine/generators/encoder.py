"""The encoder layer's shapes: what a stack of layers outputs, how big a padded batch is, the FFN's shapes."""

from __future__ import annotations

from typing import Literal

import numpy as np

from attnquiz.engine import numerics
from attnquiz.engine.answers.kinds import IntegerAnswer, Mistake, ShapeAnswer, symbols
from attnquiz.engine.generators import sizes
from attnquiz.engine.generators.common import group, pick
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant

D_MODEL = r"d_{\text{model}}"
D_FF = r"d_{\text{ff}}"
# A prompt lists each sentence's length only for batches this small (a longer list is noise).
MAX_LISTED = 8


def _shape(dims: tuple[numerics.Dim, ...]) -> str:
    return "[" + ", ".join(str(d) for d in dims) + "]"


def _ordinal(n: int) -> str:
    if n % 100 in (11, 12, 13):
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }"


@generator
def encoder_output_shape(
    rng: np.random.Generator,
    /,
    *,
    tokens: int | None = None,
    d_model: int | None = None,
    heads: int | None = None,
    d_ff: int | None = None,
    layers: int | None = None,
    layer: int | None = None,
) -> Variant:
    """Output shape of the k-th layer of a Transformer encoder for one sequence [T, d_model]."""
    d = sizes.width(rng, d_model)
    t = sizes.length(rng, tokens, avoid=d)
    h = sizes.heads_for(rng, d, heads)
    f = sizes.ffn_width(rng, d, d_ff)
    n = int(layers) if layers is not None else int(pick(rng, (4, 6, 6, 12, 24)))
    k = int(layer) if layer is not None else (n if rng.random() < 0.5 else int(rng.integers(2, n + 1)))
    if not 1 <= k <= n:
        raise ValueError(f"layer must be 1 to {n}, not {k}")
    x = (t, d)
    out = numerics.encoder_stack_shape(x, heads=h, d_ff=f, layers=k)
    d_k = numerics.head_dim(d, h)
    prompt = (
        rf"A Transformer encoder has $N = {n}$ layers with ${D_MODEL} = {d}$, $h = {h}$ heads and "
        rf"${D_FF} = {f}$. A sentence of $T = {t}$ tokens enters it as a matrix of shape "
        rf"$[T, {D_MODEL}] = {_shape(x)}$. What is the shape of the output of the {_ordinal(k)} layer?"
    )
    solution = [
        rf"Self-attention: ${h}$ heads of width ${d}/{h} = {d_k}$ concatenate back to width ${d}$ and "
        rf"$W^O$ is ${d} \times {d}$, so $\operatorname{{MHA}}(X)$ is ${_shape(x)}$ and the residual "
        rf"$X + \operatorname{{MHA}}(X)$ fits.",
        rf"FFN: $W_1$ expands each token to ${D_FF} = {f}$ (${_shape(numerics.ffn_hidden_shape(x, f))}$ "
        rf"inside), and $W_2$ projects back to ${d}$, so the second residual fits too.",
        rf"Every layer maps ${_shape(x)}$ to ${_shape(x)}$, so after {k} layer{'s' if k > 1 else ''} the "
        rf"shape is still ${_shape(out)}$: one ${d}$-wide vector per token.",
    ]
    mistakes = [
        Mistake(
            "ffn-width",
            numerics.ffn_hidden_shape(x, f),
            rf"${D_FF}$ is the width inside the FFN only: $W_2$ projects each token back to ${D_MODEL}$ "
            "so that the residual addition fits.",
        ),
        Mistake(
            "head-width",
            (t, d_k),
            rf"That is one head's width. The heads are concatenated back to ${D_MODEL}$ and mixed by $W^O$.",
        ),
        Mistake(
            "layers-stacked-along-t",
            (k * t, d),
            "The layers are applied one after another to the same tokens; they do not add rows. Each "
            "layer keeps the length T.",
        ),
    ]
    return Variant(
        prompt=prompt,
        answer=ShapeAnswer(out, symbols=symbols(N=n, d_model=d, h=h, d_ff=f, T=t)),
        solution=solution,
        mistakes=mistakes,
        inputs={"tokens": t, "d_model": d, "heads": h, "d_ff": f, "layers": n, "layer": k},
        hint="Ask what each sub-layer does to the width, and whether the residual additions allow a change.",
    )


@generator
def padded_batch_volume(
    rng: np.random.Generator,
    /,
    *,
    sentences: int | None = None,
    padded_length: int | None = None,
    d_model: int | None = None,
    show_lengths: bool = True,
) -> Variant:
    """How many numbers an encoder layer outputs for a batch of sentences padded to one length."""
    b = sizes.batch(rng, sentences)
    t = sizes.length(rng, padded_length, at_most=128)
    d = sizes.width(rng, d_model)
    if b < 2:
        raise ValueError("a batch needs at least two sentences")
    shape = (b, t, d)
    volume = numerics.tensor_volume(shape)
    lengths: list[int] = []
    if show_lengths and b <= MAX_LISTED:
        # The longest sentence sets the padded length; the others are shorter and padded up to it.
        lengths = [int(v) for v in rng.integers(max(2, t // 3), t, size=b)]
        lengths[int(rng.integers(b))] = t
    if lengths:
        told = ", ".join(str(n) for n in lengths[:-1]) + f" and {lengths[-1]}"
        batch_text = (
            f"A batch of {b} sentences with {told} tokens is padded to the longest, $T = {t}$, and "
            rf"embedded with ${D_MODEL} = {d}$."
        )
    else:
        batch_text = f"A batch of {b} sentences is padded to $T = {t}$ tokens each and embedded with " + (
            rf"${D_MODEL} = {d}$."
        )
    prompt = (
        f"{batch_text} The batch passes through one Transformer encoder layer. How many numbers does the "
        "layer's output tensor hold?"
    )
    solution = [
        rf"The layer keeps the shape $[B, T, {D_MODEL}]$, so its output is ${_shape(shape)}$ "
        "(padding positions included: they are masked in attention but still have vectors).",
        rf"Entries: ${b} \cdot {t} \cdot {d} = {group(volume)}$.",
    ]
    mistakes = [
        Mistake(
            "one-sentence",
            numerics.tensor_volume((t, d)),
            "That is the output of one sentence. The batch holds one [T, d_model] matrix per sentence.",
        ),
        Mistake(
            "width-dropped",
            numerics.tensor_volume((b, t)),
            "That counts the token positions only. Every position carries a whole d_model-wide vector.",
        ),
    ]
    if lengths:
        mistakes.append(
            Mistake(
                "ignored-padding",
                numerics.tensor_volume((sum(lengths), d)),
                "That counts the real tokens only. After padding every sentence has the same length T, "
                "and the padded positions are part of the tensor.",
            )
        )
    return Variant(
        prompt=prompt,
        answer=IntegerAnswer(volume),
        solution=solution,
        mistakes=mistakes,
        inputs={"sentences": b, "padded_length": t, "d_model": d, "lengths": lengths},
        hint="Write down the output's shape first, then multiply its dimensions.",
    )


FfnAsk = Literal["hidden", "output", "w1", "w2"]


@generator
def ffn_shapes(
    rng: np.random.Generator,
    /,
    *,
    batch: int | None = None,
    tokens: int | None = None,
    d_model: int | None = None,
    d_ff: int | None = None,
    ask: FfnAsk | None = None,
) -> Variant:
    """Shapes in the position-wise FFN ReLU(xW₁ + b₁)W₂ + b₂: its weights, hidden activation and output."""
    b = sizes.batch(rng, batch)
    d = sizes.width(rng, d_model)
    f = sizes.ffn_width(rng, d, d_ff)
    t = sizes.length(rng, tokens, avoid=(d, f, b))
    what: FfnAsk = ask if ask is not None else pick(rng, ("hidden", "output", "w1", "w2"))
    x = (b, t, d)
    w1 = (d, f)
    w2 = (f, d)
    hidden = numerics.matmul_shape(x, w1)
    out = numerics.matmul_shape(hidden, w2)
    prompt_start = (
        rf"A batch of $B = {b}$ sentences with $T = {t}$ tokens each enters a Transformer block with "
        rf"${D_MODEL} = {d}$ and ${D_FF} = {f}$, so $X$ has shape ${_shape(x)}$. The feed-forward network "
        r"is $\operatorname{FFN}(x) = \operatorname{ReLU}(xW_1 + b_1)W_2 + b_2$, applied to each token's "
        r"row vector $x$."
    )
    steps = [
        rf"With row vectors the weights act on the right: $W_1$ is $[{D_MODEL}, {D_FF}] = {_shape(w1)}$ and "
        rf"$W_2$ is $[{D_FF}, {D_MODEL}] = {_shape(w2)}$.",
        rf"$XW_1$: ${_shape(x)} \times {_shape(w1)} = {_shape(hidden)}$; the ReLU keeps that shape.",
        rf"Then $\times W_2$: ${_shape(hidden)} \times {_shape(w2)} = {_shape(out)}$, the shape the block "
        "started with, so the residual addition fits.",
    ]
    transposed = (
        "With row vectors x the weights multiply on the right, so a weight's shape is [input width, "
        "output width]."
    )
    if what == "hidden":
        question = r"What is the shape of the hidden activation $\operatorname{ReLU}(XW_1 + b_1)$?"
        answer = hidden
        mistakes = [
            Mistake(
                "block-output",
                out,
                rf"That is the FFN's output after $W_2$. Inside, $W_1$ expands each token to ${D_FF}$.",
            ),
        ]
    elif what == "output":
        question = r"What is the shape of $\operatorname{FFN}(X)$?"
        answer = out
        mistakes = [
            Mistake(
                "ffn-width",
                hidden,
                rf"That is the hidden activation. $W_2$ projects each token back to ${D_MODEL}$.",
            ),
        ]
    elif what == "w1":
        question = r"What is the shape of $W_1$?"
        answer = w1
        mistakes = [Mistake("transposed", w2, transposed)]
    else:
        question = r"What is the shape of $W_2$?"
        answer = w2
        mistakes = [Mistake("transposed", w1, transposed)]
    return Variant(
        prompt=f"{prompt_start} {question}",
        answer=ShapeAnswer(answer, symbols=symbols(B=b, T=t, d_model=d, d_ff=f)),
        solution=steps,
        mistakes=mistakes,
        inputs={"batch": b, "tokens": t, "d_model": d, "d_ff": f, "ask": what},
        hint="Multiply shapes left to right: the inner sizes must agree.",
    )
