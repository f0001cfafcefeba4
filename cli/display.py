"""Everything the terminal shows, drawn with rich (colour only on a terminal, and never with NO_COLOR)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from engine.answers import Answer
    from engine.bank import Bank
    from engine.variant import Question

console = Console(highlight=False, soft_wrap=False)


def kind_label(answer: Answer) -> str:
    """The answer kind as a user reads it."""
    from engine.answers import ChoiceAnswer

    if isinstance(answer, ChoiceAnswer):
        return "multiple select" if answer.multiple else "single choice"
    return {"integer": "count", "numeric": "number"}.get(answer.kind, answer.kind)


def item_table(bank: Bank, rows: list[dict[str, Any]]) -> None:
    """The items of a bank as a table."""
    table = Table(title=f"{bank.title}  ({len(rows)} items)", title_justify="left", expand=False)
    table.add_column("id", style="bold", no_wrap=True)
    table.add_column("source")
    table.add_column("topic")
    table.add_column("answer")
    for row in rows:
        source = row["source"] + ("" if row["original"] else " *")
        table.add_row(row["id"], source, row["topic"], row["kind"])
    console.print(table)
    if not all(row["original"] for row in rows):
        console.print("* no --original: the notes give no fixed statement or numbers to rebuild", style="dim")


def question_header(question: Question) -> Text:
    """Source, item and variant code on one line."""
    header = Text()
    header.append(question.source, style="bold cyan")
    header.append(f"  ·  {question.item_id}  ·  ", style="dim")
    code = "original" if question.is_original else f"variant {question.code} (seed {question.seed})"
    header.append(code, style="dim")
    return header


def question_body(question: Question) -> list[Text]:
    """The prompt, the options of a choice item, the precision asked for, and any note."""
    from engine.answers import ChoiceAnswer
    from engine.markup import to_terminal

    parts = [Text(to_terminal(question.variant.prompt))]
    answer = question.answer
    if isinstance(answer, ChoiceAnswer):
        options = Text()
        for letter, option in zip(answer.letters, answer.options, strict=False):
            options.append(f"  {letter}. ", style="bold")
            options.append(to_terminal(option.text) + "\n")
        parts.append(options)
    parts.append(Text(answer.instructions(), style="italic"))
    if question.note:
        parts.append(Text(f"Note: {question.note}", style="dim"))
    return parts


def show_question(question: Question, *, with_answer: bool, with_solution: bool) -> None:
    """A question as `quiz show` prints it."""
    from engine.markup import to_terminal

    console.print(question_header(question))
    console.print()
    for part in question_body(question):
        console.print(part)
    if with_answer:
        console.print()
        console.print(Text.assemble(("Answer: ", "bold green"), question.answer.format()))
    if with_solution:
        console.print()
        console.print(Text("Solution", style="bold"))
        for number, step in enumerate(question.variant.solution, 1):
            console.print(Text(f"{number}. ") + Text(to_terminal(step)))
        if question.variant.mistakes:
            console.print()
            console.print(Text("Known mistakes", style="bold"))
            for mistake in question.variant.mistakes:
                console.print(
                    Text.assemble(
                        (f"  {mistake.format(question.answer)}", "yellow"),
                        (f"  [{mistake.tag}] ", "dim"),
                        to_terminal(mistake.feedback),
                    )
                )
