"""Worker processes that make a class's PDF pieces on every CPU, or on one (`pdf.write_documents`).

Each worker does its share end to end. It is handed a small description of the class (the bank
file and its SHA-256, the item ids, the master seed, the number of students: `ClassRecipe`) and the
documents' descriptions once, then piece after piece only a `Piece` (a document number and a range
of students). It loads the bank itself, as the main process did (`banks.load(path, plugins=True)`:
the same files, the same trust rules, its plugins imported in the worker; the notice that a bank
runs plugin code is said once, by the main process, and not again by each worker), builds those
students' variants from their seeds, writes the Typst source and compiles it
(`pdf_piece.make_piece`, the very function the main process runs for a small export), and sends the PDF back.
The main process only joins the pieces, in order, as they come (`pdfjoin`), so the bytes are the
same whatever the number of workers. An earlier design that built the variants and the Typst source
in the main process and shipped them to workers was slower than one process: that work was more
than half of the whole.

**Start method.** ``forkserver`` where the platform has it (Linux and the BSDs; macOS too), else
``spawn`` (Windows). Never ``fork``: the main process has threads (the progress bar's timer and
its refresh thread; Typst's own), and a forked child of a threaded process inherits whatever locks
those threads held at that instant (the allocator's, stdio's, the logging module's), which can
deadlock it; a forked child would also inherit the main process's open files and memory. The fork
server is a fresh interpreter that imports this module, numpy, pydantic and Typst once (preload);
each worker is forked from it, a single-threaded process, in milliseconds and sharing the
imported modules' pages, where ``spawn`` would start and import a whole interpreter per worker
(about half a second of CPU each). Workers receive the main process's current environment and
working folder, since a fork server started earlier keeps those of its start.

**Pieces back through the pipe, not temporary files.** Each worker has one pipe to the main
process; a finished piece (0.1 to 1 MB) is sent through it. Nothing is ever written to disk but
the output, so a ``kill -9`` of the export leaves no folder of pieces behind, and the main process
holds at most ``WINDOW_PER_WORKER`` pieces per worker that are finished but not yet joined.

**Ending.** Ctrl-C reaches every process of the terminal's process group: the workers ignore
SIGINT (it is blocked while they are started, so they never see it) and the main process stops
them. SIGTERM to the main process is turned into an exception while an export runs
(`pdf.terminated_as_exception`). On any error or interruption the workers are terminated and
reaped before the error goes on, and the output's temporary file is removed (`files.Staging`).
If the main process is killed outright, each worker reads end-of-file on its pipe once its
current piece is done, and exits: no process outlives the export by more than one piece.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import signal
import sys
import threading
import traceback
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.context import ForkServerContext, SpawnContext
from multiprocessing.process import BaseProcess
from pathlib import Path
from types import TracebackType

from attnquiz.engine.errors import QuizError
from attnquiz.engine.export.pdf.piece import Document, Piece, RecentSheets, make_piece
from attnquiz.engine.plan.class_plan import ClassPlan, ClassSheets, ExportError

PREFETCH = 2
"""Pieces handed to a worker at once: the next one waits in its pipe, so it starts at once."""
WINDOW_PER_WORKER = 4
"""Pieces per worker that may be out (compiling or finished) ahead of the next one to join: bounds
the finished pieces the main process holds while an earlier one is still being made."""
STOP_SECONDS = 5.0  # how long a worker gets to end after being told to, before it is killed
WORKER_MEMORY_MB = 110
"""A worker whose peak memory has passed this once it has sent a piece ends, and the main process
starts a fresh one (forked from the fork server, about 50 ms) and hands the pieces the old one had
not begun to the others. Typst keeps what it has laid out for the next
compiles (about 9 MB a piece, up to about 130 MB after ten pieces), which is worth little here,
since every student's numbers differ: a worker of a whole-bank export is replaced after two or
three pieces, and each worker stays near 100 to 130 MB instead of 200."""


class WorkerError(ExportError):
    """A piece could not be made in a worker (a variant that cannot be built, a Typst error, a
    worker that died): the message is the worker's, one line."""


@dataclass(frozen=True)
class ClassRecipe:
    """Everything a worker needs to rebuild a class's plan: small, whatever the class's size."""

    bank_file: str  # absolute path of the bank's file, loaded as `banks.load(bank_file, plugins=True)`
    digest: str  # SHA-256 of the file when the export began: a worker refuses any other version
    name: str
    title: str
    master_seed: int | None
    items: tuple[str, ...]
    skipped: tuple[str, ...]
    students: int
    environ: dict[str, str] = field(default_factory=dict)
    folder: str = ""


