"""The terminal summary counts every concept question left out of the score, answered or not."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_run_piped import quiz

CONCEPTS = Path(__file__).resolve().parent.parent / "data" / "concept" / "concepts.yaml"
ITEMS = ["--item", "score", "--item", "why-scale", "--item", "fixed-context"]


@pytest.mark.parametrize(
    ("mode", "answers", "said"),
    [
        # An exam: one concept question answered, the other left unanswered; both are out of the score.
        (["--exam"], "1.93\nIt keeps the variance at one.\n", "2 concept questions not in the score"),
        # Practice: one answered and rated, the other skipped.
        ([], "1.93\nIt keeps the variance at one.\n3\ns\n", "2 concept questions not in the score"),
        # Practice stopped before the second concept question was reached: only the one asked counts.
        ([], "1.93\nIt keeps the variance at one.\n3\nq\n", "1 concept question not in the score"),
    ],
)
def test_the_summary_counts_each_concept_question_asked(
    tmp_path: Path, mode: list[str], answers: str, said: str
) -> None:
    result = quiz(tmp_path, "run", str(CONCEPTS), *ITEMS, "--seed", "1", *mode, stdin=answers)
    assert result.returncode == 0, result.stderr
    assert said in " ".join(result.stdout.split()), result.stdout
    assert "Score 0 / 1" in result.stdout or "Score 1 / 1" in result.stdout
