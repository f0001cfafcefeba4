"""The Typer app: each command parses its arguments, calls the engine and hands the result to cli.display.

Engine modules (numpy, pydantic, yaml) are imported inside the commands, so that `quiz --help`
starts without them.
"""

from __future__ import annotations

import json
import secrets
import sys
from collections.abc import Callable
from typing import Annotated, Any, NoReturn, TypeVar

import typer

app = typer.Typer(
    name="quiz",
    help="Exam practice for attention and Transformers: fresh variants of past-paper questions.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

F = TypeVar("F", bound=Callable[..., Any])

BankArg = Annotated[str, typer.Argument(help="A bank name (e.g. week1) or a path to a bank file.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts instead of text.")]


def fail(message: str, code: int = 1) -> NoReturn:
    """Print one clear line to stderr and exit (1: a user error, 2: a usage error)."""
    typer.echo(f"quiz: {message}", err=True)
    raise typer.Exit(code)


def user_errors(fn: F) -> F:
    """Show the engine's user errors (QuizError) as plain messages instead of tracebacks."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from engine.errors import BankError, QuizError

        try:
            return fn(*args, **kwargs)
        except BankError as exc:
            typer.echo(str(exc), err=True)
            raise typer.Exit(1) from None
        except QuizError as exc:
            fail(str(exc))

    return wrapper  # type: ignore[return-value]


def print_json(data: Any) -> None:
    """JSON on stdout, UTF-8, keys in the order the engine built them."""
    typer.echo(json.dumps(data, ensure_ascii=False, indent=2))


def new_seed() -> int:
    """A fresh seed for a user who gave none (printed, so the variant can be rebuilt)."""
    return secrets.randbelow(1_000_000)


@app.command("list")
@user_errors
def list_command(
    bank: Annotated[
        str | None,
        typer.Argument(help="A bank name (e.g. week1) or a path to a bank file; none: list every bank."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """List a bank's items (id, source, topic, answer kind), or with no bank every bank found.

    Example: quiz list week1
    """
    from cli import display
    from engine import banks

    if bank is None:
        from cli.authoring import list_banks

        list_banks(as_json)
        return

    loaded = banks.load(bank)
    rows = [
        {
            "id": entry.id,
            "source": entry.item.source,
            "topic": entry.item.topic,
            "kind": display.kind_label(entry.question(0).answer),
            "original": entry.has_original,
            "summary": entry.spec.summary,
        }
        for entry in loaded.items
    ]
    if as_json:
        print_json(rows)
    else:
        display.item_table(loaded, rows)


@app.command("show")
@user_errors
def show_command(
    bank: BankArg,
    item: Annotated[str, typer.Argument(help="The item's id (see `quiz list BANK`).")],
    seed: Annotated[
        int | None, typer.Option("--seed", "-s", min=0, max=2**32 - 1, help="Build the variant of this seed.")
    ] = None,
    code: Annotated[
        str | None, typer.Option("--code", help="Build the variant of this variant code.")
    ] = None,
    original: Annotated[bool, typer.Option("--original", help="The past paper's own question.")] = False,
    solution: Annotated[
        bool, typer.Option("--solution", help="Add the worked solution and the known mistakes.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Show one variant of an item with its answer (a random one unless --seed, --code or --original).

    Example: quiz show week1 additive-score --seed 7 --solution
    """
    from cli import display
    from engine import banks
    from engine.seeding import seed_from_code

    if sum(x is not None and x is not False for x in (seed, code, original or None)) > 1:
        fail("give only one of --seed, --code and --original", 2)
    entry = banks.load(bank).get(item)
    if original:
        question = entry.original()
    else:
        if code is not None:
            seed = seed_from_code(code)
        question = entry.question(seed if seed is not None else new_seed())
    if as_json:
        print_json(question.to_json())
    else:
        display.show_question(question, with_answer=True, with_solution=solution)


@app.command("schema")
def schema_command() -> None:
    """Print the JSON Schema of the bank format (for editors: quiz schema > quiz.schema.json).

    Example: quiz schema > quiz.schema.json
    """
    from engine.schema import json_schema

    print_json(json_schema())


# Commands defined in their own modules register themselves on `app` when imported here.
# Each such module imports only typer at the top, so `quiz --help` stays fast.
from cli import answer, authoring, exporting, practice  # noqa: E402,F401

# `quiz --help` lists commands in the order a user meets them: practise, browse, teach, author.
COMMAND_ORDER = (
    "run",
    "review",
    "stats",
    "list",
    "show",
    "answer",
    "export",
    "grade",
    "check",
    "new",
    "schema",
)
app.registered_commands.sort(key=lambda command: COMMAND_ORDER.index(command.name or ""))


def main() -> None:
    """Entry point of the `quiz` script."""
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("\nquiz: interrupted", err=True)
        sys.exit(130)
