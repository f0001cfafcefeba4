"""Measure what users wait for and print one table (``python -m bench``; ``--quick``, ``--json FILE``).

Whole-process figures start quiz as its console script does, from this checkout, several times, and
report the median, min and max, the ratio to a bare ``python -c pass`` measured in the same run (so
a loaded machine does not hide a slow start), and the peak memory of the process. Throughput
figures (variants, grading, the parser) run in this process. Nothing here is a test: budgets are
printed beside the figures, and a missed budget is marked, not failed. ``--compare OLD NEW`` prints
the change between two saved runs (see bench/README.md).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.install import normal_install
from bench.layout import installed_layout

if TYPE_CHECKING:
    from attnquiz.engine.plan.class_plan import Sheet

ROOT = Path(__file__).resolve().parent.parent
FIRST_QUESTION = re.compile(r"Give |Choose one|Select all")
# Started like the `quiz` console script, but from this checkout (so two checkouts can be compared).
QUIZ = [sys.executable, "-c", "import sys; from attnquiz.main import main; sys.exit(main())"]
# Users run quiz from compiled bytecode (pip writes it at install, Python on first import); where
# this environment forbids writing it, the children keep theirs here instead of recompiling each run.
# A small fresh interpreter (no site) that runs each measured command and reports its whole tree.
WRAPPER = [sys.executable, "-I", "-S", str(Path(__file__).resolve().parent / "wrapper.py")]
PYCACHE = Path(tempfile.gettempdir()) / "quiz-bench-pycache"
QUESTIONS_PER_SHEET = 6  # questions on each exported worksheet (the "300-student PDF of 6 questions")
SESSION_BUDGET_MS = 50.0  # from pressing Enter on an answer to the next question on screen


@dataclass
class Figure:
    """One measured figure: its samples, unit, budget, and peak memory where a process was measured."""

    name: str
    unit: str
    samples: list[float] = field(default_factory=list)
    budget: float | None = None
    higher_is_better: bool = False
    note: str = ""
    peak_mb: float | None = None
    group: str = ""

    @property
    def median(self) -> float:
        """The median of the samples (NaN when there are none)."""
        return statistics.median(self.samples) if self.samples else float("nan")

    def verdict(self) -> str:
        """``ok`` or ``MISSED`` against the budget (empty when there is none)."""
        if self.budget is None or not self.samples:
            return ""
        ok = self.median >= self.budget if self.higher_is_better else self.median <= self.budget
        return "ok" if ok else "MISSED"

    def to_json(self) -> dict[str, Any]:
        """The figure with its summary statistics, as saved by ``--json``."""
        summary = (
            {"median": self.median, "min": min(self.samples), "max": max(self.samples)}
            if self.samples
            else {}
        )
        return asdict(self) | summary | {"verdict": self.verdict()}


# ---------------------------------------------------------------------------------------------
# Running processes
# ---------------------------------------------------------------------------------------------


@dataclass
class Run:
    """One finished child process: wall seconds, CPU seconds, peak resident memory and its output.

    With ``tree`` (see `run`), the figures of the whole process tree it started (`TreeUsage`).
    """

    wall: float
    cpu: float
    peak_mb: float
    stdout: str
    tree: TreeUsage | None = None


@dataclass
class TreeUsage:
    """A process and every process it started (worker processes, a fork server), sampled from /proc.

    ``peak_mb``: the largest sum of the processes' resident memory seen at once (sampled every
    ``SAMPLE_SECONDS``); ``pss_mb``: the same counting each shared page once (proportional set
    size: what the tree really occupies); ``peaks_mb``: the sum of every process's own peak
    (``VmHWM``), an upper bound that no sampling can miss (a worker's peak and the main process's
    peak counted together even when they came at different times); ``cpu``: CPU seconds of the
    whole tree; ``processes``: how many there were.
    """

    peak_mb: float = 0.0
    pss_mb: float = 0.0
    peaks_mb: float = 0.0
    cpu: float = 0.0
    processes: int = 0


SAMPLE_SECONDS = 0.02
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class TreeSampler:
    """Samples the process tree under ``root`` from /proc (Linux) on a thread until `stop`."""

    def __init__(self, root: int, *, skip_root: bool = False) -> None:
        import threading

        self.root = root
        self.skip_root = skip_root  # the root is bench/wrapper.py: only what it started is measured
        self.usage = TreeUsage()
        self.hwm_kb: dict[int, int] = {}
        self.cpu_ticks: dict[int, int] = {}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.available = Path("/proc/self/stat").exists()
        if self.available:
            self.thread.start()

    def _loop(self) -> None:
        while not self.done.is_set():
            self.sample()
            self.done.wait(SAMPLE_SECONDS)

    def _tree(self) -> list[int]:
        parents: dict[int, list[int]] = {}
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                stat = Path(f"/proc/{entry.name}/stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            parents.setdefault(int(fields[1]), []).append(int(entry.name))
        tree, stack = [], [self.root]
        while stack:
            pid = stack.pop()
            tree.append(pid)
            stack.extend(parents.get(pid, []))
        return tree

    def sample(self) -> None:
        rss = pss = 0
        for pid in self._tree():
            if self.skip_root and pid == self.root:
                continue
            try:
                status = Path(f"/proc/{pid}/status").read_text()
                stat = Path(f"/proc/{pid}/stat").read_text()
                rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
            except OSError:
                continue  # ended meanwhile
            values = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
            if "VmRSS" not in values:
                continue  # a zombie: its memory is gone
            rss += int(values["VmRSS"].split()[0])
            self.hwm_kb[pid] = max(self.hwm_kb.get(pid, 0), int(values["VmHWM"].split()[0]))
            fields = stat[stat.rindex(")") + 2 :].split()
            self.cpu_ticks[pid] = int(fields[11]) + int(fields[12])  # utime + stime
            for line in rollup.splitlines():
                if line.startswith("Pss:"):
                    pss += int(line.split()[1])
        self.usage.peak_mb = max(self.usage.peak_mb, rss / 1024)
        self.usage.pss_mb = max(self.usage.pss_mb, pss / 1024)

    def stop(self) -> TreeUsage:
        self.done.set()
        if self.available:
            self.thread.join()
        self.usage.peaks_mb = sum(self.hwm_kb.values()) / 1024
        self.usage.cpu = sum(self.cpu_ticks.values()) / _TICKS
        self.usage.processes = len(self.hwm_kb)
        return self.usage


def environment(home: Path) -> dict[str, str]:
    """The children's environment: this checkout first on the path, a private QUIZ_HOME, plain output.

    The bench's temporary folder holds ``home/`` and ``layout/`` (the checkout's installed layout).
    """
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "80", "QUIZ_HOME": str(home)}
    layout = home.parent / "layout"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(layout), os.environ.get("PYTHONPATH", "")]))
    if env.pop("PYTHONDONTWRITEBYTECODE", None):
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    env.pop("QUIZ_NO_CACHE", None)
    return env


def _peak_mb(maxrss: int) -> float:
    return maxrss / (1024 * 1024) if sys.platform == "darwin" else maxrss / 1024  # bytes on macOS


def run(
    command: Sequence[str],
    env: dict[str, str],
    stdin: str = "",
    until: re.Pattern[str] | None = None,
    *,
    tree: bool = False,
    whole_tree: bool = True,
) -> Run:
    """Run ``command`` to the end (or until a line of its output matches ``until``, then stop it).

    The child is reaped with ``os.wait4`` so that its own CPU time and peak memory are known (the
    peak of the largest single process among it and the children it reaped: not a sum). ``tree``:
    also sample the whole tree of processes it starts (`TreeSampler`). ``whole_tree=False``: measure
    the process itself, as a command stopped at a line is, so that figures compared with each other
    (start-up and the bare interpreter) are all taken the same way.
    """
    # A command stopped at a line is measured directly: the wrapper would count its kill, not its work.
    wrapped = until is None and whole_tree
    with tempfile.TemporaryFile("w+") as errors, tempfile.TemporaryDirectory() as scratch:
        usage_file = Path(scratch) / "usage.json"
        argv = [*WRAPPER, str(usage_file), *command] if wrapped else list(command)
        start = time.perf_counter()
        process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors, env=env, text=True
        )
        sampler = TreeSampler(process.pid, skip_root=wrapped) if tree else None
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(stdin)
        process.stdin.close()
        seen: list[str] = []
        elapsed: float | None = None
        for line in process.stdout:
            seen.append(line)
            if until is not None and until.search(line):
                elapsed = time.perf_counter() - start
                process.kill()
                break
        process.stdout.read()
        process.stdout.close()
        if sampler is not None and hasattr(os, "waitid"):
            # Sampled until it ends: waited for without reaping it, so that wait4 still can.
            os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT)
        _, status, usage = os.wait4(process.pid, 0)
        if elapsed is None:
            elapsed = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        output = "".join(seen)
        if until is not None and not until.search(output):
            errors.seek(0)
            raise RuntimeError(f"{' '.join(command[3:])}: no question appeared: {errors.read()[-300:]}")
        if until is None and process.returncode != 0:
            errors.seek(0)
            message = errors.read().strip().splitlines()
            raise RuntimeError(
                f"{' '.join(command[3:])} failed: {message[-1] if message else process.returncode}"
            )
        if wrapped:
            # The whole tree's CPU and its largest process's peak, from the wrapper (bench/wrapper.py).
            measured = json.loads(usage_file.read_text(encoding="utf-8"))
            cpu, peak = float(measured["cpu"]), _peak_mb(measured["maxrss_kb"])
        else:
            cpu, peak = usage.ru_utime + usage.ru_stime, _peak_mb(usage.ru_maxrss)
    # ``cpu``: the wrapper's count, every process reaped; the sampler's (``tree.cpu``) misses what a
    # process used after its last sample, and is kept beside it as the check of the two.
    return Run(elapsed, cpu, peak, output, sampler.stop() if sampler else None)


def measure(
    name: str,
    command: Sequence[str],
    env: dict[str, str],
    times: int,
    *,
    budget: float | None = None,
    stdin: str = "",
    until: re.Pattern[str] | None = None,
    group: str = "",
) -> Figure:
    """A whole-process figure: one unmeasured warm-up run, then ``times`` measured runs."""
    run(command, env, stdin, until)  # warms the file cache, the bytecode and quiz's bank cache
    runs = [run(command, env, stdin, until) for _ in range(times)]
    cpu = statistics.median(r.cpu for r in runs)
    return Figure(
        name,
        "s",
        [r.wall for r in runs],
        budget,
        note=f"cpu {cpu:.2f} s",
        peak_mb=max(r.peak_mb for r in runs),
        group=group,
    )


# ---------------------------------------------------------------------------------------------
# Start-up and the session
# ---------------------------------------------------------------------------------------------


STARTUP_RATIO_BUDGETS = {
    "quiz --help": 4.0,
    "quiz list week1": 6.0,
    "quiz run week1: first question": 12.0,
    "quiz show week1: an original": 12.0,
    "quiz answer: a formula answer": 12.0,
}
"""Start-up budgets as multiples of the CPU time of a bare ``python -c pass`` of the same venv, taken in
the same run (issue 43): a ratio holds on a loaded or a slower machine, where seconds would say more
about the machine than about quiz."""

BASELINE_SLACK = 2.0
"""The bare interpreter of the bench's venv may cost at most this many times a plain ``python -S -c
pass`` (the base interpreter without site: what no venv, ``.pth`` file or import hook can slow).
More, and something slows the baseline itself (an editable install's finder, a folder of links first
on the path, a wrapper), which would flatter every ratio: the bench then stops instead of printing
ratios. Measured here: a normal install's venv 1.2×, an editable one 2.5×."""


