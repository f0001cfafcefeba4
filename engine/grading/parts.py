"""Questions in parts: each part graded in turn, with the student's own earlier values carried forward
(rounded as typed, or unrounded) to the parts that use them, and the parts' grades summed up."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from msgspec import Struct, field

from attnquiz.engine.answers import parse
from attnquiz.engine.answers.kinds import IntegerAnswer, Part, PartsAnswer, ShapeAnswer, SingleAnswer
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.answers.values import format_value
from attnquiz.engine.grading.outcome import PLAIN_WRONG, Grade, PartGrade, Status, status_of
from attnquiz.engine.grading.single import answer_value, grade_single, read_value

PART_SEPARATOR = "|"
"""Separates the parts' responses where one text answers a whole question in parts (a class's
spreadsheet cell, a piped line): ``1.93 | 0.35 | 1.36``. No answer kind uses the character."""


def grade_joined(answer: PartsAnswer, response: str) -> Grade:
    """Grade one text answering a whole question in parts: one response per part, separated by
    `PART_SEPARATOR`, each of which may start with its label (as an answer key writes it)."""
    n = len(answer.parts)
    if len(response) > parse.MAX_LENGTH * n:  # refused before it is split: each part has the usual limit
        limit = parse.MAX_LENGTH * n
        return Grade(
            "invalid",
            0.0,
            f"The response is too long ({len(response):,} characters; the limit is {limit:,}).",
            None,
            "",
        )
    pieces = [piece.strip() for piece in response.split(PART_SEPARATOR)]
    # Each piece may start with its part's label, as an answer key writes it: "(a) 1.93 | (b) 0.35".
    pieces = [
        piece[len(f"({label})") :].strip() if piece.startswith(f"({label})") else piece
        for piece, label in zip(pieces, answer.labels, strict=False)
    ] + pieces[len(answer.labels) :]
    if len(pieces) != n:
        labels = ", ".join(f"({label})" for label in answer.labels)
        return Grade(
            "invalid",
            0.0,
            f"This question has {n} parts, {labels}: give one answer per part, separated by "
            f"`{PART_SEPARATOR}` (e.g. `1.93 {PART_SEPARATOR} 0.35`).",
            None,
            response.strip()[:80],
        )
    return grade_parts(answer, pieces)


def grade_parts(answer: PartsAnswer, responses: Sequence[str], *, unanswered: str | None = None) -> Grade:
    """Grade one response per part, carrying the student's own values forward.

    A part that uses earlier parts is right when it agrees with its own answer (the one computed
    from the exact earlier answers: a student who kept every digit) or with its answer recomputed,
    by the part's own reference-numerics function, from the values the student *typed* for the
    earlier parts, right or wrong: a student who rounds (b) as asked and multiplies that by V is
    right, "Correct, from your (b) = [[0.06, 0.94], [0.20, 0.80]]", with full marks. When one of
    those earlier values was wrong (or itself right only given an earlier error), a consistent
    later part is "Correct, given your (a) = 1.92" and earns the item's ``carried_score``.

    It is right too when it agrees with its answer recomputed from the earlier parts' *unrounded*
    values: the student who types (b) rounded as asked but goes on from the (b) they computed, before
    rounding it, from their own (a). That unrounded value is whatever answer the typed (b) agrees
    with (its exact answer, or one recomputed from the student's values, typed or unrounded), and
    the typed value itself where it agrees with none: "Correct, given your unrounded (b) = 0.76743".

    A named mistake of an earlier part is named there only: the later part's listed mistakes
    describe slips from the right earlier values, so they are not compared when its target was
    recomputed from a wrong one. An unreadable (invalid) or empty earlier response carries
    nothing: the parts that use it are graded with its exact value.

    ``unanswered``: the feedback of a part left empty, where the question was left part-way (a
    session's), instead of the usual "the response is empty"; such a part earns nothing.
    """
    if len(responses) != len(answer.parts):
        raise ValueError(
            f"{len(answer.parts)} parts need {len(answer.parts)} responses, not {len(responses)}"
        )
    chain = _Chain({p.label: answer_value(p.answer) for p in answer.parts})
    graded: list[PartGrade] = []
    for part, response in zip(answer.parts, responses, strict=True):
        if unanswered is not None and not response.strip():
            left = Grade("wrong", 0.0, unanswered, None, "")  # not unreadable: not given, it earns nothing
            graded.append(PartGrade(part.label, left, part.answer, {}, part.weight))
            continue
        result, from_error, targets = _grade_part(part, response, chain, answer.carried_score)
        graded.append(result)
        if result.grade.status == "invalid":
            continue
        read = read_value(part.answer, response)
        if read is None:
            continue
        chain.typed[part.label] = read
        chain.shown[part.label] = result.grade.read_as or format_value(read, part.answer.tolerance)
        if result.grade.status != "correct" or from_error:
            chain.slipped.add(part.label)
        chain.kept[part.label] = _kept(response, read, targets)
    return _summed(graded)


NOTHING_CARRIED = "Nothing can be carried forward from"
"""Said (with the values) when the student's earlier values are outside what a later part's method
accepts (a zero to divide by, a value too large to compute with): the part stands on its own."""


class _Chain(Struct):
    """What the student's earlier parts stand for, as the later parts are graded.

    ``typed``: each readable response's value, exactly as it was read, and ``shown``: as the feedback
    writes it (the echo of what was read); ``slipped``: the parts whose value carries an error (wrong,
    or right only given one); ``kept``: the values each part may have had before the student rounded
    it, each with whether it carries an error (see `_kept`). A part not listed stands for its exact
    value.
    """

    exact: dict[str, Any]
    typed: dict[str, Any] = field(default_factory=dict)
    shown: dict[str, str] = field(default_factory=dict)
    slipped: set[str] = field(default_factory=set)
    kept: dict[str, tuple[tuple[Any, bool], ...]] = field(default_factory=dict)


class _Target(Struct, frozen=True):
    """An answer a part is right against: ``carried`` lists the student's values it follows from
    (empty for the part's own answer), ``unrounded`` whether they are the unrounded ones."""

    answer: SingleAnswer
    carried: dict[str, str]
    from_error: bool
    unrounded: bool = False

    def given(self) -> str:
        before = "unrounded " if self.unrounded else ""
        return ", ".join(f"{before}({label}) = {value}" for label, value in self.carried.items())


_MAX_UNROUNDED = 16
"""Combinations of the earlier parts' unrounded values tried for one part (each is one recomputation)."""


def _kept(response: str, read: Any, targets: Sequence[_Target]) -> tuple[tuple[Any, bool], ...]:
    """The values a part may have had before the student rounded it: every target the response
    agrees with (the exact answer, or one recomputed from the student's values), or, where it agrees
    with none, what was typed (the best that is known of an unrounded wrong value)."""
    kept: list[tuple[Any, bool]] = []
    for target in targets:
        if grade_single(target.answer, response).status == "correct":
            value = answer_value(target.answer)
            if all(value != v for v, _ in kept):
                kept.append((value, target.from_error))
    return tuple(kept) or ((read, True),)


def _unrounded_targets(part: Part, chain: _Chain, seen: list[SingleAnswer]) -> list[_Target]:
    """The part's answers recomputed from the earlier parts' unrounded values (those not already
    in ``seen``: its own answer and the one from the typed values)."""
    import itertools

    choices = [chain.kept.get(label, ((chain.exact[label], False),)) for label in part.uses]
    out: list[_Target] = []
    for combination in itertools.islice(itertools.product(*choices), _MAX_UNROUNDED):
        values = [value for value, _ in combination]
        if all(
            label in chain.typed and value == chain.typed[label]
            for label, value in zip(part.uses, values, strict=True)
        ):
            continue  # the values as typed: that target is the typed one
        expected = _recomputed(part, values)
        if expected is None or any(expected == s for s in seen):
            continue
        seen.append(expected)
        carried = {label: _unrounded_text(value) for label, value in zip(part.uses, values, strict=True)}
        from_error = any(error for _, error in combination)
        out.append(_Target(expected, carried, from_error, unrounded=True))
    return out


def _unrounded_text(value: Any) -> str:
    """An unrounded value as the feedback names it: six significant figures, enough to tell it from
    the rounded one."""
    if isinstance(value, tuple):
        return "[" + ", ".join(_unrounded_text(v) for v in value) + "]"
    if isinstance(value, float):
        return str(format_value(value, Tolerance.sigfigs(6), grouped=False))
    return str(value)


def _grade_part(
    part: Part, response: str, chain: _Chain, carried_score: float
) -> tuple[PartGrade, bool, list[_Target]]:
    """The part's grade, whether it is right only given an earlier error (so it carries one on), and
    the targets it was compared with (its own answer first)."""
    carried = {label: chain.shown[label] for label in part.uses if label in chain.typed}
    from_error = any(label in chain.slipped for label in carried)
    targets = [_Target(part.answer, {}, False)]

    def own(
        note: str = "", alternatives: Sequence[SingleAnswer] = ()
    ) -> tuple[PartGrade, bool, list[_Target]]:
        grade = grade_single(part.answer, response, part.mistakes, alternatives=alternatives)
        if note and grade.status not in {"correct", "invalid"}:
            grade = _with_feedback(grade, f"{grade.feedback} {note}")
        return PartGrade(part.label, grade, part.answer, {}, part.weight), False, targets

    if not part.uses or part.recompute is None:
        return own()
    expected = _recomputed(part, [chain.typed.get(label, chain.exact[label]) for label in part.uses])
    if carried and expected is not None and expected != part.answer:
        targets.append(_Target(expected, carried, from_error))
    targets += _unrounded_targets(part, chain, [t.answer for t in targets])
    if len(targets) == 1:
        if carried and expected is None:
            given = ", ".join(f"({label}) = {value}" for label, value in carried.items())
            return own(f"{NOTHING_CARRIED} your {given}: the method cannot take {_that(carried)}.")
        return own()
    exact = grade_single(part.answer, response, ())
    if exact.status == "correct":  # right from the exact earlier answers: a student who kept the digits
        return PartGrade(part.label, exact, part.answer, {}, part.weight), False, targets
    others = targets[1:]
    graded_against = [(t, grade_single(t.answer, response)) for t in others]
    for target, against in graded_against:
        if against.status != "correct":
            continue
        given = target.given()
        if not target.from_error:
            grade = Grade("correct", 1.0, f"Correct, from your {given}.", None, against.read_as)
            return PartGrade(part.label, grade, target.answer, target.carried, part.weight), False, targets
        score = min(max(carried_score, 0.0), 1.0)
        earns = (
            "" if score == 1 else f" A part right only with an earlier error carried forward earns {score:g}."
        )
        grade = Grade(status_of(score), score, f"Correct, given your {given}.{earns}", None, against.read_as)
        return PartGrade(part.label, grade, target.answer, target.carried, part.weight), True, targets
    alternatives = [t.answer for t in others]
    first, against_first = graded_against[0]
    if against_first.status == "invalid":
        return PartGrade(part.label, against_first, first.answer, first.carried, part.weight), False, targets
    if not any(t.from_error for t in others):
        # The earlier values were right: the part's own answer, mistakes and all, decides (an entry
        # that follows from the student's rounded or unrounded values is not called off).
        return own(alternatives=alternatives)
    # Targets that read alike at the precision asked for are said once (the first: the typed values).
    said: dict[str, _Target] = {}
    for target in others:
        said.setdefault(target_text(target.answer), target)
    if len(said) == 1:
        that = next(iter(said))
        feedback = f"Not correct, even with your {first.given()} carried forward: that gives {that}."
    else:
        gives = " or ".join(f"{text} from your {t.given()}" for text, t in said.items())
        feedback = f"Not correct, even with your earlier values carried forward: {gives}."
    against = grade_single(first.answer, response, alternatives=[t.answer for t in targets if t is not first])
    if against.feedback != PLAIN_WRONG:  # say more only when there is more to say
        feedback += f" {against.feedback}"
    grade = Grade(against.status, against.score, feedback, against.mistake, against.read_as)
    return PartGrade(part.label, grade, first.answer, first.carried, part.weight), False, targets


def _that(carried: dict[str, str]) -> str:
    return "that value" if len(carried) == 1 else "those values"


def _recomputed(part: Part, values: Sequence[Any]) -> SingleAnswer | None:
    """The part's answer recomputed from these values of the parts it uses, or None where the
    method cannot take them (a zero to divide by, a negative variance, a value so large that the
    result overflows or cannot be written)."""
    assert part.recompute is not None
    try:
        with warnings.catch_warnings():
            # numpy warns, rather than raises, on the square root of a negative carried variance.
            warnings.simplefilter("error", RuntimeWarning)
            expected = part.answer_for(part.recompute(*values))
        expected.format()  # a target that cannot be written cannot be shown: nothing is carried
    except (ArithmeticError, ValueError, TypeError, IndexError, RuntimeWarning):
        return None
    return expected


def target_text(expected: SingleAnswer) -> str:
    """A recomputed target as the feedback states it: at the precision asked for, and said to be
    rounded where it is, so that the arithmetic the feedback states holds ("your (b) = 0.88 ...
    gives 0.76"; "your (a) = 1.9 ... gives 0.35 to 2 decimal places")."""
    text = expected.format()
    if isinstance(expected, IntegerAnswer | ShapeAnswer):
        if len(text) > _LONGEST_TARGET and isinstance(expected, IntegerAnswer):
            return f"about {format_value(float(expected.value), Tolerance.sigfigs(6))}"
        return text
    written = read_value(expected, text)
    # None: beyond what a response may be (1e300), written in scientific notation as it is held.
    if written is None or _written_exactly(answer_value(expected), written):
        return text
    return f"{text} ({expected.tolerance.describe()})"


def _written_exactly(value: Any, written: Any) -> bool:
    """Whether ``written`` (a target read back from its text) is ``value`` itself, up to float noise."""
    if isinstance(value, tuple) and isinstance(written, tuple):
        return len(value) == len(written) and all(
            _written_exactly(v, w) for v, w in zip(value, written, strict=True)
        )
    if isinstance(value, int | float) and isinstance(written, int | float):
        return abs(value - written) <= 1e-9 * max(1.0, abs(value))
    return False


_LONGEST_TARGET = 40
"""Characters of a carried-forward count written in full; a longer one is written in scientific notation."""


def _with_feedback(grade: Grade, feedback: str) -> Grade:
    from msgspec.structs import replace

    return replace(grade, feedback=feedback)


def _summed(graded: Sequence[PartGrade]) -> Grade:
    total = sum(p.weight for p in graded)
    score = sum(p.weight * p.grade.score for p in graded) / total
    if all(p.grade.status == "invalid" for p in graded):
        status: Status = "invalid"
    elif score >= 1 - 1e-12:
        status, score = "correct", 1.0
    elif score == 0:
        status = "wrong"
    else:
        status = "partial"
    feedback = "\n\n".join(f"**({p.label})** {p.grade.feedback}" for p in graded)
    read_as = "; ".join(f"({p.label}) {p.grade.read_as or '?'}" for p in graded)
    mistake = next((p.grade.mistake for p in graded if p.grade.mistake is not None), None)
    return Grade(status, score, feedback, mistake, read_as, tuple(graded))


__all__ = ["NOTHING_CARRIED", "PART_SEPARATOR", "grade_joined", "grade_parts", "target_text"]
