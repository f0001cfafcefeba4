"""Questions in parts: the chains of the notes, each step a part graded with error carried forward.

Every part's answer, and every carried-forward target, is computed by `attnquiz.engine.numerics`: a
part that uses earlier parts comes with a ``recompute`` function built from the same numerics
(``lambda e1: numerics.softmax([e1, e2])[0]``), which grading calls with the student's own earlier
values. Where a single-step item of the bank asks the same step, its generator is called with the
chain's inputs, so that the part keeps that item's listed mistakes and worked steps (and the two
can never disagree; the chain checks that their answers are equal).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from attnquiz.engine import numerics
from attnquiz.engine.answers.kinds import (
    IntegerAnswer,
    MatrixAnswer,
    Mistake,
    NumericAnswer,
    Part,
    PartsAnswer,
    SingleAnswer,
)
from attnquiz.engine.generators import cost, counts, masks, normalisation
from attnquiz.engine.generators import heads as head_items
from attnquiz.engine.generators.additive import (
    DRAWS,
    additive_score,
    cannot_draw,
    fixed,
    fixed_matrix,
    fixed_vector,
    given,
    given_matrix,
    given_vector,
)
from attnquiz.engine.generators.common import THREE_PLACES, TWO_PLACES, group, mat, pick, small_ints
from attnquiz.engine.generators.dot_product import sdpa_outputs
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant

D_MODEL = r"d_{\text{model}}"


def _part(
    label: str,
    prompt: str,
    step: Variant | None = None,
    *,
    answer: SingleAnswer | None = None,
    solution: Sequence[str] = (),
    mistakes: Sequence[Mistake] = (),
    uses: Sequence[str] = (),
    recompute: Callable[..., Any] | None = None,
) -> Part:
    """A part whose answer, steps and mistakes come from ``step`` (the single-step generator's
    variant for the same inputs) unless given."""
    if step is not None:
        if answer is not None and step.answer != answer:
            raise ValueError(f"part ({label}): the single-step item's answer {step.answer.format()} differs")
        answer = answer or step.answer  # type: ignore[assignment]
        solution = solution or step.solution
        mistakes = [*mistakes, *step.mistakes]
    if answer is None:
        raise ValueError(f"part ({label}) has no answer")
    return Part(label, prompt, answer, solution, mistakes, uses=tuple(uses), recompute=recompute)


def _parts_variant(
    stem: str, parts: Sequence[Part], inputs: dict[str, Any], hint: str, carried_score: float
) -> Variant:
    """The question: ``carried_score`` is what a part right only by carry-forward earns (the item's
    ``params: {carried_score: 0.5}``; full marks by default)."""
    answer = PartsAnswer(tuple(parts), carried_score=carried_score)
    return Variant(prompt=stem, answer=answer, solution=(), inputs=inputs, hint=hint)


# ---------------------------------------------------------------------------------------------
# Week 1: 2026 T1 Quiz 1, Q13 → Q14 → Q15 (additive score → weight → context)
# ---------------------------------------------------------------------------------------------


@generator
def additive_chain(
    rng: np.random.Generator,
    /,
    *,
    h: list[float] | None = None,
    s_proj: list[float] | None = None,
    v: list[float] | None = None,
    carried_score: float = 1.0,
) -> Variant:
    """Additive attention in three steps: the score e_t1 (Q13), its softmax weight α_t1 (Q14), the
    context vector's component (Q15), for two encoder states; (b) uses (a) and (c) uses (b)."""
    for _ in range(DRAWS):
        first = additive_score(rng, dim=2, h=h, s_proj=s_proj, v=v)
        score = first.answer
        assert isinstance(score, NumericAnswer)
        e1 = score.value
        e2 = float(rng.integers(-150, 251)) / 100.0
        h1 = np.asarray(first.inputs["h"], dtype=float)
        h2 = small_ints(rng, 2, -1, 3).astype(float)
        j = int(rng.integers(1, 3))
        alpha1 = float(numerics.softmax([e1, e2])[0])
        context = numerics.weighted_sum([alpha1, 1 - alpha1], np.stack([h1, h2]))
        # Two states that differ in the component asked, and weights away from 0 and 1, so that a
        # wrong weight shows in the context and a wrong score in the weight.
        if h1[j - 1] != h2[j - 1] and 0.1 < alpha1 < 0.9 and abs(e1 - e2) > 0.05:
            break
    else:
        raise ValueError(cannot_draw("additive_chain"))
    weight = NumericAnswer(alpha1, TWO_PLACES)
    component = NumericAnswer(float(context[j - 1]), TWO_PLACES)
    column = (float(h1[j - 1]), float(h2[j - 1]))
    weight_mistakes = [
        Mistake(
            "not-normalised",
            float(np.exp(e1)),
            r"That is $\exp(e_{t1})$ without dividing by the sum over the encoder states; the weights sum to "
            r"1.",
        ),
    ]
    context_mistakes = [
        Mistake(
            "weights-ignored",
            column[0] + column[1],
            r"That adds the states without their weights; each state counts with its weight $\alpha_{ti}$.",
        ),
        Mistake(
            "uniform-weights", (column[0] + column[1]) / 2, "That averages the states with equal weights."
        ),
    ]
    ordinal = ("first", "second")[j - 1]
    parts = [
        _part("a", r"Compute the score $e_{t1}$ of the first encoder state.", first),
        _part(
            "b",
            rf"The second encoder state scores $e_{{t2}} = {given(e2)}$. Compute the attention weight "
            r"$\alpha_{t1}$ of the first state (use your $e_{t1}$ from (a)).",
            answer=weight,
            solution=[
                r"$\alpha_{t1} = \exp(e_{t1}) / (\exp(e_{t1}) + \exp(e_{t2}))$, a softmax over the two "
                r"states.",
                rf"$\exp({fixed(e1, 4)}) \approx {fixed(float(np.exp(e1)), 4)}$ and $\exp({given(e2)}) "
                rf"\approx "
                rf"{fixed(float(np.exp(e2)), 4)}$, so $\alpha_{{t1}} \approx {fixed(alpha1, 4)}$.",
            ],
            mistakes=weight_mistakes,
            uses=["a"],
            recompute=lambda score: float(numerics.softmax([float(score), e2])[0]),
        ),
        _part(
            "c",
            rf"The encoder states are $h_1 = {given_vector(h1)}$ and $h_2 = {given_vector(h2)}$. Give the "
            rf"{ordinal} component of the context vector $c_t = \alpha_{{t1}} h_1 + \alpha_{{t2}} h_2$ "
            r"(use your $\alpha_{t1}$ from (b); $\alpha_{t2} = 1 - \alpha_{t1}$).",
            answer=component,
            solution=[
                rf"$c_t[{j}] = \alpha_{{t1}} \cdot {given(column[0])} + (1 - \alpha_{{t1}}) \cdot "
                rf"{given(column[1])}$.",
                rf"$= {fixed(alpha1, 4)} \cdot {given(column[0])} + {fixed(1 - alpha1, 4)} \cdot "
                rf"{given(column[1])} "
                rf"\approx {fixed(float(context[j - 1]), 4)}$.",
            ],
            mistakes=context_mistakes,
            uses=["b"],
            recompute=lambda a1: float(numerics.weighted_sum([float(a1), 1 - float(a1)], np.asarray(column))),
        ),
    ]
    stem = (
        "An encoder–decoder uses additive (Bahdanau) attention, "
        r"$e_{ti} = v_a^\top \tanh(W_a s_{t-1} + U_a h_i)$, over two encoder states. "
        rf"Take $U_a = I$, $h_1 = {given_vector(h1)}$, the projected decoder state "
        rf"$W_a s_{{t-1}} = {given_vector(first.inputs['s_proj'])}$ and $v_a = "
        rf"{given_vector(first.inputs['v'])}$. "
        "Give every answer to 2 decimal places."
    )
    inputs = {**first.inputs, "e2": e2, "h2": h2, "component": j}
    return _parts_variant(
        stem, parts, inputs, "Score, then softmax the two scores, then weight the states.", carried_score
    )


