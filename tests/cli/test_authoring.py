"""`quiz new`, `quiz check` and `quiz list` with no bank, driven as an instructor drives them."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from attnquiz.main import app

runner = CliRunner()

FAILING = """\
bank: shaky
title: Shaky
items:
  - id: heads
    kind: formula
    source: s
    topic: t
    params:
      d: {choice: [256, 512]}
      h: {choice: [1, 2, 4, 8, 16, 32]}
    prompt: "$W^O$ for $d = {{d}}$ and $h = {{h}}$?"
    answer: {kind: integer, value: "d^2"}
    mistakes:
      - {tag: heads-full-width, value: "h*d^2", feedback: "Each head is {{d/h}} wide."}
    solution: ["${{d}}^2$"]
"""


def test_new_writes_a_commented_starter_bank_that_passes_check(tmp_path: Path) -> None:
    path = tmp_path / "My Bank.yaml"
    result = runner.invoke(app, ["new", str(path)])
    assert result.exit_code == 0, result.output
    assert "quiz check" in result.output
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# yaml-language-server: $schema=quiz.schema.json\n")
    assert "quiz schema > quiz.schema.json" in text
    assert "bank: my-bank\n" in text
    assert text.count("\n  - id: ") == 3
    for kind in ("kind: formula", "generator: additive_score", "generator: statements"):
        assert kind in text
    checked = runner.invoke(app, ["check", str(path), "--variants", "20"])
    assert checked.exit_code == 0, checked.output
    assert "All 3 items passed." in checked.output


def test_new_refuses_to_overwrite_unless_forced(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("keep me", encoding="utf-8")
    result = runner.invoke(app, ["new", str(path)])
    assert result.exit_code == 1
    assert "already exists; use --force to overwrite it" in result.output
    assert path.read_text(encoding="utf-8") == "keep me"
    forced = runner.invoke(app, ["new", str(path), "--force"])
    assert forced.exit_code == 0, forced.output
    assert path.read_text(encoding="utf-8").startswith("# yaml-language-server")


def test_new_wants_a_yaml_file_name(tmp_path: Path) -> None:
    result = runner.invoke(app, ["new", str(tmp_path / "bank.txt")])
    assert result.exit_code == 2
    assert ".yaml or .yml" in result.output


def test_check_prints_a_table_and_exits_0_on_a_sound_bank() -> None:
    result = runner.invoke(app, ["check", "week1", "--variants", "2"], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    assert "additive-score" in result.output
    assert re.search(r"All \d+ items passed\.", result.output)


def test_check_json_is_the_report_and_exit_1_names_the_seed_that_fails(tmp_path: Path) -> None:
    path = tmp_path / "shaky.yaml"
    path.write_text(FAILING, encoding="utf-8")
    result = runner.invoke(app, ["check", str(path), "--variants", "50", "--json"])
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert report["ok"] is False
    [item] = report["items"]
    [failure] = item["failures"]
    assert failure["check"] == "mistake"
    seed = failure["seed"]
    assert f"h=1, seed={seed})" in failure["message"]
    table = runner.invoke(app, ["check", str(path), "--variants", "50"], env={"COLUMNS": "200"})
    assert table.exit_code == 1
    assert f"reproduce: quiz show {path} heads --seed {seed} --solution" in table.output
    assert "1 of 1 item failed." in table.output


def test_check_reports_every_load_error_with_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(FAILING.replace('"d^2"', '"dd^2"').replace("h*d^2", "h*d^"), encoding="utf-8")
    result = runner.invoke(app, ["check", str(path)])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    # Each error line as the loader writes it, then the source line and a caret under the problem.
    assert lines[0].endswith(
        "broken.yaml:12: items[0].answer.value: unknown name `dd` (did you mean `d`?); "
        "the parameters are: d, h"
    )
    assert lines[1:3] == [
        ' 12 |     answer: {kind: integer, value: "dd^2"}',
        "    |                             ^^^^^",
    ]
    assert "broken.yaml:14: items[0].mistakes[0].value: the expression ends too early" in lines[3]
    assert lines[4].startswith(" 14 |       - {tag: heads-full-width, value:")
    assert lines[6].endswith("2 errors, nothing was run.")
    as_json = json.loads(runner.invoke(app, ["check", str(path), "--json"]).output)
    assert [e["line"] for e in as_json["errors"]] == [12, 14]
    assert as_json["errors"][0]["excerpt"] == lines[1:3]


def test_list_with_no_bank_lists_every_bank_with_its_item_count(tmp_path: Path) -> None:
    (tmp_path / "extra.yaml").write_text(FAILING.replace("shaky", "extra"), encoding="utf-8")
    (tmp_path / "broken.yaml").write_text("bank: broken\ntitle: B\nitems: []\n", encoding="utf-8")
    result = runner.invoke(app, ["list", "--json"], env={"QUIZ_PATH": str(tmp_path)})
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.output)}
    assert rows["week1"]["items"] == 88  # 70 one-answer items (7 formulas), 9 in parts, 9 concept questions
    assert rows["week1"]["origin"] == "built-in"
    assert rows["week2"]["items"] >= 30
    assert rows["extra"] == {
        "name": "extra",
        "origin": "QUIZ_PATH",
        "path": str(tmp_path / "extra.yaml"),
        "title": "Shaky",
        "items": 1,
        "error": None,
    }
    assert rows["broken"]["items"] is None
    assert "quiz check" in rows["broken"]["error"]
    table = runner.invoke(app, ["list"], env={"QUIZ_PATH": str(tmp_path), "COLUMNS": "120"})
    assert table.exit_code == 0, table.output
    assert "week1" in table.output
    assert "extra" in table.output


def test_help_lists_the_authoring_commands() -> None:
    result = runner.invoke(app, ["--help"])
    assert "check" in result.output
    assert "new" in result.output
    assert "Example: quiz check" in runner.invoke(app, ["check", "--help"]).output
