"""The child process of ``quiz check`` for a bank with plugins (started by `attnquiz.engine.check.child`).

It imports the bank's plugins and checks its items from ``start``, with `faulthandler`'s watchdog
armed around the import and each generation (`attnquiz.engine.check.checks.BUILD_GUARD`), and reports
each step as a JSON line on its original standard output (the protocol is `check_child`'s).
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import os
import sys
from collections.abc import Iterator
from typing import Any

from msgspec import structs

from attnquiz.engine import errors
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loaded import BankItem
from attnquiz.engine.check import checks as check
from attnquiz.engine.errors import BankError


def main() -> None:
    """The child process: import the bank's plugins and check its items from ``start``, reporting
    each step as a JSON line, with a watchdog on the import and on every generation."""
    request = json.loads(sys.argv[-1])
    limit = float(request["limit"])
    # The results go to the original stdout; anything the plugin prints goes to stderr.
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    errors.notice = lambda message: None  # the parent has said it

    def send(event: dict[str, Any]) -> None:
        channel.write(json.dumps(event) + "\n")

    @contextlib.contextmanager
    def watchdog() -> Iterator[None]:
        faulthandler.dump_traceback_later(limit, exit=True)
        try:
            yield
        finally:
            faulthandler.cancel_dump_traceback_later()

    try:
        with watchdog():
            bank = banks.load(request["bank"], plugins=True)
    except BankError as exc:
        send(
            {
                "event": "errors",
                "issues": [structs.asdict(issue) for issue in exc.issues],
                "source": exc.source,
            }
        )
        return
    send({"event": "imported"})
    index_of = {entry.id: index for index, entry in enumerate(bank.items)}

    @contextlib.contextmanager
    def guard(entry: BankItem, seed: int | None) -> Iterator[None]:
        send({"event": "build", "index": index_of[entry.id], "seed": seed})
        with watchdog():
            yield

    check.BUILD_GUARD.set(guard)
    check.check_bank(
        bank,
        int(request["variants"]),
        start=int(request["start"]),
        on_item=lambda item: send({"event": "item", "report": item.to_json()}),
    )
    send({"event": "done"})


__all__ = ["main"]
