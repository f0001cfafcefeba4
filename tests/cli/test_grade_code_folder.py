"""`quiz grade` of a folder of code submissions, as an instructor runs it: the marks name each student's
mistake, the class report says how many made it, and whatever in the folder is no submission is a line
on stderr (exit 1) while the rest of the class is graded."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

QUIZ = [sys.executable, "-c", "from attnquiz.main import main; main()"]
RIGHT = """import numpy as np


def attention(Q, K, V):
    s = Q @ K.T / np.sqrt(Q.shape[-1])
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    return w / w.sum(axis=-1, keepdims=True) @ V
"""
OVER_QUERIES = RIGHT.replace("axis=-1", "axis=0")


def _quiz(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUIZ_")}
    env.update(QUIZ_HOME=str(home), NO_COLOR="1", COLUMNS="200")
    return subprocess.run([*QUIZ, *args], capture_output=True, text=True, env=env, timeout=600, check=False)


def _notebook(source: str) -> str:
    cells: list[dict[str, object]] = [{"cell_type": "markdown", "metadata": {}, "source": "# Attention"}]
    cells.append({"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": 1})
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells})


def test_a_folder_is_graded_with_the_mistakes_named_and_reported(tmp_path: Path) -> None:
    folder = tmp_path / "submissions"
    folder.mkdir()
    (folder / "1.py").write_text(RIGHT)
    (folder / "student-2.py").write_text(OVER_QUERIES)
    (folder / "3.ipynb").write_text(_notebook(OVER_QUERIES))
    (folder / "4.ipynb").write_text(_notebook(RIGHT))
    (folder / "5.py").write_bytes(b"\xff\xfe")
    (folder / "readme.md").write_text("the class")
    marks, report = tmp_path / "marks.csv", tmp_path / "report"
    done = _quiz(
        tmp_path, "grade", "code", str(folder), "--items", "attention", "--seed", "2026",
        "--students", "6", "-o", str(marks), "--report", str(report),
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # some students could not be graded: said, and exit 1
    rows = list(csv.DictReader(io.StringIO(marks.read_text())))
    by_student = {row["student"]: row for row in rows}
    assert [row["student"] for row in rows] == ["1", "2", "3", "4", "5", "6"]
    assert by_student["1"]["attention"] == "1"
    assert by_student["4"]["attention"] == "1"
    assert by_student["2"]["mistakes"] == "attention: softmax-over-queries"
    assert by_student["3"]["mistakes"] == "attention: softmax-over-queries"
    assert by_student["2"]["name"] == "student-2.py"
    assert by_student["5"]["notes"] == "not graded: 5.py: not UTF-8 text (line 1): save it as UTF-8"
    assert by_student["6"]["notes"] == "not graded: handed nothing in (no file in the folder)"
    assert f"{folder}:student 5: 5.py: not UTF-8 text" in done.stderr
    assert "quiz: 2 students could not be graded" in done.stderr
    assert f"{folder}: readme.md: not a submission" in done.stderr
    assert "2 × attention: softmax-over-queries" in done.stdout
    index = re.sub(r"<[^>]+>", "", (report / "index.html").read_text())
    assert "50 % of the class (2 of 4): softmax-over-queries" in index
    assert "Softmax runs over the keys for each query" in index


def test_a_clean_folder_exits_0_and_json_has_every_row(tmp_path: Path) -> None:
    folder = tmp_path / "submissions"
    folder.mkdir()
    (folder / "1.py").write_text(RIGHT)
    (folder / "2.py").write_text(OVER_QUERIES)
    done = _quiz(
        tmp_path,
        "grade",
        "code",
        str(folder),
        "--items",
        "attention",
        "--seed",
        "3",
        "--students",
        "2",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [row["cells"][0]["status"] for row in data["rows"]] == ["correct", "wrong"]
    assert data["summary"]["mistakes"] == [{"item": "attention", "tag": "softmax-over-queries", "count": 1}]
    # A file that is no student's is listed in the JSON too, and the exit code says so.
    (folder / "notes.txt").write_text("todo")
    done = _quiz(
        tmp_path,
        "grade",
        "code",
        str(folder),
        "--items",
        "attention",
        "--seed",
        "3",
        "--students",
        "2",
        "--json",
    )
    assert done.returncode == 1
    assert json.loads(done.stdout)["other_files"] == [
        "notes.txt: not a submission (name it by the student number: 12.py or 12.ipynb)"
    ]


def test_a_folder_without_what_it_needs_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "submissions"
    folder.mkdir()
    cases = [
        (["--items", "attention", "--students", "3"], "needs --seed"),
        (["--items", "attention", "--seed", "3"], "needs --seed"),
        (["--seed", "3", "--students", "3"], "--items ITEM"),
        (["--items", "nope", "--seed", "3", "--students", "3"], "nope"),
        (["--items", "attention", "--seed", "3", "--students", "3", "--topic", "masking"], "--topic"),
    ]
    (folder / "1.py").write_text(RIGHT)
    cases.append((["--seed", "3", "--students", "3"], "is one student's code"))
    for extra, says in cases:
        target = folder / "1.py" if says == "is one student's code" else folder
        done = _quiz(tmp_path, "grade", "code", str(target), *extra)
        assert done.returncode in (1, 2), (extra, done.stderr)
        assert says in done.stderr, (extra, done.stderr)
        assert "Traceback" not in done.stderr
