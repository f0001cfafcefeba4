"""The rounded chain of a question in parts: what a student who follows the instructions computes.

The parts say "give every entry to 2 decimal places" and then "multiply your A from (b) by V". A
student who does both types (b) rounded and computes (c) from that rounded (b), which need not be
the exact (c) rounded: [[0.06, 0.94], [0.20, 0.80]] · V is not the exact A · V. Grading accepts
both (`attnquiz.engine.grading.parts.grade_parts`); this module computes the rounded student's answers,
with the parts' own reference numerics, so that

- the worked solution (and so every answer key) says how a later part follows from the rounded
  earlier one where that differs from the exact answer ("From the rounded (b) = ...: ..."), and so
  does a key marked by hand (`key_text`), so that the key never contradicts itself;
- ``quiz check`` can check that this student earns full marks on every part (`attnquiz.engine.check.parts`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

from msgspec import Struct

from attnquiz.engine.answers.kinds import (
    Answer,
    IntegerAnswer,
    MatrixAnswer,
    NumericAnswer,
    Part,
    PartsAnswer,
    ShapeAnswer,
    SingleAnswer,
    VectorAnswer,
)
from attnquiz.engine.answers.values import format_value


class Link(Struct, frozen=True):
    """One part of the rounded chain: its answer as the rounding student computes it (``target``),
    the values of the parts it used, as that student typed them, and whether it differs from the
    part's exact answer as the key writes it (``differs``)."""

    part: Part
    target: SingleAnswer
    used: tuple[tuple[str, str], ...]
    differs: bool


def written(answer: SingleAnswer) -> Any:
    """The value a student types for ``answer`` who writes it at the precision asked for (None for a
    kind whose value is not a number, a vector, a matrix or a shape)."""
    tolerance = answer.tolerance

    def rounded(x: float) -> float:
        return float(tolerance.format(x)) if math.isfinite(x) else x

    if isinstance(answer, IntegerAnswer):
        return answer.value
    if isinstance(answer, NumericAnswer):
        return rounded(answer.value)
    if isinstance(answer, VectorAnswer):
        return tuple(rounded(v) for v in answer.values)
    if isinstance(answer, MatrixAnswer):
        return tuple(tuple(rounded(v) for v in row) for row in answer.rows)
    if isinstance(answer, ShapeAnswer):
        return answer.dims
    return None


def rounded_chain(answer: PartsAnswer) -> tuple[Link, ...]:
    """Each part as the student computes it who rounds every part as asked and reuses those values.

    A part whose recomputation fails for the rounded values (it never should: they are close to
    the exact ones) keeps its exact answer.
    """
    typed: dict[str, Any] = {}
    links: list[Link] = []
    for part in answer.parts:
        target = part.answer
        used: tuple[tuple[str, str], ...] = ()
        values = [typed.get(label) for label in part.uses]
        if part.uses and part.recompute is not None and all(v is not None for v in values):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("error", RuntimeWarning)  # numpy warns on a bad value
                    target = part.answer_for(part.recompute(*values))
                target.format()
            except (ArithmeticError, ValueError, TypeError, IndexError, RuntimeWarning):
                target = part.answer  # as grading does: where nothing can be carried, the exact answer
            used = tuple(
                (label, format_value(typed[label], answer.part(label).answer.tolerance, grouped=False))
                for label in part.uses
            )
        typed[part.label] = written(target)
        differs = target.format() != part.answer.format()
        links.append(Link(part, target, used, differs))
    return tuple(links)


def rounded_step(link: Link) -> str:
    """The worked-solution step of a part whose rounded-chain answer differs from its exact one."""
    given = " and ".join(f"({label}) = {text}" for label, text in link.used)
    return f"From the rounded {given}: {link.target.format()} (marked correct too)."


def key_text(answer: Answer) -> str:
    """An answer as a key marked by hand shows it: for a question in parts, after the exact answers,
    each later part that differs as it follows from the rounded earlier answers (both are right):
    "(a) ... | (b) ... | (c) [[1.89, 0.17], ...]; from the rounded (b): (c) [[1.88, 0.18], ...]"."""
    if not isinstance(answer, PartsAnswer):
        return answer.format()
    rounded = [link for link in rounded_chain(answer) if link.differs]
    if not rounded:
        return answer.format()
    alternatives = []
    for link in rounded:
        used = " and ".join(f"({label})" for label, _ in link.used)
        alternatives.append(f"from the rounded {used}: ({link.part.label}) {link.target.format()}")
    return f"{answer.format()}; {'; '.join(alternatives)}"


def full_text(answer: SingleAnswer) -> str:
    """``answer`` written with every digit a float holds: what a student types who keeps full precision."""
    if isinstance(answer, IntegerAnswer):
        return str(answer.value)
    if isinstance(answer, NumericAnswer):
        return repr(answer.value)
    if isinstance(answer, VectorAnswer):
        return "[" + ", ".join(repr(v) for v in answer.values) + "]"
    if isinstance(answer, MatrixAnswer):
        return "[" + ", ".join("[" + ", ".join(repr(v) for v in row) + "]" for row in answer.rows) + "]"
    return answer.format()


def with_rounded_steps(parts: Sequence[Part]) -> tuple[Part, ...] | None:
    """The parts with a step for each part whose answer from the rounded earlier ones differs (the
    steps are added once: parts that have them already are returned as they are); None when no part
    needs one."""
    from msgspec.structs import replace

    answer = PartsAnswer(tuple(parts))
    added = False
    out: list[Part] = []
    for link in rounded_chain(answer):
        part = link.part
        if link.differs:
            step = rounded_step(link)
            if step not in part.solution:
                part = replace(part, solution=(*part.solution, step))
                added = True
        out.append(part)
    return tuple(out) if added else None


__all__ = ["Link", "full_text", "key_text", "rounded_chain", "rounded_step", "with_rounded_steps", "written"]
