"""The class plan: the items, and per student (or LMS variant) a seed, a variant code and questions.

Student ``n`` (1-based) of a class with master seed ``M`` gets the seed
``derive_seed(M, n)``; every item of that student's sheet is built from that one seed (the seeding
policy already gives each item its own random stream), so the variant code printed on the sheet
rebuilds the whole sheet and its key. LMS exports use the same seeds for their ``N`` variants, so
variant ``n`` of an item in Moodle is the question student ``n`` had on paper.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, overload

import numpy as np

from attnquiz.engine.answers.kinds import (
    Answer,
    ChoiceAnswer,
    ExplainAnswer,
    ExpressionAnswer,
    IntegerAnswer,
    MatrixAnswer,
    Part,
    PartsAnswer,
    ShapeAnswer,
    VectorAnswer,
    carried_share,
)
from attnquiz.engine.bank.loaded import Bank, BankItem
from attnquiz.engine.errors import QuizError
from attnquiz.engine.seeding import ORIGINAL_CODE, check_seed, derive_seed, variant_code
from attnquiz.engine.variant import Question

Paper = Literal["a4", "us-letter"]
KeyStyle = Literal["full", "brief", "grid"]
Progress = Callable[[int, int], None]
"""Called as ``progress(done, total)`` while a long export runs (the CLI draws a bar with it)."""

MAX_STUDENTS = 10_000


class ExportError(QuizError):
    """An export that cannot be made as asked (an empty selection, a scheme an LMS cannot express)."""


@dataclass(frozen=True, slots=True)
class Sheet:
    """One student's worksheet (or one LMS variant): its number, seed, variant code and questions."""

    student: int
    seed: int | None
    code: str
    questions: tuple[Question, ...]


@dataclass(frozen=True, slots=True)
class ClassPlan:
    """Everything an export writes: the bank, the selected items and one sheet per student."""

    bank: str
    title: str
    master_seed: int | None
    items: tuple[str, ...]
    sheets: Sequence[Sheet]
    skipped: tuple[str, ...] = ()

    @property
    def original(self) -> bool:
        """Whether the sheets hold the past papers' own questions rather than seeded variants."""
        return self.master_seed is None

    def by_item(self) -> list[tuple[str, Sequence[Question]]]:
        """The questions grouped by item, in sheet order (what the LMS formats write).

        With `ClassSheets` each group builds its questions as they are read, so an LMS file of a
        thousand variants never holds them all.
        """
        if isinstance(self.sheets, ClassSheets):
            return [(item, self.sheets.of_item(i)) for i, item in enumerate(self.items)]
        return [(item, [sheet.questions[i] for sheet in self.sheets]) for i, item in enumerate(self.items)]


class ClassSheets(Sequence[Sheet]):
    """Every student's sheet, built when it is read and not kept: a class of any size costs the
    memory of one sheet (a whole bank for a thousand students would be hundreds of MB).

    Reading the same sheet twice builds it twice, with the same result (its seed fixes it), except the
    first student's, which is kept.
    """

    def __init__(self, entries: tuple[BankItem, ...], master_seed: int | None, students: int) -> None:
        self.entries = entries
        self.master_seed = master_seed
        self.students = students
        self._originals: tuple[Question, ...] | None = None
        self._first: Sheet | None = None

    def __len__(self) -> int:
        return self.students

    @overload
    def __getitem__(self, index: int) -> Sheet: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Sheet]: ...
    def __getitem__(self, index: int | slice) -> Sheet | Sequence[Sheet]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self.students))]
        student = self._student(index)
        if self.master_seed is None:
            return Sheet(student, None, ORIGINAL_CODE, self.originals())
        if student == 1 and self._first is not None:
            return self._first
        seed = student_seed(self.master_seed, student)
        questions = tuple(entry.question(seed) for entry in self.entries)
        sheet = Sheet(student, seed, variant_code(seed), questions)
        if student == 1:
            # Built by `plan_class` to fail before any file is begun, and read again by every export:
            # kept (one sheet), so that it is built once (issue 28).
            self._first = sheet
        return sheet

    def _student(self, index: int) -> int:
        """The 1-based student number of a (possibly negative) index."""
        if index < 0:
            index += self.students
        if not 0 <= index < self.students:
            raise IndexError(f"no student {index + 1} in a class of {self.students}")
        return index + 1

    def originals(self) -> tuple[Question, ...]:
        """The past papers' own questions (the same on every sheet), built once."""
        if self._originals is None:
            self._originals = tuple(entry.original() for entry in self.entries)
        return self._originals

    def of_item(self, position: int) -> Sequence[Question]:
        """Item ``position``'s question for every student, built when read."""
        return _ItemQuestions(self, position)


