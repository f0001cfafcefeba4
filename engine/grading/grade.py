"""Grading: a response to a question becomes a Grade (status, score, feedback, the mistake recognised).

One scoring function serves every caller (the terminal session, ``quiz answer``, class grading
and the exports' answer keys). The order of the checks, for every kind:

1. **invalid**: the response cannot be read as the kind asked for (empty, unreadable, an unknown
   name, a number where a vector is asked). It costs nothing, is never compared with mistakes, and
   the feedback says what was expected.
2. **correct** within the answer's tolerance.
3. **precision too low**: a number that agrees with the answer as far as its own digits go, but
   gives fewer digits than asked (1.9 for 1.9281 with 2 decimal places asked). It is wrong, and it
   is not taken for a method mistake, since its digits are those of the right method. Two
   exceptions, where the response is a listed mistake: it equals the mistake's value exactly
   (``[[2, 3], [2, 3]]`` for whole-number mistakes, written without trailing zeros), or the answer
   is an exact count (whose trailing zeros may be real digits).
4. the variant's **listed mistakes**, compared at the answer's tolerance; the first match names the
   mistake and gives its feedback (score 0 unless the mistake carries one).
5. **generic slips**, when no listed mistake matched: a sign error, a power of ten, a percentage
   given as a number, a transposed matrix, the dimensions of a shape in reverse order.
6. otherwise **wrong**, saying which entries are off, or that the length or shape is wrong.

Generic slips come back as a `Mistake` with one of the tags in ``GENERIC_TAGS``, so that stored
attempts can count them like the listed ones. Multiple-select items score by their scheme (see
`choice_score`) and are ``partial`` when the score is strictly between 0 and 1.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal, cast

from attnquiz.engine.answers import (
    formula_tree,
    parse,
    read_choices,
    read_formulas,
    read_matrices,
    read_numbers,
    read_shapes,
)
from attnquiz.engine.answers.kinds import (
    Answer,
    ChoiceAnswer,
    CodeAnswer,
    ExplainAnswer,
    ExpressionAnswer,
    IntegerAnswer,
    MatrixAnswer,
    Mistake,
    NumericAnswer,
    Part,
    PartsAnswer,
    ShapeAnswer,
    SingleAnswer,
    VectorAnswer,
)
from attnquiz.engine.answers.rounding import ROUNDED_EARLY
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.answers.values import Formula, MistakeValue, format_value
from attnquiz.engine.markup import tex as markup

if TYPE_CHECKING:
    from attnquiz.engine.variant import Question

Status = Literal["correct", "partial", "wrong", "invalid", "unscored"]
"""``unscored``: a response to a concept question (`ExplainAnswer`), kept as written and never
scored by its content; the student rates it themselves (``rating``) and a teacher may mark it."""

PRECISION = "precision-too-low"
SIGN = "sign-error"
POWER_OF_TEN = "power-of-ten"
PERCENT = "percent-as-number"
TRANSPOSED = "transposed"
REVERSED = "dims-reversed"
GENERIC_TAGS = (PRECISION, SIGN, POWER_OF_TEN, PERCENT, TRANSPOSED, REVERSED, ROUNDED_EARLY)
"""Tags of the slips recognised for any item, in addition to each variant's listed mistakes.

