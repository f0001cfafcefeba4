"""Signals while an export writes its files: SIGTERM as an exception, and moments no signal may split.

An export writes every file under a temporary name and renames them into place together at the
end (`attnquiz.engine.export.files.Staging`). For "written whole or not at all" to hold when the
user presses Ctrl-C or the export is sent SIGTERM, whatever the moment and however loaded the
machine is:

- SIGTERM raises `Terminated` for as long as files are staged (`terminated_as_exception`), so the
  same clean-up runs as for Ctrl-C, instead of the process ending with its temporary files;
- creating a temporary file and noting it for removal, renaming the files into place, and removing
  them are done with SIGINT and SIGTERM held (`held`): a signal that arrives then is handled just
  after, never between a file's creation and its noting, nor between two renames.

Ctrl-C at a terminal reaches the export's workers too; they ignore it (the export stops them).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Terminated(SystemExit):
    """SIGTERM arrived while an export was being written: it stopped cleanly (exit status 143)."""

    def __init__(self) -> None:
        super().__init__(128 + signal.SIGTERM)


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextmanager
def terminated_as_exception() -> Iterator[None]:
    """Within the block, SIGTERM raises `Terminated` (in the main thread, where Python runs signal
    handlers) instead of ending the process at once, so that the export's clean-up runs: worker
    processes stopped, temporary files removed. A handler already set by the program is kept."""
    if not _main_thread() or not hasattr(signal, "SIGTERM"):
        yield
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise Terminated()

    signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


_HELD = ("SIGINT", "SIGTERM")


@contextmanager
def held() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM wait: each is noted, and the first is handled as it would
    have been (Ctrl-C's KeyboardInterrupt, `Terminated`, or the default action) when the block ends.

    Python-level handlers, not a signal mask: a mask is per thread, and the kernel gives a signal
    sent to the process to any thread that does not block it; Python handlers always run in the
    main thread, whichever thread the kernel chose.
    """
    numbers = [getattr(signal, name) for name in _HELD if hasattr(signal, name)]
    if not _main_thread() or not numbers:
        yield
        return
    pending: list[int] = []

    def note(signum: int, frame: object) -> None:
        pending.append(signum)

    previous = {number: signal.signal(number, note) for number in numbers}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        if pending:
            _deliver(pending[0], previous[pending[0]])


def _deliver(number: int, handler: object) -> None:
    """Handle a signal that waited as ``handler`` (what was set when it arrived) would have."""
    if callable(handler):
        handler(number, None)
    elif handler == signal.SIG_DFL:
        signal.raise_signal(number)


__all__ = ["Terminated", "held", "terminated_as_exception"]