def file_digest(path: Path) -> str:
    """The SHA-256 of a bank file's bytes (read as `banks` reads them: refused beyond its cap)."""
    from attnquiz.engine.bank.file_text import read_bank_bytes

    return hashlib.sha256(read_bank_bytes(path, str(path))).hexdigest()


def recipe(plan: ClassPlan, bank: str) -> ClassRecipe | None:
    """The description of ``plan`` for workers, or None when workers could not rebuild it exactly.

    ``bank`` is what the plan's bank was loaded by (`banks.load(bank, plugins=True)`). None when the
    plan's sheets are not built from its bank (`ClassSheets`), or when the bank that name finds now
    is not the one the plan was made from (its file changed since, or it was loaded another way):
    the plan is then made in the main process, from the items it already holds.
    """
    from attnquiz.engine.bank import finding as banks

    sheets = plan.sheets
    if not isinstance(sheets, ClassSheets):
        return None
    try:
        path = banks.find(bank).path.absolute()
        digest = file_digest(path)  # before the check below: a later change is caught by the workers
        loaded = banks.load(bank, plugins=True)  # this process's copy, unless the file changed since
    except QuizError:
        return None  # the file is gone or unreadable now: the main process has what it needs
    current = {id(entry) for entry in loaded.items}
    if loaded.name != plan.bank or not all(id(entry) in current for entry in sheets.entries):
        return None
    return ClassRecipe(
        bank_file=str(path),
        digest=digest,
        name=plan.bank,
        title=plan.title,
        master_seed=plan.master_seed,
        items=plan.items,
        skipped=plan.skipped,
        students=len(sheets),
        environ=dict(os.environ),
        folder=str(Path.cwd()),
    )


def rebuild(recipe: ClassRecipe) -> ClassPlan:
    """The plan a recipe describes, with the bank loaded in this process (its plugins imported)."""
    from attnquiz.engine.bank import finding as banks

    path = Path(recipe.bank_file)
    changed = ExportError(f"{path} changed while the export was being made: export again")
    if file_digest(path) != recipe.digest:
        raise changed
    bank = banks.load(recipe.bank_file, plugins=True)
    if file_digest(path) != recipe.digest or bank.name != recipe.name:
        raise changed
    entries = tuple(bank.get(item) for item in recipe.items)
    sheets = ClassSheets(entries, recipe.master_seed, recipe.students)
    return ClassPlan(recipe.name, recipe.title, recipe.master_seed, recipe.items, sheets, recipe.skipped)


def _quiet(message: str) -> None:
    """A worker's notices (a bank running plugin code): the main process has said them already."""


def serve(connection: Connection, recipe: ClassRecipe, docs: tuple[Document, ...]) -> None:
    """A worker's life: read pieces from ``connection``, answer each with its PDF or its error;
    stop when told (None) or when the main process is gone (end of file)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle
    os.environ.clear()
    os.environ.update(recipe.environ)
    if recipe.folder:
        os.chdir(recipe.folder)
    from attnquiz.engine import errors

    errors.notice = _quiet
    # The class, and its sheets as this worker reads them: its pieces come in class order too, so a
    # key piece reads again the sheets of the worksheet pieces it made just before (kept, as in the
    # main process, not built again).
    rebuilt: tuple[ClassPlan, RecentSheets] | None = None
    while True:
        try:
            task = connection.recv()
        except (EOFError, OSError):
            return  # the main process ended: nobody wants the rest
        if task is None:
            return
        reply: tuple[str, object, bool]
        try:
            if rebuilt is None:
                plan = rebuild(recipe)
                rebuilt = (plan, RecentSheets(plan.sheets, sum(doc.per_piece for doc in docs)))
            made = make_piece(rebuilt[0], docs[task.document], rebuilt[1], task)
            reply = ("ok", made, peak_mb() > WORKER_MEMORY_MB)
        except QuizError as exc:
            reply = ("error", str(exc), True)
        except Exception:
            reply = ("crash", traceback.format_exc(), True)
        try:
            connection.send(reply)
        except OSError:
            return  # the main process ended while this piece was being made
        if reply[2]:
            return  # leaving: the main process gives the pieces still in the pipe to another worker


def peak_mb() -> float:
    """This process's peak resident memory so far, in MB (0 where it cannot be known)."""
    try:
        import resource
    except ImportError:  # Windows: workers are never replaced for their memory
        return 0.0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024  # bytes on macOS


