"""The `quiz` script's entry point: `quiz --help` from `attnquiz.group_help`, the commands students
type most with plain arguments from `attnquiz.plain_parsing`, anything else through typer.

`attnquiz.typer_app` (typer, click and the command being built) is imported only for a command
that plain parsing leaves to it: typer is most of the help page's start-up and a third of `quiz
list`'s. ``from attnquiz.main import app`` still gives the app.
"""

from __future__ import annotations

import sys
from typing import Any

GROUP_HELP_ARGUMENTS = (["--help"], ["-h"])


def __getattr__(name: str) -> Any:
    # The app, for callers that import it from here (tests, `python -m attnquiz`), built on demand.
    if name == "app":
        from attnquiz.typer_app import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Entry point of the `quiz` script."""
    import gc
    import os

    from attnquiz.terminal import prepare_streams

    # quiz's matrices are a few rows wide: OpenBLAS's thread pool, started when numpy is imported,
    # only spins (some 80 ms of CPU a command) and makes a forked worker inherit a half-copied pool.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # Importing the engine makes tens of thousands of objects, none of them garbage: at CPython's
    # default (a collection every 700 new objects) a small export ran 127 collections, 25 ms.
    gc.set_threshold(10_000, 10, 10)
    prepare_streams()
    if sys.argv[1:] in GROUP_HELP_ARGUMENTS:
        from attnquiz.group_help import group_help

        sys.stdout.write(group_help())
        sys.stdout.flush()
        return
    from attnquiz.plain_parsing import plain_command

    command = plain_command(sys.argv[1:])
    try:
        if command is not None:
            command()  # ends the process as typer's standalone mode would
        else:
            from attnquiz.typer_app import app

            app()
    except KeyboardInterrupt:
        sys.stderr.write("\nquiz: interrupted\n")
        sys.stderr.flush()
        sys.exit(130)
    finally:
        # The interpreter's last collection walks every object left (40 ms) to free what the
        # process's exit frees anyway; frozen objects are skipped. Files and databases are closed
        # by their own `with` blocks before this, never by that collection.
        gc.freeze()
