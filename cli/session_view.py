"""Everything a practice, exam or review session shows, drawn with rich; `attnquiz.session_loop` decides when.

The session's opening and its questions are drawn by `attnquiz.session_lines`, without rich's
console while the session has not needed it yet (the first question of `quiz run`, issue 43):
rich's console is made when first used (`SessionView.console`).

Colour only appears on a terminal without NO_COLOR (rich's own rules); piped output is plain text
that fits the console width (80 columns when it is not a terminal). Warnings go to stderr so that
piped and JSON output stay clean.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from attnquiz.line_breaks import NBSP
from attnquiz.question_lines import STYLES, grade_remarks, score_text
from attnquiz.session_lines import (
    EXAM_HELP,
    PRACTICE_HELP,
    draw_header,
    draw_question_screen,
    duration,
)
from attnquiz.terminal import plain_mode
from attnquiz.wording import LABELS, MARKS, SEP, clock, when

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from attnquiz.engine.grading.outcome import Grade
    from attnquiz.engine.practice.exam_state import SavedExam
    from attnquiz.engine.practice.history_records import DayStats, GroupStats, MistakeStats
    from attnquiz.engine.practice.planning import Plan
    from attnquiz.engine.practice.session import Session
    from attnquiz.engine.practice.session_state import Slot
    from attnquiz.engine.practice.session_summary import Summary, SummaryRow
    from attnquiz.engine.variant import Question
    from attnquiz.question_lines import Writer

__all__ = [
    "LABELS",
    "MARKS",
    "STYLES",
    "SessionView",
    "bar",
    "clock",
    "command_lines",
    "has_solution",
    "json_line",
    "nothing_due",
    "revision_note",
]


def _score(value: float) -> str:
    return score_text(value)


class SessionView:
    """Draws a session on ``console``; ``errors`` receives warnings (stderr by default)."""

    def __init__(self, console: Console | None = None, errors: Console | None = None) -> None:
        self._console = console
        self._errors = errors

    @property
    def console(self) -> Console:
        """Where the session is drawn: rich's console, made when first needed (`attnquiz.display`)."""
        if self._console is None:
            from attnquiz import display

            self._console = display.console
        return self._console

    @property
    def errors(self) -> Console:
        """Where warnings go: rich's console for standard error, made when first needed."""
        if self._errors is None:
            from attnquiz import display

            self._errors = display.errors
        return self._errors

    def _draw(self, draw: Callable[[Writer], None]) -> None:
        """Draw on standard output without rich while nothing has needed rich's console yet (the
        session's opening and its first question, issue 43) and the light writer prints rich's very
        bytes; on rich's console otherwise."""
        if self._console is None:
            from attnquiz.light_lines import print_without_rich

            if print_without_rich(draw):
                return
        from attnquiz.display import RichLines

        draw(RichLines(self.console))

    # -- framing --------------------------------------------------------------------------------

    def header(self, plan: Plan, *, history: str | None) -> None:
        """The bank title, the mode, the number of questions and the seed (so the session can be repeated)."""
        self._draw(lambda out: draw_header(out, plan, history=history))

    def help(self, *, exam: bool, choice: bool) -> None:
        """Every command of the prompt."""
        from attnquiz.folding import put

        lines = ["Commands at the prompt:"]
        if exam:
            lines += [
                "  n, next       the next question (an answer given stays saved)",
                "  b, back       the previous question",
                "  g N, go N     question N",
                "  l, list       which questions have an answer",
                "  s, skip       leave this one for now",
                "  submit        hand in the exam and see the results (q does the same)",
            ]
        else:
            lines += [
                "  ?, hint       a hint for this question",
                "  s, skip       skip this question (and see its answer)",
                "  w, why        the worked solution (after answering)",
                "  g, 1-4        after an answer: it was a guess, or rate it 1 again … 4 easy "
                "(when it comes back; the score stays)",
                "  q, quit       stop here and see the summary",
            ]
        lines.append("  h, help       this list")
        for line in lines:
            put(self.console, line, style="dim", hang=14 if line.startswith("  ") else 0)
        if choice:
            letters = "n b l s q h w" if exam else "s q h w"
            self.note(
                f"The letters {letters} are commands on every question. To answer an option with "
                "such a letter, type it in brackets, e.g. (b); other letters work as they are."
            )
        self.note("Ctrl-C stops at once; every answer given so far is already saved.")

    def shadowed(self, typed: str, command: str, option: str, position: int | None) -> None:
        """A command letter was typed where an option has that letter: how to choose the option.

        ``position`` is the question it was typed at, when the command has since moved elsewhere.
        """
        there = f" of question {position}" if position is not None else ""
        self.note(
            f"{typed} is the command {command}; to answer option {option}{there}, type ({option.lower()})."
        )

    def reminder(self, *, exam: bool) -> None:
        """What to do at an empty prompt."""
        self.note(EXAM_HELP if exam else PRACTICE_HELP)

    def warning(self, message: str) -> None:
        """A problem that does not stop the session (e.g. history could not be saved).

        Folded only on a screen: piped or logged, a warning stays one line, so that it greps and
        the command it may give (``quiz show … --seed N``) is copied whole.
        """
        from rich.text import Text

        from attnquiz.folding import put

        line = f"quiz: warning: {message}"
        if self.errors.is_terminal:
            put(self.errors, line, style="yellow")
        else:
            self.errors.print(Text(line, style="yellow"), soft_wrap=True)

    def note(self, message: str) -> None:
        """A short dim line (a hint that is not available, a saved exam answer, ...)."""
        from attnquiz.folding import put

        put(self.console, message, style="dim")

    # -- questions ------------------------------------------------------------------------------

    def question(self, session: Session, slot: Slot, question: Question) -> None:
        """A question: its number, source, prompt, options and the precision asked for."""
        self._draw(lambda out: draw_question_screen(out, session, slot, question))

    def echo(self, line: str) -> None:
        """The response read from a pipe, so that the transcript reads like a session."""
        from rich.text import Text

        from attnquiz.folding import put

        put(self.console, Text.assemble(("› ", "dim"), line), hang=2)

    def resumed(self, saved: SavedExam) -> None:
        """An exam taken up again: when it was left, and where it stands."""
        left = saved.saved_at.astimezone()
        self.note(f"Resuming the exam left on {left:%a %d %b at %H:%M}: {saved.describe()}.")

    def hint(self, text: str, step: int = 1, steps: int = 1) -> None:
        """The current question's next hint (``step`` of ``steps``: a hint, then the worked solution's
        steps but the last), or that there is none (left)."""
        from rich.text import Text

        from attnquiz.engine.markup.plain import to_terminal
        from attnquiz.folding import put

        if text:
            label = "Hint: " if steps <= 1 else f"Hint {step} of {steps}: "
            put(self.console, Text.assemble((label, "bold"), to_terminal(text, spoken=plain_mode())))
        elif steps:
            self.note("No more hints: the next step is the answer (s skips and shows it).")
        else:
            self.note("This question has no hint.")

    def reading(self, formula: str) -> None:
        """How a formula answer is read, before it is graded."""
        from rich.text import Text

        from attnquiz.folding import put

        put(self.console, Text.assemble(("Read as: ", "bold"), (formula, "cyan")))

    def invalid(self, grade: Grade, response: str = "") -> None:
        """Why a response could not be read (it cost nothing)."""
        from attnquiz import display

        display.print_grade(self.console, grade, response)

    def feedback(
        self,
        grade: Grade,
        question: Question,
        response: str,
        next_due: datetime | None = None,
        *,
        answer: str | None = None,
    ) -> None:
        """Correct, partly right or wrong, the named mistake, how the answer was read, the answer
        (``answer``, or the question's whole answer), and when the item comes back for review (when
        the history keeps it)."""
        from rich.text import Text

        from attnquiz import display
        from attnquiz.engine.answers.kinds import ExplainAnswer
        from attnquiz.folding import put

        c = self.console
        if isinstance(question.answer, ExplainAnswer):
            # A concept answer is not judged: the model answer and its key points, to rate against.
            c.print()
            display.print_model_answer(c, question.answer)
            return
        display.print_grade(c, grade, response)
        if grade.status != "correct":
            put(c, Text.assemble(("Answer: ", "bold green"), answer or question.answer.format()))
        if next_due is not None:
            self.note(f"Back for review {when(next_due)}.")

    def rated(self, rating: str, next_due: datetime | None = None) -> None:
        """A concept answer's self-rating was taken (and when the item comes back, with history)."""
        back = f" Back for review {when(next_due)}." if next_due is not None else ""
        self.note(f"Rated {rating}.{back}")

    def rerated(self, rating: str, next_due: datetime | None, *, guess: bool) -> None:
        """A scored answer the student rated themselves (a guess is rated again)."""
        said = "A guess: rated again" if guess else f"Rated {rating}"
        back = f"; back for review {when(next_due)}" if next_due is not None else ""
        self.note(f"{said} (the score stays){back}.")

    def solution(self, question: Question) -> None:
        """The worked solution with this variant's numbers, and the item's note (held back until now).

        A question without worked steps (a concept question's is its model answer, shown already)
        says so rather than print an empty heading.
        """
        from attnquiz import display

        c = self.console
        if not has_solution(question):
            self.note("This question has no worked solution: its model answer and key points are above.")
            display.print_note(c, question)
            return
        c.print()
        display.print_solution(c, question)
        display.print_note(c, question)

    def skipped(self, question: Question, next_due: datetime | None = None) -> None:
        """A skipped practice question, with its answer (a learner skips to find out): a concept
        question's model answer and key points rendered, as after an answer."""
        from rich.text import Text

        from attnquiz import display
        from attnquiz.engine.answers.kinds import ExplainAnswer
        from attnquiz.folding import put

        if isinstance(question.answer, ExplainAnswer):
            put(self.console, Text("– Skipped.", style="dim"))
            display.print_model_answer(self.console, question.answer)
        else:
            put(
                self.console,
                Text.assemble(("– Skipped.  ", "dim"), ("Answer: ", "bold green"), question.answer.format()),
            )
        if next_due is not None:
            self.note("It is due for review now: quiz review asks it again.")

    # -- exams ----------------------------------------------------------------------------------

    def saved(self, slot: Slot) -> None:
        """An exam answer was taken (no verdict until submission)."""
        self.note(f"Saved your answer to question {slot.position}.")

    def revision(self, kept: list[tuple[str, str]]) -> None:
        """A part of an answered exam question revised: the later parts that keep their answers."""
        self.note(revision_note(kept))

    def overview(self, session: Session) -> None:
        """Which exam questions have an answer."""
        marks = " ".join(f"{s.position}{'●' if s.answered else '○'}" for s in session.slots)
        missing = session.unanswered()
        self.note(f"Answers: {marks}")
        if missing:
            self.note(f"Not answered yet: {', '.join(map(str, missing))}.")
        else:
            self.note("Every question has an answer: type submit to hand in, or g N to revisit one.")

    def exam_results(self, session: Session, *, solutions: str) -> None:
        """After submission: each question not fully right, with the answer, the feedback and the solution
        (a concept question: the typed answer, then the model answer and its key points)."""
        from rich.text import Text

        from attnquiz import display
        from attnquiz.engine.answers.kinds import ExplainAnswer
        from attnquiz.folding import put

        c = self.console
        c.print()
        display.rule(c, "Results")
        shown = 0
        for slot in session.slots:
            status = slot.status
            if status == "correct" and solutions != "always":
                continue
            question = session.question(slot)
            if shown:
                c.print()
            shown += 1
            line = Text()
            line.append(f"{slot.position}. {question.source}", style="bold")
            line.append(f"{SEP}{question.item_id}", style="dim")
            put(c, line, hang=3)
            grade = slot.grade
            outcome = Text("   ")
            if grade is not None:
                outcome.append_text(display.verdict(grade))
            else:
                outcome.append(f"{MARKS[status]} {LABELS[status]}", style=STYLES[status])
            put(c, outcome)
            given = slot.response if slot.answered else "none"
            if isinstance(question.answer, ExplainAnswer):
                # The typed answer, then the model answer and its key points to compare it with.
                put(c, Text.assemble(("   Your answer: ", "dim"), given or "(thought through)"), hang=3)
                display.print_model_answer(c, question.answer, indent=3)
                if slot.next_due is not None:
                    put(
                        c,
                        "   Rate it against the model answer in quiz review: it is due now.",
                        style="dim",
                        hang=3,
                    )
                if solutions != "never":
                    display.print_note(c, question, indent=3)
                continue
            put(
                c,
                Text.assemble(
                    ("   Your answer: ", "dim"), given, (f"{SEP}Answer: ", "dim"), question.answer.format()
                ),
            )
            if grade is not None:
                for remark in grade_remarks(grade):
                    put(c, "\n".join("   " + line for line in remark.splitlines()))
            if solutions != "never":
                display.print_solution(c, question, indent=3)
                display.print_note(c, question, indent=3)
        if not shown:
            self.note("Every answer is correct.")

    def time_up(self) -> None:
        """The exam's time ran out."""
        from rich.text import Text

        self.console.print()
        self.console.print(Text("Time is up: the exam was submitted.", style="bold yellow"))

    # -- the end --------------------------------------------------------------------------------

    def summary(self, summary: Summary) -> None:
        """Score, time, a row per question, topics to revisit, and the commands to go on with."""
        from rich.text import Text

        from attnquiz import display
        from attnquiz.folding import put

        c = self.console
        c.print()
        endings = {
            "interrupted": " (interrupted)",
            "time-up": " (time up)",
            "quit": " (stopped early)",
            "end-of-input": "",
            "completed": "",
            "submitted": "",
        }
        display.rule(c, f"Summary{endings[summary.ended]}")
        if not summary.rows:
            self.note("No questions were answered.")
        elif not summary.out_of:
            # Only concept questions (answered, or skipped): no score to give, only what was rated.
            n = len(summary.rows)
            took = duration(summary.seconds).replace(" ", NBSP)
            line = Text(f"{n} concept question{'s' if n != 1 else ''}", style="bold")
            line.append(f"{SEP}self-rated, never scored{SEP}{took}")
            put(c, line)
            self._rows(c, summary)
        else:
            percent = 100 * summary.score / summary.out_of if summary.out_of else 0.0
            line = Text()
            line.append(f"Score {_score(summary.score)} / {summary.out_of}", style="bold")
            took = duration(summary.seconds).replace(" ", NBSP)
            line.append(f"  ({percent:.0f}{NBSP}%){SEP}{summary.correct} correct{SEP}{took}")
            asked = len(summary.rows)
            if summary.planned > asked:
                line.append(f"{SEP}{asked} of {summary.planned} asked", style="dim")
            put(c, line)
            if summary.concepts:
                # Every concept question asked, answered or not: none is in the score.
                n = summary.concepts
                self.note(
                    f"{n} concept question{'s' if n != 1 else ''} not in the score "
                    f"(self-rated, never scored)."
                )
            self._rows(c, summary)
        if summary.revisit:
            put(c, Text.assemble(("Topics to revisit: ", "bold"), ", ".join(summary.revisit)), hang=2)
        # A review is chosen by what is due, so running it again goes on rather than repeats; with
        # nothing due, it would only say so.
        if summary.mode == "review" and summary.due_now == 0:
            self.note(nothing_due(summary))
        else:
            again = "Go on reviewing:" if summary.mode == "review" else "Repeat this session:"
            if (
                summary.mode == "exam"
                and "--seed" not in summary.repeat
                and "--original" not in summary.repeat
            ):
                again = "Another exam like this one (fresh questions):"
            self._command(again, summary.repeat)
        if summary.follow_up:
            self._command("Practise what you missed:", summary.follow_up)
        if summary.history is not None and summary.rows:
            saved = f"{summary.stored} answer{'s' if summary.stored != 1 else ''} saved to {summary.history}"
            self.note(saved)
        elif summary.rows:
            self.note("History was off: nothing was saved.")

    def _rows(self, c: Console, summary: Summary) -> None:
        """A row per question: a table, or stacked lines where a table would cut item names."""
        from rich.text import Text

        from attnquiz.folding import print_table, put

        if c.width < 60:
            # Too narrow for a table without cutting item names: a row per question, stacked.
            for row in summary.rows:
                put(c, Text.assemble((f"{row.position}. ", "dim"), row.item), hang=3)
                outcome = Text("   ")
                outcome.append_text(self._result(row))
                if row.mistake:
                    outcome.append(f"{SEP}{row.mistake}", style="yellow")
                outcome.append(f"{SEP}{duration(row.seconds)}", style="dim")
                put(c, outcome, hang=3)
        else:
            print_table(c, self._rows_table(summary))
        c.print()

    def _command(self, label: str, command: str) -> None:
        from rich.text import Text

        self.console.print(Text(label, style="dim"))
        for line in command_lines(command, self.console.width):
            # Never re-wrapped by rich: the lines are shell continuations that paste as one command.
            self.console.print(Text(line, style="bold"), soft_wrap=True)

    @staticmethod
    def _result(row: SummaryRow) -> Text:
        from rich.text import Text

        if row.status in ("skipped", "unanswered"):
            return Text(f"{MARKS[row.status]} {row.status}", style=STYLES[row.status])
        if row.status == "unscored":
            return Text(f"{MARKS[row.status]} {row.rating or 'unrated'}", style=STYLES[row.status])
        return Text(f"{MARKS[row.status]} {_score(row.score)}", style=STYLES[row.status])

    def _rows_table(self, summary: Summary) -> Table:
        from rich.table import Table

        table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
        table.add_column("#", justify="right")
        # The item, not the source: several items share a source, and --item takes these names.
        table.add_column("question", no_wrap=True, overflow="ellipsis")
        table.add_column("result", no_wrap=True)
        mistakes = any(row.mistake for row in summary.rows)
        if mistakes:
            table.add_column("mistake", overflow="fold")
        table.add_column("time", justify="right", no_wrap=True)
        for row in summary.rows:
            cells: list[str | Text] = [str(row.position), row.item, self._result(row)]
            if mistakes:
                cells.append(row.mistake or "")
            table.add_row(*cells, duration(row.seconds))
        return table

    # -- statistics -----------------------------------------------------------------------------

    def stats(
        self,
        *,
        banks: list[GroupStats],
        topics: list[GroupStats],
        mistakes: list[MistakeStats],
        days: list[DayStats],
        due: dict[tuple[str, str], int],
        recall: dict[tuple[str, str], float],
        history: str,
    ) -> None:
        """Attempts, accuracy and due reviews per bank and topic, frequent mistakes, and the last days."""
        from rich.table import Table
        from rich.text import Text

        from attnquiz.folding import print_table, put

        c = self.console
        if not banks:
            c.print(Text(f"No attempts yet in {history}.", style="dim"))
            c.print("Start with: quiz run week1")
            return
        total_due = sum(due.values())
        # Below this width a table would cut topic names into pieces: each topic gets a line of
        # its own, with its figures on the next.
        narrow = c.width < 60
        put(c, Text.assemble(("History ", "bold"), (history, "dim")), hang=2)
        shown_recall = False
        for bank in banks:
            bank_due = sum(n for (b, _), n in due.items() if b == bank.bank)
            c.print()
            put(
                c,
                Text.assemble(
                    (bank.bank, "bold"),
                    f"  {bank.attempts} attempts{_self_rated(bank.unscored)}"
                    f" · {_percent(bank)} · {bank_due} due",
                ),
                hang=2,
            )
            members = [t for t in topics if t.bank == bank.bank]
            # Recall is predicted only for learnt items: until one is, the column would stay empty.
            with_recall = any((bank.bank, t.topic or "") in recall for t in members)
            shown_recall = shown_recall or with_recall
            if narrow:
                for topic in members:
                    key = (bank.bank, topic.topic or "")
                    figures = [f"{topic.attempts} answered{_self_rated(topic.unscored)}", _percent(topic)]
                    if key in recall:
                        figures.append(f"recall {100 * recall[key]:.0f} %")
                    figures.append(f"{due.get(key, 0)} due")
                    put(c, Text(topic.topic or "", style="bold"), hang=2)
                    put(c, "  " + f"{SEP.strip()} ".join(f + " " for f in figures).rstrip(), hang=2)
                continue
            table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
            table.add_column("topic", no_wrap=True)
            table.add_column("n", justify="right")
            table.add_column("accuracy", no_wrap=True)
            if with_recall:
                table.add_column("recall", justify="right", no_wrap=True)
            table.add_column("due", justify="right")
            for topic in members:
                key = (bank.bank, topic.topic or "")
                accuracy = bar(topic.accuracy) if topic.scored else Text("self-rated", style="dim")
                cells: list[str | Text] = [topic.topic or "", str(topic.attempts), accuracy]
                if with_recall:
                    cells.append(f"{100 * recall[key]:.0f} %" if key in recall else "")
                cells.append(str(due.get(key, 0)))
                table.add_row(*cells)
            print_table(c, table)
        c.print()
        legend = "accuracy: your mean score over every answer so far."
        if any(b.unscored for b in banks):
            legend = (
                "accuracy: your mean score over every scored answer so far (concept questions are "
                "self-rated, never scored, and left out of it)."
            )
        if shown_recall:
            legend += (
                " recall: the chance FSRS predicts you would get the topic's learnt items right today"
                " (items still being learnt are left out, so it can be high where accuracy is low)."
            )
        put(c, legend, style="dim")
        if mistakes:
            c.print()
            c.print(Text("Most frequent mistakes", style="bold"))
            if narrow:
                for m in mistakes:
                    last = m.last.astimezone().strftime("%d %b") if m.last is not None else ""
                    put(c, Text.assemble((m.tag, "bold"), f"  {m.count}×  {last}"), hang=2)
                    put(c, "  " + ", ".join(m.topics), style="dim", hang=2)
            else:
                table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
                table.add_column("mistake", overflow="fold")
                table.add_column("n", justify="right")
                table.add_column("topics", overflow="fold")
                table.add_column("last", no_wrap=True)
                for m in mistakes:
                    last = m.last.astimezone().strftime("%d %b") if m.last is not None else ""
                    table.add_row(m.tag, str(m.count), ", ".join(m.topics), last)
                print_table(c, table)
        if days:
            c.print()
            c.print(Text("Last days", style="bold"))
            most = max(d.attempts for d in days)
            table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
            table.add_column("day", no_wrap=True)
            table.add_column("attempts", no_wrap=True)
            table.add_column("accuracy", justify="right")
            for d in days:
                width = max(1, round(12 * d.attempts / most))
                shown = f"{100 * d.accuracy:.0f} %" if d.attempts > d.unscored else "self-rated"
                # --plain: the count alone (a bar is read out as a row of block characters).
                drawn = str(d.attempts) if plain_mode() else f"{'█' * width} {d.attempts}"
                table.add_row(d.day, drawn, shown)
            print_table(c, table)
        c.print()
        if total_due:
            c.print(
                Text.assemble(
                    (f"{total_due} item{'s' if total_due != 1 else ''} due: ", "bold"), "quiz review"
                )
            )
        else:
            c.print(Text("Nothing is due for review.", style="dim"))


