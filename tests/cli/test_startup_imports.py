"""Start-up: what `quiz --help`, `quiz list` and the first question import, and the plain conversion of
command-line values that keeps pydantic out of them (behaviour, not time: time is in bench/)."""

from __future__ import annotations

import enum
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
import typer
import typer.main
from typer._click import Context
from typer._coercion import build_runtime_param

from attnquiz import coercion, group_help, typer_app
from attnquiz.main import app

HEAVY = {"numpy", "pydantic", "yaml", "sympy", "starlette", "typst", "rich"}
COMMAND_MODULES = {
    f"attnquiz.{name}"
    for name in (
        "practice_commands",
        "lookup_commands",
        "answer_command",
        "exporting",
        "scanning",
        "authoring",
    )
} | {"attnquiz.generators", "attnquiz.serve"}
"""The modules declaring quiz's commands to typer: only the one whose command typer builds is
imported (help imports all); a command that `attnquiz.plain_parsing` runs imports none."""
WORK_MODULES = {"attnquiz.practice", "attnquiz.lookup", "attnquiz.answer"}
"""The modules doing the work of the commands students type most (no typer in them)."""

DRAWING = {"typer", "rich.console"}
"""typer, and rich's console (rich's cell widths alone are a table, imported to fold text)."""

# Runs quiz as its console script does, then prints on stderr the heavy packages it imported (and
# the command modules, as "attnquiz.lookup_commands" and so on, the work modules, and typer).
PROBE = (
    "import sys, atexit, json\n"
    f"heavy, commands = set({sorted(HEAVY)!r}), set({sorted(COMMAND_MODULES | WORK_MODULES | DRAWING)!r})\n"
    "atexit.register(lambda: print('IMPORTED ' + json.dumps(sorted(({m.split('.')[0] for m in sys.modules}"
    " & heavy) | (set(sys.modules) & commands))), file=sys.stderr))\n"
    "from attnquiz.main import main\n"
    "main()\n"
)


