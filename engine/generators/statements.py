"""Choice items drawn from a pool of true and false statements written in the bank.

The pool lives in YAML (``params.pool``), so an instructor can add a conceptual question without
writing Python. Each variant shows ``options`` statements, shuffled, with at least one true and one
false; a single-choice item shows exactly one true statement (the pool may hold several true
paraphrases). Statements that share a ``group`` (a fact and its negation) are never drawn together,
so that one option does not give another away. Statements that carry the past paper's ``letter``
rebuild the paper's own question, in its order, with ``paper_order: true``.

The pool is checked as a whole when the bank loads (both truths present, no statement repeated,
letters A, B, C, ... without gaps, TeX within the `attnquiz.engine.markup.tex` subset), so a slip in the YAML
is
reported at its own line rather than when a variant happens to draw it.
"""

from __future__ import annotations

import re
from typing import Self

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, RootModel, field_validator, model_validator

from attnquiz.engine.answers.kinds import LETTERS, ChoiceAnswer, Option
from attnquiz.engine.markup import markdown as md
from attnquiz.engine.markup import tex as markup
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant


class Statement(BaseModel):
    """One statement of a pool: its text, whether it is true, and why (shown when it is misjudged).

    ``defer_build``: the validator is built when a bank file is first validated, not at import, so a
    bank read back from the cache (whose items hold pools) builds none, as `attnquiz.engine.schema`'s.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    text: str = Field(min_length=1, description="The statement as the option shows it.")
    true: bool = Field(description="Whether the statement is true.")
    why: str = Field(
        default="",
        description="The explanation shown with the solution (and when a false one is ticked).",
    )
    letter: str | None = Field(
        default=None, pattern=r"^[A-Z]$", description="Its letter in the past paper, where the notes give it."
    )
    group: str | None = Field(
        default=None,
        min_length=1,
        description=(
            "Statements with the same group are versions of one claim (a fact and its negation, or "
            "paraphrases): a variant shows at most one of them, so one option cannot give another away."
        ),
    )

    @field_validator("text", "why")
    @classmethod
    def _supported_markup(cls, value: str) -> str:
        try:
            md.check(value)
        except markup.MarkupError as exc:
            raise ValueError(str(exc)) from None
        return value


def _same_wording(text: str) -> str:
    """The text with case, spacing and end punctuation ignored: what makes two options look alike."""
    return re.sub(r"\s+", " ", text).strip().rstrip(".").casefold()


# A statement with its group: the group name, or its own index when it has none.
Keyed = list[tuple[str | int, Statement]]


class Pool(RootModel[list[Statement]]):
    """The statements of an item, with the checks that need all of them at once."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        statements = self.root
        if not any(s.true for s in statements) or all(s.true for s in statements):
            raise ValueError("a pool needs at least one true and one false statement")
        seen: dict[str, int] = {}
        for index, statement in enumerate(statements):
            key = _same_wording(statement.text)
            if key in seen:
                raise ValueError(
                    f"statement [{index}] repeats statement [{seen[key]}] ({statement.text[:50]!r}); "
                    "a variant could show the same option twice"
                )
            seen[key] = index
        owners: dict[str, int] = {}
        for index, statement in enumerate(statements):
            if statement.letter is None:
                continue
            if statement.letter in owners:
                raise ValueError(
                    f"letter {statement.letter} is given to statements [{owners[statement.letter]}] "
                    f"and [{index}]"
                )
            owners[statement.letter] = index
        letters = "".join(sorted(owners))
        if letters and letters != LETTERS[: len(letters)]:
            raise ValueError(
                f"the paper's letters must run A, B, C, ... without gaps (got {', '.join(letters)})"
            )
        return self

    @property
    def true(self) -> list[Statement]:
        """The true statements, in pool order."""
        return [s for s in self.root if s.true]

    @property
    def false(self) -> list[Statement]:
        """The false statements, in pool order."""
        return [s for s in self.root if not s.true]

    def keyed(self) -> Keyed:
        """Each statement with its group (a statement without one is a group of its own)."""
        return [(s.group if s.group is not None else i, s) for i, s in enumerate(self.root)]

    def lettered(self) -> list[Statement]:
        """The statements that carry the paper's letters, in the paper's order."""
        return sorted((s for s in self.root if s.letter), key=lambda s: s.letter or "")


def _kinds(keyed: Keyed, used: set[str | int]) -> list[tuple[bool, bool]]:
    """For each group not yet used: whether it can supply a true statement, and a false one."""
    kinds: dict[str | int, tuple[bool, bool]] = {}
    for key, s in keyed:
        if key not in used:
            has_true, has_false = kinds.get(key, (False, False))
            kinds[key] = (has_true or s.true, has_false or not s.true)
    return list(kinds.values())


