"""The input loop of a session: reads answers and prompt commands, handles Ctrl-C, EOF and the exam clock.

On a terminal the answer line has readline editing and history; from a pipe each line is one
answer (or command) and nothing waits for a key. Storing an attempt runs with SIGINT, SIGTERM and
the exam alarm held back, so an interruption lands between attempts and never inside one.
"""

from __future__ import annotations

import contextlib
import re
import signal
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Literal, TextIO

from msgspec import Struct

from attnquiz.line_breaks import NBSP
from attnquiz.session_view import SessionView, has_solution, json_line
from attnquiz.terminal import plain_mode
from attnquiz.wording import clock, span

if TYPE_CHECKING:
    from attnquiz.engine.answers.kinds import Part
    from attnquiz.engine.grading.outcome import Grade
    from attnquiz.engine.practice.exam_state import ExamKeeper
    from attnquiz.engine.practice.session import Session, SolutionPolicy
    from attnquiz.engine.practice.session_state import Ending, Slot
    from attnquiz.engine.practice.session_summary import Summary
    from attnquiz.engine.variant import Question


class TimeUp(Exception):
    """Raised by the exam alarm when the time limit is reached."""


class Leave(Exception):
    """An exam is left unsubmitted, to be resumed (a closed terminal, SIGTERM, or Ctrl-C twice)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


CommandName = Literal[
    "answer", "empty", "hint", "skip", "quit", "help", "why", "next", "back", "go", "submit", "list"
]

# The commands of each mode. A word that is a command is always the command, on every question
# (a choice question included): read as an answer it could silently replace a saved exam answer.
# An option whose letter is a command here is answered in brackets, ``(b)``, which the choice
# reader takes and no command is. Exam words are only told "that is for exams" in practice when
# written in full: there ``n``, ``b`` and ``l`` do nothing, so they stay answers (options N, B, L).
_SHARED: dict[str, CommandName] = {
    "?": "hint",
    "hint": "hint",
    "s": "skip",
    "skip": "skip",
    "q": "quit",
    "quit": "quit",
    "exit": "quit",
    "h": "help",
    "help": "help",
    "w": "why",
    "why": "why",
    "solution": "why",
    "next": "next",
    "back": "back",
    "submit": "submit",
    "list": "list",
}
_EXAM_ONLY: dict[str, CommandName] = {"n": "next", "b": "back", "l": "list"}
_GO = re.compile(r"^(?:g|go|goto)\s*(\d+)$")

COMMAND_LETTERS = {
    "practice": "".join(sorted(k for k in _SHARED if len(k) == 1 and k.isalpha())),
    "exam": "".join(sorted(k for k in (_SHARED | _EXAM_ONLY) if len(k) == 1 and k.isalpha())),
}
"""The single letters that are commands in each mode (an option with such a letter is typed ``(b)``)."""


class Command(Struct, frozen=True):
    """What a line typed at the prompt means."""

    name: CommandName
    argument: int = 0


def parse_command(line: str, *, exam: bool = False) -> Command:
    """Read a prompt line as a command or an answer: a command word is never an answer.

    Args:
        line: What was typed.
        exam: Whether the session is an exam (``n``, ``b`` and ``l`` are then commands too).
    """
    text = line.strip()
    if not text:
        return Command("empty")
    lowered = text.lower()
    go = _GO.match(lowered)
    if go:
        return Command("go", int(go.group(1)))
    name = _SHARED.get(lowered) or (_EXAM_ONLY.get(lowered) if exam else None)
    return Command(name) if name is not None else Command("answer")


def shadowed_option(line: str, letters: str) -> str | None:
    """The option letter a command word also is on this question (``b`` with an option B), if any."""
    text = line.strip()
    if len(text) == 1 and text.upper() in letters:
        return text.upper()
    return None


# ---------------------------------------------------------------------------------------------
# Input
# ---------------------------------------------------------------------------------------------


class LineReader:
    """Lines from a terminal (readline, with a prompt) or from a pipe (one answer per line)."""

    def __init__(self, stream: TextIO, *, interactive: bool) -> None:
        self.stream = stream
        self.interactive = interactive
        if interactive and not plain_mode():
            # Importing readline is what gives input() line editing and a history of answers. Not
            # under --plain: readline redraws the line and writes terminal modes (bracketed paste),
            # escapes a screen reader reads out; the terminal's own line editing is left.
            with contextlib.suppress(ImportError):
                import readline  # noqa: F401

    def read(self, prompt: str, prefill: str = "") -> str | None:
        """The next line without its newline; None at end of input. ``prefill``: text put on the line
        already, to edit (what was being typed when the question was left, with readline)."""
        if self.interactive:
            editor = sys.modules.get("readline")
            try:
                if prefill and editor is not None:

                    def put_back() -> None:
                        editor.insert_text(prefill)
                        editor.redisplay()

                    editor.set_pre_input_hook(put_back)
                    try:
                        return input(prompt)
                    finally:
                        editor.set_pre_input_hook()
                return input(prompt)
            except EOFError:
                # Ctrl-D leaves the cursor after the prompt: what follows starts on a line of its own.
                # (Not when the terminal is gone, closed under the session: its end of input is said
                # by returning None, as Ctrl-D's is.)
                with contextlib.suppress(OSError):
                    sys.stdout.write("\n")
                    sys.stdout.flush()
                return None
        line = self.stream.readline()
        if not line:
            return None
        return line.rstrip("\r\n")


# ---------------------------------------------------------------------------------------------
# Signals
# ---------------------------------------------------------------------------------------------

_HELD = {signal.SIGINT, signal.SIGTERM} | ({signal.SIGALRM} if hasattr(signal, "SIGALRM") else set())
_HANGUP = {signal.SIGHUP} if hasattr(signal, "SIGHUP") else set()
"""Also caught in an exam: a closed terminal leaves the exam to be resumed instead of killing it."""
_LEAVE_STATUS = 128
"""Added to the signal's number for the exit status of an exam left to be resumed."""


