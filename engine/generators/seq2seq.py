"""The seq2seq story before and with attention: an RNN's one-size context, path lengths, the alignment table.

An RNN encoder hands the decoder one vector however long the sentence; information between two words
travels through every recurrent step between them, where self-attention connects them in one layer;
additive attention's weights form a table of one row per output step. The two code walkthroughs show
their snippet as `attnquiz.engine.generators.snippet_shapes` does.
"""

from __future__ import annotations

import numpy as np

from attnquiz.engine import numerics
from attnquiz.engine.answers.kinds import IntegerAnswer, Mistake, Part, PartsAnswer, ShapeAnswer, symbols
from attnquiz.engine.answers.values import Dim
from attnquiz.engine.generators.common import pick
from attnquiz.engine.generators.snippet_shapes import code_block, given_or, shape_tex
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant

# ---------------------------------------------------------------------------------------------
# The alignment table of additive attention (ELI12 Week 1 §2)
# ---------------------------------------------------------------------------------------------


@generator
def alignment_table_shape(
    rng: np.random.Generator,
    /,
    *,
    source: int | None = None,
    target: int | None = None,
    hidden: int | None = None,
    symbolic: bool = False,
) -> Variant:
    """The shape of additive attention's weights for a whole translation: [T_target, T_source]."""
    if symbolic:
        t_s: Dim = "T_source"
        t_t: Dim = "T_target"
        setup = (
            "An additive-attention decoder writes a translation of $T_{\\text{target}}$ words from a "
            "source sentence of $T_{\\text{source}}$ words. `H` holds the encoder states $h_i$ (one row "
            "per source word) and `S` the decoder states $s_{t-1}$ (one row per output step), drawn at "
            "random here to follow the shapes:"
        )
        sizes_line = "T_source, T_target, hidden = len(source), len(target), 16"
        hid = 16
    else:
        hid = given_or(hidden, rng, (8, 16, 32, 64), ())
        t_s = given_or(source, rng, (4, 5, 6, 7, 8, 9, 11, 12), (hid,))
        t_t = given_or(target, rng, (4, 5, 6, 7, 8, 9, 11, 12), (hid, t_s))
        setup = (
            f"An additive-attention decoder writes a translation of {t_t} words from a source sentence of "
            f"{t_s} words. `H` holds the encoder states $h_i$ (one row per source word) and `S` the "
            "decoder states $s_{t-1}$ (one row per output step), drawn at random here to follow the "
            "shapes:"
        )
        sizes_line = f"T_source, T_target, hidden = {t_s}, {t_t}, {hid}"
    answer = numerics.alignment_shape(t_t, t_s)
    code = code_block(
        "import numpy as np",
        "rng = np.random.default_rng(1)",
        sizes_line,
        "H = rng.normal(size=(T_source, hidden))",
        "S = rng.normal(size=(T_target, hidden))",
        "W_a = rng.normal(size=(hidden, hidden))",
        "U_a = rng.normal(size=(hidden, hidden))",
        "v_a = rng.normal(size=hidden)",
        "rows = []",
        "for s in S:",
        "    e = np.tanh(s @ W_a + H @ U_a) @ v_a",
        "    rows.append(np.exp(e) / np.exp(e).sum())",
        "alpha = np.array(rows)",
        "print(alpha.shape)",
    )
    keep = " Keep the lengths as the symbols `T_target` and `T_source`." if symbolic else ""
    prompt = f"{setup}\n\n{code}\n\nWhat shape does the last line print?{keep}"
    solution = [
        rf"For one decoder step, `H @ U_a` is ${shape_tex((t_s, hid))}$ and `s @ W_a` (width {hid}) is "
        rf"added to every row; after $\tanh$, `@ v_a` leaves one score per source word: "
        rf"${shape_tex((t_s,))}$.",
        "Softmax turns those scores into weights over the source words that sum to 1: one row of the "
        "alignment table.",
        rf"There is one row per decoder step, so the table is ${shape_tex(answer)}$ "
        r"($[T_{\text{target}}, T_{\text{source}}]$), and every row sums to 1.",
    ]
    mistakes = [
        Mistake(
            "weights-over-decoder-states",
            numerics.alignment_shape(t_s, t_t),
            "That puts the source words first, as if the weights were taken over the decoder states. Each "
            "decoder step spreads its weights over the encoder states (source positions), one row per "
            "output step.",
        ),
        Mistake(
            "one-step-only",
            (t_s,),
            "That is the weight vector of one decoder step. The loop builds one such row for every "
            "output step.",
        ),
        Mistake(
            "context-not-weights",
            (t_t, hid),
            r"That is the shape of the context vectors $c_t = \sum_i \alpha_{ti} h_i$. `alpha` holds the "
            "weights themselves: one per output step and source word.",
        ),
    ]
    # The code names the sizes, so a student may write them by name (symbolic: names without numbers).
    names = symbols(
        T_target=t_t if isinstance(t_t, int) else None,
        T_source=t_s if isinstance(t_s, int) else None,
        hidden=hid,
    )
    return Variant(
        prompt=prompt,
        answer=ShapeAnswer(answer, symbols=names),
        solution=solution,
        mistakes=mistakes,
        inputs={"source": t_s, "target": t_t, "hidden": hid, "symbolic": symbolic},
        hint="Work out the shape of `e` for one decoder step, then count the steps.",
    )