def probe(
    home: Path, *args: str, stdin: str = "", **env: str
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run ``quiz ARGS`` in a fresh process; its result and the heavy packages it imported."""
    done, line = probed(PROBE, "IMPORTED ", home, *args, stdin=stdin, env=env)
    return done, set(json.loads(line))


def probed(
    script: str,
    mark: str,
    home: Path,
    *args: str,
    stdin: str = "",
    unset: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> tuple[subprocess.CompletedProcess[str], str]:
    """Run ``script`` (which runs quiz with ``ARGS``) in a fresh process, with the environment's
    ``unset`` names removed and ``env`` added; its result and what it printed on stderr after ``mark``."""
    environment = {**os.environ, "QUIZ_HOME": str(home), "NO_COLOR": "1", "COLUMNS": "80"}
    for name in ("QUIZ_NO_CACHE", *unset):
        environment.pop(name, None)
    environment.update(env or {})
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )
    [line] = [line for line in done.stderr.splitlines() if line.startswith(mark)] or [done.stderr]
    return done, line.removeprefix(mark)


def heavy(imported: set[str]) -> set[str]:
    """The heavy packages among what `probe` saw imported."""
    return imported & HEAVY


def test_help_imports_none_of_the_heavy_packages(tmp_path: Path) -> None:
    for args in (["--help"], ["list", "--help"], ["run", "--help"], ["answer", "--help"], ["--version"]):
        done, imported = probe(tmp_path, *args)
        assert done.returncode == 0, done.stderr
        assert heavy(imported) == set(), args


@pytest.mark.parametrize(
    ("args", "module"),
    [
        (["list", "--help"], "attnquiz.lookup_commands"),
        (["run", "--help"], "attnquiz.practice_commands"),
        (["answer", "--help"], "attnquiz.answer_command"),
        (["export", "--help"], "attnquiz.exporting"),
        (["serve", "--help"], "attnquiz.serve"),
    ],
)
def test_a_command_imports_only_its_own_module(tmp_path: Path, args: list[str], module: str) -> None:
    done, imported = probe(tmp_path, *args)
    assert done.returncode == 0, done.stderr
    assert imported & COMMAND_MODULES == {module}


def test_the_command_list_imports_no_command_module_and_not_typer(tmp_path: Path) -> None:
    for args in (["--help"], ["-h"]):
        done, imported = probe(tmp_path, *args)
        assert done.returncode == 0, done.stderr
        assert imported & COMMAND_MODULES == set()  # each command's first line is read from its source
        assert "  list        List a bank's items" in done.stdout
        assert [
            line.split()[0] for line in done.stdout.split("Commands:")[1].splitlines() if line.strip()
        ] == [name for name, _, _ in group_help.COMMANDS]
    done, line = probed(
        "import sys, atexit\n"
        "atexit.register(lambda: print('TYPER', 'typer' in sys.modules, file=sys.stderr))\n"
        "from attnquiz.main import main\nmain()\n",
        "TYPER ",
        tmp_path,
        "--help",
    )
    assert line.strip() == "False"


@pytest.mark.parametrize("columns", [*range(10, 130, 3), 200, 1000])
def test_the_help_page_without_typer_is_typers_at_every_width(
    columns: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The page `quiz --help` prints without typer is the one typer prints, at every terminal width."""
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.setenv("LINES", "24")
    # Typer's own page, in this process (click's test runner would force a width of 80).
    typer.main.get_command(app).main(["--help"], prog_name="quiz", standalone_mode=False)
    assert capsys.readouterr().out == group_help.group_help()
    assert group_help.group_help(columns) == group_help.group_help()


def test_each_commands_summary_is_read_from_its_source_as_python_reads_it() -> None:
    import importlib
    import inspect

    for _, module, function in group_help.COMMANDS:
        imported = getattr(importlib.import_module(f"attnquiz.{module}"), function)
        first_paragraph = (inspect.getdoc(imported) or "").split("\n\n")[0]
        assert group_help.summary(module, function) == first_paragraph, function


def test_the_command_list_says_what_typer_says_of_the_built_commands() -> None:
    """`quiz --help` takes each command's line from its docstring: the line typer gives once built."""
    for width in (80, 40, 200):
        group = typer.main.get_command(app)
        lazy = group.get_help(Context(group, terminal_width=width, max_content_width=width))
        assert isinstance(group, typer_app.QuizGroup)
        assert isinstance(group.commands, typer_app.LazyCommands)
        assert group.commands.built == {}
        built = dict(group.commands.items())  # every command built
        assert set(built) == {name for name, _, _ in group_help.COMMANDS}
        assert group.get_help(Context(group, terminal_width=width, max_content_width=width)) == lazy


def test_an_unknown_command_is_refused_with_the_closest_names(tmp_path: Path) -> None:
    done, imported = probe(tmp_path, "lsit", "week1")
    assert done.returncode == 2
    assert "No such command 'lsit'. Did you mean 'list'?" in done.stderr
    assert heavy(imported) == set()


@pytest.mark.parametrize("bank", ["week1", "week2"])
def test_listing_a_bank_with_a_warm_cache_needs_no_numpy_pydantic_or_yaml(tmp_path: Path, bank: str) -> None:
    cold, cold_imported = probe(tmp_path, "list", bank)  # the first listing builds the index
    assert cold.returncode == 0, cold.stderr
    assert {"numpy", "pydantic", "yaml"} <= cold_imported
    warm, imported = probe(tmp_path, "list", bank)
    assert warm.returncode == 0, warm.stderr
    # Drawn without rich's console (`attnquiz.light_lines`); no numpy, pydantic, yaml, sympy, typst.
    assert heavy(imported) <= {"rich"}
    assert "rich.console" not in imported
    # Parsed without typer (attnquiz.plain_parsing): only the work of `quiz list` is imported.
    assert imported & (COMMAND_MODULES | WORK_MODULES | {"typer"}) == {"attnquiz.lookup"}
    uncached, _ = probe(tmp_path, "list", bank, QUIZ_NO_CACHE="1")
    assert warm.stdout == cold.stdout == uncached.stdout
    warm_json, imported = probe(tmp_path, "list", bank, "--json")
    assert imported & {"numpy", "pydantic", "yaml", "rich", "typer"} == set()  # rich only to draw
    uncached_json, _ = probe(tmp_path, "list", bank, "--json", QUIZ_NO_CACHE="1")
    assert json.loads(warm_json.stdout) == json.loads(uncached_json.stdout)
    assert warm_json.stdout == uncached_json.stdout


def test_the_first_question_imports_no_yaml_sympy_or_web_pieces(tmp_path: Path) -> None:
    probe(tmp_path, "run", "week1", "--seed", "1", stdin="q\n")  # fills the bank cache
    done, imported = probe(tmp_path, "run", "week1", "--seed", "1", "--count", "3", stdin="q\n")
    assert "Give " in done.stdout or "Choose one" in done.stdout or "Select all" in done.stdout, done.stdout
    assert imported & {"yaml", "sympy", "starlette", "typst"} == set()
    assert imported & (COMMAND_MODULES | WORK_MODULES | {"typer"}) == {"attnquiz.practice"}


def test_an_original_shown_and_a_formula_answered_import_no_yaml_sympy_or_typst(tmp_path: Path) -> None:
    probe(tmp_path, "list", "week1")  # fills the bank cache
    done, imported = probe(tmp_path, "show", "week1", "additive-score", "--original")
    assert done.returncode == 0, done.stderr
    assert "Answer: 1.93" in done.stdout
    assert imported & {"yaml", "sympy", "starlette", "typst"} == set()
    assert imported & (COMMAND_MODULES | WORK_MODULES | {"typer"}) == {"attnquiz.lookup"}
    args = ["answer", "week1", "block-params-formula", "--seed", "1", "--", "d(12d + 13)"]
    done, imported = probe(tmp_path, *args)
    assert done.returncode == 0, done.stderr
    assert "Correct" in done.stdout
    assert imported & {"yaml", "sympy", "starlette", "typst"} == set()
    assert imported & (COMMAND_MODULES | WORK_MODULES | {"typer"}) == {"attnquiz.answer"}


@pytest.mark.parametrize(
    "args",
    [
        ["show", "week1", "additive-score", "--original", "--json"],
        ["answer", "week1", "block-params-formula", "--seed", "1", "--json", "--", "d(12d + 13)"],
    ],
)
def test_json_output_imports_no_rich(tmp_path: Path, args: list[str]) -> None:
    """rich is imported only where it draws: JSON for scripts is printed without it."""
    probe(tmp_path, *args)  # fills the bank cache
    done, imported = probe(tmp_path, *args)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)
    assert imported & {"rich", "typer", "yaml", "sympy"} == set()


