"""LayerNorm and residual connections: normalising a vector, ε, γ and β, x + f(x), and gradient slopes."""

from __future__ import annotations

import numpy as np

from attnquiz.engine import numerics
from attnquiz.engine.answers.kinds import Mistake, VectorAnswer
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.generators.common import THREE_PLACES, TWO_PLACES, keeps_all, pick, vec
from attnquiz.engine.generators.week2_common import equals, fixed, sci, short, signed_sum, tex_row
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant

EPS = 1e-5
SAMPLE_STD = (
    r"That divides by the sample standard deviation (dividing the squared gaps by $n-1$). "
    r"LayerNorm uses the population variance: the mean of the squared gaps, dividing by $n$."
)
NO_CENTRE = (
    "That divides x itself by the standard deviation without subtracting the mean first; "
    "LayerNorm centres each vector before scaling it."
)


def _stats_steps(x: np.ndarray) -> list[str]:
    mean = float(x.mean())
    gaps = x - mean
    var = float(x.var())
    return [
        rf"Mean $= {short(float(x.sum()))}/{x.size} {equals(mean)}$.",
        rf"Gaps from the mean: ${tex_row(gaps, None)}$; squared: ${tex_row(gaps**2, None)}$; variance "
        rf"$= {short(float((gaps**2).sum()), 6)}/{x.size} {equals(var)}$ (divide by $n$), standard "
        rf"deviation $\sqrt{{{short(var)} + \varepsilon}} \approx {fixed(float(np.sqrt(var + EPS)), 4)}$.",
    ]


def _draw_vector(rng: np.random.Generator) -> np.ndarray:
    size = int(pick(rng, (3, 4, 4, 5)))
    while True:
        x = rng.integers(-3, 10, size=size).astype(float)
        if np.ptp(x) > 0:
            return x


@generator
def layernorm_vector(rng: np.random.Generator, /, *, x: list[float] | None = None) -> Variant:
    """Layer-normalise one token's vector (without the learned scale and shift)."""
    while True:
        arr = np.asarray(x, dtype=float) if x is not None else _draw_vector(rng)
        if arr.ndim != 1 or arr.size < 2 or np.ptp(arr) == 0:
            raise ValueError("x must be a vector of at least 2 entries that are not all equal")
        y = numerics.normalise(arr, eps=EPS)
        answer = VectorAnswer(vec(y), THREE_PLACES)
        mistakes = [
            Mistake("sample-std", vec(numerics.normalise(arr, eps=EPS, ddof=1)), SAMPLE_STD),
            Mistake("no-mean-subtraction", vec(numerics.normalise(arr, eps=EPS, centre=False)), NO_CENTRE),
        ]
        # A vector whose mean is already 0 would make skipping the centring harmless: redraw.
        if x is not None or keeps_all(answer, mistakes):
            break
    prompt = (
        rf"Layer-normalise the vector $x = {tex_row(arr, 3)}$, ignoring the learned scale and shift "
        r"($\gamma = 1$, $\beta = 0$) and taking $\varepsilon = 10^{-5}$."
    )
    solution = [
        *_stats_steps(arr),
        rf"Divide each gap by it: $y \approx {tex_row(y, 3)}$, which has mean 0 and variance 1.",
    ]
    return Variant(
        prompt=prompt,
        answer=answer,
        solution=solution,
        mistakes=mistakes,
        inputs={"x": arr},
        hint="Subtract the mean, then divide by the square root of the mean squared gap.",
    )