``ROUNDED_EARLY`` comes with the variant (`attnquiz.engine.answers.rounding`): only the generator knows the
intermediates its answer is computed from."""

_MAX_POWER = 12  # off by up to 10^12: beyond that a match is more likely chance than a slip


@dataclass(frozen=True, slots=True)
class Grade:
    """The outcome of grading one response.

    ``score`` is 0..1 (0 for wrong and invalid unless a recognised mistake carries a score);
    ``feedback`` is Markdown with TeX maths in the `attnquiz.engine.markup.tex` subset; ``read_as`` is plain
    text echoing how the response was read ("" when nothing could be read).
    """

    status: Status
    score: float
    feedback: str
    mistake: Mistake | None
    read_as: str
    # A question in parts: each part's grade, in order (the fields above sum them up).
    parts: tuple[PartGrade, ...] = ()
    # A concept question (status ``unscored``): the student's own rating of their answer, once given
    # ("again", "hard", "good" or "easy"; None while unrated). It drives the review schedule.
    rating: str | None = None

    @property
    def counts(self) -> bool:
        """Whether the attempt counts: an invalid response costs nothing."""
        return self.status != "invalid"

    @property
    def scored(self) -> bool:
        """Whether the attempt has a score by its content (a concept question's never has)."""
        return self.status not in {"invalid", "unscored"}

    def rated(self, rating: str | None) -> Grade:
        """This (unscored) grade with the student's own rating of their answer."""
        from dataclasses import replace

        if rating is not None and rating not in SELF_RATINGS:
            raise ValueError(f"a self-rating is one of {', '.join(SELF_RATINGS)}, not {rating!r}")
        return replace(self, rating=rating)

    def to_json(self) -> dict[str, Any]:
        """The grade as ``quiz answer --json`` and the session logs show it."""
        data: dict[str, Any] = {
            "status": self.status,
            "score": self.score,
            "feedback": self.feedback,
            "mistake": self.mistake.tag if self.mistake is not None else None,
            "read_as": self.read_as,
        }
        if self.parts:
            data["parts"] = [p.to_json() for p in self.parts]
        if self.status == "unscored":
            data["rating"] = self.rating
        return data


SELF_RATINGS = ("again", "hard", "good", "easy")
"""What a student may rate their own answer to a concept question (FSRS's four ratings, in order)."""


@dataclass(frozen=True, slots=True)
class PartGrade:
    """One part's grade, with what it was graded against.

    ``expected`` is the answer the response was compared with: the part's own, or the one recomputed
    from the student's earlier values, which ``carried_forward`` then lists (label → the value used).
    """

    label: str
    grade: Grade
    expected: SingleAnswer
    carried_forward: dict[str, str]
    weight: float = 1.0

    def to_json(self) -> dict[str, Any]:
        """The part's grade as ``quiz answer --json`` prints it."""
        grade = self.grade
        return {
            "label": self.label,
            "status": grade.status,
            "score": grade.score,
            "feedback": grade.feedback,
            "mistake": grade.mistake.tag if grade.mistake is not None else None,
            "read_as": grade.read_as,
            "expected": self.expected.json_value(),
            "expected_text": self.expected.format(),
            "carried_forward": dict(self.carried_forward) or None,
        }


PLAIN_WRONG = "Not correct: that is not the answer, within the precision asked for."
"""The feedback of a wrong answer that no mistake or slip explains."""


def grade(question: Question, response: str) -> Grade:
    """Grade a response to a question (its answer, and its variant's listed mistakes)."""
    return grade_answer(question.answer, response, question.variant.mistakes)


def formula_reading(answer: Answer, response: str) -> str | None:
    """How a response to a formula answer is read, written back as a formula (``12d^2+13d`` is
    ``12*d^2 + 13*d``), so that the student can check it before it is graded; None when ``answer``
    is not a formula or the response cannot be read (grading it says why)."""
    if not isinstance(answer, ExpressionAnswer):
        return None
    tree = read_formulas.formula(response, answer.symbols)
    if isinstance(tree, parse.Invalid):
        return None
    return formula_tree.formula_text(tree)


def grade_answer(
    answer: Answer,
    response: str,
    mistakes: Sequence[Mistake] = (),
    *,
    alternatives: Sequence[SingleAnswer] = (),
) -> Grade:
    """Grade a response against an answer, naming the first of ``mistakes`` it matches.

    ``alternatives``: other answers of the same kind that a part in a chain accepts (recomputed from
    the student's own earlier values); a vector's or matrix's entry that agrees with one of them is
    not called off in the feedback.
    """
    if isinstance(answer, NumericAnswer | IntegerAnswer):
        return _grade_number(answer, response, mistakes)
    if isinstance(answer, VectorAnswer):
        others = [a.values for a in alternatives if isinstance(a, VectorAnswer)]
        return _grade_vector(answer, response, mistakes, others)
    if isinstance(answer, MatrixAnswer):
        others_rows = [a.rows for a in alternatives if isinstance(a, MatrixAnswer)]
        return _grade_matrix(answer, response, mistakes, others_rows)
    if isinstance(answer, ShapeAnswer):
        return _grade_shape(answer, response, mistakes)
    if isinstance(answer, ExpressionAnswer):
        return _grade_expression(answer, response, mistakes)
    if isinstance(answer, PartsAnswer):
        return _grade_joined(answer, response)
    if isinstance(answer, ExplainAnswer):
        return grade_explain(answer, response)
    if isinstance(answer, CodeAnswer):
        from attnquiz.engine.code.grading import grade_code  # runs the code: imported only for code

        verdict = grade_code(answer, response, mistakes)
        return Grade(verdict.status, verdict.score, verdict.feedback, verdict.mistake, verdict.read_as)
    return _grade_choice(answer, response, mistakes)


UNSCORED_FEEDBACK = "Not scored: compare your answer with the model answer and its key points."


def grade_explain(answer: ExplainAnswer, response: str) -> Grade:
    """A response to a concept question: kept as written (``read_as``), never scored by its content.

    An empty response is allowed (the student thought it through). A text beyond the length limit
    is invalid, as a response of any kind is (it costs nothing, and nothing is cut off unsaid), so
    that what is stored stays bounded.
    """
    if len(response) > EXPLAIN_MAX_LENGTH:  # refused unread, as a response of every kind is
        why = f"The answer is too long ({len(response):,} characters; the limit is {EXPLAIN_MAX_LENGTH:,})."
        return Grade("invalid", 0.0, why, None, "")
    return Grade("unscored", 0.0, UNSCORED_FEEDBACK, None, response.strip())


EXPLAIN_MAX_LENGTH = 4000
"""The longest response to a concept question that is kept (characters)."""


# ---------------------------------------------------------------------------------------------
# Questions in parts, with error carried forward
# ---------------------------------------------------------------------------------------------

PART_SEPARATOR = "|"
"""Separates the parts' responses where one text answers a whole question in parts (a class's
spreadsheet cell, a piped line): ``1.93 | 0.35 | 1.36``. No answer kind uses the character."""


def _grade_joined(answer: PartsAnswer, response: str) -> Grade:
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


@dataclass(slots=True)
class _Chain:
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


@dataclass(frozen=True, slots=True)
class _Target:
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
        if grade_answer(target.answer, response).status == "correct":
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
        grade = grade_answer(part.answer, response, part.mistakes, alternatives=alternatives)
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
    exact = grade_answer(part.answer, response, ())
    if exact.status == "correct":  # right from the exact earlier answers: a student who kept the digits
        return PartGrade(part.label, exact, part.answer, {}, part.weight), False, targets
    others = targets[1:]
    graded_against = [(t, grade_answer(t.answer, response)) for t in others]
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
    against = grade_answer(first.answer, response, alternatives=[t.answer for t in targets if t is not first])
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
    from dataclasses import replace

    return replace(grade, feedback=feedback)


def answer_value(answer: SingleAnswer) -> Any:
    """The value an answer stands for, in the form `read_value` gives a response of its kind."""
    if isinstance(answer, NumericAnswer | IntegerAnswer):
        return answer.value
    if isinstance(answer, VectorAnswer):
        return answer.values
    if isinstance(answer, MatrixAnswer):
        return answer.rows
    if isinstance(answer, ShapeAnswer):
        return answer.dims
    if isinstance(answer, ExpressionAnswer):
        return answer.formula
    return answer.correct_letters


def read_value(answer: SingleAnswer, response: str) -> Any:
    """The value a response was read as, in the answer's kind (None where it cannot be read)."""
    if isinstance(answer, NumericAnswer | IntegerAnswer):
        number = read_numbers.number(
            response, allow_percent=isinstance(answer, NumericAnswer) and answer.allow_percent
        )
        return None if isinstance(number, parse.Invalid) else number.value
    if isinstance(answer, VectorAnswer | MatrixAnswer):
        found = read_matrices.structure(response)
        if isinstance(found, parse.Invalid):
            return None
        if isinstance(found, parse.Number):
            return None
        flat, matrix = _split(found)
        if isinstance(answer, VectorAnswer):
            rows = list(matrix) if matrix is not None else [flat]
            if len(rows) != 1 and not all(len(r) == 1 for r in rows):
                return None
            return tuple(v.value for v in _flat(rows))
        if matrix is None:
            return None
        return tuple(tuple(v.value for v in row) for row in matrix)
    if isinstance(answer, ShapeAnswer):
        found_shape = read_shapes.shape(response)
        return None if isinstance(found_shape, parse.Invalid) else found_shape
    if isinstance(answer, ExpressionAnswer):
        tree = read_formulas.formula(response, answer.symbols)
        return None if isinstance(tree, parse.Invalid) else Formula(formula_tree.formula_text(tree), tree)
    letters = read_choices.letters(response, answer.letters, multiple=answer.multiple)
    return None if isinstance(letters, parse.Invalid) else letters


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


# ---------------------------------------------------------------------------------------------
# Formulas
# ---------------------------------------------------------------------------------------------


def _grade_expression(answer: ExpressionAnswer, response: str, mistakes: Sequence[Mistake]) -> Grade:
    from attnquiz.engine.answers import symbolic

    tree = read_formulas.formula(response, answer.symbols)
    if isinstance(tree, parse.Invalid):
        return _invalid(answer, tree.reason, tree.read_as)
    read = formula_tree.formula_text(tree)
    if symbolic.equivalent(tree, answer.formula.tree):
        # A code span: the formula's * would otherwise be read as emphasis ("N(12d^2 + 13*d)").
        return _correct(read, "Correct." if read == answer.value else f"Correct: that is `{answer.value}`.")
    for mistake in mistakes:
        if isinstance(mistake.value, Formula) and symbolic.equivalent(tree, mistake.value.tree):
            return _named(mistake, read)
    negated: formula_tree.Tree = ("neg", tree)
    if symbolic.agrees(negated, answer.formula.tree):
        return _slip(SIGN, Formula(read, tree), "The terms are right but the sign is wrong.", read)
    return _wrong("Not correct: that formula is not equal to the answer.", read)


# ---------------------------------------------------------------------------------------------
# Outcomes
# ---------------------------------------------------------------------------------------------


def _invalid(answer: Answer, reason: str, read_as: str = "") -> Grade:
    # Feedback is Markdown, the instructions plain text: "3*d, powers as d**2" must not turn into
    # emphasis when the feedback is shown.
    return Grade("invalid", 0.0, f"{reason} {markup.escape_markdown(answer.instructions())}", None, read_as)


def _correct(read_as: str, feedback: str = "Correct.") -> Grade:
    return Grade("correct", 1.0, feedback, None, read_as)


def _wrong(feedback: str, read_as: str, mistake: Mistake | None = None) -> Grade:
    return Grade("wrong", 0.0, feedback, mistake, read_as)


def _named(mistake: Mistake, read_as: str) -> Grade:
    """The grade for a listed mistake: wrong, or partial/correct when the item gives it credit."""
    score = min(max(mistake.score, 0.0), 1.0)
    return Grade(status_of(score), score, mistake.feedback, mistake, read_as)


def status_of(score: float) -> Status:
    """The status a score from 0 to 1 earns: correct at 1, wrong at 0, partial between."""
    return "correct" if score >= 1 else "wrong" if score <= 0 else "partial"


def _slip(tag: str, value: MistakeValue, feedback: str, read_as: str) -> Grade:
    return _wrong(feedback, read_as, Mistake(tag, value, feedback))


def _entries_list(positions: Sequence[str]) -> str:
    """'entry 2 is', 'entries 2 and 3 are', 'entries 1, 2 and 4 are'."""
    if len(positions) == 1:
        return f"entry {positions[0]} is"
    return f"entries {', '.join(positions[:-1])} and {positions[-1]} are"


# ---------------------------------------------------------------------------------------------
# Comparing numbers
# ---------------------------------------------------------------------------------------------


def _near(tolerance: Tolerance, target: float | int, value: parse.Number) -> bool:
    """Whether a read number equals ``target`` at ``tolerance`` (exactly, where both are exact)."""
    if tolerance.mode == "exact":
        if value.exact is not None:
            return value.exact == (target if isinstance(target, int) else Fraction(target)) or (
                float(value.exact) == target
            )
        # A float result (from sqrt, say) may carry rounding noise that is not the student's doing.
        return abs(value.value - target) <= 1e-12 * max(1.0, abs(target))
    return tolerance.accepts(float(target), value.value)


def _exactly(mistake: Mistake, tolerance: Tolerance, read: Sequence[parse.Number]) -> bool:
    """Whether the response is exactly a mistake's value (then it is that mistake, not a precision slip:
    ``[[2, 3], [2, 3]]`` for a mistake of whole numbers carries no trailing zeros to show its precision).

    Not for an early-rounding slip written with fewer digits than asked (``2`` for 1.928 whose tanh
    values rounded to one place give 2.0): rounding the final answer explains that better.
    """
    if mistake.tag == ROUNDED_EARLY and any(_coarser_than_asked(tolerance, n) for n in read):
        return False
    values = [n.value for n in read]
    flat: list[float] = []
    stack: list[Any] = [mistake.value]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):
            stack.extend(reversed(item))
        elif isinstance(item, int | float) and not isinstance(item, bool):
            flat.append(float(item))
        else:
            return False
    return len(flat) == len(values) and all(
        abs(m - v) <= 1e-9 * max(1.0, abs(m)) for m, v in zip(flat, values, strict=True)
    )


