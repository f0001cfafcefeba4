"""The built-in generators, one module per topic; importing this package registers them all."""

from engine.generators import (
    additive,
    attention,
    cost,
    counts,
    decoder,
    dot_product,
    encoder,
    flops,
    heads,
    masks,
    normalisation,
    positions,
    rnn,
    scaling,
    statements,
    tokens,
)

__all__ = [
    "additive",
    "attention",
    "cost",
    "counts",
    "decoder",
    "dot_product",
    "encoder",
    "flops",
    "heads",
    "masks",
    "normalisation",
    "positions",
    "rnn",
    "scaling",
    "statements",
    "tokens",
]
