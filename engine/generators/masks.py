"""Causal and padding masks: the mask itself, the entries it hides, the masked weights, what a word sees."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from attnquiz.engine import numerics
from attnquiz.engine.answers.kinds import (
    IntegerAnswer,
    MatrixAnswer,
    Mistake,
    Part,
    PartsAnswer,
    VectorAnswer,
)
from attnquiz.engine.answers.tolerance import EXACT
from attnquiz.engine.generators.common import THREE_PLACES, group, keeps_all, mat, pick, vec
from attnquiz.engine.generators.plots import score_map, weight_map
from attnquiz.engine.generators.week2_common import fixed, tex_grid, tex_row
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant

if TYPE_CHECKING:
    from numpy.typing import NDArray

WRONG_TRIANGLE = (
    r"That masks the wrong triangle: query $i$ must see keys $1, \ldots, i$ (itself and earlier "
    "tokens), so the mask is lower-triangular and everything above the diagonal is hidden."
)
NO_RENORMALISE = (
    "That takes the softmax over every key and then zeroes the hidden ones, so the rows no longer "
    r"sum to 1. Mask the scores with $-\infty$ before the softmax, which renormalises over the "
    "visible keys."
)
MASKED_SCORE_ZERO = (
    r"That sets the hidden scores to 0 instead of $-\infty$; $e^0 = 1$, so the hidden keys still "
    r"get weight. Only $e^{-\infty} = 0$ removes them."
)
SOFTMAX_OVER_QUERIES = (
    "That normalises each column (over the queries). Attention normalises each row: a query "
    "shares its weight among the keys it may see."
)
COUNT_WORDS = {2: "Two", 3: "Three", 4: "Four", 5: "Five"}
EQ, APPROX = "=", r"\approx"
NO_MASK = "That ignores the mask: every token then reads the tokens after it as well."

# The reference count builds the whole T×T mask (4 M entries for T = 2048); it is pure, so each
# length is counted once per process rather than once per variant.
_masked_entries = lru_cache(maxsize=64)(numerics.causal_masked_entries)


@lru_cache(maxsize=16)
def _causal_mask(size: int) -> NDArray[np.bool_]:
    """``numerics.causal_mask(size)``, built once per size; read-only, as variants share it."""
    mask = numerics.causal_mask(size)
    mask.flags.writeable = False
    return mask


@generator
def causal_mask_weights(
    rng: np.random.Generator,
    /,
    *,
    t: int | None = None,
    scores: list[list[float]] | None = None,
) -> Variant:
    """Softmax weights of a score matrix under a causal mask, row by row."""
    while True:
        if scores is not None:
            s = np.asarray(scores, dtype=float)
        else:
            size = t if t is not None else int(pick(rng, (3, 3, 4)))
            if rng.random() < 0.5:
                # As in the notes: every query has the same scores, so only the mask changes the rows.
                s = np.tile(rng.integers(-1, 4, size=size).astype(float), (size, 1))
            else:
                s = rng.integers(-1, 4, size=(size, size)).astype(float)
        size = s.shape[0]
        if s.ndim != 2 or s.shape != (size, size) or not 2 <= size <= 5:
            raise ValueError(f"scores must be a square matrix of 2 to 5 rows, not {s.shape}")
        mask = _causal_mask(size)
        weights = numerics.softmax(s, mask=mask)
        answer = MatrixAnswer(mat(weights), THREE_PLACES)
        mistakes = [
            Mistake("wrong-triangle", mat(numerics.softmax(s, mask=mask.T)), WRONG_TRIANGLE),
            Mistake("no-renormalise", mat(numerics.softmax(s) * mask), NO_RENORMALISE),
            Mistake("masked-score-zero", mat(numerics.softmax(np.where(mask, s, 0.0))), MASKED_SCORE_ZERO),
            Mistake(
                "softmax-over-queries", mat(numerics.softmax(s, axis=0, mask=mask)), SOFTMAX_OVER_QUERIES
            ),
            Mistake("no-mask", mat(numerics.softmax(s)), NO_MASK),
        ]
        # Hidden scores that are already 0 would make "no mask" and "masked score 0" the same slip.
        if scores is not None or keeps_all(answer, mistakes):
            break
    row_steps = []
    for r in range(size):
        visible = s[r, : r + 1]
        # One visible key gets weight exactly 1; longer rows are rounded.
        relation = "=" if r == 0 else r"\approx"
        softmax = rf"$\operatorname{{softmax}}({tex_row(visible)}) {relation} {tex_row(weights[r, : r + 1])}$"
        seen = "key 1 only" if r == 0 else "keys 1 and 2" if r == 1 else f"keys 1 to {r + 1}"
        rest = ", then zeros" if r + 1 < size else ""
        row_steps.append(f"Row {r + 1} sees {seen}: {softmax}{rest}.")
    prompt = (
        rf"{COUNT_WORDS[size]} tokens have the raw attention scores $S = {tex_grid(s)}$ (row $i$ is "
        "query $i$, column $j$ is key $j$). Apply a causal mask (a token may not see later tokens) "
        "and compute the softmax of each row."
    )
    solution = [
        r"Set every score above the diagonal to $-\infty$: "
        rf"${tex_grid(s, masked=~mask)}$. After the softmax those entries get exactly 0 weight.",
        *row_steps,
        rf"Weights: ${tex_grid(weights)}$; each row sums to 1 and everything above the diagonal is 0.",
    ]
    return Variant(
        prompt=prompt,
        answer=answer,
        solution=solution,
        mistakes=mistakes,
        inputs={"scores": s},
        hint="Row i may only use the first i scores; take the softmax over those alone.",
        figures=[
            score_map(
                s,
                title="Scores with the causal mask",
                hidden=~mask,
                caption="Grey: a later key, hidden by the mask (its score becomes −∞).",
                decimals=0,
            ),
            weight_map(
                weights,
                title="Causal attention weights",
                hidden=~mask,
                caption="Each row is a softmax over the keys it may see; hidden keys get weight 0.",
                decimals=3,
            ),
        ],
    )


def _mask_text(t: int) -> str:
    return (
        rf"Write the causal mask for $T = {t}$ tokens as a ${t} \times {t}$ matrix of 1s and 0s: "
        "row $i$ is query $i$, column $j$ is key $j$, and an entry is 1 where the query may "
        "attend to the key and 0 where it may not."
    )


@generator
def causal_mask_matrix(rng: np.random.Generator, /, *, t: int | None = None) -> Variant:
    """The 0/1 causal mask of T tokens (1 = the query may attend to the key)."""
    size = t if t is not None else int(rng.integers(3, 7))
    if not 2 <= size <= 8:
        raise ValueError(f"t must be 2 to 8 for a matrix to write out, not {size}")
    mask = _causal_mask(size).astype(float)
    middle = size // 2 + 1
    solution = [
        rf"Query $i$ may see keys $1, \ldots, i$: itself and the tokens before it. Token {middle}, "
        rf"for example, sees tokens 1 to {middle} only, so row {middle} is "
        rf"{tex_row(mask[middle - 1], 0)}.",
        rf"So the 1s fill the diagonal and the lower triangle: $M = {tex_grid(mask, 0)}$ "
        "(torch.tril of a matrix of ones).",
        r"In the scores, the 0 entries become $-\infty$ and get weight 0 after the softmax.",
    ]
    mistakes = [
        Mistake("wrong-triangle", mat(mask.T), WRONG_TRIANGLE),
        Mistake(
            "hides-itself",
            mat(np.tril(mask, k=-1)),
            "That hides the diagonal too, but a token may attend to itself: only later tokens are hidden.",
        ),
        Mistake(
            "ones-mark-hidden",
            mat(1.0 - mask),
            "That marks the hidden entries with 1. In this mask 1 means visible (as in "
            "torch.tril(torch.ones(T, T))); some libraries use the opposite convention, so check "
            "which one an API expects.",
        ),
    ]
    return Variant(
        prompt=_mask_text(size),
        answer=MatrixAnswer(mat(mask), EXACT),
        solution=solution,
        mistakes=mistakes,
        inputs={"t": size},
        hint="Ask, for each row, which tokens are not in that token's future.",
        figures=[
            weight_map(
                mask,
                title=f"Causal mask, $T = {size}$",
                hidden=mask == 0,
                caption="1: the query may attend to the key; 0 (grey): a later token, hidden.",
                decimals=0,
            )
        ],
    )


# Context lengths from toy examples to real models.
MASK_LENGTHS = (4, 5, 6, 8, 10, 12, 16, 32, 64, 128, 512, 1024, 2048)


@generator
def masked_entry_count(rng: np.random.Generator, /, *, t: int | None = None) -> Variant:
    """How many entries of a T×T causal mask are hidden: T(T−1)/2."""
    size = t if t is not None else int(pick(rng, MASK_LENGTHS))
    if size < 2:
        raise ValueError(f"t must be at least 2, not {size}")
    hidden = _masked_entries(size)
    visible = size * size - hidden
    prompt = (
        rf"A decoder applies a causal mask to the ${size} \times {size}$ score matrix of $T = {size}$ "
        r"tokens. How many of its entries are masked (set to $-\infty$)?"
    )
    solution = [
        rf"Query $i$ hides the $T - i$ keys after it: ${size - 1}$ for the first query, "
        rf"${size - 2}$ for the second, down to 0 for the last.",
        rf"${size - 1} + {size - 2} + \cdots{{}} + 0 = T(T-1)/2 = {size} \cdot {size - 1}/2 "
        rf"= {group(hidden)}$.",
        rf"The other ${group(visible)} = T(T+1)/2$ entries (the diagonal and below) stay visible; "
        rf"the tensor still has all $T^2 = {group(size * size)}$ entries.",
    ]
    mistakes = [
        Mistake(
            "counted-visible",
            visible,
            "That counts the visible entries (the diagonal and below); the question asks for the "
            "hidden ones above the diagonal.",
        ),
        Mistake(
            "both-triangles",
            size * size - size,
            "That counts every entry off the diagonal. Only the upper triangle (later keys) is "
            "hidden; the lower triangle holds earlier tokens, which a query may see.",
        ),
        Mistake(
            "half-the-matrix",
            size * size / 2,
            r"That is half of $T^2$; the diagonal belongs to the visible half, so the hidden part "
            r"is $T(T-1)/2$, a little less than half.",
        ),
    ]
    return Variant(
        prompt=prompt,
        answer=IntegerAnswer(hidden),
        solution=solution,
        mistakes=mistakes,
        inputs={"t": size},
        hint="Count row by row how many later tokens each query may not see.",
    )


@generator
def padding_mask_weights(
    rng: np.random.Generator,
    /,
    *,
    scores: list[float] | None = None,
    real: int | None = None,
) -> Variant:
    """One query's attention weights when the last positions of the sentence are padding."""
    while True:
        if scores is not None:
            s = np.asarray(scores, dtype=float)
        else:
            length = int(pick(rng, (3, 4, 4, 5)))
            s = rng.integers(-2, 6, size=length) / 2.0
        length = s.size
        n_real = real if real is not None else int(rng.integers(2, length))
        keep = numerics.padding_mask(length, n_real)
        pads = length - n_real
        weights = numerics.softmax(s, mask=keep)
        answer = VectorAnswer(vec(weights), THREE_PLACES)
        mistakes = [
            Mistake(
                "pad-not-masked",
                vec(numerics.softmax(s)),
                "That lets the query attend to the padding. A padding mask gives pad positions weight 0.",
            ),
            Mistake("pad-score-zero", vec(numerics.softmax(np.where(keep, s, 0.0))), MASKED_SCORE_ZERO),
            Mistake("no-renormalise", vec(numerics.softmax(s) * keep), NO_RENORMALISE),
        ]
        # Padding scores of 0 would make "score 0" the same slip as "not masked": redraw.
        if scores is not None or keeps_all(answer, mistakes):
            break
    exps = np.exp(s[:n_real])
    plural = "s" if pads > 1 else ""
    prompt = (
        rf"A sentence is padded to {length} positions: {n_real} real tokens, then {pads} padding "
        rf"token{plural}. One query's scores over the {length} positions are ${tex_row(s, 1)}$. "
        "Compute the query's attention weights with a padding mask."
    )
    solution = [
        rf"Mask the padding by setting its score{plural} to $-\infty$: ${tex_row(s, 1, masked=~keep)}$.",
        "Softmax over the real tokens: "
        + ", ".join(
            rf"$e^{{{fixed(x, 1)}}} {EQ if x == 0 else APPROX} {fixed(v, 3)}$"
            for x, v in zip(s[:n_real], exps, strict=True)
        )
        + rf", total $\approx {fixed(float(exps.sum()), 3)}$.",
        rf"Weights $\approx {tex_row(weights, 3)}$: the padding gets no attention and the real "
        "weights sum to 1.",
    ]
    return Variant(
        prompt=prompt,
        answer=answer,
        solution=solution,
        mistakes=mistakes,
        inputs={"scores": s, "real": n_real},
        hint=r"A masked score is $-\infty$, and $e^{-\infty} = 0$.",
        figures=[
            weight_map(
                weights,
                title="Attention weights with the padding masked",
                rows=["weight"],
                cols=[f"{n + 1}" if k else f"{n + 1} (pad)" for n, k in enumerate(keep.tolist())],
                row_title="",
                col_title="position",
                hidden=~keep,
                caption="Grey: padding, masked (weight 0); the real tokens' weights sum to 1.",
                decimals=3,
            )
        ],
    )