class BaselineError(RuntimeError):
    """The start-up baseline is not a bare interpreter: no honest ratio can be printed."""


def installed_environment(home: Path) -> dict[str, str]:
    """The environment of a user's shell for the normal install: no ``PYTHON*`` variables, private home."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    env.pop("QUIZ_NO_CACHE", None)
    return env | {"NO_COLOR": "1", "COLUMNS": "80", "QUIZ_HOME": str(home)}


@dataclass
class _Startup:
    """One start-up command and its runs, each run measured as the process itself (not through a wrapper)."""

    name: str
    command: list[str]
    env: dict[str, str]
    until: re.Pattern[str] | None = None
    runs: list[Run] = field(default_factory=list)

    def cpu(self) -> float:
        return statistics.median(r.cpu for r in self.runs)

    def wall(self) -> float:
        return statistics.median(r.wall for r in self.runs)


def _run_interleaved(commands: list[_Startup], repeats: int) -> None:
    """One warm-up of each, then ``repeats`` rounds of every command in turn, so a change of the machine's
    load during the run touches the baseline and quiz alike."""
    for command in commands:
        run(command.command, command.env, "", command.until, whole_tree=False)
    for _ in range(repeats):
        for command in commands:
            command.runs.append(run(command.command, command.env, "", command.until, whole_tree=False))


def check_baseline(bare: _Startup, plain: _Startup) -> None:
    """Raise `BaselineError` if the bare interpreter costs more than `BASELINE_SLACK` times the plain one."""
    if bare.cpu() > BASELINE_SLACK * plain.cpu():
        raise BaselineError(
            f"the start-up baseline ({' '.join(bare.command)}) takes {bare.cpu() * 1000:.1f} ms of CPU, "
            f"{bare.cpu() / plain.cpu():.1f}× a plain `python -S -c pass` ({plain.cpu() * 1000:.1f} ms): "
            f"more than {BASELINE_SLACK:g}×, so every start-up ratio would be flattered; find what slows "
            "the baseline (an editable install, PYTHONPATH, a .pth file) before reading any ratio"
        )


def startup_figures(repeats: int, home: Path) -> list[Figure]:
    """Bare python, ``quiz --help``, ``quiz list week1``, the first question of ``quiz run week1``, an
    original shown by ``quiz show`` and a formula answer graded by ``quiz answer``: each the CPU time of
    its process, from a normal install (`bench.install`), as multiples of the bare interpreter."""
    venv = normal_install()
    python, quiz = str(venv / "bin" / "python"), str(venv / "bin" / "quiz")
    env = installed_environment(home)
    cold_env = {**env, "QUIZ_NO_CACHE": "1"}
    runs = [quiz, "run", "week1", "--seed", "1"]
    plain_python = getattr(sys, "_base_executable", sys.executable)
    # The interpreter's floor: no site, so no venv, .pth file or import hook can slow it.
    plain = _Startup("python -S -c pass (no site: the floor)", [plain_python, "-S", "-c", "pass"], env)
    bare = _Startup("python -c pass", [python, "-c", "pass"], env)
    # What any command that builds a variant cannot do without: numpy and its random generators,
    # with BLAS in one thread as quiz sets it (`attnquiz.main`); the floor under the 12× budgets.
    numpy_floor = _Startup(
        "python -c 'import numpy.random' (the floor of a variant)",
        [python, "-c", "import os; os.environ.setdefault('OPENBLAS_NUM_THREADS', '1'); import numpy.random"],
        env,
    )
    commands = [
        plain,
        bare,
        numpy_floor,
        _Startup("quiz --help", [quiz, "--help"], env),
        _Startup("quiz list week1", [quiz, "list", "week1"], env),
        _Startup("quiz run week1: first question", runs, env, FIRST_QUESTION),
        _Startup("  … bank cache off (first run after an edit)", runs, cold_env, FIRST_QUESTION),
        _Startup(
            "quiz show week1: an original", [quiz, "show", "week1", "additive-score", "--original"], env
        ),
        # Issue 28: a formula answer graded without sympy (it cost 0.4–0.5 s of imports).
        _Startup(
            "quiz answer: a formula answer",
            [quiz, "answer", "week1", "block-params-formula", "--seed", "1", "--", "d(12d + 13)"],
            env,
        ),
    ]
    _run_interleaved(commands, repeats)
    check_baseline(bare, plain)
    figures: list[Figure] = []
    for command in commands:
        note = f"wall {command.wall():.3f} s"
        if command not in (plain, bare):
            ratios = (
                f"{command.cpu() / bare.cpu():.1f}× bare CPU, {command.wall() / bare.wall():.1f}× bare wall"
            )
            note = f"{ratios}; {note}"
        figures.append(
            Figure(
                f"{command.name} (cpu)",
                "s",
                [r.cpu for r in command.runs],
                note=note,
                peak_mb=max(r.peak_mb for r in command.runs),
                group="startup",
            )
        )
        budget = STARTUP_RATIO_BUDGETS.get(command.name)
        if budget is not None or command is numpy_floor:
            figures.append(
                Figure(
                    f"{command.name}, × bare python",
                    "×",
                    [r.cpu / bare.cpu() for r in command.runs],
                    budget,
                    note=(
                        "no budget: numpy alone, under every command that builds a variant"
                        if command is numpy_floor
                        else "each run's CPU ÷ the median CPU of python -c pass, same venv, same run"
                    ),
                    group="startup",
                )
            )
    session = measure("quiz run week1: a question, then quit", runs, env, 1, stdin="q\n", group="startup")
    figures.append(
        Figure(
            "quiz run week1: peak memory",
            "MB",
            [session.peak_mb or 0.0],
            150,
            note="whole session to quit, normal install",
            group="startup",
        )
    )
    return figures


_SESSION_CHILD = """
import io, sys, threading, time
from pathlib import Path
from rich.console import Console

