"""Checks of a question in parts, for `quiz check`: each part like an item, and its carry-forward.

Every part is checked as a one-answer item is (its key grades correct, each listed mistake typed
back is named, an unreadable response is invalid). Every part that uses earlier parts is checked
for error carried forward: with one earlier part's value changed (`perturbed`, written at that
part's precision, so readable but wrong), the later part's expected value must change, and the
later part written at that changed value must grade correct, "given your (a) = ...". And two
students who follow the instructions earn full marks on every part: one who rounds each part as
asked and computes the later parts from those rounded values (`attnquiz.engine.answers.carry`), and one
who keeps every digit. After a slip in the first part, both careful students again earn the
carried-forward marks: the one who goes on from each part as typed, and the one who goes on from
the values computed before rounding.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from attnquiz.engine.answers.kinds import (
    IntegerAnswer,
    MatrixAnswer,
    NumericAnswer,
    Part,
    PartsAnswer,
    ShapeAnswer,
    SingleAnswer,
    VectorAnswer,
)

Problem = tuple[str, str, str]
"""(check, message, key): what `attnquiz.engine.check.checks` records for one failed check."""

INVALID_RESPONSE = "banana"


def perturbed(answer: SingleAnswer) -> Any:
    """A wrong but readable value of an answer's kind: each number moved well beyond its tolerance."""
    if isinstance(answer, IntegerAnswer):
        return answer.value * 2 if answer.value else 3
    if isinstance(answer, NumericAnswer):
        return _moved(answer.value)
    if isinstance(answer, VectorAnswer):
        return tuple(_moved(v) for v in answer.values)
    if isinstance(answer, MatrixAnswer):
        return tuple(tuple(_moved(v) for v in row) for row in answer.rows)
    if isinstance(answer, ShapeAnswer):
        return tuple(d * 2 if isinstance(d, int) else d for d in answer.dims)
    raise ValueError(f"a {answer.kind} answer has no perturbed value")


def _moved(value: float) -> float:
    # Always up, by a quarter of the size and a half: never back onto the value (-2 * 1.25 + 0.5 is -2).
    return value + 0.25 * abs(value) + 0.5


def part_problems(answer: PartsAnswer) -> Iterator[Problem]:
    """Every problem of a question in parts (none for a sound one)."""
    from attnquiz.engine.grading.grade import grade_answer

    for part in answer.parts:
        where = f"part ({part.label})"
        key = part.answer.format()
        graded = grade_answer(part.answer, key, part.mistakes)
        if graded.status != "correct":
            yield "correct", f"{where}: the answer as the key writes it, {key}, grades {graded.status}", ""
        for mistake in part.mistakes:
            typed = mistake.format(part.answer)
            named = grade_answer(part.answer, typed, part.mistakes).mistake
            if named is None or named.tag != mistake.tag:
                as_what = f"as {named.tag!r}" if named is not None else "unnamed"
                yield (
                    "mistake",
                    f"{where}: typing {typed} grades {as_what}, not as {mistake.tag!r}",
                    mistake.tag,
                )
        if grade_answer(part.answer, INVALID_RESPONSE, part.mistakes).status != "invalid":
            yield "invalid", f"{where}: the unreadable response {INVALID_RESPONSE!r} is not invalid", ""
        for used in part.uses:
            yield from _carry_problems(answer, part, used)
    yield from _student_problems(answer)
    yield from _slipped_students_problems(answer)