def typed_so_far() -> str:
    """The line being typed at a readline prompt (read in a signal handler, before input() gives it up)."""
    editor = sys.modules.get("readline")
    if editor is None:
        return ""
    try:
        return str(editor.get_line_buffer())
    except (AttributeError, ValueError):
        return ""


@contextlib.contextmanager
def held_signals() -> Iterator[None]:
    """Hold Ctrl-C, SIGTERM and the exam alarm back while an attempt is being stored."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        yield
    finally:
        # A signal that arrived meanwhile is delivered here, after the commit.
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


# ---------------------------------------------------------------------------------------------
# The loop
# ---------------------------------------------------------------------------------------------


class SessionLoop:
    """Runs a session to its end and returns the summary.

    Args:
        session: The session to run.
        view: Where everything is drawn.
        reader: Where lines come from.
        solutions: When the worked solution is shown without asking.
        json_out: A stream for JSON Lines (``--json``); None for the human view.
    """

    def __init__(
        self,
        session: Session,
        view: SessionView,
        reader: LineReader,
        *,
        solutions: SolutionPolicy = "wrong",
        json_out: TextIO | None = None,
        keeper: ExamKeeper | None = None,
        draft: str = "",
    ) -> None:
        self.session = session
        self.view = view
        self.reader = reader
        self.solutions = solutions
        self.json_out = json_out
        self.keeper = keeper
        self._timer = False
        self._closing = False
        self._warmed_up = False
        self._reading_answer = False
        self._terminated = False
        self._typed = ""
        """The line being typed at an answer prompt when a signal came (kept at time-up and on leaving)."""
        self._prefill = draft
        """Put back on the next answer prompt of the current question (after Ctrl-C answered no)."""
        self.left: int | None = None
        """The signal that left the exam to be resumed (None: the session ended)."""

    @property
    def interactive(self) -> bool:
        """Whether a person types at a terminal (the loop may then wait for Enter)."""
        return self.reader.interactive and self.json_out is None

    # -- output helpers -------------------------------------------------------------------------

    def _emit(self, data: dict[str, object]) -> None:
        if self.json_out is not None:
            self.json_out.write(json_line(data) + "\n")
            self.json_out.flush()

    @property
    def visible(self) -> bool:
        """Whether the human view is drawn (not in --json mode)."""
        return self.json_out is None

    def _warnings(self) -> None:
        for message in self.session.take_warnings():
            self.view.warning(message)

    def _read_answer(self, prompt: str) -> str | None:
        """An answer prompt: what is typed there is kept if the exam's time runs out or it is left."""
        prefill, self._prefill = self._prefill, ""
        self._typed = ""
        self._reading_answer = True
        try:
            line = self._read(prompt, prefill)
        finally:
            self._reading_answer = False
        if line is None and not self._typed:
            # The end of input of a terminal closed under the prompt: readline still holds the line.
            self._typed = typed_so_far()
        return line

    def _read(self, prompt: str, prefill: str = "") -> str | None:
        if not self._warmed_up and self.interactive:
            # The first question is on screen: load the grader and FSRS (tens of milliseconds) before
            # the prompt, so that the first answer is graded as quickly as the others. Not in a
            # thread: a Python thread busy at the prompt can leave Ctrl-C unseen until the next key.
            self._warmed_up = True
            _load_grading()
        line = self.reader.read(prompt, prefill)
        if line is not None and not self.reader.interactive and self.json_out is None:
            self.view.echo(line)
        return line

    def _fitted(self, prompt: str) -> str:
        """``prompt``, or on a screen too narrow for it on one line, its choices as a folded note
        (each key beside its word) and a bare ``›``: the terminal would cut a prompt mid-word."""
        if not self.visible or len(prompt) < self.view.console.width:
            return prompt
        choices = prompt.removesuffix(" › ").split(" · ")
        self.view.note(" · ".join(choice.replace(" ", NBSP, 1) for choice in choices))
        return "› "

    # -- running --------------------------------------------------------------------------------

    def run(self) -> Summary | None:
        """Ask every question (or until the student stops), then end the session and return its summary.

        None: an exam was left unsubmitted, kept to be resumed (`left` says by which signal).
        """
        caught = _HELD | (_HANGUP if self.session.exam else set())
        previous = {signum: signal.signal(signum, self._on_signal) for signum in caught}
        ending: Ending
        try:
            try:
                self._start_timer()
                ending = self._exam() if self.session.exam else self._practice()
                self._closing = True
            except KeyboardInterrupt:
                self._closing = True
                ending = "interrupted"
            except TimeUp:
                self._closing = True
                ending = "time-up"
                self._stop_timer()
                self._keep_typed_at_time_up()
            except Leave as left:
                self._closing = True
                self._stop_timer()
                self.left = left.signum
                self._leave()
                return None
            self._stop_timer()
            with held_signals():
                summary = self.session.finish(ending)
        finally:
            self._stop_timer()
            for signum, handler in previous.items():
                if handler is not None:  # None: a handler set outside Python, which cannot be put back
                    signal.signal(signum, handler)
        if self.json_out is None and ending == "interrupted":
            self.view.console.print()
        if ending == "time-up" and self.visible:
            self.view.time_up()
        if self.session.exam and self.visible and any(s.answered for s in self.session.slots):
            self.view.exam_results(self.session, solutions=self.solutions)
        self._warnings()
        if self.json_out is not None:
            if self.session.exam:
                from attnquiz.engine.practice.session import graded_json

                for slot in self.session.slots:
                    if slot.grade is not None:
                        self._emit(graded_json(self.session, slot, slot.grade, slot.response))
            self._emit(summary.to_json())
        else:
            self.view.summary(summary)
        return summary

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        """Ctrl-C and SIGTERM stop the session, the alarm ends the exam; once it is closing, neither does.

        In an exam kept for resuming, SIGTERM and a closed terminal (SIGHUP) leave it unsubmitted, and
        Ctrl-C asks first (see `_exam`). The line being typed is read here, before input() drops it.
        """
        if self._closing:
            return
        if self._reading_answer:
            self._typed = typed_so_far()
        if hasattr(signal, "SIGALRM") and signum == signal.SIGALRM:
            raise TimeUp
        if signum != signal.SIGINT:
            if self.session.exam and self.keeper is not None and not self.keeper.failed:
                raise Leave(signum)
            self._terminated = True  # not asked: nobody may be there to answer
        raise KeyboardInterrupt

    def _keep_typed_at_time_up(self) -> None:
        """Time ran out while an answer was being typed: the line is saved as the answer (the browser
        likewise keeps what is in the box), when it reads."""
        typed, self._typed = self._typed.strip(), ""
        slot = self.session.current
        if not typed or slot is None or parse_command(typed, exam=True).name != "answer":
            return
        with held_signals():
            result = self.session.answer(typed)
        if self.visible:
            self.view.console.print()
            if result.counts:
                self.view.note(
                    f"Time is up: the line you were typing, {typed[:60]!r}, is saved as your answer."
                )
            else:
                self.view.note(f"Time is up: the line you were typing, {typed[:60]!r}, could not be read:")
                self.view.invalid(result, typed)

    def _leave(self) -> None:
        """Keep the exam for resuming (with the line being typed) and say how to take it up again. The
        terminal may be gone (a closed window): nothing here may fail for want of it."""
        typed, self._typed = self._typed, ""
        saved = self.keeper.save(draft=typed) if self.keeper is not None else False
        if not self.visible:
            return
        with contextlib.suppress(OSError):
            self.view.console.print()
            if saved:
                answered = sum(s.answered for s in self.session.slots)
                remaining = self.session.remaining()
                left = f", {clock(remaining)} left" if remaining is not None else ""
                total = len(self.session.slots)
                self.view.note(f"The exam is kept, not submitted ({answered} of {total} answered{left}).")
                self.view.note("Continue it with: quiz run --resume")
            else:
                self.view.note("The exam was left unsubmitted; it could not be kept for resuming.")
            self._warnings()

    def _start_timer(self) -> None:
        remaining = self.session.remaining()
        if remaining is not None and hasattr(signal, "setitimer"):
            signal.setitimer(signal.ITIMER_REAL, max(remaining, 0.001))
            self._timer = True

    def _stop_timer(self) -> None:
        if self._timer:
            signal.setitimer(signal.ITIMER_REAL, 0)
            self._timer = False

    # -- practice and review --------------------------------------------------------------------

    def _practice(self) -> Ending:
        session = self.session
        while True:
            question = session.show()  # passes over a question whose variant cannot be built
            slot = session.current
            self._warnings()
            if slot is None or question is None:
                return "completed"
            if self.visible:
                self.view.question(session, slot, question)
            outcome = self._ask(slot, question)
            if outcome is not None:
                return outcome

    def _ask(self, slot: Slot, question: Question) -> Ending | None:
        """Prompts for one practice question until it is answered or skipped; an ending stops the session."""
        session = self.session
        letters = _letters(question)
        while True:
            part = session.pending_part(slot)  # a question in parts is answered part by part
            label = f" ({part.label})" if part is not None else ""
            prompt = f"[{slot.position}/{len(session.slots)}]{label} › "
            if _codes(question) and self.visible:
                self.view.note(CODE_PROMPT)
            line = self._read_answer(prompt)
            if line is None:
                return "end-of-input"
            command = parse_command(line)
            self._tell_shadowed(command, line, letters)
            if _codes(question) and (line.strip() in EDIT_WORDS_ALL or command.name == "answer"):
                code = self._code(question, line.strip())
                if code is None:
                    continue
                source, shown = code
                with held_signals():
                    result = session.answer(source)
                self._report(slot, question, result, shown)
                if result.counts:
                    return self._after_answer(result, question)
                continue
            if command.name == "empty" and _explains(question):
                # A concept question: Enter alone means "I thought it through"; the model answer follows.
                with held_signals():
                    result = session.answer("")
                self._report(slot, question, result, "")
                return self._rate(slot, question)
            if command.name == "empty":
                if self.visible:
                    self.view.reminder(exam=False)
            elif command.name == "hint":
                text, step, steps = session.next_hint()
                self._emit(
                    {"type": "hint", "position": slot.position, "hint": text, "step": step, "of": steps}
                )
                if self.visible:
                    self.view.hint(text, step, steps)
            elif command.name == "help":
                if self.visible:
                    self.view.help(exam=False, choice=bool(letters))
            elif command.name == "quit":
                return "quit"
            elif command.name == "skip":
                part_way = session.part_in_progress(slot)
                with held_signals():
                    session.skip()
                if part_way and slot.grade is not None:
                    # Left part-way, a question in parts is graded with the rest blank (as everywhere).
                    self._report(slot, question, slot.grade, slot.response)
                    return self._after_answer(slot.grade, question)
                due = slot.next_due.isoformat() if slot.next_due is not None else None
                self._emit(
                    {"type": "skip", "position": slot.position, "item": question.item_id, "next_due": due}
                )
                if self.visible:
                    self.view.skipped(question, slot.next_due)
                return self._pause(question, shown=False)
            elif command.name == "why":
                if self.visible:
                    self.view.note("The worked solution comes after your answer (s skips).")
            elif command.name in ("next", "back", "go", "submit", "list"):
                if self.visible:
                    self.view.note("That is for exams; here, s skips and q stops.")
            elif not self._reads_as_meant(slot, line):
                continue
            else:
                with held_signals():
                    result = session.answer(line)
                self._report(slot, question, result, line, part)
                if result.status == "unscored":
                    return self._rate(slot, question)
                if result.counts and not session.part_in_progress(slot):
                    return self._after_answer(result, question)

    def _code(self, question: Question, line: str) -> tuple[str, str] | None:
        """A code answer: written in the editor (Enter, e or edit) or read from the file named; the
        source and how the response is shown (None, said why, when there is none)."""
        from attnquiz import code_answer
        from attnquiz.answer import read_code_file
        from attnquiz.engine.answers.kinds import CodeAnswer

        answer = question.answer
        assert isinstance(answer, CodeAnswer)
        store = self.session.store
        kept = code_answer.kept_file(store.path.parent if store is not None else None, question, answer)
        if line in code_answer.EDIT_WORDS:
            if not self.interactive:
                self.view.note("Give the path of a .py file (the editor needs a terminal).")
                return None
            why = code_answer.edit(kept)
            if why is not None:
                self.view.note(f"{why[:1].upper()}{why[1:]}.")
                return None
            path = kept
        else:
            path = Path(line).expanduser()
            if not path.is_file():
                self.view.note(
                    f"No file {line!r}: press Enter to write the code in your editor, or give a .py file."
                )
                return None
        import typer  # read_code_file's error ends with typer's Exit, caught here (a code answer only)

        try:
            source = read_code_file(path)
        except typer.Exit:
            return None  # read_code_file said why
        if path != kept:
            code_answer.keep_copy(source, kept)
        return source, f"code in {path} (kept in {kept})"

    def _rate(self, slot: Slot, question: Question) -> Ending | None:
        """After a concept answer (shown with the model answer): the student's own rating, asked until
        it is one of the four. The typed answer is already stored; quitting here keeps it unrated."""
        session = self.session
        prompt = rating_prompt(session.rating_intervals(slot))
        while True:
            line = self._read(self._fitted(prompt))
            if line is None:
                return "end-of-input"
            text = line.strip().lower()
            rating = RATINGS.get(text)
            if rating is not None:
                with held_signals():
                    session.rate(rating)
                due = slot.next_due.isoformat() if slot.next_due is not None else None
                self._emit(
                    {
                        "type": "rating",
                        "position": slot.position,
                        "item": question.item_id,
                        "rating": rating,
                        "next_due": due,
                    }
                )
                if self.visible:
                    self.view.rated(rating, slot.next_due)
                self._warnings()
                return None
            if text in ("q", "quit", "exit"):
                return "quit"
            if self.visible:
                self.view.note(RATING_HELP)

    def _tell_shadowed(self, command: Command, line: str, letters: str) -> None:
        """After a command that is also an option letter of this question: how to answer that option."""
        option = shadowed_option(line, letters) if command.name not in ("answer", "empty") else None
        if option is not None and self.visible:
            self.view.shadowed(line.strip(), command.name, option, None)

    def _report(
        self, slot: Slot, question: Question, result: Grade, response: str, part: Part | None = None
    ) -> None:
        """The verdict of one response; ``part``: the part it answered (only that part's answer is
        shown, never the later parts' still to be asked)."""
        from attnquiz.engine.practice.session import graded_json

        if self.session.exam and result.counts:
            # No verdict before submission, in JSON either: the grades follow the submission.
            self._emit(
                {"type": "saved", "position": slot.position, "item": question.item_id, "response": response}
            )
        else:
            self._emit(graded_json(self.session, slot, result, response))
        if self.visible and not result.counts:
            self.view.invalid(result, response)
        elif self.visible and not self.session.exam:
            shown = f"({part.label}) {part.answer.format()}" if part is not None else None
            self.view.feedback(result, question, response, slot.next_due, answer=shown)
        self._warnings()

    def _after_answer(self, result: Grade, question: Question) -> Ending | None:
        wrong = result.status != "correct"
        shown = self.solutions == "always" or (self.solutions == "wrong" and wrong)
        if shown and self.visible:
            self.view.solution(question)
        return self._pause(question, shown=shown)

    def _pause(self, question: Question, *, shown: bool) -> Ending | None:
        """On a terminal, wait before the next question (time to read; ``w`` shows the solution; ``g``
        says a scored answer was a guess, 1-4 rate it, so that its review is not scheduled as Easy).

        Anything else typed here is not an answer (the next question is not on screen yet): it is
        said so, and the next question follows.
        """
        if not self.interactive:
            return None
        session = self.session
        slot = self._answered_slot(question)
        shown = shown or not has_solution(question)
        missed = slot is not None and slot.grade is not None and slot.grade.status in ("wrong", "partial")
        while True:
            action = "summary" if session.finished else "next"
            offers = [f"Enter {action}"]
            if missed:
                offers.append("a another like this")
            if not shown:
                offers.append("w solution")
            if slot is not None and session.can_rerate(slot) and slot.rating not in (None, "again"):
                again = session.rating_intervals(slot).get("again")
                offers.append("g guessed" + (f" ({span(again)})" if again is not None else ""))
            offers.append("q quit")
            line = self.reader.read(self._fitted(" · ".join(offers) + " › "))
            if line is None:
                return "end-of-input"
            command = parse_command(line)
            text = line.strip().lower()
            if command.name == "why":
                if shown and has_solution(question):
                    self.view.note("The worked solution is above.")
                else:
                    self.view.solution(question)
                    shown = True
                continue
            if command.name == "quit":
                return "quit"
            if missed and slot is not None and text in ANOTHER:
                # A fresh variant of the same item, asked now (the next question follows it).
                session.another(slot.position)
                return None
            rating = GUESS.get(text) or RATINGS.get(text)
            if rating is not None and slot is not None and session.can_rerate(slot):
                with held_signals():
                    session.rerate(slot.position, rating)
                self.view.rerated(rating, slot.next_due, guess=text in GUESS)
                self._warnings()
                continue
            if command.name != "empty":
                self.view.note(
                    f"{line.strip()[:40]!r} was not taken as an answer: the next question was not on "
                    "the screen yet. Type your answer at its own prompt."
                )
            return None

    def _answered_slot(self, question: Question) -> Slot | None:
        """The slot whose answer (or skip) ``question`` was, the one the pause is after."""
        for slot in self.session.slots:
            if slot.question is question:
                return slot
        return None

    # -- exams ----------------------------------------------------------------------------------

    def _exam_prompt(self, slot: Slot | None) -> str:
        where = f"{slot.position}/{len(self.session.slots)}" if slot is not None else "done"
        part = self.session.pending_part(slot) if slot is not None and slot.question is not None else None
        if part is not None:
            where += f" ({part.label})"
        remaining = self.session.remaining()
        if remaining is not None:
            return f"[{where} · {clock(remaining)} left] › "
        return f"[{where}] › "

    def _exam(self) -> Ending:
        """Runs the exam; Ctrl-C at a terminal asks as ``q`` does (no: back to the question)."""
        redraw = True
        while True:
            try:
                return self._exam_loop(redraw)
            except KeyboardInterrupt:
                if not self.interactive or self._closing or self._terminated:
                    raise
                try:
                    submit = self._interrupted()
                except OSError:
                    # The terminal is gone (its window closed: reads end, writes fail): kept, not submitted.
                    raise Leave(int(signal.SIGHUP) if _HANGUP else int(signal.SIGINT)) from None
                if submit:
                    return "submitted"
                redraw = False

    def _interrupted(self) -> bool:
        """Ctrl-C (or end of input) during an exam at a terminal: submit? True: yes. No puts the line
        being typed back; Ctrl-C or end of input again leaves the exam, kept to be resumed (without
        history to keep it in, it is submitted, as before)."""
        self.view.console.print()
        self.view.overview(self.session)
        missing = self.session.unanswered()
        if self.keeper is not None and not self.keeper.failed:
            self.view.note("Ctrl-C again leaves it unsubmitted: quiz run --resume continues it later.")
        asked = f"Submit with {len(missing)} unanswered? [y/N] › " if missing else "Submit the exam? [y/N] › "
        try:
            line = self.reader.read(asked)
        except KeyboardInterrupt:
            line = None
        if line is None:
            if self.keeper is None or self.keeper.failed:
                return True
            raise Leave(signal.SIGINT)  # the line being typed is kept with the exam
        if line.strip().lower() in {"y", "yes", "submit"}:
            return True
        self._prefill, self._typed = self._typed, ""
        return False

    def _exam_loop(self, redraw: bool) -> Ending:
        session = self.session
        # A command that is also an option letter of the question it was typed at: said after the
        # question it leads to is drawn, where the student looks next.
        shadowed: tuple[str, CommandName, str, int | None] | None = None
        while True:
            if session.time_up:
                raise TimeUp
            question = session.show()  # passes over a question whose variant cannot be built
            slot = session.current
            self._warnings()
            if redraw:
                if slot is not None and question is not None:
                    if self.visible:
                        self.view.question(session, slot, question)
                else:
                    if self.visible:
                        self.view.overview(session)
            if shadowed is not None and self.visible:
                self.view.shadowed(*shadowed)
            redraw = True
            letters = _letters(question) if question is not None else ""
            line = self._read_answer(self._exam_prompt(slot))
            if line is None and self.interactive:
                # Ctrl-D, or a terminal closed under the exam: asked, as Ctrl-C is.
                raise KeyboardInterrupt
            if line is None:
                return "end-of-input"
            command = parse_command(line, exam=True)
            if command.name == "empty" and slot is not None and _explains(question):
                command = Command("answer")  # a concept question: Enter alone is an answer (thought through)
            if (
                slot is not None
                and _codes(question)
                and (line.strip() in EDIT_WORDS_ALL or command.name == "answer")
            ):
                assert question is not None
                code = self._code(question, line.strip())
                if code is not None:
                    with held_signals():
                        result = session.answer(code[0])
                    self._report(slot, question, result, code[1])
                    if result.counts and self.visible:
                        self.view.saved(slot)
                redraw = bool(code is not None and result.counts)
                continue
            option = shadowed_option(line, letters) if command.name not in ("answer", "empty") else None
            where = slot.position if slot is not None else None
            shadowed = (line.strip(), command.name, option, where) if option is not None else None
            if command.name == "empty":
                if self.visible:
                    self.view.reminder(exam=True)
                redraw = False
            elif command.name in ("submit", "quit"):
                if self._confirm_submit():
                    return "submitted"
                redraw = False
            elif command.name == "help":
                if self.visible:
                    self.view.help(exam=True, choice=bool(letters))
                redraw = False
            elif command.name == "list":
                if self.visible:
                    self.view.overview(session)
                redraw = False
            elif command.name in ("hint", "why"):
                if self.visible:
                    self.view.note("No hints or solutions during an exam; they come after submit.")
                redraw = False
            elif command.name in ("next", "skip"):
                session.next()
            elif command.name == "back":
                session.back()
            elif command.name == "go":
                try:
                    session.go(command.argument)
                except ValueError as exc:
                    if self.visible:
                        self.view.note(str(exc))
                    redraw = False
            elif slot is None or question is None:
                if self.visible:
                    self.view.note("Every question has an answer: submit, or g N to revisit.")
                redraw = False
            elif not self._reads_as_meant(slot, line):
                redraw = False
            else:
                with held_signals():
                    result = session.answer(line)
                self._report(slot, question, result, line)
                if result.counts and session.part_in_progress(slot):
                    redraw = False  # the same question, its next part
                    kept = session.kept_parts(slot)
                    if kept and self.visible:
                        self.view.revision(kept)
                elif result.counts:
                    if self.visible:
                        self.view.saved(slot)
                else:
                    redraw = False

    def _reads_as_meant(self, slot: Slot, line: str) -> bool:
        """A formula answer at a terminal whose reading is not the text typed (``12d^2+13d`` read as
        ``12*d^2 + 13*d``): said before it is graded, and asked to confirm (Enter: yes). No puts the line
        back on the prompt, to edit. True: grade it."""
        from attnquiz.engine.grading.formulas import formula_reading

        if not self.interactive:
            return True
        part = self.session.pending_part(slot)
        answer = part.answer if part is not None else self.session.question(slot).answer
        read = formula_reading(answer, line)
        if read is None or _squeezed(read) == _squeezed(line):
            return True
        self.view.reading(read)
        reply = self.reader.read("Grade it as read? [Y/n] › ")
        if reply is None or reply.strip().lower() in {"", "y", "yes"}:
            return True
        self._prefill = line
        return False

    def _confirm_submit(self) -> bool:
        missing = self.session.unanswered()
        if not missing or not self.interactive:
            return True
        self.view.overview(self.session)
        line = self.reader.read(f"Submit with {len(missing)} unanswered? [y/N] › ")
        return line is not None and line.strip().lower() in {"y", "yes", "submit"}