from attnquiz.session_view import SessionView
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.practice.planning import plan_practice
from attnquiz.engine.practice.session import Session
from attnquiz.engine.practice.store import Store

home, count, warm = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "warm"
bank = banks.load("week1")
view = SessionView(Console(file=io.StringIO(), width=80), Console(file=io.StringIO(), width=80))
plan = plan_practice(bank, seed=2026, count=count)
store = Store.open(home / "history.sqlite3")
session = Session(plan, store=store)
view.header(plan, history=session.history)
view.question(session, session.current, session.show())
if warm:
    # What `quiz run` does while the student reads the first question.
    from attnquiz.session_loop import _load_grading
    threading.Thread(target=_load_grading).start()
    time.sleep(0.5)
for _ in range(count):
    question = session.question(session.current)
    mistakes = question.variant.mistakes
    response = mistakes[0].format(question.answer) if mistakes else question.answer.format()
    start = time.perf_counter()
    grade = session.answer(response)
    view.feedback(grade, question, response)
    if grade.status != "correct":
        view.solution(question)
    following = session.show()
    if following is not None:
        view.question(session, session.current, following)
    print(f"{(time.perf_counter() - start) * 1000:.3f}")
store.close()
"""


def session_figures(quick: bool, home: Path) -> list[Figure]:
    """In a session: from pressing Enter on an answer to the next question drawn and shown.

    Run by the normal install's interpreter (`bench.install`), as the start-up figures are: with
    bytecode compiled at install, the first answer imports what `quiz run` imports then, not what
    this checkout's interpreter compiles afresh after every change of the code."""
    python = str(normal_install() / "bin" / "python")
    env = installed_environment(home)
    count = 10 if quick else 30
    latencies: dict[str, list[float]] = {}
    for mode in ("cold", "warm"):
        with tempfile.TemporaryDirectory() as history:
            out = run([python, "-c", _SESSION_CHILD, history, str(count), mode], env)
        latencies[mode] = [float(line) for line in out.stdout.splitlines() if line.strip()]
    return [
        Figure(
            "answer → next question: first, grader cold",
            "ms",
            latencies["cold"][:1],
            SESSION_BUDGET_MS,
            group="session",
        ),
        Figure(
            "answer → next question: first, as quiz run",
            "ms",
            latencies["warm"][:1],
            SESSION_BUDGET_MS,
            note="grader loaded once the first question is shown, before the prompt",
            group="session",
        ),
        Figure(
            "answer → next question: later ones",
            "ms",
            latencies["warm"][1:],
            SESSION_BUDGET_MS,
            note=f"max {max(latencies['warm'][1:]):.1f} ms over {count - 1} answers",
            group="session",
        ),
    ]


STATS_ATTEMPTS = 1_000_000


def build_history(path: Path, attempts: int) -> None:
    """A history of ``attempts`` answers to every item of every bank over a year, with their cards.

    Written with one executemany in one transaction (a million single commits would take an hour);
    the rows look like a real history: every status, named mistakes, a spread of days.
    """
    import random
    import sqlite3
    from datetime import UTC, datetime, timedelta

    from attnquiz.engine.bank import finding as banks
    from attnquiz.engine.practice import review
    from attnquiz.engine.practice.store import Store

    items = [(b.name, e.id, e.topic, e.source) for found in banks.discover()
             for b in [banks.load(str(found.path))] for e in b.items]  # fmt: skip
    Store.open(path).close()  # the schema, as quiz creates it
    rng = random.Random(2026)
    start = datetime(2025, 12, 1, tzinfo=UTC)
    mistakes = [f"mistake-{i}" for i in range(40)]
    statuses = ("correct", "partial", "wrong")

    def rows() -> Any:
        for n in range(attempts):
            bank, item, topic, source = items[n % len(items)]
            status = rng.choices(statuses, (6, 1, 3))[0]
            score = {"correct": 1.0, "partial": 0.5, "wrong": 0.0}[status]
            at = start + timedelta(seconds=n * 31_536_000 / attempts)
            mistake = rng.choice(mistakes) if status == "wrong" and rng.random() < 0.5 else None
            yield (f"s{n // 10}", n % 10 + 1, "practice", bank, item, topic, source, n, "CODE-CODE", "1.5",
                   status, score, mistake, 20.0, at.isoformat(timespec="microseconds"), 0, 1)  # fmt: skip

    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN")
    db.executemany(
        "INSERT INTO attempts (session, position, mode, bank, item, topic, source, seed, variant_code, "
        "response, status, score, mistake, seconds, at, hints, reviewed) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows(),
    )
    from fsrs import Rating

    when = start + timedelta(days=360)
    for bank, item, topic, _source in items:
        card = review.next_card(None, bank=bank, item=item, topic=topic, rating=Rating.Good, when=when)
        db.execute(
            "INSERT INTO cards (bank, item, topic, state, due, created, reviews, lapses) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (bank, item, topic, card.state, card.due.isoformat(timespec="microseconds"),
             card.created.isoformat(timespec="microseconds"), 1, 0),
        )  # fmt: skip
    db.execute("COMMIT")
    db.close()


def history_figures(repeats: int, home: Path, work: Path) -> list[Figure]:
    """``quiz stats`` on a history of a million attempts (the history built once, not timed)."""
    path = work / "history-1m.sqlite3"
    build_history(path, STATS_ATTEMPTS)
    env = environment(home)
    return [
        measure(
            "quiz stats on 1,000,000 attempts",
            [*QUIZ, "stats", "--db", str(path)],
            env,
            repeats,
            budget=1.0,
            group="history",
        )
    ]


# ---------------------------------------------------------------------------------------------
# In-process throughput
# ---------------------------------------------------------------------------------------------


