"""Formula answers: counts and costs as expressions in the model's sizes (12d² + 13d, B·h·T², T(T−1)/2).

Each answer is a formula the student writes in the symbols the prompt declares; any algebraically
equal form is right (`attnquiz.engine.answers.symbolic`). A formula is never trusted as typed: every
generator checks its answer, and each mistake that claims to be a count of something, against the
reference numerics (`attnquiz.engine.numerics`) at several sizes before the variant is returned.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction

import numpy as np

from attnquiz.engine import numerics
from attnquiz.engine.answers import symbolic
from attnquiz.engine.answers.kinds import ExpressionAnswer, Mistake, ShapeAnswer, symbols
from attnquiz.engine.answers.values import Formula
from attnquiz.engine.generators.common import pick
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant

SAMPLE_SIZES = (2, 3, 8, 64, 512, 768)
"""Values every symbol takes, in turn, when a formula is checked against the reference numerics."""

WRITE = (
    "Write the formula in the symbols given (products as 3d or 3*d, powers as d^2); any "
    "equivalent form is right."
)


def checked(text: str, symbols: Sequence[str], reference: Callable[..., int | Fraction]) -> ExpressionAnswer:
    """The formula as an answer, after checking it equals ``reference`` (keyword arguments named
    as the symbols) at sample sizes: a formula whose numbers disagree with the numerics is a bug."""
    answer = ExpressionAnswer(text, tuple(symbols))
    agree(answer.formula, symbols, reference)
    return answer


def agree(formula: Formula, symbols: Sequence[str], reference: Callable[..., int | Fraction]) -> None:
    """Raise unless ``formula`` equals ``reference`` at every sample point."""
    for k, size in enumerate(SAMPLE_SIZES):
        # The symbols take different sizes at one point, so that d_model·d_ff is not (d_model)².
        point = {name: SAMPLE_SIZES[(k + j) % len(SAMPLE_SIZES)] for j, name in enumerate(symbols)}
        point[symbols[0]] = size
        value = symbolic.evaluate(formula.tree, {n: Fraction(v) for n, v in point.items()})
        expected = reference(**point)
        if value != expected:
            raise ValueError(f"the formula {formula.text} gives {value} at {point}, the numerics {expected}")


def _mistake(tag: str, text: str, symbols: Sequence[str], feedback: str) -> Mistake:
    return Mistake(tag, Formula.of(text, symbols), feedback)


def _named_d(rng: np.random.Generator) -> tuple[str, str]:
    """The model width's symbol, as the notes write it in one place or another: d or d_model."""
    name = str(pick(rng, ["d", "d_model"]))
    return name, (r"d_{\text{model}}" if name == "d_model" else "d")


def _variant(
    prompt: str,
    answer: ExpressionAnswer,
    solution: Sequence[str],
    mistakes: Sequence[Mistake],
    inputs: Mapping[str, object],
    hint: str,
) -> Variant:
    return Variant(
        prompt=prompt, answer=answer, solution=solution, mistakes=mistakes, inputs=dict(inputs), hint=hint
    )


