"""How long a student waits inside ``quiz run``: from pressing Enter on an answer to the next question drawn.

``python -m bench.session_latency`` runs a week-1 session in a fresh process, with the history in
a temporary folder and the terminal output sent to a null console, and prints the median and the
worst latency per step against the 50 ms budget. The first answer is measured twice: cold (the
grader and FSRS are imported on the spot) and as `quiz run` has it, with them loaded in the
background while the first question is read. Not a test: nothing fails.
"""

from __future__ import annotations

import argparse
import io
import statistics
import subprocess
import sys
import tempfile
import time

BUDGET_MS = 50.0

_CHILD = """
import io, sys, time
from pathlib import Path
from rich.console import Console

from cli.session_view import SessionView
from engine import banks
from engine.session import Session, plan_practice
from engine.store import Store

home, count, warm = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "warm"
bank = banks.load("week1")
view = SessionView(Console(file=io.StringIO(), width=80), Console(file=io.StringIO(), width=80))
plan = plan_practice(bank, seed=2026, count=count)
store = Store.open(home / "history.sqlite3")
session = Session(plan, store=store)
view.header(plan, history=session.history)
first = session.show()
view.question(session, session.current, first)
if warm:
    # What `quiz run` does once the first question is on screen, while the student reads it.
    import threading
    from cli.session_loop import _load_grading
    threading.Thread(target=_load_grading).start()
    time.sleep(0.5)
for _ in range(count):
    slot = session.current
    question = session.question(slot)
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


def main(argv: list[str] | None = None) -> int:
    """Run the measurement and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=30, help="questions in the measured session")
    args = parser.parse_args(argv)
    runs = {}
    for mode in ("cold", "warm"):
        with tempfile.TemporaryDirectory() as home:
            out = subprocess.run(
                [sys.executable, "-c", _CHILD, home, str(args.count), mode],
                capture_output=True,
                text=True,
                check=True,
                timeout=600,
            ).stdout
        runs[mode] = [float(line) for line in io.StringIO(out) if line.strip()]
    samples = runs["warm"]
    rows = [
        ("first answer, grader not yet imported", runs["cold"][:1]),
        ("first answer, grader loaded while reading", samples[:1]),
        ("later answers → next question", samples[1:]),
    ]
    print(f"{'step':48} {'median ms':>10} {'worst ms':>10}  budget")
    for name, values in rows:
        median, worst = statistics.median(values), max(values)
        verdict = "ok" if worst <= BUDGET_MS else "MISSED"
        print(f"{name:48} {median:10.1f} {worst:10.1f}  <{BUDGET_MS:.0f} {verdict}")
    print(f"({len(samples)} answers, graded, stored with their review and the next question drawn)")
    return 0


if __name__ == "__main__":
    started = time.perf_counter()
    status = main()
    print(f"took {time.perf_counter() - started:.1f} s", file=sys.stderr)
    sys.exit(status)