def _coarser_than_asked(tolerance: Tolerance, value: parse.Number, target: float | None = None) -> bool:
    """Whether a number is written with fewer digits than the tolerance asks for (near ``target``)."""
    if value.last_place is None or value.value == 0:
        return False
    unit = 10.0 ** (value.last_place - (2 if value.percent else 0))
    return 0.5 * unit > tolerance.half_width(value.value if target is None else target)


def _too_coarse(tolerance: Tolerance, target: float, value: parse.Number) -> bool:
    """A number written with fewer digits than asked whose digits agree with the target's rounding."""
    if value.last_place is None or not _coarser_than_asked(tolerance, value, target):
        return False
    unit = 10.0 ** (value.last_place - (2 if value.percent else 0))
    # Half a unit of its last place (and float noise): the answer rounded at the response's precision.
    return abs(value.value - target) <= 0.5 * unit * (1 + 1e-9)


def _scaled(tolerance: Tolerance, target: float, value: parse.Number, power: int) -> bool:
    """Whether ``value`` is ``target`` times 10**power (compared after undoing the scale)."""
    descaled = parse.Number(value.value * 10.0**-power, None, value.text)
    return _near(tolerance, target, descaled)


def _resolved(tolerance: Tolerance, target: float) -> bool:
    """Whether the tolerance tells ``target`` apart from zero (so that -t or 10t is a real difference)."""
    return target != 0 and abs(target) > 2 * tolerance.half_width(target)


