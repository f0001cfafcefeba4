"""A bank file's bytes and text, read with a bound: below the loader (which parses the text) and below
`attnquiz.engine.bank.finding` (which finds bank files and caches what the loader made of them)."""

from __future__ import annotations

from pathlib import Path

from attnquiz.engine.capped import TooLarge, read_capped
from attnquiz.engine.errors import BankError, Issue

MAX_BANK_BYTES = 1_000_000
"""A bank file larger than this is refused before it is parsed (the built-in banks are ~50 kB)."""


def read_bank_bytes(path: Path, file: str) -> bytes:
    """The bytes of a bank file, refused beyond `MAX_BANK_BYTES` without reading the rest."""
    try:
        return read_capped(path, MAX_BANK_BYTES)
    except TooLarge:
        message = f"the file is larger than {MAX_BANK_BYTES:,} bytes, the most a bank may have"
        raise BankError(file, [Issue(file, 1, "", message)]) from None
    except OSError as exc:
        raise BankError(file, [Issue(file, 1, "", f"cannot read the file ({exc.strerror or exc})")]) from None


def decode_bank(data: bytes, file: str) -> str:
    """A bank's text as Path.read_text reads it (UTF-8, universal newlines)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BankError(
            file, [Issue(file, 1, "", f"cannot read the file: not UTF-8 ({exc.reason})")]
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


__all__ = ["MAX_BANK_BYTES", "decode_bank", "read_bank_bytes"]
