"""`quiz export` and `quiz grade` outputs as a user meets them: bad -o paths, hostile names, the command
printed after an export working as printed."""

from __future__ import annotations

import csv
import io
import shlex
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attnquiz.engine.answers.kinds import ExplainAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.plan.class_plan import plan_class
from attnquiz.main import app

runner = CliRunner()


def _template(tmp_path: Path, students: int = 2) -> tuple[Path, list[str]]:
    item = banks.load("week1").items[0].id
    path = tmp_path / "answers.csv"
    made = runner.invoke(app, ["grade", "week1", "--template", "--students", str(students), "--seed", "3",
                               "--items", item, "-o", str(path)])  # fmt: skip
    assert made.exit_code == 0, made.output
    return path, [item]


@pytest.mark.parametrize("name", ["[/]", "[link=x]y[/link]", "[bold]", "[/red]"])
def test_rich_markup_in_a_name_is_shown_as_text(tmp_path: Path, name: str) -> None:
    path, _ = _template(tmp_path)
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    rows[1][1] = name
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(rows)
    result = runner.invoke(app, ["grade", "week1", str(path), "--seed", "3", "--students", "2"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    assert name in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["export", "week1", "-f", "moodle", "-n", "1", "--seed", "1", "-o", "/dev/full"],
         "cannot write /dev/full: No space left on device"),
        (["export", "week1", "-f", "moodle", "-n", "1", "--seed", "1", "-o", "{tmp}/file/x.xml"],
         "file is a file, not a folder"),
        (["export", "week1", "-f", "md", "-n", "1", "--seed", "1", "-o", "{tmp}/file/sheets"],
         "file is a file, not a folder"),
        (["grade", "week1", "--template", "--students", "2", "--seed", "1", "-o", "{tmp}"], "is a folder"),
        (["grade", "week1", "--template", "--students", "2", "--seed", "1", "-o", "/dev/full"],
         "cannot write /dev/full"),
        (["grade", "week1", "--template", "--students", "2", "--seed", "1", "-o", "{tmp}/file/a.csv"],
         "file is a file, not a folder"),
    ],
)  # fmt: skip
def test_bad_output_paths_give_one_clear_line(tmp_path: Path, args: list[str], message: str) -> None:
    if "/dev/full" in args and not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    (tmp_path / "file").write_text("not a folder", encoding="utf-8")
    result = runner.invoke(app, [a.replace("{tmp}", str(tmp_path)) for a in args])
    assert result.exit_code == 1, result.output
    assert not isinstance(result.exception, OSError)
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("quiz: "), result.stderr
    assert message in lines[-1], result.stderr
    assert "Traceback" not in result.output


def test_marks_into_a_folder_that_does_not_exist_yet_are_written(tmp_path: Path) -> None:
    path, _ = _template(tmp_path)
    marks = tmp_path / "missing" / "dir" / "marks.csv"
    result = runner.invoke(
        app, ["grade", "week1", str(path), "--seed", "3", "--students", "2", "-o", str(marks)]
    )
    assert result.exit_code == 0, result.output
    assert marks.read_text(encoding="utf-8").startswith("line,student,name,code,")


def test_the_grade_command_printed_after_an_export_works_as_printed(tmp_path: Path) -> None:
    """A bank exported by its path is graded by the same path (there is no bank named `week3`)."""
    bank_file = tmp_path / "week3.yaml"
    shutil.copyfile(banks.find("week1").path, bank_file)
    exported = runner.invoke(app, ["export", str(bank_file), "-f", "json", "-n", "1", "--students", "2",
                                   "--seed", "5", "-o", str(tmp_path / "w.json")])  # fmt: skip
    assert exported.exit_code == 0, exported.output
    printed = next(line for line in exported.stdout.splitlines() if "grade with" in line)
    command = shlex.split(printed.split("`")[1])
    assert command[:3] == ["quiz", "grade", str(bank_file)]
    assert command[command.index("--students") + 1] == "2"
    plan = plan_class(banks.load(str(bank_file)), students=2, master_seed=5, count=1)
    item = plan.items[0]
    answers = tmp_path / "answers.csv"
    # Every answer right; a concept question (never scored by its text) gets every mark by hand.
    marked = [
        len(a.points) if isinstance(a := s.questions[0].answer, ExplainAnswer) else None for s in plan.sheets
    ]
    mark_column = f",{item} mark" if marked[0] is not None else ""
    answers.write_text(
        f"student,{item}{mark_column}\n"
        + "".join(
            f'{s.student},"{s.questions[0].answer.format()}"' + (f",{m}" if m is not None else "") + "\n"
            for s, m in zip(plan.sheets, marked, strict=True)
        ),
        encoding="utf-8",
    )
    graded = runner.invoke(app, [*command[1:3], str(answers), *command[4:]])
    assert graded.exit_code == 0, graded.output
    assert "2 students graded, mean 1.00 / 1" in graded.stdout