# ---------------------------------------------------------------------------------------------
# Week 1: two-token scaled dot-product attention (scores → weights → outputs)
# ---------------------------------------------------------------------------------------------


@generator
def sdpa_chain(
    rng: np.random.Generator,
    /,
    *,
    q: list[list[float]] | None = None,
    k: list[list[float]] | None = None,
    v: list[list[float]] | None = None,
    carried_score: float = 1.0,
) -> Variant:
    """softmax(QKᵀ/√d_k)V for two tokens in three steps: the scaled scores, the weights (uses (a)),
    the outputs (uses (b))."""
    whole = sdpa_outputs(rng, tokens=2, d_k=2, d_v=2, q=q, k=k, v=v)
    qm, km, vm = (np.asarray(whole.inputs[name], dtype=float) for name in ("q", "k", "v"))
    scaled = numerics.attention_scores(qm, km)
    weights = numerics.softmax(scaled)
    out = weights @ vm
    raw = numerics.attention_scores(qm, km, divisor=1.0)
    root = float(np.sqrt(qm.shape[1]))
    parts = [
        _part(
            "a",
            r"Compute the scaled scores $S = QK^\top / \sqrt{d_k}$.",
            answer=MatrixAnswer(mat(scaled), TWO_PLACES),
            solution=[
                rf"$QK^\top = {given_matrix(raw)}$.",
                rf"Divide by $\sqrt{{2}}$: $S \approx {fixed_matrix(scaled, 3)}$.",
            ],
            mistakes=[
                Mistake(
                    "no-scaling",
                    mat(raw),
                    r"That is $QK^\top$ without dividing by $\sqrt{d_k}$; scaled dot-product attention "
                    r"divides "
                    "every score by it.",
                ),
                Mistake("divided-by-d_k", mat(raw / qm.shape[1]), r"Divide by $\sqrt{d_k}$, not by $d_k$."),
            ],
        ),
        _part(
            "b",
            r"Softmax each row of your $S$ from (a) to get the attention weights $A$.",
            answer=MatrixAnswer(mat(weights), TWO_PLACES),
            solution=[
                rf"Each row over the keys: $A \approx {fixed_matrix(weights, 3)}$; every row sums to 1."
            ],
            mistakes=[
                Mistake(
                    "softmax-over-queries",
                    mat(numerics.softmax(scaled, axis=0)),
                    "That normalises each column (over the queries). Each query's weights over the keys "
                    "sum to 1: softmax each row.",
                )
            ],
            uses=["a"],
            recompute=lambda s: numerics.softmax(np.asarray(s, dtype=float)),
        ),
        _part(
            "c",
            r"Multiply your weights $A$ from (b) by $V$ to get the outputs $AV$.",
            answer=MatrixAnswer(mat(out), TWO_PLACES),
            solution=[rf"$AV \approx {fixed_matrix(out, 2)}$: each output row mixes the rows of $V$."],
            mistakes=[
                Mistake(
                    "keys-not-values",
                    mat(weights @ km),
                    "That mixes the keys; the weights mix the value vectors, the rows of $V$.",
                )
            ],
            uses=["b"],
            recompute=lambda a: np.asarray(a, dtype=float) @ vm,
        ),
    ]
    if parts[2].answer != whole.answer:
        raise ValueError("sdpa_chain: the outputs differ from sdpa_outputs for the same inputs")
    stem = (
        f"Two tokens have $Q = {given_matrix(qm)}$, $K = {given_matrix(km)}$ and $V = {given_matrix(vm)}$, "
        rf"with $d_k = 2$ ($\sqrt{{2}} \approx {fixed(root, 4)}$). Give every entry to 2 decimal places."
    )
    return _parts_variant(
        stem, parts, dict(whole.inputs), "Scores, then a softmax per row, then mix the values.", carried_score
    )