class _ItemQuestions(Sequence[Question]):
    def __init__(self, sheets: ClassSheets, position: int) -> None:
        self.sheets = sheets
        self.entry = sheets.entries[position]
        self.position = position

    def __len__(self) -> int:
        return len(self.sheets)

    @overload
    def __getitem__(self, index: int) -> Question: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Question]: ...
    def __getitem__(self, index: int | slice) -> Question | Sequence[Question]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        student = self.sheets._student(index)
        if self.sheets.master_seed is None:
            return self.sheets.originals()[self.position]
        return self.entry.question(student_seed(self.sheets.master_seed, student))

    def __iter__(self) -> Iterator[Question]:
        return (self[i] for i in range(len(self)))


def student_seed(master_seed: int, student: int) -> int:
    """The seed of student ``student`` (1-based) in a class with this master seed."""
    return derive_seed(check_seed(master_seed), student)


def select_items(
    bank: Bank,
    *,
    items: Sequence[str] = (),
    topics: Sequence[str] = (),
    count: int | None = None,
    master_seed: int | None = None,
    original: bool = False,
    per_topic: int | None = None,
) -> tuple[tuple[BankItem, ...], tuple[str, ...]]:
    """The items a sheet holds, in bank order, and the ids left out for having no original.

    ``items`` and ``topics`` filter (an item is kept if it is named or in a named topic);
    ``per_topic`` then draws that many items of each topic and ``count`` that many items in all,
    the same for the whole class, from ``master_seed``.
    With ``original``, items the user did not name are skipped when they have no past-paper
    instance; a named one without it is an error.
    """
    for item_id in items:
        bank.get(item_id)  # an unknown id is an error that suggests close ids
    for topic in topics:
        bank.check_topic(topic)  # an unknown topic is an error that suggests close ones
    chosen = [
        entry
        for entry in bank.items
        if (not items and not topics) or entry.id in items or entry.topic in topics
    ]
    skipped: list[str] = []
    if original:
        for entry in chosen:
            if not entry.has_original and entry.id in items:
                entry.original()  # raises NoOriginalError, which says why
        skipped = [e.id for e in chosen if not e.has_original]
        chosen = [e for e in chosen if e.has_original]
    if not chosen:
        raise ExportError(f"no items of bank {bank.name!r} match the selection")
    if per_topic is not None:
        chosen = _per_topic(chosen, per_topic, master_seed)
    if count is not None:
        if count < 1:
            raise ExportError(f"--count must be at least 1, not {count}")
        if count < len(chosen):
            rng = np.random.default_rng(derive_seed(master_seed or 0, "items"))
            keep = set(rng.choice(len(chosen), size=count, replace=False).tolist())
            chosen = [e for i, e in enumerate(chosen) if i in keep]
    return tuple(chosen), tuple(skipped)


def _per_topic(chosen: list[BankItem], per_topic: int, master_seed: int | None) -> list[BankItem]:
    """``per_topic`` items of each topic (all of a smaller one), drawn from the master seed, in bank order."""
    if per_topic < 1:
        raise ExportError(f"items per topic must be at least 1, not {per_topic}")
    rng = np.random.default_rng(derive_seed(master_seed or 0, "topics"))
    topics: dict[str, list[int]] = {}
    for index, entry in enumerate(chosen):
        topics.setdefault(entry.topic, []).append(index)
    keep: set[int] = set()
    for indices in topics.values():  # topics in bank order, so the draw does not depend on a set's order
        if len(indices) <= per_topic:
            keep.update(indices)
        else:
            keep.update(indices[i] for i in rng.choice(len(indices), size=per_topic, replace=False).tolist())
    return [entry for index, entry in enumerate(chosen) if index in keep]


def plan_class(
    bank: Bank,
    *,
    students: int,
    master_seed: int | None,
    items: Sequence[str] = (),
    topics: Sequence[str] = (),
    count: int | None = None,
    per_topic: int | None = None,
    progress: Progress | None = None,
) -> ClassPlan:
    """The class: the items chosen, and every student's sheet (built when read, see `ClassSheets`);
    ``master_seed`` None means the past papers' own questions. ``progress`` hears of the items chosen."""
    if not 1 <= students <= MAX_STUDENTS:
        raise ExportError(f"the number of students must be 1 to {MAX_STUDENTS}, not {students}")
    if master_seed is not None:
        check_seed(master_seed)
    chosen, skipped = select_items(
        bank,
        items=items,
        topics=topics,
        count=count,
        master_seed=master_seed,
        original=master_seed is None,
        per_topic=per_topic,
    )
    sheets = ClassSheets(chosen, master_seed, students)
    if master_seed is None:
        sheets.originals()  # a past paper that cannot be built fails here, before any file is begun
    else:
        sheets[0]  # likewise the first student's variants
    if progress is not None:
        progress(1, 1)
    return ClassPlan(bank.name, bank.title, master_seed, tuple(e.id for e in chosen), sheets, skipped)


__all__ = [
    "ClassPlan",
    "ClassSheets",
    "ExportError",
    "KeyStyle",
    "Paper",
    "Progress",
    "Sheet",
    "answer_space",
    "concept_instructions",
    "key_points_heading",
    "part_label",
    "parts_instructions",
    "plan_class",
    "ruled_lines",
    "select_items",
    "sheet_instructions",
    "student_seed",
    "working_space",
]


