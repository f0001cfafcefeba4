"""Sinusoidal positional encoding: values at a position, the denominator of a pair, relative offsets."""

from __future__ import annotations

import math

import numpy as np

from attnquiz.engine import numerics
from attnquiz.engine.answers.kinds import Mistake, NumericAnswer, VectorAnswer
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.answers.values import Vector
from attnquiz.engine.figures import LinePlot, Series
from attnquiz.engine.generators.common import THREE_PLACES, keeps_all, num, pick, tex_vector, vec
from attnquiz.engine.generators.plots import pe_curves
from attnquiz.engine.generators.week2_common import equals, short, tex_row
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant

PE_FORMULA = (
    r"$\operatorname{PE}(pos, 2i) = \sin(pos / 10000^{2i/d})$ and "
    r"$\operatorname{PE}(pos, 2i+1) = \cos(pos / 10000^{2i/d})$"
)
# Widths of real models, plus the notes' toy width 4.
PE_WIDTHS = (4, 8, 16, 64, 128, 256, 512, 768, 1024)


def swapped_feedback() -> str:
    """Feedback for sine and cosine swapped."""
    return (
        r"That has sine and cosine swapped: the even dimension $2i$ holds the sine and the odd "
        r"dimension $2i+1$ the cosine of the same angle (position 0 is $[0, 1, 0, 1, \ldots]$)."
    )


def exponent_feedback(d: int, i: int = 1) -> str:
    """Feedback for the exponent i/d instead of 2i/d, with pair ``i``'s numbers."""
    right = numerics.pair_denominator(i, d)
    wrong = numerics.pair_denominator(i, d, pair_step=1)
    return (
        rf"That uses the exponent $i/d$; the formula's exponent is $2i/d$, so pair ${i}$ divides the "
        rf"position by $10000^{{{2 * i}/{d}}} = {short(right)}$, not $10000^{{{i}/{d}}} = {short(wrong)}$."
    )


def dimension_feedback() -> str:
    """Feedback for putting the dimension index where the pair index belongs."""
    return (
        r"That puts the dimension number where the pair number $i$ belongs: dimensions $2i$ and "
        r"$2i+1$ form pair $i$ and share the exponent $2i/d$, not $2 \cdot 2i/d$."
    )


DEGREES_FEEDBACK = (
    "That takes the sine and cosine in degrees; the angles are in radians (set the calculator to RAD)."
)


def _pe_dot(a: int, b: int) -> str:
    """TeX for PE(a)·PE(b)."""
    return rf"\operatorname{{PE}}({a}) \cdot \operatorname{{PE}}({b})"


def _check_width(d: int) -> None:
    if d < 2 or d % 2:
        raise ValueError(f"d_model must be even and at least 2, not {d}")


def _denominator_steps(d: int, pairs: list[int]) -> str:
    parts = [
        rf"$i = {i}$: $10000^{{2 \cdot {i}/{d}}} = {short(numerics.pair_denominator(i, d))}$" for i in pairs
    ]
    return "; ".join(parts)


