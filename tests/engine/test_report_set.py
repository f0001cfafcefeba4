"""`quiz grade --report` writes the marks and the report as one set: stopped at any step (an error,
Ctrl-C, or a kill nothing can catch), the folder and the marks are the old set or the new one, never
new marks beside the old report; what a kill leaves is finished by the next run."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from attnquiz.engine.classwork import report_set
from attnquiz.engine.classwork.report_set import MANIFEST, ReportSetError, recover, write_set

STEPS = [
    "stage-report",
    "stage-marks",
    "journal-write",
    "commit",
    "exchange",
    "remove-old",
    "marks",
    "journal",
]
BEFORE_COMMIT = {"stage-report", "stage-marks", "journal-write", "commit"}

OLD = {"index.html": b"old index", "students/1.html": b"old 1", "students/12.html": b"old 12"}
NEW = {"index.html": b"new index", "students/1.html": b"new 1", "students.csv": b"new csv"}


class Stop(Exception):
    """A failure injected at one step."""


def report_of(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != MANIFEST
    }


def setup(tmp_path: Path) -> tuple[Path, Path]:
    report, marks = tmp_path / "out" / "report", tmp_path / "out" / "marks.csv"
    write_set(report, OLD, (marks, b"old marks"))
    return report, marks


def state(report: Path, marks: Path) -> str:
    """ "old" or "new" when the pair is one set; anything else names the mix."""
    pair = (report_of(report) if report.is_dir() else None, marks.read_bytes() if marks.exists() else None)
    if pair == (OLD, b"old marks"):
        return "old"
    if pair == (NEW, b"new marks"):
        return "new"
    return f"mixed: {pair}"


def leftovers(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "out").iterdir() if p.name.startswith("."))


@pytest.mark.parametrize("at", STEPS)
@pytest.mark.parametrize("swap", ["exchange", "rename"])
def test_an_error_at_any_step_leaves_one_set(
    tmp_path: Path, at: str, swap: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if swap == "rename":  # a system without renameat2: the old folder renamed away, the new one in
        monkeypatch.setattr(report_set, "_renameat2", lambda: None)
    report, marks = setup(tmp_path)

    def stop(step: str) -> None:
        if step == at:
            raise Stop(step)

    with pytest.raises(Stop):
        write_set(report, NEW, (marks, b"new marks"), step=stop)
    assert state(report, marks) == ("old" if at in BEFORE_COMMIT else "new")
    assert leftovers(tmp_path) == []
    assert json.loads((report / MANIFEST).read_text())["marks"]["path"] == str(marks.resolve())


def test_a_new_report_replaces_the_old_one_whole(tmp_path: Path) -> None:
    report, marks = setup(tmp_path)
    write_set(report, NEW, (marks, b"new marks"))
    assert state(report, marks) == "new"
    assert not (report / "students" / "12.html").exists()  # a page of the old class is gone with it
    manifest = json.loads((report / MANIFEST).read_text())
    assert set(manifest["files"]) == set(NEW)
    assert leftovers(tmp_path) == []


KILLER = """
import os, signal, sys
from pathlib import Path
from attnquiz.engine.classwork import report_set
at = sys.argv[3]
if sys.argv[4] == "rename":
    report_set._renameat2 = lambda: None
def stop(step):
    if step == at:
        os.kill(os.getpid(), signal.SIGKILL)
new = {"index.html": b"new index", "students/1.html": b"new 1", "students.csv": b"new csv"}
report_set.write_set(Path(sys.argv[1]), new, (Path(sys.argv[2]), b"new marks"), step=stop)
"""


@pytest.mark.parametrize("at", STEPS)
@pytest.mark.parametrize("swap", ["exchange", "rename"])
def test_a_kill_at_any_step_never_leaves_new_marks_beside_the_old_report(
    tmp_path: Path, at: str, swap: str
) -> None:
    report, marks = setup(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", KILLER, str(report), str(marks), at, swap],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    after_kill = state(report, marks)
    # Right after the kill: before the commit point the old set; after it, the report is replaced
    # first, so the marks are never newer than the report beside them.
    assert after_kill in ("old", "new") or (marks.read_bytes() == b"old marks"), after_kill
    if at in BEFORE_COMMIT:
        assert after_kill == "old"
    # The next run (here, its first step) finishes the set, or clears what was staged.
    recover(report)
    assert state(report, marks) == ("old" if at in BEFORE_COMMIT else "new")
    assert leftovers(tmp_path) == []


def test_a_folder_that_is_not_a_report_is_never_replaced(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(ReportSetError, match="not a quiz report"):
        write_set(folder, NEW)
    assert (folder / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project"]


def test_the_working_folder_is_never_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ReportSetError, match="working folder"):
        write_set(Path(), NEW)
    with pytest.raises(ReportSetError, match="working folder"):
        write_set(Path(".."), NEW)


def test_a_report_from_before_manifests_is_replaced(tmp_path: Path) -> None:
    report = tmp_path / "out" / "report"
    (report / "students").mkdir(parents=True)
    for name, data in OLD.items():
        (report / name).write_bytes(data)
    write_set(report, NEW, (tmp_path / "out" / "marks.csv", b"new marks"))
    assert state(report, tmp_path / "out" / "marks.csv") == "new"


def test_marks_inside_the_report_or_a_file_for_a_folder_are_refused(tmp_path: Path) -> None:
    report = tmp_path / "report"
    with pytest.raises(ReportSetError, match="outside the report"):
        write_set(report, NEW, (report / "marks.csv", b"m"))
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(ReportSetError, match="is a file"):
        write_set(tmp_path / "file", NEW)
    assert not report.exists()


def test_a_stale_journal_of_another_folder_is_not_applied(tmp_path: Path) -> None:
    report, marks = setup(tmp_path)
    journal = report.parent / f".{report.name}.quiz-commit"
    journal.write_text(
        json.dumps({"report": "/somewhere/else", "staged": "/x", "token": "t"}), encoding="utf-8"
    )
    with pytest.raises(ReportSetError, match="not the record of the report"):
        write_set(report, NEW, (marks, b"new marks"))
    assert state(report, marks) == "old"
    journal.write_text("{ not json", encoding="utf-8")
    with pytest.raises(ReportSetError, match="cannot read"):
        recover(report)


def test_quiz_grade_writes_the_set_and_its_manifest(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from attnquiz.main import app

    answers = tmp_path / "answers.csv"
    runner = CliRunner()
    runner.invoke(app, ["grade", "week1", "--template", "--students", "2", "--seed", "3", "-o", str(answers)])
    marks, report = tmp_path / "marks.csv", tmp_path / "report"
    for _ in range(2):  # the second run replaces the first set
        result = runner.invoke(
            app, ["grade", "week1", str(answers), "--seed", "3", "-o", str(marks), "--report", str(report)]
        )
        assert result.exit_code == 0, result.output
    manifest = json.loads((report / MANIFEST).read_text())
    assert manifest["marks"]["sha256"] == hashlib.sha256(marks.read_bytes()).hexdigest()
    assert {"index.html", "students/1.html", "students/2.html"} <= set(manifest["files"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["answers.csv", "marks.csv", "report"]