# ---------------------------------------------------------------------------------------------
# The squeezed summary: an RNN encoder's context has one size (ELI12 Week 1 §1; the essay)
# ---------------------------------------------------------------------------------------------


@generator
def rnn_context_shape(
    rng: np.random.Generator,
    /,
    *,
    short: int | None = None,
    long: int | None = None,
    hidden: int | None = None,
    embedding: int | None = None,
) -> Variant:
    """The context c = h_T of an RNN encoder for a short and a long sentence: the same size (a), (b)."""
    hid = given_or(hidden, rng, (4, 5, 6, 8, 10, 16), ())
    emb = given_or(embedding, rng, (3, 4, 6, 8, 12), (hid,))
    n_short = given_or(short, rng, (2, 3, 4, 5), (hid, emb))
    n_long = given_or(long, rng, (20, 30, 40, 50, 200), (hid, emb))
    code = code_block(
        "import numpy as np",
        "rng = np.random.default_rng(0)",
        f"hidden, emb = {hid}, {emb}",
        "W_xh = rng.normal(size=(emb, hidden))",
        "W_hh = rng.normal(size=(hidden, hidden))",
        "b = np.zeros(hidden)",
        "",
        "def encode(x):",
        "    h = np.zeros(hidden)",
        "    for x_t in x:",
        "        h = np.tanh(x_t @ W_xh + h @ W_hh + b)",
        "    return h",
        "",
        f"short = rng.normal(size=({n_short}, emb))",
        f"long = rng.normal(size=({n_long}, emb))",
        "print(encode(short).shape, encode(long).shape)",
    )
    prompt = (
        "A seq2seq encoder RNN reads a sentence one word embedding at a time, and hands its last hidden "
        f"state to the decoder as the context $c$. Here it reads a {n_short}-word and a {n_long}-word "
        f"sentence:\n\n{code}\n\nWhat does the last line print?"
    )
    context = numerics.rnn_context_shape(n_short, hid)
    long_context = numerics.rnn_context_shape(n_long, hid)
    grows = (n_long, hid)
    part_a = Part(
        "a",
        "What is the shape of `encode(short)`?",
        ShapeAnswer(context),
        solution=[
            rf"Every step overwrites `h` with a new vector of size `hidden` = {hid}: the {n_short} words are "
            rf"squeezed into one ${shape_tex(context)}$ vector."
        ],
        mistakes=[
            Mistake(
                "grows-with-length",
                (n_short, hid),
                "That keeps every word's state. `encode` returns only the last one, which is what the "
                "decoder gets.",
            ),
            Mistake(
                "embedding-width",
                (emb,),
                "That is the width of a word embedding. `W_xh` maps each word into the hidden size.",
            ),
        ],
    )
    part_b = Part(
        "b",
        "What is the shape of `encode(long)`?",
        ShapeAnswer(long_context),
        solution=[
            rf"The same: ${shape_tex(long_context)}$. A {n_long}-word sentence is squeezed into exactly "
            f"as many numbers as a {n_short}-word one. That is the seq2seq bottleneck: the one vector $c$ "
            "must carry everything the decoder will need for every output word."
        ],
        mistakes=[
            Mistake(
                "grows-with-length",
                grows,
                "The hidden state does not grow with the sentence: each step overwrites it with a vector "
                "of the same size, and `encode` returns the last one.",
            ),
            Mistake(
                "embedding-width",
                (emb,),
                "That is the width of a word embedding. `W_xh` maps each word into the hidden size.",
            ),
        ],
    )
    return Variant(
        prompt=prompt,
        answer=PartsAnswer((part_a, part_b)),
        solution=[],
        inputs={"short": n_short, "long": n_long, "hidden": hid, "embedding": emb},
        hint="Look at what `encode` returns, and at the size of `h` after each step.",
    )