# ---------------------------------------------------------------------------------------------
# Week 1: head size → one head's W_Q → multi-head attention → an encoder layer → N layers
# ---------------------------------------------------------------------------------------------


@generator
def params_chain(
    rng: np.random.Generator,
    /,
    *,
    d_model: int | None = None,
    heads: int | None = None,
    d_ff: int | None = None,
    layers: int | None = None,
    carried_score: float = 1.0,
) -> Variant:
    """Parameter counts in five steps, each from the one before: d_k, W_Q of one head, MHA with biases,
    an encoder layer (with its FFN and two LayerNorms), N layers."""
    from attnquiz.engine.generators import sizes

    d = sizes.width(rng, d_model)
    h = sizes.heads_for(rng, d, heads)
    f = sizes.ffn_width(rng, d, d_ff)
    n = int(layers) if layers is not None else int(pick(rng, (2, 4, 6, 12)))
    if not 1 <= n <= 100:
        raise ValueError(f"layers must be 1 to 100, not {n}")
    ffn = numerics.ffn_params(d, f)
    norms = numerics.layer_norm_params(d, count=2)
    size_step = head_items.head_size(rng, d_model=d, heads=h, model="")
    w_q_step = counts.w_q_head_param_count(rng, d_model=d, heads=h)
    mha_step = counts.mha_param_count(rng, d_model=d, heads=h, biases=True)
    layer_step = counts.encoder_layer_param_count(rng, d_model=d, heads=h, d_ff=f)
    stack_step = counts.encoder_stack_param_count(rng, d_model=d, heads=h, d_ff=f, layers=n)
    parts = [
        _part("a", "What is the head size $d_k$?", size_step),
        _part(
            "b",
            r"How many weights are in one head's query projection $W^Q_i$ (no bias)? Use your $d_k$ from "
            r"(a).",
            w_q_step,
            uses=["a"],
            recompute=lambda d_k: numerics.projection_params(d, _whole(d_k)),
        ),
        _part(
            "c",
            rf"How many parameters does the multi-head attention hold: $W^Q$, $W^K$, $W^V$ of all {h} heads, "
            r"$W^O$, and their biases? Use your count from (b).",
            mha_step,
            uses=["b"],
            # h heads' W_Q make one d × d matrix: four such projections, each with a bias of d.
            recompute=lambda w_q: 4 * (h * _whole(w_q) + d),
        ),
        _part(
            "d",
            rf"Add the feed-forward network (${D_MODEL} \to {f} \to {D_MODEL}$, with biases) and the two "
            r"LayerNorms ($\gamma$, $\beta$): how many parameters does one encoder layer hold? Use (c).",
            layer_step,
            uses=["c"],
            recompute=lambda mha: _whole(mha) + ffn + norms,
        ),
        _part(
            "e",
            f"The encoder stacks $N = {n}$ such layers. How many parameters do they hold? Use (d).",
            stack_step,
            uses=["d"],
            recompute=lambda layer: numerics.stack_params(_whole(layer), n),
        ),
    ]
    stem = rf"A Transformer encoder has ${D_MODEL} = {d}$, $h = {h}$ heads and a feed-forward width of ${f}$."
    inputs = {"d_model": d, "heads": h, "d_ff": f, "layers": n}
    return _parts_variant(stem, parts, inputs, "Each count is built from the one before it.", carried_score)


