"""The instructor's commands: `quiz check` (test a bank over many seeds), `quiz new` (a starter bank),
and `quiz list` with no bank (every bank found, with item counts).

Only typer is imported at the top (so `quiz --help` stays fast); the engine and rich are imported
when a command runs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from attnquiz.common import fail, print_json, user_errors
from attnquiz.options import BankArg, JobsOpt, JsonOpt

if TYPE_CHECKING:
    from attnquiz.engine.check.checks import BankReport


@user_errors
def check_command(
    bank: BankArg,
    variants: Annotated[
        int,
        typer.Option(
            "--variants",
            min=1,
            max=100_000,
            help="Seeds to try per item (0 .. N-1), besides the original.",
        ),
    ] = 100,
    time_limit: Annotated[
        float,
        typer.Option(
            "--time-limit",
            min=0.1,
            max=3600,
            help="Seconds a bank's plugins may take to import, and each variant they build.",
        ),
    ] = 5.0,
    jobs: JobsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Test every item of a bank over many seeds: it builds, grades its own answer and mistakes, renders.

    Loads the bank (every error at once, with file:line), then per item and seed checks that the
    variant is deterministic, its answer finite and graded correct, each mistake recognised, a
    nudge beyond the tolerance wrong, an unreadable response invalid, choice options sound, and
    every renderer (terminal, Markdown, HTML, Typst, Moodle) working, figures included (their SVG
    parsed, their Typst compiled). Exit status 1 on any failure. A bank's plugins run in a child
    process, stopped when they exceed --time-limit.

    Example: quiz check mybank.yaml --variants 500 --json
    """
    from attnquiz.engine.check.checks import check_path
    from attnquiz.engine.parallel import default_jobs

    progress = None if as_json or not sys.stderr.isatty() else _progress_printer()
    report = check_path(bank, variants, progress, time_limit, jobs=default_jobs() if jobs is None else jobs)
    if progress is not None:
        typer.echo("\r\033[K", err=True, nl=False)
    if as_json:
        print_json(report.to_json())
    else:
        show_report(report)
    if not report.ok:
        raise typer.Exit(1)


def _progress_printer() -> Any:
    def show(done: int, total: int, item: str) -> None:
        typer.echo(f"\r\033[Kchecking {done}/{total}: {item}", err=True, nl=False)

    return show


def show_report(report: BankReport) -> None:
    """The report as tables: one row per item, then each failure with the command that reproduces it."""
    from rich.table import Table
    from rich.text import Text

    from attnquiz.display import console

    if report.errors:
        # One unwrapped line per error, as the loader writes them, so that editors and CI can jump to it.
        from attnquiz.engine.errors import excerpt

        for issue in report.errors:
            typer.echo(str(issue))
            for line in excerpt(report.source, issue):
                typer.echo(line)
        count = len(report.errors)
        typer.echo(f"{report.path}: {count} error{'s' if count != 1 else ''}, nothing was run.")
        return
    table = Table(
        title=f"{report.title}  ({report.path}, seeds 0-{report.variants - 1})",
        title_justify="left",
        expand=False,
    )
    table.add_column("item", style="bold", no_wrap=True)
    table.add_column("kind")
    table.add_column("variants", justify="right")
    table.add_column("distinct", justify="right")
    table.add_column("failures", justify="right")
    table.add_column("", no_wrap=True)
    for item in report.items:
        kind = item.kind if item.kind == "formula" else item.generator
        variants = f"{item.variants}" + (" +orig" if item.original else "")
        if item.combinations is not None:
            kind += f" (all {item.combinations:,})"
        elif item.sampled:
            kind += " (sampled)"  # too many combinations: seeds and extremes (a warning says which)
        status = Text("ok", "green") if item.ok else Text("FAIL", "bold red")
        if item.ok and item.warnings:
            status = Text("warn", "yellow")
        failures = str(sum(f.count for f in item.failures)) if item.failures else "-"
        table.add_row(item.item, kind, variants, str(item.distinct), failures, status)
    console.print(table)
    if report.environment:
        console.print(Text(report.environment, "dim"))
    for item in report.items:
        for failure in item.failures:
            times = f" ({failure.count} variants)" if failure.count > 1 else ""
            console.print(Text.assemble((item.item, "bold"), (f" [{failure.check}]{times}:", "red")))
            # A plugin's failure carries the traceback of the bank's code under its first line.
            console.print(Text("\n".join(f"  {line}" for line in failure.message.splitlines())))
            which = "--original" if failure.original else ""
            if failure.seed is not None:
                which = f"--seed {failure.seed}"
            if which:
                command = f"quiz show {report.path} {item.item} {which} --solution"
                console.print(Text(f"  reproduce: {command}", "dim"))
        for warning in item.warnings:
            console.print(Text.assemble((item.item, "bold"), (" warning: ", "yellow"), warning))
    failed = [item for item in report.items if not item.ok]
    total = len(report.items)
    if failed:
        console.print(Text(f"{len(failed)} of {total} item{'s' if total != 1 else ''} failed.", "bold red"))
    else:
        console.print(Text("The item passed." if total == 1 else f"All {total} items passed.", "green"))


@user_errors
def new_command(
    path: Annotated[Path, typer.Argument(help="The bank file to write, e.g. mybank.yaml.", dir_okay=False)],
    force: Annotated[bool, typer.Option("--force", help="Overwrite the file if it exists.")] = False,
) -> None:
    """Write a commented starter bank (a formula, a generator and a choice item) that passes quiz check.

    Example: quiz new mybank.yaml
    """
    from attnquiz.engine.bank.starter import starter_bank

    if path.suffix not in {".yaml", ".yml"}:
        fail(f"{path}: a bank file ends in .yaml or .yml", 2)
    if path.exists() and not force:
        fail(f"{path} already exists; use --force to overwrite it")
    try:
        path.write_text(starter_bank(str(path)), encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {path} ({exc.strerror or exc})")
    typer.echo(f"Wrote {path}: a formula item, a generator item and a choice item.")
    typer.echo(f"Next: quiz check {path}   (and quiz schema > quiz.schema.json for editor help)")


def list_banks(as_json: bool) -> None:
    """Every bank found (QUIZ_PATH folders, then the built-in ones), with its title and item count."""
    from rich.text import Text

    from attnquiz.display import console
    from attnquiz.engine.bank import finding as banks
    from attnquiz.engine.errors import BankError
    from attnquiz.folding import fold

    rows: list[dict[str, Any]] = []
    for found in banks.discover():
        row: dict[str, Any] = {"name": found.name, "origin": found.origin, "path": str(found.path)}
        try:
            loaded = banks.load(str(found.path))
        except BankError as exc:
            row.update(title="", items=None, error=f"{len(exc.issues)} error(s): quiz check {found.path}")
        else:
            row.update(title=loaded.title, items=len(loaded.items), error=None)
        rows.append(row)
    if as_json:
        print_json(rows)
        return
    if not rows:
        console.print("No banks found. Write one with `quiz new mybank.yaml`, or add a folder to QUIZ_PATH.")
        return
    # The same plain style as `quiz list BANK`: a heading, then one line per bank.
    console.print(Text(f"Banks  ·  {len(rows)} found", style="bold"))
    console.print()
    name_width = max(len(row["name"]) for row in rows)
    for row in rows:
        line = Text(f"  {row['name']:<{name_width}}  ", style="bold")
        if row["error"] is None:
            line.append(f"{row['items']:>3} items  ")
            line.append(row["title"])
        else:
            line.append(row["error"], style="red")
        line.append(f"  ({row['origin']})", style="dim")
        console.print(fold(line, console.width, hang=name_width + 13))
