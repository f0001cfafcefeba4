"""Code walkthroughs and small counts of the notes: the printed shape of a snippet, the context of an RNN,
path lengths, what a causal mask lets a word see, the base model's parameters, and Winograd sentences.

A code walkthrough shows the snippet as a fenced code block, with this variant's sizes written into
it, and asks what it prints. The printed shape is computed by the shape functions of
`attnquiz.engine.numerics` (a test runs the NumPy snippets themselves and compares what they print).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from attnquiz.engine import numerics
from attnquiz.engine.answers.kinds import (
    ChoiceAnswer,
    IntegerAnswer,
    Mistake,
    NumericAnswer,
    Option,
    Part,
    PartsAnswer,
    ShapeAnswer,
    symbols,
)
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.answers.values import Dim
from attnquiz.engine.generators.common import group, keeps_all, pick
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant

ONE_PLACE = Tolerance.decimals(1)
TWO_PLACES = Tolerance.decimals(2)


def code_block(*lines: str, language: str = "python") -> str:
    """A fenced Markdown code block with a language, one line per argument ("" for a blank line)."""
    return f"```{language}\n" + "\n".join(lines) + "\n```"


def shape_tex(dims: Sequence[Dim]) -> str:
    """A shape for TeX, e.g. ``[1, 6, 16]``, symbols as their TeX names (T_{target})."""

    def one(d: Dim) -> str:
        if isinstance(d, int):
            return str(d)
        name, _, sub = d.partition("_")
        return rf"{name}_{{\text{{{sub}}}}}" if sub else name

    return "[" + ", ".join(one(d) for d in dims) + "]"


def _distinct(rng: np.random.Generator, choices: Sequence[int], avoid: Sequence[int]) -> int:
    """One of ``choices`` that is none of ``avoid`` (so that no two sizes of a snippet coincide)."""
    left = [c for c in choices if c not in avoid]
    return int(pick(rng, left))


def _given_or(
    value: int | None, rng: np.random.Generator, choices: Sequence[int], avoid: Sequence[int]
) -> int:
    return int(value) if value is not None else _distinct(rng, choices, avoid)


# ---------------------------------------------------------------------------------------------
# Q @ K without the transpose (Day 13, "a common error and its message")
# ---------------------------------------------------------------------------------------------


@generator
def qk_transpose_shape(
    rng: np.random.Generator,
    /,
    *,
    tokens: int | None = None,
    d_k: int | None = None,
) -> Variant:
    """The shape `Q @ K.T` prints after `Q @ K` failed for want of the transpose (a (T, T) score matrix)."""
    d = _given_or(d_k, rng, (2, 3, 4, 5, 6, 8), ())
    t = _given_or(tokens, rng, (3, 4, 5, 6, 7, 9, 10, 12), (d,))
    if t == d:
        raise ValueError("with as many tokens as key dimensions Q @ K does not fail: choose different sizes")
    q = (t, d)
    answer = numerics.scores_shape(q, q)
    code = code_block(
        "import numpy as np",
        f"Q = K = np.ones(({t}, {d}))",
        "try:",
        "    Q @ K",
        "except ValueError as e:",
        '    print("ValueError:", str(e)[:70])',
        "scores = Q @ K.T",
        "print(scores.shape)",
    )
    prompt = (
        f"The queries and keys of {t} tokens with $d_k = {d}$ are multiplied to get attention scores:"
        f"\n\n{code}\n\n"
        "The first product fails with a `ValueError`. What shape does the last line print?"
    )
    solution = [
        rf"`Q` and `K` are both $[{t}, {d}]$. `Q @ K` is $[{t}, {d}] \times [{t}, {d}]$: the inner sizes "
        rf"${d}$ and ${t}$ differ, so NumPy refuses it.",
        rf"The keys must be transposed so that the inner sizes match: `Q @ K.T` is "
        rf"$[{t}, {d}] \times [{d}, {t}] = {shape_tex(answer)}$, one score for every query and every key.",
    ]
    mistakes = [
        Mistake(
            "kt-q-not-q-kt",
            numerics.matmul_shape((d, t), q),
            r"That is $K^\top Q$, a $d_k \times d_k$ matrix. The scores compare every query with every key, "
            r"so they are $QK^\top$: one row per query, one column per key.",
        ),
        Mistake(
            "shape-of-q",
            q,
            "That is the shape of `Q` itself. The product pairs every query with every key, so it has one "
            "row per token and one column per token.",
        ),
    ]
    return Variant(
        prompt=prompt,
        answer=ShapeAnswer(answer, symbols=symbols(d_k=d)),
        solution=solution,
        mistakes=mistakes,
        inputs={"tokens": t, "d_k": d},
        hint="Write the shapes of both operands of `Q @ K.T` and cancel the inner size.",
    )


# ---------------------------------------------------------------------------------------------
# The PyTorch SelfAttention module of Day 13 §5
# ---------------------------------------------------------------------------------------------

SELF_ATTENTION_MODULE = (
    "import math, torch, torch.nn as nn, torch.nn.functional as F",
    "",
    "class SelfAttention(nn.Module):",
    "    def __init__(self, d_model, d_k):",
    "        super().__init__()",
    "        self.W_q = nn.Linear(d_model, d_k, bias=False)",
    "        self.W_k = nn.Linear(d_model, d_k, bias=False)",
    "        self.W_v = nn.Linear(d_model, d_k, bias=False)",
    "        self.d_k = d_k",
    "",
    "    def forward(self, x, mask=None):",
    "        Q, K, V = self.W_q(x), self.W_k(x), self.W_v(x)",
    "        scores = Q @ K.transpose(-2, -1) / math.sqrt(self.d_k)",
    "        if mask is not None:",
    '            scores = scores.masked_fill(mask == 0, float("-inf"))',
    "        weights = F.softmax(scores, dim=-1)",
    "        out = weights @ V",
    "        return out, weights",
    "",
)


@generator
def self_attention_module_shapes(
    rng: np.random.Generator,
    /,
    *,
    batch: int | None = None,
    tokens: int | None = None,
    d_model: int | None = None,
    d_k: int | None = None,
) -> Variant:
    """What `print(out.shape, w.shape)` shows for the notes' PyTorch SelfAttention module: (a), (b)."""
    dm = _given_or(d_model, rng, (8, 16, 32, 64), ())
    dk = _given_or(d_k, rng, [w for w in (4, 8, 16, 32) if w < dm] or [dm], ())
    b = _given_or(batch, rng, (1, 2, 3, 4), (dk, dm))
    t = _given_or(tokens, rng, (3, 5, 6, 7, 9, 10, 12), (b, dk, dm))
    x = (b, t, dm)
    q = numerics.matmul_shape(x, (dm, dk))
    w = numerics.scores_shape(q, q)
    out = numerics.matmul_shape(w, q)
    code = code_block(
        *SELF_ATTENTION_MODULE,
        "torch.manual_seed(0)",
        f"x = torch.randn({b}, {t}, {dm})",
        f"attn = SelfAttention(d_model={dm}, d_k={dk})",
        "out, w = attn(x)",
        "print(out.shape, w.shape)",
    )
    sentences = "1 sentence" if b == 1 else f"{b} sentences"
    prompt = (
        f"The Day 13 self-attention module reads a batch `x` of {sentences} of {t} tokens with "
        rf"$d_{{\text{{model}}}} = {dm}$:"
        f"\n\n{code}\n\n"
        "What does the last line print?"
    )
    names = symbols(B=b, T=t, d_model=dm, d_k=dk)
    proj = (
        rf"`x` is $[B, T, d_{{\text{{model}}}}] = {shape_tex(x)}$; each `nn.Linear(d_model, d_k)` maps the "
        rf"last axis to $d_k$, so `Q`, `K` and `V` are ${shape_tex(q)}$."
    )
    scores_step = (
        rf"`Q @ K.transpose(-2, -1)` swaps the last two axes of `K`: $[{t}, {dk}] \times [{dk}, {t}]$ per "
        rf"sentence, so the scores and the softmax weights are ${shape_tex(w)}$."
    )
    part_a = Part(
        "a",
        "What does `out.shape` print?",
        ShapeAnswer(out, symbols=names),
        solution=[
            proj,
            scores_step,
            rf"`weights @ V` is $[{t}, {t}] \times [{t}, {dk}]$ per sentence, so `out` is "
            rf"${shape_tex(out)}$: one new $d_k$-wide vector per token.",
        ],
        mistakes=[
            Mistake(
                "model-width",
                (b, t, dm),
                r"That is the input's width. The value projection maps $d_{\text{model}}$ to $d_k$, and the "
                "output mixes value vectors, so it is $d_k$ wide.",
            ),
            Mistake(
                "weights-not-output",
                w,
                "That is the shape of the weights. The output multiplies the weights by `V`, one vector "
                "per token.",
            ),
            Mistake(
                "no-batch-dim",
                out[1:],
                "That drops the batch axis: PyTorch keeps it in front of every result.",
            ),
        ],
    )
    part_b = Part(
        "b",
        "What does `w.shape` print?",
        ShapeAnswer(w, symbols=names),
        solution=[scores_step],
        mistakes=[
            Mistake(
                "output-not-weights",
                out,
                "That is the shape of `out`. The weights hold one number for every query and every key.",
            ),
            Mistake(
                "kt-q-not-q-kt",
                (b, dk, dk),
                r"That would be $K^\top Q$. The scores compare every query with every key: $T \times T$ "
                "for each sentence.",
            ),
            Mistake(
                "no-batch-dim",
                w[1:],
                "That drops the batch axis: every sentence of the batch has its own weight matrix.",
            ),
        ],
    )
    return Variant(
        prompt=prompt,
        answer=PartsAnswer((part_a, part_b)),
        solution=[],
        inputs={"batch": b, "tokens": t, "d_model": dm, "d_k": dk},
        hint="Follow one sentence's matrices: a `Linear` changes only the last axis.",
    )


