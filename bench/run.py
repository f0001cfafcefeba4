"""Measure what users wait for and print one table (``python -m bench``; ``--quick``, ``--json FILE``).

Whole-process figures run the installed ``quiz`` as a user does, several times, and report the
median, min and max, and the ratio to a bare ``python -c pass`` measured in the same run (so a
slow machine does not hide a slow start). Throughput figures run in-process. Nothing here is a
test: budgets are printed beside the figures, and a missed budget is marked, not failed.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIRST_QUESTION = re.compile(r"Give |Choose one|Select all")


@dataclass
class Figure:
    """One measured figure: a name, its samples, its unit and the budget it is held to."""

    name: str
    unit: str
    samples: list[float] = field(default_factory=list)
    budget: float | None = None
    higher_is_better: bool = False
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.samples) if self.samples else float("nan")

    def verdict(self) -> str:
        if self.budget is None or not self.samples:
            return ""
        ok = self.median >= self.budget if self.higher_is_better else self.median <= self.budget
        return "ok" if ok else "MISSED"


def quiz_command() -> list[str]:
    """The installed ``quiz`` script (as users start it), or the module as a fallback."""
    script = shutil.which("quiz", path=str(Path(sys.executable).parent)) or shutil.which("quiz")
    return [script] if script else [sys.executable, "-m", "cli"]


def environment(home: Path) -> dict[str, str]:
    return {**os.environ, "NO_COLOR": "1", "COLUMNS": "80", "QUIZ_HOME": str(home)}


def wall(command: list[str], env: dict[str, str], stdin: str = "") -> float:
    start = time.perf_counter()
    subprocess.run(command, input=stdin, capture_output=True, text=True, env=env, check=True, timeout=300)
    return time.perf_counter() - start


def until_first_question(command: list[str], env: dict[str, str]) -> float:
    """Seconds from starting ``quiz run`` with piped stdin until the first question is printed."""
    start = time.perf_counter()
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True
    ) as process:
        assert process.stdout is not None
        seen = ""
        for line in process.stdout:
            seen += line
            if FIRST_QUESTION.search(line):
                elapsed = time.perf_counter() - start
                break
        else:
            raise RuntimeError(f"no question appeared; output was:\n{seen}")
        process.kill()
    return elapsed


def peak_memory_mb(command: list[str], env: dict[str, str], stdin: str) -> float:
    """Peak resident memory of one run of ``command``, measured in a fresh child process."""
    probe = (
        "import resource, subprocess, sys\n"
        "subprocess.run(sys.argv[1:], input=sys.stdin.read(), capture_output=True, text=True)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, *command],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return int(out.stdout.strip()) / 1024


def repeat(fn: Callable[[], float], times: int) -> list[float]:
    fn()  # warm the file cache; not counted
    return [fn() for _ in range(times)]


@contextlib.contextmanager
def timed() -> Iterator[list[float]]:
    box: list[float] = []
    start = time.perf_counter()
    yield box
    box.append(time.perf_counter() - start)


def startup_figures(repeats: int, home: Path) -> list[Figure]:
    env = environment(home)
    quiz = quiz_command()
    bare = Figure("python -c pass", "s", repeat(lambda: wall([sys.executable, "-c", "pass"], env), repeats))
    figures = [bare]
    for name, args, budget in (
        ("quiz --help", ["--help"], 0.2),
        ("quiz list week1", ["list", "week1"], 0.4),
    ):
        figures.append(Figure(name, "s", repeat(lambda a=args: wall(quiz + a, env), repeats), budget))  # type: ignore[misc]
    run = [*quiz, "run", "week1", "--seed", "1"]
    figures.append(
        Figure(
            "quiz run week1: first question",
            "s",
            repeat(lambda: until_first_question(run, env), repeats),
            0.4,
        )
    )
    for figure in figures[1:]:
        figure.note = f"{figure.median / bare.median:.1f}× bare python"
    memory = peak_memory_mb([*quiz, "run", "week1", "--seed", "1"], env, "q\n")
    figures.append(Figure("quiz run week1: peak memory", "MB", [memory], 150))
    return figures


def generation_figures(quick: bool) -> list[Figure]:
    from engine import banks

    seeds = 200 if quick else 1000
    figures = []
    slowest: tuple[float, str] = (float("inf"), "")
    total_variants = 0
    total_time = 0.0
    for found in banks.discover():
        bank = banks.load(found.name)
        for entry in bank.items:
            start = time.perf_counter()
            for seed in range(seeds):
                entry.question(seed)
            elapsed = time.perf_counter() - start
            rate = seeds / elapsed
            total_variants += seeds
            total_time += elapsed
            if rate < slowest[0]:
                slowest = (rate, f"{bank.name}/{entry.id}")
    figures.append(
        Figure("variants per second, all banks", "/s", [total_variants / total_time], 20_000, True)
    )
    figures.append(Figure("variants per second, slowest item", "/s", [slowest[0]], None, True, slowest[1]))
    return figures


def grading_figures(quick: bool) -> list[Figure]:
    from engine import banks, grading

    figures = []
    per_kind: dict[str, list[tuple[Any, str]]] = {}
    for found in banks.discover():
        for entry in banks.load(found.name).items:
            for seed in range(20):
                question = entry.question(seed)
                per_kind.setdefault(question.answer.kind, []).append((question, question.answer.format()))
    rounds = 2 if quick else 10
    for kind, cases in sorted(per_kind.items()):
        start = time.perf_counter()
        for _ in range(rounds):
            for question, response in cases:
                grading.grade(question, response)
        rate = rounds * len(cases) / (time.perf_counter() - start)
        budget = 20_000 if kind in {"numeric", "integer"} else None
        figures.append(Figure(f"responses graded per second: {kind}", "/s", [rate], budget, True))
    hostile = [
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
    question = banks.load("week1").items[0].question(0)
    worst = 0.0
    worst_input = ""
    for text in hostile:
        start = time.perf_counter()
        grading.grade(question, text)
        elapsed = time.perf_counter() - start
        if elapsed > worst:
            worst, worst_input = elapsed, text[:20]
    figures.append(
        Figure("parser worst case on hostile input", "ms", [worst * 1000], 10, False, repr(worst_input))
    )
    return figures


def export_figures(repeats: int, home: Path, work: Path) -> list[Figure]:
    env = environment(home)
    quiz = quiz_command()
    figures = []
    for students, budget in ((30, 1.0), (300, 5.0)):
        for fmt in ("pdf", "html"):
            out = work / f"{fmt}{students}"
            args = [
                *quiz,
                "export",
                "week1",
                "--students",
                str(students),
                "--seed",
                "2026",
                "--format",
                fmt,
                "-o",
                str(out),
            ]
            figures.append(
                Figure(
                    f"quiz export {students} students, {fmt}",
                    "s",
                    repeat(lambda a=args: wall(a, env), max(1, repeats // 2)),  # type: ignore[misc]
                    budget if fmt == "pdf" else None,
                )
            )
    moodle = [*quiz, "export", "week1", "--variants", "30", "--format", "moodle", "-o", str(work / "w1.xml")]
    figures.append(
        Figure(
            "quiz export moodle, 30 variants × week1", "s", repeat(lambda: wall(moodle, env), repeats), 1.0
        )
    )
    answers = class_answers(work, env, quiz)
    grade = [*quiz, "grade", "week1", str(answers), "--seed", "2026", "-o", str(work / "marks.csv")]
    figures.append(Figure("quiz grade, class of 300", "s", repeat(lambda: wall(grade, env), repeats)))
    return figures


def class_answers(work: Path, env: dict[str, str], quiz: list[str]) -> Path:
    """An answers.csv for 300 students: the template, each cell filled with a plausible response."""
    template = work / "answers.csv"
    subprocess.run(
        [*quiz, "grade", "week1", "--template", "--students", "300", "--seed", "2026", "-o", str(template)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    with template.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    header, body = rows[0], rows[1:]
    filled = [[*row[:2], *["1" for _ in header[2:]]] for row in body]
    with template.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([header, *filled])
    return template


def machine() -> dict[str, Any]:
    return {
        "date": time.strftime("%Y-%m-%d"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
        "processor": platform.processor() or platform.machine(),
    }


def print_table(figures: list[Figure], info: dict[str, Any]) -> None:
    print(
        f"quiz benchmarks — {info['date']}, Python {info['python']}, {info['cpus']} CPUs ({info['machine']})"
    )
    print()
    header = f"{'figure':44} {'median':>10} {'min':>10} {'max':>10} {'unit':>5} {'budget':>9}  verdict / note"
    print(header)
    print("-" * len(header))
    for f in figures:
        if not f.samples:
            print(f"{f.name:44} {'—':>10} {'':>10} {'':>10} {f.unit:>5} {'':>9}  {f.note}")
            continue
        budget = "" if f.budget is None else (f"≥{f.budget:g}" if f.higher_is_better else f"<{f.budget:g}")
        line = (
            f"{f.name:44} {f.median:10.4g} {min(f.samples):10.4g} {max(f.samples):10.4g} {f.unit:>5} "
            f"{budget:>9}  {f.verdict()}"
        )
        print(line + (f"  {f.note}" if f.note else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="fewer repeats and seeds (a rough picture in seconds)"
    )
    parser.add_argument("--json", metavar="FILE", help="also save the results as JSON")
    parser.add_argument(
        "--only",
        choices=["startup", "generation", "grading", "export"],
        action="append",
        help="run only these groups",
    )
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else 7
    groups = args.only or ["startup", "generation", "grading", "export"]
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory() as tmp:
        home, work = Path(tmp) / "home", Path(tmp) / "work"
        home.mkdir()
        work.mkdir()
        steps: dict[str, Callable[[], list[Figure]]] = {
            "startup": lambda: startup_figures(repeats, home),
            "generation": lambda: generation_figures(args.quick),
            "grading": lambda: grading_figures(args.quick),
            "export": lambda: export_figures(repeats, home, work),
        }
        for group in groups:
            try:
                figures.extend(steps[group]())
            except (subprocess.CalledProcessError, RuntimeError, ImportError) as exc:
                detail = (
                    exc.stderr.strip().splitlines()[-1]
                    if isinstance(exc, subprocess.CalledProcessError) and exc.stderr
                    else str(exc)
                )
                figures.append(Figure(f"{group}: could not be measured", "", note=detail[:120]))
    info = machine()
    print_table(figures, info)
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {"machine": info, "figures": [asdict(f) | {"median": f.median} for f in figures]}, indent=2
            ),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