# ---------------------------------------------------------------------------------------------
# Plain conversion gives what typer's own converter gives, value for value and error for error
# ---------------------------------------------------------------------------------------------


class Colour(enum.Enum):
    red = "red"
    green = "green"


extra = typer.Typer()


@extra.command()
def _extra(
    mode: Annotated[Literal["fast", "slow"], typer.Option()] = "fast",
    colour: Annotated[Colour, typer.Option(case_sensitive=False)] = Colour.red,
    clamped: Annotated[int, typer.Option(min=1, max=5, clamp=True)] = 3,
    parsed: Annotated[int, typer.Option(parser=lambda text: int(text) * 2)] = 0,
    unbounded: Annotated[int, typer.Option()] = 0,
    ratio: Annotated[float, typer.Option(min=0)] = 0.5,
    path: Annotated[Path | None, typer.Option()] = None,
    names: Annotated[list[str] | None, typer.Option()] = None,
) -> None:
    """Annotations quiz does not use (yet), to compare the plain conversion with typer's."""


VALUES: list[Any] = [
    None, "", " ", "0", "1", "5", "007", "-1", "+1", " 5", "5 ", "1_000", "1e3", "1.0", "abc", "٣",
    "500", "501", "4294967295", "4294967296", "9" * 18, "9" * 19, "9" * 40,
    "always", "ALWAYS", "wrong", "never", "bad", "red", "RED", "fast", "FAST",
    0, 3, -3, 10, True, False, 2.5, ("a", "b"), ["x"], "a\x00b", "ü", b"bytes",
]  # fmt: skip


def _outcome(convert: Any, value: Any, param: Any, ctx: Context) -> tuple[Any, ...]:
    try:
        result = convert.coerce(value, param=param, ctx=ctx)
    except Exception as exc:  # the error is part of the behaviour compared
        return ("error", type(exc).__name__, str(exc))
    return ("value", type(result).__name__, result)


def _parameters() -> list[tuple[str, Any, Any]]:
    found = []
    group = typer.main.get_command(app)
    commands = [(name, command) for name, command in group.commands.items()]  # type: ignore[attr-defined]
    commands += [("(group)", group), ("(extra)", typer.main.get_command(extra))]
    for name, command in commands:
        ctx = Context(command)
        for param in command.get_params(ctx):
            if (
                getattr(param, "type_descriptor", None) is not None
                and param.type_descriptor.file_annotation is None
            ):
                found.append((f"{name} {param.name}", command, param))
    return found


@pytest.mark.parametrize(
    ("label", "command", "param"), _parameters(), ids=lambda x: x if isinstance(x, str) else ""
)
def test_plain_conversion_gives_what_typer_gives(label: str, command: Any, param: Any) -> None:
    ctx = Context(command)
    real = build_runtime_param(param.type_descriptor)
    plain = coercion._PlainRuntimeParam(
        parameter_info=param.type_descriptor.parameter_info, annotation=param.type_descriptor.annotation
    )
    for value in VALUES:
        assert _outcome(plain, value, param, ctx) == _outcome(real, value, param, ctx), (label, value)


