"""A hostile and odd corpus of plugins: every failure is told at the line of the bank's own code, with
the traceback of that code only (never quiz's or numpy's frames), and one error is said once."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attnquiz.engine.bank.loader import load_bank_file
from attnquiz.engine.errors import BankError, GeneratorRunError
from attnquiz.main import app

HEAD = """\
import sys
import numpy as np
from attnquiz.engine.answers.kinds import IntegerAnswer
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant
"""

BANK = """bank: week3
title: Week 3
plugins: [gens.py]
items:
  - id: entries
    source: "My worked problem"
    topic: complexity
    generator: my_entries
    params: {high: 5}
"""


def generator_body(body: str) -> str:
    """A plugin whose generator ``my_entries`` runs ``body`` (indented into it)."""
    inner = "\n".join(f"    {line}" for line in body.strip("\n").splitlines())
    return (
        HEAD
        + "\n\n@generator\n"
        + "def my_entries(rng: np.random.Generator, /, *, low: int = 2, high: int = 9) -> Variant:\n"
        + '    """Count entries."""\n'
        + inner
        + "\n"
    )


def write(tmp_path: Path, plugin: str) -> Path:
    (tmp_path / "gens.py").write_text(plugin, encoding="utf-8")
    bank = tmp_path / "week3.yaml"
    bank.write_text(BANK, encoding="utf-8")
    return bank


def line_of(plugin: str, text: str) -> int:
    """The 1-based line of ``plugin`` that holds ``text``."""
    return next(n for n, line in enumerate(plugin.splitlines(), 1) if text in line)


def run_error(tmp_path: Path, plugin: str) -> str:
    bank = load_bank_file(write(tmp_path, plugin), plugins=True)
    with pytest.raises(GeneratorRunError) as caught:
        bank.get("entries").question(3)
    return str(caught.value)


def load_error(tmp_path: Path, plugin: str) -> BankError:
    with pytest.raises(BankError) as caught:
        load_bank_file(write(tmp_path, plugin), shown_as="week3.yaml", plugins=True)
    return caught.value


HELPER = (
    HEAD
    + '''

def helper(t):
    return t // 0


@generator
def my_entries(rng: np.random.Generator, /, *, low: int = 2, high: int = 9) -> Variant:
    """Count entries."""
    t = int(rng.integers(low, high + 1))
    return Variant(prompt="How many?", answer=IntegerAnswer(helper(t)), solution=["t^2"])
'''
)


def test_an_exception_in_a_generator_is_at_the_banks_line_with_its_traceback(tmp_path: Path) -> None:
    message = run_error(tmp_path, HELPER)
    gens = tmp_path.resolve() / "gens.py"
    first, *trace = message.splitlines()
    assert first.startswith(f"{gens}:{line_of(HELPER, 't // 0')}: item 'entries': generator 'my_entries' ")
    assert "raised ZeroDivisionError: integer division or modulo by zero (seed=3, " in first
    assert trace == [
        "Traceback of the bank's own code (most recent call last):",
        f'  File "{gens}", line {line_of(HELPER, "helper(t))")}, in my_entries',
        '    return Variant(prompt="How many?", answer=IntegerAnswer(helper(t)), solution=["t^2"])',
        f'  File "{gens}", line {line_of(HELPER, "t // 0")}, in helper',
        "    return t // 0",
    ]


@pytest.mark.parametrize(
    ("body", "raised", "failing"),
    [
        # numpy's own frames under the plugin's line are not the bank's code
        ("np.linalg.inv(np.zeros((2, 2)))", "LinAlgError: Singular matrix", "np.linalg.inv"),
        # quiz's frames (the answer refusing its value) are not either
        ('return Variant(prompt="x", answer=IntegerAnswer("many"), solution=["y"])', "ValueError", "many"),
        # an exit is an error of the variant, not quiz's exit
        ('sys.exit("bye")', "SystemExit: bye", "sys.exit"),
        ("raise KeyError('w_o')", "KeyError: 'w_o'", "raise KeyError"),
        ("return None", "", ""),
    ],
)
def test_only_the_banks_frames_are_shown(tmp_path: Path, body: str, raised: str, failing: str) -> None:
    plugin = generator_body(body)
    if not failing:  # a generator that returns no Variant: the rules say so, at no line of quiz's
        bank = load_bank_file(write(tmp_path, plugin), plugins=True)
        with pytest.raises(GeneratorRunError, match="returned NoneType, not a Variant") as caught:
            bank.get("entries").question(0)
        assert str(caught.value).startswith(
            f"{tmp_path.resolve() / 'gens.py'}:{line_of(plugin, 'def my_entries')}:"
        )
        assert "Traceback" not in str(caught.value)
        return
    message = run_error(tmp_path, plugin)
    first = message.splitlines()[0]
    assert f"gens.py:{line_of(plugin, failing)}: item 'entries'" in first
    assert raised in first
    files = re.findall(r'File "([^"]+)"', message)
    assert files, message
    assert all(Path(f).name == "gens.py" for f in files), message
    assert "attnquiz" not in message
    assert "numpy" + "/" not in message


def test_a_recursion_is_one_frame_and_a_count(tmp_path: Path) -> None:
    plugin = HEAD + "\n\ndef f(n):\n    return f(n + 1)\n\n\n" + generator_body("return f(0)")[len(HEAD) :]
    message = run_error(tmp_path, plugin)
    lines = message.splitlines()
    assert lines[0].split(": item")[0].endswith(f"gens.py:{line_of(plugin, 'return f(n + 1)')}")
    assert "RecursionError: maximum recursion depth exceeded" in lines[0]
    assert len(lines) <= 8, message
    assert re.fullmatch(r"  \[the line above repeated [\d,]+ more times\]", lines[-1]), lines[-1]


def test_mutual_recursion_is_cut_in_the_middle(tmp_path: Path) -> None:
    plugin = (
        HEAD
        + "\n\ndef ping(n):\n    return pong(n + 1)\n\n\ndef pong(n):\n    return ping(n + 1)\n\n\n"
        + generator_body("return ping(0)")[len(HEAD) :]
    )
    lines = run_error(tmp_path, plugin).splitlines()
    assert len(lines) < 30
    assert any(re.fullmatch(r"  \.\.\. [\d,]+ more calls of the bank's code \.\.\.", line) for line in lines)


def test_a_hostile_message_is_one_bounded_printable_line(tmp_path: Path) -> None:
    plugin = generator_body(
        "raise RuntimeError('\\x1b]52;c;aGk=\\x07' + 'x' * 100000 + '\\nsecond line')" + " " * 400 + "# long"
    )
    message = run_error(tmp_path, plugin)
    first = message.splitlines()[0]
    assert "\x1b" not in message
    assert "\x07" not in message
    assert len(first) < 1000
    assert "more characters" in first
    assert "second line" not in first
    assert all(len(line) < 300 for line in message.splitlines()[1:])  # the source line quoted is cut too


def test_a_failure_while_importing_names_the_line_and_the_calls(tmp_path: Path) -> None:
    plugin = "def helper(n):\n    return helper(n + 1) if n < 5 else {}[n]\n\n\nhelper(0)\n"
    [issue] = load_error(tmp_path, plugin).issues
    assert issue.line == 3
    assert issue.field == "plugins[0]"
    gens = tmp_path / "gens.py"
    assert issue.message == (
        f"{gens}:2: KeyError: 5 (in helper, called from {tmp_path.resolve() / 'gens.py'}:2 (5 times), "
        f"from {tmp_path.resolve() / 'gens.py'}:5)"
    )


def test_a_recursion_while_importing_is_one_line(tmp_path: Path) -> None:
    [issue] = load_error(tmp_path, "def f():\n    return f()\n\n\nf()\n").issues
    assert "gens.py:2: RecursionError: maximum recursion depth exceeded" in issue.message
    assert "\n" not in issue.message
    assert len(issue.message) < 600


@pytest.mark.parametrize(
    ("plugin", "message"),
    [
        ("x = (\n", "gens.py:1:5: syntax error: '(' was never closed: `x = (`"),
        ("def f(:\n    pass\n", "gens.py:1:7: syntax error: invalid syntax: `def f(:`"),
        ("if True:\nprint(1)\n", "gens.py:2:1: syntax error: expected an indented block"),
        ("x = '\x1b[2J\n", "gens.py:1:5: syntax error: unterminated string literal"),
    ],
)
def test_a_syntax_error_is_the_only_error(tmp_path: Path, plugin: str, message: str) -> None:
    """No second "unknown generator 'my_entries' (did you mean ...?)": the plugin that would define
    it did not load, and its own error is the one to fix."""
    error = load_error(tmp_path, plugin)
    [issue] = error.issues
    assert issue.field == "plugins[0]"
    assert message in issue.message
    assert "\x1b" not in issue.message
    assert "1 error, nothing was run." in str(error)


def test_a_missing_plugin_is_the_only_error(tmp_path: Path) -> None:
    bank = tmp_path / "week3.yaml"
    bank.write_text(BANK.replace("gens.py", "nowhere.py"), encoding="utf-8")
    with pytest.raises(BankError) as caught:
        load_bank_file(bank, plugins=True)
    [issue] = caught.value.issues
    assert "cannot read" in issue.message


def test_an_unknown_generator_is_still_said_when_the_plugins_loaded(tmp_path: Path) -> None:
    error = load_error(tmp_path, generator_body("return None").replace("my_entries", "my_entrie"))
    [issue] = error.issues
    assert issue.message == "unknown generator 'my_entries' (did you mean 'my_entrie'?)"


def test_quizs_own_frames_are_never_the_banks(tmp_path: Path) -> None:
    """A bank in a folder that holds quiz's own source: quiz's frames are still not the bank's code."""
    from attnquiz.engine.answers.kinds import IntegerAnswer
    from attnquiz.engine.bank import tracebacks

    engine = Path(tracebacks.__file__).resolve().parent
    with pytest.raises(ValueError, match="many") as caught:
        IntegerAnswer("many")  # type: ignore[arg-type]
    inside_quiz = caught.tb.tb_next  # the frames below this test's own
    assert inside_quiz is not None
    assert tracebacks.bank_frames(inside_quiz, engine.parent) == []
    assert tracebacks.bank_frames(inside_quiz, engine) == []


