"""The README's examples are right: every ``$ quiz …`` of a console block prints what the README
shows, every deterministic ``quiz`` command of its shell blocks runs, and its test command is the one
CI runs."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.DOTALL | re.MULTILINE)
QUIZ = [sys.executable, "-c", "from attnquiz.main import main; main()"]
DETERMINISTIC = {"list", "show", "answer", "generators", "schema"}
"""Commands whose output depends only on their arguments and the banks (no history, no clock, no
random seed chosen for you, no files written)."""


def blocks(language: str) -> list[tuple[int, str]]:
    text = README.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, m.start()) + 1, m.group(2))
        for m in FENCE.finditer(text)
        if m.group(1) == language
    ]


def console_examples() -> list[tuple[int, str, str]]:
    """Each ``$ command`` of a console block, with the lines printed after it."""
    examples = []
    for line, body in blocks("console"):
        for chunk in re.split(r"^(?=\$ )", body, flags=re.MULTILINE):
            if chunk.strip():
                command, _, output = chunk.partition("\n")
                examples.append((line, command.removeprefix("$ "), output.rstrip("\n")))
    return examples


def shell_commands() -> list[tuple[int, str]]:
    """The deterministic ``quiz`` commands of the shell blocks, without their comments or redirection."""
    found = []
    for line, body in blocks("sh"):
        for offset, text in enumerate(body.splitlines()):
            words = shlex.split(text, comments=True)
            if len(words) > 1 and words[0] == "quiz" and words[1] in DETERMINISTIC:
                found.append(
                    (line + 1 + offset, shlex.join(words[: words.index(">")] if ">" in words else words))
                )
    return found


def run(command: str, home: Path) -> subprocess.CompletedProcess[str]:
    words = shlex.split(command)
    assert words[0] == "quiz", command
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUIZ_") and k != "NO_COLOR"}
    env.update(QUIZ_HOME=str(home), NO_COLOR="1", COLUMNS="80", TERM="dumb")
    return subprocess.run(
        [*QUIZ, *words[1:]], capture_output=True, text=True, env=env, timeout=300, check=False, cwd=home
    )


EXAMPLES = console_examples()
COMMANDS = shell_commands()


def test_the_readme_shows_outputs_and_commands() -> None:
    assert len(EXAMPLES) >= 2
    assert any("params-chain" in command for _, command, _ in EXAMPLES)
    assert len(COMMANDS) >= 5


@pytest.mark.parametrize(("line", "command", "output"), EXAMPLES, ids=[f"line{e[0]}" for e in EXAMPLES])
def test_every_console_example_prints_what_the_readme_shows(
    line: int, command: str, output: str, tmp_path: Path
) -> None:
    result = run(command, tmp_path)
    assert result.returncode == 0, f"README line {line}: {command}\n{result.stderr}"
    assert result.stdout.rstrip("\n") == output, f"README line {line}: {command}"


@pytest.mark.parametrize(("line", "command"), COMMANDS, ids=[f"line{c[0]}" for c in COMMANDS])
def test_every_deterministic_shell_command_runs(line: int, command: str, tmp_path: Path) -> None:
    result = run(command, tmp_path)
    assert result.returncode == 0, f"README line {line}: {command}\n{result.stderr}"
    assert result.stdout.strip(), f"README line {line}: {command} printed nothing"


def test_the_two_set_up_commands_are_there_and_the_test_one_is_what_ci_runs() -> None:
    text = README.read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    setups = [body.strip() for _, body in blocks("sh") if body.strip().startswith("python3 -m venv")]
    assert len(setups) == 2, setups
    assert setups[1] == ci
    assert "source .venv/bin/activate" in text  # a new shell finds `quiz` only once it is activated