@generator
def block_params_formula(rng: np.random.Generator, /) -> Variant:
    """Parameters of one encoder block with d_ff = 4d, as a formula in d: 12d² + 13d."""
    name, tex = _named_d(rng)
    answer = checked(f"12*{name}^2 + 13*{name}", [name], lambda **p: numerics.block_params_12d2(p[name]))
    mistakes = [
        _mistake(
            "layernorm-forgotten",
            f"12*{name}^2 + 9*{name}",
            [name],
            r"That leaves out the two LayerNorms: each has $\gamma$ and $\beta$, "
            f"$2{tex}$ parameters, so $4{tex}$ in all.",
        ),
        _mistake(
            "biases-forgotten",
            f"12*{name}^2 + 4*{name}",
            [name],
            f"That leaves out the biases: four of width ${tex}$ in attention, one of $4{tex}$ and one of "
            f"${tex}$ in the FFN, $9{tex}$ in all.",
        ),
        _mistake(
            "weights-only",
            f"12*{name}^2",
            [name],
            "That counts the weight matrices only; the block also holds the biases and the LayerNorms' "
            r"$\gamma$ and $\beta$.",
        ),
        _mistake(
            "mha-only",
            f"4*{name}^2 + 4*{name}",
            [name],
            "That is multi-head attention alone; the block also has the FFN and two LayerNorms.",
        ),
    ]
    prompt = (
        rf"An encoder block has model width ${tex}$ and a feed-forward width of $4{tex}$. Counting every "
        r"weight, bias and the LayerNorms' $\gamma$ and $\beta$, how many parameters does one block hold? "
        f"Give a formula in ${tex}$."
    )
    solution = [
        rf"Multi-head attention: four ${tex} \times {tex}$ projections with biases, $4{tex}^2 + 4{tex}$.",
        rf"FFN: $W_1$ is ${tex} \times 4{tex}$ with a bias of $4{tex}$, $W_2$ is $4{tex} \times {tex}$ "
        rf"with a bias of ${tex}$: $8{tex}^2 + 5{tex}$.",
        rf"Two LayerNorms: $2 \cdot 2{tex} = 4{tex}$.",
        f"Total: ${answer.tex()}$.",
    ]
    return _variant(
        prompt, answer, solution, mistakes, {"symbol": name}, "Add attention, the FFN and the two LayerNorms."
    )


@generator
def mha_params_formula(rng: np.random.Generator, /) -> Variant:
    """Parameters of multi-head attention with biases, as a formula in d_model: 4d² + 4d."""
    name, tex = _named_d(rng)
    answer = checked(f"4*{name}^2 + 4*{name}", [name], lambda **p: numerics.mha_params(p[name]))
    mistakes = [
        _mistake(
            "biases-forgotten",
            f"4*{name}^2",
            [name],
            f"That counts the weights only: each of the four projections also has a bias of ${tex}$.",
        ),
        _mistake(
            "forgot-w-o",
            f"3*{name}^2 + 3*{name}",
            [name],
            r"That leaves out the output projection $W^O$, which mixes the concatenated heads.",
        ),
        _mistake(
            "one-projection",
            f"{name}^2 + {name}",
            [name],
            r"That is one projection; attention has four: $W^Q$, $W^K$, $W^V$ and $W^O$.",
        ),
    ]
    prompt = (
        f"A multi-head self-attention layer has model width ${tex}$ and $h$ heads. Counting the "
        r"projections $W^Q$, $W^K$, $W^V$, $W^O$ and their biases, how many parameters does it hold? "
        f"Give a formula in ${tex}$ (the number of heads does not appear)."
    )
    solution = [
        rf"One projection over all heads is a ${tex} \times {tex}$ matrix (the heads split it, they add "
        rf"no weights) with a bias of ${tex}$: ${tex}^2 + {tex}$.",
        f"Four of them: ${answer.tex()}$.",
    ]
    return _variant(
        prompt, answer, solution, mistakes, {"symbol": name}, "Count one projection with its bias, then four."
    )


FFN_WIDTH_WORDINGS = (
    r"in the base model $d_{\text{ff}} = 4 d_{\text{model}}$",
    r"the base model has $d_{\text{model}} = 512$ and $d_{\text{ff}} = 2048$",
    r"four times as wide in the base model: $d_{\text{ff}} = 4 d_{\text{model}}$",
)
"""How the FFN prompt may describe the base model's widths: each is what the notes say (2048 = 4 × 512)."""

STACK_DEPTH_WORDINGS = (
    "the base model has $N = 6$",
    "six in the base model",
    "the notes' base model stacks $N = 6$",
)
"""How the stack prompt may describe the base model's depth: each is what the notes say (six layers)."""