def _load_grading() -> None:
    """Import what grading an answer needs, and build the FSRS scheduler."""
    # A failure here is not reported: grading imports the same modules and reports it.
    with contextlib.suppress(ImportError):
        import attnquiz.engine.grading.grade  # noqa: F401
        from attnquiz.engine.practice import review

        review.scheduler()


RATINGS = {
    "1": "again",
    "2": "hard",
    "3": "good",
    "4": "easy",
    "again": "again",
    "hard": "hard",
    "good": "good",
    "easy": "easy",
}
"""What may be typed to rate a concept answer: a key 1-4 or the rating's word."""
GUESS = {"g": "again", "guess": "again", "guessed": "again"}
"""What may be typed after a scored answer to say it was a guess (rated Again: it comes back soon)."""
ANOTHER = {"a", "another"}
"""What may be typed after a wrong or partly right answer for a fresh variant of the same item, now."""
RATING_PROMPT = "Rate your answer: 1 again · 2 hard · 3 good · 4 easy › "


def rating_prompt(intervals: dict[str, timedelta]) -> str:
    """The rating prompt, each rating with the interval it gives (`RATING_PROMPT` without history)."""
    if not intervals:
        return RATING_PROMPT
    keys = ("1 again", "2 hard", "3 good", "4 easy")
    choices = [f"{key} ({span(intervals[key[2:]])})" for key in keys if key[2:] in intervals]
    return "Rate your answer: " + " · ".join(choices) + " › "


