"""`quiz show` and `quiz answer` without rich's console print the very bytes rich prints, or leave
the drawing to rich.

Each question of the shipped banks (its original, or a variant) and the grades of three answers to
it (right, a named mistake, unreadable) are drawn twice through `attnquiz.question_lines`: by
`attnquiz.light_lines` and by rich (`attnquiz.display.RichLines`), under the variables and streams
that decide width, colour and encoding. Where the light writer does not decline, the bytes must be
equal; and the shipped questions must mostly take the light path (else the start-up it exists for
is lost without a sound).
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from attnquiz.display import RichLines, TerminalConsole
from attnquiz.engine.answers.kinds import CodeAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.grading.grade import grade
from attnquiz.engine.grading.outcome import Grade
from attnquiz.engine.variant import Question
from attnquiz.light_lines import LightLines
from attnquiz.question_lines import Writer, draw_grade, draw_shown, header_runs
from tests.cli.test_item_listing import DECIDING, ENVIRONMENTS, Stream

SETTINGS = [
    (environment, width, encoding, tty)
    for environment in ("pipe", "forced colour", "no colour", "plain", "dumb terminal")
    for width, encoding, tty in (
        (None, "utf-8", True),
        (44, "ascii", True),
        (132, "utf-8", False),
        (61, "latin-1", True),
    )
]
"""Environments (`test_item_listing.ENVIRONMENTS`), widths and streams each drawing is compared under."""


@cache
def questions(bank: str) -> list[Question]:
    """Each item of ``bank``: its original where it has one, else the variant of seed 7."""
    loaded = banks.load(bank, plugins=True)
    return [entry.original() if entry.has_original else entry.question(7) for entry in loaded.items]


@cache
def grades(bank: str) -> list[tuple[Question, Grade, str]]:
    """Three answers to each question of ``bank`` but its code questions, graded."""
    graded = []
    for question in questions(bank):
        if isinstance(question.answer, CodeAnswer):
            continue  # graded by running code: its verdict lines are the same runs as any other
        mistakes = question.variant.mistakes
        responses = [question.answer.format(), "?? ]", *(m.format(question.answer) for m in mistakes[:1])]
        graded += [(question, grade(question, response), response) for response in responses]
    return graded


def both(
    monkeypatch: pytest.MonkeyPatch,
    draw: Callable[[Writer], None],
    setting: tuple[str, int | None, str, bool],
) -> tuple[bytes | None, bytes]:
    """What the light writer prints (None: it declines) and what rich prints, under ``setting``."""
    environment, width, encoding, tty = setting
    for name in DECIDING:
        monkeypatch.delenv(name, raising=False)
    env = dict(ENVIRONMENTS[environment], **({"COLUMNS": str(width)} if width else {}))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    light_out, rich_out = Stream(encoding, tty), Stream(encoding, tty)
    monkeypatch.setattr(sys, "stdout", light_out)
    light = LightLines.for_stdout()
    assert light is not None  # never declined outright on this system
    draw(light)
    text = light.text()
    if text is not None:
        light_out.write(text)
    monkeypatch.setattr(sys, "stdout", rich_out)
    draw(RichLines(TerminalConsole(soft_wrap=False)))
    return (light_out.written() if text is not None else None), rich_out.written()


@pytest.mark.skipif(os.name == "nt", reason="the light writer leaves Windows to rich")
@pytest.mark.parametrize("bank", ["week1", "week2", "code"])
@pytest.mark.parametrize(
    "setting", SETTINGS, ids=lambda s: f"{s[0]}-{s[1]}-{s[2]}-{'tty' if s[3] else 'pipe'}"
)
def test_a_question_and_its_answer_print_what_rich_prints(
    monkeypatch: pytest.MonkeyPatch, bank: str, setting: tuple[str, int | None, str, bool]
) -> None:
    light_paths = 0
    shown = questions(bank)
    for question in shown:

        def draw(out: Writer, question: Question = question) -> None:
            draw_shown(out, question, with_answer=True)

        light, drawn = both(monkeypatch, draw, setting)
        if light is not None:
            light_paths += 1
            assert light == drawn, question.item_id
    # At 44 columns an unbreakable formula may be wider than the line; a code question's prompt holds
    # code blocks, which rich draws.
    if setting[1] != 44 and bank != "code":
        assert light_paths >= 0.6 * len(shown), (light_paths, len(shown))


@pytest.mark.skipif(os.name == "nt", reason="the light writer leaves Windows to rich")
@pytest.mark.parametrize("bank", ["week1", "week2"])
@pytest.mark.parametrize(
    "setting", SETTINGS, ids=lambda s: f"{s[0]}-{s[1]}-{s[2]}-{'tty' if s[3] else 'pipe'}"
)
def test_a_grade_prints_what_rich_prints(
    monkeypatch: pytest.MonkeyPatch, bank: str, setting: tuple[str, int | None, str, bool]
) -> None:
    light_paths = 0
    graded = grades(bank)
    statuses = set()
    for question, result, response in graded:

        def draw(
            out: Writer, question: Question = question, result: Grade = result, response: str = response
        ) -> None:
            out.put(header_runs(question, seed=False))
            draw_grade(out, result, response, echo=True)

        light, drawn = both(monkeypatch, draw, setting)
        statuses.add(result.status)
        if light is not None:
            light_paths += 1
            assert light == drawn, (question.item_id, response)
    assert {"correct", "wrong", "invalid"} <= statuses
    if setting[1] != 44:
        assert light_paths >= 0.6 * len(graded), (light_paths, len(graded))


def test_the_light_writer_declines_what_only_rich_draws() -> None:
    """A table, a code block, an image and a figure are rich's to draw."""
    for markdown in ("| a | b |\n|---|---|\n| 1 | 2 |", "```\ncode\n```", "![a plot](plot.png)"):
        light = LightLines(80, styled=True, colour=True, stream=None)
        light.markdown(markdown)
        assert light.text() is None, markdown
    light = LightLines(80, styled=True, colour=True, stream=None)
    light.markdown("Paragraph one with $x^2$.\n\n- a list\n- of two")
    assert light.text() is not None
    with_figure = next(
        q
        for b in ("week1", "week2")
        for q in questions(b)
        if any(f.where == "prompt" for f in q.variant.figures)
    )
    light = LightLines(200, styled=False, colour=False, stream=None)
    draw_shown(light, with_figure, with_answer=True)
    assert light.text() is None


