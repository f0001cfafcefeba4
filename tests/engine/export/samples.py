"""Hand-built questions of every answer kind, with the maths the renderers must typeset, for export tests."""

from __future__ import annotations

from attnquiz.engine.answers.kinds import (
    ChoiceAnswer,
    IntegerAnswer,
    MatrixAnswer,
    Mistake,
    NumericAnswer,
    Option,
    ShapeAnswer,
    VectorAnswer,
)
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.plan.class_plan import ClassPlan, Sheet
from attnquiz.engine.seeding import variant_code
from attnquiz.engine.variant import Question, Variant

MATHS_PROMPT = (
    r"Scaled dot-product attention computes $\operatorname{softmax}\left(\frac{QK^\top}{\sqrt{d_k}}\right)V$ "
    r"with $d_{\text{model}} = 512$ and $h = 8$ heads, so $d_k = \frac{512}{8} = 64$ and "
    r"$\sqrt[3]{x}$ is not needed. Take"
    "\n\n"
    r"$$Q = \begin{bmatrix}1 & 0 \\ 0.5 & -2\end{bmatrix}, \quad \hat{y}_{t-1} = \tanh(W_a s_{t-1}), \quad"
    r" \alpha_{ti} = \frac{\exp(e_{ti})}{\sum_j \exp(e_{tj})}$$"
    "\n\n"
    r"**Note** that `code_here` stays as is; $768^2 = 589{,}824$ and *costs* are \$5."
)


def _question(item: str, seed: int, variant: Variant, source: str = "2026 T1 Quiz 1, Q13") -> Question:
    return Question("samples", item, source, "attention", seed, variant_code(seed), variant)


def sample_questions(seed: int = 7) -> tuple[Question, ...]:
    """One question of each answer kind (numeric, integer, vector, matrix, shape, multiple, single)."""
    numeric = Variant(
        prompt=MATHS_PROMPT,
        answer=NumericAnswer(0.8808 + seed * 1e-4, Tolerance.decimals(2)),
        solution=[r"Apply $\frac{1}{\sqrt{d_k}}$ first.", r"Then $\sigma(x) \approx 0.88$."],
        mistakes=[
            Mistake("no-sqrt-dk", 0.9526, r"That skips the $1/\sqrt{d_k}$ scaling."),
            Mistake("softmax-over-queries", 0.5, "That normalises over queries, not keys."),
        ],
    )
    integer = Variant(
        prompt=r"How many parameters does $W_O \in \mathbb{R}^{d \times d}$ have for $d = 768$?",
        answer=IntegerAnswer(589824),
        solution=[r"$768^2 = 589{,}824$."],
        mistakes=[Mistake("no-biases", 590592, "That adds a bias; the question says no biases.")],
    )
    vector = Variant(
        prompt=r"Give the attention weights $\alpha = \operatorname{softmax}([2, 0])$.",
        answer=VectorAnswer((0.8808, 0.1192), Tolerance.decimals(3)),
        solution=[r"$\alpha_1 = \frac{e^2}{e^2 + 1} \approx 0.881$."],
        mistakes=[Mistake("softmax-over-queries", (0.5, 0.5), "Each row sums to one, not each column.")],
    )
    matrix = Variant(
        prompt=r"Compute $A = \begin{pmatrix}1 & 2 \\ 3 & 4\end{pmatrix} \cdot 0.5$.",
        answer=MatrixAnswer(((0.5, 1.0), (1.5, 2.0)), Tolerance.decimals(1)),
        solution=[r"Halve each entry: $\begin{bmatrix}0.5 & 1 \\ 1.5 & 2\end{bmatrix}$."],
    )
    shape = Variant(
        prompt=r"What is the shape of $QK^\top$ for $T$ tokens?",
        answer=ShapeAnswer(("T", "T")),
        solution=[r"$[T, d_k] \times [d_k, T] = [T, T]$."],
        mistakes=[Mistake("keys-not-values", ("T", 64), "That is the shape of $K$.")],
    )
    multiple = Variant(
        prompt="Which statements about multi-head attention are true?",
        answer=ChoiceAnswer(
            (
                Option(r"Each head has its own $W^Q_i$", True, "Heads project separately."),
                Option(r"Heads add their weights", False, "Heads are concatenated, then $W_O$ mixes them."),
                Option(r"$W_O$ maps $h d_v \to d_{\text{model}}$", True),
                Option("Heads share one softmax", False),
            ),
            multiple=True,
        ),
        solution=["**A** is true.", "**B** is false.", "**C** is true.", "**D** is false."],
    )
    single = Variant(
        prompt="Which model struggles most with long sentences?",
        answer=ChoiceAnswer(
            (
                Option("A plain RNN encoder-decoder", True),
                Option("A Transformer", False),
                Option("Bahdanau", False),
            ),
            multiple=False,
        ),
        solution=["The plain RNN squeezes the sentence into one vector."],
    )
    kinds = [
        ("scaled-score", numeric),
        ("w-o-params", integer),
        ("softmax-weights", vector),
        ("half-matrix", matrix),
        ("score-shape", shape),
        ("mha-statements", multiple),
        ("long-sentence", single),
    ]
    return tuple(_question(item, seed, variant) for item, variant in kinds)


