"""`quiz run`, `list`, `show` and `answer` parsed without typer: the same parameters as typer's, the
same command declarations, and everything else left to typer (behaviour, not time)."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
import typer.main

from attnquiz import plain_parsing
from attnquiz.main import app
from attnquiz.practice import Solutions
from attnquiz.typer_app import build_command

ARGV = [
    ["list"],
    ["list", "week1"],
    ["list", "week1", "--json"],
    ["list", "--json", "./my bank.yaml"],
    ["show", "week1", "additive-score", "--original"],
    ["show", "week1", "additive-score", "--seed", "7", "--solution"],
    ["show", "--seed=0", "week1", "additive-score", "--json"],
    ["show", "week1", "additive-score", "-s", "4294967295", "--code", "AB12-0001"],
    ["answer", "week1", "block-params-formula", "--seed", "1", "--", "d(12d + 13)"],
    ["answer", "week1", "params-chain", "--original", "64", "32768", "1050624"],
    ["answer", "week1", "additive-score", "--original"],
    ["answer", "week1", "additive-score", "-"],
    ["answer", "week1", "x", "--code", "AB12-0001", "--json", "--", "--seed", "-0.5"],
    ["run", "week1"],
    ["run"],
    ["run", "--resume"],
    ["run", "week1", "--seed", "42", "--count", "5", "--topic", "multi-head-attention"],
    ["run", "week1", "-i", "additive-score", "--item", "concat-width", "-n", "500", "--json"],
    ["run", "week1", "--exam", "--time", "20m", "--solutions", "always", "--no-history"],
    ["run", "week1", "--original", "--solutions=never", "-t", "x", "-s", "0"],
]
"""Plain arguments: parsed here, to the values typer passes."""

LEFT_TO_TYPER = [
    ["--help"],
    ["--version"],
    ["list", "--help"],
    ["list", "-h"],
    ["list", "a", "b"],
    ["show", "week1"],
    ["show", "week1", "x", "--seed", "-1"],
    ["show", "week1", "x", "--seed", "+1"],
    ["show", "week1", "x", "--seed", "1_0"],
    ["show", "week1", "x", "--seed", "4294967296"],
    ["show", "week1", "x", "--seed", "1", "--seed", "2"],
    ["show", "week1", "x", "--seed"],
    ["show", "week1", "x", "--original=1"],
    ["show", "week1", "x", "-s5"],
    ["answer", "week1", "x", "-0.5"],
    ["answer", "week1", "x", "--file", "a.py"],
    ["run", "week1", "--count", "0"],
    ["run", "week1", "--count", "501"],
    ["run", "week1", "--solutions", "ALWAYS"],
    ["run", "week1", "--db", "h.sqlite3"],
    ["run", "week1", "--topic", "-x"],
    ["run", "week1", "--plain"],
    ["--plain", "--plain", "run", "week1"],
    ["review", "week1"],
    ["export", "week1"],
    ["lsit", "week1"],
]


def _recorder(calls: list[dict[str, Any]]) -> Any:
    def record(**values: Any) -> None:
        calls.append(values)

    return record


def _patched(monkeypatch: pytest.MonkeyPatch, calls: list[dict[str, Any]]) -> None:
    """Every command's work replaced by one that records the values it is given."""
    for command in plain_parsing.COMMANDS.values():
        module = importlib.import_module(f"attnquiz.{command.module}")
        monkeypatch.setattr(module, command.function, _recorder(calls))


@pytest.mark.parametrize("argv", ARGV, ids=" ".join)
def test_plain_arguments_give_the_values_typer_gives(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[dict[str, Any]] = []
    _patched(monkeypatch, calls)
    typer.main.get_command(app).main(argv, prog_name="quiz", standalone_mode=False)
    run = plain_parsing.plain_command(argv)
    assert run is not None
    with pytest.raises(SystemExit) as ended:
        run()
    assert ended.value.code == 0
    by_typer, plain = calls
    assert plain == by_typer
    assert {name: type(value) for name, value in plain.items()} == {
        name: type(value) for name, value in by_typer.items()
    }


@pytest.mark.parametrize("argv", LEFT_TO_TYPER, ids=" ".join)
def test_anything_else_is_left_to_typer(argv: list[str]) -> None:
    assert plain_parsing.plain_command(argv) is None


def test_plain_before_the_command_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []
    _patched(monkeypatch, calls)
    plained: list[bool] = []
    monkeypatch.setattr("attnquiz.terminal.set_plain", lambda: plained.append(True))
    run = plain_parsing.plain_command(["--plain", "list", "week1"])
    assert run is not None
    with pytest.raises(SystemExit):
        run()
    assert plained == [True]
    assert calls == [{"bank": "week1", "as_json": False}]


@pytest.mark.parametrize("name", sorted(plain_parsing.COMMANDS))
def test_the_tables_say_what_typer_declares(name: str) -> None:
    """Each option parsed here is the command's own (names, kind, range); each parameter not parsed
    here is given typer's default."""
    command = plain_parsing.COMMANDS[name]
    built = build_command(name)
    params = {param.name: param for param in built.params if param.name not in {"help"}}
    arguments = [param.name for param in built.params if param.param_type_name == "argument"]
    assert arguments == [*command.arguments, *([command.variadic] if command.variadic else [])]
    assert sum(params[name].required for name in arguments) == command.required
    for option in command.options:
        param = params[option.name]
        assert set(option.flags) == set(param.opts)
        assert param.multiple == (option.kind == "texts")
        assert getattr(param, "is_flag", False) == (option.kind == "flag")
        info = param.type_descriptor.parameter_info  # type: ignore[attr-defined]
        if option.kind == "whole":
            assert (option.low, option.high) == (info.min, info.max)
        elif option.kind == "choice":
            assert set(option.choices) == {member.value for member in Solutions}
        else:
            assert (info.min, info.max) == (None, None)
    parsed = {option.name for option in command.options} | set(arguments)
    for left in set(params) - parsed:
        assert left in command.defaults
    for default in command.defaults:
        assert params[default].default in {None, command.defaults[default]}


def _raising(exc: BaseException) -> Any:
    def work(**values: Any) -> None:
        raise exc

    return work


@pytest.mark.parametrize(
    "exc",
    [
        EOFError(),
        KeyboardInterrupt(),
        typer.Exit(3),
        typer.Abort(),
        typer.BadParameter("no such thing"),
    ],
    ids=lambda exc: type(exc).__name__,
)
def test_a_command_ends_as_typers_standalone_mode_ends_it(
    exc: BaseException, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Whatever the work raises, the status and the words are typer's."""
    monkeypatch.setattr("attnquiz.lookup.list_bank", _raising(exc))
    with pytest.raises(SystemExit) as by_typer:
        typer.main.get_command(app).main(["list", "week1"], prog_name="quiz")
    typer_said = capsys.readouterr()
    run = plain_parsing.plain_command(["list", "week1"])
    assert run is not None
    with pytest.raises(SystemExit) as plain:
        run()
    assert plain.value.code == by_typer.value.code
    assert capsys.readouterr() == typer_said


def test_a_bug_in_the_work_is_raised_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("attnquiz.lookup.list_bank", _raising(ZeroDivisionError("bug")))
    run = plain_parsing.plain_command(["list", "week1"])
    assert run is not None
    with pytest.raises(ZeroDivisionError):
        run()
