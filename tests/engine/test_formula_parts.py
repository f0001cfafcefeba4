"""Formula items (YAML, no Python) in parts and with formula answers: error carried forward over
many seeds against an independent computation, the equivalence of formulas, the JSON contract,
and `quiz check`."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from attnquiz.engine.answers.kinds import ExpressionAnswer, NumericAnswer, PartsAnswer
from attnquiz.engine.bank.loaded import Bank
from attnquiz.engine.bank.loader import load_bank_text
from attnquiz.engine.check.checks import check_bank
from attnquiz.engine.grading.grade import grade_answer
from attnquiz.engine.grading.parts import grade_parts
from attnquiz.main import app

BANK = r"""
bank: yaml-parts
title: "Parts and formulas in YAML"
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
        mistakes:
          - {tag: no-scaling, value: "s", feedback: "Divide by $\\sqrt{d_k}$."}
        solution: ["${{s}} / 2 = {{scaled}}$."]
      - prompt: "The softmax weight of key 1, using your (a)."
        answer: {value: "exp(scaled) / (exp(scaled) + exp(e2))"}
        tolerance: {decimals: 2}
        weight: 2
        mistakes:
          - {tag: not-normalised, value: "exp(scaled)", feedback: "Divide by the sum of both exponentials."}
        solution: ["$\\exp({{scaled}}) / (\\exp({{scaled}}) + \\exp({{e2}}))$."]
    original: {s: 4, e2: 1.5}

  - id: block-count-chain
    kind: formula
    source: "Key results, parameters per block"
    topic: parameter-count
    params:
      d: {choice: [256, 512, 768, 1024]}
      n: {range: [2, 12]}
    prompt: "An encoder block of width $d$: attention, an FFN of hidden width $4d$ and two LayerNorms."
    carried_score: 0.5
    parts:
      - prompt: "The parameters of the multi-head attention, as a formula in $d$."
        answer: {kind: expression, value: "4*d^2 + 4*d", symbols: [d]}
        mistakes:
          - {tag: biases-forgotten, value: "4*d^2", feedback: "Each projection has a bias."}
        solution: ["$4d^2 + 4d$."]
      - name: block
        prompt: "With $d = {{d}}$, the parameters of one block."
        answer: {kind: integer, value: "12*d^2 + 13*d"}
        mistakes:
          - {tag: layernorm-forgotten, value: "12*d^2 + 9*d", feedback: "Count the LayerNorms."}
        solution: ["$12 \\cdot {{d}}^2 + 13 \\cdot {{d}} = {{block}}$."]
      - prompt: "{{n}} such blocks."
        answer: {kind: integer, value: "n*block"}
        mistakes:
          - {tag: one-block, value: "block", feedback: "That is one block."}
        solution: ["${{n}} \\times {{block}} = {{n*block}}$."]
    original: {d: 512, n: 6}

  - id: projection-formula
    kind: formula
    source: "ELI12 Week 1 §7, small counts"
    topic: parameter-count
    params:
      h: {choice: [4, 8, 16]}
    prompt: >-
      Multi-head attention has {{h}} heads of width $d_k$ each. How many weights has $W_O$,
      without its bias?
    answer: {kind: expression, value: "({{h}}*d_k)^2", symbols: [d_k]}
    mistakes:
      - tag: one-head
        value: "{{h}}*d_k^2"
        feedback: "$W_O$ maps all {{h}} heads' outputs, of width {{h}} d_k."
    solution: ["$W_O$ is $({{h}} d_k) \\times ({{h}} d_k)$."]
    original: {h: 8}
