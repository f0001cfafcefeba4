"""`quiz grade` of a large class, graded by worker processes, as an instructor runs it: the marks are
those of one process, and Ctrl-C stops it at once with no worker, marks file or traceback left."""

from __future__ import annotations

import csv
import io
import sys
import time
from pathlib import Path

import pexpect
import pytest

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.plan.class_plan import plan_class
from attnquiz.engine.plan.columns import template_csv
from tests.cli.test_run_pty import finish, spawn
from tests.engine.test_parallel import children

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux")


def _class(path: Path, students: int) -> Path:
    """A class on every week-1 item with "1" in every answer cell (each variant is built to grade it)."""
    plan = plan_class(banks.load("week1"), students=students, master_seed=2026)
    rows = list(csv.reader(io.StringIO(template_csv(plan))))
    for row in rows[1:]:
        for index, heading in enumerate(rows[0]):
            if index >= 3 and not heading.endswith(" mark"):
                row[index] = "1"
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    return path


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_ctrl_c_stops_a_class_graded_by_workers_and_leaves_nothing(tmp_path: Path) -> None:
    answers = _class(tmp_path / "answers.csv", 600)  # seconds of work: never done before the Ctrl-C
    marks = tmp_path / "marks.csv"
    child = spawn(tmp_path, "grade", "week1", str(answers), "--seed", "2026", "-o", str(marks), "--jobs", "2")
    workers: list[int] = []
    deadline = time.monotonic() + 120
    while len(workers) < 2 and time.monotonic() < deadline:  # the workers start once the rows are read
        workers = children(child.pid)
        time.sleep(0.05)
    assert len(workers) == 2, "no workers were started"
    child.sendintr()
    output = finish(child)
    assert child.exitstatus == 130
    assert "Traceback" not in output, output
    assert not marks.exists()
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in workers if _alive(pid)]


def test_a_class_graded_by_workers_has_the_marks_of_one_process(tmp_path: Path) -> None:
    answers = _class(tmp_path / "answers.csv", 60)
    written = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"marks{jobs}.csv"
        child = spawn(tmp_path, "grade", "week1", str(answers), "--seed", "2026", "-o", str(out), "-j", jobs)
        child.expect(pexpect.EOF, timeout=300)
        child.close()
        assert child.exitstatus == 0
        written[jobs] = out.read_bytes()
    assert written["1"] == written["2"]
    assert written["1"].count(b"\n") == 61
