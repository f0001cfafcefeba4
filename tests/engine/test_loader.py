"""Bank files: every problem reported as file:line: field: message, and YAML's traps avoided."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from attnquiz.engine.errors import BankError
from attnquiz.engine.loader import load_bank_text, parse_yaml

BAD = Path(__file__).resolve().parent.parent / "data" / "bad_banks"
ROOT = BAD.parent.parent.parent
CASES = sorted(BAD.glob("*.yaml"))


@pytest.mark.parametrize("bank_file", CASES, ids=[p.stem for p in CASES])
def test_bad_bank_reports_exactly_its_error_lines(bank_file: Path) -> None:
    shown = str(bank_file.relative_to(ROOT))
    with pytest.raises(BankError) as caught:
        load_bank_text(bank_file.read_text(encoding="utf-8"), shown)
    expected_file = bank_file.with_suffix(".errors")
    if os.environ.get("UPDATE_GOLDEN"):
        expected_file.write_text(str(caught.value) + "\n", encoding="utf-8")
    assert str(caught.value) + "\n" == expected_file.read_text(encoding="utf-8")


def test_errors_are_sorted_by_line_and_counted() -> None:
    with pytest.raises(BankError) as caught:
        load_bank_text((BAD / "many_errors.yaml").read_text(encoding="utf-8"), "many.yaml")
    lines = [issue.line for issue in caught.value.issues]
    assert lines == sorted(lines)
    assert str(caught.value).splitlines()[-1] == "many.yaml: 8 errors, nothing was run."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("x: 1e-3", 0.001),
        ("x: 1.5E+3", 1500.0),
        ("x: .5", 0.5),
        ("x: no", "no"),
        ("x: off", "off"),
        ("x: yes", "yes"),
        ("x: true", True),
        ("x: False", False),
        ("x: 2026-11-29", "2026-11-29"),
        ("x: 017", 17),
        ("x: '1e-3'", "1e-3"),
        ("x: 12", 12),
    ],
    ids=str,
)
def test_scalars_are_read_as_yaml_1_2(text: str, expected: object) -> None:
    data, _ = parse_yaml(text, "t.yaml")
    assert data == {"x": expected}
    assert type(data["x"]) is type(expected)


def test_lines_are_recorded_for_every_key() -> None:
    _, located = parse_yaml("a: 1\nb:\n  - c: 2\n    d: [1, 2]\n", "t.yaml")
    assert located.line_of(("a",)) == 1
    assert located.line_of(("b", 0, "c")) == 3
    assert located.line_of(("b", 0, "d")) == 4
    assert located.line_of(("b", 0, "missing")) == 3


def test_a_valid_bank_loads_with_validated_parameters() -> None:
    text = """
bank: mini
title: Mini
items:
  - id: score
    source: "2026 T1 Quiz 1, Q13"
    topic: additive-attention
    generator: additive_score
    params: {dim: 3}
    original: {h: [1, 0], s_proj: [1, 2], v: [1, 1], dim: 2}
    tolerance: {rtol: 1e-2}
"""
    bank = load_bank_text(text, "mini.yaml")
    entry = bank.get("score")
    assert entry.kwargs["dim"] == 3
    assert entry.original_kwargs is not None
    assert entry.original_kwargs["h"] == [1.0, 0.0]
    assert entry.line == 5
    question = entry.question(1)
    assert question.answer.tolerance.rtol == pytest.approx(0.01)


def test_an_unknown_item_suggests_close_ids() -> None:
    bank = load_bank_text(
        "bank: mini\ntitle: Mini\nitems:\n"
        "  - {id: additive-score, source: s, topic: t, generator: additive_score}\n",
        "mini.yaml",
    )
    with pytest.raises(Exception, match="did you mean additive-score"):
        bank.get("additive-scor")
