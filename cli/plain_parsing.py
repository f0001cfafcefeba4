"""`quiz run`, `list`, `show` and `answer` parsed without typer when their arguments are plain.

Importing typer (and the click it carries) and building a command cost a third of `quiz list`'s
start-up, for the commands students type most, with arguments as plain as ``quiz run week1 --seed
42``. This module parses those itself: positional arguments, the options listed here (a flag, a
whole number in its range, a text, a choice), ``--opt=value``, ``--`` and a ``--plain`` before the
command; then it calls the command's work (`attnquiz.practice`, `attnquiz.lookup`,
`attnquiz.answer`) as typer would and ends the process as typer's standalone mode does.

Anything else (``--help``, an unknown or repeated option, a value typer would refuse or convert
otherwise, a missing or an extra argument, a short option cluster, a value that starts with ``-``)
is given to typer, untouched, so every message, exit code and option stays typer's.
tests/cli/test_plain_parsing.py checks these tables against the commands typer builds and the
values parsed here against the ones typer passes.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Callable
from typing import Any, Literal, NoReturn

from msgspec import Struct, field

Kind = Literal["flag", "whole", "text", "texts", "choice"]


class PlainOption(Struct, frozen=True):
    """An option parsed here: its parameter, the names it is given by, and its kind of value."""

    name: str
    flags: tuple[str, ...]
    kind: Kind
    low: int = 0
    high: int = 0
    """For a whole number: its range (both ends included), as typer's ``min`` and ``max``."""
    choices: tuple[str, ...] = ()
    """For a choice: the values taken as typed (any other spelling is left to typer)."""


class PlainCommand(Struct, frozen=True):
    """A command parsed here: its work, its positional arguments and its options."""

    module: str
    """The module of ``attnquiz`` that does the command's work."""
    function: str
    arguments: tuple[str, ...]
    required: int
    """How many of ``arguments`` must be given."""
    options: tuple[PlainOption, ...]
    variadic: str = ""
    """The argument that takes every positional value left (``quiz answer``'s responses)."""
    defaults: dict[str, Any] = field(default_factory=dict)
    """The value of each parameter not given, as typer passes it (None unless said here)."""

    def option(self, flag: str) -> PlainOption | None:
        """The option named ``flag``, or None."""
        for option in self.options:
            if flag in option.flags:
                return option
        return None


SEED_RANGE = (0, 2**32 - 1)
VARIANT_OPTIONS = (
    PlainOption("seed", ("--seed", "-s"), "whole", *SEED_RANGE),
    PlainOption("code", ("--code",), "text"),
    PlainOption("original", ("--original",), "flag"),
)
JSON_OPTION = PlainOption("as_json", ("--json",), "flag")
SOLUTIONS = ("always", "wrong", "never")

COMMANDS: dict[str, PlainCommand] = {
    "list": PlainCommand("lookup", "list_bank", ("bank",), 0, (JSON_OPTION,)),
    "show": PlainCommand(
        "lookup",
        "show_item",
        ("bank", "item"),
        2,
        (*VARIANT_OPTIONS, PlainOption("solution", ("--solution",), "flag"), JSON_OPTION),
    ),
    "answer": PlainCommand(
        "answer",
        "answer_item",
        ("bank", "item"),
        2,
        (*VARIANT_OPTIONS, JSON_OPTION),
        variadic="responses",
        defaults={"file": None},
    ),
    "run": PlainCommand(
        "practice",
        "run_practice",
        ("bank",),
        0,
        (
            PlainOption("topic", ("--topic", "-t"), "text"),
            PlainOption("item", ("--item", "-i"), "texts"),
            PlainOption("count", ("--count", "-n"), "whole", 1, 500),
            PlainOption("seed", ("--seed", "-s"), "whole", *SEED_RANGE),
            PlainOption("original", ("--original",), "flag"),
            PlainOption("exam", ("--exam",), "flag"),
            PlainOption("time_limit", ("--time",), "text"),
            PlainOption("solutions", ("--solutions",), "choice", choices=SOLUTIONS),
            PlainOption("no_history", ("--no-history",), "flag"),
            PlainOption("as_json", ("--json",), "flag"),
            PlainOption("resume", ("--resume",), "flag"),
        ),
        defaults={"db": None, "solutions": "wrong"},
    ),
}
"""The commands parsed here; `attnquiz.practice_commands`, `attnquiz.lookup_commands` and
`attnquiz.answer_command` declare them to typer (a test compares both)."""