def generation_figures(quick: bool) -> list[Figure]:
    """Variants per second: over week 1 (the budget), over every bank, and for every generator."""
    from attnquiz.engine.bank import finding as banks

    seeds = 40 if quick else 200
    rounds = 2 if quick else 3
    items = [(found.name, entry) for found in banks.discover() for entry in banks.load(found.name).items]
    for _, entry in items:
        entry.question(0)  # imports the generator's module: start-up, not generation
    # Seconds per variant of each item, one entry per round.
    per_item: dict[tuple[str, str, str], list[float]] = {}
    week1_rates: list[float] = []
    all_rates: list[float] = []
    for _ in range(rounds):
        totals = {"week1": 0.0, "all": 0.0}
        for bank, entry in items:
            start = time.perf_counter()
            for seed in range(seeds):
                entry.question(seed)
            elapsed = time.perf_counter() - start
            per_item.setdefault((bank, entry.id, entry.spec.name), []).append(elapsed / seeds)
            totals["all"] += elapsed
            if bank == "week1":
                totals["week1"] += elapsed
        week1_rates.append(seeds * sum(b == "week1" for b, _ in items) / totals["week1"])
        all_rates.append(seeds * len(items) / totals["all"])
    slowest = max(per_item, key=lambda key: statistics.median(per_item[key]))
    figures = [
        Figure("variants per second, week1", "/s", week1_rates, 20_000, True, group="generation"),
        Figure("variants per second, all banks", "/s", all_rates, None, True, group="generation"),
        Figure(
            "variants per second, slowest item",
            "/s",
            [1 / t for t in per_item[slowest]],
            None,
            True,
            f"{slowest[0]}/{slowest[1]}",
            group="generation",
        ),
    ]
    # Every generator: its variants per second over all its items, one sample per round.
    per_generator: dict[str, list[list[float]]] = {}
    for (_, _, name), times in per_item.items():
        per_generator.setdefault(name, []).append(times)
    rows = []
    for name, item_times in per_generator.items():
        rates = [len(item_times) / sum(times[r] for times in item_times) for r in range(rounds)]
        note = f"{len(item_times)} items" if len(item_times) > 1 else ""
        rows.append(Figure(f"  {name}", "/s", rates, None, True, note, group="generators"))
    figures.extend(sorted(rows, key=lambda f: f.median))
    return figures


HOSTILE = [
    "9" * 1_000_000,
    "(" * 10_000 + "1" + ")" * 10_000,
    "9**9**9",
    "10^10^10",
    "factorial(10**7)",
    "__import__('os')",
    "[" * 5_000 + "]" * 5_000,
    "1+" * 100_000 + "1",
    "\x00" * 100_000,
    "sqrt(" * 3_000 + "2" + ")" * 3_000,
    # Inputs just inside the length limit do the most work before they are refused or read.
    "1+" * 999 + "1",
    "[" + ", ".join(["1"] * 660) + "]",
    "(" * 990 + "1" + ")" * 990,
    "2^" * 660 + "2",
]


def grading_figures(quick: bool) -> list[Figure]:
    """Responses graded per second for each answer kind, and the parser's worst hostile input."""
    from attnquiz.engine.bank import finding as banks
    from attnquiz.engine.grading import grade as grading

    per_kind: dict[str, list[tuple[Any, str]]] = {}
    for found in banks.discover():
        for entry in banks.load(found.name).items:
            for seed in range(20):
                question = entry.question(seed)
                if question.answer.kind == "code":  # run in a sandbox: measured on its own below
                    continue
                responses = [
                    question.answer.format(),
                    *(m.format(question.answer) for m in question.variant.mistakes),
                ]
                per_kind.setdefault(question.answer.kind, []).extend((question, r) for r in responses[:2])
    rounds = 3 if quick else 7
    figures = []
    for kind, cases in sorted(per_kind.items()):
        rates = []
        for _ in range(rounds):
            start = time.perf_counter()
            for question, response in cases:
                grading.grade(question, response)
            rates.append(len(cases) / (time.perf_counter() - start))
        budget = 20_000 if kind in {"numeric", "integer"} else None
        figures.append(
            Figure(f"responses graded per second: {kind}", "/s", rates, budget, True, group="grading")
        )
    figures.append(
        Figure(
            "one formula answer graded (issue 15)",
            "ms",
            formula_grading_ms(rounds),
            5,
            note="the key, an equivalent form and each listed mistake of every formula item; no sympy",
            group="grading",
        )
    )
    formula_worst, formula_input = hostile_formula_ms(rounds)
    figures.append(
        Figure(
            "formula reader worst case on hostile input (issue 15)",
            "ms",
            formula_worst,
            10,
            note=f"slowest: {formula_input!r}…",
            group="grading",
        )
    )
    figures.append(
        Figure(
            "one code answer graded in the sandbox (issue 44)",
            "ms",
            code_grading_ms(rounds),
            1000,
            note="attention, a right answer: sandbox start, 8 tests, reference and mutants",
            group="grading",
        )
    )
    question = banks.load("week1").items[0].question(0)
    worst_per_round = []
    worst_input = ""
    for _ in range(rounds):
        worst = 0.0
        for text in HOSTILE:
            start = time.perf_counter()
            grading.grade(question, text)
            elapsed = time.perf_counter() - start
            if elapsed > worst:
                worst, worst_input = elapsed, text[:20]
        worst_per_round.append(worst * 1000)
    figures.append(
        Figure(
            "parser worst case on hostile input",
            "ms",
            worst_per_round,
            10,
            note=f"slowest: {worst_input!r}…",
            group="grading",
        )
    )
    return figures


def code_grading_ms(rounds: int) -> list[float]:
    """Wall milliseconds to grade one right attention function, sandbox start included (each round a
    new variant, so that the reference's and mutants' outputs are computed too)."""
    from attnquiz.engine.bank import finding as banks
    from attnquiz.engine.grading import grade as grading

    entry = banks.load("code").get("attention")
    right = (
        "import numpy as np\n"
        "def attention(Q, K, V):\n"
        "    s = Q @ K.T / np.sqrt(Q.shape[-1])\n"
        "    w = np.exp(s - s.max(axis=-1, keepdims=True))\n"
        "    return w / w.sum(axis=-1, keepdims=True) @ V\n"
    )
    samples = []
    for seed in range(rounds):
        question = entry.question(seed)
        start = time.perf_counter()
        result = grading.grade(question, right)
        samples.append((time.perf_counter() - start) * 1000)
        if result.status != "correct":
            raise RuntimeError(f"the right attention function graded {result.status}: {result.feedback}")
    return samples


HOSTILE_FORMULAS = [
    "(d+1)^100000",
    "d^d^d",
    "9**9**9",
    "*".join(["d"] * 999),
    "(" * 1000 + "d" + ")" * 1000,
    "d" * 1999,
    "(" + "+".join(["d"] * 600) + ")^8",
    "(" + "+".join(f"{i}*d" for i in range(300)) + ")^2",
    "(d+1)^8*(d+1)^8",
    "__import__('os')",
    # Issue 25: towers of numbers, huge magnitudes, names run together.
    "((((((((10)^8)^8)^8)^8)^8)^8)^8)^8*d+12d^2+13d",
    "(((((2^8)^8)^8)^8)^8)*d",
    "1e300^2*d",
    "+".join(f"{'9' * 60}/(d+{k})" for k in range(25)),
    "d" * 399,
    "(" * 49 + "d" + ")" * 49,
]


def hostile_formula_ms(rounds: int) -> tuple[list[float], str]:
    """The slowest hostile formula per round (ms), graded against a formula item, and which it was."""
    from attnquiz.engine.bank import finding as banks
    from attnquiz.engine.grading import grade as grading

    question = banks.load("week1").get("block-params-formula").question(0)
    grading.grade(question, question.answer.format())  # the grader warmed first: not what is measured
    worst_per_round, worst_input = [], ""
    for _ in range(rounds):
        worst = 0.0
        for text in HOSTILE_FORMULAS:
            start = time.perf_counter()
            grading.grade(question, text)
            elapsed = time.perf_counter() - start
            if elapsed > worst:
                worst, worst_input = elapsed, text[:20]
        worst_per_round.append(worst * 1000)
    return worst_per_round, worst_input