def test_the_cli_shows_the_line_and_the_banks_traceback(tmp_path: Path) -> None:
    bank = write(tmp_path, HELPER)
    runner = CliRunner()
    shown = runner.invoke(app, ["show", str(bank), "entries", "--seed", "1"])
    assert shown.exit_code == 1
    assert "Traceback (most recent call last)" not in shown.output  # no Python traceback of quiz's
    assert f"gens.py:{line_of(HELPER, 't // 0')}: item 'entries'" in shown.output
    assert "    return t // 0" in shown.output
    checked = runner.invoke(app, ["check", str(bank), "--variants", "3"], env={"COLUMNS": "200"})
    assert checked.exit_code == 1
    # Under `quiz check` each line of the traceback is indented under its failure.
    assert "\n    File " in checked.output
    assert "\n      return t // 0" in checked.output


def test_the_cli_says_a_syntax_error_once(tmp_path: Path) -> None:
    bank = write(tmp_path, "x = (\n")
    result = CliRunner().invoke(app, ["show", str(bank), "entries"])
    assert result.exit_code == 1
    assert "unknown generator" not in result.output
    assert "1 error, nothing was run." in result.output
    assert sys.modules.get("gens") is None


@pytest.mark.parametrize(
    ("body", "said"),
    [
        # An exception whose own message cannot be made: the type still says what was raised.
        (
            "class Odd(Exception):\n    def __str__(self):\n        raise RuntimeError('no')\nraise Odd()",
            "raised Odd: (its message cannot be shown)",
        ),
        ("raise BaseException('bare')", "raised BaseException: bare"),
        ("raise MemoryError()", "raised MemoryError"),
    ],
)
def test_odd_exceptions_are_reported_not_raised(tmp_path: Path, body: str, said: str) -> None:
    message = run_error(tmp_path, generator_body(body))
    assert said in message.splitlines()[0]


