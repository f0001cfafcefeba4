"""Everything a practice, exam or review session shows, drawn with rich; `cli.session_loop` decides when.

Colour only appears on a terminal without NO_COLOR (rich's own rules); piped output is plain text
that fits the console width (80 columns when it is not a terminal). Warnings go to stderr so that
piped and JSON output stay clean.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from cli import display

if TYPE_CHECKING:
    from engine.grading import Grade
    from engine.session import Plan, Session, Slot, Summary
    from engine.store import DayStats, GroupStats, MistakeStats
    from engine.variant import Question

MARKS = {"correct": "✓", "partial": "◐", "wrong": "✗", "invalid": "?", "skipped": "–", "unanswered": "·"}
STYLES = {
    "correct": "bold green",
    "partial": "bold yellow",
    "wrong": "bold red",
    "invalid": "bold magenta",
    "skipped": "dim",
    "unanswered": "dim",
}
LABELS = {
    "correct": "Correct",
    "partial": "Partly right",
    "wrong": "Wrong",
    "invalid": "Cannot read that",
    "skipped": "Skipped",
    "unanswered": "Not answered",
}

PRACTICE_HELP = "Type your answer and press Enter.  ? hint · s skip · q quit · h help"
EXAM_HELP = "Exam: no feedback until you submit.  n next · b back · g N go · submit · h help"


def _score(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") if value % 1 else f"{int(value)}"


def _duration(seconds: float) -> str:
    total = round(seconds)
    minutes, secs = divmod(total, 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min {secs:02d} s" if secs else f"{minutes} min"
    return f"{secs} s"


def clock(seconds: float) -> str:
    """Remaining time as a countdown shows it: ``18:32`` or ``1:05:00``."""
    total = max(0, int(seconds + 0.999))
    minutes, secs = divmod(total, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class SessionView:
    """Draws a session on ``console``; ``errors`` receives warnings (stderr by default)."""

    def __init__(self, console: Console | None = None, errors: Console | None = None) -> None:
        self.console = console or display.console
        self.errors = errors or Console(stderr=True, highlight=False)

    # -- framing --------------------------------------------------------------------------------

    def header(self, plan: Plan, *, history: str | None) -> None:
        """The bank title, the mode, the number of questions and the seed (so the session can be repeated)."""
        c = self.console
        c.print(Text(plan.title, style="bold"))
        facts = [plan.mode.capitalize(), f"{len(plan)} question{'s' if len(plan) != 1 else ''}"]
        if any(p.seed is None for p in plan.questions) and plan.mode != "review":
            facts.append("the past papers' own questions")
        else:
            facts.append(f"seed {plan.seed}")
        if plan.time_limit is not None:
            facts.append(f"time {_duration(plan.time_limit)}")
        c.print(Text(" · ".join(facts), style="dim"))
        if history is None:
            c.print(Text("History is off for this session: answers are not saved.", style="dim"))
        c.print(Text(EXAM_HELP if plan.mode == "exam" else PRACTICE_HELP, style="dim"))

    def help(self, *, exam: bool, choice: bool) -> None:
        """Every command of the prompt."""
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
                "  s, skip       skip this question",
                "  w, why        the worked solution (after answering)",
                "  q, quit       stop here and see the summary",
            ]
        lines.append("  h, help       this list")
        if choice:
            lines.append(
                "On a choice question a letter is an answer: type the whole word (skip, back, help)."
            )
        lines.append("Ctrl-C stops at once; every answer given so far is already saved.")
        self.console.print(Text("\n".join(lines), style="dim"))

    def reminder(self, *, exam: bool) -> None:
        """What to do at an empty prompt."""
        self.console.print(Text(EXAM_HELP if exam else PRACTICE_HELP, style="dim"))

    def warning(self, message: str) -> None:
        """A problem that does not stop the session (e.g. history could not be saved)."""
        self.errors.print(Text(f"quiz: warning: {message}", style="yellow"))

    def note(self, message: str) -> None:
        """A short dim line (a hint that is not available, a saved exam answer, ...)."""
        self.console.print(Text(message, style="dim"))

    # -- questions ------------------------------------------------------------------------------

    def question(self, session: Session, slot: Slot, question: Question) -> None:
        """A question: its number, source, prompt, options and the precision asked for."""
        c = self.console
        title = f"Question {slot.position} of {len(session.slots)}"
        if slot.planned.reason:
            title += f" · {slot.planned.reason}"
        c.print()
        c.print(Rule(title, align="left", style="dim"))
        c.print(display.question_header(question))
        c.print()
        for part in display.question_body(question):
            c.print(part)
        if session.exam and slot.answered:
            c.print(Text.assemble(("Your answer: ", "dim"), slot.response))

    def echo(self, line: str) -> None:
        """The response read from a pipe, so that the transcript reads like a session."""
        self.console.print(Text.assemble(("› ", "dim"), line))

    def hint(self, text: str) -> None:
        """The current question's hint."""
        from engine.markup import to_terminal

        if text:
            self.console.print(Text.assemble(("Hint: ", "bold"), to_terminal(text)))
        else:
            self.note("This question has no hint.")

    def invalid(self, grade: Grade) -> None:
        """Why a response could not be read (it cost nothing)."""
        from engine.markup import to_terminal

        c = self.console
        c.print(
            Text.assemble(
                (f"{MARKS['invalid']} {LABELS['invalid']}: ", STYLES["invalid"]), to_terminal(grade.feedback)
            )
        )
        if grade.read_as:
            c.print(Text(f"  read as: {grade.read_as}", style="dim"))
        c.print(Text("  Nothing was counted; try again.", style="dim"))

    def feedback(self, grade: Grade, question: Question, response: str) -> None:
        """Correct, partly right or wrong, with the score, how the answer was read, and the named mistake."""
        from engine.markup import to_terminal

        c = self.console
        status = grade.status
        line = Text()
        line.append(f"{MARKS[status]} {LABELS[status]}", style=STYLES[status])
        line.append(f"  score {_score(grade.score)}", style="dim")
        if grade.mistake is not None:
            line.append("  ·  mistake: ", style="dim")
            line.append(grade.mistake.tag, style="bold yellow")
        c.print(line)
        if grade.read_as and grade.read_as.replace(" ", "") != response.strip().replace(" ", ""):
            c.print(Text(f"  read as {grade.read_as}", style="dim"))
        # The status line already says "Correct"; any other remark of the grader is worth showing.
        if grade.feedback and grade.feedback.strip() != "Correct.":
            c.print(Text(to_terminal(grade.feedback)))
        mistake = grade.mistake
        if mistake is not None and mistake.feedback and mistake.feedback not in grade.feedback:
            c.print(Text(to_terminal(mistake.feedback)))
        if status != "correct":
            c.print(Text.assemble(("Answer: ", "bold green"), question.answer.format()))

    def solution(self, question: Question) -> None:
        """The worked solution with this variant's numbers."""
        from engine.markup import to_terminal

        c = self.console
        c.print(Text("Worked solution", style="bold"))
        for number, step in enumerate(question.variant.solution, 1):
            c.print(Text(f"{number}. ") + Text(to_terminal(step)))

    def skipped(self, question: Question) -> None:
        """A skipped practice question, with its answer (a learner skips to find out)."""
        self.console.print(
            Text.assemble(("– Skipped.  ", "dim"), ("Answer: ", "bold green"), question.answer.format())
        )

    # -- exams ----------------------------------------------------------------------------------

    def saved(self, slot: Slot) -> None:
        """An exam answer was taken (no verdict until submission)."""
        self.note(f"Saved your answer to question {slot.position}.")

    def overview(self, session: Session) -> None:
        """Which exam questions have an answer."""
        marks = " ".join(f"{s.position}{'●' if s.answered else '○'}" for s in session.slots)
        missing = session.unanswered()
        self.console.print(Text(f"Answers: {marks}", style="dim"))
        if missing:
            self.note(f"Not answered yet: {', '.join(map(str, missing))}.")
        else:
            self.note("Every question has an answer: type submit to hand in, or g N to revisit one.")

    def exam_results(self, session: Session, *, solutions: str) -> None:
        """After submission: each question not fully right, with the answer, the feedback and the solution."""
        from engine.markup import to_terminal

        c = self.console
        c.print()
        c.print(Rule("Results", align="left", style="dim"))
        for slot in session.slots:
            status = slot.status
            if status == "correct" and solutions != "always":
                continue
            question = session.question(slot)
            line = Text()
            line.append(f"{slot.position}. {question.source}  ", style="bold")
            line.append(f"{MARKS[status]} {LABELS[status]}", style=STYLES[status])
            grade = slot.grade
            if grade is not None and grade.mistake is not None:
                line.append("  ·  mistake: ", style="dim")
                line.append(grade.mistake.tag, style="bold yellow")
            c.print(line)
            given = slot.response if slot.answered else "none"
            c.print(
                Text.assemble(
                    ("   Your answer: ", "dim"), given, ("  ·  Answer: ", "dim"), question.answer.format()
                )
            )
            if grade is not None and grade.feedback:
                c.print(Text(to_terminal(grade.feedback)))
            if (
                grade is not None
                and grade.mistake is not None
                and grade.mistake.feedback not in grade.feedback
            ):
                c.print(Text(to_terminal(grade.mistake.feedback)))
            if solutions != "never":
                self.solution(question)
            c.print()

    def time_up(self) -> None:
        """The exam's time ran out."""
        self.console.print()
        self.console.print(Text("Time is up: the exam was submitted.", style="bold yellow"))

    # -- the end --------------------------------------------------------------------------------

    def summary(self, summary: Summary) -> None:
        """Score, time, a row per question, topics to revisit, and the commands to go on with."""
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
        c.print(Rule(f"Summary{endings[summary.ended]}", align="left", style="dim"))
        if not summary.rows:
            c.print(Text("No questions were answered.", style="dim"))
        else:
            percent = 100 * summary.score / summary.out_of if summary.out_of else 0.0
            line = Text()
            line.append(f"Score {_score(summary.score)} / {summary.out_of}", style="bold")
            line.append(f"  ({percent:.0f} %)  ·  {summary.correct} correct  ·  {_duration(summary.seconds)}")
            if summary.planned > summary.out_of:
                line.append(f"  ·  {summary.out_of} of {summary.planned} asked", style="dim")
            c.print(line)
            c.print(self._rows_table(summary))
        if summary.revisit:
            c.print(Text.assemble(("Topics to revisit: ", "bold"), ", ".join(summary.revisit)))
        self._command("Repeat this session:", summary.repeat)
        if summary.follow_up:
            self._command("Practise what you missed:", summary.follow_up)
        if summary.history is not None:
            saved = f"{summary.stored} answer{'s' if summary.stored != 1 else ''} saved to {summary.history}"
            c.print(Text(saved, style="dim"))
        elif summary.rows:
            c.print(Text("History was off: nothing was saved.", style="dim"))

    def _command(self, label: str, command: str) -> None:
        self.console.print(Text(label, style="dim"))
        for line in command_lines(command, self.console.width):
            # Never re-wrapped by rich: the lines are shell continuations that paste as one command.
            self.console.print(Text(line, style="bold"), soft_wrap=True)

    def _rows_table(self, summary: Summary) -> Table:
        table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
        table.add_column("#", justify="right")
        table.add_column("source", overflow="fold")
        table.add_column("result", no_wrap=True)
        table.add_column("mistake", overflow="fold")
        table.add_column("time", justify="right", no_wrap=True)
        for row in summary.rows:
            result = Text(f"{MARKS[row.status]} {_score(row.score)}", style=STYLES[row.status])
            if row.status in ("skipped", "unanswered"):
                result = Text(f"{MARKS[row.status]} {row.status}", style=STYLES[row.status])
            table.add_row(str(row.position), row.source, result, row.mistake or "", _duration(row.seconds))
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
        c = self.console
        if not banks:
            c.print(Text(f"No attempts yet in {history}.", style="dim"))
            c.print("Start with: quiz run week1")
            return
        total_due = sum(due.values())
        c.print(Text.assemble(("History ", "bold"), (history, "dim")))
        for bank in banks:
            bank_due = sum(n for (b, _), n in due.items() if b == bank.bank)
            c.print()
            c.print(
                Text.assemble(
                    (bank.bank, "bold"),
                    f"  {bank.attempts} attempts · {100 * bank.accuracy:.0f} % · {bank_due} due",
                )
            )
            table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
            table.add_column("topic", overflow="fold")
            table.add_column("n", justify="right")
            table.add_column("accuracy", no_wrap=True)
            table.add_column("recall", justify="right", no_wrap=True)
            table.add_column("due", justify="right")
            for topic in (t for t in topics if t.bank == bank.bank):
                key = (bank.bank, topic.topic or "")
                table.add_row(
                    topic.topic or "",
                    str(topic.attempts),
                    bar(topic.accuracy),
                    f"{100 * recall[key]:.0f} %" if key in recall else "",
                    str(due.get(key, 0)),
                )
            c.print(table)
        if mistakes:
            c.print()
            c.print(Text("Most frequent mistakes", style="bold"))
            table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
            table.add_column("mistake", overflow="fold")
            table.add_column("n", justify="right")
            table.add_column("topics", overflow="fold")
            table.add_column("last", no_wrap=True)
            for m in mistakes:
                table.add_row(m.tag, str(m.count), ", ".join(m.topics), m.last.astimezone().strftime("%d %b"))
            c.print(table)
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
                table.add_row(d.day, f"{'█' * width} {d.attempts}", f"{100 * d.accuracy:.0f} %")
            c.print(table)
        c.print()
        if total_due:
            c.print(
                Text.assemble(
                    (f"{total_due} item{'s' if total_due != 1 else ''} due: ", "bold"), "quiz review"
                )
            )
        else:
            c.print(Text("Nothing is due for review.", style="dim"))


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
        if chunks and not word.startswith("-") and chunks[-1].startswith("-") and " " not in chunks[-1]:
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


def bar(fraction: float, width: int = 10) -> Text:
    """A small horizontal bar with the percentage, coloured by how good it is."""
    filled = round(max(0.0, min(1.0, fraction)) * width)
    style = "green" if fraction >= 0.8 else "yellow" if fraction >= 0.5 else "red"
    text = Text()
    text.append("█" * filled, style=style)
    text.append("░" * (width - filled), style="dim")
    text.append(f" {100 * fraction:3.0f} %")
    return text


def json_line(data: dict[str, Any]) -> str:
    """One JSON object on one line (the ``quiz run --json`` stream is JSON Lines)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