@generator
def ffn_params_formula(rng: np.random.Generator, /) -> Variant:
    """Parameters of the position-wise FFN with biases: 2·d_model·d_ff + d_ff + d_model."""
    symbols = ["d_model", "d_ff"]
    answer = checked(
        "2*d_model*d_ff + d_ff + d_model", symbols, lambda **p: numerics.ffn_params(p["d_model"], p["d_ff"])
    )
    mistakes = [
        _mistake(
            "biases-forgotten",
            "2*d_model*d_ff",
            symbols,
            r"That counts $W_1$ and $W_2$ only: $b_1$ has $d_{\text{ff}}$ entries and $b_2$ has "
            r"$d_{\text{model}}$.",
        ),
        _mistake(
            "one-layer",
            "d_model*d_ff + d_ff",
            symbols,
            r"That is the first layer alone; $W_2$ maps $d_{\text{ff}}$ back to $d_{\text{model}}$ with its "
            r"own bias.",
        ),
        _mistake(
            "bias-widths-swapped",
            "2*d_model*d_ff + 2*d_model",
            symbols,
            r"The first bias has the hidden width: $b_1$ has $d_{\text{ff}}$ entries, $b_2$ has "
            r"$d_{\text{model}}$.",
        ),
    ]
    wording = int(rng.integers(len(FFN_WIDTH_WORDINGS)))  # only the wording of the example varies
    prompt = (
        r"The feed-forward network of a Transformer block is $\operatorname{FFN}(x) = "
        r"\operatorname{ReLU}(xW_1 + b_1)W_2 + b_2$, "
        r"from $d_{\text{model}}$ to $d_{\text{ff}}$ and back ("
        + FFN_WIDTH_WORDINGS[wording]
        + r"). How many parameters does it hold, biases included? Give a formula in "
        r"$d_{\text{model}}$ and $d_{\text{ff}}$."
    )
    solution = [
        r"$W_1$ is $d_{\text{model}} \times d_{\text{ff}}$ and $b_1$ has $d_{\text{ff}}$ entries.",
        r"$W_2$ is $d_{\text{ff}} \times d_{\text{model}}$ and $b_2$ has $d_{\text{model}}$ entries.",
        f"Total: ${answer.tex()}$.",
    ]
    return _variant(
        prompt, answer, solution, mistakes, {"wording": wording}, "Two linear maps, each with a bias."
    )


@generator
def w_o_params_formula(rng: np.random.Generator, /) -> Variant:
    """Weights of the output projection W_O, in h and d_v: (h·d_v)·d_model, asked with d_model = h·d_v."""
    symbols = ["h", "d_v"]
    answer = checked(
        "h^2*d_v^2", symbols, lambda **p: numerics.projection_params(p["h"] * p["d_v"], p["h"] * p["d_v"])
    )
    mistakes = [
        _mistake(
            "one-head",
            "h*d_v^2",
            symbols,
            r"That maps one head's width back; $W^O$ takes the concatenation of all $h$ heads, "
            r"$h d_v$ wide, to $d_{\text{model}} = h d_v$.",
        ),
        _mistake(
            "with-bias",
            "h^2*d_v^2 + h*d_v",
            symbols,
            r"That adds the bias; the question asks for the matrix $W^O$ alone.",
        ),
        _mistake(
            "per-head-square",
            "d_v^2",
            symbols,
            r"That is a $d_v \times d_v$ matrix; $W^O$ is $h d_v \times d_{\text{model}}$.",
        ),
    ]
    heads = int(pick(rng, [4, 8, 12, 16]))
    prompt = (
        rf"Multi-head attention with $h$ heads (say {heads}) of value width $d_v$ concatenates the heads and "
        r"maps them back to the model width $d_{\text{model}} = h d_v$ with $W^O$. How many weights does "
        r"$W^O$ hold (no bias)? Give a formula in $h$ and $d_v$."
    )
    solution = [
        r"The concatenated heads are $h d_v$ wide; $W^O$ maps them to $d_{\text{model}} = h d_v$.",
        f"So $W^O$ is $h d_v \\times h d_v$: ${answer.tex()}$ weights, which is $d_{{\\text{{model}}}}^2$.",
    ]
    return _variant(
        prompt, answer, solution, mistakes, {"heads_example": heads}, "What are the two sides of W^O?"
    )


