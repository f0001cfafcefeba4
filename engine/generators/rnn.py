"""Vanishing gradients in an RNN: a per-step shrink factor compounds geometrically over the time steps."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from attnquiz.engine import numerics
from attnquiz.engine.answers.kinds import IntegerAnswer, Mistake, NumericAnswer
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.generators.common import num, pick
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant

TWO_SIGFIGS = Tolerance.sigfigs(2)
FACTORS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
STEPS = (5, 10, 20, 30, 50, 100)
THRESHOLDS = (0.1, 0.01, 0.001, 1e-6)
# Below this a decayed gradient is indistinguishable from zero in float32 training anyway.
SMALLEST = 1e-12


def tex_number(value: float, sigfigs: int = 2) -> str:
    """A positive number for TeX: plain decimals from 0.001 up, else a × 10^{e}, to ``sigfigs`` figures."""
    if value == 0:
        return "0"
    exponent = math.floor(math.log10(abs(value)))
    if exponent >= -3:
        return TWO_SIGFIGS.format(value) if sigfigs == 2 else Tolerance.sigfigs(sigfigs).format(value)
    mantissa = value / 10.0**exponent
    text = f"{mantissa:.{sigfigs - 1}f}"
    if float(text) >= 10:  # rounding carried into the next power of ten
        exponent += 1
        text = f"{mantissa / 10:.{sigfigs - 1}f}"
    return rf"{text} \times 10^{{{exponent}}}"


def _plain(value: float) -> str:
    """A per-step factor as a prompt writes it (0.67, 0.9), without padding zeros."""
    return f"{value:g}"


def _setup(gamma: float) -> str:
    return (
        "In a plain RNN, backpropagating through one time step multiplies the size of the gradient by the "
        rf"norm of the step's Jacobian, here about $\gamma = {_plain(gamma)}${_weights_remark(gamma)}."
    )


def _weights_remark(gamma: float) -> str:
    """What the factor says about the recurrent weights, in the prompt's words, or nothing in between.

    Only a clearly small factor comes from small recurrent weights; one near 1 comes from weights
    just below the size that would keep the gradient steady.
    """
    if gamma <= 0.7:
        return " (small recurrent weights)"
    if gamma >= 0.9:
        return " (recurrent weights just below the size that would keep it steady)"
    return ""


@generator
def rnn_gradient_decay(
    rng: np.random.Generator,
    /,
    *,
    per_step: float | None = None,
    steps: int | None = None,
) -> Variant:
    """How much of a gradient survives k steps back through an RNN that shrinks it by γ per step: γᵏ."""
    if per_step is not None and steps is not None:
        gamma, k = float(per_step), int(steps)
    else:
        combos = [
            (g, s)
            for g in FACTORS
            for s in STEPS
            if numerics.rnn_gradient_factor(g, s) >= SMALLEST
            and (per_step is None or g == per_step)
            and (steps is None or s == steps)
        ]
        gamma, k = pick(rng, combos)
    if not 0 < gamma < 1 or k < 1:
        raise ValueError(f"need 0 < per_step < 1 and steps >= 1, not {gamma} and {k}")
    value = numerics.rnn_gradient_factor(gamma, k)
    prompt = (
        f"{_setup(gamma)} The gradient reaching the last time step has size 1. About how large is it "
        f"$k = {k}$ steps earlier?"
    )
    log_value = k * math.log(gamma)
    solution = [
        r"Each step back multiplies by $\gamma$, so after $k$ steps the factors compound: $\gamma^k$.",
        rf"With logarithms: $\ln \gamma^{{{k}}} = {k} \cdot \ln {_plain(gamma)} = {k} \cdot "
        rf"({num(math.log(gamma), 4)}) = {num(log_value, 3)}$.",
        rf"So $\gamma^{{{k}}} = {_plain(gamma)}^{{{k}}} = \exp({num(log_value, 3)}) "
        rf"\approx {tex_number(value)}$.",
        "The signal from early words fades geometrically: this is the vanishing gradient that makes long-"
        "range dependencies hard for RNNs, and that attention avoids with a one-step path.",
    ]
    mistakes = [
        Mistake(
            "multiplied-not-powered",
            gamma * k,
            r"That multiplies $\gamma$ by the number of steps. The factor applies once per step, so it "
            r"compounds: $\gamma \cdot \gamma \cdots \gamma = \gamma^k$.",
        ),
        Mistake(
            "off-by-one",
            numerics.rnn_gradient_factor(gamma, k - 1),
            rf"That is $\gamma^{{{k - 1}}}$. Going back $k$ steps crosses $k$ Jacobians, so the factor is "
            rf"$\gamma^{{{k}}}$.",
        ),
    ]
    # In exact fractions: 1 - 5·(1 - 0.8) is 0, which floats make 2.2e-16 (and a typed 0 unnamed).
    linear = 1 - k * (1 - Fraction(str(gamma)))
    if linear >= 0:
        mistakes.append(
            Mistake(
                "linear-decay",
                float(linear),
                r"That subtracts the same amount $1 - \gamma$ at every step. The gradient is multiplied by "
                r"$\gamma$ at each step, so it decays geometrically, not linearly.",
            )
        )
    return Variant(
        prompt=prompt,
        answer=NumericAnswer(value, TWO_SIGFIGS),
        solution=solution,
        mistakes=mistakes,
        inputs={"per_step": gamma, "steps": k},
        hint=r"What happens to a number that is multiplied by $\gamma$ again and again?",
    )


@generator
def rnn_decay_steps(
    rng: np.random.Generator,
    /,
    *,
    per_step: float | None = None,
    threshold: float | None = None,
) -> Variant:
    """The fewest steps back through an RNN after which the gradient γᵏ falls below a threshold."""
    gamma = float(per_step) if per_step is not None else float(pick(rng, (*FACTORS, 0.99)))
    limit = float(threshold) if threshold is not None else float(pick(rng, THRESHOLDS))
    k = numerics.steps_to_fall_below(gamma, limit)
    ratio = math.log(limit) / math.log(gamma)
    prompt = (
        f"{_setup(gamma)} The gradient reaching the last time step has size 1. After how many steps back "
        rf"is its size first below ${tex_number(limit, 1)}$?"
    )
    solution = [
        rf"After $k$ steps the size is $\gamma^k$; we need the smallest $k$ with "
        rf"${_plain(gamma)}^k < {tex_number(limit, 1)}$.",
        rf"Take logarithms (both are negative, so the inequality flips): "
        rf"$k > \ln({tex_number(limit, 1)}) / \ln {_plain(gamma)} = {num(math.log(limit), 3)} / "
        rf"{num(math.log(gamma), 4)} \approx {num(ratio, 2)}$.",
        rf"So $k = {k}$: ${_plain(gamma)}^{{{k - 1}}} \approx {tex_number(gamma ** (k - 1), 3)}$ is not "
        "yet below, "
        rf"${_plain(gamma)}^{{{k}}} \approx {tex_number(gamma**k, 3)}$ is.",
    ]
    # Losing 1 - γ per step, the size after k steps is 1 - k(1 - γ); the first k below the limit,
    # in exact fractions so that a boundary case such as 0.7 and 0.1 (exactly 0.1 after 3 steps) is right.
    linear_steps = math.floor((1 - Fraction(str(limit))) / (1 - Fraction(str(gamma)))) + 1
    mistakes = [
        Mistake(
            "off-by-one",
            k - 1,
            rf"After {k - 1} steps the size is ${tex_number(gamma ** (k - 1), 3)}$, not yet below the "
            "threshold: round the logarithm ratio up to the next whole step.",
        ),
        Mistake(
            "linear-decay",
            linear_steps,
            r"That subtracts $1 - \gamma$ at every step. The gradient is multiplied by $\gamma$ at each "
            "step, so it decays geometrically and needs logarithms.",
        ),
    ]
    return Variant(
        prompt=prompt,
        answer=IntegerAnswer(k),
        solution=solution,
        mistakes=mistakes,
        inputs={"per_step": gamma, "threshold": limit},
        hint=r"Solve $\gamma^k < $ threshold with logarithms, then round to a whole number of steps.",
    )
