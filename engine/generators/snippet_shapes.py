"""What the notes' NumPy, PyTorch and Hugging Face snippets print: the shapes of attention's tensors.

A code walkthrough shows the snippet as a fenced code block, with this variant's sizes written into
it, and asks what it prints. The printed shape is computed by the shape functions of
`attnquiz.engine.numerics` (a test runs the NumPy snippets themselves and compares what they print).
The snippet helpers here (`code_block`, `shape_tex`, `given_or`) serve the other walkthroughs too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from attnquiz.engine import numerics
from attnquiz.engine.answers.kinds import IntegerAnswer, Mistake, Part, PartsAnswer, ShapeAnswer, symbols
from attnquiz.engine.answers.values import Dim
from attnquiz.engine.generators.common import pick
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant


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


def given_or(
    value: int | None, rng: np.random.Generator, choices: Sequence[int], avoid: Sequence[int]
) -> int:
    """``value`` where the bank gives one, else a drawn size of ``choices`` that is none of ``avoid``."""
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
    d = given_or(d_k, rng, (2, 3, 4, 5, 6, 8), ())
    t = given_or(tokens, rng, (3, 4, 5, 6, 7, 9, 10, 12), (d,))
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
    dm = given_or(d_model, rng, (8, 16, 32, 64), ())
    dk = given_or(d_k, rng, [w for w in (4, 8, 16, 32) if w < dm] or [dm], ())
    b = given_or(batch, rng, (1, 2, 3, 4), (dk, dm))
    t = given_or(tokens, rng, (3, 5, 6, 7, 9, 10, 12), (b, dk, dm))
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
    b = given_or(batch, rng, (1, 2, 3, 4), (heads, layers))
    t: Dim = "T" if symbolic else given_or(tokens, rng, (16, 24, 32, 48, 64), (dm // heads,))
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
    dm = given_or(d_model, rng, (6, 8, 10, 12, 16), ())
    dk = given_or(d_k, rng, (2, 3, 4, 5), (dm,))
    dv = given_or(d_v, rng, (2, 3, 4, 5, 6, 7), (dm, dk))
    n = given_or(words, rng, (3, 4, 5, 6, 7, 9, 11), (dm, dk, dv))
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
    b = given_or(batch, rng, (1, 2, 3, 4), ())
    h = given_or(heads, rng, (2, 4, 8), (b,))
    dk = given_or(d_k, rng, (4, 8, 16), (b, h))
    same_width = d_v is None and rng.random() < 0.5
    dv = dk if same_width else given_or(d_v, rng, (4, 8, 16, 32), (b, h))
    tq = given_or(queries, rng, (3, 5, 6, 7, 10), (b, h, dk, dv))
    self_attention = keys is None and rng.random() < 0.5
    tk = tq if self_attention else given_or(keys, rng, (3, 5, 6, 7, 10), (b, h, dk, dv, tq))
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
