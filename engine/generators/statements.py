"""Choice items drawn from a pool of true and false statements written in the bank.

The pool lives in YAML (``params.pool``), so an instructor can add a conceptual question without
writing Python. Each variant shows ``options`` statements, shuffled, with at least one true and one
false; a single-choice item shows exactly one true statement (the pool may hold several true
paraphrases). Statements that share a ``group`` (a fact and its negation) are never drawn together,
so that one option does not give another away. Statements that carry the past paper's ``letter``
rebuild the paper's own question, in its order, with ``paper_order: true``.

The pool is checked as a whole when the bank loads (both truths present, no statement repeated,
letters A, B, C, ... without gaps, TeX within the `attnquiz.engine.markup.tex` subset, by
`attnquiz.engine.generators.statement_models`), so a slip in the YAML is reported at its own line
rather than when a variant happens to draw it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from attnquiz.engine.answers.kinds import LETTERS, ChoiceAnswer, Option
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler
    from pydantic_core import CoreSchema

    from attnquiz.engine.generators.statement_models import PoolSpec


@dataclass(frozen=True, slots=True)
class Statement:
    """One statement of a pool: its text, whether it is true, why (shown when it is misjudged), its
    letter in the past paper and its group (`attnquiz.engine.generators.statement_models.StatementSpec`
    says what each field may hold)."""

    text: str
    true: bool
    why: str = ""
    letter: str | None = None
    group: str | None = None


# A statement with its group: the group name, or its own index when it has none.
Keyed = list[tuple[str | int, Statement]]


@dataclass(frozen=True, slots=True)
class Pool:
    """The statements of an item, checked as a whole when the bank is validated.

    Plain data: a bank's validated parameters hold a `Pool`, and a bank read back from the cache
    builds its questions without pydantic. pydantic validates one through
    `attnquiz.engine.generators.statement_models.PoolSpec` (the same checks and messages, at the
    same places in the file), which is imported only then.
    """

    root: tuple[Statement, ...]

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        from pydantic_core import core_schema

        from attnquiz.engine.generators.statement_models import PoolSpec

        def validate(value: Any, check: core_schema.ValidatorFunctionWrapHandler) -> Pool:
            # A pool already validated (parameters merged again) is kept; anything else is checked
            # by the bank format's model, whose errors are reported unchanged.
            return value if isinstance(value, Pool) else cls.of(check(value))

        return core_schema.no_info_wrap_validator_function(validate, handler.generate_schema(PoolSpec))

    @classmethod
    def of(cls, spec: PoolSpec) -> Pool:
        """The pool of a validated `PoolSpec`, as plain data."""
        return cls(tuple(Statement(s.text, s.true, s.why, s.letter, s.group) for s in spec.root))

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

    def lettered(self) -> list[int]:
        """The places of the statements that carry the paper's letters, in the paper's order."""
        return sorted(
            (i for i, s in enumerate(self.root) if s.letter), key=lambda i: self.root[i].letter or ""
        )


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


def _draw(rng: np.random.Generator, pool: Pool, options: int, multiple: bool) -> list[int]:
    """The places in the pool of the statements shown, in the order shown."""
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
    chosen: list[int] = []  # places in the pool (`keyed` is in pool order)
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
            chosen.append(index)
            break
        if _completes(keyed, order[position + 1 :], used | {key}, need[True], need[False]):
            used.add(key)
            chosen.append(index)
        else:
            need[statement.true] += 1
    return [chosen[i] for i in rng.permutation(len(chosen))]


def _paper(pool: Pool, multiple: bool) -> list[int]:
    """The places in the pool of the statements with the paper's letters, in the paper's order."""
    lettered = pool.lettered()
    if len(lettered) < 2:
        raise ValueError("paper_order needs at least two statements with the paper's letters (A, B, ...)")
    right = sum(pool.root[i].true for i in lettered)
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
    places = _paper(pool, multiple) if paper_order else _draw(rng, pool, options, multiple)
    shown = [pool.root[i] for i in places]
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
        inputs={"shown": places},
        hint=hint,
    )