RATING_HELP = (
    "Type 1 again (you missed it), 2 hard (partly), 3 good (the key points) or 4 easy (all of it, "
    "at once); q stops here (your answer is kept, unrated)."
)


def _squeezed(formula: str) -> str:
    """A formula without spaces, with ``**`` as ``^``: how it was typed, up to what cannot mislead."""
    return "".join(formula.split()).replace("**", "^")


CODE_PROMPT = (
    "Press Enter to write the function in your editor (from the stub), or type the path of a .py file."
)
EDIT_WORDS_ALL = frozenset({"", "e", "edit"})


def _codes(question: Question | None) -> bool:
    """Whether the question asks for code."""
    return question is not None and question.answer.kind == "code"


def _explains(question: Question | None) -> bool:
    """Whether ``question`` is a concept question (answered in words, self-rated)."""
    from attnquiz.engine.answers.kinds import ExplainAnswer

    return question is not None and isinstance(question.answer, ExplainAnswer)


def _letters(question: Question | None) -> str:
    from attnquiz.engine.answers.kinds import ChoiceAnswer

    if question is not None and isinstance(question.answer, ChoiceAnswer):
        return question.answer.letters
    return ""


def left_status(signum: int | None) -> int:
    """The exit status of an exam left unsubmitted by ``signum`` (128 + its number, the shell's way)."""
    return _LEAVE_STATUS + (signum if signum is not None else int(signal.SIGINT))


def stdin_is_terminal() -> bool:
    """Whether answers are typed at a terminal (rather than piped in)."""
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False
