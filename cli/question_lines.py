"""A question, its answer and a grade as styled lines: drawn once, by rich or without it.

`quiz show` and `quiz answer` print a few styled lines; importing rich's console to print them cost
more than a tenth of their start-up (issue 43). So what they print is drawn here, on a `Writer`:
`attnquiz.light_lines` prints it without rich wherever it can print the very bytes rich would, and
`attnquiz.display.RichLines` draws it everywhere else, and wherever a session draws a question. A
piece of text is a sequence of runs, each a text and the style rich would give it; where rich's
text had a base style with spans over it, the runs carry the styles combined (`combined`), which
rich renders to the same bytes.

No rich here: this module is on the path of a question drawn without it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from attnquiz.line_breaks import NBSP
from attnquiz.terminal import plain_mode
from attnquiz.wording import LABELS, MARKS, SEP

if TYPE_CHECKING:
    from attnquiz.engine.answers.kinds import ExplainAnswer, Part
    from attnquiz.engine.grading.outcome import Grade
    from attnquiz.engine.variant import Question

Run = tuple[str, str]
"""A piece of text and its style as rich names it (``"bold cyan"``; ``""`` for none)."""

STYLES = {
    "correct": "bold green",
    "partial": "bold yellow",
    "wrong": "bold red",
    "invalid": "bold magenta",
    "unscored": "bold cyan",
    "skipped": "dim",
    "unanswered": "dim",
}
"""The style of each verdict."""
_COLOURS = frozenset(("black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"))


class Writer(Protocol):
    """Where a question is drawn: folded lines of runs, bank Markdown and the variant's figures."""

    width: int

    def blank(self) -> None:
        """An empty line."""

    def line(self, runs: Sequence[Run]) -> None:
        """``runs`` on one line as they are."""

    def put(self, runs: Sequence[Run], *, hang: int = 0) -> None:
        """``runs`` folded to the width, continuation lines ``hang`` cells in."""

    def markdown(
        self, text: str, *, first: Sequence[Run] = (), hang: int = 0, indent: int = 0, folder: str = ""
    ) -> None:
        """Bank Markdown (`attnquiz.markdown_terminal.print_markdown`), ``first`` before it."""

    def figures(self, question: Question, where: str, *, indent: int = 0) -> None:
        """The variant's figures that belong ``where`` ("prompt" or "solution")."""

    def rule(self, title: str) -> None:
        """A section heading (`attnquiz.display.rule`): a dim rule with ``title`` at its left."""


def combined(base: str, over: str) -> str:
    """The style rich gives text styled ``over`` inside text styled ``base``: attributes of both,
    the colour of ``over`` where it has one (``bold red`` under ``bold yellow`` is ``bold yellow``)."""
    words = over.split()
    keep_colour = not any(word in _COLOURS for word in words)
    merged = [w for w in base.split() if keep_colour or w not in _COLOURS]
    return " ".join(dict.fromkeys([*merged, *words]))


def variant_label(question: Question, *, seed: bool = True) -> str:
    """``variant 3NP1-C5EW (seed 7)``, or ``original`` for the past paper's own question."""
    if question.is_original:
        return "original"
    label = f"variant{NBSP}{question.code}"
    return f"{label} (seed{NBSP}{question.seed})" if seed else label


def header_runs(question: Question, *, seed: bool = True, variant: bool = True) -> list[Run]:
    """Source, item and variant code on one line (the seed too, unless ``seed`` is False)."""
    runs = [(question.source, "bold cyan"), (f"{SEP}{question.item_id}", "dim")]
    if variant:
        runs.append((f"{SEP}{variant_label(question, seed=seed)}", "dim"))
    return runs


def terminal_text(markdown: str) -> str:
    """Bank Markdown as one piece of terminal text (maths in Unicode, or in words under ``--plain``)."""
    from attnquiz.engine.markup.plain import to_terminal

    return to_terminal(markdown, spoken=plain_mode())


def markdown_paragraphs(markdown: str) -> list[str]:
    """Markdown text as terminal paragraphs (blank lines dropped: the terminal is dense enough)."""
    return [p for p in terminal_text(markdown).split("\n\n") if p.strip()]


def draw_question(
    out: Writer, question: Question, *, variant: bool = True, seed: bool = True, note: bool = True
) -> None:
    """The header, the prompt, the options of a choice item, the precision asked for, and the note.

    Args:
        out: Where to draw.
        question: The question.
        variant: Show the variant code in the header (a session shows it in its rule instead).
        seed: Show the variant's seed beside its code.
        note: Show the item's note for students (never its note for instructors). A session shows
            it after the answer: notes can name the facts a question asks for.
    """
    from attnquiz.engine.answers.kinds import ChoiceAnswer

    out.put(header_runs(question, seed=seed, variant=variant))
    out.blank()
    out.markdown(question.variant.stem, folder=question.folder)
    out.figures(question, "prompt")
    for part in question.variant.parts:  # a question in parts: each part under the stem, shown once
        out.blank()
        draw_part(out, part)
    if question.variant.parts:
        out.blank()
    answer = question.answer
    if isinstance(answer, ChoiceAnswer):
        for letter, option in zip(answer.letters, answer.options, strict=False):
            label = f"  {letter}. "
            out.put([(label, "bold"), (terminal_text(option.text), "")], hang=len(label) - 2)
        out.blank()
    out.put([(answer.instructions(), "italic")])
    if note and question.student_note:
        draw_note(out, question)


