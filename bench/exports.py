"""How long exports take: worksheets and keys as PDF, and Moodle XML (``python -m bench.exports``).

Each figure is measured in a fresh process (so caches start cold, as for a user), a few times;
the table shows the median wall time, the median CPU time (wall time on a shared machine also
counts other people's work) and the budget from issue 5. Not a test: nothing fails.

Budgets: 30 students' worksheets and key as PDF in under 1 s, 300 in under 5 s; Moodle XML with
30 variants of every week-1 item in under 1 s. R/exams takes about 18 s for ``exams2pdf`` of 30
variants of two exercises and 4.7 s for ``exams2moodle`` of the same, so the PDF rows are given
for sheets of 2 questions (the comparison), of 6, and of the whole bank.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from dataclasses import dataclass

_CHILD = """
import json, os, sys, tempfile, time
from pathlib import Path
fmt, students, count = sys.argv[1], int(sys.argv[2]), sys.argv[3]
from engine import banks
bank = banks.load("week1")
from engine.export.files import write
from engine.export.worksheet import plan_class
t0, c0 = time.perf_counter(), os.times()
plan = plan_class(bank, students=students, master_seed=2026, count=None if count == "all" else int(count))
with tempfile.TemporaryDirectory() as folder:
    out = Path(folder) / ("sheets" if fmt == "pdf" else "week1.xml")
    write(plan, fmt, out)
c1 = os.times()
print(json.dumps({"wall": time.perf_counter() - t0, "cpu": c1.user + c1.system - c0.user - c0.system,
                  "items": len(plan.items)}))
"""


@dataclass
class Case:
    """One row of the table: what is exported, for how many, and its budget in seconds."""

    label: str
    fmt: str
    students: int
    count: str
    budget: float | None


CASES = [
    Case("PDF sheets + key, 30 students × 2 questions", "pdf", 30, "2", 1.0),
    Case("PDF sheets + key, 30 students × 6 questions", "pdf", 30, "6", 1.0),
    Case("PDF sheets + key, 30 students × whole bank", "pdf", 30, "all", None),
    Case("PDF sheets + key, 300 students × 2 questions", "pdf", 300, "2", 5.0),
    Case("PDF sheets + key, 300 students × 6 questions", "pdf", 300, "6", 5.0),
    Case("Moodle XML, 30 variants × whole bank", "moodle", 30, "all", 1.0),
]


def measure(case: Case, repeats: int) -> dict[str, float]:
    """Median wall and CPU seconds of the export (bank loading excluded) over ``repeats`` fresh runs."""
    walls: list[float] = []
    cpus: list[float] = []
    items = 0.0
    for _ in range(repeats):
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, case.fmt, str(case.students), case.count],
            capture_output=True,
            text=True,
            check=True,
            timeout=600,
        )
        figures = json.loads(done.stdout)
        walls.append(figures["wall"])
        cpus.append(figures["cpu"])
        items = figures["items"]
    return {"wall": statistics.median(walls), "cpu": statistics.median(cpus), "items": items}


def main(argv: list[str] | None = None) -> int:
    """Run every case and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="fresh runs per case (default 3)")
    parser.add_argument("--quick", action="store_true", help="one run per case, 30-student cases only")
    args = parser.parse_args(argv)
    cases = [c for c in CASES if c.students <= 30] if args.quick else CASES
    repeats = 1 if args.quick else args.repeats
    print(f"{'export':<48} {'items':>5} {'wall s':>7} {'cpu s':>7} {'budget':>7}  verdict")
    for case in cases:
        result = measure(case, repeats)
        budget = f"{case.budget:.1f}" if case.budget is not None else "-"
        verdict = ""
        if case.budget is not None:
            verdict = (
                "ok"
                if result["wall"] <= case.budget
                else "MISSED (cpu ok)"
                if result["cpu"] <= case.budget
                else "MISSED"
            )
        print(
            f"{case.label:<48} {int(result['items']):>5} {result['wall']:>7.2f} {result['cpu']:>7.2f} "
            f"{budget:>7}  {verdict}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
