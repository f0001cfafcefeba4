"""The decoder: cross-attention shapes, parameters of decoder layers, and which model family fits a task."""

from __future__ import annotations

import itertools
from typing import Literal

import numpy as np

from attnquiz.engine import numerics
from attnquiz.engine.answers.kinds import ChoiceAnswer, IntegerAnswer, Mistake, Option, ShapeAnswer, symbols
from attnquiz.engine.generators import sizes
from attnquiz.engine.generators.common import group, pick
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant

D_MODEL = r"d_{\text{model}}"
# Lengths of source and target sentences, as in translation batches.
SENTENCE_LENGTHS = (5, 6, 7, 8, 9, 10, 12, 14, 16, 20, 24, 30, 32, 40, 50, 64)
DECODER_LAYERS = (2, 3, 4, 6, 8, 12, 24)


def _shape(dims: tuple[numerics.Dim, ...]) -> str:
    return "[" + ", ".join(str(d) for d in dims) + "]"


@generator
def cross_attention_shape(
    rng: np.random.Generator,
    /,
    *,
    part: Literal["scores", "output"] = "scores",
    t_target: int | None = None,
    t_source: int | None = None,
    d_model: int | None = None,
    heads: int | None = None,
) -> Variant:
    """Shapes in a decoder's cross-attention: scores [T_tgt, T_src] per head, output [T_tgt, d_model]."""
    given_any = any(v is not None for v in (t_target, t_source, d_model, heads))
    while True:
        d = sizes.width(rng, d_model)
        h = sizes.heads_for(rng, d, heads)
        if t_target is not None and t_source is not None:
            t_tgt, t_src = int(t_target), int(t_source)
        else:
            t_tgt, t_src = (int(v) for v in rng.choice(SENTENCE_LENGTHS, size=2, replace=False))
        if t_tgt == t_src:
            raise ValueError(
                "the target and source lengths must differ, or the shapes cannot tell them apart"
            )
        d_k = numerics.head_dim(d, h)
        # A length equal to d_k or d_model (64 is both) would let a wrong axis give the right shape.
        if given_any or len({t_tgt, t_src, d_k, d}) == 4:
            break
    # Queries from the decoder's states, keys and values from the encoder's output.
    q = numerics.split_heads_shape(numerics.matmul_shape((t_tgt, d), (d, d)), h)
    k = numerics.split_heads_shape(numerics.matmul_shape((t_src, d), (d, d)), h)
    scores = numerics.scores_shape(q, k)
    concat = numerics.merge_heads_shape(numerics.matmul_shape(scores, k))
    output = numerics.matmul_shape(concat, (d, d))
    setup = (
        rf"An encoder–decoder Transformer has ${D_MODEL} = {d}$ and $h = {h}$ heads. The encoder has "
        rf"read a source sentence of {t_src} tokens, and the decoder is working on {t_tgt} target "
        "tokens (one sentence, no batch dimension)."
    )
    steps = [
        rf"In cross-attention the queries come from the decoder and the keys and values from the "
        rf"encoder's output: per head $Q$ is ${_shape(q[1:])}$ and $K$, $V$ are ${_shape(k[1:])}$ "
        rf"($d_k = {d}/{h} = {d_k}$).",
        rf"Scores $QK^\top$: ${_shape(q[1:])} \times {_shape((d_k, t_src))} = {_shape(scores[1:])}$, "
        "one row per target token and one column per source token.",
    ]
    if part == "scores":
        question = "What is the shape of one head's cross-attention score matrix $QK^\\top$?"
        answer = scores[1:]
        steps.append("A softmax over each row spreads a target token's attention over the source tokens.")
        mistakes = [
            Mistake(
                "swapped-axes",
                (t_src, t_tgt),
                "That has the axes swapped: rows belong to queries, which come from the decoder "
                "(target), and columns to keys, which come from the encoder (source).",
            ),
            Mistake(
                "queries-from-encoder",
                (t_src, t_src),
                "That is the encoder's own self-attention. In cross-attention only the keys and "
                "values come from the encoder; the queries come from the decoder.",
            ),
            Mistake(
                "keys-from-decoder",
                (t_tgt, t_tgt),
                "That is the decoder's (masked) self-attention. In cross-attention the keys come "
                "from the encoder's output, so there is one column per source token.",
            ),
        ]
    else:
        question = "What is the shape of the cross-attention block's output, after $W_O$?"
        answer = output
        steps += [
            rf"Each head's weighted sum of values is ${_shape(scores[1:])} \times {_shape(k[1:])} = "
            rf"{_shape((t_tgt, d_k))}$; concatenating the {h} heads gives ${_shape(concat)}$.",
            rf"$W_O$ is ${_shape((d, d))}$, so the output is ${_shape(output)}$: one vector per "
            "target token, ready for the residual addition.",
        ]
        mistakes = [
            Mistake(
                "output-follows-source",
                (t_src, d),
                "That has one row per source token. The output has one row per query, and the "
                "queries are the decoder's target tokens.",
            ),
            Mistake(
                "one-head-width",
                (t_tgt, d_k),
                "That is one head's output. The heads are concatenated and projected by $W_O$ back "
                rf"to ${D_MODEL} = {d}$.",
            ),
            Mistake(
                "scores-not-output",
                (t_tgt, t_src),
                "That is the shape of the scores; the output is the weighted sum of value vectors, "
                rf"which have width ${D_MODEL}$ after $W_O$.",
            ),
        ]
    return Variant(
        prompt=f"{setup} {question}",
        answer=ShapeAnswer(answer, symbols=symbols(d_model=d, h=h)),
        solution=steps,
        mistakes=mistakes,
        inputs={"part": part, "t_target": t_tgt, "t_source": t_src, "d_model": d, "heads": h},
        hint="Decide which side supplies the queries and which the keys and values.",
    )