@generator
def pe_vector(
    rng: np.random.Generator,
    /,
    *,
    d_model: int | None = None,
    position: int | None = None,
) -> Variant:
    """All d_model values of the sinusoidal positional encoding of one position."""
    d = d_model if d_model is not None else int(pick(rng, (4, 6, 8)))
    pos = position if position is not None else int(rng.integers(1, 10))
    _check_width(d)
    if d > 8 or pos < 0:
        raise ValueError(f"a hand-sized encoding needs d_model <= 8 and position >= 0 (got {d}, {pos})")
    pe = numerics.sinusoidal_encoding(pos, d)
    pairs = list(range(d // 2))
    angles = [pos / numerics.pair_denominator(i, d) for i in pairs]
    prompt = (
        rf"A Transformer with $d_{{\text{{model}}}} = {d}$ adds sinusoidal positional encodings, "
        rf"{PE_FORMULA}, with angles in radians. Compute the encoding of position ${pos}$ "
        rf"(all {d} values, dimension 0 first)."
    )
    solution = [
        rf"Pair $i$ (dimensions $2i$ and $2i+1$) divides the position by $10000^{{2i/{d}}}$: "
        + _denominator_steps(d, pairs)
        + ".",
        rf"The angles for position ${pos}$ are ${tex_row(angles, None)}$.",
        r"Sine in each even dimension, cosine in each odd one: "
        rf"$\operatorname{{PE}}({pos}) \approx {tex_vector(pe, 4)} \approx {tex_vector(pe, 3)}$.",
    ]
    mistakes = [
        Mistake(
            "sin-cos-swapped", vec(numerics.sinusoidal_encoding(pos, d, sin_first=False)), swapped_feedback()
        ),
        Mistake(
            "exponent-i-over-d", vec(numerics.sinusoidal_encoding(pos, d, pair_step=1)), exponent_feedback(d)
        ),
        Mistake(
            "degrees-not-radians", vec(numerics.sinusoidal_encoding(np.deg2rad(pos), d)), DEGREES_FEEDBACK
        ),
    ]
    return Variant(
        prompt=prompt,
        answer=VectorAnswer(vec(pe), THREE_PLACES),
        solution=solution,
        mistakes=mistakes,
        inputs={"d_model": d, "position": pos},
        hint=r"Work pair by pair: the denominator $10000^{2i/d}$, then the angle, then sine and cosine.",
        figures=[
            pe_curves(
                d,
                range(min(d, 4)),
                max(12, pos + 4),
                title=rf"Sinusoidal encoding, $d_{{\text{{model}}}} = {d}$"
                + (", dimensions 0 to 3" if d > 4 else ""),
                caption=f"Read each curve at position {pos}: those are the answer's values.",
            )
        ],
    )


def _pair(position: float, d: int, i: int, *, pair_step: int = 2, sin_first: bool = True) -> Vector:
    """Dimensions 2i and 2i+1 of the encoding (computed in full, then sliced)."""
    pe = numerics.sinusoidal_encoding(position, d, pair_step=pair_step, sin_first=sin_first)
    return vec(pe[2 * i : 2 * i + 2])


def _round_pairs(d: int, eighths: int) -> list[int]:
    """Pairs i whose exponent 2i/d is a whole number of eighths, so denominators stay hand-sized."""
    return [i for i in range(d // 2) if (eighths * i) % d == 0]


@generator
def pe_pair(
    rng: np.random.Generator,
    /,
    *,
    d_model: int | None = None,
    position: int | None = None,
    pair: int | None = None,
) -> Variant:
    """The two values (sine and cosine) of one pair of the positional encoding at one position."""
    given_any = d_model is not None or position is not None or pair is not None
    while True:
        d = d_model if d_model is not None else int(pick(rng, PE_WIDTHS))
        _check_width(d)
        # Exponents 0, 1/4, 1/2, 3/4 give denominators 1, 10, 100, 1000: friendly by hand.
        i = pair if pair is not None else int(pick(rng, _round_pairs(d, 8)))
        pos = position if position is not None else int(rng.integers(1, 101))
        if not 0 <= i < d // 2 or pos < 0:
            raise ValueError(f"pair {i} of d_model={d} at position {pos} does not exist")
        mistakes = [Mistake("sin-cos-swapped", _pair(pos, d, i, sin_first=False), swapped_feedback())]
        if i > 0:  # pair 0 has exponent 0 whatever the formula's factor, so these slips change nothing
            mistakes += [
                Mistake("exponent-i-over-d", _pair(pos, d, i, pair_step=1), exponent_feedback(d, i)),
                Mistake("dimension-index-as-i", _pair(pos, d, i, pair_step=4), dimension_feedback()),
            ]
        mistakes.append(Mistake("degrees-not-radians", _pair(np.deg2rad(pos), d, i), DEGREES_FEEDBACK))
        answer = VectorAnswer(vec(_pair(pos, d, i)), THREE_PLACES)
        if given_any or keeps_all(answer, mistakes):
            break
    values = _pair(pos, d, i)
    den = numerics.pair_denominator(i, d)
    angle = pos / den
    first = ", the first two values" if i == 0 else ""
    prompt = (
        rf"A Transformer with $d_{{\text{{model}}}} = {d}$ uses sinusoidal positional encodings, "
        rf"{PE_FORMULA}, with angles in radians. What are the two values in dimensions "
        rf"${2 * i}$ and ${2 * i + 1}$ (pair $i = {i}${first}) of the encoding of position ${pos}$?"
    )
    solution = [
        rf"Pair $i = {i}$ divides the position by $10000^{{2 \cdot {i}/{d}}} = {short(den)}$, "
        rf"so the angle is ${pos}/{short(den)} {equals(angle)}$ radians.",
        rf"Dimension ${2 * i}$ is $\sin({short(angle)}) \approx {num(values[0], 4)}$ and dimension "
        rf"${2 * i + 1}$ is $\cos({short(angle)}) \approx {num(values[1], 4)}$.",
        rf"So the pair is {tex_vector(values, 3)}.",
    ]
    return Variant(
        prompt=prompt,
        answer=answer,
        solution=solution,
        mistakes=mistakes,
        inputs={"d_model": d, "position": pos, "pair": i},
        hint=r"Find this pair's denominator $10000^{2i/d}$ first; the angle is the position divided by it.",
        figures=[
            pe_curves(
                d,
                [2 * i, 2 * i + 1],
                pos + max(4, pos // 4),
                per_position=_points_per_position(den, pos + max(4, pos // 4)),
                title=rf"Pair $i = {i}$ of the encoding, $d_{{\text{{model}}}} = {d}$",
                caption=f"Both curves turn by 1/{short(den)} radian per position; "
                f"read them at position {pos}.",
            )
        ],
    )


@generator
def pe_denominator(
    rng: np.random.Generator,
    /,
    *,
    d_model: int | None = None,
    pair: int | None = None,
) -> Variant:
    """The number that divides the position in one pair of the sinusoidal encoding (its slowness)."""
    d = d_model if d_model is not None else int(pick(rng, PE_WIDTHS))
    _check_width(d)
    # Exponents in eighths give 10^(k/2): 3.162, 10, 31.62, ... (a calculator's square root at most).
    i = pair if pair is not None else int(pick(rng, [p for p in _round_pairs(d, 16) if p > 0]))
    if not 0 <= i < d // 2:
        raise ValueError(f"pair {i} does not exist for d_model={d}")
    den = numerics.pair_denominator(i, d)
    exponent = 2 * i / d
    prompt = (
        rf"A Transformer with $d_{{\text{{model}}}} = {d}$ uses sinusoidal positional encodings, "
        rf"{PE_FORMULA}. By what number is the position divided in dimensions ${2 * i}$ and "
        rf"${2 * i + 1}$ (pair $i = {i}$)?"
    )
    solution = [
        rf"Dimensions ${2 * i}$ and ${2 * i + 1}$ form pair $i = {i}$, so the exponent is "
        rf"$2i/d = {2 * i}/{d} = {short(exponent)}$.",
        rf"The denominator is $10000^{{{short(exponent)}}} = {short(den)}$: the angle grows by "
        rf"$1/{short(den)}$ radian per position, a wavelength of $2\pi \cdot {short(den)} \approx "
        rf"{short(2 * np.pi * den)}$ positions.",
        "Low pairs turn fast and tell neighbouring positions apart; high pairs turn slowly and "
        "tell far-apart positions apart.",
    ]
    mistakes = [
        Mistake("exponent-i-over-d", numerics.pair_denominator(i, d, pair_step=1), exponent_feedback(d, i)),
        Mistake("dimension-index-as-i", numerics.pair_denominator(i, d, pair_step=4), dimension_feedback()),
        Mistake(
            "frequency-not-denominator",
            numerics.pair_frequency(i, d),
            r"That is the frequency $1/10000^{2i/d}$ (radians per position); the position is "
            r"divided by $10000^{2i/d}$ itself.",
        ),
    ]
    return Variant(
        prompt=prompt,
        answer=NumericAnswer(den, Tolerance.sigfigs(3)),
        solution=solution,
        mistakes=mistakes,
        inputs={"d_model": d, "pair": i},
        hint="Turn the dimension numbers into the pair number i first.",
    )


@generator
def pe_similarity(
    rng: np.random.Generator,
    /,
    *,
    d_model: int | None = None,
    starts: list[int] | None = None,
    offset: int | None = None,
) -> Variant:
    """Dot products PE(p)·PE(p+k) at two starting positions: equal, because they depend only on k."""
    d = d_model if d_model is not None else int(pick(rng, (4, 6)))
    _check_width(d)
    if starts is not None:
        p, q = (int(s) for s in starts)
    else:
        p, q = (int(s) for s in rng.choice(np.arange(0, 30), size=2, replace=False))
    k = offset if offset is not None else int(rng.integers(1, 6))
    if d > 8 or p == q or k < 1 or min(p, q) < 0:
        raise ValueError(
            f"need d_model <= 8, two different positions >= 0 and an offset >= 1 (got {d}, {p}, {q}, {k})"
        )
    sims = [numerics.position_similarity(s, s + k, d) for s in (p, q)]
    pairs = list(range(d // 2))
    terms = " + ".join(rf"\cos({k}/{short(numerics.pair_denominator(i, d))})" for i in pairs)
    cosines = [float(np.cos(k / numerics.pair_denominator(i, d))) for i in pairs]
    prompt = (
        rf"With $d_{{\text{{model}}}} = {d}$ and sinusoidal positional encodings, {PE_FORMULA} "
        rf"(radians), compute the two dot products ${_pe_dot(p, p + k)}$ and ${_pe_dot(q, q + k)}$. "
        "Give them as a vector in that order."
    )
    solution = [
        rf"Each pair contributes $\sin a \sin b + \cos a \cos b = \cos(a - b)$, and the two angles "
        rf"of pair $i$ differ by the offset ${k}$ divided by $10000^{{2i/{d}}}$.",
        rf"So both dot products equal ${terms} \approx "
        + " + ".join(num(c, 4) for c in cosines)
        + rf" \approx {num(sims[0], 4)}$.",
        rf"Directly: ${_pe_dot(p, p + k)} \approx {num(sims[0], 4)}$ and "
        rf"${_pe_dot(q, q + k)} \approx {num(sims[1], 4)}$: the same number, "
        "because the similarity of two positions depends only on how far apart they are.",
    ]
    mistakes = [
        Mistake(
            "exponent-i-over-d",
            vec([numerics.position_similarity(s, s + k, d, pair_step=1) for s in (p, q)]),
            exponent_feedback(d),
        ),
        Mistake(
            "degrees-not-radians",
            vec([numerics.position_similarity(np.deg2rad(s), np.deg2rad(s + k), d) for s in (p, q)]),
            DEGREES_FEEDBACK,
        ),
    ]
    return Variant(
        prompt=prompt,
        answer=VectorAnswer(vec(sims), THREE_PLACES),
        solution=solution,
        mistakes=mistakes,
        inputs={"d_model": d, "starts": [p, q], "offset": k},
        hint=r"Pair the terms: $\sin a \sin b + \cos a \cos b$ is a single cosine.",
        figures=[_similarity_plot(d, p, q, k)],
    )


def _points_per_position(denominator: float, end: int) -> int:
    """Points per position for a pair's curves: about 24 per turn of its sine, at most 400 in all."""
    wanted = math.ceil(24 / (2 * math.pi * denominator))
    return max(1, min(wanted, 399 // end, 10))


def _similarity_plot(d: int, p: int, q: int, k: int) -> LinePlot:
    """PE(s)·PE(s + offset) over offsets 0 to k + 8, from start p and from start q: one curve twice."""
    per = max(1, min(10, 399 // (k + 8)))  # every whole offset is a point of the curves
    offsets = np.arange((k + 8) * per + 1) / per
    curves = [
        Series(rf"$PE({s}) \cdot PE({s} + x)$", [numerics.position_similarity(s, s + x, d) for x in offsets])
        for s in (p, q)
    ]
    return LinePlot(
        x=offsets.tolist(),
        series=curves,
        title=rf"Similarity of two positions, $d_{{\text{{model}}}} = {d}$",
        caption=f"The two curves lie on each other: the dot product depends only on the offset; at {k} "
        "it is the answer.",
        x_label="offset $x$",
        y_label="dot product",
    )
