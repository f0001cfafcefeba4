"""The `quiz` command as a Typer app: its commands listed in the order users meet them.

Imports go one way: this module imports the command modules, which import `attnquiz.common` and
only typer at the top (engine modules, with numpy, pydantic and yaml, inside their commands), so
`quiz --help` starts without them; `attnquiz.main` imports this module only for a command that
`attnquiz.plain_parsing` leaves to typer (the group's help page is `attnquiz.group_help`'s, and
plain `quiz run`, `list`, `show` and `answer` run without typer).

Only the command that runs is built and only its module imported (`LazyCommands`): typer builds
a command by reading its function's signature and evaluating its annotations, about 7 ms each, and
`quiz list week1` needs one command of fourteen. The group's help lists every command's first line
from its function's docstring, as typer would, without building any.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterator, MutableMapping
from gettext import gettext
from typing import Annotated, Any

import typer
import typer.main
from typer.models import CommandInfo

from attnquiz.coercion import PlainValuesCommand, PlainValuesGroup
from attnquiz.group_help import APP_HELP, COMMANDS, PLAIN_HELP, VERSION_HELP

# Extra click settings of some commands.
SETTINGS: dict[str, dict[str, Any]] = {
    # A response such as -0.5 must reach RESPONSE instead of being taken for an option.
    "answer": {"ignore_unknown_options": True},
}


def command_function(name: str) -> Callable[..., Any]:
    """The function of the command ``name`` (its module imported now)."""
    [(module, function)] = [(module, function) for known, module, function in COMMANDS if known == name]
    found: Callable[..., Any] = getattr(importlib.import_module(f"attnquiz.{module}"), function)
    return found


def build_command(name: str) -> typer.core.TyperCommand:
    """The click command ``name``, built by typer as ``app.command(name)`` would register it.

    PlainValuesCommand: a bank name or a seed is converted without importing pydantic (a third of
    `quiz list`'s start-up); see attnquiz.coercion.
    """
    info = CommandInfo(
        name, cls=PlainValuesCommand, context_settings=SETTINGS.get(name), callback=command_function(name)
    )
    command = typer.main.get_command_from_info(
        info, pretty_exceptions_short=app.pretty_exceptions_short, rich_markup_mode=app.rich_markup_mode
    )
    assert isinstance(command, typer.core.TyperCommand)
    return command


class LazyCommands(MutableMapping[str, Any]):
    """The group's commands by name, each built (`build_command`) the first time it is looked up."""

    def __init__(self) -> None:
        self.names = [name for name, _, _ in COMMANDS]
        self.built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self.built:
            if name not in self.names:
                raise KeyError(name)
            self.built[name] = build_command(name)
        return self.built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        if name not in self.names:
            self.names.append(name)
        self.built[name] = command

    def __delitem__(self, name: str) -> None:
        self.names.remove(name)
        self.built.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self.names))

    def __len__(self) -> int:
        return len(self.names)

    def short_help(self, name: str, limit: int) -> str:
        """What the group's help lists for ``name``: the built command's, or the same text taken from
        its function's docstring without building it (the command's help is that docstring)."""
        if name in self.built:
            text: str = self.built[name].get_short_help_str(limit)
            return text
        from typer._click.utils import make_default_short_help

        return make_default_short_help(inspect.getdoc(command_function(name)) or "", limit).strip()


class QuizGroup(PlainValuesGroup):
    """The app's group: its commands built only when looked up (`LazyCommands`)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.commands = LazyCommands()

    def list_commands(self, ctx: Any) -> list[str]:
        # Typer's own lists them from commands.items(), which would build every one.
        return list(self.commands)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        # As typer's TyperGroup.format_commands (no command of quiz is hidden), from the docstrings.
        commands = self.commands
        assert isinstance(commands, LazyCommands)
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [(name, commands.short_help(name, limit)) for name in names]
        with formatter.section(gettext("Commands")):
            formatter.write_dl(rows)


app = typer.Typer(
    name="quiz",
    help=APP_HELP,
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    cls=QuizGroup,
)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"quiz {version('attnquiz')}")
        raise typer.Exit()


@app.callback()
def _global_options(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help=VERSION_HELP),
    ] = False,
    plain: Annotated[
        bool,
        typer.Option(
            "--plain",
            help=PLAIN_HELP,
        ),
    ] = False,
) -> None:
    """Options that come before the command (quiz --version, quiz --plain run BANK)."""
    if plain:
        from attnquiz.terminal import set_plain

        set_plain()