def test_ctrl_c_and_an_exports_stop_go_on_up(tmp_path: Path) -> None:
    """The user's Ctrl-C, and the SIGTERM an export turns into its own SystemExit, are not the
    plugin's failure: they stop the command as they would without a plugin."""
    from attnquiz.engine.export.stopping import Terminated

    bank = load_bank_file(write(tmp_path, generator_body("raise KeyboardInterrupt")), plugins=True)
    with pytest.raises(KeyboardInterrupt):
        bank.get("entries").question(0)
    other = tmp_path / "other"  # another file: a plugin is imported once per file version
    other.mkdir()
    plugin = generator_body("from attnquiz.engine.export.stopping import Terminated\nraise Terminated()")
    bank = load_bank_file(write(other, plugin), plugins=True)
    with pytest.raises(Terminated):
        bank.get("entries").question(0)


@pytest.mark.parametrize(
    ("plugin", "said"),
    [
        ("x = (\n", "gens.py:1:5: syntax error"),
        ("def f():\n    return f()\n\n\nf()\n", "gens.py:2: RecursionError"),
        ("raise RuntimeError('at import')\n", "gens.py:1: RuntimeError: at import"),
        (HELPER, "raised ZeroDivisionError"),
        (
            HEAD + "\n\ndef f(n):\n    return f(n + 1)\n\n\n" + generator_body("return f(0)")[len(HEAD) :],
            "RecursionError",
        ),
    ],
    ids=["syntax", "import-recursion", "import-raise", "generator-raise", "generator-recursion"],
)
def test_quiz_check_tells_each_failure_at_its_line_without_quizs_traceback(
    tmp_path: Path, plugin: str, said: str
) -> None:
    """`quiz check` runs the plugins in a child process: the same located errors come back."""
    bank = write(tmp_path, plugin)
    result = CliRunner().invoke(app, ["check", str(bank), "--variants", "2"], env={"COLUMNS": "300"})
    assert result.exit_code == 1
    assert said in result.output
    assert "Traceback (most recent call last)" not in result.output
    assert "unknown generator" not in result.output
    for quizs_own in ("bank.py", "plugins.py", "check_worker.py", "importlib", "site-packages"):
        assert quizs_own not in result.output