@generator
def masked_entries_formula(rng: np.random.Generator, /) -> Variant:
    """Entries a causal mask hides in a [T, T] score matrix, as a formula in T: T(T − 1)/2."""
    answer = checked("T*(T - 1)/2", ["T"], lambda **p: numerics.causal_masked_entries(p["T"]))
    mistakes = [
        _mistake(
            "kept-entries",
            "T*(T + 1)/2",
            ["T"],
            "That counts the entries a query may see (the diagonal and below); the mask hides the ones "
            "above the diagonal.",
        ),
        _mistake(
            "half-the-matrix", "T^2/2", ["T"], "The diagonal is not masked: take it out before halving."
        ),
        _mistake("whole-matrix", "T^2", ["T"], "That is every score; only the future positions are hidden."),
        _mistake(
            "both-triangles",
            "T^2 - T",
            ["T"],
            "That counts every entry off the diagonal; the keys before a query (below the diagonal) stay "
            "visible.",
        ),
    ]
    example = int(rng.integers(3, 7))
    prompt = (
        "A decoder's causal mask hides, in the $T \\times T$ matrix of attention scores, every key "
        f"that comes after its query. How many entries does it hide? Give a formula in $T$ (for $T = "
        f"{example}$ "
        "it would be a number you can check by drawing the matrix)."
    )
    solution = [
        r"Query $i$ (counting from 1) may see keys $1, \dots, i$, so $T - i$ keys are hidden for it.",
        r"$\sum_{i=1}^{T} (T - i) = 0 + 1 + \dots + (T - 1) = " + answer.tex() + "$.",
    ]
    return _variant(
        prompt, answer, solution, mistakes, {"example_T": example}, "Count the hidden keys row by row."
    )


@generator
def score_entries_formula(rng: np.random.Generator, /) -> Variant:
    """Entries of the attention-score tensor of a batch, as a formula in B, h, T: B·h·T²."""
    symbols = ["B", "h", "T"]
    answer = checked("B*h*T^2", symbols, lambda **p: numerics.score_entries(p["B"], p["h"], p["T"]))
    mistakes = [
        _mistake("one-head", "B*T^2", symbols, "Each of the $h$ heads has its own $T \\times T$ scores."),
        _mistake("batch-forgotten", "h*T^2", symbols, "Each of the $B$ sequences has its own scores."),
        _mistake(
            "linear-in-length",
            "B*h*T",
            symbols,
            "Every query is scored against every key: $T \\times T$ per head, quadratic in length.",
        ),
    ]
    layout = str(pick(rng, ["[B, h, T, T]", "one $T \\times T$ matrix per sequence and head"]))
    prompt = (
        f"Self-attention over a batch of $B$ sequences of length $T$ with $h$ heads stores its scores as "
        f"{layout}. How many score entries is that? Give a formula in $B$, $h$ and $T$."
    )
    solution = [
        r"One head of one sequence scores $T$ queries against $T$ keys: $T^2$ entries.",
        f"Over $h$ heads and $B$ sequences: ${answer.tex()}$.",
    ]
    return _variant(prompt, answer, solution, mistakes, {"layout": layout}, "Shape of the score tensor?")


@generator
def dense_vs_attention_flops_formula(rng: np.random.Generator, /) -> Variant:
    """Attention-score FLOPs as a fraction of the dense FLOPs per token and layer, in n and d: n/(6d)."""
    symbols = ["n", "d"]
    answer = checked(
        "n/(6*d)",
        symbols,
        lambda **p: Fraction(
            numerics.attention_score_flops_per_token(p["n"], p["d"]), numerics.dense_flops_per_token(p["d"])
        ),
    )
    mistakes = [
        _mistake(
            "one-product",
            "n/(12*d)",
            symbols,
            r"Both $QK^\top$ and the weighted sum $AV$ cost $2nd$ FLOPs per token: $4nd$ together.",
        ),
        _mistake(
            "ffn-only",
            "n/(4*d)",
            symbols,
            "The dense part is the four projections ($8d^2$) and the FFN ($16d^2$): $24d^2$ in all.",
        ),
        _mistake(
            "inverted",
            "6*d/n",
            symbols,
            "That is dense over attention: the question asks the other way round.",
        ),
        _mistake(
            "no-multiply-add",
            "n/(3*d)",
            symbols,
            "Count 2 FLOPs per multiply–add on both sides; the ratio then is $\\frac{4nd}{24d^2}$.",
        ),
    ]
    example = int(pick(rng, [512, 768, 1024]))
    prompt = (
        "Per token and per layer, a Transformer spends $24d^2$ FLOPs in its dense parts (the four "
        "projections and an FFN of width $4d$) and some FLOPs on the scores $QK^\\top$ and the weighted "
        "sum $AV$ over a context of $n$ tokens (2 FLOPs per multiply–add). What is the attention part's cost "
        f"as a fraction of the dense part's? Give a formula in $n$ and $d$ (for instance $d = {example}$)."
    )
    solution = [
        r"$QK^\top$ for one query: $n$ dot products of length $d$, $2nd$ FLOPs; $AV$: another $2nd$.",
        f"Attention over dense: $\\frac{{4nd}}{{24d^2}} = {answer.tex()}$, which reaches 1 at $n = 6d$.",
    ]
    return _variant(prompt, answer, solution, mistakes, {"example_d": example}, "Count QKᵀ and AV per token.")