# ---------------------------------------------------------------------------------------------
# A causal mask: what word n may see (the essay)
# ---------------------------------------------------------------------------------------------


@generator
def causal_visible_words(
    rng: np.random.Generator,
    /,
    *,
    position: int | None = None,
    length: int | None = None,
) -> Variant:
    """How many words a decoder may attend to as it produces word n, and the first it may not (a), (b)."""
    if position is not None and length is None:
        n, t = int(position), None
    else:
        t = int(length) if length is not None else int(pick(rng, (10, 16, 20, 24, 30, 40)))
        n = int(position) if position is not None else int(rng.integers(2, t))
    total = t if t is not None else n + 1
    visible = numerics.visible_positions(total, n)
    first_hidden = n + 1
    if first_hidden > total:
        raise ValueError(f"word {n} is the last of {total}: no later word to hide")
    reply = f" of a {t}-word reply" if t is not None else ""
    prompt = (
        "A decoder writes text one word at a time with causal (masked) self-attention. It is producing word "
        f"{n}{reply}."
    )
    mistakes_a = [
        Mistake(
            "excludes-itself",
            visible - 1,
            "The causal mask keeps the diagonal: a word attends to itself as well as to the words before it.",
        ),
    ]
    if t is not None:
        mistakes_a.append(
            Mistake(
                "no-mask",
                t,
                "That is every word of the reply, as in an encoder. A causal mask hides the later words.",
            )
        )
    if t is not None and t - n + 1 not in (visible, visible - 1, t):
        mistakes_a.append(
            Mistake(
                "mask-reversed",
                t - n + 1,
                "That counts the word and the words after it. The mask hides the future: a word sees "
                "itself and the words before it.",
            )
        )
    part_a = Part(
        "a",
        "How many words may it attend to, itself included?",
        IntegerAnswer(visible),
        solution=[
            rf"Row {n} of the causal mask (`tril(ones(T, T))`) keeps the columns $1, …, {n}$: the word "
            f"itself and every earlier word, {visible} in all."
        ],
        mistakes=mistakes_a,
    )
    part_b = Part(
        "b",
        "What is the first word it is forbidden to attend to?",
        IntegerAnswer(first_hidden),
        solution=[
            f"Words {first_hidden} onward get the score $-\\infty$ and so exactly 0 weight: they have "
            "not been written yet. This is why a chat model writes left to right."
        ],
        mistakes=[
            Mistake(
                "excludes-itself",
                n,
                "A word may attend to itself; the first forbidden word is the next one.",
            )
        ],
    )
    return Variant(
        prompt=prompt,
        answer=PartsAnswer((part_a, part_b)),
        solution=[],
        inputs={"position": n, "length": t},
        hint="Under a causal mask a word sees itself and what came before it.",
    )