def _decoder_breakdown(d: int, f: int) -> list[str]:
    mha = numerics.mha_params(d)
    ffn = numerics.ffn_params(d, f)
    norms = numerics.layer_norm_params(d, count=3)
    return [
        rf"Masked self-attention: $4d^2 + 4d = 4 \cdot {d}^2 + 4 \cdot {d} = {group(mha)}$ "
        r"($W_Q, W_K, W_V, W_O$ and their biases).",
        rf"Cross-attention has the same four projections: another ${group(mha)}$ (its $W_K$ and "
        "$W_V$ act on the encoder's output, but their sizes are the same).",
        rf"FFN: $2df + f + d = 2 \cdot {d} \cdot {f} + {f} + {d} = {group(ffn)}$.",
        rf"Three LayerNorms (one per sub-layer), $2d$ each: $6 \cdot {d} = {group(norms)}$.",
    ]


def _decoder_mistakes(d: int, f: int, layers: int) -> list[Mistake]:
    def total(per_layer: int) -> int:
        return numerics.stack_params(per_layer, layers)

    return [
        Mistake(
            "forgot-cross-attention",
            total(numerics.encoder_layer_params(d, f)),
            "That counts encoder layers. A decoder layer has a second attention block, "
            "cross-attention to the encoder's output, with its own four projections and LayerNorm.",
        ),
        Mistake(
            "forgot-w-o",
            total(numerics.decoder_layer_params(d, f, counted=numerics.Counted(w_o=False))),
            "That leaves out the output projections $W_O$ (and their biases) of the two attention "
            "blocks; each block mixes its concatenated heads with a $d \\times d$ matrix.",
        ),
        Mistake(
            "no-biases",
            total(numerics.decoder_layer_params(d, f, counted=numerics.Counted(biases=False))),
            "That counts no biases. Fully counted (as PyTorch does), every projection has one: "
            "$4d$ per attention block and $f + d$ in the FFN.",
        ),
        Mistake(
            "two-layer-norms",
            total(numerics.decoder_layer_params(d, f) - numerics.layer_norm_params(d)),
            "That counts two LayerNorms, as in an encoder layer; a decoder layer has three "
            "sub-layers, each followed by its own LayerNorm.",
        ),
        Mistake(
            "weights-only",
            total(numerics.decoder_layer_params(d, f, counted=numerics.WEIGHTS_ONLY)),
            "That counts only the weight matrices; the question counts biases and LayerNorm "
            r"parameters ($\gamma$, $\beta$) too.",
        ),
    ]


