"""`quiz --help` without importing typer: the text typer prints, made from the same sources.

Importing typer (and the click it carries) is most of `quiz --help`'s start-up, for a page that is
fixed text: the app's description, its three options and a line per command taken from the
command's docstring. This module holds that text's sources (`COMMANDS`, `APP_HELP`, `OPTIONS`),
which `attnquiz.main` gives typer too, and lays the page out as click's help formatter does (its
width rule, its definition lists, its short help of a docstring). A test compares the two at every
terminal width, so the page cannot drift from typer's.

The commands' docstrings are read from their modules' source files, not imported: each command
module imports typer at its top.
"""

from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path

# `quiz --help` lists the commands in this order, the order a user meets them: practise, look up,
# teach, author. Each is (name, module of attnquiz, function), imported when the command is built.
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("run", "practice_commands", "run_command"),
    ("review", "practice_commands", "review_command"),
    ("stats", "practice_commands", "stats_command"),
    ("list", "lookup_commands", "list_command"),
    ("show", "lookup_commands", "show_command"),
    ("answer", "answer_command", "answer_command"),
    ("export", "exporting", "export_command"),
    ("grade", "exporting", "grade_command"),
    ("scan", "scanning", "scan_command"),
    ("check", "authoring", "check_command"),
    ("new", "authoring", "new_command"),
    ("schema", "lookup_commands", "schema_command"),
    ("generators", "generators", "generators_command"),
    ("serve", "serve", "serve_command"),
)
APP_HELP = "Exam practice for attention and Transformers: fresh variants of past-paper questions."
VERSION_HELP = "Print quiz's version and exit."
PLAIN_HELP = (
    "Output for screen readers: no colour, boxes or redrawing; maths in words, figures as "
    "their values (also QUIZ_PLAIN=1)."
)
OPTIONS: tuple[tuple[str, str], ...] = (
    ("--version", VERSION_HELP),
    ("--plain", PLAIN_HELP),
    ("-h, --help", "Show this message and exit."),
)
USAGE = "Usage: quiz [OPTIONS] COMMAND [ARGS]..."
HERE = Path(__file__).resolve().parent


def help_width(columns: int | None = None) -> int:
    """The width click lays help out in: the terminal's, at most 80, less 2, at least 50."""
    if columns is None:
        columns = shutil.get_terminal_size().columns
    return max(min(columns, 80) - 2, 50)


def summary(module: str, function: str) -> str:
    """The first paragraph of the docstring of ``function`` in ``attnquiz.<module>`` (all a command's
    line in the list needs), read from its source file and cleaned as `inspect.getdoc` cleans it."""
    source = (HERE / f"{module}.py").read_text(encoding="utf-8")
    # The function's signature may span lines and hold parentheses (annotations, defaults): its
    # body starts at the first ``):`` or ``) -> …:`` that a docstring follows.
    signature = rf"^def {re.escape(function)}\(.*?\)(?:\s*->\s*[^\n]*?)?:\s*\n\s*"
    found = re.search(signature + r'"""(?P<text>.*?)"""', source, re.DOTALL | re.MULTILINE)
    text = found.group("text") if found is not None else None
    if text is None or "\\" in text.split("\n\n")[0]:
        # No plain docstring found, or an escape in its first paragraph, which only Python reads
        # right: the module is imported (typer with it) and Python's docstring used.
        import importlib
        import inspect

        doc = inspect.getdoc(getattr(importlib.import_module(f"attnquiz.{module}"), function)) or ""
        return doc.split("\n\n")[0]
    lines = text.expandtabs().split("\n")
    cleaned = (lines[0].strip() + "\n" + textwrap.dedent("\n".join(lines[1:]))).strip()
    return cleaned.split("\n\n")[0]


def short_help(text: str, limit: int) -> str:
    """A docstring's first line for a list of commands, as click makes it: its first paragraph, up to
    the first sentence's end that fits in ``limit``, else cut at a word with "..."."""
    paragraph_end = text.find("\n\n")
    words = (text[:paragraph_end] if paragraph_end != -1 else text).split()
    if not words:
        return ""
    if words[0] == "\b":
        words = words[1:]
    total = 0
    last = len(words) - 1
    index = 0
    for index, word in enumerate(words):
        total += len(word) + (index > 0)
        if total > limit:
            break
        if word[-1] == ".":
            return " ".join(words[: index + 1])
        if total == limit and index != last:
            break
    else:
        return " ".join(words)
    total += len("...")
    while index > 0:
        total -= len(words[index]) + (index > 0)
        if total <= limit:
            break
        index -= 1
    return " ".join(words[:index]) + "..."


def _definitions(rows: list[tuple[str, str]], width: int, indent: int = 2) -> list[str]:
    """Rows of a term and its text, the texts aligned in a column (click's definition list)."""
    first_column = min(max(len(term) for term, _ in rows), 30) + 2
    text_width = max(width - first_column - 2, 10)
    out: list[str] = []
    for term, text in rows:
        head = " " * indent + term
        if len(term) <= first_column - 2:
            head += " " * (first_column - len(term))
        else:
            out.append(head)
            head = " " * (first_column + indent)
        lines = textwrap.wrap(text, text_width, replace_whitespace=False) or [""]
        out.append(head + lines[0])
        out.extend(" " * (first_column + indent) + line for line in lines[1:])
    return out


def group_help(columns: int | None = None) -> str:
    """The page `quiz --help` prints, for a terminal ``columns`` wide (the current one by default)."""
    width = help_width(columns)
    description = textwrap.wrap(
        APP_HELP, width, initial_indent="  ", subsequent_indent="  ", replace_whitespace=False
    )
    names = [name for name, _, _ in COMMANDS]
    limit = width - 6 - max(len(name) for name in names)
    commands = [(name, short_help(summary(module, function), limit)) for name, module, function in COMMANDS]
    lines = [
        USAGE,
        "",
        *description,
        "",
        "Options:",
        *_definitions(list(OPTIONS), width),
        "",
        "Commands:",
        *_definitions(commands, width),
    ]
    return "\n".join(lines) + "\n"