"""
SEEDS = range(150)


@pytest.fixture(scope="module")
def bank() -> Bank:
    return load_bank_text(BANK, "yaml-parts.yaml")


def _parts(bank: Bank, item: str, seed: int | None) -> PartsAnswer:
    entry = bank.get(item)
    answer = (entry.original() if seed is None else entry.question(seed)).answer
    assert isinstance(answer, PartsAnswer)
    return answer


def test_a_wrong_but_readable_a_makes_b_expected_from_it_over_many_seeds(bank: Bank) -> None:
    """(b) is graded against the softmax of the student's own (a), computed here by numpy, not by
    the item: the consistent (b) is right, says so, and (a) alone loses its marks."""
    for seed in SEEDS:
        answer = _parts(bank, "score-then-weight", seed)
        scaled, _ = answer.parts
        assert isinstance(scaled.answer, NumericAnswer)
        e2 = float(bank.get("score-then-weight").question(seed).variant.inputs["e2"])
        wrong_a = round(scaled.answer.value + 0.75, 2)
        scores = np.array([wrong_a, e2])
        carried = float(np.exp(scores - scores.max())[0] / np.exp(scores - scores.max()).sum())
        result = grade_parts(answer, [f"{wrong_a:.2f}", f"{carried:.2f}"])
        (graded_a, graded_b) = result.parts
        assert graded_a.grade.status == "wrong", seed
        assert graded_b.grade.status == "correct", (seed, graded_b.grade.feedback)
        assert list(graded_b.carried_forward) == ["a"]
        assert float(graded_b.carried_forward["a"]) == wrong_a
        assert math.isclose(float(graded_b.expected.format()), round(carried, 2), abs_tol=0.011)
        assert "given your (a)" in graded_b.grade.feedback
        assert result.score == pytest.approx(2 / 3)  # (b) weighs 2 of 3


def test_a_named_mistake_of_a_is_named_in_a_only(bank: Bank) -> None:
    for seed in range(30):
        answer = _parts(bank, "score-then-weight", seed)
        s = bank.get("score-then-weight").question(seed).variant.inputs["s"]
        key_b = answer.parts[1].answer.format()
        result = grade_parts(answer, [str(s), key_b])
        first, second = result.parts
        assert first.grade.mistake is not None
        assert first.grade.mistake.tag == "no-scaling"
        assert second.grade.mistake is None


def test_an_integer_chain_carries_forward_and_earns_the_items_carried_score(bank: Bank) -> None:
    answer = _parts(bank, "block-count-chain", None)
    assert [p.answer.format() for p in answer.parts] == ["4*d^2 + 4*d", "3,152,384", "18,914,304"]
    assert answer.parts[2].uses == ("b",)
    result = grade_parts(answer, ["4d(d+1)", "3150000", "18900000"])
    statuses = [p.grade.status for p in result.parts]
    assert statuses == ["correct", "wrong", "partial"]  # carried_score: 0.5
    assert result.parts[2].carried_forward == {"b": "3150000"}
    assert "Correct, given your (b) = 3150000" in result.parts[2].grade.feedback


@pytest.mark.parametrize(
    ("response", "status", "mistake"),
    [
        ("4*d^2 + 4*d", "correct", None),
        ("4d^2 + 4d", "correct", None),
        ("4 d² + 4 d", "correct", None),
        ("4*d**2 + 4*d", "correct", None),
        ("4d(d+1)", "correct", None),
        ("4*d + 4*d^2", "correct", None),
        ("(d+1)*4*d", "correct", None),
        ("4d^2 + 5d", "wrong", None),
        ("3d^2 + 4d", "wrong", None),
        ("4d^2", "wrong", "biases-forgotten"),
        ("4d^2 + 4n", "invalid", None),
        ("(d+1)^100000", "invalid", None),
        ("d^d^d", "invalid", None),
        ("__import__('os')", "invalid", None),
    ],
)
def test_a_formula_part_is_graded_by_equivalence(
    bank: Bank, response: str, status: str, mistake: str | None
) -> None:
    part = _parts(bank, "block-count-chain", 3).parts[0]
    assert isinstance(part.answer, ExpressionAnswer)
    graded = grade_answer(part.answer, response, part.mistakes)
    assert graded.status == status, graded.feedback
    assert (graded.mistake.tag if graded.mistake else None) == mistake
    if response == "4d^2 + 4n":
        assert "d" in graded.feedback  # the symbols it may use are listed


def test_a_formula_with_a_parameter_written_into_it(bank: Bank) -> None:
    entry = bank.get("projection-formula")
    question = entry.original()
    assert isinstance(question.answer, ExpressionAnswer)
    assert question.answer.symbols == ("d_k",)
    for response, status in (("64 d_k^2", "correct"), ("(8d_k)^2", "correct"), ("8 dk^2", "wrong")):
        assert grade_answer(question.answer, response, question.variant.mistakes).status == status, response
    named = grade_answer(question.answer, "8*d_k^2", question.variant.mistakes).mistake
    assert named is not None
    assert named.tag == "one-head"
    for seed in range(20):  # each variant's formula is its own
        h = entry.question(seed).variant.inputs["h"]
        assert grade_answer(entry.question(seed).answer, f"{h * h} d_k^2", ()).status == "correct"


def test_the_bank_passes_quiz_check(bank: Bank) -> None:
    report = check_bank(bank, 60)
    problems = [f"{i.item} [{f.check}] {f.message}" for i in report.items for f in i.failures]
    assert report.ok, problems


def test_show_and_answer_json_give_the_parts_as_the_contract_says(tmp_path: Path) -> None:
    path = tmp_path / "yaml-parts.yaml"
    path.write_text(BANK, encoding="utf-8")
    runner = CliRunner()
    shown = runner.invoke(app, ["show", str(path), "block-count-chain", "--original", "--json"])
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.stdout)
    first, second, third = data["parts"]
    assert first["answer"]["kind"] == "expression"
    assert first["answer"]["value"] == "4*d^2 + 4*d"
    assert first["answer"]["symbols"] == ["d"]
    assert (second["uses"], third["uses"]) == ([], ["b"])
    assert second["answer"]["kind"] == "integer"
    answered = runner.invoke(
        app,
        ["answer", str(path), "block-count-chain", "--original", "--json", "4d^2+4d", "3150000", "18900000"],
    )
    result = json.loads(answered.stdout)
    assert [p["status"] for p in result["parts"]] == ["correct", "wrong", "partial"]
    assert result["parts"][2]["expected"] == 18_900_000
    assert result["parts"][2]["carried_forward"] == {"b": "3150000"}
