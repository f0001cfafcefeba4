"""What every command shares: one-line errors, JSON output and fresh seeds.

The command modules (`lookup`, `practice`, `answer`, `exporting`, `authoring`) import this module;
`main` imports them and registers their commands, so imports only go one way. Typer is imported
only to exit with its `Exit` (an error's way out, as typer's commands end): the commands students
type most run without typer (`attnquiz.plain_parsing`); the parameter types are `attnquiz.options`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def say(message: str, *, err: bool = False) -> None:
    """One message line for the terminal, without control characters, in what the stream can encode.

    Written to the stream itself rather than with typer.echo: click re-encodes an ASCII stream as
    UTF-8, where quiz's streams fall back to ASCII spellings (`attnquiz.terminal`).
    """
    from attnquiz.terminal import strip_control

    stream = sys.stderr if err else sys.stdout
    if stream is None:
        return
    stream.write(strip_control(message) + "\n")
    stream.flush()


def fail(message: str, code: int = 1) -> NoReturn:
    """Print one clear line to stderr and exit (1: a user error, 2: a usage error)."""
    import typer  # an error's way out: typer ends the command with this status, as it always did

    say(f"quiz: {message}", err=True)
    raise typer.Exit(code)


def user_errors(fn: F) -> F:
    """Show the engine's user errors (QuizError) as plain messages instead of tracebacks."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from attnquiz.engine.errors import BankError, QuizError

        try:
            return fn(*args, **kwargs)
        except BankError as exc:
            import typer

            say(exc.report(), err=True)  # each file:line line, then its source line and a caret
            raise typer.Exit(1) from None
        except QuizError as exc:
            fail(str(exc))

    return wrapper  # type: ignore[return-value]


def json_text(data: Any, *, indent: int | None = None) -> str:
    """``data`` as JSON text for stdout: UTF-8 as it is, or \\u escapes when stdout is not Unicode.

    Escapes keep the data exact where an ASCII spelling (sqrt for √) would change it.
    """
    import json  # only for --json output: a question's start-up never imports it

    from attnquiz.terminal import is_unicode

    separators = (",", ":") if indent is None else (",", ": ")
    return json.dumps(data, ensure_ascii=not is_unicode(sys.stdout), indent=indent, separators=separators)


def print_json(data: Any) -> None:
    """JSON on stdout, keys in the order the engine built them."""
    sys.stdout.write(json_text(data, indent=2) + "\n")
    sys.stdout.flush()


def new_seed() -> int:
    """A fresh seed for a user who gave none (printed, so the variant can be rebuilt)."""
    import secrets  # hmac and hashlib: imported by the commands that need a seed, not by --help

    return secrets.randbelow(1_000_000)
