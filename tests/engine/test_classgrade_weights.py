"""`quiz grade` scores a part by its weight: marks.csv, the total, `out_of` and the summary say so."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from typer.testing import CliRunner

from attnquiz.engine.answers.kinds import PartsAnswer
from attnquiz.engine.bank.loader import load_bank_text
from attnquiz.engine.plan.class_plan import student_seed
from attnquiz.main import app

runner = CliRunner()
SEED = 5

BANK = r"""
bank: weighted
title: "A part that weighs two"
items:
  - id: score-then-weight
    kind: formula
    source: "Day 13 §3, two-token problem"
    topic: scaled-dot-product
    params:
      s: {range: [2, 5]}
      e2: {choice: [1, 1.5, 2]}
    prompt: "A query and key 1 have $q \\cdot k_1 = {{s}}$ with $d_k = 4$; key 2's scaled score is ${{e2}}$."
    parts:
      - name: scaled
        prompt: "Compute the scaled score of key 1."
        answer: {value: "s / sqrt(4)"}
        tolerance: {decimals: 2}
        solution: ["${{s}} / 2 = {{scaled}}$."]
      - prompt: "The softmax weight of key 1, using your (a)."
        answer: {value: "exp(scaled) / (exp(scaled) + exp(e2))"}
        tolerance: {decimals: 2}
        weight: 2
        solution: ["$\\exp({{scaled}}) / (\\exp({{scaled}}) + \\exp({{e2}}))$."]
  - id: plain
    kind: formula
    source: "Key results"
    topic: scaled-dot-product
    params:
      d: {choice: [4, 16, 64]}
    prompt: "What is $\\sqrt{d_k}$ for $d_k = {{d}}$?"
    answer: {value: "sqrt(d)"}
    tolerance: {decimals: 2}
    solution: ["$\\sqrt{ {{d}} }$."]
"""


def _bank(tmp_path: Path) -> Path:
    path = tmp_path / "weighted.yaml"
    path.write_text(BANK, encoding="utf-8")
    return path


def _answers(tmp_path: Path, bank: Path) -> Path:
    answers = tmp_path / "answers.csv"
    made = runner.invoke(
        app,
        [
            "grade",
            str(bank),
            "--template",
            "--all",
            "--students",
            "2",
            "--seed",
            str(SEED),
            "-o",
            str(answers),
        ],
    )
    assert made.exit_code == 0, made.output
    rows = list(csv.reader(io.StringIO(answers.read_text(encoding="utf-8"))))
    header = rows[0]
    loaded = load_bank_text(BANK, "weighted.yaml")
    for student, row in enumerate(rows[1:], start=1):
        seed = student_seed(SEED, student)
        chain = loaded.get("score-then-weight").question(seed).answer
        assert isinstance(chain, PartsAnswer)
        keys = {"a": chain.parts[0].answer.format(), "b": chain.parts[1].answer.format()}
        if student == 2:
            keys["b"] = "0.01"  # wrong: loses the two marks of (b)
        for index, column in enumerate(header):
            if column.endswith("score-then-weight"):
                row[index] = keys[column.split(" ")[0][-1]]
            elif column == "plain":
                row[index] = loaded.get("plain").question(seed).answer.format()
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    answers.write_text(buffer.getvalue(), encoding="utf-8")
    return answers


def test_a_part_s_weight_changes_the_marks_the_total_and_out_of(tmp_path: Path) -> None:
    bank = _bank(tmp_path)
    answers = _answers(tmp_path, bank)
    marks = tmp_path / "marks.csv"
    result = runner.invoke(
        app, ["grade", str(bank), str(answers), "--seed", str(SEED), "-o", str(marks)], env={"COLUMNS": "160"}
    )
    assert result.exit_code == 0, result.output
    written = list(csv.DictReader(io.StringIO(marks.read_text(encoding="utf-8"))))
    columns = [c for c in written[0] if c.endswith("score-then-weight")]
    assert [[r[c] for c in columns] for r in written] == [["1", "2"], ["1", "0"]]
    assert [r["total"] for r in written] == ["4", "2"], written
    assert [r["out_of"] for r in written] == ["4", "4"]
    said = " ".join(result.stdout.split())
    assert "mean 3.00 / 4" in said
    assert (
        f"A question counts 1 mark and a part its weight: {columns[1]} counts 2, the other parts 1 each."
        in said
    )
    data = json.loads(
        runner.invoke(app, ["grade", str(bank), str(answers), "--seed", str(SEED), "--json"]).stdout
    )
    assert data["summary"]["out_of"] == 4
    weighted = next(i for i in data["summary"]["items"] if i["item"] == columns[1])
    assert (weighted["worth"], weighted["mean"]) == (2, 1.0)
    cell = data["rows"][0]["cells"][1]
    assert (cell["score"], cell["marks"], cell["worth"]) == (1.0, 2.0, 2)
    assert data["rows"][0]["total"] == 4


def test_without_weights_every_part_counts_one_and_the_summary_says_so(tmp_path: Path) -> None:
    bank = _bank(tmp_path)
    bank.write_text(BANK.replace("        weight: 2\n", ""), encoding="utf-8")
    answers = _answers(tmp_path, bank)
    result = runner.invoke(
        app, ["grade", str(bank), str(answers), "--seed", str(SEED)], env={"COLUMNS": "160"}
    )
    assert result.exit_code == 0, result.output
    said = " ".join(result.stdout.split())
    assert "mean 2.50 / 3" in said
    assert "Each part of a question in parts counts 1 mark, as a question does." in said
