"""What a question asks of an LMS, built once from the engine's question: the one model under the LMS writers.

`build` turns a `Question` into an `LmsQuestion`; the writers (`moodle`, `qti`, and `stack`) only
turn that into their format, and none imports another. The model says *what* is asked and how it
is marked; *how* a format writes it (XML, escaping, a platform's number limits) is the writer's.

Types (frozen dataclasses; their fields are the API, and only grow):

- `LmsQuestion`: one variant. ``question`` is the engine's `Question` (its text, name, figures and
  worked solution, which `attnquiz.engine.export.lms.question_html` renders as HTML); ``form`` is how it is
  asked (`Form`: one ``number``, a ``choice``, an ``essay``, the ``entries`` of one vector,
  matrix or shape, or ``parts``, the stem then each part's blanks); ``groups`` are its blanks
  grouped by part (one group, label "", for a question not in parts; none for an essay);
  ``limits`` are what no cloze or blank platform expresses here (`Limit`: each with the
  warning that says so, in the words of `message`); `LmsQuestion.by_hand` names those that make
  a platform matching blanks as text leave the whole question to a teacher (a formula answer; a
  shape dimension stated as a product), which `attnquiz.engine.export.lms.hand_marked` writes up.
- `Group`: one part (or the whole answer): ``label`` and ``prompt`` of the part ("" for a whole
  answer), its ``answer`` (`SingleAnswer`), the ``mistakes`` it lists as whole values, its
  ``blanks``, its ``weight`` (the part's weight; 1 for a whole answer) and its carry-forward:
  ``uses`` (the labels of the earlier parts its target is computed from) and `Group.target_for`,
  which recomputes the target from a student's earlier values by the reference numerics (the
  part's own ``recompute``), which is what a platform that can carry an error forward needs.
- `Blank`: one box to fill in: its ``target`` (a number, or a text: a symbolic dimension, a
  formula), its ``tolerance`` (`Blank.half_width` is the absolute half-width a numeric field
  takes), ``texts`` (every text it accepts when matched as text: a shape dimension's names and
  products, a formula's spellings; empty for a number, matched by value), ``wrong`` (the named
  mistakes this blank can tell apart, `Wrong`), ``weight`` (its share of the question's marks:
  the part's weight split equally over the part's blanks, normalised so that the blanks of a
  question sum to 1), for a choice, ``choice`` (the `ChoiceAnswer` whose options it shows), and
  ``also``: other values it accepts as right, the entry of a later part as a student computes it
  from the earlier parts rounded as asked (`attnquiz.engine.answers.carry.rounded_chain`), where it is
  written otherwise than the exact one.
  `Blank.accepted` lists what a platform that matches every blank as text accepts (``texts``, or
  the spellings of a number that its tolerance accepts: `attnquiz.engine.export.lms.question_html.spellings`).
- `Wrong`: a named mistake as one blank sees it: its ``tag``, the ``value`` it gives in this
  blank, its ``credit`` (0 to 1) and its ``feedback`` (Markdown with TeX, for the writer to render).

`variants_to_write` says which of an item's variants an LMS file holds (a concept question once).

A blank's ``wrong`` holds, in the mistakes' order, each mistake's value in that blank when it is
a value of the blank's kind, differs from the target (within tolerance) and from every earlier
mistake's value there (the first misconception names a value), and is not a text the blank
accepts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from attnquiz.engine.answers import read_formulas
from attnquiz.engine.answers.carry import rounded_chain
from attnquiz.engine.answers.kinds import (
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
from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.answers.values import Formula
from attnquiz.engine.export.lms import question_html as lms
from attnquiz.engine.variant import Question

Form = Literal["number", "choice", "essay", "entries", "parts"]
"""How a question is asked: one number; a choice; an essay (a concept question, marked by hand); the
entries of one vector, matrix or shape (a blank each); or in parts (the stem, then each part's blanks)."""

Target = float | int | str


@dataclass(frozen=True, slots=True)
class Limit:
    """Something a platform cannot express for a question, and the warning that says so.

    ``key`` names it for a writer's decisions; ``template`` is the warning, with ``{lms}`` for the
    platform's name (`message`)."""

    key: str
    template: str

    def message(self, lms_name: str) -> str:
        """The warning, naming the platform (Moodle, Canvas, ...)."""
        return self.template.format(lms=lms_name)


NO_CARRY_FORWARD = Limit(
    "no-carry-forward",
    "{lms} cannot carry an error forward: each part of a question in parts is marked on its own answer, "
    "so a student who slips in (a) loses the later parts that quiz would mark right given their (a)",
)
# FORMULA_AS_TEXT and PRODUCT_SPELLINGS are what a text blank would do; `build` no longer gives them
# (a formula or a product is marked by hand on such platforms: FORMULA_BY_HAND, PRODUCT_BY_HAND).
FORMULA_AS_TEXT = Limit(
    "formula-as-text",
    "{lms} compares a formula answer as text, not algebraically: the blank accepts the formula as quiz "
    "writes it and a few common spellings, and marks any other equivalent form wrong",
)
PRODUCT_SPELLINGS = Limit("product-spellings", lms.PRODUCT_SPELLINGS)
BLANK_BY_BLANK = Limit(
    "blank-by-blank",
    "{lms} gives credit blank by blank, while quiz marks a vector, matrix or shape right only when every "
    "entry is",
)
FORMULA_BY_HAND = Limit(
    "formula-by-hand",
    "{lms} cannot tell an equivalent formula from a wrong one, and a text blank would mark most right "
    "formulas wrong (d(12d+13) for 12d^2 + 13d): questions with a formula answer are marked by hand, the "
    "answer, the forms quiz accepts and the named mistakes in the grader's information; Moodle's STACK "
    "question type marks them itself (quiz export --format stack)",
)
PRODUCT_BY_HAND = Limit(
    "product-by-hand",
    "{lms} matches a shape's blanks as text, while quiz reads a dimension the question states as a "
    "product (d_model = h·d_k) in endless right spellings (h*d_k, d_k*h, 1*h*d_k, h*dₖ, ...), more than "
    "any blank lists: those questions are marked by hand, with the answer and its accepted forms in the "
    "grader's information",
)
NUMBERS_IN_DIGITS = Limit(
    "numbers-in-digits",
    "{lms} reads a number only as digits (0.75, .75, 7.5e-1; a dimension as a whole number or a name), "
    "not as a calculation: its questions ask for digits, and one who writes 3/4, sqrt(2), 768^2 or 8*64 "
    "anyway, which quiz reads, is marked wrong",
)
CHOICE_AMONG_BLANKS = Limit(
    "choice-among-blanks",
    "{lms} has no choice among the blanks of a question: a choice part would be a text blank, while quiz "
    "reads the letters in any order and spelling (C, A; ca; (A), (C)): questions in parts with a choice "
    "part are marked by hand, with every part's answer in the grader's information",
)
"""A limit of a platform whose blanks are all text (Canvas), not of a cloze (Moodle's MULTICHOICE)."""
BY_HAND = (FORMULA_BY_HAND, PRODUCT_BY_HAND)
"""The limits that make a platform which matches blanks as text leave a question to a teacher."""
MARKED_BY_HAND = Limit(
    "essay", "{lms} does not mark essay questions: a teacher marks each concept answer by hand"
)


@dataclass(frozen=True, slots=True)
class Wrong:
    """A named mistake as one blank sees it (see the module's docstring for which are kept)."""

    tag: str
    value: Target
    credit: float
    feedback: str


@dataclass(frozen=True, slots=True)
class Blank:
    """One box to fill in: what it accepts, the mistakes it names, and its share of the marks."""

    target: Target
    tolerance: Tolerance
    texts: tuple[str, ...] = ()
    wrong: tuple[Wrong, ...] = ()
    weight: float = 1.0
    choice: ChoiceAnswer | None = None
    also: tuple[Target, ...] = ()

    @property
    def numeric(self) -> bool:
        """Whether the blank is a number marked by value (not a text, not a choice)."""
        return self.choice is None and not isinstance(self.target, str)

    @property
    def as_text(self) -> bool:
        """Whether even a platform with numeric fields must match this blank as text: its target is a
        text, or a number that names and products also stand for (a shape's d_model for 512)."""
        return self.choice is None and (isinstance(self.target, str) or len(self.texts) > 1)

    def half_width(self, value: float | int | None = None) -> float:
        """The absolute half-width the tolerance allows around ``value`` (default: the target)."""
        around = self.target if value is None else value
        return self.tolerance.half_width(float(around))

    def accepted(self) -> list[str]:
        """Every text a platform that matches the blank as text accepts (the canonical one first, then
        the spellings of the values in ``also``)."""
        if self.texts:
            return list(self.texts)
        found = lms.spellings(self.target, self.tolerance)
        for value in self.also:
            found += [t for t in lms.spellings(value, self.tolerance) if t not in found]
        return found


@dataclass(frozen=True, slots=True)
class Group:
    """One part's blanks (or the whole answer's, with label ""), its weight and its carry-forward."""

    label: str
    prompt: str
    answer: SingleAnswer
    mistakes: tuple[Mistake, ...]
    blanks: tuple[Blank, ...]
    weight: float = 1.0
    uses: tuple[str, ...] = ()
    part: Part | None = field(default=None, compare=False, repr=False)

    @property
    def formula(self) -> bool:
        """Whether the answer is a formula (equal when algebraically equal)."""
        return isinstance(self.answer, ExpressionAnswer)

    @property
    def entries(self) -> bool:
        """Whether the answer is entries, a blank each (a vector, matrix or shape), not one value."""
        return isinstance(self.answer, VectorAnswer | MatrixAnswer | ShapeAnswer)

    @property
    def numbers(self) -> bool:
        """Whether the blanks are numbers marked by value (a number, a count, a vector or matrix)."""
        return isinstance(self.answer, NumericAnswer | IntegerAnswer | VectorAnswer | MatrixAnswer)

    @property
    def lists_products(self) -> bool:
        """Whether some blank lists a product's spellings (quiz reads more products than it lists)."""
        return isinstance(self.answer, ShapeAnswer) and lms.lists_products(self.answer)

    def target_for(self, earlier: Sequence[Any]) -> SingleAnswer:
        """This part's answer recomputed from earlier values (in the order of ``uses``): what a student
        who gave ``earlier`` should give here, by the reference numerics (error carried forward)."""
        if self.part is None or self.part.recompute is None:
            raise ValueError(f"part ({self.label or '-'}) uses no earlier part")
        return self.part.answer_for(self.part.recompute(*earlier))


@dataclass(frozen=True, slots=True)
class LmsQuestion:
    """One variant as an LMS is asked it (see the module's docstring)."""

    question: Question
    form: Form
    groups: tuple[Group, ...]
    limits: tuple[Limit, ...]
    carried_score: float = 1.0

    @property
    def blanks(self) -> tuple[Blank, ...]:
        """Every blank, part after part."""
        return tuple(b for g in self.groups for b in g.blanks)

    def has(self, limit: Limit) -> bool:
        """Whether the question has this limit."""
        return limit in self.limits

    @property
    def by_hand(self) -> tuple[Limit, ...]:
        """Why a platform that matches blanks as text (a Moodle cloze, Canvas) must leave this question
        to a teacher (`BY_HAND`: a formula, equal by algebra in endless forms, or a shape dimension
        stated as a product, in endless spellings); empty when its blanks list every right answer.
        A platform that decides equivalence itself (STACK) need not."""
        return tuple(limit for limit in self.limits if limit in BY_HAND)


def formula_spellings(formula: Formula | str, symbols: Sequence[str] = ()) -> list[str]:
    """Texts a text blank accepts for a formula: as quiz writes it, without spaces, with implicit
    products (12d^2 + 13d) and with ``**`` for powers; each name also without its underscore."""
    text = formula.text if isinstance(formula, Formula) else formula
    forms = [text, text.replace(" ", "")]
    implicit = re.sub(r"(?<=\d)\*(?=[A-Za-z(])", "", text)
    forms += [
        implicit,
        implicit.replace(" ", ""),
        text.replace("^", "**"),
        text.replace("^", "**").replace(" ", ""),
    ]
    for name in symbols:
        if "_" in name:
            forms += [f.replace(name, name.replace("_", "")) for f in list(forms)]
    return list(dict.fromkeys(forms))


def asked(answer: SingleAnswer) -> str:
    """What to enter in a part's blank(s), phrased for an LMS form."""
    if isinstance(answer, ExpressionAnswer):
        names = ", ".join(answer.symbols)
        example = read_formulas.example_formula(answer.symbols)
        return f"Give a formula in {names}, e.g. {example} (use * for products, ^ for powers)."
    return lms.instructions(answer)


def targets(answer: SingleAnswer) -> list[Target]:
    """The answer's blanks' targets, in order: entries row by row, dimensions, or the one value."""
    if isinstance(answer, VectorAnswer):
        return list(answer.values)
    if isinstance(answer, MatrixAnswer):
        return list(lms.entries(answer))
    if isinstance(answer, ShapeAnswer):
        return list(answer.dims)
    if isinstance(answer, ChoiceAnswer):
        return [", ".join(sorted(answer.correct_letters))]
    return [answer.value]


def _flatten(value: object) -> list[Target] | None:
    """A vector's, matrix's or shape's value as its entries, row by row (None for any other value)."""
    if not isinstance(value, tuple):
        return None
    out: list[Target] = []
    for v in value:
        if isinstance(v, tuple):
            out.extend(v)
        elif isinstance(v, int | float | str):
            out.append(v)
        else:
            return None
    return out


def _mistake_values(answer: SingleAnswer, mistake: Mistake, count: int) -> list[Target | None]:
    """What ``mistake`` gives in each of the answer's ``count`` blanks (None where it gives nothing)."""
    value = mistake.value
    if isinstance(answer, ExpressionAnswer):
        return [value.text if isinstance(value, Formula) else None]
    if isinstance(answer, NumericAnswer | IntegerAnswer):
        return [value if isinstance(value, int | float) else None]
    entries = _flatten(value)
    if entries is None or len(entries) != count:
        return [None] * count  # a wrong-length answer has no blank of its own to match
    return list(entries)


def _same(tolerance: Tolerance, target: Target, value: Target) -> bool:
    if isinstance(target, str) or isinstance(value, str):
        return target == value
    return tolerance.accepts(float(target), float(value))


def _texts(answer: SingleAnswer, target: Target) -> tuple[str, ...]:
    """What a blank accepts as text (nothing for a number, which is matched by value)."""
    if isinstance(answer, ShapeAnswer):
        return tuple(lms.dimension_texts(answer, target if isinstance(target, str) else int(target)))
    if isinstance(answer, ExpressionAnswer):
        return tuple(formula_spellings(answer.formula, answer.symbols))
    if isinstance(answer, ChoiceAnswer):
        right = sorted(answer.correct_letters)
        return tuple(dict.fromkeys([", ".join(right), ",".join(right), "".join(right), " ".join(right)]))
    return ()


def _blanks(
    answer: SingleAnswer, mistakes: Sequence[Mistake], rounded: SingleAnswer | None = None
) -> list[Blank]:
    """The blanks of one answer, each with the mistakes it can tell apart (weights set by `build`);
    ``rounded``: the part's answer as a student computes it from the rounded earlier parts, whose
    entries each blank accepts too where they differ."""
    tolerance = answer.tolerance
    goals = targets(answer)
    also: list[tuple[Target, ...]] = [() for _ in goals]
    if rounded is not None and not isinstance(answer, ChoiceAnswer | ExpressionAnswer):
        for j, (goal, other) in enumerate(zip(goals, targets(rounded), strict=True)):
            # The student types `other` as the key writes it: where that is not how the exact
            # target is written, the blank takes it too (a text blank would list no such spelling).
            if isinstance(goal, str) or isinstance(other, str):
                if goal != other:
                    also[j] = (other,)
            elif tolerance.format(float(other)) != tolerance.format(float(goal)):
                also[j] = (other,)
    wrong: list[list[Wrong]] = [[] for _ in goals]
    texts = [_texts(answer, goal) for goal in goals]
    if not isinstance(answer, ChoiceAnswer):
        for mistake in mistakes:
            for j, value in enumerate(_mistake_values(answer, mistake, len(goals))):
                goal = goals[j]
                if value is None or (isinstance(value, str) and not isinstance(goal, str)):
                    continue  # a symbolic blank takes any text; a numeric blank only numbers
                if _same(tolerance, goal, value) or str(value) in texts[j]:
                    continue
                if any(_same(tolerance, right, value) for right in also[j]):
                    continue  # right from the rounded earlier parts
                if any(_same(tolerance, earlier.value, value) for earlier in wrong[j]):
                    continue  # the first mistake with this value names it
                wrong[j].append(Wrong(mistake.tag, value, mistake.score, mistake.feedback))
    choice = answer if isinstance(answer, ChoiceAnswer) else None
    return [
        Blank(goal, tolerance, texts[j], tuple(wrong[j]), choice=choice, also=also[j])
        for j, goal in enumerate(goals)
    ]


def _weighted(groups: list[Group]) -> tuple[Group, ...]:
    """The groups with each blank's share of the question: its part's weight split over its blanks."""
    total = sum(g.weight for g in groups if g.blanks)
    return tuple(
        replace(
            group,
            blanks=tuple(replace(b, weight=group.weight / (len(group.blanks) * total)) for b in group.blanks),
        )
        for group in groups
    )


def _group(
    answer: SingleAnswer,
    mistakes: Sequence[Mistake],
    part: Part | None = None,
    rounded: SingleAnswer | None = None,
) -> Group:
    if part is None:
        return Group("", "", answer, tuple(mistakes), tuple(_blanks(answer, mistakes)))
    return Group(
        part.label,
        part.prompt,
        answer,
        tuple(mistakes),
        tuple(_blanks(answer, mistakes, rounded)),
        part.weight,
        part.uses,
        part,
    )


def variants_to_write(questions: Sequence[Question]) -> Sequence[Question]:
    """The variants of one item that an LMS gets: every one, but a concept question once (an explain
    item has one instance, so its variants are one question, which the LMS would show again and
    again and a teacher would mark in as many places)."""
    if questions and isinstance(questions[0].answer, ExplainAnswer):
        return questions[:1]
    return questions


def build(question: Question) -> LmsQuestion:
    """What ``question`` asks of an LMS: its form, its blanks by part, and what no blank platform
    expresses."""
    answer = question.answer
    if isinstance(answer, ExplainAnswer | CodeAnswer):  # code: an essay, the reference for the marker
        return LmsQuestion(question, "essay", (), (MARKED_BY_HAND,))
    limits: list[Limit] = []
    if isinstance(answer, PartsAnswer):
        chain = rounded_chain(answer)  # what a student who rounds each part as asked computes
        groups = [
            _group(p.answer, p.mistakes, p, link.target if link.differs else None)
            for p, link in zip(answer.parts, chain, strict=True)
        ]
        form: Form = "parts"
        if len(answer.parts) > 1:
            limits.append(NO_CARRY_FORWARD)
        carried = answer.carried_score
    else:
        groups = [_group(answer, question.variant.mistakes)]
        carried = 1.0
        if isinstance(answer, ExpressionAnswer):
            form = "parts"  # asked as a part of its own: the formula's blank after the stem
        elif isinstance(answer, NumericAnswer | IntegerAnswer):
            form = "number"
        elif isinstance(answer, ChoiceAnswer):
            form = "choice"
        else:
            form = "entries"
    if any(g.numbers or isinstance(g.answer, ShapeAnswer) for g in groups):
        limits.append(NUMBERS_IN_DIGITS)
    if any(g.formula for g in groups):
        limits.append(FORMULA_BY_HAND)
    if any(g.lists_products for g in groups):
        limits.append(PRODUCT_BY_HAND)
    if any(g.entries and len(g.blanks) > 1 for g in groups):
        limits.append(BLANK_BY_BLANK)
    if form == "parts" and any(g.blanks and g.blanks[0].choice is not None for g in groups):
        limits.append(CHOICE_AMONG_BLANKS)
    return LmsQuestion(question, form, _weighted(groups), tuple(limits), carried)


__all__ = [
    "BLANK_BY_BLANK",
    "BY_HAND",
    "CHOICE_AMONG_BLANKS",
    "FORMULA_AS_TEXT",
    "FORMULA_BY_HAND",
    "MARKED_BY_HAND",
    "NO_CARRY_FORWARD",
    "NUMBERS_IN_DIGITS",
    "PRODUCT_BY_HAND",
    "PRODUCT_SPELLINGS",
    "Blank",
    "Form",
    "Group",
    "Limit",
    "LmsQuestion",
    "Target",
    "Wrong",
    "asked",
    "build",
    "formula_spellings",
    "targets",
    "variants_to_write",
]
