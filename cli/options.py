"""The typer parameter types several commands share (a bank argument, --json, --jobs).

Only the modules that declare commands to typer import this module: the work of a command
(`attnquiz.lookup`, `attnquiz.practice`, `attnquiz.answer`) imports neither it nor typer, so
`attnquiz.plain_parsing` can run the commands students type most without typer.
"""

from __future__ import annotations

from typing import Annotated

import typer

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
        "CPU; 1: all in this process, but a large PDF's pieces, made by one worker to keep memory flat).",
    ),
]
