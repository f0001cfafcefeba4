"""`quiz scan`'s speed and memory: ``python -m bench.scan [--students N] [--jobs J] [--nops N]``.

Exports N students' answer sheets (week 1, one question of each topic), renders every page at 200
dpi as a scanner would return it (PNG, filled with each student's right answers), and times `quiz
scan` over them as a whole process: pages (sheets) per second, and the peak resident memory of
the largest process (the main one or a worker). Measured, never asserted.

``--nops N`` measures instead, on this machine and at the same resolution (``--dpi``, 300 as the
R/exams sample scans), R/exams' ``nops_scan`` against `quiz scan`, per sheet: N nops sheets made
by ``exams2nops`` from `bench/nops/softmax.Rmd`, rasterised with pdftoppm and scanned blank, timed
as one ``Rscript`` process tree (``cores`` = every CPU); and `quiz scan` over N of its own sheets
(filled) at the same dpi, one process tree with every CPU. "not measured" when R/exams (or the
LaTeX that exams2nops needs, or pdftoppm) is absent. The load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--nops", type=int, default=0, help="compare with R/exams' nops_scan on N sheets")
    parser.add_argument("--dpi", type=int, default=200)
    args = parser.parse_args()
    if args.nops:
        compare(args.nops, args.dpi if args.dpi != 200 else 300)
        return
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


WATCHER = (
    "import resource, subprocess, sys, time; t = time.perf_counter(); "
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True, check=False); "
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss; "
    "print(time.perf_counter() - t, peak, done.returncode); "
    "sys.stderr.write(done.stdout[-2000:] + done.stderr[-2000:])"
)
"""Times a command as a whole process tree (its children waited for), with its peak memory."""


def timed(command: list[str], cwd: Path) -> tuple[float, float, int, str]:
    done = subprocess.run(
        [sys.executable, "-c", WATCHER, *command], cwd=cwd, capture_output=True, text=True, check=True
    )
    seconds, peak_kb, code = done.stdout.split()
    return float(seconds), int(peak_kb) / 1024, int(code), done.stderr


def nops_sheets(n: int, dpi: int, work: Path) -> list[Path] | str:
    """N blank nops sheets scanned at ``dpi``, or why they cannot be made here."""
    if shutil.which("Rscript") is None or shutil.which("pdftoppm") is None:
        return "Rscript or pdftoppm is not installed"
    exercise = Path(__file__).resolve().parent / "nops" / "softmax.Rmd"
    make = (
        "suppressMessages(library(exams)); set.seed(1); "
        f'invisible(exams2nops(rep("{exercise}", 3), n = {n}, dir = "nops-pdf", name = "nops", '
        'encoding = "UTF-8", blank = 0, reglength = 7, duplex = FALSE))'
    )
    done = subprocess.run(["Rscript", "-e", make], cwd=work, capture_output=True, text=True, check=False)
    pdfs = sorted((work / "nops-pdf").glob("nops*.pdf"))
    if done.returncode != 0 or len(pdfs) != n:
        return "exams2nops failed: " + (done.stderr.strip().splitlines() or ["?"])[-1]
    scans = work / "nops-scans"
    scans.mkdir()
    for k, pdf in enumerate(pdfs):  # the first page of each exam is its answer sheet
        subprocess.run(
            ["pdftoppm", "-r", str(dpi), "-gray", "-png", "-f", "1", "-l", "1", "-singlefile", str(pdf),
             str(scans / f"sheet-{k:04d}")],
            check=True,
        )  # fmt: skip
    return sorted(scans.glob("*.png"))


def compare(n: int, dpi: int) -> None:
    """R/exams' nops_scan against quiz scan, seconds per sheet on this machine (see the module)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.engine import scan_pens as pens
    from tests.engine.scan_class import Sheets

    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="quiz-bench-nops-") as root:
        work = Path(root)
        made = nops_sheets(n, dpi, work)
        nops: tuple[float, float, int, str] | None = None
        if isinstance(made, str):
            why = made
        else:
            scan = "suppressMessages(library(exams)); "
            scan += f'nops_scan(dir = "nops-scans", file = "scan.zip", cores = {cores})'
            nops = timed(["Rscript", "-e", scan], work)
            why = "" if nops[2] == 0 else "nops_scan failed: " + nops[3].strip()[-300:]
            if not why:
                import zipfile

                with zipfile.ZipFile(work / "scan.zip") as archive:
                    lines = archive.read("Daten.txt").decode("utf-8", "replace").splitlines()
                read = sum(1 for line in lines if line.strip() and "ERROR" not in line)
                print(f"nops_scan read {read} of {n} sheets ({len(lines) - read} with an error)")
        quiz = [sys.executable, "-m", "attnquiz"]
        # quiz's own sheets: N pages (students with one page each are not guaranteed: take N pages).
        subprocess.run(
            [*quiz, "export", "week1", "--students", str(n), "--seed", "5", "--answer-sheet", "--key", "none",
             "-o", "out"],
            cwd=work, check=True, capture_output=True,
        )  # fmt: skip
        sheets = Sheets.load(work / "out")
        rng = np.random.default_rng(0)
        marks: dict[int, dict[str, str]] = {}
        for ids in (i for key in sheets.layout["key"].values() for i in key.values()):
            for bubble in ids:
                marks.setdefault(sheets.bubbles[bubble]["page"], {})[bubble] = "full"
        scans = work / "quiz-scans"
        scans.mkdir()
        for page in range(1, n + 1):
            image = sheets.fill(page, marks.get(page, {}), dpi, rng, pens.PEN)
            (scans / f"{page:05d}.png").write_bytes(
                pens.scan(image, pens.Scanner(dpi, angle=1.0, noise=3), rng)
            )
            sheets.printed.clear()
        files = sorted(str(p) for p in scans.glob("*.png"))
        seconds, peak, _, _ = timed(
            [*quiz, "scan", *files, "--sheets", "out/answer-sheets.json", "-o", "a.csv", "--dpi", str(dpi)],
            work,
        )
    load = os.getloadavg()
    print(f"{n} sheets at {dpi} dpi, {cores} CPUs, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print(f"  quiz scan:  {seconds:.1f} s, {seconds / n:.3f} s per sheet, peak {peak:.0f} MB")
    if nops is None or why:
        print(f"  nops_scan:  not measured ({why})")
        return
    print(f"  nops_scan:  {nops[0]:.1f} s, {nops[0] / n:.3f} s per sheet, peak {nops[1]:.0f} MB")
    print(f"  quiz scan is {nops[0] / seconds:.2f}x as fast per sheet")


if __name__ == "__main__":
    main()