def _slipped_students_problems(answer: PartsAnswer) -> Iterator[Problem]:
    """After a slip in the first part, two careful students earn the carried-forward marks on every
    later part that follows from it: one who goes on from each part as typed (rounded as asked),
    one who goes on from the values they computed before rounding."""
    from attnquiz.engine.grading.outcome import status_of
    from attnquiz.engine.grading.parts import grade_parts
    from attnquiz.engine.grading.single import read_value

    first = answer.parts[0]
    if not any(first.label in part.uses for part in answer.parts) or isinstance(first.answer, ShapeAnswer):
        return
    slip = first.answer_for(perturbed(first.answer)).format()
    slipped = read_value(first.answer, slip)
    if slipped is None:
        return  # said by the carry check of the part that uses it
    typed: dict[str, Any] = {first.label: slipped}
    kept: dict[str, Any] = {first.label: slipped}
    students: dict[str, list[str]] = {"from each part as typed": [slip], "from the unrounded values": [slip]}
    for part in answer.parts[1:]:
        if part.recompute is None or not part.uses:
            for texts in students.values():
                texts.append(part.answer.format())
            for values in (typed, kept):
                values[part.label] = read_value(part.answer, part.answer.format())
            continue
        try:
            from_typed = part.answer_for(part.recompute(*(typed[label] for label in part.uses)))
            from_kept = part.answer_for(part.recompute(*(kept[label] for label in part.uses)))
        except (ArithmeticError, ValueError, TypeError, IndexError):
            return  # a value outside what the method takes: the carry check says so
        students["from each part as typed"].append(from_typed.format())
        students["from the unrounded values"].append(from_kept.format())
        typed[part.label] = read_value(part.answer, from_typed.format())
        kept[part.label] = _value_of(from_kept)
    earns = status_of(answer.carried_score)
    for who, responses in students.items():
        result = grade_parts(answer, responses)
        for part, graded in zip(answer.parts[1:], result.parts[1:], strict=True):
            if part.uses and graded.grade.status not in {earns, "correct"}:
                yield (
                    "carry",
                    f"part ({part.label}): after ({first.label}) = {slip}, a student who goes on {who} "
                    f"values {who} types {responses[answer.parts.index(part)]} and it grades "
                    f"{graded.grade.status}: {graded.grade.feedback}",
                    "",
                )


def _value_of(answer: SingleAnswer) -> Any:
    from attnquiz.engine.grading.single import answer_value

    return answer_value(answer)


def _student_problems(answer: PartsAnswer) -> Iterator[Problem]:
    """Two students who follow the instructions earn full marks on every part: one who rounds each
    part as asked and computes the later parts from their own typed values, and one who keeps
    every digit."""
    from attnquiz.engine.answers.carry import full_text, rounded_chain
    from attnquiz.engine.grading.parts import grade_parts

    if not any(part.uses for part in answer.parts):
        return
    students = {
        "rounding each part as asked and reusing it": [
            link.target.format() for link in rounded_chain(answer)
        ],
        "keeping full precision": [full_text(part.answer) for part in answer.parts],
    }
    for who, responses in students.items():
        result = grade_parts(answer, responses)
        for graded, typed in zip(result.parts, responses, strict=True):
            if graded.grade.status != "correct" or graded.grade.score != 1:
                yield (
                    "carry",
                    f"part ({graded.label}): a student {who} types {typed} and it grades "
                    f"{graded.grade.status}: {graded.grade.feedback}",
                    "",
                )


def _carry_problems(answer: PartsAnswer, part: Part, used: str) -> Iterator[Problem]:
    """With ``used``'s value changed, ``part``'s target changes and the consistent answer is right."""
    from attnquiz.engine.grading.outcome import status_of
    from attnquiz.engine.grading.parts import grade_parts
    from attnquiz.engine.grading.single import answer_value, read_value

    earlier = answer.part(used)
    where = f"part ({part.label}), carried from ({used})"
    wrong_text = earlier.answer_for(perturbed(earlier.answer)).format()
    wrong_value = read_value(earlier.answer, wrong_text)
    if wrong_value is None:
        yield "carry", f"{where}: the changed ({used}) = {wrong_text} cannot be read back", ""
        return
    # The other parts it uses are typed as the key writes them: their values are carried as typed.
    values = [
        wrong_value
        if label == used
        else read_value(answer.part(label).answer, answer.part(label).answer.format())
        for label in part.uses
    ]
    assert part.recompute is not None
    try:
        target = part.answer_for(part.recompute(*values))
    except (ArithmeticError, ValueError, TypeError) as exc:
        yield "carry", f"{where}: recomputing from ({used}) = {wrong_text} fails: {exc}", ""
        return
    if target == part.answer or part.answer.matches(answer_value(target)):
        yield (
            "carry",
            f"{where}: changing ({used}) to {wrong_text} leaves ({part.label}) at {target.format()}",
            "",
        )
        return
    responses = [
        wrong_text if p.label == used else target.format() if p is part else p.answer.format()
        for p in answer.parts
    ]
    result = grade_parts(answer, responses)
    graded = next(g for g in result.parts if g.label == part.label)
    earns = status_of(answer.carried_score)  # what a part right given the changed value earns
    if graded.grade.status != earns or used not in graded.carried_forward:
        yield (
            "carry",
            f"{where}: with ({used}) = {wrong_text}, the consistent ({part.label}) = {target.format()} "
            f"grades {graded.grade.status}, not {earns}: {graded.grade.feedback}",
            "",
        )


__all__ = ["Problem", "part_problems", "perturbed"]