def draw_part(out: Writer, part: Part) -> None:
    """One part of a question in parts: its label and prompt, its options, the precision it asks for."""
    from attnquiz.engine.answers.kinds import ChoiceAnswer

    label = f"({part.label}) "
    out.markdown(part.prompt, first=[(label, "bold")], hang=len(label))
    if isinstance(part.answer, ChoiceAnswer):
        for letter, option in zip(part.answer.letters, part.answer.options, strict=False):
            option_label = f"    {letter}. "
            out.put([(option_label, "bold"), (terminal_text(option.text), "")], hang=len(option_label))
    out.put([(" " * len(label) + part.answer.instructions(), "italic")], hang=len(label))


def draw_note(out: Writer, question: Question, *, indent: int = 0) -> None:
    """The item's note for students, dim (a note for instructors is only for `quiz show`)."""
    if question.student_note:
        out.put([(" " * indent + f"Note: {question.student_note}", "dim")])


def draw_model_answer(out: Writer, answer: ExplainAnswer, *, indent: int = 0) -> None:
    """A concept question's model answer, then its key points as a list, as one block."""
    margin = " " * indent
    out.line([(margin + "Model answer", "bold green")])
    for paragraph in markdown_paragraphs(answer.value):
        out.put([("\n".join(margin + "  " + line for line in paragraph.splitlines()), "")])
    out.line([(margin + "Key points", "bold green")])
    for point in answer.points:
        # Each point hangs under its first word, so the list reads as a list when folded.
        out.put([(margin + "  • " + " ".join(terminal_text(point).split()), "")], hang=2)


def draw_shown(out: Writer, question: Question, *, with_answer: bool) -> None:
    """A question as `quiz show` prints it, up to its answer (the solution is `display`'s)."""
    from attnquiz.engine.answers.kinds import ExplainAnswer

    draw_question(out, question)
    if question.instructor_note:  # quiz show is an inspection tool: the instructors' note, labelled so
        out.put([(f"Note for instructors: {question.instructor_note}", "dim")])
    if with_answer:
        out.blank()
        if isinstance(question.answer, ExplainAnswer):
            draw_model_answer(out, question.answer)
        else:
            out.put([("Answer: ", "bold green"), (question.answer.format(), "")])


def score_text(value: float) -> str:
    """A score as people write it: 1, 0, 0.67."""
    return f"{value:.2f}".rstrip("0").rstrip(".") if value % 1 else f"{int(value)}"


def verdict_runs(grade: Grade) -> list[Run]:
    """``✗ Wrong  ·  mistake: no-sqrt-dk``: the status, the score when it is partial, the named mistake."""
    status = grade.status
    style = STYLES[status]
    runs = [(f"{MARKS[status]} {LABELS[status]}", style)]
    if status == "partial":
        runs.append((f"{SEP}score {score_text(grade.score)}", combined(style, "dim")))
    if grade.mistake is not None:
        runs.append((f"{SEP}mistake: ", combined(style, "dim")))
        runs.append((grade.mistake.tag, combined(style, "bold yellow")))
    return runs


def _same_reading(read_as: str, response: str) -> bool:
    """Whether echoing the reading would only repeat the response (up to spaces, commas and case)."""

    def squeeze(text: str) -> str:
        return re.sub(r"[\s,]", "", text).lower()

    return squeeze(read_as) == squeeze(response)


def grade_remarks(grade: Grade) -> list[str]:
    """The grader's feedback and the mistake's explanation, without what the verdict line already says."""
    redundant = {
        "Correct.",
        f"Partly right: score {grade.score:.2f}.",
        "Not correct: that is not the answer, within the precision asked for.",
    }
    remarks = [p for p in markdown_paragraphs(grade.feedback) if p.strip() not in redundant]
    mistake = grade.mistake
    if mistake is not None and mistake.feedback and mistake.feedback not in grade.feedback:
        remarks += markdown_paragraphs(mistake.feedback)
    return remarks


def draw_grade(out: Writer, grade: Grade, response: str, *, echo: bool = False) -> None:
    """The verdict, how the response was read, and the feedback.

    Args:
        out: Where to draw.
        grade: The grade.
        response: What was typed.
        echo: Always show how the response was read (`quiz answer`); otherwise only when the
            reading says more than the response (an expression's value, a reordered list).
    """
    if grade.parts:  # a question in parts: a verdict per part, then its reading and feedback
        for part in grade.parts:
            out.put([(f"({part.label}) ", "bold"), *verdict_runs(part.grade)], hang=4)
            if part.grade.read_as:
                out.put([(f"    read as: {part.grade.read_as}", "dim")], hang=13)
            for remark in grade_remarks(part.grade):
                out.put([("    " + remark, "")], hang=4)
        if len(grade.parts) > 1:  # the whole question; a part answered on its own has its verdict above
            out.put([(f"Score {score_text(grade.score)}", "bold")])
        return
    if grade.status == "invalid":
        out.put([(f"{MARKS['invalid']} {LABELS['invalid']}", STYLES["invalid"])])
    else:
        out.put(verdict_runs(grade))
    if grade.status == "unscored":  # a concept answer is kept as typed, not read as a value
        if echo:
            out.put([(f"your answer: {grade.read_as or '(none: thought through)'}", "dim")], hang=13)
    elif grade.read_as and (echo or not _same_reading(grade.read_as, response)):
        out.put([(f"read as: {grade.read_as}", "dim")], hang=9)
    for remark in grade_remarks(grade):
        out.put([(remark, "")])
    if grade.status == "invalid":
        out.put([("Nothing was counted; try again.", "dim")])


__all__ = [
    "STYLES",
    "Run",
    "Writer",
    "combined",
    "draw_grade",
    "draw_model_answer",
    "draw_note",
    "draw_part",
    "draw_question",
    "draw_shown",
    "grade_remarks",
    "header_runs",
    "markdown_paragraphs",
    "score_text",
    "terminal_text",
    "variant_label",
    "verdict_runs",
]
