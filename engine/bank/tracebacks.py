"""Where a bank's own Python code failed: the frames of a traceback that are the bank's, located.

A plugin's author needs what Python would tell them (the file, the line, the calls that led there),
but not quiz's frames around their code, nor numpy's under it: those say nothing about the bug and
bury the line that does. So an exception from a plugin is told as the innermost line of the bank's
own code, ``gens.py:9``, and a traceback of the bank's frames only, in Python's own layout (editors
and terminals link ``File "...", line N``), with a long recursion shortened.
"""

from __future__ import annotations

import linecache
import os
import traceback
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

_ENGINE = Path(__file__).resolve().parent.parent
"""quiz's engine (a traceback from a variant's build holds no frame above it): never the bank's code,
even when a bank sits in a folder that holds quiz's source."""
_INSTALLED = frozenset({"site-packages", "dist-packages"})
"""Folders of installed libraries (numpy, a virtual environment next to the bank): never the bank's."""
MAX_FRAMES = 12
"""At most this many frames are listed (the outermost few and the innermost); a deep recursion says
how many were left out rather than printing a thousand."""
MAX_SOURCE = 160
"""A line of source quoted under its frame is cut to this many characters."""
MAX_TEXT = 500
"""An exception's message is cut to this many characters (a plugin may raise with a megabyte)."""


def bank_frames(tb: TracebackType | None, folder: Path) -> list[traceback.FrameSummary]:
    """The frames of ``tb`` in files of the bank's folder (or below), outermost first: the code the
    bank brought, without quiz's and installed libraries' frames."""
    root = folder.resolve()
    seen: dict[str, bool] = {}

    def own(filename: str) -> bool:
        if filename.startswith("<"):  # <frozen importlib._bootstrap>, <string>: no file of the bank
            return False
        if filename not in seen:
            path = Path(filename).resolve()
            seen[filename] = (
                path.is_relative_to(root)
                and not path.is_relative_to(_ENGINE)
                and not _INSTALLED.intersection(path.parts)
            )
        return seen[filename]

    return [frame for frame in traceback.extract_tb(tb) if own(frame.filename)]


def shown_path(filename: str) -> str:
    """A file as an error names it: relative to the working folder when it is inside it."""
    try:
        relative = os.path.relpath(filename)
    except ValueError:  # another drive on Windows
        return filename
    return filename if relative.startswith(os.pardir) else relative


def where(frames: list[traceback.FrameSummary], fallback: str) -> str:
    """``file:line`` of the innermost frame (``fallback`` when there is none)."""
    if not frames:
        return fallback
    return f"{shown_path(frames[-1].filename)}:{frames[-1].lineno}"


def definition(fn: Callable[..., object]) -> str:
    """``file:line`` of the ``def`` of a function ("" for one without Python code): the line of the
    ``def`` itself, below its decorators (where Python's own first line of the function is)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return ""
    line = code.co_firstlineno
    for offset in range(20):  # a decorator may span lines; a def is never this far below
        if linecache.getline(code.co_filename, line + offset).lstrip().startswith(("def ", "async def ")):
            line += offset
            break
    return f"{shown_path(code.co_filename)}:{line}"


def is_code_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is a failure of the bank's code to report (any error, an exit, a bare
    ``BaseException``), rather than the user's Ctrl-C or quiz's own stop (SIGTERM's exception, a
    subclass of SystemExit), which must go on up."""
    return isinstance(exc, Exception) or type(exc) in (SystemExit, BaseException)


def exception_text(exc: BaseException) -> str:
    """``Type: message`` on one line, printable and of bounded length (even for an exception whose
    own ``str`` fails)."""
    try:
        text = str(exc)
    except Exception:  # a hostile __str__: the type still says what was raised
        text = "(its message cannot be shown)"
    message = " ".join(text.split())
    if len(message) > MAX_TEXT:
        message = message[:MAX_TEXT] + f"... ({len(message) - MAX_TEXT:,} more characters)"
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return "".join(c if c.isprintable() else "?" for c in text)


def _runs(frames: list[traceback.FrameSummary]) -> list[tuple[traceback.FrameSummary, int]]:
    """Consecutive calls of the same line collapsed, as Python's "[Previous line repeated N more
    times]" does: each frame with how many times it came in a row (a recursion is one entry)."""
    runs: list[tuple[traceback.FrameSummary, int]] = []
    for frame in frames:
        if runs and (runs[-1][0].filename, runs[-1][0].lineno, runs[-1][0].name) == (
            frame.filename,
            frame.lineno,
            frame.name,
        ):
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((frame, 1))
    return runs


def format_frames(frames: list[traceback.FrameSummary]) -> list[str]:
    """The frames as Python prints a traceback (``File "gens.py", line 9, in helper`` and the line),
    under a heading that says they are the bank's; a recursion is one frame and a count, and a long
    chain of different calls is cut in the middle."""
    if not frames:
        return []
    runs: list[tuple[traceback.FrameSummary, int] | int] = list(_runs(frames))
    if len(runs) > MAX_FRAMES:
        head, tail = 3, MAX_FRAMES - 3
        runs = [*runs[:head], len(runs) - head - tail, *runs[-tail:]]
    lines = ["Traceback of the bank's own code (most recent call last):"]
    for entry in runs:
        if isinstance(entry, int):
            lines.append(f"  ... {entry:,} more calls of the bank's code ...")
            continue
        frame, count = entry
        lines.append(f'  File "{shown_path(frame.filename)}", line {frame.lineno}, in {frame.name}')
        source = (frame.line or "").strip()
        if len(source) > MAX_SOURCE:
            source = source[:MAX_SOURCE] + "..."
        if source:
            lines.append(f"    {source}")
        if count > 1:
            lines.append(f"  [the line above repeated {count - 1:,} more times]")
    return ["".join(c if c.isprintable() else "?" for c in line) for line in lines]


def call_chain(frames: list[traceback.FrameSummary]) -> str:
    """The calls of the bank's code that led to its innermost frame, on one line for an error that
    must stay one line (a plugin that fails while it is imported): `` (in helper, called from
    gens.py:12)``; "" when the failing line is the only frame."""
    if len(frames) < 2:
        return ""
    callers = [
        f"{shown_path(f.filename)}:{f.lineno}" + (f" ({count:,} times)" if count > 1 else "")
        for f, count in reversed(_runs(frames[:-1]))
    ]
    if len(callers) > MAX_FRAMES:
        left_out = len(callers) - MAX_FRAMES + 1
        callers = [*callers[: MAX_FRAMES - 4], f"... {left_out:,} more calls ...", *callers[-3:]]
    return f" (in {frames[-1].name}, called from {', from '.join(callers)})"
