"""A variant that cannot be built (a formula dividing by zero for a rare seed) never ends a session.

tests/data/rare_failure/rare.yaml has 40,401 parameter combinations, too many to list when the bank
loads; its answer 1/(x - y) divides by zero when x = y. With session seed 8 the third question is
such a variant.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.practice.planning import plan_practice
from attnquiz.engine.practice.session import Session
from tests.cli.test_run_piped import quiz

RARE = str(Path(__file__).resolve().parent.parent / "data" / "rare_failure" / "rare.yaml")
SEED = 8
BROKEN = 3  # the position of the bad variant in the session of seed 8


def test_the_bank_really_has_a_bad_variant_at_question_3() -> None:
    plan = plan_practice(banks.load(RARE), seed=SEED, count=5)
    with pytest.raises(Exception, match="division by zero"):
        plan.questions[BROKEN - 1].build()
    for planned in plan.questions[: BROKEN - 1]:
        planned.build()


def test_a_piped_session_skips_the_bad_variant_says_so_and_ends_with_its_summary(tmp_path: Path) -> None:
    result = quiz(tmp_path, "run", RARE, "--seed", str(SEED), "--count", "5", stdin="1\n" * 5)
    assert result.returncode == 0, result.stderr
    warning = [line for line in result.stderr.splitlines() if "left out" in line]
    # One line, however long the bank's path: piped warnings are not folded, so the command to
    # report it is whole.
    assert len(warning) == 1, result.stderr
    assert "question 3 is left out" in warning[0]
    assert f"quiz show {RARE} ratio --seed " in warning[0]
    assert "Traceback" not in result.stderr
    assert "Summary" in result.stdout
    assert "4 of 5 asked" in result.stdout
    assert "Question 4 of 5" in result.stdout


def test_the_json_summary_comes_too(tmp_path: Path) -> None:
    result = quiz(tmp_path, "run", RARE, "--seed", str(SEED), "--count", "5", "--json", stdin="1\n" * 5)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert events[-1]["type"] == "summary"
    assert [r["position"] for r in events[-1]["rows"]] == [1, 2, 4, 5]


def test_an_exam_passes_over_the_bad_variant_in_every_direction() -> None:
    plan = plan_practice(banks.load(RARE), seed=SEED, count=5, exam=True)
    session = Session(plan)
    assert session.show() is not None
    session.go(2)
    session.show()
    session.next()
    assert session.show() is not None
    assert session.current is not None
    assert session.current.position == 4
    session.back()
    assert session.current.position == 2
    with pytest.raises(ValueError, match="left out"):
        session.go(BROKEN)
    assert BROKEN not in session.unanswered()
    summary = session.finish("submitted")
    assert [row.position for row in summary.rows] == [1, 2, 4, 5]
    assert any("left out" in w for w in session.take_warnings())