def answer_space(answer: Answer) -> str:
    """The height of the answer line's box on a printed sheet: a line, or room for a vector or a matrix."""
    if isinstance(answer, MatrixAnswer):
        return f"{0.6 + 0.7 * answer.shape[0]:.1f}cm"
    if isinstance(answer, VectorAnswer):
        return "1.0cm"
    return "0.9cm"


def working_space(answer: Answer) -> str:
    """Room to work on a printed sheet, by kind of answer: none for a tick box, a little for a shape
    or a count (one multiplication), most for a computed number, vector or matrix (several steps).

    Modest on purpose: a whole bank on one sheet must stay a sensible number of pages.
    """
    if isinstance(answer, ChoiceAnswer):
        return "0cm"
    if isinstance(answer, ShapeAnswer):
        return "1.0cm"
    if isinstance(answer, IntegerAnswer):
        return "1.8cm"
    if isinstance(answer, MatrixAnswer):
        return f"{2.2 + 0.4 * answer.shape[0]:.1f}cm"
    if isinstance(answer, VectorAnswer):
        return "2.6cm"
    return "2.4cm"


RULED_WORDS_PER_LINE = 9
"""Handwritten words a ruled line of a worksheet holds (about 17 cm at a sensible hand)."""
MIN_RULED_LINES = 4
MAX_RULED_LINES = 14


def ruled_lines(answer: ExplainAnswer) -> int:
    """How many ruled lines a concept question gets on paper: room for half as much again as the
    model answer says (students write larger and less tightly), within 4 to 14 lines."""
    words = len(answer.value.split()) + sum(len(p.split()) for p in answer.points) // 4
    wanted = -(-words * 3 // (2 * RULED_WORDS_PER_LINE))  # ceil(1.5 * words / words per line)
    return max(MIN_RULED_LINES, min(MAX_RULED_LINES, wanted))


def concept_instructions(answer: ExplainAnswer) -> str:
    """What a concept question asks for on paper or in an LMS (its own instructions are the terminal's)."""
    return f"Answer in your own words, in a few sentences; a good answer makes {len(answer.points)} points."


def key_points_heading(answer: ExplainAnswer) -> str:
    """How a key introduces a concept question's key points: what a mark is worth."""
    return f"Key points (a mark each, {len(answer.points)} in all)"


def sheet_instructions(answer: Answer) -> str:
    """What to do, phrased for paper, as Markdown with TeX: what to write, in maths, never how to
    type it (no ``d^2`` or ``[[a, b], [c, d]]``: a pen writes $d^2$ and a matrix as a matrix);
    fill in a circle or tick boxes for a choice question (said before its options)."""
    from attnquiz.engine.formula.tex import symbol_tex
    from attnquiz.engine.markup import tex as markup

    if isinstance(answer, ExplainAnswer):
        return markup.escape_markdown(concept_instructions(answer))
    if isinstance(answer, ChoiceAnswer):
        if answer.multiple:
            return markup.escape_markdown(f"Tick all that apply. {answer.scoring_rule()}")
        return "Fill in one circle."
    if isinstance(answer, ExpressionAnswer):
        names = ", ".join(f"${symbol_tex(name)}$" for name in answer.symbols)
        return f"Write a formula in {names}; any equivalent form is right."
    if isinstance(answer, MatrixAnswer):
        rows, columns = answer.shape
        return f"Write the ${rows} \\times {columns}$ matrix, each entry {answer.tolerance.describe()}."
    if isinstance(answer, VectorAnswer):
        return f"Write the {len(answer.values)} entries of the vector, each {answer.tolerance.describe()}."
    if isinstance(answer, PartsAnswer):
        return parts_instructions(answer)
    return markup.escape_markdown(answer.instructions())


def parts_instructions(answer: PartsAnswer) -> str:
    """What a sheet says before part (a) of a question in parts (Markdown): a part that uses an
    earlier one is marked with the student's own earlier answer."""
    # The promise follows the item's carried_score: full marks for a carried error is "one slip costs
    # marks once", a share is said as that share, and none is no promise at all.
    score = answer.carried_score
    if not any(p.uses for p in answer.parts) or score <= 0:
        return "Answer each part."
    carried = "Answer each part. A part that uses an earlier one is marked with your own earlier answer"
    if score >= 1:
        return f"{carried} (error carried forward), so one slip costs marks once."
    return (
        f"{carried} (error carried forward): right from a wrong earlier answer, it earns "
        f"{carried_share(score)} its marks."
    )


def part_label(part: Part) -> str:
    """A part's label and weight as a sheet prints them before its prompt (Markdown): ``**(a)**
    *[2 marks]*`` (a part's weight is what `quiz grade` gives it)."""
    marks = f"{part.weight:g} mark{'' if part.weight == 1 else 's'}"
    return f"**({part.label})** *\\[{marks}\\]*"