@generator
def layernorm_constant(
    rng: np.random.Generator,
    /,
    *,
    value: float | None = None,
    size: int | None = None,
    affine: bool | None = None,
    gamma: list[float] | None = None,
    beta: list[float] | None = None,
) -> Variant:
    """LayerNorm of a constant vector: why ε is there, and what γ and β make of it."""
    given_any = any(v is not None for v in (value, size, affine, gamma, beta))
    while True:
        # A constant of 0 would make forgetting the centring harmless (0/√ε is 0 too).
        c = value if value is not None else float(pick(rng, [v for v in range(-5, 21) if v != 0]))
        n = size if size is not None else int(pick(rng, (3, 4, 5)))
        with_affine = affine if affine is not None else bool(rng.random() < 0.5)
        if with_affine:
            g = (
                np.asarray(gamma, dtype=float)
                if gamma is not None
                else rng.integers(1, 4, size=n).astype(float)
            )
            b = np.asarray(beta, dtype=float) if beta is not None else rng.integers(-4, 5, size=n) / 2.0
        else:
            g, b = np.ones(n), np.zeros(n)
        if n < 2 or g.shape != (n,) or b.shape != (n,):
            raise ValueError(f"size must be at least 2 and gamma, beta must have {n} entries")
        x = np.full(n, c)
        y = numerics.layer_norm(x, gamma=g, beta=b, eps=EPS)
        answer = VectorAnswer(vec(y), THREE_PLACES)
        mistakes = [
            Mistake(
                "no-mean-subtraction",
                vec(numerics.normalise(x, eps=EPS, centre=False) * g + b),
                r"That divides $x$ itself by $\sqrt{\varepsilon}$ without subtracting the mean. The "
                r"mean is the constant itself, so every gap is 0 and the normalised vector is 0.",
            ),
        ]
        if with_affine:
            # Without γ and β the output is 0 anyway, so forgetting β is no mistake there.
            mistakes += [
                Mistake(
                    "ignored-beta",
                    vec(np.zeros(n)),
                    r"The normalised vector is 0, but LayerNorm then applies $\gamma \odot \hat{x} + "
                    r"\beta$, so the output is $\beta$.",
                ),
                Mistake(
                    "gamma-not-zeroed",
                    vec(g + b),
                    r"$\gamma$ multiplies the normalised vector, which is 0 here, so $\gamma$ drops "
                    r"out and only $\beta$ is left.",
                ),
            ]
        if given_any or keeps_all(answer, mistakes):
            break
    learned = (
        rf" and learned $\gamma = {tex_row(g, 1)}$ and $\beta = {tex_row(b, 1)}$"
        if with_affine
        # Without this the learned scale and shift would be unknown, and the output with them.
        else r" and its initial scale and shift ($\gamma = 1$, $\beta = 0$)"
    )
    prompt = (
        rf"LayerNorm with $\varepsilon = 10^{{-5}}${learned} is applied to the vector "
        rf"$x = {tex_row(x, 1)}$. What does it output?"
    )
    affine_step = (
        rf"Scale by $\gamma$ and shift by $\beta$: $\gamma \odot 0 + \beta = {tex_row(y, None)}$."
        if with_affine
        else rf"With $\gamma = 1$ and $\beta = 0$ the output is ${tex_row(y, None)}$."
    )
    solution = [
        rf"The mean is ${short(c)}$, so every gap $x_j - \mu$ is 0 and the variance is 0.",
        r"Without $\varepsilon$ this would be $0/0$, which is undefined (NaN). With it we divide 0 by "
        r"$\sqrt{0 + 10^{-5}} \approx 0.0032$, a small positive number, and get exactly 0.",
        affine_step,
    ]
    return Variant(
        prompt=prompt,
        answer=answer,
        solution=solution,
        mistakes=mistakes,
        inputs={"value": c, "size": n, "gamma": g, "beta": b},
        hint=r"Work out the variance first, and ask what the formula would do without $\varepsilon$.",
    )


