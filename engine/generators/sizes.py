"""Realistic sizes for the architecture, counting and cost items: widths, heads, FFN widths, T and B."""

from __future__ import annotations

import numpy as np

from attnquiz.engine.generators.common import HEADS_FOR_WIDTH, MODEL_WIDTHS, pick

# Sequence lengths a student can multiply by hand, 8…512 as in real inputs and padded batches.
LENGTHS = (8, 10, 12, 16, 20, 24, 25, 30, 32, 40, 48, 50, 64, 100, 128, 200, 256, 512)
BATCHES = (2, 3, 4, 5, 6, 8, 10, 16, 32, 64)

# Published models whose (d_model, heads) a prompt may name; only exact matches are named.
NAMED_MODELS = {
    (128, 2): "BERT-tiny",
    (256, 4): "BERT-mini",
    (384, 12): "MiniLM-L12-H384",
    (512, 8): "the original Transformer (base)",
    (768, 12): "BERT-base",
    (1024, 16): "BERT-large",
}


def width(rng: np.random.Generator, given: int | None = None) -> int:
    """d_model from the widths of real Transformers, unless given."""
    return int(given) if given is not None else int(pick(rng, MODEL_WIDTHS))


def heads_for(rng: np.random.Generator, d_model: int, given: int | None = None, *, at_least: int = 2) -> int:
    """A head count that real models use with this width (at least ``at_least``), unless given.

    A single head makes "one head" and "all heads" the same number, so items about splitting
    into heads ask for two or more.
    """
    if given is not None:
        return int(given)
    choices = [h for h in HEADS_FOR_WIDTH.get(d_model, ()) if h >= at_least]
    if not choices:
        choices = [h for h in (2, 4, 8, 16) if d_model % h == 0 and h >= at_least] or [1]
    return int(pick(rng, choices))


def ffn_width(rng: np.random.Generator, d_model: int, given: int | None = None) -> int:
    """d_ff: 4·d_model as in the original Transformer and BERT (3 times in 4), else 2d or 8d."""
    if given is not None:
        return int(given)
    return d_model * int(pick(rng, (4, 4, 4, 4, 4, 4, 2, 8)))


def length(
    rng: np.random.Generator,
    given: int | None = None,
    *,
    at_most: int = 512,
    avoid: int | tuple[int, ...] = (),
) -> int:
    """A sequence length T in 8…``at_most``, unless given; never one of ``avoid``.

    Shape questions avoid T equal to a width, where a swapped shape would look right.
    """
    if given is not None:
        return int(given)
    avoided = (avoid,) if isinstance(avoid, int) else avoid
    return int(pick(rng, [t for t in LENGTHS if t <= at_most and t not in avoided]))


def batch(rng: np.random.Generator, given: int | None = None) -> int:
    """A batch size B (at least 2, so that one sentence and the batch differ), unless given."""
    return int(given) if given is not None else int(pick(rng, BATCHES))


def model_name(d_model: int, heads: int) -> str | None:
    """The name of a published model with exactly this width and head count, if there is one."""
    return NAMED_MODELS.get((d_model, heads))