def _number_slip(answer: NumericAnswer | IntegerAnswer, value: parse.Number) -> Grade | None:
    """A generic slip that explains a wrong number, if one does."""
    target, tolerance, read = answer.value, answer.tolerance, value.echo()
    if not _resolved(tolerance, target):
        return None
    negated = parse.Number(-value.value, -value.exact if value.exact is not None else None, value.text)
    if _near(tolerance, target, negated):
        return _slip(
            SIGN, value.value, "The size is right but the sign is wrong: check the sign of each step.", read
        )
    if value.value == 0:
        return None
    # Only the power of ten nearest the ratio can match, so one comparison decides. A difference
    # of logarithms, not the log of a ratio: 5e-324/16 underflows to 0 and 1e300/1e-9 overflows.
    power = round(math.log10(abs(value.value)) - math.log10(abs(target)))
    if power == 0 or abs(power) > _MAX_POWER or not _scaled(tolerance, target, value, power):
        return None
    if power == 2 and abs(target) <= 1:
        allow_percent = isinstance(answer, NumericAnswer) and answer.allow_percent
        # The student's own number, rescaled: the feedback must not reveal more digits than given.
        fraction = _plain(value.value / 100)
        how = f"{fraction} or {_plain(value.value)}%" if allow_percent else fraction
        feedback = (
            f"That looks like a percentage without its sign: write {how}."
            if allow_percent
            else f"That looks like a percentage: the answer is a fraction, so write it as {how}."
        )
        return _slip(PERCENT, value.value, feedback, read)
    return _slip(POWER_OF_TEN, value.value, _power_feedback(answer, value, power), read)