def sample_plan(students: int = 3) -> ClassPlan:
    """A class plan over the sample questions (each student's seed is their number)."""
    sheets = tuple(Sheet(n, n, variant_code(n), sample_questions(seed=n)) for n in range(1, students + 1))
    items = tuple(q.item_id for q in sheets[0].questions)
    return ClassPlan("samples", "Sample bank: every answer kind", 2026, items, sheets)


def formula_questions(seed: int = 7) -> tuple[Question, ...]:
    """Formula answers as a formula item builds them, {{ }} values substituted and unsimplified:
    one on its own (with a formula mistake), and one as part (b) of a question in parts."""
    from attnquiz.engine.answers.kinds import ExpressionAnswer, IntegerAnswer, Part, PartsAnswer
    from attnquiz.engine.answers.values import Formula

    tokens = 1024 + seed
    alone = Variant(
        prompt=rf"A cache holds keys and values for $T$ tokens, 24 layers and $d = {tokens}$. How many?",
        answer=ExpressionAnswer(f"2*24*{tokens}*T", ("T",)),
        solution=[rf"Keys and values: $2 \cdot 24 \cdot {tokens} \cdot T$."],
        mistakes=[Mistake("keys-only", Formula.of(f"24*{tokens}*T", ("T",)), "That counts the keys only.")],
    )
    parts = Variant(
        prompt=r"An attention layer over $T$ tokens of width $d$.",
        answer=PartsAnswer(
            (
                Part("a", "How many heads for $d = 64$ and $d_k = 16$?", IntegerAnswer(4), ("$64/16 = 4$.",)),
                Part(
                    "b",
                    "How many multiplications do the scores of all heads take, as a formula?",
                    ExpressionAnswer("4*T*T*d/4 + 2*T^2*d - T^2*d*2 + 3*T^2*d", ("T", "d", "d_model")),
                    ("$4T^2d$ in all.",),
                    (Mistake("one-head", Formula.of("2*12*T*d/6", ("T", "d", "d_model")), "One head only."),),
                    weight=2,
                ),
            )
        ),
        solution=(),
    )
    return (_question("cache-formula", seed, alone), _question("score-formula", seed, parts))


def formula_plan(students: int = 2) -> ClassPlan:
    """A class plan over the formula questions (each student's seed is their number)."""
    sheets = tuple(Sheet(n, n, variant_code(n), formula_questions(seed=n)) for n in range(1, students + 1))
    items = tuple(q.item_id for q in sheets[0].questions)
    return ClassPlan("formulas", "Formula answers", 2026, items, sheets)
