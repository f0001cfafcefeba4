"""What `quiz export` says after an LMS export: no `quiz grade` command (the LMS marks its attempts,
and no row of an answers file belongs to a variant there), and a way to rebuild a question that works."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attnquiz.main import app

runner = CliRunner()


@pytest.mark.parametrize(
    ("fmt", "lms_name", "suffix"), [("moodle", "Moodle", "xml"), ("qti", "Canvas", "zip")]
)
def test_an_lms_export_does_not_tell_to_grade_with_quiz_grade(
    tmp_path: Path, fmt: str, lms_name: str, suffix: str
) -> None:
    out = tmp_path / f"week1.{suffix}"
    result = runner.invoke(
        app,
        ["export", "week1", "--variants", "5", "--seed", "2026", "-f", fmt, "--items", "block-params-formula",
         "-o", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "quiz grade" not in result.stdout
    assert "--students" not in result.stdout
    line = next(line for line in result.stdout.splitlines() if line.startswith("Master seed 2026"))
    assert f"{lms_name} gives each student one variant of each item at random" in line
    shown = shlex.split(line.split("`")[1])
    assert shown[:3] == ["quiz", "show", "week1"]


def test_the_show_command_an_export_prints_rebuilds_a_question_of_the_file(tmp_path: Path) -> None:
    out = tmp_path / "week1.xml"
    exported = runner.invoke(
        app,
        ["export", "week1", "--variants", "2", "--seed", "7", "-f", "moodle", "--items", "additive-score",
         "-o", str(out)],
    )  # fmt: skip
    assert exported.exit_code == 0, exported.output
    name = re.search(r"<name><text>additive-score (\S+) \(seed (\d+)\)</text></name>", out.read_text())
    assert name is not None
    shown = runner.invoke(app, ["show", "week1", "additive-score", "--seed", name.group(2), "--solution"])
    assert shown.exit_code == 0, shown.output
    assert name.group(1) in shown.stdout
