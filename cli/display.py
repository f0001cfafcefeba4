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

from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.segment import Segment
from rich.text import Text

from attnquiz.folding import put
from attnquiz.question_lines import (
    draw_grade,
    draw_model_answer,
    draw_note,
    draw_question,
    draw_shown,
    verdict_runs,
)
from attnquiz.terminal import plain_mode, strip_control, unboxed
from attnquiz.wording import kind_name

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from attnquiz.engine.answers.kinds import Answer, ExplainAnswer
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


# ---------------------------------------------------------------------------------------------
# Items and questions
# ---------------------------------------------------------------------------------------------


def kind_label(answer: Answer) -> str:
    """The answer kind as a user reads it."""
    from attnquiz.engine.answers.kinds import ChoiceAnswer

    return kind_name(answer.kind, multiple=isinstance(answer, ChoiceAnswer) and answer.multiple)


class RichLines:
    """Lines drawn by rich (`attnquiz.item_listing`, `attnquiz.question_lines`): where
    `attnquiz.light_lines` declines, and wherever a session draws."""

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

    def markdown(
        self,
        text: str,
        *,
        first: Sequence[tuple[str, str]] = (),
        hang: int = 0,
        indent: int = 0,
        folder: str = "",
    ) -> None:
        """Bank Markdown, tables, code and images too (`attnquiz.markdown_terminal.print_markdown`)."""
        lead = Text.assemble(*first) if first else None
        print_markdown(self.target, text, first=lead, hang=hang, indent=indent, folder=folder)

    def figures(self, question: Question, where: str, *, indent: int = 0) -> None:
        """The variant's figures that belong ``where``, drawn for the terminal."""
        print_figures(self.target, question, where, indent=indent)

    def rule(self, title: str) -> None:
        """A section heading (`rule`)."""
        rule(self.target, title)


def print_question(
    target: Console, question: Question, *, variant: bool = True, seed: bool = True, note: bool = True
) -> None:
    """`attnquiz.question_lines.draw_question`, drawn by rich on ``target``."""
    draw_question(RichLines(target), question, variant=variant, seed=seed, note=note)


def print_note(target: Console, question: Question, *, indent: int = 0) -> None:
    """`attnquiz.question_lines.draw_note`, drawn by rich on ``target``."""
    draw_note(RichLines(target), question, indent=indent)


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
    """`attnquiz.question_lines.draw_model_answer`, drawn by rich on ``target``."""
    draw_model_answer(RichLines(target), answer, indent=indent)


def show_question(question: Question, *, with_answer: bool, with_solution: bool) -> None:
    """A question as `quiz show` prints it, drawn by rich (`attnquiz.lookup` draws it without rich
    where it can): up to its answer as `attnquiz.question_lines.draw_shown` draws it, then the
    solution and the known mistakes."""
    from attnquiz.engine.markup.plain import to_terminal

    draw_shown(RichLines(console), question, with_answer=with_answer)
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


def verdict(grade: Grade) -> Text:
    """`attnquiz.question_lines.verdict_runs` as rich text (a session's outcome line holds it)."""
    return Text.assemble(*verdict_runs(grade))


def print_grade(target: Console, grade: Grade, response: str, *, echo: bool = False) -> None:
    """`attnquiz.question_lines.draw_grade`, drawn by rich on ``target``."""
    draw_grade(RichLines(target), grade, response, echo=echo)
