"""An exam in progress kept on disk, so that one left by Ctrl-C, a closed terminal or a killed process
can be taken up again (`quiz run --resume`, the browser's home page) with its questions, its saved
answers and the time it had left.

The state is one small JSON file per exam in a private folder beside the history (``history-exams/``
next to ``history.sqlite3``), rewritten whole after every answer and every move between questions:
written to a temporary file, flushed to the disk and renamed over the old one, so that a process
killed at any moment leaves either the previous state or the new one, never half of one. The answers
themselves are also in the history (an exam stores each as it is given); the state adds what the
history does not hold: the questions not answered yet, where the student was, and the clock.

The clock stops while an exam is left: it resumes with the time it had at its last save (a kill -9
gives back at most the time since the last answer or move).

One exam is taken in one place at a time: the process that runs it (a terminal's `quiz run`, or
`quiz serve`) holds an exclusive `flock` on ``<id>.lock`` beside its state, and taking it up again
elsewhere is refused while that lock is held. The kernel drops the lock when that process ends, however
it ends (kill -9 included), so a stale lock never keeps an exam from being resumed, as a process id
written in the state could (the id may be reused, or be another machine's on a shared home folder).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from attnquiz.engine.answers.kinds import PartsAnswer
from attnquiz.engine.errors import QuizError
from attnquiz.engine.practice.history_records import utc_now
from attnquiz.engine.practice.planning import Plan, Planned, format_duration
from attnquiz.engine.practice.session import Session

if TYPE_CHECKING:
    from attnquiz.engine.bank.loaded import Bank
    from attnquiz.engine.practice.store import Store

FORMAT = 1
"""The version of the state file's layout (a file of another version is not resumed)."""
MAX_BYTES = 4 * 1024 * 1024
"""A state file larger than this is not read: an exam's answers are a few kilobytes."""
DRAFT_LIMIT = 10_000
"""The most of a line being typed that is kept with a left exam (characters)."""
_ID = re.compile(r"^[0-9a-f]{8,64}$")


class ResumeError(QuizError):
    """A saved exam cannot be taken up again (unreadable, or its bank has changed)."""


class ExamInUse(QuizError):
    """A saved exam is being taken in another process (a terminal, or `quiz serve`) right now."""


def exams_folder(history: str | os.PathLike[str]) -> Path:
    """The folder of the exams in progress kept beside the history ``history``."""
    path = Path(history)
    return path.with_name(f"{path.stem}-exams")


class SavedExam(Struct, frozen=True):
    """An exam in progress found on disk: what a list of exams to resume shows, and what `resume` reads."""

    path: Path
    id: str
    bank: str
    bank_ref: str
    title: str
    questions: int
    answered: int
    remaining: float | None
    """Seconds left when it was last saved (None: untimed)."""
    saved_at: datetime
    data: dict[str, Any]

    def describe(self) -> str:
        """One line: ``week1, 2 of 5 answered, 12:31 left``."""
        left = ""
        if self.remaining is not None:
            minutes, seconds = divmod(round(self.remaining), 60)
            left = f", {minutes}:{seconds:02d} left"
        return f"{self.bank_ref}, {self.answered} of {self.questions} answered{left}"


# ---------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------


def state_of(session: Session, *, bank_path: str = "", draft: str = "") -> dict[str, Any]:
    """The JSON object that lets ``session`` (an exam) be taken up again; ``bank_path``: the bank's
    file (found again by it when the bank was named by a relative path); ``draft``: a line being typed
    at the current question when the exam was left (offered again, unsaved, on return)."""
    from attnquiz.engine.grading.parts import PART_SEPARATOR

    plan = session.plan
    slots = []
    for slot in session.slots:
        graded_parts: list[str] | None = None
        if slot.answered and slot.question is not None and isinstance(slot.question.answer, PartsAnswer):
            graded_parts = [p.strip() for p in slot.response.split(PART_SEPARATOR)]
        slots.append(
            {
                "item": slot.planned.entry.id,
                "seed": slot.planned.seed,
                "code": slot.question.code if slot.question is not None else None,
                "answered": slot.answered,
                "response": slot.response,
                "graded_parts": graded_parts,
                "part_responses": list(slot.part_responses),
                "earlier_parts": list(slot.earlier_parts),
                "seconds": round(slot.seconds, 3),
                "hints": slot.hints,
            }
        )
    remaining = session.remaining()
    current = session.current
    return {
        "format": FORMAT,
        "id": session.id,
        "bank": plan.banks[0] if plan.banks else "",
        "bank_ref": plan.bank_ref or (plan.banks[0] if plan.banks else ""),
        "bank_path": bank_path,
        "title": plan.title,
        "seed": plan.seed,
        "repeat": plan.repeat,
        "time_limit": plan.time_limit,
        "remaining": remaining,
        "elapsed": session.elapsed(),
        "index": session.index,
        "saved_at": utc_now().isoformat(),
        # A line being typed is short; a pasted megabyte is cut, so that the state stays readable.
        "draft": {"position": current.position, "text": draft[:DRAFT_LIMIT]}
        if draft and current is not None
        else None,
        "slots": slots,
    }


