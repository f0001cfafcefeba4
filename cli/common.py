"""What every command shares: argument types, one-line errors, JSON output and fresh seeds.

The command modules (`lookup`, `practice`, `answer`, `exporting`, `authoring`) import this module;
`main` imports them and registers their commands, so imports only go one way.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Annotated, Any, NoReturn, TypeVar

import typer

F = TypeVar("F", bound=Callable[..., Any])

BankArg = Annotated[str, typer.Argument(help="A bank name (e.g. week1) or a path to a bank file.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts instead of text.")]
JobsOpt = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        min=1,
        max=256,
        help="Worker processes at once: export's PDF pieces, check's items, grade's rows (default: every "
        "CPU; 1: no workers, all in this process).",
    ),
]


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
            say(exc.report(), err=True)  # each file:line line, then its source line and a caret
            raise typer.Exit(1) from None
        except QuizError as exc:
            fail(str(exc))

    return wrapper  # type: ignore[return-value]


def json_text(data: Any, *, indent: int | None = None) -> str:
    """``data`` as JSON text for stdout: UTF-8 as it is, or \\u escapes when stdout is not Unicode.

    Escapes keep the data exact where an ASCII spelling (sqrt for √) would change it.
    """
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