def context() -> ForkServerContext | SpawnContext:
    """The start method (see the module's docstring): a fork server where there is one, else spawn."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        forkserver = multiprocessing.get_context("forkserver")
        # Imported once by the fork server (what a worker uses), then shared by every worker it forks.
        # "__main__" as multiprocessing does by default: the program's main module, imported by the
        # server rather than again by each worker (a script's main code must be guarded, as always
        # with multiprocessing; the quiz script's is).
        forkserver.set_forkserver_preload(["__main__", "attnquiz.engine.export.pdf.preload"])
        return forkserver
    return multiprocessing.get_context("spawn")


@contextmanager
def _sigint_blocked() -> Iterator[None]:
    """SIGINT held back in this thread while workers start: they inherit the mask and never see it;
    one that arrives meanwhile is delivered to this process as soon as the block ends."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@dataclass
class _Worker:
    process: BaseProcess
    connection: Connection
    pieces: deque[int] = field(default_factory=deque)  # numbers of the pieces it was given, in order
    # It has ended its side of the pipe (it is leaving: its last answer is still to be read).
    closed: bool = False


def _reap(worker: _Worker) -> None:
    """Wait a moment for a worker to end, kill it if it does not, and free its pipe and process."""
    worker.process.join(STOP_SECONDS)
    if worker.process.is_alive():
        worker.process.kill()
        worker.process.join()
    worker.connection.close()
    worker.process.close()


