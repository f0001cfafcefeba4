"""PDF pieces made by worker processes (`pdf_workers`): the same bytes made in this process, by one
worker (one job) or by several, the bank's plugins loaded in every worker and announced once, and
every way an export can end (a variant that cannot be built, a worker killed, Ctrl-C, SIGTERM, the
export itself killed) ending cleanly: one line, no file under a final name, no temporary file, no
process left behind."""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, BinaryIO

import pytest

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.export import files
from attnquiz.engine.export.pdf import piece as pdf_piece
from attnquiz.engine.export.pdf import workers as pdf_workers
from attnquiz.engine.export.pdf import worksheets as pdf
from attnquiz.engine.plan.class_plan import ClassPlan, ExportError, plan_class, student_seed

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="signals and /proc are POSIX")


@pytest.fixture
def worker_pids(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The process ids of the workers the exports of a test start."""
    pids: list[int] = []
    real_start = pdf_workers.Workers._start

    def start(self: pdf_workers.Workers) -> object:
        worker = real_start(self)
        assert worker.process.pid is not None
        pids.append(worker.process.pid)
        return worker

    monkeypatch.setattr(pdf_workers.Workers, "_start", start)
    return pids


def _folder(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


@pytest.fixture
def pool_sizes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of workers of each pool the exports of a test start."""
    sizes: list[int] = []
    real_init = pdf_workers.Workers.__init__

    def init(self: pdf_workers.Workers, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        sizes.append(self.count)

    monkeypatch.setattr(pdf_workers.Workers, "__init__", init)
    return sizes


def test_thirty_students_give_the_same_bytes_made_here_by_one_worker_or_by_two(
    tmp_path: Path, worker_pids: list[int], pool_sizes: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Workers however few the pieces (the grid's ten would otherwise be made in this process).
    monkeypatch.setattr(pdf, "MIN_PIECES_PER_WORKER", 1)
    monkeypatch.setattr(pdf, "LONE_WORKER_MIN_PIECES", 1)
    plan = plan_class(banks.load("week1", plugins=True), students=30, master_seed=2026, count=6)
    outputs = {}
    # Without its bank the class cannot be rebuilt by a worker: made in this process.
    for made_by, jobs, bank in (("here", 1, None), ("one worker", 1, "week1"), ("two workers", 2, "week1")):
        for key in ("full", "grid"):
            folder = tmp_path / f"{made_by}-{key}"
            started, pools = len(worker_pids), len(pool_sizes)
            files.write(plan, "pdf", folder, key=key, jobs=jobs, bank=bank)
            # Made here, no process; else a pool of ``jobs`` workers (and more processes started, as
            # workers past their memory leave and are replaced).
            assert pool_sizes[pools:] == ([] if bank is None else [jobs])
            assert (len(worker_pids) > started) == (bank is not None)
            outputs[made_by, key] = _folder(folder)
    assert os.getpid() not in worker_pids
    for key in ("full", "grid"):
        assert outputs["here", key] == outputs["one worker", key] == outputs["two workers", key]
    assert sorted(outputs["two workers", "grid"]) == ["key.pdf", "worksheets.pdf"]  # no temporary file left


def _in_memory(plan: ClassPlan, docs: list[pdf.Document], **options: Any) -> dict[str, bytes]:
    """The files `pdf.write_documents` writes, by name."""
    buffers: dict[str, io.BytesIO] = {}

    def keep(name: str) -> contextlib.AbstractContextManager[BinaryIO]:
        buffers[name] = io.BytesIO()
        return contextlib.nullcontext(buffers[name])

    pdf.write_documents(plan, docs, keep, **options)
    return {name: buffer.getvalue() for name, buffer in buffers.items()}


def test_with_one_job_a_large_export_is_compiled_by_one_worker_not_here(
    monkeypatch: pytest.MonkeyPatch, worker_pids: list[int], pool_sizes: list[int]
) -> None:
    """One job is one worker, not this process: Typst keeps what it laid out for as long as the
    process that compiled lives, and only a worker is replaced as that grows. Every piece is the
    worker's, the first piece of the marking grid (made first, to learn its pages) too; the bytes
    are those made here and those of two workers."""
    plan = plan_class(banks.load("week1", plugins=True), students=41, master_seed=2026, count=6)
    docs = pdf.documents(plan, "a4", "grid")
    count = len(list(pdf.pieces(docs, 41)))
    assert count >= 2 * pdf.MIN_PIECES_PER_WORKER
    # As long as a lone worker is worth its start (fewer pieces are made here, see the next test).
    monkeypatch.setattr(pdf, "LONE_WORKER_MIN_PIECES", count)
    assert docs[1].continuous  # the grid: numbered across its pieces
    assert docs[1].pieces(41) > 1
    here = _in_memory(plan, docs, jobs=1)  # no bank: made in this process
    assert worker_pids == []

    def refused(*args: object, **kwargs: object) -> bytes:
        raise AssertionError("Typst compiled a piece in the main process")

    monkeypatch.setattr(pdf_piece, "compile_typst", refused)
    assert _in_memory(plan, docs, jobs=1, bank="week1") == here
    assert pool_sizes == [1]
    assert worker_pids
    assert os.getpid() not in worker_pids
    assert _in_memory(plan, docs, jobs=2, bank="week1") == here
    assert pool_sizes == [1, 2]


def test_with_one_job_a_small_export_is_made_here(
    monkeypatch: pytest.MonkeyPatch, worker_pids: list[int]
) -> None:
    """Fewer pieces than a worker is worth (`MIN_PIECES_PER_WORKER`), or than a lone worker is worth
    (`LONE_WORKER_MIN_PIECES`): no process is started, with one job as with more; from the next
    piece on, one worker."""
    compiled: list[str] = []
    real_compile = pdf_piece.compile_typst

    def counted(source: str, **kwargs: Any) -> bytes:
        compiled.append(source)
        return real_compile(source, **kwargs)

    monkeypatch.setattr(pdf_piece, "compile_typst", counted)
    bank = banks.load("week1", plugins=True)
    small = plan_class(bank, students=8, master_seed=1, count=6)  # two pieces of four students
    assert len(list(pdf.pieces(pdf.documents(small, "a4", None), 8))) == 2
    big = plan_class(bank, students=12, master_seed=1, count=6)  # three pieces
    for lone in (3, pdf.LONE_WORKER_MIN_PIECES):
        monkeypatch.setattr(pdf, "MIN_PIECES_PER_WORKER", 3)
        monkeypatch.setattr(pdf, "LONE_WORKER_MIN_PIECES", lone)
        for jobs in (1, 2):
            pdf.worksheets(small, small.sheets, jobs=jobs, bank="week1")
        assert worker_pids == []
        assert len(compiled) == 2 * 2
        pdf.worksheets(
            big, list(big.sheets), jobs=1, bank="week1"
        )  # sheets given: no worker could rebuild them
        assert worker_pids == []
        compiled.clear()
        pdf.worksheets(big, big.sheets, jobs=1, bank="week1")
        if lone == 3:  # three pieces: as many as one worker is worth
            assert compiled == []
            assert worker_pids
        else:  # the shipped threshold: three pieces are made here
            assert len(compiled) == 3
            assert worker_pids == []
        compiled.clear()
        worker_pids.clear()


def test_the_pieces_come_in_order_and_whole_whatever_the_workers_do(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers that leave after every piece (each replaced, their queued pieces handed on) still give
    every piece once, in order: the same bytes as one job."""
    plan = plan_class(banks.load("week1", plugins=True), students=14, master_seed=7, count=6)
    one = pdf.worksheets(plan, plan.sheets, jobs=1)
    monkeypatch.setattr(pdf_workers, "WORKER_MEMORY_MB", 0)  # every worker leaves after one piece
    monkeypatch.setattr(pdf, "MIN_PIECES_PER_WORKER", 1)  # workers for the four pieces
    assert pdf.worksheets(plan, plan.sheets, jobs=2, bank="week1") == one
    assert pdf.worksheets(plan, plan.sheets, jobs=3, bank="week1") == one


def test_a_small_export_or_one_without_its_bank_is_made_in_this_process(worker_pids: list[int]) -> None:
    plan = plan_class(banks.load("week1", plugins=True), students=3, master_seed=1, count=6)
    pdf.worksheets(plan, plan.sheets, jobs=4, bank="week1")  # one piece: no worker is worth starting
    big = plan_class(banks.load("week1", plugins=True), students=12, master_seed=1, count=6)
    pdf.worksheets(big, big.sheets, jobs=2)  # no bank to load: workers could not rebuild the class
    pdf.worksheets(big, list(big.sheets), jobs=2, bank="week1")  # sheets given, not the plan's
    assert worker_pids == []


def test_jobs_below_one_are_refused() -> None:
    plan = plan_class(banks.load("week1", plugins=True), students=2, master_seed=1, count=2)
    for jobs in (0, -1):
        with pytest.raises(ExportError, match="jobs must be at least 1"):
            pdf.worksheets(plan, plan.sheets, jobs=jobs)


def test_a_worker_refuses_a_bank_file_that_changed(tmp_path: Path) -> None:
    source = Path(banks.find("week1").path)
    copy = tmp_path / "week1.yaml"
    copy.write_bytes(source.read_bytes())
    plan = plan_class(banks.load(str(copy), plugins=True), students=8, master_seed=3, count=6)
    recipe = pdf_workers.recipe(plan, str(copy))
    assert recipe is not None
    assert pdf_workers.rebuild(recipe).items == plan.items
    copy.write_bytes(source.read_bytes() + b"\n# edited\n")
    with pytest.raises(ExportError, match="changed while the export was being made"):
        pdf_workers.rebuild(recipe)
    # Changed before the export began: this process's plan is not the file's any more, so the
    # pieces are made here, from the plan's own items (no worker would see the same bank).
    assert pdf_workers.recipe(plan, str(copy)) is None
    assert pdf_workers.recipe(plan, "week2") is None


# ---------------------------------------------------------------------------------------------
# The command as a user runs it
# ---------------------------------------------------------------------------------------------

PLUGIN = '''
import numpy as np
from attnquiz.engine.answers.kinds import IntegerAnswer
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant


@generator
def my_entries(rng: np.random.Generator, /, *, fail_below: int = -1) -> Variant:
    """Count the entries of a T x T matrix (raises when a draw is below fail_below)."""
    t = int(rng.integers(2, 40))
    if t < fail_below:
        raise ValueError(f"cannot use T = {t}")
    return Variant(prompt=f"How many entries has a ${t} \\\\times {t}$ matrix?",
                   answer=IntegerAnswer(t * t), solution=[f"${t}^2 = {t * t}$"])
'''

BANK = """bank: mine
title: Mine
plugins: [gens.py]
items:
  - id: entries
    source: "My worked problem"
    topic: complexity
    generator: my_entries
    params: {{fail_below: {fail_below}}}
  - id: other
    source: "Another"
    topic: attention
    generator: my_entries
"""


def _plugin_bank(folder: Path, fail_below: int = -1) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "gens.py").write_text(PLUGIN, encoding="utf-8")
    bank = folder / "mine.yaml"
    bank.write_text(BANK.format(fail_below=fail_below), encoding="utf-8")
    return bank


def _marked_processes(marker: str) -> list[int]:
    """The processes whose environment holds ``marker`` (the export's and every process it started)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _gone(marker: str, seconds: float = 60) -> list[int]:
    """Waits for every marked process to end; those still running after ``seconds``."""
    deadline = time.monotonic() + seconds
    while (left := _marked_processes(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


needs_proc = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")


# The export runs as the `quiz` console script runs it. Under `python -m`, CPython ends a process
# with SIGINT itself, whatever its exit status, when a KeyboardInterrupt ever escaped code run by a
# string `exec` (dataclasses and typing build functions that way): Ctrl-C landing there made this
# test see "killed by SIGINT" instead of status 130 about one run in six (a shell shows 130 for both).
QUIZ_SCRIPT = [sys.executable, "-c", "import sys; from attnquiz.main import main; sys.exit(main())"]


def _export(*args: str, marker: str) -> subprocess.Popen[str]:
    env = {**os.environ, "QUIZ_TEST_MARKER": marker}
    return subprocess.Popen(
        [*QUIZ_SCRIPT, "export", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a process group of its own, as a terminal's job
    )


def test_a_plugin_bank_is_loaded_in_every_worker_and_announced_once(tmp_path: Path) -> None:
    bank = _plugin_bank(tmp_path / "bank")
    outputs = {}
    for jobs in ("1", "2"):
        done = subprocess.run(
            [*QUIZ_SCRIPT, "export", str(bank), "--students", "40", "--seed", "5",
             "--all", "--key", "full", "--jobs", jobs, "-o", str(tmp_path / jobs)],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stderr.count("runs Python code from its plugins") == 1, done.stderr
        outputs[jobs] = _folder(tmp_path / jobs)
    assert outputs["1"] == outputs["2"]


def _failing_seed(bank: Path) -> int:
    """A master seed whose first student's sheet builds (the plan checks it) but a later one's not."""
    loaded = banks.load(str(bank), plugins=True)
    entry = loaded.get("entries")
    for master in range(1000):
        try:
            entry.question(student_seed(master, 1))
        except Exception:  # the plugin's ValueError, wrapped: this seed is no good
            continue
        for student in range(2, 30):
            try:
                entry.question(student_seed(master, student))
            except Exception:  # the same: this student's draw fails
                return master
    raise AssertionError("no seed fails after the first student")


@needs_proc
def test_a_variant_that_cannot_be_built_in_a_worker_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    bank = _plugin_bank(tmp_path / "bank", fail_below=8)
    seed = _failing_seed(bank)
    marker = uuid.uuid4().hex
    out = tmp_path / "out"
    process = _export(str(bank), "--students", "30", "--seed", str(seed), "--jobs", "2", "-o", str(out),
                      marker=marker)  # fmt: skip
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 1, stderr
    lines = [line for line in stderr.splitlines() if not line.startswith("quiz: bank ")]
    # One error: its line in the bank's plugin, then the traceback of the plugin's code only.
    assert re.match(
        r"quiz: \S*gens\.py:\d+: item 'entries': generator 'my_entries' raised ValueError", lines[0]
    )
    assert lines[1] == "Traceback of the bank's own code (most recent call last):", stderr
    assert all(line.startswith("  ") for line in lines[2:]), stderr
    assert 'File "' in lines[2], stderr
    assert "seed=" in lines[0]
    assert not out.exists() or list(out.iterdir()) == []
    assert _gone(marker) == []


def _started_workers(process: subprocess.Popen[str], marker: str, folder: Path) -> None:
    """Waits until the export has begun writing its PDF with its workers running."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        writing = folder.exists() and any(p.name.endswith(".part") for p in folder.iterdir())
        if writing and len(_marked_processes(marker)) >= 3:
            return
        time.sleep(0.02)
    raise AssertionError(f"the export never began with its workers: {process.communicate()[1]}")


@needs_proc
@pytest.mark.parametrize(
    ("how", "code", "said"),
    [
        (signal.SIGINT, 130, "quiz: interrupted before the export was complete: no file was written"),
        (signal.SIGTERM, 143, "quiz: stopped by SIGTERM before the export was complete: no file was written"),
        (signal.SIGKILL, -signal.SIGKILL, ""),
    ],
)
def test_an_export_stopped_half_way_leaves_no_file_and_no_process(
    tmp_path: Path, how: signal.Signals, code: int, said: str
) -> None:
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it), SIGTERM to the export, or
    SIGKILL to the export: no file, no temporary file, no worker left running."""
    marker = uuid.uuid4().hex
    out = tmp_path / "out"
    process = _export("week1", "--students", "40", "--seed", "3", "--all", "--jobs", "2", "-o", str(out),
                      marker=marker)  # fmt: skip
    _started_workers(process, marker, out)
    if how == signal.SIGINT:
        os.killpg(process.pid, how)
    else:
        process.send_signal(how)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == code, stderr
    if said:
        assert stderr.strip().splitlines()[-1] == said, stderr
        assert "Traceback" not in stderr, stderr
        assert list(out.iterdir()) == []  # not even a hidden .part file
    else:
        assert [p.name for p in out.iterdir() if not p.name.startswith(".")] == []
    assert _gone(marker) == []  # after a SIGKILL, each worker ends once its piece is made


@needs_proc
def test_a_worker_killed_half_way_ends_the_export_with_one_line(tmp_path: Path) -> None:
    marker = uuid.uuid4().hex
    out = tmp_path / "out"
    process = _export("week1", "--students", "40", "--seed", "3", "--all", "--jobs", "2", "-o", str(out),
                      marker=marker)  # fmt: skip
    _started_workers(process, marker, out)
    # The workers are forked by the fork server, which the export started: its grandchildren.
    children = [pid for pid in _marked_processes(marker) if _parent(pid) == process.pid]
    workers = [pid for pid in _marked_processes(marker) if _parent(pid) in children]
    assert workers
    os.kill(workers[-1], signal.SIGKILL)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 1, stderr
    assert (
        stderr.strip()
        .splitlines()[-1]
        .startswith(
            "quiz: a worker process making the PDF stopped before finishing its piece (killed by SIGKILL"
        )
    ), stderr
    assert list(out.iterdir()) == []
    assert _gone(marker) == []


def _parent(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    return int(stat[stat.rindex(")") + 2 :].split()[1])


def test_the_recipe_is_small_whatever_the_class(tmp_path: Path) -> None:
    """What a worker is handed does not grow with the class: no sheets, no variants."""
    import pickle

    sizes = []
    for students in (10, 1000):
        plan: ClassPlan = plan_class(banks.load("week1", plugins=True), students=students, master_seed=1)
        recipe = pdf_workers.recipe(plan, "week1")
        assert recipe is not None
        sizes.append(len(pickle.dumps(recipe)) - len(pickle.dumps(recipe.environ)))
    assert abs(sizes[0] - sizes[1]) < 8  # the number of students aside
    assert sizes[1] < 5_000


class _FakeProcess:
    """Stands for a worker's process in the dispatcher's bookkeeping: already ended, exit status 0."""

    exitcode = 0

    def join(self, timeout: float | None = None) -> None:
        return None

    def is_alive(self) -> bool:
        return False

    def kill(self) -> None:
        return None

    def terminate(self) -> None:
        return None

    def close(self) -> None:
        return None


def _serve_in_thread(there: Connection) -> threading.Thread:
    """A worker's loop on ``there`` (a pipe's end): answers each piece with its own number, until
    told to stop (None)."""

    def loop() -> None:
        while (piece := there.recv()) is not None:
            there.send(("ok", str(piece).encode(), False))
        there.close()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return thread


class _LeavesAfterOnePiece:
    """The dispatcher's end of a pipe to a worker that answers its first piece, says it leaves and
    closes its end at once, before the dispatcher has read that answer (as a real worker may)."""

    def __init__(self) -> None:
        from multiprocessing import Pipe

        self.here, self.there = Pipe(duplex=True)
        self.sent = 0

    def send(self, piece: object) -> None:
        self.here.send(piece)  # a closed peer: BrokenPipeError, as a real pipe gives
        self.sent += 1
        if self.sent == 1:
            self.there.send(("ok", str(self.there.recv()).encode(), True))
            self.there.close()

    def recv(self) -> object:
        return self.here.recv()

    def fileno(self) -> int:
        return self.here.fileno()

    def close(self) -> None:
        self.here.close()


def test_a_piece_sent_to_a_worker_that_has_just_left_goes_to_another(monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by the 1000-student bench: a worker answered a piece, said it leaves and closed its
    pipe; the dispatcher, not having read that answer yet, sent it the next piece, met the closed
    pipe and ended the export with "a worker … stopped before finishing its piece (exit status 0)".
    The piece must go to another worker, the leaving worker's answer still be taken, every piece
    come once and in order."""
    from multiprocessing import Pipe

    threads: list[threading.Thread] = []

    def start(self: pdf_workers.Workers) -> pdf_workers._Worker:
        here, there = Pipe(duplex=True)
        threads.append(_serve_in_thread(there))
        return pdf_workers._Worker(_FakeProcess(), here)  # type: ignore[arg-type]

    monkeypatch.setattr(pdf_workers.Workers, "_start", start)
    workers = pdf_workers.Workers.__new__(pdf_workers.Workers)
    workers.count = 2
    workers.started = 0
    leaving = pdf_workers._Worker(_FakeProcess(), _LeavesAfterOnePiece())  # type: ignore[arg-type]
    # The emptiest worker is picked first, the first listed on a tie: piece 0 goes to the leaving
    # worker, 1 to the other, and 2 to the leaving worker again, whose pipe is closed by then.
    workers.workers = [leaving, start(workers)]
    order = list(range(8))
    assert [pdf for _, pdf in workers.made(order)] == [str(n).encode() for n in order]  # type: ignore[arg-type]
    assert leaving.closed
    assert leaving not in workers.workers  # it was reaped and replaced
    workers._stop(at_once=False)
    for thread in threads:
        thread.join(5)
        assert not thread.is_alive()