# ---------------------------------------------------------------------------------------------
# BERT's attentions (Day 13 §5, option A)
# ---------------------------------------------------------------------------------------------

# Hugging Face checkpoints: name → (layers, heads, d_model).
BERT_MODELS: dict[str, tuple[int, int, int]] = {
    "bert-base-uncased": (12, 12, 768),
    "bert-large-uncased": (24, 16, 1024),
    "distilbert-base-uncased": (6, 12, 768),
    "google/bert_uncased_L-2_H-128_A-2": (2, 2, 128),
    "google/bert_uncased_L-4_H-256_A-4": (4, 4, 256),
    "google/bert_uncased_L-4_H-512_A-8": (4, 8, 512),
    "google/bert_uncased_L-8_H-512_A-8": (8, 8, 512),
}

SENTENCES = (
    "The animal didn't cross the street because it was too tired",
    "The trophy did not fit in the suitcase because it was too big",
    "I love AI",
    "Attention is all you need",
    "The cat sat on the mat",
    "Translate English to French",
)


@generator
def bert_attentions_shape(
    rng: np.random.Generator,
    /,
    *,
    model: str | None = None,
    batch: int | None = None,
    tokens: int | None = None,
    layer: int | None = None,
    symbolic: bool = False,
) -> Variant:
    """How many attention maps a BERT returns and the shape of one: (batch, heads, T, T) per layer."""
    name = str(model) if model is not None else str(pick(rng, sorted(BERT_MODELS)))
    if name not in BERT_MODELS:
        raise ValueError(f"unknown model {name!r}: one of {', '.join(sorted(BERT_MODELS))}")
    layers, heads, dm = BERT_MODELS[name]
    b = _given_or(batch, rng, (1, 2, 3, 4), (heads, layers))
    t: Dim = "T" if symbolic else _given_or(tokens, rng, (16, 24, 32, 48, 64), (dm // heads,))
    chosen = int(layer) if layer is not None else int(rng.integers(0, layers))
    if not 0 <= chosen < layers:
        raise ValueError(f"{name} has layers 0 to {layers - 1}, not {chosen}")
    if b == 1:
        sentence = SENTENCES[0] if symbolic else str(pick(rng, SENTENCES))
        batch_lines: tuple[str, ...] = (f'sent = "{sentence}"',)
    else:
        drawn = [SENTENCES[i] for i in rng.choice(len(SENTENCES), size=b, replace=False)]
        batch_lines = ("sent = [", *(f'    "{s}",' for s in drawn), "]")
    tokenise = (
        ('inp = tok(sent, return_tensors="pt")',)
        if symbolic
        else (
            'inp = tok(sent, return_tensors="pt", truncation=True,',
            f'    padding="max_length", max_length={t})',
        )
    )
    code = code_block(
        "from transformers import AutoTokenizer, AutoModel",
        f'name = "{name}"',
        "tok = AutoTokenizer.from_pretrained(name)",
        "bert = AutoModel.from_pretrained(name, output_attentions=True)",
        *batch_lines,
        *tokenise,
        "att = bert(**inp).attentions",
        f"print(len(att), att[{chosen}].shape)",
    )
    size = (
        "The tokenizer turns the sentence into $T$ tokens ([CLS] and [SEP] included); keep $T$ as a symbol."
        if symbolic
        else f"Every sentence is padded or cut to exactly {t} tokens."
    )
    prompt = (
        f"`{name}` has {layers} layers of {heads} attention heads and "
        rf"$d_{{\text{{model}}}} = {dm}$. {size}"
        f"\n\n{code}\n\n"
        "What does the last line print?"
    )
    weights = (b, heads, t, t)
    head_width = dm // heads
    part_a = Part(
        "a",
        "What is `len(att)`?",
        IntegerAnswer(layers),
        solution=[f"`attentions` is a tuple with one attention tensor per layer: {layers} of them."],
        mistakes=[
            Mistake(
                "heads-for-layers",
                heads,
                "That is the number of heads in one layer. The tuple has one entry per layer; the heads are "
                "an axis of each entry.",
            )
        ]
        if heads != layers
        else [],
    )
    part_b = Part(
        "b",
        f"What shape does `att[{chosen}].shape` print?",
        ShapeAnswer(weights, symbols=symbols(T=None) if symbolic else ()),
        solution=[
            f"Each layer's entry holds the softmax weights of all its heads for the batch: "
            rf"$[\text{{batch}}, \text{{heads}}, T_q, T_k] = {shape_tex(weights)}$, one $T \times T$ map "
            "per head and per sentence (every row sums to 1).",
        ],
        mistakes=[
            Mistake(
                "no-head-axis",
                (b, t, t),
                "Each head computes its own weights, so the head axis stays in the shape.",
            ),
            Mistake(
                "output-not-weights",
                (b, heads, t, head_width),
                rf"That is a head's output ($d_{{\text{{model}}}}/h = {head_width}$ wide). The attentions "
                "are the weights: one for every query and every key.",
            ),
            Mistake(
                "hidden-states",
                (b, t, dm),
                "That is the shape of a layer's hidden states. The attentions are the weight maps of "
                "the heads.",
            ),
            Mistake(
                "tuple-as-tensor",
                (layers, b, heads, t, t),
                f"`att` is a tuple of {layers} tensors; `att[{chosen}]` is one of them, "
                "without a layer axis.",
            ),
        ],
    )
    return Variant(
        prompt=prompt,
        answer=PartsAnswer((part_a, part_b)),
        solution=[],
        inputs={"model": name, "batch": b, "tokens": t, "layer": chosen},
        hint="One tensor per layer; inside it, one T × T map per head and per sentence.",
    )


# ---------------------------------------------------------------------------------------------
# The essay's toy self-attention in NumPy (004)
# ---------------------------------------------------------------------------------------------


@generator
def toy_self_attention_shape(
    rng: np.random.Generator,
    /,
    *,
    words: int | None = None,
    d_model: int | None = None,
    d_k: int | None = None,
    d_v: int | None = None,
) -> Variant:
    """The shape the essay's NumPy self_attention prints: one d_v-wide vector per word."""
    dm = _given_or(d_model, rng, (6, 8, 10, 12, 16), ())
    dk = _given_or(d_k, rng, (2, 3, 4, 5), (dm,))
    dv = _given_or(d_v, rng, (2, 3, 4, 5, 6, 7), (dm, dk))
    n = _given_or(words, rng, (3, 4, 5, 6, 7, 9, 11), (dm, dk, dv))
    x = (n, dm)
    q = numerics.matmul_shape(x, (dm, dk))
    v = numerics.matmul_shape(x, (dm, dv))
    w = numerics.scores_shape(q, q)
    out = numerics.matmul_shape(w, v)
    weights_lines: tuple[str, ...]
    if dk == dv:
        weights_lines = (f"Wq, Wk, Wv = (np.random.randn({dm}, {dk}) for _ in range(3))",)
    else:
        weights_lines = (
            f"Wq, Wk = (np.random.randn({dm}, {dk}) for _ in range(2))",
            f"Wv = np.random.randn({dm}, {dv})",
        )
    code = code_block(
        "import numpy as np",
        "",
        "def softmax(x):",
        "    x = x - np.max(x)",
        "    e = np.exp(x)",
        "    return e / e.sum()",
        "",
        "def self_attention(X, Wq, Wk, Wv):",
        "    Q = X @ Wq",
        "    K = X @ Wk",
        "    V = X @ Wv",
        "    d_k = K.shape[-1]",
        "    scores = (Q @ K.T) / np.sqrt(d_k)",
        "    weights = np.apply_along_axis(softmax, 1, scores)",
        "    return weights @ V",
        "",
        f"X = np.random.randn({n}, {dm})",
        *weights_lines,
        "output = self_attention(X, Wq, Wk, Wv)",
        "print(output.shape)",
    )
    prompt = (
        f"A toy sentence of $T = {n}$ words, each an embedding of $d_{{\\text{{model}}}} = {dm}$ numbers, "
        f"goes through the essay's self-attention:\n\n{code}\n\nWhat shape does the last line print?"
    )
    solution = [
        rf"`X` is ${shape_tex(x)}$. `Q = X @ Wq` and `K = X @ Wk` are ${shape_tex(q)}$; `V = X @ Wv` is "
        rf"${shape_tex(v)}$.",
        rf"`Q @ K.T` is $[{n}, {dk}] \times [{dk}, {n}] = {shape_tex(w)}$, and each row of the weights "
        "sums to 1.",
        rf"`weights @ V` is $[{n}, {n}] \times [{n}, {dv}] = {shape_tex(out)}$: one new, context-aware "
        "vector per word, as wide as the values.",
    ]
    mistakes = [
        Mistake(
            "weights-not-output",
            w,
            "That is the shape of the weights. The function returns the weights times `V`: one vector "
            "per word.",
        ),
        Mistake(
            "model-width",
            x,
            "That is the shape of `X`. The output mixes value vectors, so it is as wide as `Wv` makes them.",
        ),
        Mistake(
            "dk-for-dv",
            q,
            r"That uses the width of the queries and keys. The output mixes the values, whose width is "
            "the number of columns of `Wv`.",
        ),
    ]
    return Variant(
        prompt=prompt,
        answer=ShapeAnswer(out, symbols=symbols(T=n, d_model=dm)),
        solution=solution,
        mistakes=mistakes,
        inputs={"words": n, "d_model": dm, "d_k": dk, "d_v": dv},
        hint="Write the shape of every line's result; `@` cancels the inner size.",
    )


# ---------------------------------------------------------------------------------------------
# Attention from scratch, batched over heads (ELI12 Week 1, executed output 01)
# ---------------------------------------------------------------------------------------------

ScratchAsk = Literal["output", "weights"]


@generator
def attention_from_scratch_shape(
    rng: np.random.Generator,
    /,
    *,
    batch: int | None = None,
    heads: int | None = None,
    queries: int | None = None,
    keys: int | None = None,
    d_k: int | None = None,
    d_v: int | None = None,
    ask: ScratchAsk | None = None,
) -> Variant:
    """The shape a from-scratch NumPy attention prints for [B, h, T, d] inputs: the output or the weights."""
    b = _given_or(batch, rng, (1, 2, 3, 4), ())
    h = _given_or(heads, rng, (2, 4, 8), (b,))
    dk = _given_or(d_k, rng, (4, 8, 16), (b, h))
    same_width = d_v is None and rng.random() < 0.5
    dv = dk if same_width else _given_or(d_v, rng, (4, 8, 16, 32), (b, h))
    tq = _given_or(queries, rng, (3, 5, 6, 7, 10), (b, h, dk, dv))
    self_attention = keys is None and rng.random() < 0.5
    tk = tq if self_attention else _given_or(keys, rng, (3, 5, 6, 7, 10), (b, h, dk, dv, tq))
    what: ScratchAsk = ask if ask is not None else pick(rng, ("output", "weights"))
    q = (b, h, tq, dk)
    k = (b, h, tk, dk)
    v = (b, h, tk, dv)
    w = numerics.scores_shape(q, k)
    out = numerics.matmul_shape(w, v)
    printed = "out" if what == "output" else "weights"
    code = code_block(
        "import numpy as np",
        "rng = np.random.default_rng(0)",
        f"q = rng.normal(size=({b}, {h}, {tq}, {dk}))",
        f"k = rng.normal(size=({b}, {h}, {tk}, {dk}))",
        f"v = rng.normal(size=({b}, {h}, {tk}, {dv}))",
        "scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])",
        "weights = np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)",
        "out = weights @ v",
        f'print(f"attention shape={{{printed}.shape}}")',
    )
    prompt = (
        "A from-scratch NumPy attention works on tensors laid out as $[B, h, T, d]$ (batch, heads, "
        f"positions, width):\n\n{code}\n\nWhat shape does the last line print?"
    )
    solution = [
        rf"`np.swapaxes(k, -1, -2)` is ${shape_tex((b, h, dk, tk))}$, so the scores and the weights are "
        rf"$[{tq}, {dk}] \times [{dk}, {tk}]$ per batch entry and head: ${shape_tex(w)}$. "
        "Each row sums to 1.",
        rf"`weights @ v` is $[{tq}, {tk}] \times [{tk}, {dv}]$ per batch entry and head: ${shape_tex(out)}$.",
        f"So the line prints the shape of `{printed}`: ${shape_tex(out if what == 'output' else w)}$.",
    ]
    mistakes: list[Mistake] = []
    if what == "output":
        answer = out
        if dv != dk:
            mistakes.append(
                Mistake(
                    "dk-for-dv",
                    (b, h, tq, dk),
                    "That uses the width of the queries and keys. The output mixes rows of `v`, so its "
                    "last axis is the values' width.",
                )
            )
        mistakes += [
            Mistake(
                "weights-not-output",
                w,
                "That is the shape of the weights; `out` multiplies them by `v`, one value-wide vector per "
                "query.",
            ),
            Mistake(
                "heads-merged",
                (b, tq, h * dv),
                "That is the concatenation of the heads. This code never merges them: the head axis stays.",
            ),
        ]
    else:
        answer = w
        if tq != tk:
            mistakes.append(
                Mistake(
                    "softmax-over-queries",
                    (b, h, tk, tq),
                    "That puts the keys first. Each row of the weights belongs to one query and spreads "
                    "over the keys: $[T_q, T_k]$.",
                )
            )
        mistakes += [
            Mistake(
                "output-not-weights",
                out,
                "That is the shape of `out`. The weights hold one number for every query and every key.",
            ),
            Mistake(
                "kt-q-not-q-kt",
                (b, h, dk, dk),
                r"That would be $K^\top Q$. The scores compare every query with every key.",
            ),
        ]
    return Variant(
        prompt=prompt,
        answer=ShapeAnswer(answer, symbols=symbols(B=b, h=h)),
        solution=solution,
        mistakes=mistakes,
        inputs={"batch": b, "heads": h, "queries": tq, "keys": tk, "d_k": dk, "d_v": dv, "ask": what},
        hint="The last two axes are the matrices; the axes in front ride along.",
    )


# ---------------------------------------------------------------------------------------------
# The alignment table of additive attention (ELI12 Week 1 §2)
# ---------------------------------------------------------------------------------------------


@generator
def alignment_table_shape(
    rng: np.random.Generator,
    /,
    *,
    source: int | None = None,
    target: int | None = None,
    hidden: int | None = None,
    symbolic: bool = False,
) -> Variant:
    """The shape of additive attention's weights for a whole translation: [T_target, T_source]."""
    if symbolic:
        t_s: Dim = "T_source"
        t_t: Dim = "T_target"
        setup = (
            "An additive-attention decoder writes a translation of $T_{\\text{target}}$ words from a "
            "source sentence of $T_{\\text{source}}$ words. `H` holds the encoder states $h_i$ (one row "
            "per source word) and `S` the decoder states $s_{t-1}$ (one row per output step), drawn at "
            "random here to follow the shapes:"
        )
        sizes_line = "T_source, T_target, hidden = len(source), len(target), 16"
        hid = 16
    else:
        hid = _given_or(hidden, rng, (8, 16, 32, 64), ())
        t_s = _given_or(source, rng, (4, 5, 6, 7, 8, 9, 11, 12), (hid,))
        t_t = _given_or(target, rng, (4, 5, 6, 7, 8, 9, 11, 12), (hid, t_s))
        setup = (
            f"An additive-attention decoder writes a translation of {t_t} words from a source sentence of "
            f"{t_s} words. `H` holds the encoder states $h_i$ (one row per source word) and `S` the "
            "decoder states $s_{t-1}$ (one row per output step), drawn at random here to follow the "
            "shapes:"
        )
        sizes_line = f"T_source, T_target, hidden = {t_s}, {t_t}, {hid}"
    answer = numerics.alignment_shape(t_t, t_s)
    code = code_block(
        "import numpy as np",
        "rng = np.random.default_rng(1)",
        sizes_line,
        "H = rng.normal(size=(T_source, hidden))",
        "S = rng.normal(size=(T_target, hidden))",
        "W_a = rng.normal(size=(hidden, hidden))",
        "U_a = rng.normal(size=(hidden, hidden))",
        "v_a = rng.normal(size=hidden)",
        "rows = []",
        "for s in S:",
        "    e = np.tanh(s @ W_a + H @ U_a) @ v_a",
        "    rows.append(np.exp(e) / np.exp(e).sum())",
        "alpha = np.array(rows)",
        "print(alpha.shape)",
    )
    keep = " Keep the lengths as the symbols `T_target` and `T_source`." if symbolic else ""
    prompt = f"{setup}\n\n{code}\n\nWhat shape does the last line print?{keep}"
    solution = [
        rf"For one decoder step, `H @ U_a` is ${shape_tex((t_s, hid))}$ and `s @ W_a` (width {hid}) is "
        rf"added to every row; after $\tanh$, `@ v_a` leaves one score per source word: "
        rf"${shape_tex((t_s,))}$.",
        "Softmax turns those scores into weights over the source words that sum to 1: one row of the "
        "alignment table.",
        rf"There is one row per decoder step, so the table is ${shape_tex(answer)}$ "
        r"($[T_{\text{target}}, T_{\text{source}}]$), and every row sums to 1.",
    ]
    mistakes = [
        Mistake(
            "weights-over-decoder-states",
            numerics.alignment_shape(t_s, t_t),
            "That puts the source words first, as if the weights were taken over the decoder states. Each "
            "decoder step spreads its weights over the encoder states (source positions), one row per "
            "output step.",
        ),
        Mistake(
            "one-step-only",
            (t_s,),
            "That is the weight vector of one decoder step. The loop builds one such row for every "
            "output step.",
        ),
        Mistake(
            "context-not-weights",
            (t_t, hid),
            r"That is the shape of the context vectors $c_t = \sum_i \alpha_{ti} h_i$. `alpha` holds the "
            "weights themselves: one per output step and source word.",
        ),
    ]
    # The code names the sizes, so a student may write them by name (symbolic: names without numbers).
    names = symbols(
        T_target=t_t if isinstance(t_t, int) else None,
        T_source=t_s if isinstance(t_s, int) else None,
        hidden=hid,
    )
    return Variant(
        prompt=prompt,
        answer=ShapeAnswer(answer, symbols=names),
        solution=solution,
        mistakes=mistakes,
        inputs={"source": t_s, "target": t_t, "hidden": hid, "symbolic": symbolic},
        hint="Work out the shape of `e` for one decoder step, then count the steps.",
    )


# ---------------------------------------------------------------------------------------------
# The squeezed summary: an RNN encoder's context has one size (ELI12 Week 1 §1; the essay)
# ---------------------------------------------------------------------------------------------


@generator
def rnn_context_shape(
    rng: np.random.Generator,
    /,
    *,
    short: int | None = None,
    long: int | None = None,
    hidden: int | None = None,
    embedding: int | None = None,
) -> Variant:
    """The context c = h_T of an RNN encoder for a short and a long sentence: the same size (a), (b)."""
    hid = _given_or(hidden, rng, (4, 5, 6, 8, 10, 16), ())
    emb = _given_or(embedding, rng, (3, 4, 6, 8, 12), (hid,))
    n_short = _given_or(short, rng, (2, 3, 4, 5), (hid, emb))
    n_long = _given_or(long, rng, (20, 30, 40, 50, 200), (hid, emb))
    code = code_block(
        "import numpy as np",
        "rng = np.random.default_rng(0)",
        f"hidden, emb = {hid}, {emb}",
        "W_xh = rng.normal(size=(emb, hidden))",
        "W_hh = rng.normal(size=(hidden, hidden))",
        "b = np.zeros(hidden)",
        "",
        "def encode(x):",
        "    h = np.zeros(hidden)",
        "    for x_t in x:",
        "        h = np.tanh(x_t @ W_xh + h @ W_hh + b)",
        "    return h",
        "",
        f"short = rng.normal(size=({n_short}, emb))",
        f"long = rng.normal(size=({n_long}, emb))",
        "print(encode(short).shape, encode(long).shape)",
    )
    prompt = (
        "A seq2seq encoder RNN reads a sentence one word embedding at a time, and hands its last hidden "
        f"state to the decoder as the context $c$. Here it reads a {n_short}-word and a {n_long}-word "
        f"sentence:\n\n{code}\n\nWhat does the last line print?"
    )
    context = numerics.rnn_context_shape(n_short, hid)
    long_context = numerics.rnn_context_shape(n_long, hid)
    grows = (n_long, hid)
    part_a = Part(
        "a",
        "What is the shape of `encode(short)`?",
        ShapeAnswer(context),
        solution=[
            rf"Every step overwrites `h` with a new vector of size `hidden` = {hid}: the {n_short} words are "
            rf"squeezed into one ${shape_tex(context)}$ vector."
        ],
        mistakes=[
            Mistake(
                "grows-with-length",
                (n_short, hid),
                "That keeps every word's state. `encode` returns only the last one, which is what the "
                "decoder gets.",
            ),
            Mistake(
                "embedding-width",
                (emb,),
                "That is the width of a word embedding. `W_xh` maps each word into the hidden size.",
            ),
        ],
    )
    part_b = Part(
        "b",
        "What is the shape of `encode(long)`?",
        ShapeAnswer(long_context),
        solution=[
            rf"The same: ${shape_tex(long_context)}$. A {n_long}-word sentence is squeezed into exactly "
            f"as many numbers as a {n_short}-word one. That is the seq2seq bottleneck: the one vector $c$ "
            "must carry everything the decoder will need for every output word."
        ],
        mistakes=[
            Mistake(
                "grows-with-length",
                grows,
                "The hidden state does not grow with the sentence: each step overwrites it with a vector "
                "of the same size, and `encode` returns the last one.",
            ),
            Mistake(
                "embedding-width",
                (emb,),
                "That is the width of a word embedding. `W_xh` maps each word into the hidden size.",
            ),
        ],
    )
    return Variant(
        prompt=prompt,
        answer=PartsAnswer((part_a, part_b)),
        solution=[],
        inputs={"short": n_short, "long": n_long, "hidden": hid, "embedding": emb},
        hint="Look at what `encode` returns, and at the size of `h` after each step.",
    )


# ---------------------------------------------------------------------------------------------
# Path length: RNN O(T) vs Transformer O(1) (ELI12 Week 1 §1)
# ---------------------------------------------------------------------------------------------


@generator
def path_length(
    rng: np.random.Generator,
    /,
    *,
    length: int | None = None,
    first: int | None = None,
    second: int | None = None,
) -> Variant:
    """How many recurrent steps and how many attention layers separate two words of a sentence (a), (b)."""
    t = int(length) if length is not None else int(pick(rng, (12, 20, 25, 30, 40, 50)))
    i = int(first) if first is not None else int(rng.integers(1, max(2, t // 3)))
    j = int(second) if second is not None else int(rng.integers(max(i + 2, t // 2), t + 1))
    if not 1 <= i < j <= t:
        raise ValueError(f"give two positions 1 ≤ first < second ≤ {t}")
    steps = numerics.path_length(i, j, recurrent=True)
    layers = numerics.path_length(i, j, recurrent=False)
    prompt = (
        f"In a sentence of {t} words, word {j} depends on word {i}. Count how far the information has to "
        "travel."
    )
    part_a = Part(
        "a",
        f"In an RNN encoder, through how many recurrent updates does information from word {i} pass to "
        f"reach the hidden state at word {j}?",
        IntegerAnswer(steps),
        solution=[
            rf"Each state depends on the previous one, so word {i} reaches word {j} through the updates "
            rf"at words {i + 1}, …, {j}: ${j} - {i} = {steps}$ steps. For words far apart that is about $T$ "
            r"steps: a path length of $O(T)$."
        ],
        mistakes=[
            Mistake(
                "whole-sentence",
                t,
                "That is the length of the whole sentence. Only the updates between the two words lie on "
                "the path.",
            ),
            Mistake(
                "attention-path",
                layers,
                "That is the path in self-attention, where every word looks at every other word directly. "
                "An RNN passes information on one step at a time.",
            ),
            *(
                [
                    Mistake(
                        "counted-both-ends",
                        steps + 1,
                        "That counts the words from the first to the last; the steps are the updates after "
                        f"word {i}.",
                    )
                ]
                if steps + 1 != t
                else []
            ),
        ],
    )
    part_b = Part(
        "b",
        "In a Transformer encoder, how many self-attention layers does it take to connect the two words?",
        IntegerAnswer(layers),
        solution=[
            "One: in a self-attention layer every word compares its query with the key of every other "
            r"word, so any two positions are connected directly, a path length of $O(1)$, however far "
            "apart they are."
        ],
        mistakes=[
            Mistake(
                "recurrent-path",
                steps,
                "That is the RNN's path. Self-attention connects every pair of words directly in one layer.",
            ),
        ],
    )
    return Variant(
        prompt=prompt,
        answer=PartsAnswer((part_a, part_b)),
        solution=[],
        inputs={"length": t, "first": i, "second": j},
        hint="An RNN moves information one word per step; attention looks at all words at once.",
    )


# ---------------------------------------------------------------------------------------------
# A causal mask: what word n may see (the essay)
# ---------------------------------------------------------------------------------------------


@generator
def causal_visible_words(
    rng: np.random.Generator,
    /,
    *,
    position: int | None = None,
    length: int | None = None,
) -> Variant:
    """How many words a decoder may attend to as it produces word n, and the first it may not (a), (b)."""
    if position is not None and length is None:
        n, t = int(position), None
    else:
        t = int(length) if length is not None else int(pick(rng, (10, 16, 20, 24, 30, 40)))
        n = int(position) if position is not None else int(rng.integers(2, t))
    total = t if t is not None else n + 1
    visible = numerics.visible_positions(total, n)
    first_hidden = n + 1
    if first_hidden > total:
        raise ValueError(f"word {n} is the last of {total}: no later word to hide")
    reply = f" of a {t}-word reply" if t is not None else ""
    prompt = (
        "A decoder writes text one word at a time with causal (masked) self-attention. It is producing word "
        f"{n}{reply}."
    )
    mistakes_a = [
        Mistake(
            "excludes-itself",
            visible - 1,
            "The causal mask keeps the diagonal: a word attends to itself as well as to the words before it.",
        ),
    ]
    if t is not None:
        mistakes_a.append(
            Mistake(
                "no-mask",
                t,
                "That is every word of the reply, as in an encoder. A causal mask hides the later words.",
            )
        )
    if t is not None and t - n + 1 not in (visible, visible - 1, t):
        mistakes_a.append(
            Mistake(
                "mask-reversed",
                t - n + 1,
                "That counts the word and the words after it. The mask hides the future: a word sees "
                "itself and the words before it.",
            )
        )
    part_a = Part(
        "a",
        "How many words may it attend to, itself included?",
        IntegerAnswer(visible),
        solution=[
            rf"Row {n} of the causal mask (`tril(ones(T, T))`) keeps the columns $1, …, {n}$: the word "
            f"itself and every earlier word, {visible} in all."
        ],
        mistakes=mistakes_a,
    )
    part_b = Part(
        "b",
        "What is the first word it is forbidden to attend to?",
        IntegerAnswer(first_hidden),
        solution=[
            f"Words {first_hidden} onward get the score $-\\infty$ and so exactly 0 weight: they have "
            "not been written yet. This is why a chat model writes left to right."
        ],
        mistakes=[
            Mistake(
                "excludes-itself",
                n,
                "A word may attend to itself; the first forbidden word is the next one.",
            )
        ],
    )
    return Variant(
        prompt=prompt,
        answer=PartsAnswer((part_a, part_b)),
        solution=[],
        inputs={"position": n, "length": t},
        hint="Under a causal mask a word sees itself and what came before it.",
    )


# ---------------------------------------------------------------------------------------------
# The base model's parameters, and the gap to the paper's count (key results, "a note on the numbers")
# ---------------------------------------------------------------------------------------------


def _millions(value: int) -> float:
    return value / 1e6


def _counted_text(full: bool) -> str:
    return (
        "weights, biases and LayerNorms"
        if full
        else "weight matrices and the embedding table only (no biases, no LayerNorm)"
    )


def _count_and_slips(d: int, f: int, n: int, v: int, *, full: bool) -> tuple[NumericAnswer, list[Mistake]]:
    """The count in millions and the slips the notes warn about, for one draw of the sizes."""
    counted = numerics.ALL if full else numerics.WEIGHTS_ONLY
    other = numerics.WEIGHTS_ONLY if full else numerics.ALL
    total = numerics.transformer_params(d, f, layers=n, vocab=v, counted=counted)
    what = _counted_text(full)
    mistakes = [
        Mistake(
            "untied-embeddings",
            _millions(numerics.transformer_params(d, f, layers=n, vocab=v, counted=counted, embeddings=3)),
            "That counts three embedding tables. Here the source, target and output layer share one.",
        ),
        Mistake(
            "no-embeddings",
            _millions(numerics.transformer_params(d, f, layers=n, vocab=v, counted=counted, embeddings=0)),
            "That leaves out the embedding table, which the question counts.",
        ),
        Mistake(
            "layers-share-weights",
            _millions(numerics.transformer_params(d, f, layers=1, vocab=v, counted=counted)),
            "That counts one encoder and one decoder layer. Identical layers share the architecture, not "
            "the weights: each layer has its own.",
        ),
        Mistake(
            "no-cross-attention",
            _millions(
                numerics.transformer_params(d, f, layers=n, vocab=v, counted=counted, cross_attention=False)
            ),
            "That counts each decoder layer as an encoder layer. A decoder layer also has cross-attention "
            "to the encoder (with its own four projections).",
        ),
    ]
    counted_otherwise = numerics.transformer_params(d, f, layers=n, vocab=v, counted=other)
    # Biases and LayerNorms are a few thousand numbers per layer: only a slip where they show at 0.1M.
    if abs(counted_otherwise - total) >= 100_000:
        mistakes.append(
            Mistake(
                "biases-left-out" if full else "biases-counted",
                _millions(counted_otherwise),
                "Count exactly what the question includes: " + what + ".",
            )
        )
    return NumericAnswer(_millions(total), ONE_PLACE), mistakes


@generator
def transformer_param_count(
    rng: np.random.Generator,
    /,
    *,
    d_model: int | None = None,
    d_ff: int | None = None,
    layers: int | None = None,
    vocab: int | None = None,
    biases: bool | None = None,
) -> Variant:
    """Parameters of an encoder–decoder Transformer with one shared embedding table, in millions."""
    given = None not in (d_model, layers, vocab, biases)
    # Redraw until every slip has a count of its own at 0.1M (none reads as the answer or another slip).
    for _ in range(100):
        d = int(d_model) if d_model is not None else int(pick(rng, (256, 512, 768, 1024)))
        f = int(d_ff) if d_ff is not None else 4 * d
        n = int(layers) if layers is not None else int(pick(rng, (2, 3, 4, 6, 8, 12)))
        v = int(vocab) if vocab is not None else int(pick(rng, (8000, 16000, 32000, 37000, 50000)))
        full = bool(biases) if biases is not None else bool(rng.random() < 0.5)
        answer, mistakes = _count_and_slips(d, f, n, v, full=full)
        if given or keeps_all(answer, mistakes):
            break
    counted = numerics.ALL if full else numerics.WEIGHTS_ONLY
    total = numerics.transformer_params(d, f, layers=n, vocab=v, counted=counted)
    enc = numerics.encoder_layer_params(d, f, counted=counted)
    dec = numerics.decoder_layer_params(d, f, counted=counted)
    what = _counted_text(full)
    prompt = (
        f"An encoder–decoder Transformer has {n} encoder and {n} decoder layers with "
        rf"$d_{{\text{{model}}}} = {d}$ and $d_{{\text{{ff}}}} = {f}$, sinusoidal positions, and one "
        f"embedding table of {v:,} tokens shared by the source, the target and the output layer. Counting "
        f"{what}, how many parameters does it have? Give the count in millions, to one decimal place."
    )
    formula = r"4d^2 + 2df + f + 9d" if full else r"4d^2 + 2df"
    dec_formula = r"8d^2 + 2df + f + 15d" if full else r"8d^2 + 2df"
    solution = [
        rf"One encoder layer (self-attention and FFN): ${formula} = {group(enc)}$.",
        rf"One decoder layer adds cross-attention{' and a third LayerNorm' if full else ''}: "
        rf"${dec_formula} = {group(dec)}$.",
        rf"The shared embedding table: $V \cdot d = {group(v)} \cdot {d} = {group(v * d)}$.",
        rf"Total: ${n} \cdot ({group(enc)} + {group(dec)}) + {group(v * d)} = {group(total)}$, about "
        rf"${_millions(total):.1f}$ million.",
    ]
    return Variant(
        prompt=prompt,
        answer=answer,
        solution=solution,
        mistakes=mistakes,
        inputs={"d_model": d, "d_ff": f, "layers": n, "vocab": v, "biases": full},
        hint="Count one encoder layer and one decoder layer, multiply by the layers, add the embeddings.",
    )


# Reported sizes of published models, in millions: (the paper's count, a name).
PUBLISHED = (
    (65.0, "the base Transformer"),
    (110.0, "BERT-base"),
    (117.0, "GPT"),
    (213.0, "the big Transformer"),
    (340.0, "BERT-large"),
)


@generator
def param_count_gap(
    rng: np.random.Generator,
    /,
    *,
    own: float | None = None,
    paper: float | None = None,
    model: str | None = None,
    within: int | None = None,
) -> Variant:
    """How far one's own parameter count falls short of a paper's, in millions and in per cent (a), (b);
    the solution checks the claim that it is "within k %"."""
    if paper is None:
        paper_m, name = pick(rng, PUBLISHED)
    else:
        paper_m, name = float(paper), model or "the model"
    own_m = float(own) if own is not None else round(paper_m * (1 - float(rng.uniform(0.01, 0.06))), 1)
    if not 0 < own_m < paper_m:
        raise ValueError("the own count must be positive and below the paper's")
    claim = int(within) if within is not None else int(pick(rng, (2, 3, 4, 5)))
    gap_m = round(paper_m - own_m, 10)
    percent = 100 * numerics.relative_gap(own_m, paper_m)
    holds = percent <= claim
    prompt = (
        f"Your own count of {name} comes to {own_m:.1f}M parameters; the paper reports {paper_m:g}M. "
        f"Your notes say the count is within {claim} % of the paper's."
    )
    part_a = Part(
        "a",
        "How many million parameters are unaccounted for? Give one decimal place.",
        NumericAnswer(gap_m, ONE_PLACE),
        solution=[rf"${paper_m:g} - {own_m:.1f} = {gap_m:.1f}$ million."],
    )
    part_b = Part(
        "b",
        "As a percentage of the paper's count, how far short is your count? Give two decimal places.",
        NumericAnswer(percent, TWO_PLACES),
        solution=[
            rf"Relative to the paper's count: ${gap_m:.1f} / {paper_m:g} = {percent / 100:.4f}$, that is "
            rf"${percent:.2f}\,\%$.",
            f"{percent:.2f} % is {'at most' if holds else 'more than'} {claim} %, so the claim "
            f"{'holds' if holds else 'does not hold'} for the numbers as printed: check such claims.",
        ],
        mistakes=[
            Mistake(
                "relative-to-own-count",
                100 * gap_m / own_m,
                "That divides by your own count. The gap is measured against the paper's figure.",
            ),
            Mistake(
                "fraction-not-percent",
                percent / 100,
                "That is the fraction; the question asks for a percentage (multiply by 100).",
            ),
        ],
        uses=("a",),
        recompute=lambda gap: 100 * float(gap) / paper_m,
    )
    return Variant(
        prompt=prompt,
        answer=PartsAnswer((part_a, part_b)),
        solution=[],
        inputs={"own": own_m, "paper": paper_m, "model": name, "within": claim},
        hint="Subtract first; then divide the difference by the paper's figure.",
    )


# ---------------------------------------------------------------------------------------------
# Winograd sentences (the essay): what "it" means, and where it stands
# ---------------------------------------------------------------------------------------------

# (sentence with {} for the switch word, first noun, second noun, word that makes "it" the first noun,
# word that makes it the second noun, why for the first, why for the second).
WINOGRAD: tuple[tuple[str, str, str, str, str, str, str], ...] = (
    (
        "The trophy did not fit in the brown suitcase because it was too {}.",
        "the trophy",
        "the suitcase",
        "big",
        "small",
        "a suitcase being too big would not stop something fitting inside it",
        "a trophy being too small would not stop it fitting",
    ),
    (
        "The table did not fit through the doorway because it was too {}.",
        "the table",
        "the doorway",
        "wide",
        "narrow",
        "a wide doorway would let the table through",
        "a narrow table would pass through easily",
    ),
    (
        "The sculpture rolled off the shelf because it was not {}.",
        "the sculpture",
        "the shelf",
        "anchored",
        "level",
        "what rolls off needs anchoring, not the shelf it stands on",
        "a shelf that is not level lets things roll off it",
    ),
    (
        "The large ball crashed right through the table because it was made of {}.",
        "the ball",
        "the table",
        "steel",
        "styrofoam",
        "a steel table would stop the ball",
        "a styrofoam ball could not crash through a table",
    ),
    (
        "The delivery truck zoomed past the school bus because it was going so {}.",
        "the truck",
        "the bus",
        "fast",
        "slow",
        "the one that zooms past is the fast one",
        "the one being passed is the slow one",
    ),
)

Twist = Literal["first", "second"]


def _words(sentence: str) -> list[str]:
    return sentence.split()


def pronoun_position(sentence: str, pronoun: str = "it") -> int:
    """The 1-based position of ``pronoun`` among the sentence's words (split on spaces)."""
    for k, word in enumerate(_words(sentence), start=1):
        if word.strip(".,;:!?\"'").lower() == pronoun:
            return k
    raise ValueError(f"no {pronoun!r} in {sentence!r}")


@generator
def winograd_referent(
    rng: np.random.Generator,
    /,
    *,
    pair: int | None = None,
    twist: Twist | None = None,
) -> Variant:
    """What "it" refers to in a Winograd sentence, where one word switches the answer."""
    k = int(pair) if pair is not None else int(rng.integers(len(WINOGRAD)))
    if not 0 <= k < len(WINOGRAD):
        raise ValueError(f"pair is 0 to {len(WINOGRAD) - 1}, not {k}")
    text, first, second, word_first, word_second, why_first, why_second = WINOGRAD[k]
    which: Twist = twist if twist is not None else pick(rng, ("first", "second"))
    word, other_word = (word_first, word_second) if which == "first" else (word_second, word_first)
    right, wrong = (first, second) if which == "first" else (second, first)
    why = why_first if which == "first" else why_second
    sentence = text.format(word)
    options = [Option(first.capitalize(), which == "first"), Option(second.capitalize(), which == "second")]
    options = [
        Option(o.text, o.correct, "" if o.correct else f"Here {why}, so “it” is {right}.") for o in options
    ]
    if (pair is None or twist is None) and rng.random() < 0.5:
        options.reverse()
    position = pronoun_position(sentence)
    prompt = f"“{sentence}” What does “it” refer to?"
    solution = [
        f"“It” is {right}: {why}.",
        f"Change “{word}” to “{other_word}” and “it” means {wrong} instead, though “it” still stands at word "
        f"{position}. Resolving it takes the meaning of the whole sentence, not the position: attention "
        "lets “it” look at every other word and weigh them by relevance.",
    ]
    return Variant(
        prompt=prompt,
        answer=ChoiceAnswer(tuple(options), multiple=False),
        solution=solution,
        inputs={"pair": k, "twist": which},
        hint=f"Which of the two would being “{word}” explain?",
    )


@generator
def winograd_it_position(
    rng: np.random.Generator,
    /,
    *,
    sentence: str | None = None,
) -> Variant:
    """The word position of "it" in a Winograd sentence (the same for both versions of the sentence)."""
    if sentence is not None:
        text = str(sentence)
        switch = ""
    else:
        template, _, _, word_first, word_second, _, _ = WINOGRAD[int(rng.integers(len(WINOGRAD)))]
        text = template.format(word_first)
        switch = f" (or “{word_second}” in place of “{word_first}”)"
    position = pronoun_position(text)
    prompt = (
        f"In the sentence “{text}”{switch}, at which word does “it” stand? Count the words from 1, "
        "splitting at spaces."
    )
    solution = [
        "Counting the words: "
        + ", ".join(f"{w.strip('.,')} ({i})" for i, w in enumerate(_words(text), start=1) if i <= position)
        + ".",
        f"So “it” is word {position}, and it stays there whichever word changes its meaning: attention "
        "follows meaning, not position.",
    ]
    mistakes = [
        Mistake(
            "words-before",
            position - 1,
            "That is the number of words before “it” (or a count from 0). Count from 1 and include “it”.",
        ),
    ]
    return Variant(
        prompt=prompt,
        answer=IntegerAnswer(position),
        solution=solution,
        mistakes=mistakes,
        inputs={"sentence": text},
        hint="Number the words 1, 2, 3, … until you reach “it”.",
    )