class Workers:
    """``count`` worker processes for the pieces of the class ``recipe`` describes (a context manager).

    `made` yields the pieces in order, each as it was made with its PDF; `make` makes one more out
    of order. A worker past `WORKER_MEMORY_MB` leaves and is replaced. Leaving the block stops the
    workers: told to end after a success, terminated at once after an error or an interruption, and
    reaped either way.
    """

    def __init__(self, recipe: ClassRecipe, docs: Sequence[Document], count: int) -> None:
        self.recipe = recipe
        self.docs = tuple(docs)
        self.count = count
        self.workers: list[_Worker] = []
        self.started = 0
        self.ctx: ForkServerContext | SpawnContext | None = None
        # The dispatch, shared by `made` and `make`: every piece asked for, by task number (those of
        # `made`'s order first), the answers not yet taken, the pieces to send again (a leaving
        # worker's, in order), those of `make` (sent first), the next of the order never sent.
        self.tasks: list[Piece] = []
        self.ordered = 0
        self.numbered: Callable[[Piece], Piece] | None = None
        self.finished: dict[int, bytes] = {}
        self.again: deque[int] = deque()
        self.urgent: deque[int] = deque()
        self.fresh = 0
        self.wanted = 0  # the piece of the order the join waits for: the window starts there

    def __enter__(self) -> Workers:
        self.ctx = context()
        try:
            for _ in range(self.count):
                self.workers.append(self._start())
        except BaseException:
            self._stop(at_once=True)
            raise
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._stop(at_once=error is not None)

    def _start(self) -> _Worker:
        assert self.ctx is not None
        self.started += 1
        here, there = self.ctx.Pipe(duplex=True)
        process = self.ctx.Process(
            target=serve,
            args=(there, self.recipe, self.docs),
            name=f"quiz-pdf-worker-{self.started}",
            daemon=True,  # ended by multiprocessing at exit, should anything leave one
        )
        try:
            with _sigint_blocked():
                process.start()
        finally:
            there.close()  # the worker's end lives in the worker only: its exit is our end of file
        return _Worker(process, here)

    def made(
        self, order: Sequence[Piece], numbered: Callable[[Piece], Piece] | None = None
    ) -> Iterator[tuple[Piece, bytes]]:
        """Each piece of ``order``, in order, made by the workers: the piece as it was made, and its PDF.

        ``numbered`` gives a piece its first page as it is sent (not before: the later a continuous
        document's piece is sent, the more of the pages before it are known, see
        `pdf.worksheets.PageGuess`); `make` may be called between two pieces."""
        self.tasks = list(order)  # every piece asked for: ``order``'s, then those of `make`
        self.ordered = len(self.tasks)
        self.numbered = numbered
        self.finished = {}
        self.again = deque()
        self.urgent = deque()
        self.fresh = 0
        for wanted in range(len(order)):
            self.wanted = wanted
            yield self._awaited(wanted)

    def make(self, piece: Piece) -> bytes:
        """One piece made by a worker out of ``made``'s order (a piece to make again with another
        first page, or the first piece of a document, to learn its pages), before any other piece
        not yet sent: the main process never compiles while there are workers."""
        number = len(self.tasks)
        self.tasks.append(piece)
        self.urgent.append(number)
        return self._awaited(number)[1]

    def _awaited(self, number: int) -> tuple[Piece, bytes]:
        """Task ``number`` once it is made, sending pieces to the workers meanwhile."""
        window = WINDOW_PER_WORKER * self.count
        while number not in self.finished:
            while self.urgent or self.again or self.fresh < min(self.ordered, self.wanted + window):
                ready = [w for w in self.workers if not w.closed and len(w.pieces) < PREFETCH]
                if not ready:
                    break
                worker = min(ready, key=lambda w: len(w.pieces))
                queue = self.urgent if self.urgent else self.again if self.again else None
                task = queue[0] if queue is not None else self.fresh
                if queue is None and self.numbered is not None:
                    self.tasks[task] = self.numbered(self.tasks[task])  # numbered when first sent
                try:
                    worker.connection.send(self.tasks[task])
                except OSError:  # not a file's error: the worker has ended its side of the pipe
                    if not worker.pieces:
                        raise WorkerError(self._death(worker)) from None
                    # A worker leaves right after answering its piece, and that answer (it says
                    # so) may not have been read yet: the piece goes to another worker.
                    worker.closed = True
                    continue
                if queue is not None:
                    queue.popleft()
                else:
                    self.fresh += 1
                worker.pieces.append(task)
            for leaving in self._receive(self.finished):
                # The pieces it will not make: `make`'s first again, the order's still in order.
                self.urgent.extend(task for task in leaving.pieces if task >= self.ordered)
                ordered = [task for task in leaving.pieces if task < self.ordered]
                self.again = deque(sorted([*self.again, *ordered]))
                self._replace(leaving)
        return self.tasks[number], self.finished.pop(number)

    def _replace(self, worker: _Worker) -> None:
        """Reap a worker that is leaving and start another in its place."""
        _reap(worker)
        self.workers[self.workers.index(worker)] = self._start()

    def _receive(self, finished: dict[int, bytes]) -> list[_Worker]:
        """Wait for at least one worker's answer and take every answer that is ready; the workers
        that are leaving, with the pieces they had been given and will not make."""
        busy = {worker.connection: worker for worker in self.workers if worker.pieces}
        if not busy:
            raise RuntimeError("no piece is being made, yet the next one is missing")  # a bug here
        leaving = []
        for ready in wait(list(busy)):
            worker = busy[ready]  # type: ignore[index]
            try:
                status, payload, leaves = worker.connection.recv()
            except (EOFError, OSError):
                raise WorkerError(self._death(worker)) from None
            number = worker.pieces.popleft()
            if status == "ok" and isinstance(payload, bytes):
                finished[number] = payload
            elif status == "error":
                raise WorkerError(str(payload))
            else:
                raise RuntimeError(f"a worker process making the PDF failed:\n{payload}")
            if leaves:
                leaving.append(worker)
        return leaving

    def _death(self, worker: _Worker) -> str:
        """Why a worker's pipe closed: how it ended, as the user should hear it."""
        worker.process.join(STOP_SECONDS)
        code = worker.process.exitcode
        if code is not None and code < 0:
            try:
                how = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
            if code == -signal.SIGKILL:
                how += ": by the system for lack of memory, or by a user"
        else:
            how = f"exit status {code}"
        return f"a worker process making the PDF stopped before finishing its piece ({how})"

    def _stop(self, *, at_once: bool) -> None:
        """End every worker and reap it: after a success, by telling it; else by SIGTERM at once."""
        if not at_once:
            for worker in self.workers:
                with suppress(OSError):  # a worker that has ended cannot be told: it is reaped below
                    worker.connection.send(None)
            for worker in self.workers:
                worker.process.join(STOP_SECONDS)
        for worker in self.workers:
            if worker.process.is_alive():
                worker.process.terminate()
        for worker in self.workers:
            _reap(worker)
        self.workers = []


__all__ = ["ClassRecipe", "WorkerError", "Workers", "context", "file_digest", "rebuild", "recipe", "serve"]
