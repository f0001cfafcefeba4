"""The parameters of a whole encoder–decoder Transformer in millions, and the gap to a paper's count.

The count says what it includes (weight matrices only, or biases and LayerNorms too), and its slips
are the ones the notes warn about: three embedding tables or none, one layer's weights shared by all,
no cross-attention, biases counted the other way.
"""

from __future__ import annotations

import numpy as np

from attnquiz.engine import numerics
from attnquiz.engine.answers.kinds import Mistake, NumericAnswer, Part, PartsAnswer
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.generators.common import group, keeps_all, pick
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant

ONE_PLACE = Tolerance.decimals(1)
TWO_PLACES = Tolerance.decimals(2)


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
