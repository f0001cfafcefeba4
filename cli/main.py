"""The `quiz` command: the Typer app, with every module's commands registered in the order users meet them.

Imports go one way: this module imports the command modules, which import `attnquiz.common` and
only typer at the top (engine modules, with numpy, pydantic and yaml, inside their commands), so
`quiz --help` starts without them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer

from attnquiz import answer, authoring, exporting, generators, lookup, practice, scanning, serve
from attnquiz.coercion import PlainValuesCommand, PlainValuesGroup

app = typer.Typer(
    name="quiz",
    help="Exam practice for attention and Transformers: fresh variants of past-paper questions.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    cls=PlainValuesGroup,
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
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print quiz's version and exit."
        ),
    ] = False,
    plain: Annotated[
        bool,
        typer.Option(
            "--plain",
            help="Output for screen readers: no colour, boxes or redrawing; maths in words, figures as "
            "their values (also QUIZ_PLAIN=1).",
        ),
    ] = False,
) -> None:
    """Options that come before the command (quiz --version, quiz --plain run BANK)."""
    if plain:
        from attnquiz.terminal import set_plain

        set_plain()


# `quiz --help` lists the commands in this order, the order a user meets them: practise, look up,
# teach, author.
COMMANDS: tuple[tuple[str, Callable[..., Any]], ...] = (
    ("run", practice.run_command),
    ("review", practice.review_command),
    ("stats", practice.stats_command),
    ("list", lookup.list_command),
    ("show", lookup.show_command),
    ("answer", answer.answer_command),
    ("export", exporting.export_command),
    ("grade", exporting.grade_command),
    ("scan", scanning.scan_command),
    ("check", authoring.check_command),
    ("new", authoring.new_command),
    ("schema", lookup.schema_command),
    ("generators", generators.generators_command),
    ("serve", serve.serve_command),
)
# Extra click settings of some commands.
SETTINGS: dict[str, dict[str, Any]] = {
    # A response such as -0.5 must reach RESPONSE instead of being taken for an option.
    "answer": {"ignore_unknown_options": True},
}
for _name, _function in COMMANDS:
    # PlainValuesCommand: a bank name or a seed is converted without importing pydantic (a third of
    # `quiz list`'s start-up); see attnquiz.coercion.
    app.command(_name, cls=PlainValuesCommand, context_settings=SETTINGS.get(_name))(_function)


def main() -> None:
    """Entry point of the `quiz` script."""
    from attnquiz.terminal import prepare_streams

    prepare_streams()
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("\nquiz: interrupted", err=True)
        sys.exit(130)