def test_plain_conversion_handles_the_values_quiz_commands_get() -> None:
    """Not a vacuous comparison: bank names, seeds, counts and choices never reach typer's converter."""
    params = {label: param for label, _, param in _parameters()}
    cases = [
        ("list bank", "week1", "week1"),
        ("run bank", "./my bank.yaml", "./my bank.yaml"),
        ("run seed", "42", 42),
        ("run seed", "0", 0),
        ("run count", "500", 500),
        ("run solutions", "never", "never"),
        ("show seed", 7, 7),
        ("answer responses", ("d(12d + 13)",), ["d(12d + 13)"]),
        ("answer responses", ("64", "-0.5"), ["64", "-0.5"]),
        ("answer responses", (), []),
        ("run item", ("additive-score", "concat-width"), ["additive-score", "concat-width"]),
    ]
    for label, value, expected in cases:
        info = params[label].type_descriptor
        result = coercion.plain_value(info.annotation, info.parameter_info, value)
        assert result == expected, label
    for label, value in [
        ("run seed", "-1"),
        ("run count", "501"),
        ("run count", "1_0"),
        ("run solutions", "no"),
        ("answer responses", "d"),
        ("answer responses", ("a", 1)),
    ]:
        info = params[label].type_descriptor
        assert coercion.plain_value(info.annotation, info.parameter_info, value) is coercion._UNHANDLED


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["run", "week1", "--seed", "-1"],
            "Invalid value for '--seed' / '-s': Input should be greater than or equal to 0",
        ),
        (
            ["run", "week1", "--count", "0"],
            "Invalid value for '--count' / '-n': Input should be greater than or equal to 1",
        ),
        (
            ["run", "week1", "--count", "x"],
            "Invalid value for '--count' / '-n': Input should be a valid integer",
        ),
        (["run", "week1", "--solutions", "bad"], "Invalid value for '--solutions'"),
    ],
)
def test_a_bad_value_is_refused_in_typers_own_words(tmp_path: Path, args: list[str], message: str) -> None:
    done, _ = probe(tmp_path, *args)
    assert done.returncode == 2
    assert message in " ".join(done.stderr.split())


def test_a_cached_bank_imports_only_the_generators_of_the_questions_asked(tmp_path: Path) -> None:
    """An item read back from the cache looks its generator up when first used; its questions are the
    ones the bank read from its file gives."""
    code = (
        "import json, sys\n"
        "from attnquiz.engine.bank import finding as banks\n"
        "bank = banks.load('week1')\n"
        "def loaded(): return sorted(m for m in sys.modules if m.startswith('attnquiz.engine.generators.'))\n"
        "before = loaded()\n"
        "entry = bank.get('concat-width')\n"
        "question = entry.question(7).to_json()\n"
        "print(json.dumps({'before': before, 'after': loaded(), 'question': question,"
        " 'names': [e.spec.name for e in bank.items]}))\n"
    )
    environment = {**os.environ, "QUIZ_HOME": str(tmp_path)}
    environment.pop("QUIZ_NO_CACHE", None)

    def run(**env: str) -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, "-c", code],
            env={**environment, **env},
            capture_output=True,
            text=True,
            check=True,
        )
        result: dict[str, Any] = json.loads(done.stdout)
        return result

    cold, warm, uncached = run(), run(), run(QUIZ_NO_CACHE="1")
    assert len(cold["before"]) > 10  # read from the file: every generator checked
    # Read back from the cache: no generator looked up yet, and no item's parameters read (they are
    # pickled apart, item by item: the statement pools of other items need their module).
    assert warm["before"] == []
    assert 0 < len(warm["after"]) - len(warm["before"]) <= 3  # the item's own module (and what it imports)
    assert warm["question"] == cold["question"] == uncached["question"]
    assert warm["names"] == cold["names"] == uncached["names"]  # every generator still found on use


THREADS_PROBE = (
    "import atexit, os, sys\n"
    "atexit.register(lambda: print('THREADS', len(os.listdir('/proc/self/task')),"
    " os.environ.get('OPENBLAS_NUM_THREADS'), 'numpy' in sys.modules, file=sys.stderr))\n"
    "from attnquiz.main import main\n"
    "main()\n"
)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc")
@pytest.mark.parametrize(("given", "kept"), [(None, "1"), ("3", "3")])
def test_a_command_that_computes_runs_in_one_thread_unless_the_user_asks(
    tmp_path: Path, given: str | None, kept: str
) -> None:
    # numpy's OpenBLAS starts a pool of threads when imported; quiz's matrices are tiny, and its
    # worker processes are forked from a process that must have one thread. A user's own setting wins.
    setting = {} if given is None else {"OPENBLAS_NUM_THREADS": given}
    args = ("show", "week1", "additive-score", "--original")
    unset = ("OPENBLAS_NUM_THREADS",)
    done, line = probed(THREADS_PROBE, "THREADS ", tmp_path, *args, unset=unset, env=setting)
    assert done.returncode == 0, done.stderr
    threads, kept_setting, numpy_imported = line.split()
    assert numpy_imported == "True"
    assert kept_setting == kept
    if given is None:
        assert threads == "1"
