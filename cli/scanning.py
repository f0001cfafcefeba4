"""`quiz scan`: scanned answer sheets → answers.csv; `quiz scan --fix` settles what the scan left open."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from attnquiz.common import fail, user_errors


class _ScanBar:
    """A progress bar on standard error while pages are read (a terminal only)."""

    def __init__(self) -> None:
        self.bar: object | None = None
        self.task: object | None = None

    def __call__(self, done: int, total: int) -> None:
        if not sys.stderr.isatty() or total < 2:
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        if self.bar is None:
            bar = Progress(
                "Reading pages",
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            bar.start()
            self.bar, self.task = bar, bar.add_task("scan", total=total)
        assert isinstance(self.bar, Progress)
        self.bar.update(self.task, completed=done)  # type: ignore[arg-type]

    def close(self) -> None:
        from rich.progress import Progress

        if isinstance(self.bar, Progress):
            self.bar.stop()


@user_errors
def scan_command(
    scans: Annotated[
        list[Path] | None,
        typer.Argument(help="Scanned answer sheets: PDF files, PNG or JPEG images, or folders of them."),
    ] = None,
    sheets: Annotated[
        Path,
        typer.Option("--sheets", help="The answer-sheets.json that `quiz export --answer-sheet` wrote."),
    ] = Path("answer-sheets.json"),
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The answers file to write (what `quiz grade` reads).")
    ] = Path("answers.csv"),
    review: Annotated[
        Path | None,
        typer.Option("--review", help="The review file (default: ANSWERS.review.json beside the answers)."),
    ] = None,
    fix: Annotated[
        bool,
        typer.Option("--fix", help="Settle what the last scan left for review, one prompt at a time."),
    ] = False,
    jobs: Annotated[
        int | None, typer.Option("--jobs", "-j", min=1, max=256, help="Processes (default: every CPU).")
    ] = None,
    overwrite: Annotated[
        bool,
        typer.Option("--overwrite", help="Replace an answers file whose review was already partly settled."),
    ] = False,
    dpi: Annotated[
        int, typer.Option("--dpi", min=100, max=600, help="Resolution a scanned PDF is read at.")
    ] = 200,
) -> None:
    """Read scanned answer sheets into answers.csv for `quiz grade`; list what needs a human eye.

    A mark the scan cannot decide (two bubbles in a column, a faint or erased mark, a page whose QR
    code cannot be read, a page missing or scanned twice) is never guessed: its cell reads
    `?review N`, and the review file lists it with a cropped image. `quiz scan --fix` asks about
    each one (answers can be piped on standard input, a line each).

    \b
    Examples:
      quiz scan class.pdf --sheets out/answer-sheets.json -o answers.csv
      quiz scan --fix -o answers.csv
    """
    from attnquiz.engine.scan.batch import read_scans
    from attnquiz.engine.scan.class_answers import assemble, write_outputs
    from attnquiz.engine.scan.layout import ScanError, load_layout
    from attnquiz.engine.scan.review import default_review, load_review

    review_path = review if review is not None else default_review(output)
    if fix:
        if scans:
            fail("--fix settles the last scan's review: give no scans with it", 2)
        _fix(review_path, output)
        return
    if not scans:
        fail("give the scanned answer sheets (PDF, PNG or JPEG files, or a folder of them), or --fix", 2)
    if not overwrite and output.exists() and review_path.exists():
        try:
            _, earlier = load_review(review_path)
        except ScanError:
            earlier = []
        done = sum(1 for item in earlier if item.value is not None and item.kind in ("field", "page"))
        if done:
            fail(
                f"{output} holds {done} answer(s) settled with `quiz scan --fix`: give --overwrite to "
                "replace it with a new scan, or -o another file"
            )
    layout = load_layout(sheets)
    bar = _ScanBar()
    try:
        pages = read_scans(scans, layout, jobs=jobs, progress=bar, dpi=dpi)
    finally:
        bar.close()
    result = assemble(layout, pages)
    write_outputs(result, output, review_path, sheets)
    open_items = result.open_items
    for item in result.review:
        if item.value is not None:  # settled by the scan itself, but the instructor should know
            _echo(f"Note: {item.reason}.")
    _echo(
        f"Read {result.pages} page{'s' if result.pages != 1 else ''}: {len(result.rows)} "
        f"student{'s' if len(result.rows) != 1 else ''} → {output}."
    )
    if result.unscanned:
        shown = ", ".join(str(s) for s in result.unscanned[:20]) + (
            " …" if len(result.unscanned) > 20 else ""
        )
        _echo(f"No sheet scanned for {len(result.unscanned)} student(s): {shown}.")
    if open_items:
        _echo(
            f"{len(open_items)} thing(s) need a look ({review_path}); until settled their cells read "
            f"`?review N`. Settle them with `quiz scan --fix -o {output}`."
        )
        raise typer.Exit(1)
    _echo("Every mark was clear: nothing to review.")


def _safe(text: str) -> str:
    """``text`` for the terminal: a scan's file name, a review file's strings and what was typed are data,
    and their escape sequences (a cursor move, an OSC 52 clipboard write) must not reach it as commands."""
    from attnquiz.terminal import strip_control

    return strip_control(text)


def _echo(text: str, nl: bool = True) -> None:
    typer.echo(_safe(text), nl=nl)


def _ask(prompt: str, interactive: bool) -> str | None:
    """One answer: prompted on a terminal, else a line of standard input (None at its end)."""
    if interactive:
        return str(typer.prompt(_safe(prompt), default="", show_default=False, prompt_suffix=""))
    _echo(prompt, nl=False)
    line = sys.stdin.readline()
    if not line:
        _echo("")
        return None
    _echo(line.rstrip("\n"))
    return line.rstrip("\n")


def _where(item: object) -> str:
    """Where an item is: its student and page, or the scan it came from."""
    from attnquiz.engine.scan.review import ReviewItem

    assert isinstance(item, ReviewItem)
    if item.student is None:
        return item.source or "a page"
    return f"student {item.student}" + (f", page {item.sheet_page}" if item.sheet_page is not None else "")


def _fix(review_path: Path, answers: Path) -> None:
    from attnquiz.engine.scan.layout import ScanError
    from attnquiz.engine.scan.review import load_review
    from attnquiz.engine.scan.settle import ABSENT, STRAY, STRAY_VALUE, AnswerRefused, readings, settle_answer

    doc, items = load_review(review_path)
    pending = [item for item in items if item.value is None]
    if not pending:
        _echo(f"Nothing left to settle in {review_path}.")
        return
    interactive = sys.stdin.isatty()
    _echo(f"{len(pending)} thing(s) to settle. Type the answer as the student wrote it (empty: no answer).")
    settled = 0
    queue = list(pending)
    while queue:
        item = queue.pop(0)
        _echo(f"\n[{item.n}] {_where(item)}: {item.reason}")
        if item.crop:
            _echo(f"    image: {review_path.parent / item.crop}")
        elif item.no_crop:
            _echo(f"    {item.no_crop}")
        if item.read:
            _echo(f"    the bubbles read: {item.read}")
        options = readings(item)
        if len(options) > 1 or (options and not item.likely):
            _echo(f"    it may read: {' · '.join(options)}")
        if item.kind == "page" and item.rereadable:
            prompt = (
                f"    whose page is it? STUDENT PAGE (e.g. 12 1), `{STRAY}` if not one of these sheets, "
                "or `skip`: "
            )
        elif item.kind == "page":
            prompt = f"    `{STRAY}` to set it aside (not one of these sheets), or rescan it; `skip`: "
        elif item.kind == "missing":
            prompt = f"    `{ABSENT}` if not handed in (its answers blank), or scan it again; `skip`: "
        elif item.likely:
            prompt = f"    {item.column} [Enter: {item.likely} · `-` for no answer]: "
        else:
            prompt = f"    {item.column}: "
        value = _ask(prompt, interactive)
        if value is None:
            break
        if value.strip() == "skip" or item.kind not in ("page", "field", "missing"):
            continue
        if item.kind == "field" and item.likely:
            # One key settles it: Enter takes the likely reading, `-` says there is no answer.
            value = item.likely if not value.strip() else "" if value.strip() == "-" else value
        try:
            added = settle_answer(review_path, answers, item, value, items, doc)
        except AnswerRefused as exc:
            _echo(f"    {exc}")
            queue.insert(0, item)  # asked again
            continue
        except ScanError as exc:
            _echo(f"    {exc}")
            if item.kind in ("page", "missing"):
                queue.insert(0, item)  # asked again: `stray`, `absent` or `skip` may still settle it
            continue
        if item.kind == "page" and item.value != STRAY_VALUE:
            student, sheet_page = value.split()
            _echo(f"    read as student {int(student)}'s page {int(sheet_page)}" + (
                f"; {len(added)} more thing(s) to settle" if added else ""))  # fmt: skip
            queue[:0] = added
        settled += 1
    left = sum(1 for item in items if item.value is None)
    _echo(f"\nSettled {settled}; {left} left. {answers} is updated.")
    if left:
        raise typer.Exit(1)