def _feasible(kinds: list[tuple[bool, bool]], n_true: int, n_false: int) -> bool:
    """Whether distinct groups of these kinds can supply ``n_true`` true and ``n_false`` false statements."""
    only_true = only_false = either = 0
    for has_true, has_false in kinds:  # one pass: this runs for every statement of every draw
        if has_true and has_false:
            either += 1
        elif has_true:
            only_true += 1
        elif has_false:
            only_false += 1
    # Groups that hold both truths cover whatever the one-truth groups cannot.
    return max(0, n_true - only_true) + max(0, n_false - only_false) <= either


def _completes(keyed: Keyed, indices: list[int], used: set[str | int], n_true: int, n_false: int) -> bool:
    """`_feasible` of `_kinds` of ``keyed[i] for i in indices``, in one pass without building either list.

    This runs for every statement taken in every draw; a group's kind is a bit mask (1: it can
    supply a true statement, 2: a false one).
    """
    kinds: dict[str | int, int] = {}
    for i in indices:
        key, statement = keyed[i]
        if key not in used:
            kinds[key] = kinds.get(key, 0) | (1 if statement.true else 2)
    count = [0, 0, 0, 0]
    for kind in kinds.values():
        count[kind] += 1
    return max(0, n_true - count[1]) + max(0, n_false - count[2]) <= count[3]


def _draw(rng: np.random.Generator, pool: Pool, options: int, multiple: bool) -> list[Statement]:
    keyed = pool.keyed()
    everything = _kinds(keyed, set())
    counts = range(1, options) if multiple else range(1, 2)
    # Every count of true options the pool allows (keeping one of each truth) is equally likely,
    # so a student cannot learn that "about half" or "all but one" is usually right.
    feasible = [n for n in counts if _feasible(everything, n, options - n)]
    if not feasible:
        kind = "multiple-select" if multiple else "single-choice"
        raise ValueError(
            f"the pool ({len(pool.true)} true, {len(pool.false)} false, {len(everything)} groups) cannot "
            f"fill a {kind} item of {options} options with one statement per group"
        )
    n_true = feasible[int(rng.integers(len(feasible)))]
    need = {True: n_true, False: options - n_true}
    used: set[str | int] = set()
    chosen: list[Statement] = []
    order = rng.permutation(len(keyed)).tolist()
    for position, index in enumerate(order):
        key, statement = keyed[index]
        if key in used or need[statement.true] == 0:
            continue
        need[statement.true] -= 1
        # Take the statement only if the rest of the pool can still complete the variant; some
        # completion always exists, so the walk never gets stuck. Nothing left to find is always
        # feasible, and then the walk is over.
        if not (need[True] or need[False]):
            chosen.append(statement)
            break
        if _completes(keyed, order[position + 1 :], used | {key}, need[True], need[False]):
            used.add(key)
            chosen.append(statement)
        else:
            need[statement.true] += 1
    return [chosen[i] for i in rng.permutation(len(chosen))]


def _paper(pool: Pool, multiple: bool) -> list[Statement]:
    lettered = pool.lettered()
    if len(lettered) < 2:
        raise ValueError("paper_order needs at least two statements with the paper's letters (A, B, ...)")
    right = sum(s.true for s in lettered)
    if right == 0:
        raise ValueError("paper_order: none of the lettered statements is true")
    if not multiple and right != 1:
        raise ValueError(f"paper_order: a single-choice item needs one true lettered statement, not {right}")
    return lettered


@generator
def statements(
    rng: np.random.Generator,
    /,
    *,
    stem: str = "Which of the following statements are true?",
    pool: Pool | None = None,
    options: int = 4,
    multiple: bool = True,
    paper_order: bool = False,
    hint: str = "",
) -> Variant:
    """Choose the true statements from a shuffled draw of a bank-written pool."""
    if pool is None:
        raise ValueError("a statements item needs params.pool: a list of {text, true, why} statements")
    size = len(pool.root)
    if not paper_order and not 2 <= options <= size:
        raise ValueError(f"options must be 2 to {size} (the pool's size), not {options}")
    shown = _paper(pool, multiple) if paper_order else _draw(rng, pool, options, multiple)
    # Each statement's place in the pool, by identity: the pool's wordings are distinct (checked
    # at load), so this is list.index without comparing pydantic models field by field.
    position = {id(s): i for i, s in enumerate(pool.root)}
    answer = ChoiceAnswer(tuple(Option(s.text, s.true, s.why) for s in shown), multiple=multiple)
    solution = []
    for letter, s in zip(LETTERS, shown, strict=False):
        verdict = "true" if s.true else "false"
        solution.append(f"**{letter}** is {verdict}." + (f" {s.why}" if s.why else ""))
    right = ", ".join(sorted(answer.correct_letters))
    solution.append(f"So the answer is {right}.")
    return Variant(
        prompt=stem,
        answer=answer,
        solution=solution,
        inputs={"shown": [position[id(s)] for s in shown]},
        hint=hint,
    )