@generator
def layernorm_affine(
    rng: np.random.Generator,
    /,
    *,
    x: list[float] | None = None,
    gamma: list[float] | None = None,
    beta: list[float] | None = None,
) -> Variant:
    """LayerNorm with learned γ and β: normalise, then scale and shift each feature."""
    given_any = x is not None or gamma is not None or beta is not None
    while True:
        arr = np.asarray(x, dtype=float) if x is not None else _draw_vector(rng)
        n = arr.size
        g = np.asarray(gamma, dtype=float) if gamma is not None else rng.integers(1, 5, size=n) / 2.0
        b = np.asarray(beta, dtype=float) if beta is not None else rng.integers(-4, 5, size=n) / 2.0
        if n < 2 or np.ptp(arr) == 0 or g.shape != (n,) or b.shape != (n,):
            raise ValueError("x must vary, and gamma and beta must have one entry per feature")
        x_hat = numerics.normalise(arr, eps=EPS)
        y = numerics.layer_norm(arr, gamma=g, beta=b, eps=EPS)
        answer = VectorAnswer(vec(y), TWO_PLACES)
        mistakes = [
            Mistake(
                "forgot-affine",
                vec(x_hat),
                r"That is only the normalised vector $\hat{x}$; the layer then computes "
                r"$\gamma \odot \hat{x} + \beta$ with its learned parameters.",
            ),
            Mistake(
                "shift-before-scale",
                vec(numerics.layer_norm(arr, gamma=g, beta=g * b, eps=EPS)),
                r"That computes $\gamma \odot (\hat{x} + \beta)$; $\beta$ is added after scaling: "
                r"$\gamma \odot \hat{x} + \beta$.",
            ),
            Mistake("sample-std", vec(numerics.normalise(arr, eps=EPS, ddof=1) * g + b), SAMPLE_STD),
        ]
        # γ = 1 wherever β ≠ 0 would make the order of scale and shift invisible: redraw.
        if given_any or keeps_all(answer, mistakes):
            break
    prompt = (
        rf"A LayerNorm has learned scale $\gamma = {tex_row(g, 1)}$ and shift $\beta = {tex_row(b, 1)}$, "
        rf"and $\varepsilon = 10^{{-5}}$. What does it output for $x = {tex_row(arr, 1)}$?"
    )
    solution = [
        *_stats_steps(arr),
        rf"Normalised: $\hat{{x}} \approx {tex_row(x_hat, 3)}$.",
        rf"Scale and shift feature by feature: $y = \gamma \odot \hat{{x}} + \beta \approx {tex_row(y, 3)}$.",
    ]
    return Variant(
        prompt=prompt,
        answer=answer,
        solution=solution,
        mistakes=mistakes,
        inputs={"x": arr, "gamma": g, "beta": b},
        hint=r"Normalise first exactly as without $\gamma$ and $\beta$; then scale and shift each entry.",
    )


@generator
def residual_add(
    rng: np.random.Generator,
    /,
    *,
    x: list[float] | None = None,
    sublayer: list[float] | None = None,
) -> Variant:
    """The output of a residual connection, x + Sublayer(x)."""
    while True:
        size = len(x) if x is not None else int(pick(rng, (2, 3, 4)))
        arr = np.asarray(x, dtype=float) if x is not None else rng.integers(-3, 6, size=size).astype(float)
        if sublayer is not None:
            fx = np.asarray(sublayer, dtype=float)
        else:
            fx = rng.integers(-5, 6, size=size) / 10.0
            fx[fx == 0] = 0.1
        if fx.shape != arr.shape:
            raise ValueError(f"x {arr.shape} and the sub-layer output {fx.shape} must have the same shape")
        # An input of zeros would make "forgot x" the right answer by luck: redraw.
        if x is not None or sublayer is not None or arr.any():
            break
    out = numerics.residual(arr, fx)
    prompt = (
        rf"A block's input is $x = {tex_row(arr, 1)}$ and its sub-layer outputs "
        rf"$f(x) = {tex_row(fx, 1)}$. What does the residual connection give?"
    )
    sums = ", ".join(signed_sum(a, b) for a, b in zip(arr, fx, strict=True))
    solution = [
        r"A residual connection adds the input back: output $= x + f(x)$.",
        rf"$[{sums}] = {tex_row(out, 1)}$.",
        "Even if the sub-layer learned nothing useful, the input passes through unchanged, which "
        "is what lets deep stacks train.",
    ]
    mistakes = [
        Mistake(
            "forgot-x",
            vec(fx),
            r"That is the sub-layer output alone; the residual connection adds the input: $x + f(x)$.",
        ),
        Mistake(
            "dropped-sublayer",
            vec(arr),
            r"That is the input alone; the skip path carries $x$ and the sub-layer adds its "
            r"change $f(x)$ to it.",
        ),
    ]
    return Variant(
        prompt=prompt,
        answer=VectorAnswer(vec(out), TWO_PLACES),
        solution=solution,
        mistakes=mistakes,
        inputs={"x": arr, "sublayer": fx},
        hint="The skip path carries the input around the sub-layer; the two meet in an addition.",
    )


SLOPES = (0.05, 0.1, 0.2, 0.25, 0.5)


