"""An image reference in prompt text, ``![alt text](figures/file.png)``: the paths a bank may use.

The Markdown reader checks each reference as it reads a prompt; `attnquiz.engine.bank.images` reads
the file a checked reference names.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

SUFFIXES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".svg": "image/svg+xml"}

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


class ImageError(ValueError):
    """An image reference or file that cannot be shown (the message says why)."""


def check_src(src: str) -> str:
    """The media type of an image path a bank may use; raises ImageError for any other path."""
    if not src:
        raise ImageError("an image needs a file: ![alt text](figures/file.png)")
    if _URL.match(src) or src.startswith("//"):
        raise ImageError(f"image {src!r}: a URL is not allowed; put the file next to the bank")
    if "\\" in src:
        raise ImageError(f"image {src!r}: write the path with / (a relative path below the bank's folder)")
    path = PurePosixPath(src)
    if path.is_absolute() or re.match(r"^[A-Za-z]:", src):
        raise ImageError(f"image {src!r}: the path must be relative to the bank's folder")
    if ".." in path.parts:
        raise ImageError(f"image {src!r}: the path may not leave the bank's folder (no ..)")
    mime = SUFFIXES.get(path.suffix.lower())
    if mime is None:
        raise ImageError(f"image {src!r}: a PNG, JPEG or SVG file is needed (.png, .jpg, .jpeg or .svg)")
    return mime
