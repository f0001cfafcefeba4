"""Questions in parts: error carried forward over many seeds, the chains' originals, and the JSON contract."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from attnquiz.engine.answers.kinds import IntegerAnswer, NumericAnswer, Part, PartsAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.check.parts import part_problems, perturbed
from attnquiz.engine.grading.grade import grade
from attnquiz.engine.grading.parts import grade_parts
from attnquiz.engine.grading.single import read_value
from attnquiz.main import app

CHAINS = [
    ("week1", "additive-chain"),
    ("week1", "sdpa-chain"),
    ("week1", "params-chain"),
    ("week1", "cost-chain"),
    ("week2", "causal-mask-chain"),
    ("week2", "layernorm-chain"),
]
SEEDS = range(40)


def _answer(bank: str, item: str, seed: int | None) -> PartsAnswer:
    entry = banks.load(bank).get(item)
    question = entry.original() if seed is None else entry.question(seed)
    answer = question.answer
    assert isinstance(answer, PartsAnswer)
    return answer


@pytest.mark.parametrize(("bank", "item"), CHAINS)
def test_a_wrong_but_readable_earlier_part_is_carried_forward_over_many_seeds(bank: str, item: str) -> None:
    checked = 0
    for seed in SEEDS:
        answer = _answer(bank, item, seed)
        keys = {p.label: p.answer.format() for p in answer.parts}
        for part in answer.parts:
            for used in part.uses:
                earlier = answer.part(used)
                wrong = earlier.answer_for(perturbed(earlier.answer)).format()
                read = read_value(earlier.answer, wrong)
                # The other parts it uses are typed as the key writes them, and carried as typed.
                values = [
                    read if label == used else read_value(answer.part(label).answer, keys[label])
                    for label in part.uses
                ]
                assert part.recompute is not None
                expected = part.answer_for(part.recompute(*values))
                assert expected != part.answer, (item, seed, part.label)
                responses = [
                    wrong if p.label == used else expected.format() if p is part else keys[p.label]
                    for p in answer.parts
                ]
                result = grade_parts(answer, responses)
                graded = next(g for g in result.parts if g.label == part.label)
                assert graded.expected == expected
                assert graded.grade.status == "correct", (item, seed, part.label, graded.grade.feedback)
                assert graded.grade.score == 1.0
                assert used in graded.carried_forward
                assert graded.grade.feedback.startswith("Correct, given your ")
                assert f"({used}) = {graded.carried_forward[used]}" in graded.grade.feedback
                # The earlier part itself stays wrong: the carry never forgives the slip where it was made.
                first = next(g for g in result.parts if g.label == used)
                assert first.grade.status == "wrong"
                checked += 1
    assert checked >= len(SEEDS)


@pytest.mark.parametrize(("bank", "item"), CHAINS)
def test_every_chain_passes_its_part_checks_over_many_seeds(bank: str, item: str) -> None:
    for seed in [None, *SEEDS] if banks.load(bank).get(item).has_original else SEEDS:
        assert list(part_problems(_answer(bank, item, seed))) == [], (item, seed)


def test_a_named_mistake_in_a_is_named_in_a_only() -> None:
    answer = _answer("week1", "params-chain", None)  # d_model 512, h 8
    result = grade_parts(answer, ["512", str(512 * 512), "1050624", "3152384", "18914304"])
    a, b = result.parts[0], result.parts[1]
    assert a.grade.mistake is not None
    assert a.grade.mistake.tag == "heads-full-width"
    assert b.grade.status == "correct"
    assert b.grade.mistake is None
    assert b.carried_forward == {"a": "512"}
    assert b.grade.feedback == "Correct, given your (a) = 512."
    assert result.status == "partial"
    assert math.isclose(result.score, 0.8)


def test_an_unreadable_earlier_part_carries_nothing() -> None:
    answer = _answer("week1", "params-chain", None)
    result = grade_parts(answer, ["sixty-four", str(512 * 512), "", "3152384", "18914304"])
    assert result.parts[0].grade.status == "invalid"
    b = result.parts[1]
    assert b.carried_forward == {}
    assert b.grade.status == "wrong"  # 262,144 is the whole W_Q, graded against (b)'s own answer
    assert b.expected == answer.parts[1].answer


def test_a_part_wrong_even_after_carrying_forward_says_so_once() -> None:
    answer = _answer("week1", "additive-chain", 3)
    b = grade_parts(answer, ["1.92", "0.5", ""]).parts[1]
    assert b.grade.status == "wrong"
    assert b.grade.feedback.startswith("Not correct, even with your (a) = 1.92 carried forward: that gives")
    assert b.grade.feedback.count("Not correct") == 1


def test_the_item_says_what_a_carried_part_earns() -> None:
    parts = (
        Part("a", "Count.", IntegerAnswer(6)),
        Part("b", "Double it.", IntegerAnswer(12), uses=("a",), recompute=lambda a: 2 * a),
    )
    half = PartsAnswer(parts, carried_score=0.5)
    result = grade_parts(half, ["7", "14"])
    assert result.parts[1].grade.status == "partial"
    assert result.parts[1].grade.score == 0.5
    assert result.parts[1].expected == IntegerAnswer(14)
    nothing = grade_parts(PartsAnswer(parts, carried_score=0.0), ["7", "14"])
    assert nothing.parts[1].grade.status == "wrong"


def test_a_carried_value_outside_the_method_falls_back_to_the_part_s_own_answer() -> None:
    parts = (
        Part("a", "Variance.", NumericAnswer(4.0)),
        Part("b", "Its square root.", NumericAnswer(2.0), uses=("a",), recompute=math.sqrt),
    )
    result = grade_parts(PartsAnswer(parts), ["-4", "2"])
    assert result.parts[1].grade.status == "correct"
    assert result.parts[1].carried_forward == {}


def test_parts_are_checked_when_built() -> None:
    with pytest.raises(ValueError, match="not an earlier part"):
        PartsAnswer((Part("a", "x", IntegerAnswer(1), uses=("b",), recompute=lambda b: b),))
    with pytest.raises(ValueError, match="no recompute"):
        Part("b", "x", IntegerAnswer(1), uses=("a",))
    with pytest.raises(ValueError, match="labelled"):
        PartsAnswer((Part("a", "x", IntegerAnswer(1)), Part("a", "y", IntegerAnswer(2))))


def test_one_text_answers_a_question_in_parts_with_bars_and_the_key_grades_correct() -> None:
    question = banks.load("week2").get("layernorm-chain").original()
    assert grade(question, question.answer.format()).status == "correct"
    assert grade(question, "2.5 | 1.25 | [-1.342, -0.447, 0.447, 1.342]").status == "correct"
    assert grade(question, "2.5").status == "invalid"


# ---------------------------------------------------------------------------------------------
# The chains' originals reproduce the notes
# ---------------------------------------------------------------------------------------------

NOTES: dict[tuple[str, str], list[float | None]] = {
    ("week1", "params-chain"): [64, 32_768, 1_050_624, 3_152_384, 18_914_304],
    ("week1", "cost-chain"): [1_152, 4_608, 4_608],
    ("week2", "causal-mask-chain"): [15, 21, 15 / 36],
    ("week2", "layernorm-chain"): [2.5, 1.25, None],
}


@pytest.mark.parametrize(("bank", "item"), list(NOTES))
def test_the_originals_of_the_chains_reproduce_the_notes(bank: str, item: str) -> None:
    answer = _answer(bank, item, None)
    expected: list[float | None] = NOTES[(bank, item)]
    for part, value in zip(answer.parts, expected, strict=True):
        if value is not None:
            assert isinstance(part.answer, NumericAnswer | IntegerAnswer)
            assert math.isclose(float(part.answer.value), value), (item, part.label)


def test_each_chain_part_equals_the_single_item_of_the_same_step() -> None:
    week1, week2 = banks.load("week1"), banks.load("week2")
    sdpa = _answer("week1", "sdpa-chain", None)
    assert sdpa.parts[2].answer == week1.get("sdpa-two-tokens").original().answer
    params = _answer("week1", "params-chain", None)
    singles = ["head-size", "w-q-one-head", "mha-params", "encoder-layer-params", "n-layer-params"]
    for part, single in zip(params.parts, singles, strict=True):
        assert part.answer == week1.get(single).original().answer, single
    layernorm = _answer("week2", "layernorm-chain", None)
    assert layernorm.parts[2].answer == week2.get("layernorm-vector").original().answer
    mask = _answer("week2", "causal-mask-chain", None)
    assert mask.parts[0].answer == week2.get("masked-entry-count").original().answer


def test_the_additive_chain_starts_with_q13_itself() -> None:
    """Q14 and Q15 are not in the notes (no original); with Q13's inputs, (a) is 2 tanh 2 ≈ 1.93."""
    from attnquiz.engine.generators.chains import additive_chain
    from attnquiz.engine.seeding import question_rng

    for seed in range(10):
        variant = additive_chain(
            question_rng(seed, "week1", "additive-chain"), h=[1, 0], s_proj=[1, 2], v=[1, 1]
        )
        first = variant.parts[0].answer
        assert isinstance(first, NumericAnswer)
        assert math.isclose(first.value, 2 * math.tanh(2))
        assert first.format() == "1.93"
    entry = banks.load("week1").get("additive-chain")
    assert not entry.has_original
    assert all(q in entry.item.source for q in ("Q13", "Q14", "Q15"))