@generator
def stack_params_formula(rng: np.random.Generator, /) -> Variant:
    """Parameters of N encoder blocks with d_ff = 4d, as a formula in N and d: N(12d² + 13d)."""
    symbols = ["N", "d"]
    answer = checked(
        "N*(12*d^2 + 13*d)",
        symbols,
        lambda **p: numerics.stack_params(numerics.block_params_12d2(p["d"]), p["N"]),
    )
    mistakes = [
        _mistake(
            "shared-weights",
            "12*d^2 + 13*d",
            symbols,
            "That is one block: the $N$ blocks of an encoder each have their own weights.",
        ),
        _mistake(
            "layernorm-forgotten",
            "N*(12*d^2 + 9*d)",
            symbols,
            r"Each block has two LayerNorms with $\gamma$ and $\beta$: $4d$ parameters.",
        ),
        _mistake(
            "weights-only",
            "12*N*d^2",
            symbols,
            "That counts the weight matrices only; each block also holds biases and LayerNorms.",
        ),
    ]
    wording = int(rng.integers(len(STACK_DEPTH_WORDINGS)))  # only the wording of the example varies
    prompt = (
        f"An encoder stacks $N$ blocks ({STACK_DEPTH_WORDINGS[wording]}), each of width $d$ with an "
        f"FFN of "
        r"width $4d$. Counting every weight, bias and LayerNorm parameter, how many parameters does the "
        "stack hold (embeddings aside)? Give a formula in $N$ and $d$."
    )
    solution = [
        r"One block: attention $4d^2 + 4d$, FFN $8d^2 + 5d$, two LayerNorms $4d$: $12d^2 + 13d$.",
        f"$N$ independent blocks: ${answer.tex()}$.",
    ]
    return _variant(
        prompt, answer, solution, mistakes, {"wording": wording}, "One block first, then N of them."
    )


@generator
def concat_shape_symbolic(rng: np.random.Generator, /) -> Variant:
    """The shape of the concatenated heads in symbols, [B, T, d_model], where d_model = h·d_k."""
    asked = str(pick(rng, ["before", "after"]))
    answer = ShapeAnswer(
        ("B", "T", "d_model"),
        symbols=symbols(B=None, T=None, d_model=None, h=None, d_k=None),
        products=(("d_model", "h*d_k"),),
    )
    mistakes = [
        Mistake(
            "heads-not-merged",
            ("B", "h", "T", "d_k"),
            "That is the heads' outputs with the head axis still separate; concatenating them puts their "
            r"widths side by side: $h d_k = d_{\text{model}}$.",
        ),
        Mistake(
            "one-head", ("B", "T", "d_k"), r"That is one head's output; the concatenation is $h$ heads wide."
        ),
    ]
    where = "before the output projection $W^O$" if asked == "before" else "after $W^O$ maps it back"
    prompt = (
        r"Multi-head self-attention reads a batch $X$ of shape $[B, T, d_{\text{model}}]$ with $h$ heads of "
        rf"width $d_k$, where $d_{{\text{{model}}}} = h d_k$. What is the shape of the concatenated heads "
        f"{where}? Give it in symbols."
    )
    solution = [
        r"Each head's output $AV$ is $[B, T, d_k]$ (per head).",
        r"Concatenating the $h$ heads gives width $h d_k = d_{\text{model}}$: $[B, T, d_{\text{model}}]$"
        + (
            r", and $W^O$, $d_{\text{model}} \times d_{\text{model}}$, keeps it." if asked == "after" else "."
        ),
    ]
    return Variant(
        prompt=prompt, answer=answer, solution=solution, mistakes=mistakes, inputs={"asked": asked}
    )
