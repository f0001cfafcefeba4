"""Everything the terminal shows, drawn with rich (colour only on a terminal, and never with NO_COLOR).

Every console here is a `TerminalConsole`: bank text, history rows and what a user typed are data,
so rich markup in them is never interpreted (``[/]`` prints as it is) and their control sequences
(an OSC 52 clipboard write, a cursor move) never reach the terminal; characters the output cannot
encode fall back to ASCII spellings (`attnquiz.terminal`).

Text is folded here rather than by rich, so that every command breaks lines the same way: never
inside a short bracketed group (a vector, a shape, a function's arguments), never just before an
operator, continuation lines hanging under their first word, and no trailing spaces.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.segment import Segment
from rich.text import Text

from attnquiz.folding import put
from attnquiz.line_breaks import NBSP
from attnquiz.terminal import plain_mode, strip_control, unboxed
from attnquiz.wording import LABELS, MARKS, SEP, kind_name

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from attnquiz.engine.answers.kinds import Answer, ExplainAnswer, Part
    from attnquiz.engine.grading.outcome import Grade
    from attnquiz.engine.variant import Question


class TerminalConsole(Console):
    """A rich console for untrusted text: no markup, no emoji codes, no highlighting, no control sequences.

    The text of every segment is cleaned as it is written, after rich has laid it out, so tables,
    rules and folded paragraphs are all covered; rich's own style and cursor codes are separate
    (control) segments or are added from the style, and stay.

    Under ``quiz --plain`` (`attnquiz.terminal.plain_mode`) neither stays: no style is written (no
    colour, bold or hyperlink escape), no control segment (no cursor move, no clearing), and any
    box-drawing character left in the text is spelled in ASCII. What is drawn is chosen for a
    screen reader where it is built (`rule`, the tables of `markdown_terminal`, the figures of
    `figure_terminal`); this is the guarantee that nothing else slips through.
    """

    def __init__(self, **options: Any) -> None:
        options.setdefault("highlight", False)
        super().__init__(markup=False, emoji=False, **options)

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        if plain_mode():
            return super()._render_buffer(
                Segment(unboxed(strip_control(segment.text))) for segment in buffer if not segment.control
            )
        return super()._render_buffer(
            segment if segment.control else Segment(strip_control(segment.text), segment.style)
            for segment in buffer
        )


console = TerminalConsole(soft_wrap=False)
errors = TerminalConsole(stderr=True)

STYLES = {
    "correct": "bold green",
    "partial": "bold yellow",
    "wrong": "bold red",
    "invalid": "bold magenta",
    "unscored": "bold cyan",
    "skipped": "dim",
    "unanswered": "dim",
}


def print_markdown(target: Console, markdown: str, **options: Any) -> None:
    """`attnquiz.markdown_terminal.print_markdown`, imported when first used: it brings the Markdown
    reader and its renderer (a tenth of `quiz list`'s start-up), and `quiz list` prints no Markdown."""
    from attnquiz.markdown_terminal import print_markdown as draw

    draw(target, markdown, **options)


def rule(target: Console, title: str) -> None:
    """A section heading: a dim rule with ``title`` at its left, or under ``--plain`` the title
    alone on its line (a screen reader would read a rule as a row of dashes)."""
    from rich.rule import Rule

    if plain_mode():
        put(target, title)
    elif target.width < len(title) + 4:
        # A rule would cut its title (and a variant code with it): the title is folded instead.
        put(target, Text(title, style="dim"), hang=2)
    else:
        target.print(Rule(title, align="left", style="dim"))


def markdown_paragraphs(markdown: str) -> list[str]:
    """Markdown text as terminal paragraphs (blank lines dropped: the terminal is dense enough)."""
    from attnquiz.engine.markup.plain import to_terminal

    rendered = to_terminal(markdown, spoken=plain_mode())
    return [p for p in rendered.split("\n\n") if p.strip()]


# ---------------------------------------------------------------------------------------------
# Items and questions
# ---------------------------------------------------------------------------------------------


def kind_label(answer: Answer) -> str:
    """The answer kind as a user reads it."""
    from attnquiz.engine.answers.kinds import ChoiceAnswer

    return kind_name(answer.kind, multiple=isinstance(answer, ChoiceAnswer) and answer.multiple)


class RichLines:
    """`attnquiz.item_listing`'s lines drawn by rich: where `attnquiz.light_lines` declines."""

    def __init__(self, target: Console) -> None:
        self.target = target
        self.width = target.width

    def blank(self) -> None:
        """An empty line."""
        self.target.print()

    def line(self, runs: Sequence[tuple[str, str]]) -> None:
        """``runs`` on one line as they are."""
        self.target.print(Text.assemble(*runs))

    def put(self, runs: Sequence[tuple[str, str]], *, hang: int = 0) -> None:
        """``runs`` folded to the width (`attnquiz.folding.put`)."""
        put(self.target, Text.assemble(*runs), hang=hang)


def variant_label(question: Question, *, seed: bool = True) -> str:
    """``variant 3NP1-C5EW (seed 7)``, or ``original`` for the past paper's own question."""
    if question.is_original:
        return "original"
    label = f"variant{NBSP}{question.code}"
    return f"{label} (seed{NBSP}{question.seed})" if seed else label


def question_header(question: Question, *, seed: bool = True, variant: bool = True) -> Text:
    """Source, item and variant code on one line (the seed too, unless ``seed`` is False)."""
    header = Text()
    header.append(question.source, style="bold cyan")
    header.append(f"{SEP}{question.item_id}", style="dim")
    if variant:
        header.append(f"{SEP}{variant_label(question, seed=seed)}", style="dim")
    return header


def print_question(
    target: Console, question: Question, *, variant: bool = True, seed: bool = True, note: bool = True
) -> None:
    """The header, the prompt, the options of a choice item, the precision asked for, and the note.

    Args:
        target: Where to print.
        question: The question.
        variant: Show the variant code in the header (a session shows it in its rule instead).
        seed: Show the variant's seed beside its code.
        note: Show the item's note for students (never its note for instructors). A session shows
            it after the answer: notes can name the facts a question asks for.
    """
    from attnquiz.engine.answers.kinds import ChoiceAnswer
    from attnquiz.engine.markup.plain import to_terminal

    put(target, question_header(question, seed=seed, variant=variant))
    target.print()
    print_markdown(target, question.variant.stem, folder=question.folder)
    print_figures(target, question, "prompt")
    for part in question.variant.parts:  # a question in parts: each part under the stem, shown once
        target.print()
        print_part(target, part)
    if question.variant.parts:
        target.print()
    answer = question.answer
    if isinstance(answer, ChoiceAnswer):
        for letter, option in zip(answer.letters, answer.options, strict=False):
            label = f"  {letter}. "
            put(
                target,
                Text.assemble((label, "bold"), to_terminal(option.text, spoken=plain_mode())),
                hang=len(label) - 2,
            )
        target.print()
    put(target, answer.instructions(), style="italic")
    if note and question.student_note:
        print_note(target, question)


def print_part(target: Console, part: Part) -> None:
    """One part of a question in parts: its label and prompt, its options, the precision it asks for."""
    from attnquiz.engine.answers.kinds import ChoiceAnswer
    from attnquiz.engine.markup.plain import to_terminal

    label = f"({part.label}) "
    print_markdown(target, part.prompt, first=Text(label, style="bold"), hang=len(label))
    if isinstance(part.answer, ChoiceAnswer):
        for letter, option in zip(part.answer.letters, part.answer.options, strict=False):
            option_label = f"    {letter}. "
            line = Text.assemble((option_label, "bold"), to_terminal(option.text, spoken=plain_mode()))
            put(target, line, hang=len(option_label))
    put(target, " " * len(label) + part.answer.instructions(), style="italic", hang=len(label))


def print_note(target: Console, question: Question, *, indent: int = 0) -> None:
    """The item's note for students, dim (a note for instructors is only for `quiz show`)."""
    if question.student_note:
        put(target, " " * indent + f"Note: {question.student_note}", style="dim")


def print_solution(
    target: Console, question: Question, *, title: str = "Worked solution", indent: int = 0
) -> None:
    """The worked solution with this variant's numbers, one hanging step per number."""

    margin = " " * indent
    target.print(Text(margin + title, style="bold"))
    parts = question.variant.parts
    # A question in parts lists each part's steps under its own label (its solution holds them all).
    own = question.variant.solution[: len(question.variant.solution) - sum(len(p.solution) for p in parts)]
    for number, step in enumerate(own, 1):
        label = f"{number}. "
        print_markdown(
            target,
            step,
            first=Text(margin + label),
            hang=len(label),
            indent=len(margin),
            folder=question.folder,
        )
    for part in question.variant.parts:
        target.print(Text(f"{margin}({part.label}) {part.answer.format()}", style="bold"))
        for number, step in enumerate(part.solution, 1):
            label = f"{number}. "
            print_markdown(
                target,
                step,
                first=Text(margin + "  " + label),
                hang=len(label),
                indent=len(margin) + 2,
                folder=question.folder,
            )
    print_figures(target, question, "solution", indent=indent)


def print_figures(target: Console, question: Question, where: str, *, indent: int = 0) -> None:
    """The variant's figures that belong ``where`` ("prompt" or "solution"), drawn for ``target``."""
    figures = [f for f in question.variant.figures if f.where == where]
    if figures:
        from attnquiz.figure_terminal import print_figures as draw

        draw(target, figures, indent=indent)


def print_model_answer(target: Console, answer: ExplainAnswer, *, indent: int = 0) -> None:
    """A concept question's model answer, then its key points as a list, as one block."""
    from attnquiz.engine.markup.plain import to_terminal

    margin = " " * indent
    target.print(Text(margin + "Model answer", style="bold green"))
    for paragraph in markdown_paragraphs(answer.value):
        put(target, "\n".join(margin + "  " + line for line in paragraph.splitlines()))
    target.print(Text(margin + "Key points", style="bold green"))
    for point in answer.points:
        # Each point hangs under its first word, so the list reads as a list when folded.
        put(
            target,
            Text(margin + "  • ") + Text(" ".join(to_terminal(point, spoken=plain_mode()).split())),
            hang=2,
        )


def show_question(question: Question, *, with_answer: bool, with_solution: bool) -> None:
    """A question as `quiz show` prints it."""
    from attnquiz.engine.answers.kinds import ExplainAnswer
    from attnquiz.engine.markup.plain import to_terminal

    print_question(console, question)
    if question.instructor_note:  # quiz show is an inspection tool: the instructors' note, labelled so
        put(console, f"Note for instructors: {question.instructor_note}", style="dim")
    if with_answer:
        console.print()
        if isinstance(question.answer, ExplainAnswer):
            print_model_answer(console, question.answer)
        else:
            put(console, Text.assemble(("Answer: ", "bold green"), question.answer.format()))
    if with_solution and (question.variant.solution or question.variant.parts):
        console.print()
        print_solution(console, question, title="Solution")
        listed = [("", question.answer, question.variant.mistakes)] + [
            (f"({p.label}) ", p.answer, p.mistakes) for p in question.variant.parts
        ]
        if any(mistakes for _, _, mistakes in listed):
            console.print()
            console.print(Text("Known mistakes", style="bold"))
            for where, answer, mistakes in listed:
                for mistake in mistakes:
                    line = Text.assemble(
                        "  " + where,
                        (mistake.format(answer), "yellow"),
                        (f"  {mistake.tag}: ", "dim"),
                        to_terminal(mistake.feedback, spoken=plain_mode()),
                    )
                    put(console, line, hang=2)


# ---------------------------------------------------------------------------------------------
# Grades
# ---------------------------------------------------------------------------------------------


def score_text(value: float) -> str:
    """A score as people write it: 1, 0, 0.67."""
    return f"{value:.2f}".rstrip("0").rstrip(".") if value % 1 else f"{int(value)}"


def verdict(grade: Grade) -> Text:
    """``✗ Wrong  ·  mistake: no-sqrt-dk``: the status, the score when it is partial, the named mistake."""
    status = grade.status
    line = Text(f"{MARKS[status]} {LABELS[status]}", style=STYLES[status])
    if status == "partial":
        line.append(f"{SEP}score {score_text(grade.score)}", style="dim")
    if grade.mistake is not None:
        line.append(f"{SEP}mistake: ", style="dim")
        line.append(grade.mistake.tag, style="bold yellow")
    return line


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


def print_grade(target: Console, grade: Grade, response: str, *, echo: bool = False) -> None:
    """The verdict, how the response was read, and the feedback.

    Args:
        target: Where to print.
        grade: The grade.
        response: What was typed.
        echo: Always show how the response was read (`quiz answer`); otherwise only when the
            reading says more than the response (an expression's value, a reordered list).
    """
    if grade.parts:  # a question in parts: a verdict per part, then its reading and feedback
        for part in grade.parts:
            line = Text(f"({part.label}) ", style="bold")
            put(target, line + verdict(part.grade), hang=4)
            if part.grade.read_as:
                put(target, f"    read as: {part.grade.read_as}", style="dim", hang=13)
            for remark in grade_remarks(part.grade):
                put(target, "    " + remark, hang=4)
        if len(grade.parts) > 1:  # the whole question; a part answered on its own has its verdict above
            put(target, Text(f"Score {score_text(grade.score)}", style="bold"))
        return
    if grade.status == "invalid":
        put(target, Text.assemble((f"{MARKS['invalid']} {LABELS['invalid']}", STYLES["invalid"])))
    else:
        put(target, verdict(grade))
    if grade.status == "unscored":  # a concept answer is kept as typed, not read as a value
        if echo:
            put(target, f"your answer: {grade.read_as or '(none: thought through)'}", style="dim", hang=13)
    elif grade.read_as and (echo or not _same_reading(grade.read_as, response)):
        put(target, f"read as: {grade.read_as}", style="dim", hang=9)
    for remark in grade_remarks(grade):
        put(target, remark)
    if grade.status == "invalid":
        put(target, "Nothing was counted; try again.", style="dim")
