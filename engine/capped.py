"""Reading a file that has a size cap: the size is checked before the bytes are read.

A reader that reads the whole file and then compares its length with the cap has already spent the
memory the cap was meant to save (a 5 GiB answers file is a ``MemoryError``, not a message). Here a
regular file's size is taken from the open handle's ``fstat`` (the file that is read, not one
swapped in after a ``stat`` of the name), and whatever the file is (a pipe, a device, a file that
grows while it is read), no more than one byte beyond the cap is ever read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class TooLarge(Exception):
    """The file holds more than the cap; ``size`` is its size when the file says it (else None)."""

    def __init__(self, cap: int, size: int | None) -> None:
        super().__init__(f"larger than {cap:,} bytes")
        self.cap = cap
        self.size = size

    def said(self, what: str) -> str:
        """One line for the user: ``what`` is the kind of file (e.g. "an answers file")."""
        has = f"has {self.size:,} bytes" if self.size is not None else f"is larger than {self.cap:,} bytes"
        return f"the file {has}; {what} may have at most {self.cap:,}"


def read_capped(path: Path | str, cap: int) -> bytes:
    """The bytes of ``path``: `TooLarge` beyond ``cap`` without reading them, `OSError` as ``open``."""
    with Path(path).open("rb") as handle:
        info = os.fstat(handle.fileno())
        if stat.S_ISREG(info.st_mode) and info.st_size > cap:
            raise TooLarge(cap, info.st_size)
        data = handle.read(cap + 1)
    if len(data) > cap:
        raise TooLarge(cap, None)
    return data


__all__ = ["TooLarge", "read_capped"]