def test_show_and_answer_in_a_terminal_are_drawn_without_rich(tmp_path: Path) -> None:
    """The real thing: `quiz show` and `quiz answer` in a pseudo-terminal, as a student's shell runs them."""
    env = {k: v for k, v in os.environ.items() if k not in DECIDING}
    env.update({"QUIZ_HOME": str(tmp_path), "COLUMNS": "100", "LINES": "40", "TERM": "xterm-256color"})
    env.pop("QUIZ_NO_CACHE", None)
    probe = (
        "import sys, atexit\n"
        "atexit.register(lambda: sys.stderr.write('RICH %s\\n' % ('rich.console' in sys.modules)))\n"
        "from attnquiz.main import main\n"
        "main()\n"
    )
    commands = [
        ["show", "week1", "additive-score", "--original"],
        ["answer", "week1", "additive-score", "--original", "--", "1.93"],
    ]
    for command in commands:
        leader, follower = pty.openpty()
        done = subprocess.run(
            [sys.executable, "-c", probe, *command],
            stdout=follower,
            stderr=subprocess.PIPE,
            env=env,
            timeout=120,
            check=False,
        )
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal is closed once everything written is read
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(leader)
        assert done.returncode == 0, done.stderr
        assert b"RICH False" in done.stderr, command
        assert b"\x1b[1;36m2026 T1 Quiz 1, Q13\x1b[0m" in b"".join(chunks), command