@generator
def decoder_layer_param_count(
    rng: np.random.Generator,
    /,
    *,
    d_model: int | None = None,
    d_ff: int | None = None,
) -> Variant:
    """Parameters of one decoder layer: self-attention, cross-attention, FFN and three LayerNorms."""
    d = sizes.width(rng, d_model)
    f = sizes.ffn_width(rng, d, d_ff)
    total = numerics.decoder_layer_params(d, f)
    prompt = (
        rf"How many parameters does one Transformer decoder layer have with ${D_MODEL} = {d}$ and "
        rf"$d_{{\text{{ff}}}} = {f}$? Count everything PyTorch counts: weights, biases and the "
        "LayerNorms' scale and shift (no embeddings)."
    )
    solution = [
        *_decoder_breakdown(d, f),
        rf"Total: $2 \cdot {group(numerics.mha_params(d))} + {group(numerics.ffn_params(d, f))} + "
        rf"{group(numerics.layer_norm_params(d, count=3))} = {group(total)}$.",
    ]
    return Variant(
        prompt=prompt,
        answer=IntegerAnswer(total),
        solution=solution,
        mistakes=_decoder_mistakes(d, f, 1),
        inputs={"d_model": d, "d_ff": f},
        hint="List the sub-layers of a decoder layer first; one of them is not in an encoder layer.",
    )


@generator
def decoder_stack_param_count(
    rng: np.random.Generator,
    /,
    *,
    layers: int | None = None,
    d_model: int | None = None,
    d_ff: int | None = None,
) -> Variant:
    """Parameters of a stack of N decoder layers, each with its own weights."""
    n = layers if layers is not None else int(pick(rng, DECODER_LAYERS))
    d = sizes.width(rng, d_model)
    f = sizes.ffn_width(rng, d, d_ff)
    if n < 2:
        raise ValueError(f"a stack needs at least 2 layers, not {n}")
    per_layer = numerics.decoder_layer_params(d, f)
    total = numerics.stack_params(per_layer, n)
    prompt = (
        rf"A Transformer decoder stacks {n} layers with ${D_MODEL} = {d}$ and $d_{{\text{{ff}}}} = {f}$. "
        "How many parameters do the layers hold together? Count weights, biases and LayerNorm "
        "parameters (no embeddings and no output projection to the vocabulary)."
    )
    solution = [
        *_decoder_breakdown(d, f),
        rf"One layer: ${group(per_layer)}$.",
        rf"The {n} layers share the architecture but each learns its own weights: "
        rf"${n} \times {group(per_layer)} = {group(total)}$.",
    ]
    mistakes = [
        Mistake(
            "shared-layer-weights",
            numerics.stack_params(per_layer, n, shared=True),
            "That is one layer. Identical layers share their architecture, not their weights: "
            "each of the N layers has its own parameters.",
        ),
        *_decoder_mistakes(d, f, n),
    ]
    return Variant(
        prompt=prompt,
        answer=IntegerAnswer(total),
        solution=solution,
        mistakes=mistakes,
        inputs={"layers": n, "d_model": d, "d_ff": f},
        hint="Count one decoder layer (three sub-layers), then think about what the layers share.",
    )