def _power_feedback(answer: NumericAnswer | IntegerAnswer, value: parse.Number, power: int) -> str:
    size = abs(power)
    if isinstance(answer, IntegerAnswer) and power < 0 and size % 3 == 0 and "." in value.text:
        return (
            "A point is a decimal point: group the thousands of a count with commas or spaces "
            "(589,824 or 589 824), not with points."
        )
    times = {1: "10", 2: "100", 3: "1000"}.get(size, f"$10^{{{size}}}$")
    direction = "large" if power > 0 else "small"
    return (
        f"The digits are right but the size is not: your answer is {times} times too {direction}. "
        "Check the units and where the decimal point goes."
    )


def _plain(value: float) -> str:
    return parse.format_plain(value)


# ---------------------------------------------------------------------------------------------
# Numbers and counts
# ---------------------------------------------------------------------------------------------


def _grade_number(answer: NumericAnswer | IntegerAnswer, response: str, mistakes: Sequence[Mistake]) -> Grade:
    allow_percent = isinstance(answer, NumericAnswer) and answer.allow_percent
    value = read_numbers.number(response, allow_percent=allow_percent)
    if isinstance(value, parse.Invalid):
        return _invalid(answer, value.reason, value.read_as)
    read = value.echo()
    tolerance, target = answer.tolerance, answer.value
    if _near(tolerance, target, value):
        if value.is_literal or isinstance(answer, IntegerAnswer):
            return _correct(read)
        return _correct(read, f"Correct: that is {answer.format()} {_precision_words(tolerance)}.")
    listed = next(
        (m for m in mistakes if isinstance(m.value, int | float) and _near(tolerance, m.value, value)), None
    )

    # A count's trailing zeros may be real digits (589,820), so there a listed mistake comes first.
    if listed is not None and (tolerance.mode == "exact" or _exactly(listed, tolerance, [value])):
        return _named(listed, read)
    if _too_coarse(tolerance, target, value) and _rounded_count(tolerance, value):
        feedback = (
            f"Your digits agree with the answer, but the precision is too low: give the answer "
            f"{_precision_words(tolerance)}."
        )
        return _slip(PRECISION, value.value, feedback, read)
    if listed is not None:
        return _named(listed, read)
    slip = _number_slip(answer, value)
    if slip is not None:
        return slip
    if isinstance(answer, IntegerAnswer) and not float(value.value).is_integer():
        # A count cannot be 3.5: the wrong kind of answer, like a scalar for a vector (a listed
        # misconception or a recognised slip that gives exactly this number was named above).
        return _invalid(answer, f"This answer is a count, so it is a whole number; {read} is not.", read)
    return _wrong(PLAIN_WRONG, read)


def _rounded_count(tolerance: Tolerance, value: parse.Number) -> bool:
    """Whether a number can be the answer rounded, as far as an exact count goes: it keeps at least
    two significant digits (590,000 for 589,824). A count of one digit and zeros (60 for 64) is
    not a rounding: its one digit hardly agrees with anything, and the slip is elsewhere."""
    if tolerance.mode != "exact" or not float(value.value).is_integer():
        return True
    return len(str(abs(int(value.value))).rstrip("0")) >= 2


def _precision_words(tolerance: Tolerance) -> str:
    return "as a whole number, exactly" if tolerance.mode == "exact" else tolerance.describe()


# ---------------------------------------------------------------------------------------------
# Vectors and matrices
# ---------------------------------------------------------------------------------------------


def _all_near(tolerance: Tolerance, targets: Sequence[Any], values: Sequence[parse.Number]) -> bool:
    return len(targets) == len(values) and all(
        isinstance(t, int | float) and _near(tolerance, t, v) for t, v in zip(targets, values, strict=True)
    )


def _flat(values: Sequence[Sequence[parse.Number]]) -> list[parse.Number]:
    return [v for row in values for v in row]


def _coarse_entries(
    tolerance: Tolerance, targets: Sequence[float], values: Sequence[parse.Number]
) -> list[int] | None:
    """Indices of entries written too coarsely, when every other entry is right; else None."""
    coarse: list[int] = []
    for index, (target, value) in enumerate(zip(targets, values, strict=True)):
        if _near(tolerance, target, value):
            continue  # a right entry is never "too coarse", however few digits it needs (768)
        if not _too_coarse(tolerance, target, value):
            return None
        coarse.append(index)
    return coarse or None