@generator
def skip_slopes(
    rng: np.random.Generator,
    /,
    *,
    slope: float | None = None,
    layers: int | None = None,
) -> Variant:
    """Slope through L layers of f(x) = a·x, without and with skip connections: aᴸ against (1 + a)ᴸ."""
    a = slope if slope is not None else float(pick(rng, SLOPES))
    n = layers if layers is not None else int(rng.integers(4, 13))
    if not 0 < a < 1 or n < 1:
        raise ValueError(f"need 0 < slope < 1 and at least one layer (got {a}, {n})")
    plain = numerics.stacked_slope(a, n, skip=False)
    skip = numerics.stacked_slope(a, n, skip=True)
    if n == 1:
        prompt = (
            rf"A sub-layer computes $f(x) = {short(a)}\,x$. What are the slope of $f(x)$ alone and "
            r"the slope of $x + f(x)$ (the sub-layer with a skip connection)? Give them as "
            "[slope of f, slope of x + f]."
        )
        solution = [
            rf"The slope of $f$ alone is ${short(a)}$.",
            rf"The slope of $x + f(x)$ is $1 + {short(a)} = {short(skip)}$: the 1 is the direct "
            "path that skips the sub-layer.",
            rf"Stacked without skips, the slopes multiply: ${short(a)} \times {short(a)} \times \cdots$ "
            "shrinks toward 0; the direct path keeps the gradient near 1, so it reaches early layers.",
        ]
    else:
        prompt = (
            rf"Each of {n} stacked layers has a sub-layer $f(x) = {short(a)}\,x$. What is the slope "
            "of the stack's output with respect to its input when each layer computes $f(x)$ "
            "alone, and when each layer computes $x + f(x)$? Give them as [plain, with skips]."
        )
        solution = [
            rf"Slopes multiply through a stack (the chain rule). Without skips each layer has slope "
            rf"${short(a)}$, so the stack has ${short(a)}^{{{n}}} \approx {sci(plain)}$: the "
            "gradient vanishes.",
            rf"With skips each layer has slope $1 + {short(a)} = {short(1 + a)}$, so the stack has "
            rf"${short(1 + a)}^{{{n}}} \approx {sci(skip)}$.",
            r"$(1 + a)^L = 1 + La + \ldots$ never falls below 1: the direct path carries the "
            "gradient to the first layer however deep the stack is.",
        ]
    answer = VectorAnswer(vec([plain, skip]), Tolerance.sigfigs(3))
    mistakes = [
        Mistake(
            "no-skip",
            vec([plain, plain]),
            r"That gives the skip version the slope of $f$ alone; the skip connection adds the "
            r"direct path, whose slope is 1, to each layer: $1 + a$.",
        ),
        Mistake(
            "skip-slope-is-one",
            vec([plain, 1.0]),
            r"The direct path contributes 1, but the sub-layer's own slope adds to it: each layer "
            r"has slope $1 + a$.",
        ),
    ]
    if n > 1:  # with one layer, adding once and adding per layer are the same thing
        mistakes.append(
            Mistake(
                "added-not-multiplied",
                vec([n * a, 1 + n * a]),
                r"Slopes of stacked layers multiply (chain rule), they do not add: $a^L$ and $(1 + a)^L$.",
            )
        )
        once = Mistake(
            "skip-adds-one-once",
            vec([plain, 1 + plain]),
            "Each layer has its own skip connection, so the 1 is added inside every factor: "
            r"$(1 + a)^L$, not $1 + a^L$.",
        )
        if keeps_all(answer, [*mistakes, once]):
            mistakes.append(once)
        else:
            # a^L is so small that 1 + a^L reads as 1: one wrong number, reached two ways.
            mistakes[1] = Mistake(
                "skip-slope-is-one",
                vec([plain, 1.0]),
                r"The direct path contributes 1, but the sub-layer's own slope adds to it in every "
                r"layer: each layer has slope $1 + a$, so the stack has $(1 + a)^L$, not 1 (nor "
                r"$1 + a^L$, which is 1 to three figures here).",
            )
    return Variant(
        prompt=prompt,
        answer=answer,
        solution=solution,
        mistakes=mistakes,
        inputs={"slope": a, "layers": n},
        hint=r"The derivative of $x$ is 1; through a stack, slopes multiply.",
    )
