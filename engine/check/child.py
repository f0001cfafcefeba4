"""``quiz check`` of a bank with plugins: the bank's Python code runs in a child process, with a time
limit on its import and on each generation, so a plugin that loops or sleeps cannot hang the check.

Why a child process rather than a signal or a thread: a plugin may be stuck anywhere, including in
C code that no Python-level alarm interrupts (``10**10**9``), and only a process can always be
stopped. The child arms `faulthandler`'s watchdog around the import and each generation; when it
fires, it writes where the code was (file and line, most recent call first) and exits, and the
parent turns that into a failure at the plugin's ``file:line``. The child then starts again at the
next item, so one stuck item does not hide the others. A backstop in the parent kills a child that
sends nothing for much longer than the limit (stuck outside a generation, say in a renderer).

The protocol: the child writes JSON lines on its original standard output (a plugin's ``print``
goes to standard error instead): ``build`` before each generation, ``item`` with each item's report,
``errors`` when the bank does not load, ``done`` at the end.
"""

from __future__ import annotations

import contextlib
import json
import queue
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

from attnquiz.engine import errors
from attnquiz.engine.bank.loaded import Bank, BankItem
from attnquiz.engine.check.report import BankReport, Failure, ItemReport, Progress
from attnquiz.engine.errors import Issue

BACKSTOP = 30.0
"""Seconds (beyond ten time limits) without a word from the child after which it is killed."""


def check_in_child(
    name_or_path: str, bank: Bank, variants: int, progress: Progress | None, time_limit: float
) -> BankReport:
    """Check ``bank`` (loaded without its plugins) in child processes, item after item."""
    shown = ", ".join(str(path) for path in bank.plugins)
    errors.notice(f"bank {bank.path} runs Python code from its plugins: {shown} (checked in a child process)")
    report = BankReport(bank=bank.name, path=bank.path, variants=variants, title=bank.title)
    start = 0
    while start < len(bank.items):
        outcome = _run_child(name_or_path, variants, time_limit, start)
        for item in outcome.items:
            report.items.append(item)
            if progress is not None:
                progress(len(report.items), len(bank.items), item.item)
        if outcome.errors:
            report.errors = outcome.errors
            report.source = outcome.source
            return report
        if outcome.finished:
            return report
        # The child stopped: at a generation that took too long, or for a reason of its own.
        where = _plugin_line(outcome.stderr, bank.plugins)
        if outcome.building is None:
            location = f"{where}: " if where else ""
            message = (
                f"{location}importing the bank's plugins took longer than {time_limit:g} s: stopped"
                if outcome.timed_out
                else f"{location}the process importing the bank's plugins died: {_last_line(outcome.stderr)}"
            )
            report.errors = [Issue(bank.path, _plugins_line(bank), "plugins", message)]
            return report
        index, seed = outcome.building
        entry = bank.items[index]
        report.items.append(_stopped_item(entry, seed, where, time_limit, outcome))
        if progress is not None:
            progress(len(report.items), len(bank.items), entry.id)
        start = index + 1
    return report


def _stopped_item(
    entry: BankItem, seed: int | None, where: str | None, time_limit: float, outcome: _Outcome
) -> ItemReport:
    """The report of an item whose generation was stopped (the checks of its other seeds are lost)."""
    location = f"{where}: " if where else ""
    if outcome.timed_out:
        message = f"{location}building a variant took longer than {time_limit:g} s: stopped there"
    else:
        message = f"{location}the process building a variant died: {_last_line(outcome.stderr)}"
    item = ItemReport(item=entry.id, kind="generator", generator=entry.spec.name)
    item.failures.append(
        Failure("time" if outcome.timed_out else "generate", message, seed, original=seed is None)
    )
    return item


def _plugins_line(bank: Bank) -> int:
    """The line of ``plugins:`` in the bank file, as the loader reads it (1 when it cannot be read)."""
    from attnquiz.engine.bank.loader import parse_yaml
    from attnquiz.engine.errors import BankError

    with contextlib.suppress(OSError, UnicodeDecodeError, BankError):
        _, located = parse_yaml(Path(bank.path).read_text(encoding="utf-8"), bank.path)
        return located.line_of(("plugins",))
    return 1


_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)', re.MULTILINE)


def _plugin_line(stderr: str, plugins: tuple[Path, ...]) -> str | None:
    """``file:line`` of the innermost frame in a plugin file of the watchdog's traceback."""
    resolved = {path.resolve(): path for path in plugins}
    for match in _FRAME.finditer(stderr):  # faulthandler lists the most recent call first
        path = resolved.get(Path(match["file"]).resolve())
        if path is not None:
            return f"{path}:{match['line']}"
    return None


def _last_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    return lines[-1].strip()[:200] if lines else "no message"


class _Outcome:
    """What one child process did."""

    def __init__(self) -> None:
        self.items: list[ItemReport] = []
        self.errors: list[Issue] = []
        self.source: str | None = None
        self.building: tuple[int, int | None] | None = None  # the item index and seed being built
        self.finished = False
        self.timed_out = False
        self.stderr = ""


def _run_child(name_or_path: str, variants: int, time_limit: float, start: int) -> _Outcome:
    outcome = _Outcome()
    request = json.dumps({"bank": name_or_path, "variants": variants, "limit": time_limit, "start": start})
    with tempfile.TemporaryFile() as stderr:
        child = subprocess.Popen(
            [sys.executable, "-P", "-c", "from attnquiz.engine.check.worker import main; main()", request],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
        assert child.stdout is not None
        lines = _lines_of(child.stdout)
        try:
            while True:
                try:
                    line = lines.get(timeout=BACKSTOP + 10 * time_limit)
                except queue.Empty:
                    child.kill()  # stuck where no watchdog was armed
                    outcome.timed_out = True
                    break
                if line is None:
                    break
                _take(outcome, json.loads(line))
        finally:
            child.kill()
            child.wait()
        stderr.seek(0)
        outcome.stderr = stderr.read().decode("utf-8", "replace")
    if not outcome.finished and "Timeout (" in outcome.stderr:
        outcome.timed_out = True
    return outcome


def _lines_of(stream: IO[bytes]) -> queue.Queue[str | None]:
    """The stream's lines, read by a thread (None at its end), so the parent can wait with a timeout."""
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        # The thread closes the pipe at its end (the child's exit or kill): closed by the parent,
        # it could be closed under a read; left open, it is an unclosed file when collected.
        with stream:
            for raw in stream:
                lines.put(raw.decode("utf-8"))
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return lines


def _take(outcome: _Outcome, event: dict[str, Any]) -> None:
    kind = event["event"]
    if kind == "build":
        outcome.building = (event["index"], event["seed"])
    elif kind == "item":
        outcome.items.append(ItemReport.from_json(event["report"]))
        outcome.building = None
    elif kind == "errors":
        outcome.errors = [Issue(**issue) for issue in event["issues"]]
        outcome.source = event["source"]
    elif kind == "imported":
        outcome.building = None
    elif kind == "done":
        outcome.finished = True


# ---------------------------------------------------------------------------------------------
# The child
# ---------------------------------------------------------------------------------------------