def _grade_vector(
    answer: VectorAnswer,
    response: str,
    mistakes: Sequence[Mistake],
    alternatives: Sequence[tuple[float, ...]] = (),
) -> Grade:
    found = read_matrices.structure(response)
    n = len(answer.values)
    if isinstance(found, parse.Invalid):
        return _invalid(answer, found.reason, found.read_as)
    if isinstance(found, parse.Number):
        return _invalid(answer, f"Expected a vector of {n} numbers, but read a single number.", found.echo())
    values: tuple[parse.Number, ...]
    flat, matrix = _split(found)
    if matrix is not None:
        rows = list(matrix)
        if len(rows) == 1 or all(len(r) == 1 for r in rows):
            values = tuple(_flat(rows))  # a single row or a single column is a vector
        else:
            shown = parse.echo_structure(found)
            return _invalid(
                answer,
                f"Expected a vector of {n} numbers, but read a {len(rows)}×{len(rows[0])} matrix.",
                shown,
            )
    else:
        values = flat
    read = parse.echo_structure(values)
    tolerance = answer.tolerance
    if _all_near(tolerance, answer.values, values):
        return _correct(read)
    listed = next(
        (m for m in mistakes if isinstance(m.value, tuple) and _all_near(tolerance, m.value, values)), None
    )
    if listed is not None and _exactly(listed, tolerance, values):
        return _named(listed, read)
    if len(values) == n:
        coarse = _coarse_entries(tolerance, answer.values, values)
        if coarse is not None:
            where = _entries_list([str(i + 1) for i in coarse])
            feedback = (
                f"Your digits agree with the answer, but {where} written with too few digits: give every "
                f"entry {tolerance.describe()}."
            )
            return _slip(PRECISION, tuple(v.value for v in values), feedback, read)
    if listed is not None:
        return _named(listed, read)
    if len(values) != n:
        hint = ""
        if len(values) > n and _GROUPED_IN_A_LIST.search(response):
            hint = " Inside a list a comma separates entries: write 589824, not 589,824."
        return _wrong(f"The answer has {n} entries; you gave {len(values)}.{hint}", read)
    negated = [parse.Number(-v.value, None, v.text) for v in values]
    if _all_near(tolerance, answer.values, negated) and any(_resolved(tolerance, t) for t in answer.values):
        feedback = "Every entry has the wrong sign: check the sign of each step."
        return _slip(SIGN, tuple(v.value for v in values), feedback, read)
    off = [
        str(i + 1)
        for i, (t, v) in enumerate(zip(answer.values, values, strict=True))
        if not _near(tolerance, t, v)
        and not any(len(a) == n and _near(tolerance, a[i], v) for a in alternatives)
    ]
    return _wrong(_off_message(off, n), read)


_GROUPED_IN_A_LIST = re.compile(r"(?<![\d.])\d{1,3},\d{3}(?![\d.])")  # 589,824 inside [768, 589,824]


def _split(found: parse.Vector | parse.Matrix) -> tuple[parse.Vector, parse.Matrix | None]:
    """A read list as either a vector (flat) or a matrix (rows)."""
    if found and isinstance(found[0], tuple):
        return (), found
    return cast(parse.Vector, found), None


def _off_message(off: Sequence[str], total: int) -> str:
    if not off:  # every entry agrees with some accepted answer, but not all with the same one
        return (
            "Not correct: each entry follows from some of your earlier values, but not all from the same "
            "ones: work every entry from the same values."
        )
    if len(off) == total and total > 1:
        return "Not correct: every entry is off."
    where = _entries_list(off)
    return f"Not correct: {where} off."


def _grade_matrix(
    answer: MatrixAnswer,
    response: str,
    mistakes: Sequence[Mistake],
    alternatives: Sequence[tuple[tuple[float, ...], ...]] = (),
) -> Grade:
    found = read_matrices.structure(response)
    r, c = answer.shape
    if isinstance(found, parse.Invalid):
        return _invalid(answer, found.reason, found.read_as)
    if isinstance(found, parse.Number):
        return _invalid(answer, f"Expected a {r}×{c} matrix, but read a single number.", found.echo())
    rows: list[tuple[parse.Number, ...]]
    flat, matrix = _split(found)
    if matrix is not None:
        rows = list(matrix)
    else:
        if r == 1 and len(flat) == c:
            rows = [tuple(flat)]
        elif c == 1 and len(flat) == r:
            rows = [(v,) for v in flat]
        else:
            return _invalid(
                answer,
                f"Expected a {r}×{c} matrix, but read a list of {len(flat)} numbers: separate the rows "
                "with `;` or new lines, or write [[a, b], [c, d]].",
                parse.echo_structure(tuple(flat)),
            )
    read = parse.echo_structure(tuple(rows))
    tolerance = answer.tolerance
    shape = (len(rows), len(rows[0]))
    if shape == (r, c) and all(_all_near(tolerance, t, v) for t, v in zip(answer.rows, rows, strict=True)):
        return _correct(read)
    listed = next((m for m in mistakes if _matrix_matches(tolerance, m.value, rows)), None)
    if listed is not None and _exactly(listed, tolerance, _flat(rows)):
        return _named(listed, read)
    if shape == (r, c):
        coarse = _coarse_entries(tolerance, [t for row in answer.rows for t in row], _flat(rows))
        if coarse is not None:
            where = _entries_list([f"({i // c + 1}, {i % c + 1})" for i in coarse])
            feedback = (
                f"Your digits agree with the answer, but {where} written with too few digits: give every "
                f"entry {tolerance.describe()}."
            )
            return _slip(PRECISION, tuple(tuple(v.value for v in row) for row in rows), feedback, read)
    if listed is not None:
        return _named(listed, read)
    as_values = tuple(tuple(v.value for v in row) for row in rows)
    if shape == (c, r) and _matrix_matches(tolerance, _transpose(answer.rows), rows):
        feedback = (
            "That is the transpose of the answer: rows and columns are swapped. Check which index "
            "runs along the rows (queries along rows, keys along columns)."
        )
        return _slip(TRANSPOSED, as_values, feedback, read)
    if shape != (r, c):
        return _wrong(f"The answer is a {r}×{c} matrix; you gave a {shape[0]}×{shape[1]} one.", read)
    others = [a for a in alternatives if len(a) == r and all(len(row) == c for row in a)]
    off = [
        f"({i + 1}, {j + 1})"
        for i, (target_row, row) in enumerate(zip(answer.rows, rows, strict=True))
        for j, (t, v) in enumerate(zip(target_row, row, strict=True))
        if not _near(tolerance, t, v) and not any(_near(tolerance, a[i][j], v) for a in others)
    ]
    return _wrong(_off_message(off, r * c), read)


