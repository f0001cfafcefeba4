"""A scanned class of two with something of every kind left for review, for the `quiz serve --scan` tests.

Made as an instructor makes it: `quiz export --answer-sheet`, the sheets filled from the layout file
(the right answer everywhere, except: student 1's choice question with a second option filled,
student 1's first number with a faint digit, and student 2's first page with its QR code covered),
then `quiz scan`. What the review must then hold is returned with it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tests.engine import scan_pens as pens
from tests.engine.scan_class import Sheets

SEED = 7
DPI = 200


@dataclass
class ScannedClass:
    folder: Path
    answers: Path
    review: Path
    layout: dict[str, Any]
    choice: tuple[int, str, str, str]  # student, column, right option, the other option filled
    faint: tuple[int, str]  # student, column of the faint digit
    covered_page: int  # the page (1-based, in the answer-sheet PDF) whose QR code is covered

    def items(self) -> list[dict[str, Any]]:
        return list(json.loads(self.review.read_text(encoding="utf-8"))["items"])


def quiz(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "attnquiz", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=stdin,
        timeout=600,
        check=False,
    )


def scanned_class(folder: Path) -> ScannedClass:
    done = quiz(
        "export", "week1", "--students", "2", "--seed", str(SEED), "--answer-sheet", "--key", "none",
        "-o", "out", cwd=folder,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    sheets = Sheets.load(folder / "out")
    layout = sheets.layout
    fields = {f["id"]: f for f in layout["fields"]}
    rng = np.random.default_rng(3)
    marks: dict[int, dict[str, str]] = {}

    def mark(ids: list[str], kind: str = "full") -> None:
        for bubble_id in ids:
            marks.setdefault(sheets.bubbles[bubble_id]["page"], {})[bubble_id] = kind

    choice_field = next(f for f in layout["fields"] if f["student"] == 1 and f["kind"] == "choice")
    right = layout["key"]["1"][choice_field["column"]]
    other = next(
        b["id"] for b in layout["bubbles"] if b["field"] == choice_field["id"] and b["id"] not in right
    )
    faint_column = next(
        column
        for column, ids in layout["key"]["1"].items()
        if fields[sheets.bubbles[ids[0]]["field"]]["kind"] == "number" and len(ids) > 1
    )
    for student in (1, 2):
        for column, ids in layout["key"][str(student)].items():
            if student == 1 and column == faint_column:
                mark(ids[:1], "faint")
                mark(ids[1:])
            else:
                mark(ids)
        for f in fields.values():
            if f["student"] == student and f["kind"] == "formula":
                mark([f"{f['id']}.mark.right"])
    mark([other])
    covered = next(p["page"] for p in layout["pages"] if p["student"] == 2 and p["sheet_page"] == 1)
    scans = folder / "scans"
    scans.mkdir()
    names = []
    for page in range(1, len(layout["pages"]) + 1):
        image = sheets.fill(page, marks.get(page, {}), DPI, rng, pens.PEN)
        if page == covered:
            qr = layout["pages"][page - 1]["qr"]
            s = DPI / 72
            top, left = int((qr["y"] - 3) * s), int((qr["x"] - 3) * s)
            image[top : top + int((qr["size"] + 6) * s), left : left + int((qr["size"] + 6) * s)] = 255
        data = pens.scan(image, pens.Scanner(DPI, angle=0.6, scale=1.0, blur=0.5, noise=2, jpeg=0), rng)
        name = f"scans/page-{page:02d}.png"
        (folder / name).write_bytes(data)
        names.append(name)
    done = quiz(
        "scan", *names, "--sheets", "out/answer-sheets.json", "-o", "answers.csv", "-j", "2", cwd=folder
    )
    assert done.returncode == 1, done.stdout + done.stderr
    return ScannedClass(
        folder,
        folder / "answers.csv",
        folder / "answers.review.json",
        layout,
        (1, choice_field["column"], sheets.bubbles[right[0]]["value"], sheets.bubbles[other]["value"]),
        (1, faint_column),
        covered,
    )
