"""`quiz scan`'s speed and memory: ``python -m bench.scan [--students N] [--jobs J]``.

Exports N students' answer sheets (week 1, one question of each topic), renders every page at 200
dpi as a scanner would return it (PNG, filled with each student's right answers), and times `quiz
scan` over them as a whole process: pages (sheets) per second, and the peak resident memory of
the largest process (the main one or a worker). Measured, never asserted.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=None)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.engine import scan_pens as pens
    from tests.engine.scan_class import Sheets

    quiz = [sys.executable, "-m", "attnquiz"]
    with tempfile.TemporaryDirectory(prefix="quiz-bench-scan-") as root:
        work = Path(root)
        subprocess.run(
            [
                *quiz,
                "export",
                "week1",
                "--students",
                str(args.students),
                "--seed",
                "5",
                "--answer-sheet",
                "--key",
                "none",
                "-o",
                "out",
            ],
            cwd=work,
            check=True,
            capture_output=True,
        )
        sheets = Sheets.load(work / "out")
        rng = np.random.default_rng(0)
        marks: dict[int, dict[str, str]] = {}
        for ids in (i for key in sheets.layout["key"].values() for i in key.values()):
            for bubble in ids:
                marks.setdefault(sheets.bubbles[bubble]["page"], {})[bubble] = "full"
        scans = work / "scans"
        scans.mkdir()
        for page in range(1, len(sheets.layout["pages"]) + 1):
            image = sheets.fill(page, marks.get(page, {}), 200, rng, pens.PEN)
            (scans / f"{page:05d}.png").write_bytes(
                pens.scan(image, pens.Scanner(200, angle=1.0, noise=3), rng)
            )
            if page % 50 == 0:
                sheets.printed.clear()  # the rendered pages of a thousand students do not fit in memory
        pages = len(sheets.layout["pages"])
        del sheets
        files = sorted(str(p) for p in scans.glob("*.png"))
        jobs = [] if args.jobs is None else ["-j", str(args.jobs)]
        # Timed and measured in a process of its own: the export and the rendering above are not counted.
        watcher = (
            "import resource, subprocess, sys, time; t = time.perf_counter(); "
            "subprocess.run(sys.argv[1:], capture_output=True, check=False); "
            "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
        )
        command = [*quiz, "scan", *files, "--sheets", "out/answer-sheets.json", "-o", "a.csv", *jobs]
        done = subprocess.run(
            [sys.executable, "-c", watcher, *command], cwd=work, capture_output=True, text=True, check=True
        )
        seconds_text, peak_kb = done.stdout.split()
        seconds, peak = float(seconds_text), int(peak_kb) / 1024
        review = json.loads((work / "a.review.json").read_text())
        print(f"quiz scan: {args.students} students, {pages} pages, {len(review['items'])} to review")
        print(f"  {seconds:.1f} s, {pages / seconds:.2f} pages per second")
        print(f"  peak memory of the largest process: {peak:.0f} MB")


if __name__ == "__main__":
    main()
