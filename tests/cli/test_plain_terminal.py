"""`quiz --plain` and QUIZ_PLAIN=1: the terminal for screen readers (issue 31, item 5).

A plain session writes no escape sequence (no colour, no cursor move, no terminal mode), no
box-drawing or block character (U+2500–U+259F), reads its maths as words, prints figures as their
values and the exam clock as text at each prompt. Driven in a pseudo-terminal (pexpect), where
readline and rich would otherwise write escapes, and piped with FORCE_COLOR, where rich would
otherwise colour.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from attnquiz.engine.markup import speech as math_speech
from attnquiz.engine.markup import tex as markup

QUIZ = ["-c", "from attnquiz.main import main; main()"]
ESCAPE = re.compile(r"[\x1b\x9b]")
BOX = re.compile(r"[\u2500-\u259f]")
FIGURE_ITEM = ("week1", "it-referent-weight")


def environment(home: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("QUIZ_") and k not in ("NO_COLOR", "FORCE_COLOR")
    }
    env.update(QUIZ_HOME=str(home), TERM="xterm-256color", COLUMNS="80", **extra)
    return env


def quiz(home: Path, *args: str, stdin: str = "", **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *QUIZ, *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=environment(home, **extra),
        timeout=120,
        check=False,
    )


def assert_plain(text: str) -> None:
    assert not ESCAPE.search(text), repr(ESCAPE.search(text))
    assert not BOX.search(text), repr(BOX.findall(text)[:5])


def spoken(tex: str) -> str:
    (math,) = markup.parse(f"${tex}$")
    assert isinstance(math, markup.Math)
    return math_speech.speech(math)


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX-only")
def test_a_plain_exam_in_a_terminal_reads_maths_figures_and_the_clock_as_text(tmp_path: Path) -> None:
    child = pexpect.spawn(
        sys.executable,
        [*QUIZ, "--plain", "run", *FIGURE_ITEM[:1], "--item", FIGURE_ITEM[1], "--original", "--time", "10m"],
        env=environment(tmp_path),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 80),
    )
    seen = io.StringIO()
    child.logfile_read = seen
    child.expect(r"left\] › ")
    child.sendline("0.98")
    child.expect(r"left\] › ")
    child.sendline("submit")
    child.expect(pexpect.EOF)
    child.close()
    screen = seen.getvalue().replace("\r\n", "\n")
    assert "\r" not in screen  # nothing redrawn over a line
    assert_plain(screen)
    # The maths in words: "q_i · k_j / \sqrt{d_k}" as the spoken form, never √dₖ.
    assert spoken(r"\sqrt{d_k}") in " ".join(screen.split())
    assert "square root of d sub k" in " ".join(screen.split())
    # The clock at each prompt, as text.
    assert re.search(r"\[1/1 · \d+:\d\d left\] › ", screen)
    # The figure as its values: the row of "it" with its 6.5 on "animal".
    assert "Figure: Scaled scores" in screen
    assert "query it: key The is 0.5; key animal is 6.5;" in " ".join(screen.split())


@pytest.mark.parametrize(
    "args",
    [
        ("show", *FIGURE_ITEM, "--original", "--solution"),
        ("show", "week2", "causal-mask-weights", "--seed", "3", "--solution"),
        ("list", "week1"),
        ("answer", *FIGURE_ITEM, "--original", "0.5"),
    ],
)
@pytest.mark.parametrize("how", ["option", "environment"])
def test_piped_plain_commands_write_no_escapes_or_boxes_even_with_force_color(
    tmp_path: Path, args: tuple[str, ...], how: str
) -> None:
    loud = quiz(tmp_path, *args, FORCE_COLOR="1")
    assert loud.returncode == 0, loud.stderr
    assert ESCAPE.search(loud.stdout)  # without --plain the same command is coloured
    result = (
        quiz(tmp_path, "--plain", *args, FORCE_COLOR="1")
        if how == "option"
        else quiz(tmp_path, *args, FORCE_COLOR="1", QUIZ_PLAIN="1")
    )
    assert result.returncode == 0, result.stderr
    assert_plain(result.stdout + result.stderr)


def test_a_piped_plain_session_review_and_stats(tmp_path: Path) -> None:
    run = quiz(
        tmp_path,
        "--plain",
        "run",
        *FIGURE_ITEM[:1],
        "--item",
        FIGURE_ITEM[1],
        "--item",
        "additive-score",
        "--original",
        stdin="0.98\n0.5\n",
        FORCE_COLOR="1",
    )
    assert run.returncode == 0, run.stderr
    assert_plain(run.stdout + run.stderr)
    assert "Summary" in run.stdout
    assert "2 answers saved" in run.stdout
    for command in ("review", "stats"):
        shown = quiz(tmp_path, "--plain", command, FORCE_COLOR="1")
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.strip()
        assert_plain(shown.stdout + shown.stderr)
        assert not re.search(r"#{3,}|\.{5,}", shown.stdout)  # no bar, not even spelled in ASCII


def test_a_plain_figure_lists_every_value_of_the_figure(tmp_path: Path) -> None:
    import json

    data = json.loads(quiz(tmp_path, "show", *FIGURE_ITEM, "--original", "--json").stdout)
    shown = " ".join(
        quiz(tmp_path, "--plain", "show", *FIGURE_ITEM, "--original", "--solution").stdout.split()
    )
    figures = [f for f in data["figures"] if f["kind"] == "heatmap"]
    assert figures
    for figure in figures:
        for row, values in zip(figure["rows"], figure["values"], strict=True):
            cells = "; ".join(
                f"key {col} is {value:.{figure['decimals']}f}"
                for col, value in zip(figure["cols"], values, strict=True)
            )
            assert f"query {row}: {cells}." in shown


def test_plain_tables_are_a_row_a_line_and_maths_in_words() -> None:
    from attnquiz.engine.markup.plain import to_terminal

    table = "| name | value |\n|---|--:|\n| $d_k$ | 64 |\n| $\\sqrt{d_k}$ | 8 |"
    root, fraction = spoken(r"\sqrt{d_k}"), spoken(r"\frac{1}{\sqrt{d_k}}")
    assert to_terminal(table, spoken=True).splitlines() == [
        "name: d sub k; value: 64.",
        f"name: {root}; value: 8.",
    ]
    assert to_terminal("scale $\\frac{1}{\\sqrt{d_k}}$.", spoken=True) == f"scale {fraction}."
    assert "√" in to_terminal("scale $\\sqrt{d_k}$.")  # the visual terminal keeps its Unicode


@pytest.mark.parametrize(
    ("value", "plain"), [("1", True), ("yes", True), ("0", False), ("", False), ("off", False)]
)
def test_the_environment_variable(monkeypatch: pytest.MonkeyPatch, value: str, plain: bool) -> None:
    from attnquiz.terminal import plain_mode

    monkeypatch.setenv("QUIZ_PLAIN", value)
    assert plain_mode() is plain


def test_a_plain_line_plot_lists_its_points_in_words() -> None:
    from attnquiz.engine.figures import LinePlot, Series
    from attnquiz.figure_terminal import value_lines

    figure = LinePlot(
        x=[0, 1, 2],
        series=[Series("$\\sin$", [0, 0.5, -1]), Series("b", [1, 1, 1])],
        title="PE",
        x_label="$p$",
    )
    lines = value_lines(figure)
    assert lines[0].startswith("Figure: PE. Line plot of 2 curves")
    assert lines[1] == "Values, a point a line (3 of 3 points):"
    assert lines[2:] == [
        "p 0: sin: 0.000; b: 1.000.",
        "p 1: sin: 0.500; b: 1.000.",
        "p 2: sin: −1.000; b: 1.000.",
    ]
    assert not any(BOX.search(line) for line in lines)
