"""Figures as a user meets them: `quiz show --json` lists them as data; the terminal draws them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from attnquiz.main import app

runner = CliRunner()


def quiz(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "attnquiz", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "80", **env},
        timeout=120,
        check=False,
    )


def test_show_json_lists_the_figures_with_their_data() -> None:
    result = runner.invoke(app, ["show", "week2", "causal-mask-weights", "--seed", "3", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    scores, weights = data["figures"]
    assert scores["kind"] == weights["kind"] == "heatmap"
    for row, mask, answer_row in zip(
        weights["values"], weights["mask"], data["answer"]["value"], strict=True
    ):
        for value, hidden, answer in zip(row, mask, answer_row, strict=True):
            assert abs(value - answer) < 1e-12
            assert not hidden or value == 0  # a hidden key's weight is exactly 0
    size = len(scores["rows"])
    # The scores are the raw ones (what the mask then hides is flagged, and shown as −∞).
    assert scores["values"] == data["params"]["scores"]
    assert scores["mask"][0] == [False] + [True] * (size - 1)
    assert scores["masked_text"] == "−∞"
    assert {"title", "caption", "rows", "cols", "decimals", "low", "high", "where"} <= set(weights)


def test_show_json_lists_a_line_plot_and_a_question_without_figures_has_an_empty_list() -> None:
    result = runner.invoke(app, ["show", "week2", "pe-pair", "--seed", "1", "--json"])
    (plot,) = json.loads(result.output)["figures"]
    assert plot["kind"] == "line"
    assert len(plot["x"]) == len(plot["series"][0]["values"])
    result = runner.invoke(app, ["show", "week1", "additive-score", "--original", "--json"])
    assert json.loads(result.output)["figures"] == []


@pytest.mark.parametrize(
    ("columns", "env"),
    [("80", {}), ("40", {}), ("40", {"NO_COLOR": "1"}), ("40", {"PYTHONIOENCODING": "ascii"})],
)
def test_the_terminal_draws_a_heatmap_in_the_solution(columns: str, env: dict[str, str]) -> None:
    result = quiz("show", "week2", "causal-mask-weights", "--seed", "3", "--solution", COLUMNS=columns, **env)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Causal attention weights" in out
    assert "query \\ key" in out
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= int(columns)
    assert "\x1b[" not in out  # piped: no colour codes
    if env.get("PYTHONIOENCODING") == "ascii":
        assert out.isascii()
        assert "-inf" in out
    else:
        assert "−∞" in out


def test_a_figure_question_shows_its_figure_with_the_prompt() -> None:
    result = quiz("show", "week1", "it-referent-weight", "--original", NO_COLOR="1")
    out = result.stdout
    prompt_end = out.index("Give a number")
    assert out.index("Scaled scores q·k/√dₖ") < prompt_end  # the title's maths typeset as the prompt's
    assert "6.5" in out[:prompt_end]
