"""Choice items drawn from a pool of true and false statements written in the bank.

The pool lives in YAML (``params.statements``), so an instructor can add a conceptual question
without writing Python. Each variant shows ``options`` statements, shuffled, with at least one
true and one false; a single-choice item shows exactly one true statement. Statements that carry
the past paper's ``letter`` rebuild the paper's own question, in its order, with ``paper_order``.
"""

from __future__ import annotations

from typing import Self

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from engine.answers import LETTERS, ChoiceAnswer, Option
from engine.registry import generator
from engine.variant import Variant


class Statement(BaseModel):
    """One statement of a pool: its text, whether it is true, and why (shown when it is misjudged)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str = Field(min_length=1, description="The statement as the option shows it.")
    true: bool = Field(description="Whether the statement is true.")
    why: str = Field(default="", description="The explanation shown with the solution (and when a false one is ticked).")
    letter: str | None = Field(
        default=None, pattern=r"^[A-Z]$", description="Its letter in the past paper, where the notes give it."
    )


class Pool(BaseModel):
    """Checks that need the whole pool."""

    statements: list[Statement]

    @model_validator(mode="after")
    def _has_both(self) -> Self:
        if not any(s.true for s in self.statements) or all(s.true for s in self.statements):
            raise ValueError("a pool needs at least one true and one false statement")
        return self


def _draw(rng: np.random.Generator, pool: list[Statement], options: int, multiple: bool) -> list[Statement]:
    true = [s for s in pool if s.true]
    false = [s for s in pool if not s.true]
    if multiple:
        # At least one true and one false, each count allowed by the pool equally likely.
        low = max(1, options - len(false))
        high = min(len(true), options - 1)
        if low > high:
            raise ValueError(f"the pool cannot fill {options} options with both true and false statements")
        n_true = int(rng.integers(low, high + 1))
    else:
        if len(false) < options - 1:
            raise ValueError(f"a single-choice item with {options} options needs {options - 1} false statements")
        n_true = 1
    chosen = [true[i] for i in rng.choice(len(true), n_true, replace=False)]
    chosen += [false[i] for i in rng.choice(len(false), options - n_true, replace=False)]
    return [chosen[i] for i in rng.permutation(len(chosen))]


def _paper(pool: list[Statement]) -> list[Statement]:
    lettered = sorted((s for s in pool if s.letter), key=lambda s: s.letter or "")
    letters = "".join(s.letter or "" for s in lettered)
    if not lettered or letters != LETTERS[: len(lettered)]:
        raise ValueError(f"paper_order needs statements lettered A, B, C, ... without gaps (got {letters or 'none'})")
    return lettered


@generator
def statements(
    rng: np.random.Generator,
    /,
    *,
    stem: str = "Which of the following statements are true?",
    pool: list[Statement] | None = None,
    options: int = 4,
    multiple: bool = True,
    paper_order: bool = False,
) -> Variant:
    """Choose the true statements from a shuffled draw of a bank-written pool."""
    pool = Pool(statements=pool or []).statements
    if not 2 <= options <= len(pool):
        raise ValueError(f"options must be 2 to {len(pool)} (the pool's size), not {options}")
    shown = _paper(pool) if paper_order else _draw(rng, pool, options, multiple)
    answer = ChoiceAnswer(
        tuple(Option(s.text, s.true, s.why) for s in shown),
        multiple=multiple,
    )
    solution = []
    for letter, s in zip(LETTERS, shown, strict=False):
        verdict = "true" if s.true else "false"
        solution.append(f"**{letter}** is {verdict}" + (f": {s.why}" if s.why else "."))
    right = ", ".join(sorted(answer.correct_letters))
    solution.append(f"So the answer is {right}.")
    return Variant(
        prompt=stem,
        answer=answer,
        solution=solution,
        inputs={"shown": [pool.index(s) for s in shown]},
    )