def _write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` by ``text`` so that a crash leaves the old file or the new one, whole."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(temporary, flags, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        temporary.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    with contextlib.suppress(OSError):  # the rename itself on the disk (not possible everywhere)
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


class ExamKeeper:
    """Keeps one running exam's state on disk: saved after every change, removed once it is handed in.

    Attach it with `keep`; a failure to write is said once in the session's warnings and the exam goes
    on (its answers are still in the history).
    """

    def __init__(
        self, folder: Path, session: Session, *, bank_path: str = "", lock: int | None = None
    ) -> None:
        self.folder = folder
        self.session = session
        self.bank_path = bank_path
        self.path = folder / f"{session.id}.json"
        self.failed = False
        self.lock = lock
        """The descriptor of the exam's lock file while this process holds it (None: not held)."""

    def save(self, *, draft: str = "") -> bool:
        """Write the exam's state now (with ``draft``, the line being typed, when it is being left)."""
        if self.failed or not self.session.exam:
            return False
        if self.session.finished:
            self.discard()
            return False
        try:
            if not self.folder.exists():
                self.folder.mkdir(parents=True, mode=0o700)
                self.folder.chmod(0o700)  # mkdir's mode is masked by the umask
            _write_atomically(
                self.path,
                json.dumps(state_of(self.session, bank_path=self.bank_path, draft=draft), ensure_ascii=True),
            )
        except OSError as exc:
            self.failed = True
            self.session.note_warning(
                f"the exam cannot be kept for resuming ({exc.strerror or exc}); its answers are still saved"
            )
            return False
        return True

    def discard(self) -> None:
        """Remove the state (the exam was handed in), and its lock."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        if self.lock is not None:
            with contextlib.suppress(FileNotFoundError):
                _lock_path(self.path).unlink()  # while held: another claim sees it gone (`claim`)
        self.release()

    def release(self) -> None:
        """Let another process take the exam up (this one stops running it; its state stays)."""
        if self.lock is not None:
            os.close(self.lock)  # closing the only descriptor of the lock's file drops the lock
            self.lock = None

    def __call__(self, session: Session) -> None:
        self.save()


def keep(session: Session, *, bank_path: str = "", lock: int | None = None) -> ExamKeeper | None:
    """Keep ``session``'s state on disk from now on (an exam with a history; None otherwise).

    ``bank_path``: the bank's file, by which `resume` finds it again when it was named by a path;
    ``lock``: the exam's lock, already held (`resume`); otherwise it is taken here.

    Raises:
        ExamInUse: the exam is being taken in another process.
    """
    if not session.exam or session.history is None:
        return None
    folder = exams_folder(session.history)
    if lock is None:
        lock = _claim(folder / f"{session.id}.json")
    keeper = ExamKeeper(
        folder, session, bank_path=str(Path(bank_path).resolve()) if bank_path else "", lock=lock
    )
    session.on_change = keeper
    keeper.save()
    return keeper


def _lock_path(state: Path) -> Path:
    return state.with_suffix(".lock")


def _claim(state: Path) -> int | None:
    """Hold the lock of the exam kept in ``state``: its descriptor, or None where no lock can be taken
    (no folder yet that can be made, a file system without locks: the exam runs, unguarded).

    Raises:
        ExamInUse: another process holds it.
    """
    path = _lock_path(state)
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(3):
        try:
            if not state.parent.exists():
                state.parent.mkdir(parents=True, mode=0o700)
                state.parent.chmod(0o700)
            descriptor = os.open(path, flags, 0o600)
        except OSError:
            return None
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(descriptor)
            if exc.errno in {errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES}:
                raise ExamInUse(
                    "this exam is being taken elsewhere right now (in quiz serve or another terminal): "
                    "continue it there, or close that one first"
                ) from None
            return None
        try:
            same = path.stat().st_ino == os.fstat(descriptor).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return descriptor
        # The file was removed (the exam handed in) between opening and locking it: try the new one.
        os.close(descriptor)
    return None


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------


def _read(path: Path) -> dict[str, Any]:
    """The state object in ``path``, checked for the shape `resume` relies on.

    Raises:
        ResumeError: the file is too large, not JSON, or not an exam state of this version.
    """
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise ResumeError(f"the saved exam {path} cannot be read ({exc.strerror or exc})") from exc
    if len(raw) > MAX_BYTES:
        raise ResumeError(f"the saved exam {path} is larger than an exam state can be")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ResumeError(f"the saved exam {path} is damaged (not JSON)") from exc
    problem = _shape_problem(data)
    if problem is not None:
        raise ResumeError(f"the saved exam {path} is damaged ({problem})")
    assert isinstance(data, dict)
    return data


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value


def _shape_problem(data: object) -> str | None:
    """What is wrong with a state object (None: nothing)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return "not an exam state of this version of quiz"
    texts = ("id", "bank", "bank_ref", "bank_path", "title", "repeat", "saved_at")
    if any(not isinstance(data.get(key), str) for key in texts) or not _ID.match(data["id"]):
        return "its names are missing"
    if not isinstance(data.get("seed"), int) or not isinstance(data.get("slots"), list) or not data["slots"]:
        return "its questions are missing"
    for key in ("time_limit", "remaining"):
        if data.get(key) is not None and not (_is_number(data[key]) and 0 <= data[key] <= 24 * 3600):
            return f"its {key.replace('_', ' ')} is not a time"
    if not _is_number(data.get("elapsed")) or data["elapsed"] < 0:
        return "its elapsed time is not a time"
    index = data.get("index")
    if index is not None and not (isinstance(index, int) and 0 <= index < len(data["slots"])):
        return "its current question is not one of its questions"
    draft = data.get("draft")
    if draft is not None and not (
        isinstance(draft, dict)
        and isinstance(draft.get("position"), int)
        and isinstance(draft.get("text"), str)
    ):
        return "its unsaved line is damaged"
    for slot in data["slots"]:
        if not isinstance(slot, dict):
            return "a question is damaged"
        seed = slot.get("seed")
        fine = (
            isinstance(slot.get("item"), str)
            and (seed is None or (isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0))
            and (slot.get("code") is None or isinstance(slot.get("code"), str))
            and isinstance(slot.get("answered"), bool)
            and isinstance(slot.get("response"), str)
            and _strings(slot.get("part_responses"))
            and _strings(slot.get("earlier_parts"))
            and (slot.get("graded_parts") is None or _strings(slot.get("graded_parts")))
            and _is_number(slot.get("seconds"))
            and isinstance(slot.get("hints"), int)
        )
        if not fine:
            return "a question is damaged"
    return None


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _saved(path: Path, data: dict[str, Any]) -> SavedExam:
    try:
        saved_at = datetime.fromisoformat(data["saved_at"])
    except ValueError as exc:
        raise ResumeError(f"the saved exam {path} is damaged (its time is not a time)") from exc
    return SavedExam(
        path=path,
        id=data["id"],
        bank=data["bank"],
        bank_ref=data["bank_ref"],
        title=data["title"],
        questions=len(data["slots"]),
        answered=sum(bool(s["answered"]) for s in data["slots"]),
        remaining=data["remaining"],
        saved_at=saved_at,
        data=data,
    )


def saved_exams(history: str | os.PathLike[str]) -> tuple[list[SavedExam], list[str]]:
    """The exams in progress kept beside ``history``, the most recently saved first, and a line for
    each file that could not be read (left in place, never resumed)."""
    folder = exams_folder(history)
    found: list[SavedExam] = []
    problems: list[str] = []
    try:
        paths = sorted(p for p in folder.iterdir() if p.suffix == ".json" and not p.name.startswith("."))
    except FileNotFoundError:
        return [], []
    except OSError as exc:
        return [], [f"the saved exams in {folder} cannot be listed ({exc.strerror or exc})"]
    from attnquiz.engine.ownership import folder_problem

    problem = folder_problem(folder)
    if problem is not None:
        return [], [f"the saved exams are not resumed: {problem}"]
    for path in paths:
        try:
            found.append(_saved(path, _read(path)))
        except ResumeError as exc:
            problems.append(str(exc))
    found.sort(key=lambda exam: exam.saved_at, reverse=True)
    return found, problems


# ---------------------------------------------------------------------------------------------
# Taking an exam up again
# ---------------------------------------------------------------------------------------------


def resume(
    saved: SavedExam,
    bank: Bank,
    store: Store | None,
    *,
    timed: bool = True,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[Session, str]:
    """The exam ``saved`` as a running session, and the line that was being typed when it was left
    ("" when none): its questions (rebuilt from their items and seeds), its answers (graded again,
    exactly as before) and its clock (the time it had left at its last save). The session is kept
    on disk as it goes on (`keep`), under the same name.

    Raises:
        ResumeError: the bank no longer has one of its items, or builds a different question from it
            (the bank was edited since the exam began).
        ExamInUse: the exam is being taken in another process now.
    """
    lock = _claim(saved.path)  # before reading: the state is the one its last runner left
    try:
        if not saved.path.exists():
            raise ResumeError("the saved exam was handed in or set aside meanwhile")
        saved = _saved(saved.path, _read(saved.path))
        session, text = _resumed(saved, bank, store, timed=timed, clock=clock)
        kept = keep(session, bank_path=saved.data["bank_path"], lock=lock)  # kept on, in the same file
        if kept is None and lock is not None:
            os.close(lock)  # not kept (no history: a trial run): nothing to hold it for
    except BaseException:
        if lock is not None:
            if not saved.path.exists():  # no exam left to guard: leave no lock file behind either
                with contextlib.suppress(FileNotFoundError):
                    _lock_path(saved.path).unlink()
            os.close(lock)
        raise
    return session, text


def _resumed(
    saved: SavedExam, bank: Bank, store: Store | None, *, timed: bool, clock: Callable[[], float]
) -> tuple[Session, str]:
    """`resume`'s session and its line being typed, not yet kept."""
    from attnquiz.engine.errors import ItemNotFoundError
    from attnquiz.engine.grading.grade import grade
    from attnquiz.engine.grading.parts import grade_parts

    data = saved.data
    if bank.name != saved.bank:
        raise ResumeError(f"the saved exam is of bank {saved.bank!r}, not {bank.name!r}")
    try:
        entries = [bank.get(s["item"]) for s in data["slots"]]
    except ItemNotFoundError as exc:
        raise ResumeError(
            f"the saved exam cannot be resumed: {exc} (the bank changed since it began)"
        ) from exc
    plan = Plan(
        title=data["title"],
        mode="exam",
        seed=data["seed"],
        questions=tuple(Planned(e, s["seed"]) for e, s in zip(entries, data["slots"], strict=True)),
        banks=(bank.name,),
        repeat=data["repeat"],
        bank_ref=data["bank_ref"],
        time_limit=data["time_limit"],
    )
    session = Session(plan, store=store, session_id=data["id"], timed=timed, clock=clock)
    for slot, kept in zip(session.slots, data["slots"], strict=True):
        slot.seconds = float(kept["seconds"])
        slot.hints = kept["hints"]
        slot.part_responses = list(kept["part_responses"])
        slot.earlier_parts = list(kept["earlier_parts"])
        if kept["code"] is None and not kept["answered"] and not kept["part_responses"]:
            continue  # never shown: built when it is
        try:
            question = session.question(slot)
        except Exception as exc:  # bank code that fails now: the exam cannot be rebuilt as it was
            raise ResumeError(
                f"the saved exam cannot be resumed: question {slot.position} cannot be built now ({exc})"
            ) from exc
        if kept["code"] is not None and question.code != kept["code"]:
            raise ResumeError(
                f"the saved exam cannot be resumed: question {slot.position} is not the same question "
                "any more (the bank changed since the exam began)"
            )
        if not kept["answered"]:
            continue
        slot.response = kept["response"]
        if isinstance(question.answer, PartsAnswer):
            parts = kept["graded_parts"] or []
            slot.grade = grade_parts(question.answer, _padded(parts, len(question.answer.parts)))
        else:
            slot.grade = grade(question, kept["response"])
        if not slot.grade.counts:
            raise ResumeError(
                f"the saved exam cannot be resumed: the answer to question {slot.position} no longer reads "
                "(the bank changed since the exam began)"
            )
    session.index = data["index"]
    now = session.started
    session.started = now - float(data["elapsed"])
    if data["remaining"] is not None:
        session.deadline = now + float(data["remaining"])
    draft = data["draft"]
    text = ""
    if draft is not None and data["index"] is not None and draft["position"] == data["index"] + 1:
        text = draft["text"]
    return session, text


def _padded(parts: Sequence[str], count: int) -> list[str]:
    return [*parts, *[""] * (count - len(parts))][:count]


def set_aside(saved: SavedExam) -> Path | None:
    """Rename a saved exam that cannot be resumed out of the list (kept, for whoever wants to look)."""
    target = saved.path.with_suffix(".unresumable")
    try:
        saved.path.replace(target)
    except OSError:
        return None
    return target


def describe_time(seconds: float | None) -> str:
    """``12m31s left`` or ``untimed``."""
    return "untimed" if seconds is None else f"{format_duration(seconds)} left"


__all__ = [
    "ExamInUse",
    "ExamKeeper",
    "ResumeError",
    "SavedExam",
    "describe_time",
    "exams_folder",
    "keep",
    "resume",
    "saved_exams",
    "set_aside",
    "state_of",
]
