"""Additive (Bahdanau) attention: scores, weights and the context vector."""

from __future__ import annotations

import numpy as np

from engine import numerics
from engine.answers import Mistake, NumericAnswer
from engine.generators.common import TWO_PLACES, num, small_ints, tex_vector
from engine.registry import generator
from engine.variant import Variant


@generator
def additive_score(
    rng: np.random.Generator,
    /,
    *,
    dim: int = 2,
    h: list[float] | None = None,
    s_proj: list[float] | None = None,
    v: list[float] | None = None,
) -> Variant:
    """Score one encoder state with additive (Bahdanau) attention, e = v_aᵀ tanh(W_a s + U_a h)."""
    if not 1 <= dim <= 4:
        raise ValueError(f"dim must be 1 to 4, not {dim}")
    h_vec = np.asarray(h, dtype=float) if h is not None else small_ints(rng, dim, 0, 1).astype(float)
    s_vec = np.asarray(s_proj, dtype=float) if s_proj is not None else small_ints(rng, dim, -1, 2).astype(float)
    v_vec = np.asarray(v, dtype=float) if v is not None else small_ints(rng, dim, -1, 2).astype(float)
    if v is None and not v_vec.any():
        v_vec[int(rng.integers(dim))] = 1.0
    inside = s_vec + h_vec
    score = numerics.additive_score(v_vec, s_vec, h_vec)
    tanh = np.tanh(inside)
    terms = " + ".join(
        rf"({num(a)})\tanh({num(x)})" for a, x in zip(v_vec, inside, strict=True)
    )
    prompt = (
        "An encoder–decoder uses additive (Bahdanau) attention, "
        r"$e_{ti} = v_a^\top \tanh(W_a s_{t-1} + U_a h_i)$. "
        rf"Take $U_a = I$, the encoder state $h_1 = {tex_vector(h_vec)}$, the projected decoder "
        rf"state $W_a s_{{t-1}} = {tex_vector(s_vec)}$ and $v_a = {tex_vector(v_vec)}$. "
        r"Compute the score $e_{t1}$."
    )
    solution = [
        rf"Add the projections: $W_a s_{{t-1}} + U_a h_1 = {tex_vector(s_vec)} + {tex_vector(h_vec)} = {tex_vector(inside)}$.",
        rf"Apply $\tanh$ to each entry: $\tanh({tex_vector(inside)}) \approx {tex_vector(tanh, 4)}$.",
        rf"Dot with $v_a$: $e_{{t1}} = {terms} \approx {num(score, 4)}$, so $e_{{t1}} \approx {num(score, 2)}$.",
    ]
    mistakes = [
        Mistake(
            "no-tanh",
            float(np.dot(v_vec, inside)),
            r"That is $v_a^\top (W_a s_{t-1} + U_a h_1)$ without the $\tanh$: the nonlinearity "
            "is applied to the sum before the dot product with $v_a$.",
        ),
        Mistake(
            "tanh-after-dot",
            float(np.tanh(np.dot(v_vec, inside))),
            r"That applies $\tanh$ after the dot product; the score is $v_a^\top \tanh(\cdot)$, "
            r"so $\tanh$ acts on each entry of the sum first.",
        ),
    ]
    return Variant(
        prompt=prompt,
        answer=NumericAnswer(score, TWO_PLACES),
        solution=solution,
        mistakes=mistakes,
        inputs={"h": h_vec, "s_proj": s_vec, "v": v_vec},
        hint=r"Add the two projected vectors, take $\tanh$ of each entry, then dot with $v_a$.",
    )