FamilyName = Literal["encoder", "decoder", "encoder-decoder"]
FAMILIES: dict[FamilyName, str] = {
    "encoder": "encoder-only (BERT-style)",
    "decoder": "decoder-only (GPT-style)",
    "encoder-decoder": "encoder–decoder (T5-style)",
}
FAMILY_ORDER: tuple[FamilyName, ...] = ("encoder", "decoder", "encoder-decoder")
WHY: dict[FamilyName, str] = {
    "encoder": "it reads the whole text and produces a representation: an understanding task",
    "decoder": "it generates text token by token from the left context",
    "encoder-decoder": "it reads one sequence and writes another",
}
# Tasks whose best fit the notes' rule decides: understand → encoder, continue → decoder,
# read one sequence and write another → encoder–decoder.
TASKS: dict[FamilyName, tuple[str, ...]] = {
    "encoder": (
        "classify customer reviews as positive or negative",
        "tag each word of a sentence with its part of speech",
        "find the names of people and places in a news article",
        "decide whether two sentences mean the same thing",
        "flag e-mails as spam or not spam",
    ),
    "decoder": (
        "write the next sentence of a story",
        "complete a line of code as a programmer types",
        "continue a chat reply word by word",
        "write a poem from its first line",
    ),
    "encoder-decoder": (
        "translate English to French",
        "summarise a long report into a short abstract",
        "translate a German question into English",
        "turn a paragraph into a one-line headline",
    ),
}


@generator
def family_for_task(
    rng: np.random.Generator,
    /,
    *,
    tasks: list[str] | None = None,
    families: list[FamilyName] | None = None,
    options: int = 4,
) -> Variant:
    """Match three tasks to encoder-only, decoder-only and encoder–decoder models (one choice)."""
    if (tasks is None) != (families is None):
        raise ValueError("give tasks and their families together")
    if tasks is not None and families is not None:
        if len(tasks) != 3 or sorted(families) != sorted(FAMILY_ORDER):
            raise ValueError("give three tasks, one for each family")
        task_list, right = list(tasks), list(families)
    else:
        right = [FAMILY_ORDER[i] for i in rng.permutation(3)]
        task_list = [str(pick(rng, TASKS[f])) for f in right]
    if not 2 <= options <= 6:
        raise ValueError(f"options must be 2 to 6, not {options}")
    wrong = [list(p) for p in itertools.permutations(FAMILY_ORDER) if list(p) != right]
    chosen = [wrong[i] for i in rng.choice(len(wrong), size=options - 1, replace=False)]
    pairings = [right, *chosen]
    order = rng.permutation(len(pairings))
    labels = "abc"

    def text(pairing: list[FamilyName]) -> str:
        return "; ".join(f"({labels[j]}) {FAMILIES[f]}" for j, f in enumerate(pairing))

    def why(pairing: list[FamilyName]) -> str:
        slips = [
            f"({labels[j]}) needs {FAMILIES[r]}, because {WHY[r]}"
            for j, (f, r) in enumerate(zip(pairing, right, strict=True))
            if f != r
        ]
        return "; ".join(slips) + "."

    shown = [pairings[i] for i in order]
    answer = ChoiceAnswer(
        tuple(Option(text(p), p == right, "" if p == right else why(p)) for p in shown),
        multiple=False,
    )
    task_text = ", ".join(f"({labels[j]}) {t}" for j, t in enumerate(task_list))
    prompt = (
        "Choose encoder-only (BERT), decoder-only (GPT) or encoder–decoder (T5) for each task: "
        f"{task_text}. Which matching is right?"
    )
    solution = [
        "Encoder-only models read the whole text and produce a representation: good for understanding tasks.",
        "Decoder-only models predict the next token from the left context: good for generating text.",
        "Encoder–decoder models read one sequence and write another.",
        "So "
        + "; ".join(f"({labels[j]}) {FAMILIES[f]}" for j, f in enumerate(right))
        + ": option "
        + ", ".join(sorted(answer.correct_letters))
        + ".",
    ]
    return Variant(
        prompt=prompt,
        answer=answer,
        solution=solution,
        inputs={"tasks": task_list, "families": right, "shown": [[str(f) for f in p] for p in shown]},
        hint="Ask of each task: does it only read, continue a text, or read one text and write another?",
    )