def _transpose(rows: Sequence[Sequence[float]]) -> tuple[tuple[float, ...], ...]:
    return tuple(zip(*rows, strict=True))


def _matrix_matches(tolerance: Tolerance, target: Any, rows: Sequence[Sequence[parse.Number]]) -> bool:
    if not isinstance(target, tuple) or len(target) != len(rows):
        return False
    return all(isinstance(t, tuple) and _all_near(tolerance, t, v) for t, v in zip(target, rows, strict=True))


# ---------------------------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------------------------


def _canonical(dims: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(read_shapes.canonical_symbol(d) if isinstance(d, str) else d for d in dims)


def _declared(answer: ShapeAnswer, mistakes: Sequence[Mistake]) -> dict[str, int | None]:
    """Every name the question uses, canonical, with the number it stands for (None: a symbol).

    The answer declares the names its prompt uses; names in listed mistakes are readable too, so
    that every mistake can be typed back.
    """
    declared = {read_shapes.canonical_symbol(name): value for name, value in answer.symbols}
    for name, _ in answer.products:
        declared.setdefault(read_shapes.canonical_symbol(name), None)
    for mistake in mistakes:
        if isinstance(mistake.value, tuple):
            for d in mistake.value:
                for factor in _factors(d):
                    declared.setdefault(factor, None)
    return declared


def _factors(dim: Any) -> list[str]:
    """The names of a dimension, canonical: one for a name, several for a product (h*d_k)."""
    if not isinstance(dim, str):
        return []
    return [read_shapes.canonical_symbol(f.strip()) for f in dim.split("*") if not f.strip().isdigit()]


Monomial = tuple[int, tuple[str, ...]]


def _substituted(
    dims: Sequence[Any], declared: dict[str, int | None], products: dict[str, str] | None = None
) -> tuple[Monomial, ...]:
    """Each dimension as a product in normal form, (coefficient, sorted names): a name that stands
    for a number counts as that number, and a name stated as a product of others (d_model = h·d_k)
    as that product, so that [B, T, h*d_k] and [B, T, d_model] agree."""
    return tuple(_monomial(d, declared, products or {}) for d in dims)


def _monomial(
    dim: Any, declared: dict[str, int | None], products: dict[str, str], depth: int = 0
) -> Monomial:
    if isinstance(dim, int):
        return dim, ()
    coefficient, names = 1, list[str]()
    for factor in str(dim).split("*"):
        factor = factor.strip()
        if factor.isdigit():
            coefficient *= int(factor)
            continue
        key = read_shapes.canonical_symbol(factor)
        value = declared.get(key)
        if value is not None:
            coefficient *= value
        elif key in products and depth < 8:  # a product of products, bounded (a cycle stops here)
            inner, more = _monomial(products[key], declared, products, depth + 1)
            coefficient *= inner
            names += more
        else:
            names.append(key)
    return coefficient, tuple(sorted(names))


def _unreadable_names(
    answer: ShapeAnswer, found: tuple[Any, ...], declared: dict[str, int | None]
) -> str | None:
    """Why a response's dimension names cannot be graded for this item (None when they can).

    A name the question does not use is unreadable rather than wrong, as an unknown function name
    is for numbers (`banana`, `t` for `T`); so is a name for a size the student was asked to work
    out, where every dimension of the answer is a number.
    """
    names = [f for d in found if isinstance(d, str) for f in d.split("*") if not f.strip().isdigit()]
    strange = [d for d in names if read_shapes.canonical_symbol(d) not in declared]
    spelled = [name for name, _ in answer.symbols]
    if strange:
        if not spelled:
            return (
                f"{strange[0]} is not a number: this question gives every size, so each dimension is "
                "a number."
            )
        meant = read_shapes.similar_symbols(strange[0], spelled)
        guess = f" Did you mean {' or '.join(meant)}?" if meant else ""
        return (
            f"This question has no dimension named {strange[0]} (names are case-sensitive; it uses "
            f"{', '.join(spelled)}).{guess}"
        )
    if not answer.symbolic:
        unknown = [d for d in names if declared.get(read_shapes.canonical_symbol(d)) is None]
        if unknown:
            return (
                f"This question asks for the sizes as numbers, and {unknown[0]} is one to work out: "
                "write its value."
            )
    return None


def _grade_shape(answer: ShapeAnswer, response: str, mistakes: Sequence[Mistake]) -> Grade:
    found = read_shapes.shape(response)
    if isinstance(found, parse.Invalid):
        return _invalid(answer, found.reason, found.read_as)
    read = parse.echo_shape(found)
    declared = _declared(answer, mistakes)
    unreadable = _unreadable_names(answer, found, declared)
    if unreadable is not None:
        return _invalid(answer, unreadable, read)
    products = {read_shapes.canonical_symbol(name): text for name, text in answer.products}
    given, target = _substituted(found, declared, products), _substituted(answer.dims, declared, products)
    if given == target:
        return _correct(read)
    for mistake in mistakes:
        if isinstance(mistake.value, tuple) and _substituted(mistake.value, declared, products) == given:
            return _named(mistake, read)
    n = len(target)
    if len(given) != n:
        return _wrong(f"The answer has {n} dimensions; you gave {len(given)}.", read)
    if n > 1 and given[::-1] == target:
        feedback = "Those are the right dimensions in reverse order: check which axis comes first."
        return _slip(REVERSED, found, feedback, read)
    off = [str(i + 1) for i, (t, g) in enumerate(zip(target, given, strict=True)) if t != g]
    where = (
        f"dimension {off[0]} is" if len(off) == 1 else f"dimensions {', '.join(off[:-1])} and {off[-1]} are"
    )
    return _wrong(f"Not correct: {where} off.", read)


# ---------------------------------------------------------------------------------------------
# Choice
# ---------------------------------------------------------------------------------------------


def choice_score(answer: ChoiceAnswer, selected: frozenset[str]) -> float:
    """The score of a set of ticked letters under the item's scheme.

    With C the correct letters, S the ticked ones and N the number of options:

    - ``net`` (the default; PrairieLearn's net-correct, Canvas's rule): +1/|C| per right tick,
      -1/|C| per wrong tick, floored at 0: max(0, (|S∩C| - |S∖C|) / |C|);
    - ``all-or-nothing``: 1 if S = C, else 0;
    - ``each-answer``: each option is a true/false decision worth 1/N: 1 - (|S∖C| + |C∖S|) / N.

    A single-choice item scores 1 or 0 whatever its scheme: a wrong pick is simply wrong.
    """
    unknown = selected - set(answer.letters)
    if unknown:
        raise ValueError(f"letters {', '.join(sorted(unknown))} are not options of this item")
    correct = answer.correct_letters
    if selected == correct:
        return 1.0
    if not answer.multiple or answer.scoring == "all-or-nothing":
        return 0.0
    right, wrong = len(selected & correct), len(selected - correct)
    if answer.scoring == "net":
        return max(0.0, (right - wrong) / len(correct))
    missed = len(correct - selected)
    return 1.0 - (wrong + missed) / len(answer.options)


def _grade_choice(answer: ChoiceAnswer, response: str, mistakes: Sequence[Mistake]) -> Grade:
    selected = read_choices.letters(response, answer.letters, multiple=answer.multiple)
    if isinstance(selected, parse.Invalid):
        return _invalid(answer, selected.reason, selected.read_as)
    read = ", ".join(sorted(selected))
    score = choice_score(answer, selected)
    if score == 1.0:
        return _correct(read)
    status: Status = "partial" if score > 0 else "wrong"
    mistake = next((m for m in mistakes if isinstance(m.value, frozenset) and m.value == selected), None)
    lines: list[str] = []
    if mistake is not None:
        lines.append(mistake.feedback)
    for letter, option in zip(answer.letters, answer.options, strict=True):
        if letter in selected and not option.correct:
            verdict = "is not the answer" if not answer.multiple else "is false"
            lines.append(f"**{letter}** {verdict}" + (f": {option.why}" if option.why else "."))
    missed = len(answer.correct_letters - selected)
    if answer.multiple and missed:
        lines.append(f"{missed} true option{'s are' if missed != 1 else ' is'} not ticked.")
    if status == "partial":
        lines.insert(0, f"Partly right: score {score:.2f}.")
    return Grade(status, score, "\n\n".join(lines), mistake, read)


__all__ = [
    "GENERIC_TAGS",
    "PART_SEPARATOR",
    "Grade",
    "PartGrade",
    "Status",
    "choice_score",
    "grade",
    "grade_answer",
    "grade_parts",
    "read_value",
    "status_of",
]