def revision_note(kept: list[tuple[str, str]]) -> str:
    """What a revised part of an exam question in parts means for the parts after it."""
    standing = "; ".join(f"({label}) {response or '(empty)'}" for label, response in kept)
    return (
        f"Saved, and graded with your earlier answers to the later parts: {standing}. "
        "Answer them again to change them, or move on."
    )


def nothing_due(summary: Summary) -> str:
    """What a summary says when nothing is due for review now (and when the next review is)."""
    if summary.next_due is not None:
        return f"Nothing else is due for review now; the next review is {when(summary.next_due)}."
    return "Nothing else is due for review now."


def has_solution(question: Question) -> bool:
    """Whether the question has worked steps (or parts, whose answers the solution lists) to show."""
    return bool(
        question.variant.solution
        or question.variant.parts
        or any(f.where == "solution" for f in question.variant.figures)
    )


def command_lines(command: str, width: int) -> list[str]:
    """A shell command indented by two, broken before options with `` \\`` so each line fits ``width``.

    An option stays with its value, so every line is a whole step of the command; a single word
    longer than the width (a long path) is left whole rather than broken.
    """
    import shlex

    words = shlex.split(command)
    chunks: list[str] = []
    for word in words:
        quoted = shlex.quote(word)
        option = chunks[-1] if chunks else ""
        # An option keeps its value on its line, unless the two together would not fit a continuation
        # line (its indent of 6 and the closing " \\"): then the value gets a line of its own.
        together = 6 + len(option) + 1 + len(quoted) + 2 <= width
        if option.startswith("-") and " " not in option and not word.startswith("-") and together:
            chunks[-1] += f" {quoted}"
        else:
            chunks.append(quoted)
    lines = ["  "]
    for chunk in chunks:
        current = lines[-1]
        fits = len(current) + len(chunk) + (0 if current.isspace() else 1) + 2 <= width
        if current.isspace() or fits:
            lines[-1] = current + ("" if current.isspace() else " ") + chunk
        else:
            lines[-1] = current + " \\"
            lines.append("      " + chunk)
    return lines


def _self_rated(unscored: int) -> str:
    """``" (2 self-rated)"``: how many of the attempts were concept questions ("" when none)."""
    return f" ({unscored}{NBSP}self-rated)" if unscored else ""


def _percent(group: GroupStats) -> str:
    """The accuracy of a bank or topic, or that it has only self-rated (concept) answers."""
    return f"{100 * group.accuracy:.0f}{NBSP}%" if group.scored else f"self-rated{NBSP}only"


def bar(fraction: float, width: int = 10) -> Text:
    """A small horizontal bar with the percentage, coloured by how good it is (under --plain the
    percentage alone)."""
    from rich.text import Text

    if plain_mode():
        return Text(f"{100 * fraction:.0f} %")
    filled = round(max(0.0, min(1.0, fraction)) * width)
    style = "green" if fraction >= 0.8 else "yellow" if fraction >= 0.5 else "red"
    text = Text()
    text.append("█" * filled, style=style)
    text.append("░" * (width - filled), style="dim")
    text.append(f" {100 * fraction:3.0f} %")
    return text


def json_line(data: dict[str, Any]) -> str:
    """One JSON object on one line (the ``quiz run --json`` stream is JSON Lines)."""
    from attnquiz.common import json_text

    return json_text(data)