def plain_value(option: PlainOption, text: str) -> Any:
    """``text`` as ``option``'s value, or None when typer must judge it (or would convert it otherwise)."""
    if text.startswith("-"):
        return None  # typer takes it as the value (or says why not): left to it
    if option.kind == "whole":
        # Digits only, as a user types a seed or a count: signs, underscores, spaces, other scripts'
        # digits and numbers beyond int64 are typer's to convert or refuse.
        if not (text.isascii() and text.isdigit() and len(text) <= 18):
            return None
        number = int(text)
        return number if option.low <= number <= option.high else None
    if option.kind == "choice":
        return text if text in option.choices else None
    return text


def parse(command: PlainCommand, args: list[str]) -> dict[str, Any] | None:
    """The parameters of ``command`` given ``args``, as typer would pass them; None for typer to parse."""
    given: dict[str, Any] = {}
    positional: list[str] = []
    index = 0
    options_end = False
    while index < len(args):
        token = args[index]
        index += 1
        if options_end or token == "-" or not token.startswith("-"):
            positional.append(token)
            continue
        if token == "--":
            options_end = True
            continue
        flag, equals, attached = token.partition("=") if token.startswith("--") else (token, "", "")
        option = command.option(flag)
        if option is None:
            return None  # --help, an unknown option, a short cluster or a negative number: typer's
        if option.kind == "flag":
            if equals or option.name in given:
                return None
            given[option.name] = True
            continue
        if not equals:
            if index == len(args):
                return None  # an option without its value: typer says so
            attached = args[index]
            index += 1
        value = plain_value(option, attached)
        if value is None:
            return None
        if option.kind == "texts":
            given.setdefault(option.name, []).append(value)
        elif option.name in given:
            return None  # given twice: left to typer (which keeps the last)
        else:
            given[option.name] = value
    if len(positional) < command.required:
        return None
    if len(positional) > len(command.arguments) and not command.variadic:
        return None
    values: dict[str, Any] = dict.fromkeys(command.arguments)
    values.update(zip(command.arguments, positional, strict=False))
    if command.variadic:
        rest = positional[len(command.arguments) :]
        values[command.variadic] = rest or None
    for option in command.options:
        values[option.name] = False if option.kind == "flag" else None
    values.update(command.defaults)
    values.update(given)
    return values


def plain_command(argv: list[str]) -> Callable[[], NoReturn] | None:
    """What runs the command ``argv`` asks for without typer, or None when typer must parse it."""
    plain = False
    if argv[:1] == ["--plain"]:
        plain, argv = True, argv[1:]
    if not argv or argv[0] not in COMMANDS:
        return None
    command = COMMANDS[argv[0]]
    values = parse(command, argv[1:])
    if values is None:
        return None

    def run() -> NoReturn:
        if plain:
            from attnquiz.terminal import set_plain

            set_plain()
        run_as_typer_would(command, values)

    return run


def run_as_typer_would(command: PlainCommand, values: dict[str, Any]) -> NoReturn:
    """Run the command's work with ``values`` and end as typer's standalone mode ends a command:
    status 0, typer's ``Exit`` status, 130 for Ctrl-C, "Aborted!" for an end of input, 1 for a
    closed pipe (with typer's quiet streams)."""
    try:
        import importlib

        function = getattr(importlib.import_module(f"attnquiz.{command.module}"), command.function)
        if command.module == "practice":
            from attnquiz.practice import Solutions

            # Parsed as its text (the table names no class); typer passes the enum's member.
            values = {**values, "solutions": Solutions(values["solutions"])}
        function(**values)
    except EOFError:
        _say_aborted(newline=True)
    except KeyboardInterrupt:
        sys.exit(130)
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        from typer._click.utils import PacifyFlushWrapper

        sys.stdout = PacifyFlushWrapper(sys.stdout)
        sys.stderr = PacifyFlushWrapper(sys.stderr)
        sys.exit(1)
    except Exception as exc:
        if "typer" not in sys.modules:
            raise  # no typer exception can have been raised
        from typer import Abort, Exit
        from typer._click.exceptions import ClickException

        if isinstance(exc, Exit):
            sys.exit(exc.exit_code)
        if isinstance(exc, Abort):
            _say_aborted(newline=False)
        if isinstance(exc, ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        raise
    sys.exit(0)


def _say_aborted(*, newline: bool) -> NoReturn:
    """Typer's words for an aborted command (after an empty line for an end of input), and status 1."""
    stream = sys.stderr
    if stream is not None:
        stream.write(("\n" if newline else "") + "Aborted!\n")
        stream.flush()
    sys.exit(1)
