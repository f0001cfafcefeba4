"""`quiz check` reports two mistakes with one value at the later mistake's line (issue 24): the
second can never be named, and it used to be dropped without a word."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from attnquiz.engine.check.checks import check_path
from attnquiz.main import app

BANK = r"""bank: dup
title: "Two mistakes with one value"
items:
  - id: scale
    kind: formula
    source: "Day 13"
    topic: scaled-dot-product
    params:
      s: {range: [2, 5]}
    prompt: "Scale ${{s}}$ by $\\sqrt{4}$."
    answer: {value: "s / 2"}
    tolerance: {decimals: 2}
    mistakes:
      - {tag: no-scaling, value: "s", feedback: "Divide by $\\sqrt{d_k}$."}
      - {tag: by-d, value: "s / 4", feedback: "Divide by the root of $d_k$."}
      - {tag: unscaled, value: "s * 1", feedback: "That is the raw score."}
    solution: ["${{s}} / 2$."]
  - id: chain
    kind: formula
    source: "Day 13"
    topic: scaled-dot-product
    params:
      s: {range: [2, 5]}
    prompt: "A score of ${{s}}$."
    parts:
      - name: half
        prompt: "Half of it."
        answer: {value: "s / 2"}
        tolerance: {decimals: 2}
        solution: ["${{s}} / 2$."]
      - prompt: "Twice your (a)."
        answer: {value: "2 * half"}
        tolerance: {decimals: 2}
        mistakes:
          - {tag: half-again, value: "half / 2", feedback: "Twice, not half."}
          - {tag: quarter, value: "s / 4", feedback: "That is a quarter of the score."}
        solution: ["$2 \\cdot {{half}}$."]
"""


def _bank(tmp_path: Path) -> Path:
    path = tmp_path / "dup.yaml"
    path.write_text(BANK, encoding="utf-8")
    return path


def test_a_mistake_with_an_earlier_one_s_value_is_reported_at_its_line(tmp_path: Path) -> None:
    path = _bank(tmp_path)
    report = check_path(str(path), variants=20)
    by_item = {item.item: item for item in report.items}
    [scale] = by_item["scale"].failures
    assert scale.check == "mistake"
    assert scale.count == 20  # every variant
    assert scale.message.startswith(
        f"{path}:16: items[0].mistakes[2].value: mistake 'unscaled' has the value of "
    )
    assert "mistake 'no-scaling'" in scale.message
    [chain] = by_item["chain"].failures
    assert chain.message.startswith(f"{path}:36: items[1].parts[1].mistakes[1].value: mistake 'quarter'")
    assert "mistake 'half-again'" in chain.message


def test_quiz_check_prints_it_and_fails(tmp_path: Path) -> None:
    path = _bank(tmp_path)
    result = CliRunner().invoke(app, ["check", str(path), "--variants", "5"], env={"COLUMNS": "200"})
    assert result.exit_code == 1
    assert (
        f"{path}:16: items[0].mistakes[2].value: mistake 'unscaled' has the value of mistake" in result.output
    )


def test_mistakes_of_their_own_pass(tmp_path: Path) -> None:
    path = tmp_path / "fine.yaml"
    path.write_text(
        BANK.replace('value: "s * 1"', 'value: "s * 2"').replace(
            'value: "s / 4", feedback: "That', 'value: "s / 8", feedback: "That'
        ),
        encoding="utf-8",
    )
    report = check_path(str(path), variants=20)
    assert report.ok, [f.message for item in report.items for f in item.failures]