# ---------------------------------------------------------------------------------------------
# The contract of quiz show --json and quiz answer --json
# ---------------------------------------------------------------------------------------------

runner = CliRunner()


def test_quiz_show_json_lists_the_parts() -> None:
    result = runner.invoke(app, ["show", "week1", "params-chain", "--original", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [p["label"] for p in data["parts"]] == ["a", "b", "c", "d", "e"]
    first, second = data["parts"][0], data["parts"][1]
    assert set(first) >= {"label", "prompt", "answer", "mistakes", "solution", "uses"}
    assert set(first["answer"]) >= {"kind", "value", "tolerance"}
    assert first["answer"] == {"kind": "integer", "value": 64, "tolerance": {"exact": True}}
    assert second["uses"] == ["a"]
    assert first["uses"] == []


def test_quiz_show_json_gives_a_formula_answer_with_its_symbols() -> None:
    result = runner.invoke(app, ["show", "week2", "masked-entries-formula", "--seed", "3", "--json"])
    data = json.loads(result.output)
    assert data["answer"]["kind"] == "expression"
    assert data["answer"]["value"] == "T*(T - 1)/2"
    assert data["answer"]["symbols"] == ["T"]


def test_quiz_answer_json_grades_one_response_per_part_with_carry_forward() -> None:
    args = [
        "answer",
        "week1",
        "params-chain",
        "--original",
        "--json",
        "512",
        "262144",
        "x",
        "3152384",
        "18914304",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["status"] == "partial"
    assert math.isclose(data["score"], 0.6)
    keys = {"label", "status", "score", "feedback", "mistake", "read_as", "expected", "carried_forward"}
    assert all(keys <= set(p) for p in data["parts"])
    a, b, c = data["parts"][:3]
    assert (a["status"], a["mistake"], a["expected"]) == ("wrong", "heads-full-width", 64)
    assert (b["status"], b["expected"], b["carried_forward"]) == ("correct", 262_144, {"a": "512"})
    assert c["status"] == "invalid"


def test_quiz_answer_takes_the_parts_on_standard_input_one_per_line() -> None:
    stdin = "2.5\n1.25\n[-1.342, -0.447, 0.447, 1.342]\n"
    result = runner.invoke(app, ["answer", "week2", "layernorm-chain", "--original", "--json"], input=stdin)
    assert json.loads(result.output)["status"] == "correct"


def test_quiz_answer_refuses_the_wrong_number_of_parts() -> None:
    result = runner.invoke(app, ["answer", "week1", "params-chain", "--original", "64", "32768"])
    assert result.exit_code == 2
    assert "5 answers, one per part" in result.output


# ---------------------------------------------------------------------------------------------
# quiz run asks part by part
# ---------------------------------------------------------------------------------------------


def _run(tmp_path: Path, *args: str, stdin: str) -> list[dict[str, Any]]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "80", "QUIZ_HOME": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", "from attnquiz.main import main; main()", "run", *args, "--json"],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]


def test_practice_grades_each_part_as_it_is_answered_and_carries_errors(tmp_path: Path) -> None:
    # Seed 83187's params-chain: d_model 64 and h 2; (a) = 64 keeps the full width, and (b) = 64·64
    # is then right given it.
    events = _run(
        tmp_path,
        "week1",
        "--item",
        "params-chain",
        "-n",
        "1",
        "--seed",
        "83187",
        stdin="64\n4096\nx\n1\n2\n3\n",
    )
    grades = [e for e in events if e.get("type") == "grade"]
    assert [g["response"] for g in grades] == ["64", "4096", "x", "1", "2", "3"]
    a, b, unreadable = grades[0], grades[1], grades[2]
    assert (a["status"], a["mistake"]) == ("wrong", "heads-full-width")
    assert [p["label"] for p in a["parts"]] == ["a"]
    assert b["status"] == "correct"
    assert b["parts"][0]["carried_forward"] == {"a": "64"}
    assert unreadable["status"] == "invalid"  # costs nothing: (c) is asked again
    whole = grades[-1]
    assert [p["label"] for p in whole["parts"]] == ["a", "b", "c", "d", "e"]
    summary = next(e for e in events if e.get("type") == "summary")
    assert summary["rows"][0]["response"] == "64 | 4096 | 1 | 2 | 3"


def test_an_exam_saves_the_parts_and_grades_them_at_the_end(tmp_path: Path) -> None:
    events = _run(
        tmp_path,
        "week1",
        "--exam",
        "--item",
        "params-chain",
        "-n",
        "1",
        "--seed",
        "83187",
        stdin="32\n2048\n16640\n49984\n299904\nsubmit\ny\n",
    )
    assert not [e for e in events if e.get("type") == "grade" and e.get("status") != "correct"]
    summary = next(e for e in events if e.get("type") == "summary")
    assert summary["rows"][0]["status"] == "correct"
    assert summary["score"] == 1.0


def test_an_item_sets_what_a_carried_part_earns_in_its_params() -> None:
    from attnquiz.engine.bank.loader import load_bank_text

    bank = load_bank_text(
        "bank: half\ntitle: Half marks carried\nitems:\n"
        "  - id: params-chain\n    source: notes\n    topic: parameter-count\n    generator: params_chain\n"
        "    params: {carried_score: 0.5}\n    original: {d_model: 512, heads: 8, d_ff: 2048, layers: 6}\n",
        "half.yaml",
    )
    answer = bank.get("params-chain").original().answer
    assert isinstance(answer, PartsAnswer)
    assert answer.carried_score == 0.5
    assert "0.5 of its marks" in answer.key_note()
    result = grade_parts(answer, ["512", str(512 * 512), "1050624", "3152384", "18914304"])
    assert (result.parts[1].grade.status, result.parts[1].grade.score) == ("partial", 0.5)


PARAMS_CHAIN_5 = ("--item", "params-chain", "-n", "1", "--seed", "5")


def test_a_wrong_part_shows_its_own_answer_not_the_later_parts(tmp_path: Path) -> None:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "80", "QUIZ_HOME": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", "from attnquiz.main import main; main()", "run", "week1", *PARAMS_CHAIN_5],
        input="64\n999\nq\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    answers = [line for line in result.stdout.splitlines() if line.startswith("Answer:")]
    assert answers == ["Answer: (b) 65,536"], result.stdout  # (c), (d), (e) are still to be asked