def _whole(value: Any) -> int:
    """A carried count as an integer (a count that is not whole carries nothing)."""
    number = float(value)
    if not number.is_integer():
        raise ValueError(f"{number} is not a whole number")
    return int(number)


# ---------------------------------------------------------------------------------------------
# Week 1: score entries → longer sequences → the attention/dense crossover
# ---------------------------------------------------------------------------------------------


@generator
def cost_chain(
    rng: np.random.Generator,
    /,
    *,
    batch: int | None = None,
    heads: int | None = None,
    tokens: int | None = None,
    factor: int | None = None,
    d_model: int | None = None,
    carried_score: float = 1.0,
) -> Variant:
    """Attention cost in three steps: the score entries B·h·T², the entries at k times the length (uses
    (a): k² times as many), and the context length where attention's FLOPs overtake the dense layers."""
    entries_step = cost.score_entries(rng, batch=batch, heads=heads, tokens=tokens)
    b, h, t = (int(entries_step.inputs[name]) for name in ("batch", "heads", "tokens"))
    longer_step = cost.score_entries_longer(rng, batch=b, heads=h, tokens=t, factor=factor)
    k = int(longer_step.inputs["factor"])
    crossover_step = cost.attention_dense_crossover(rng, d_model=d_model)
    d = int(crossover_step.inputs["d_model"])
    parts = [
        _part("a", "How many entries does the attention-score tensor hold?", entries_step),
        _part(
            "b",
            f"The sequences become {k} times as long (batch and heads unchanged). How many score entries "
            "now? Use your count from (a).",
            longer_step,
            uses=["a"],
            recompute=lambda before: _whole(before) * k * k,
        ),
        _part(
            "c",
            rf"For a model of width ${D_MODEL} = {d}$ (FFN width $4{D_MODEL}$), at what context length $n$ "
            r"do the attention FLOPs per token ($QK^\top$ and $AV$) equal the dense FLOPs per token?",
            crossover_step,
        ),
    ]
    stem = (
        rf"A self-attention layer with $h = {h}$ heads processes a batch of $B = {b}$ sequences of $T = {t}$ "
        "tokens each, and keeps one score per (sequence, head, query, key)."
    )
    inputs = {"batch": b, "heads": h, "tokens": t, "factor": k, "d_model": d}
    return _parts_variant(stem, parts, inputs, "The score tensor is [B, h, T, T].", carried_score)


# ---------------------------------------------------------------------------------------------
# Week 2: the causal mask (hidden entries → visible entries → the fraction hidden)
# ---------------------------------------------------------------------------------------------