def formula_grading_ms(rounds: int) -> list[float]:
    """Milliseconds to grade one response to a formula (`expression`) item, one sample per response.

    The responses are each formula item's key, the key rewritten (expanded, reordered, implicit
    products) and its listed mistakes; one unmeasured pass first warms the caches."""
    from attnquiz.engine.answers.kinds import ExpressionAnswer
    from attnquiz.engine.bank import finding as banks
    from attnquiz.engine.grading import grade as grading

    cases = []
    for found in banks.discover():
        for entry in banks.load(found.name).items:
            question = entry.question(0)
            answer = question.answer
            if isinstance(answer, ExpressionAnswer):
                rewritten = answer.value.replace("*", " ").replace("^", "**")
                cases += [(question, answer.value), (question, rewritten)]
                cases += [(question, m.format(answer)) for m in question.variant.mistakes]
    for question, response in cases:
        grading.grade(question, response)
    samples = []
    for _ in range(rounds):
        for question, response in cases:
            start = time.perf_counter()
            grading.grade(question, response)
            samples.append((time.perf_counter() - start) * 1000)
    return samples


# ---------------------------------------------------------------------------------------------
# Exports and class grading
# ---------------------------------------------------------------------------------------------


def export_figures(repeats: int, home: Path, work: Path) -> list[Figure]:
    """``quiz export`` (PDF and HTML for 30 and 300 students, Moodle XML) and ``quiz grade`` of 300."""
    env = environment(home)
    heavy = max(2, repeats // 2)
    figures = []
    for students, budget in ((30, 1.0), (300, 5.0)):
        for fmt in ("pdf", "html"):
            args = [
                *QUIZ,
                "export",
                "week1",
                "--students",
                str(students),
                "--count",
                str(QUESTIONS_PER_SHEET),
                "--seed",
                "2026",
                "--format",
                fmt,
                "-o",
                str(work / f"{fmt}{students}"),
            ]
            figures.append(
                measure(
                    f"quiz export {students} students × {QUESTIONS_PER_SHEET} q, {fmt}",
                    args,
                    env,
                    heavy if students > 30 else repeats,
                    budget=budget if fmt == "pdf" else None,
                    group="export",
                )
            )
    r_exams = [*QUIZ, "export", "week1", "--students", "30", "--count", "2", "--seed", "2026"]
    figures.append(
        measure(
            "quiz export 30 students × 2 q, pdf",
            [*r_exams, "--format", "pdf", "-o", str(work / "pdf30x2")],
            env,
            repeats,
            group="export",
        )
    )
    figures[-1].note += "; R/exams exams2pdf, the same: about 18 s"
    moodle = [*QUIZ, "export", "week1", "--variants", "30", "--format", "moodle", "-o", str(work / "w1.xml")]
    figures.append(
        measure("quiz export moodle, 30 variants × week1", moodle, env, repeats, budget=1.0, group="export")
    )
    figures += lms_class_figures(repeats, env, work)
    answers = class_answers(work)
    grade = [*QUIZ, "grade", "week1", str(answers), "--seed", "2026", "-o", str(work / "marks.csv")]
    figures.append(measure("quiz grade, 300 students × week1", grade, env, heavy, group="export"))
    return figures


def lms_class_figures(repeats: int, env: dict[str, str], work: Path) -> list[Figure]:
    """The STACK export (issue 29) against the Moodle export of the same class: the whole week-1 bank
    with 20 and 300 variants, time and peak memory (300 variants: one run after the warm-up)."""
    figures = []
    for variants in (20, 300):
        for fmt in ("moodle", "stack"):
            out = str(work / f"{fmt}{variants}.xml")
            args = [*QUIZ, "export", "week1", "--variants", str(variants), "--seed", "2026", "-f", fmt]
            args += ["-o", out]
            name = f"quiz export {fmt}, {variants} variants × week1"
            figures.append(measure(name, args, env, repeats if variants <= 20 else 1, group="export"))
    return figures


REXAMS = ROOT / "bench" / "rexams"
REXAMS_BUDGET = 20.0  # issue 28: quiz at least 20× faster per variant than R/exams, each export
REXAMS_ITEMS = "additive-softmax-weight,mha-params"  # as bench/rexams/*.Rmd: a softmax weight, a count


def rexams_available() -> bool:
    """Whether Rscript runs and has the exams package."""
    import shutil

    if shutil.which("Rscript") is None:
        return False
    probe = subprocess.run(["Rscript", "-e", "library(exams)"], capture_output=True, check=False, timeout=120)
    return probe.returncode == 0


def rexams_figures(repeats: int, home: Path, work: Path) -> list[Figure]:
    """Moodle, QTI 2.1 and HTML exports of 30 students × 2 items by R/exams (bench/rexams/export.R)
    and by quiz, alternately, each run's whole process tree (bench/wrapper.py): time per variant of
    each, and the ratio of R/exams's to quiz's per round (issue 28: at least 20×)."""
    if not rexams_available():
        absent = "not measured (R/exams not installed)"
        return [Figure("R/exams comparison", "×", note=absent, group="rexams")]
    env = environment(home)
    variants = 30 * 2
    figures = []
    for fmt in ("moodle", "qti", "html"):
        out_r, out_q = work / f"rexams-{fmt}", work / f"quiz-{fmt}"
        out_r.mkdir(exist_ok=True)
        r_command = ["Rscript", str(REXAMS / "export.R"), fmt, "30", str(out_r)]
        target = str(out_q) + (".xml" if fmt == "moodle" else ".zip" if fmt == "qti" else "")
        q_command = [*QUIZ, "export", "week1", "--items", REXAMS_ITEMS, "--students", "30", "--seed", "2026"]
        q_command += ["--format", fmt, "-o", target]
        run(q_command, env)  # warm-up: bytecode and the bank cache
        r_runs, q_runs = [], []
        for _ in range(repeats):
            r_runs.append(run(r_command, env, tree=True))
            q_runs.append(run(q_command, env, tree=True))
        ratios = [r.wall / q.wall for r, q in zip(r_runs, q_runs, strict=True)]
        r_cpu = statistics.median(r.cpu for r in r_runs)
        q_cpu = statistics.median(q.cpu for q in q_runs)
        figures.append(
            Figure(
                f"{fmt}: R/exams, 30 students × 2 items, per variant",
                "ms",
                [1000 * r.wall / variants for r in r_runs],
                note=f"cpu {r_cpu:.2f} s, process tree",
                peak_mb=max((r.tree or TreeUsage()).pss_mb for r in r_runs),
                group="rexams",
            )
        )
        figures.append(
            Figure(
                f"{fmt}: quiz, the same, per variant",
                "ms",
                [1000 * q.wall / variants for q in q_runs],
                note=f"cpu {q_cpu:.2f} s, process tree",
                peak_mb=max((q.tree or TreeUsage()).pss_mb for q in q_runs),
                group="rexams",
            )
        )
        figures.append(
            Figure(
                f"  … {fmt}: quiz faster than R/exams, per variant",
                "×",
                ratios,
                budget=REXAMS_BUDGET,
                higher_is_better=True,
                note="each round: R/exams's wall time ÷ quiz's (the same number of variants)",
                group="rexams",
            )
        )
        figures += _rexams_marginal(fmt, r_command, q_command, r_runs, q_runs, env, out_r)
    return figures


REXAMS_LARGE = 300  # students: the class that shows each tool's cost per variant beyond its start
REXAMS_ADDED_BUDGET = 50.0  # issue 43: each variant added to an export, quiz at least 50× cheaper


def _rexams_marginal(
    fmt: str,
    r_command: list[str],
    q_command: list[str],
    r_runs: list[Run],
    q_runs: list[Run],
    env: dict[str, str],
    out_r: Path,
) -> list[Figure]:
    """Each tool's cost per variant beyond its fixed cost (start-up, libraries, the bank), from an
    export of `REXAMS_LARGE` students (R/exams: one; quiz: the median of five) against the
    30-student median: the whole 300-student export's ratio (shown), and the ratio of what each
    added variant costs (issue 43: at least 50×), in CPU of the whole process tree (wall in the note)."""
    large = str(REXAMS_LARGE)
    r_large = [run([*r_command[:3], large, str(out_r)], env, tree=True)]
    # quiz's 300-student export costs a few tenths of a second more than its 30-student one, so one
    # run's noise would swing the ratio by half: the median of several (R/exams's difference is 20 s).
    q_large = [run([large if arg == "30" else arg for arg in q_command], env, tree=True) for _ in range(5)]
    added = (REXAMS_LARGE - 30) * 2

    def each(large_runs: list[Run], small: list[Run], measure: Callable[[Run], float]) -> float:
        return (
            statistics.median(measure(r) for r in large_runs) - statistics.median(measure(r) for r in small)
        ) / added

    r_cpu, q_cpu = each(r_large, r_runs, lambda r: r.cpu), each(q_large, q_runs, lambda r: r.cpu)
    r_wall, q_wall = each(r_large, r_runs, lambda r: r.wall), each(q_large, q_runs, lambda r: r.wall)
    r_whole, q_whole = r_large[0].wall, statistics.median(r.wall for r in q_large)
    whole = Figure(
        f"  … {fmt}: {REXAMS_LARGE} students, quiz faster than R/exams",
        "×",
        [r_whole / q_whole],
        group="rexams",
        note=f"whole exports {r_whole:.2f} s and {q_whole:.2f} s wall (quiz: median of {len(q_large)})",
    )
    note = (
        f"each variant beyond the first 60: R/exams {1000 * r_cpu:.1f} ms, quiz {1000 * q_cpu:.2f} ms "
        f"of CPU (wall {1000 * r_wall:.1f} and {1000 * q_wall:.2f} ms)"
    )
    measurable = q_cpu > 0  # else quiz's difference is within the noise of its 30-student runs
    added_figure = Figure(
        f"  … {fmt}: each added variant, quiz cheaper than R/exams",
        "×",
        [r_cpu / q_cpu] if measurable else [],
        budget=REXAMS_ADDED_BUDGET,
        higher_is_better=True,
        note=note if measurable else f"not measurable; {note}",
        group="rexams",
    )
    return [whole, added_figure]


PDF_MEMORY_BUDGET_MB = 400  # issue 17: the whole week-1 bank for 1000 students in PDF
OTHER_MEMORY_BUDGET_MB = 200  # issue 17: every other export


def _usable_cpus() -> int:
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity else os.cpu_count() or 1


def _class_rows(name: str, runs: list[Run], budget_mb: float) -> list[Figure]:
    """An export's time and its process tree's peak memory against the budget (one row each).

    The memory row's figure is the largest proportional set size of the whole tree seen at once
    (`TreeUsage.pss_mb`: the main process, the fork server and the live workers, each shared page
    counted once): what the export occupies, which is what runs a laptop out of memory. Its note
    gives the resident sum at once (shared pages counted in every process that maps them: the
    Typst library and Python's modules, shared by the fork server's children) and the sum of every
    process's own peak, which adds up workers that never lived at the same time (they are replaced
    as Typst's caches grow), so it grows with the class although the memory in use does not.
    """
    trees = [r.tree or TreeUsage(r.peak_mb, r.peak_mb, r.peak_mb, r.cpu, 1) for r in runs]
    cpu = statistics.median(r.cpu for r in runs)  # the whole tree's, from bench/wrapper.py
    pss = [t.pss_mb for t in trees]
    at_once = max(t.peak_mb for t in trees)
    peaks = max(t.peaks_mb for t in trees)
    processes = max(t.processes for t in trees)
    return [
        Figure(
            name,
            "s",
            [r.wall for r in runs],
            note=f"cpu {cpu:.1f} s, all processes",
            peak_mb=max(pss),
            group="class",
        ),
        Figure(
            "  … peak memory, process tree (proportional)",
            "MB",
            pss,
            budget=budget_mb,
            group="class",
            note=(
                f"{processes} processes; at once resident {at_once:.0f} MB; "
                f"each process's own peak, summed: {peaks:,.0f} MB"
            ),
        ),
    ]


def class_figures(quick: bool, work: Path, home: Path, rounds: int = 1) -> list[Figure]:
    """Class-scale exports (issue 17): the whole week-1 bank in PDF (worksheets and the default key,
    the marking grid) for 30, 300 and 1000 students with every CPU (the default ``--jobs``), and for
    30 and 300 with ``--jobs 1`` too (run alternately, ``rounds`` times each: a shared machine's
    load moves between runs), with peak memory, the speed-up, and the scaling from 300 to 1000;
    Moodle with 1000 variants; HTML of the whole bank for 1000 students. ``quick``: no 1000
    (HTML for 300)."""
    env = environment(home)
    figures: list[Figure] = []
    per_student: dict[int, tuple[float, float]] = {}
    cpus = _usable_cpus()
    sizes = (30, 300) if quick else (30, 300, 1000)
    for students in sizes:
        args = ["export", "week1", "--all", "--students", str(students), "--seed", "2026"]
        options = [f"{cpus}"] + (["1"] if students <= 300 and cpus > 1 else [])
        runs: dict[str, list[Run]] = {jobs: [] for jobs in options}
        for _ in range(rounds if students <= 300 else 1):
            for jobs in options:
                out = str(work / f"class{students}-{jobs}")
                runs[jobs].append(run([*QUIZ, *args, "--jobs", jobs, "-o", out], env, tree=True))
        for jobs in options:
            default = " (every CPU)" if jobs == str(cpus) else ""
            name = f"pdf, whole week1 × {students} students, --jobs {jobs}{default}"
            figures += _class_rows(name, runs[jobs], PDF_MEMORY_BUDGET_MB)
        every = runs[str(cpus)]
        per_student[students] = (
            statistics.median(r.wall for r in every) / students,
            max((r.tree or TreeUsage()).pss_mb for r in every),
        )
        if "1" in runs and len(options) > 1:
            speedups = [one.wall / all_.wall for one, all_ in zip(runs["1"], every, strict=True)]
            figures.append(
                Figure(
                    f"  … speed-up, --jobs {cpus} over --jobs 1",
                    "×",
                    speedups,
                    group="class",
                    note="each round's --jobs 1 time ÷ its every-CPU time",
                )
            )
    if 1000 in per_student:
        (t300, m300), (t1000, m1000) = per_student[300], per_student[1000]
        figures.append(
            Figure(
                "  … time per student, 1000 ÷ 300",
                "×",
                [t1000 / t300],
                budget=1.25,
                group="class",
                note="linear: the same time per student",
            )
        )
        figures.append(
            Figure(
                "  … peak memory, 1000 ÷ 300",
                "×",
                [m1000 / m300],
                budget=1.15,
                group="class",
                note="flat: memory does not grow with the class",
            )
        )
    moodle = [
        "export",
        "week1",
        "--variants",
        "1000",
        "--seed",
        "2026",
        "-f",
        "moodle",
        "-o",
        str(work / "m.xml"),
    ]
    figures += _class_rows(
        "moodle, week1 × 1000 variants", [run([*QUIZ, *moodle], env, tree=True)], OTHER_MEMORY_BUDGET_MB
    )
    # HTML is written sheet by sheet too (it held 1.8 GB for this class when made whole).
    html_class = "300" if quick else "1000"
    page = ["export", "week1", "--all", "--students", html_class, "--seed", "2026", "-f", "html"]
    figures += _class_rows(
        f"html, whole week1 × {html_class} students",
        [run([*QUIZ, *page, "-o", str(work / "html")], env, tree=True)],
        OTHER_MEMORY_BUDGET_MB,
    )
    return figures


def classwork_figures(home: Path, work: Path) -> list[Figure]:
    """Issue 28: ``quiz grade`` of 3000 students on the whole week-1 bank (≤ 20 s) and ``quiz check
    week1`` (≤ 8 s since issue 43; issue 28 asked ≤ 10 s), each once after a warm-up, whole process tree."""
    env = environment(home)
    answers = class_answers(work, 3000)
    grade = [*QUIZ, "grade", "week1", str(answers), "--seed", "2026", "-o", str(work / "marks3000.csv")]
    check = [*QUIZ, "check", "week1"]
    return [
        measure("quiz grade, 3000 students × whole week1", grade, env, 1, budget=20.0, group="classwork"),
        measure("quiz check week1", check, env, 1, budget=8.0, group="classwork"),
    ]


SERVE_CLIENTS = 8
SERVE_REQUESTS = 100  # per client, after a few unmeasured ones
SERVE_WARM_UP = 5
SERVE_LINK = re.compile(r"http://[^/ ]+:(\d+)/\?token=([A-Za-z0-9_-]+)")
SERVE_BUDGET = 5.0  # issue 28: a page's p50 at concurrency 8 on kept-alive connections, ms
SERVE_PAGES = (
    ("/", "the home page (made in a forked child, sent again while the banks' files are unchanged)", True),
    ("SESSION", "a question of a practice session (the page a student reads and answers)", True),
    ("/static/app.css", "the stylesheet (from memory)", True),
    ("/stats", "the stats page (made in a forked child, sent again while the history is unchanged)", True),
    ("/review", "the review page (made in a forked child, sent again while banks and history are)", True),
)


def serve_figures(home: Path) -> list[Figure]:
    """Issue 28: pages of ``quiz serve`` for 8 clients at once, each its own process on its own
    kept-alive connection (p50 ≤ 5 ms); every request's time from sending to the last byte read.
    Client processes, not threads: threads of the bench would share one interpreter lock and add
    their own queue to the server's."""
    env = {**environment(home), "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [*QUIZ, "serve", "week1", "--db", str(home / "serve.sqlite3")],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    figures = []
    try:
        assert process.stdout is not None
        found = None
        for _ in range(10):
            found = SERVE_LINK.search(process.stdout.readline())
            if found:
                break
        if found is None:
            raise RuntimeError("quiz serve printed no link")
        port, token = int(found.group(1)), found.group(2)
        session = _serve_session(port, token)
        for path, what, budgeted in SERVE_PAGES:
            asked = session if path == "SESSION" else path
            times = _kept_alive_clients(port, token, asked)
            ordered = sorted(times)
            p90 = ordered[int(len(ordered) * 0.9)] * 1000
            shown = "/s/SESSION" if path == "SESSION" else path
            figures.append(
                Figure(
                    f"quiz serve {shown}: p50, {SERVE_CLIENTS} kept-alive clients",
                    "ms",
                    [ordered[len(ordered) // 2] * 1000],
                    budget=SERVE_BUDGET if budgeted else None,
                    group="serve",
                    note=f"{what}; p90 {p90:.2f} ms over {len(times)} requests",
                )
            )
    finally:
        process.terminate()
        process.wait(timeout=30)
    return figures


def _serve_headers(port: int, token: str) -> dict[str, str]:
    return {"Host": f"127.0.0.1:{port}", "Cookie": f"quiz_token_{port}={token}"}


def _serve_session(port: int, token: str) -> str:
    """The address of a new practice session's question page (started as the home page's form does)."""
    import http.client
    import urllib.parse

    headers = _serve_headers(port, token)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("GET", "/", headers=headers)
        page = connection.getresponse().read().decode()
        csrf = re.search(r'name="csrf" value="([^"]+)"', page)
        if csrf is None:
            raise RuntimeError("the home page has no start form")
        form = urllib.parse.urlencode({"csrf": csrf.group(1), "bank": "week1", "count": "5", "seed": "7"})
        posted = {**headers, "Content-Type": "application/x-www-form-urlencoded"}
        connection.request("POST", "/start", body=form, headers=posted)
        reply = connection.getresponse()
        reply.read()
        where = reply.getheader("Location")
        if reply.status != 303 or not where:
            raise RuntimeError(f"starting a session gave {reply.status}")
        return urllib.parse.urlsplit(where).path
    finally:
        connection.close()


def _serve_client(port: int, token: str, path: str) -> list[float]:
    """One client: `SERVE_REQUESTS` timed requests for ``path`` on one kept-alive connection."""
    import http.client

    headers = _serve_headers(port, token)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    mine: list[float] = []
    try:
        for number in range(SERVE_REQUESTS + SERVE_WARM_UP):
            began = time.perf_counter()
            connection.request("GET", path, headers=headers)
            reply = connection.getresponse()
            reply.read()
            took = time.perf_counter() - began
            if reply.status != 200 or reply.will_close:
                raise RuntimeError(f"{path}: status {reply.status}, will close: {reply.will_close}")
            if number >= SERVE_WARM_UP:
                mine.append(took)
    finally:
        connection.close()
    return mine


def _kept_alive_clients(port: int, token: str, path: str) -> list[float]:
    """Each request's seconds, from `SERVE_CLIENTS` processes each asking for ``path`` on one connection."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(SERVE_CLIENTS) as clients:
        runs = [clients.submit(_serve_client, port, token, path) for _ in range(SERVE_CLIENTS)]
        return [took for run in runs for took in run.result()]


def class_answers(work: Path, students: int = 300) -> Path:
    """An answers.csv for a class on every week-1 item: right answers, known mistakes and junk."""
    from attnquiz.engine.bank import finding as banks
    from attnquiz.engine.plan.class_plan import plan_class

    plan = plan_class(banks.load("week1"), students=students, master_seed=2026)
    path = work / f"answers{students}.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle)
        out.writerow(["student", "name", "code", *plan.items])
        for sheet in plan.sheets:
            out.writerow([str(sheet.student), f"Student {sheet.student}", sheet.code, *class_cells(sheet)])
    return path


def class_cells(sheet: Sheet) -> list[str]:
    """A student's answers, by turns a named mistake, junk, a blank and the right answer."""
    cells = []
    for number, question in enumerate(sheet.questions):
        mistakes = question.variant.mistakes
        kind = (sheet.student + number) % 4
        if kind == 0 and mistakes:
            cells.append(mistakes[0].format(question.answer))
        elif kind == 1:
            cells.append("no idea")
        elif kind == 2:
            cells.append("")
        else:
            cells.append(question.answer.format())
    return cells


CODE_CLASS = 300
CODE_CLASS_BUDGET = 60.0  # seconds of wall for the class (issue 44)
_ATTENTION_FORMS = {
    "right": """import numpy as np


def attention(Q, K, V):
    s = Q @ K.T / np.sqrt(Q.shape[-1])
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    return w / w.sum(axis=-1, keepdims=True) @ V
""",
    "right-einsum": """import numpy as np


def attention(Q, K, V):
    s = np.einsum("id,jd->ij", Q, K) / np.sqrt(Q.shape[1])
    s = np.exp(s - s.max(axis=1)[:, None])
    return np.einsum("ij,jd->id", s / s.sum(axis=1)[:, None], V)
""",
    "right-loops": """import math
import numpy as np


def attention(Q, K, V):
    out = np.zeros((Q.shape[0], V.shape[1]))
    for i in range(Q.shape[0]):
        scores = [float(Q[i] @ K[j]) / math.sqrt(Q.shape[1]) for j in range(K.shape[0])]
        top = max(scores)
        weights = [math.exp(x - top) for x in scores]
        total = sum(weights)
        for j in range(K.shape[0]):
            out[i] += weights[j] / total * V[j]
    return out
""",
    "right-float32": """import numpy as np


def attention(Q, K, V):
    Q, K, V = (np.asarray(x, dtype=np.float32) for x in (Q, K, V))
    s = Q @ K.T / np.float32(np.sqrt(Q.shape[-1]))
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    return w / w.sum(axis=-1, keepdims=True) @ V
""",
}
_ATTENTION_MISTAKES = {
    "no-scale": ("Q @ K.T / np.sqrt(Q.shape[-1])", "Q @ K.T"),
    "scale-by-d": ("np.sqrt(Q.shape[-1])", "Q.shape[-1]"),
    "softmax-over-queries": ("axis=-1", "axis=0"),
    "no-transpose": ("Q @ K.T", "Q @ K"),
    "keys-not-values": ("@ V", "@ K"),
    "unstable-softmax": ("s - s.max(axis=-1, keepdims=True)", "s"),
    "name-error": ("@ V", "@ values"),
}


def code_submissions(folder: Path, students: int = CODE_CLASS) -> Path:
    """A class's folder of attention submissions, as a course gets them: 40 % right (written in
    several equivalent ways), the rest a named mistake or an error (a name misspelt); one in ten a
    notebook; one student's loop never ends (the sandbox stops it)."""
    folder.mkdir(parents=True, exist_ok=True)
    forms = list(_ATTENTION_FORMS.values())
    mistakes = list(_ATTENTION_MISTAKES.values())
    for student in range(1, students + 1):
        if student == 7:
            source = forms[0].replace("    s = Q", "    while True:\n        pass\n    s = Q", 1)
        elif student % 20 < 8:
            source = forms[student % len(forms)]
        else:
            old, new = mistakes[student % len(mistakes)]
            source = forms[0].replace(old, new)
        if student % 10 == 3:
            cells: list[dict[str, Any]] = [
                {"cell_type": "markdown", "metadata": {}, "source": "# Self-attention"}
            ]
            cells.append(
                {"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": 1}
            )
            notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}
            (folder / f"{student}.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
        else:
            (folder / f"student-{student}.py").write_text(source, encoding="utf-8")
    return folder


def code_class_figures(home: Path, work: Path) -> list[Figure]:
    """``quiz grade`` of a folder of 300 attention submissions, each run in the sandbox by the worker
    pool (issue 44): wall (the budget) and CPU of the whole tree, the workers and sandboxes included.
    One warm-up with a class of 10, then one measured run (about a minute on 2 cores)."""
    env = environment(home)
    small = code_submissions(work / "code-small", 10)
    warm = [*QUIZ, "grade", "code", str(small), "--items", "attention", "--seed", "2026", "--students", "10"]
    run([*warm, "-o", str(work / "code-small.csv")], env)
    folder = code_submissions(work / "code-class")
    grade = [*QUIZ, "grade", "code", str(folder), "--items", "attention", "--seed", "2026"]
    grade += ["--students", str(CODE_CLASS), "-o", str(work / "code-marks.csv")]
    measured = run(grade, env)
    with (work / "code-marks.csv").open(encoding="utf-8") as handle:
        right = sum(row["attention"] == "1" for row in csv.DictReader(handle))
    return [
        Figure(
            f"quiz grade of a folder: {CODE_CLASS} attention submissions",
            "s",
            [measured.wall],
            CODE_CLASS_BUDGET,
            note=f"cpu {measured.cpu:.1f} s (workers and sandboxes); {right} right; issue 44",
            peak_mb=measured.peak_mb,
            group="code",
        )
    ]


# ---------------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    """The date, Python, CPUs, load and commit the figures were measured with."""
    affinity = getattr(os, "sched_getaffinity", None)
    try:
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        commit = ""
    return {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "usable_cpus": len(affinity(0)) if affinity else os.cpu_count(),
        "machine": platform.machine(),
        "system": platform.system(),
        "load": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else [],
        "commit": commit or "?",
        "bytecode": "private cache" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "as installed",
    }


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def print_table(figures: list[Figure], info: dict[str, Any]) -> None:
    """The figures as one table, with the machine they were measured on."""
    load = "/".join(str(x) for x in info.get("load", []))
    print(
        f"quiz benchmarks — {info['date']}, Python {info['python']}, {info['cpus']} CPUs "
        f"({info['machine']}, {info['system']}), load {load or '?'}, commit {info['commit']}"
    )
    print()
    header = (
        f"{'figure':46} {'median':>9} {'min':>9} {'max':>9} {'unit':>4} {'budget':>8} {'peak MB':>7}  "
        "verdict  note"
    )
    print(header)
    print("-" * len(header))
    group = None
    for f in figures:
        if group is not None and f.group != group:
            print()
            if f.group == "generators":
                print("variants per second of each generator, slowest first:")
        group = f.group
        if not f.samples:
            print(f"{f.name:46} {'—':>9} {'':>9} {'':>9} {f.unit:>4} {'':>8} {'':>7}  {'':7}  {f.note}")
            continue
        budget = "" if f.budget is None else (f"≥{f.budget:g}" if f.higher_is_better else f"<{f.budget:g}")
        peak = "" if f.peak_mb is None else f"{f.peak_mb:.0f}"
        print(
            f"{f.name:46} {_fmt(f.median):>9} {_fmt(min(f.samples)):>9} {_fmt(max(f.samples)):>9} "
            f"{f.unit:>4} {budget:>8} {peak:>7}  {f.verdict():7}  {f.note}".rstrip()
        )


def compare(old_path: str, new_path: str) -> int:
    """Print the medians of two saved runs side by side, with the change (better or worse)."""
    old, new = (json.loads(Path(p).read_text(encoding="utf-8")) for p in (old_path, new_path))
    before = {f["name"]: f for f in old["figures"]}
    for label, saved in (("old", old), ("new", new)):
        info = saved["machine"]
        print(f"{label}: {info.get('commit', '?')} ({info['date']}, load {info.get('load')})")
    print()
    print(f"{'figure':46} {'old':>9} {'new':>9} {'unit':>4}  change")
    for figure in new["figures"]:
        prior = before.get(figure["name"])
        if prior is None or "median" not in figure or "median" not in prior:
            continue
        a, b = prior["median"], figure["median"]
        ratio = b / a if a else float("nan")
        better = ratio > 1 if figure["higher_is_better"] else ratio < 1
        word = "same" if abs(ratio - 1) < 0.05 else ("better" if better else "worse")
        print(f"{figure['name']:46} {_fmt(a):>9} {_fmt(b):>9} {figure['unit']:>4}  ×{ratio:.2f} {word}")
    return 0


GROUPS = (
    "startup",
    "session",
    "serve",
    "generation",
    "grading",
    "export",
    "class",
    "history",
    "classwork",
    "code",
    "rexams",
)


def main(argv: list[str] | None = None) -> int:
    """Run the chosen groups of figures (all by default) and print the table."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and seeds (a rough picture)")
    parser.add_argument("--json", metavar="FILE", help="also save the results as JSON")
    parser.add_argument("--only", choices=GROUPS, action="append", help="run only these groups (repeatable)")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        metavar="N",
        help="class group: run the 30- and 300-student exports N times, --jobs 1 and every CPU alternately",
    )
    parser.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"), help="compare two --json files")
    args = parser.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    started = time.perf_counter()
    repeats = 3 if args.quick else 7
    groups = args.only or list(GROUPS)
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory() as tmp:
        home, work = Path(tmp) / "home", Path(tmp) / "work"
        # Every figure measures this checkout, whatever copy of attnquiz the interpreter has
        # installed: the checkout's installed layout (links) comes first, here and in the children.
        layout = installed_layout(Path(tmp) / "layout")
        sys.path.insert(0, str(layout))
        home.mkdir()
        work.mkdir()
        steps: dict[str, Callable[[], list[Figure]]] = {
            "startup": lambda: startup_figures(repeats, home),
            "session": lambda: session_figures(args.quick, home),
            "serve": lambda: serve_figures(home),
            "generation": lambda: generation_figures(args.quick),
            "grading": lambda: grading_figures(args.quick),
            "export": lambda: export_figures(repeats, home, work),
            "class": lambda: class_figures(args.quick, work, home, max(1, args.rounds)),
            "history": lambda: history_figures(repeats, home, work),
            "classwork": lambda: classwork_figures(home, work),
            "code": lambda: code_class_figures(home, work),
            "rexams": lambda: rexams_figures(max(1, repeats // 2), home, work),
        }
        for group in groups:
            try:
                figures.extend(steps[group]())
            except BaselineError as exc:
                print(f"bench: refusing to print start-up ratios: {exc}", file=sys.stderr)
                return 2
            except (subprocess.SubprocessError, OSError, RuntimeError, ImportError) as exc:
                figures.append(
                    Figure(f"{group}: could not be measured", "", note=str(exc)[:150], group=group)
                )
    info = machine()
    info["seconds"] = round(time.perf_counter() - started, 1)
    print_table(figures, info)
    print(f"\n({info['seconds']} s; bytecode: {info['bytecode']})")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {"machine": info, "figures": [f.to_json() for f in figures]}, indent=2, ensure_ascii=False
            ),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