# ---------------------------------------------------------------------------------------------
# Path length: RNN O(T) vs Transformer O(1) (ELI12 Week 1 §1)
# ---------------------------------------------------------------------------------------------


@generator
def path_length(
    rng: np.random.Generator,
    /,
    *,
    length: int | None = None,
    first: int | None = None,
    second: int | None = None,
) -> Variant:
    """How many recurrent steps and how many attention layers separate two words of a sentence (a), (b)."""
    t = int(length) if length is not None else int(pick(rng, (12, 20, 25, 30, 40, 50)))
    i = int(first) if first is not None else int(rng.integers(1, max(2, t // 3)))
    j = int(second) if second is not None else int(rng.integers(max(i + 2, t // 2), t + 1))
    if not 1 <= i < j <= t:
        raise ValueError(f"give two positions 1 ≤ first < second ≤ {t}")
    steps = numerics.path_length(i, j, recurrent=True)
    layers = numerics.path_length(i, j, recurrent=False)
    prompt = (
        f"In a sentence of {t} words, word {j} depends on word {i}. Count how far the information has to "
        "travel."
    )
    part_a = Part(
        "a",
        f"In an RNN encoder, through how many recurrent updates does information from word {i} pass to "
        f"reach the hidden state at word {j}?",
        IntegerAnswer(steps),
        solution=[
            rf"Each state depends on the previous one, so word {i} reaches word {j} through the updates "
            rf"at words {i + 1}, …, {j}: ${j} - {i} = {steps}$ steps. For words far apart that is about $T$ "
            r"steps: a path length of $O(T)$."
        ],
        mistakes=[
            Mistake(
                "whole-sentence",
                t,
                "That is the length of the whole sentence. Only the updates between the two words lie on "
                "the path.",
            ),
            Mistake(
                "attention-path",
                layers,
                "That is the path in self-attention, where every word looks at every other word directly. "
                "An RNN passes information on one step at a time.",
            ),
            *(
                [
                    Mistake(
                        "counted-both-ends",
                        steps + 1,
                        "That counts the words from the first to the last; the steps are the updates after "
                        f"word {i}.",
                    )
                ]
                if steps + 1 != t
                else []
            ),
        ],
    )
    part_b = Part(
        "b",
        "In a Transformer encoder, how many self-attention layers does it take to connect the two words?",
        IntegerAnswer(layers),
        solution=[
            "One: in a self-attention layer every word compares its query with the key of every other "
            r"word, so any two positions are connected directly, a path length of $O(1)$, however far "
            "apart they are."
        ],
        mistakes=[
            Mistake(
                "recurrent-path",
                steps,
                "That is the RNN's path. Self-attention connects every pair of words directly in one layer.",
            ),
        ],
    )
    return Variant(
        prompt=prompt,
        answer=PartsAnswer((part_a, part_b)),
        solution=[],
        inputs={"length": t, "first": i, "second": j},
        hint="An RNN moves information one word per step; attention looks at all words at once.",
    )