@generator
def causal_mask_chain(
    rng: np.random.Generator, /, *, t: int | None = None, carried_score: float = 1.0
) -> Variant:
    """A causal mask in three steps: the hidden entries T(T−1)/2, the visible ones (uses (a)), and the
    fraction of the scores hidden (uses (a))."""
    hidden_step = masks.masked_entry_count(rng, t=t)
    size = int(hidden_step.inputs["t"])
    hidden = numerics.causal_masked_entries(size)
    visible = size * size - hidden
    fraction = hidden / (size * size)
    parts = [
        _part("a", r"How many entries of the score matrix are masked (set to $-\infty$)?", hidden_step),
        _part(
            "b",
            "How many entries stay visible? Use your count from (a).",
            answer=IntegerAnswer(visible),
            solution=[
                rf"$T^2 - {group(hidden)} = {group(size * size)} - {group(hidden)} = {group(visible)}$."
            ],
            mistakes=[
                Mistake(
                    "diagonal-hidden",
                    visible - size,
                    "The diagonal stays visible: each token may attend to itself.",
                )
            ],
            uses=["a"],
            recompute=lambda masked: size * size - _whole(masked),
        ),
        _part(
            "c",
            "What fraction of the score matrix is masked? Give it to 3 decimal places. Use (a).",
            answer=NumericAnswer(fraction, THREE_PLACES),
            solution=[
                rf"${group(hidden)} / {group(size * size)} \approx {fixed(fraction, 4)}$, a little under "
                rf"half."
            ],
            mistakes=[Mistake("visible-fraction", visible / (size * size), "That is the visible fraction.")],
            uses=["a"],
            recompute=lambda masked: float(masked) / (size * size),
        ),
    ]
    stem = (
        rf"A decoder applies a causal mask to the ${size} \times {size}$ score matrix of $T = {size}$ tokens."
    )
    return _parts_variant(stem, parts, {"t": size}, "Query i may see keys 1 to i.", carried_score)


# ---------------------------------------------------------------------------------------------
# Week 2: LayerNorm of one token (mean → variance → output)
# ---------------------------------------------------------------------------------------------


@generator
def layernorm_chain(
    rng: np.random.Generator, /, *, x: list[float] | None = None, carried_score: float = 1.0
) -> Variant:
    """LayerNorm in three steps: the mean, the (population) variance (uses (a)), the normalised vector
    (uses (a) and (b)); γ = 1, β = 0, ε = 10⁻⁵."""
    output_step = normalisation.layernorm_vector(rng, x=x)
    arr = np.asarray(output_step.inputs["x"], dtype=float)
    mean = float(arr.mean())
    var = float(arr.var())
    eps = normalisation.EPS
    parts = [
        _part(
            "a",
            "Compute the mean of $x$ (3 decimal places).",
            answer=NumericAnswer(mean, THREE_PLACES),
            solution=[rf"$\mu = {given(float(arr.sum()))}/{arr.size} = {fixed(mean, 4)}$."],
        ),
        _part(
            "b",
            "Compute the variance of $x$ as LayerNorm does (divide by $n$), to 3 decimal places, using your "
            "mean from (a).",
            answer=NumericAnswer(var, THREE_PLACES),
            solution=[
                rf"Squared gaps from the mean: ${fixed_vector((arr - mean) ** 2, 4)}$.",
                rf"Their mean: $\sigma^2 = {fixed(var, 4)}$.",
            ],
            mistakes=[
                Mistake(
                    "sample-variance",
                    float(arr.var(ddof=1)),
                    r"That divides by $n - 1$ (the sample variance); LayerNorm divides by $n$.",
                ),
                Mistake(
                    "standard-deviation",
                    float(np.sqrt(var)),
                    "That is the standard deviation; the variance is its square.",
                ),
            ],
            uses=["a"],
            recompute=lambda mu: float(np.mean((arr - float(mu)) ** 2)),
        ),
        _part(
            "c",
            r"Give the normalised vector $(x - \mu)/\sqrt{\sigma^2 + \varepsilon}$ (3 decimal places), using "
            r"(a) and (b).",
            answer=output_step.answer,  # type: ignore[arg-type]
            solution=[
                rf"$\sqrt{{\sigma^2 + \varepsilon}} \approx {fixed(float(np.sqrt(var + eps)), 4)}$.",
                *output_step.solution[-1:],
            ],
            mistakes=output_step.mistakes,
            uses=["a", "b"],
            recompute=lambda mu, sigma2: (arr - float(mu)) / np.sqrt(float(sigma2) + eps),
        ),
    ]
    stem = (
        rf"LayerNorm one token's vector $x = {given_vector(arr)}$, with $\gamma = 1$, $\beta = 0$ and "
        r"$\varepsilon = 10^{-5}$."
    )
    return _parts_variant(
        stem, parts, {"x": arr}, "Mean, then the mean squared gap, then divide.", carried_score
    )


__all__ = [
    "additive_chain",
    "causal_mask_chain",
    "cost_chain",
    "layernorm_chain",
    "params_chain",
    "sdpa_chain",
]
