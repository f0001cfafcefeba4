"""OpenCV, imported on first use (the scan extra is optional) with its cap on a decoded image's pixels."""

from __future__ import annotations

import os
from typing import Any

from attnquiz.engine.scan.layout import ScanError

MAX_PIXELS = 64_000_000  # a page image larger than this (A4 at 900 dpi) is refused or rendered smaller


def opencv() -> Any:
    """The ``cv2`` module, or a `ScanError` that says how to install it."""
    # OpenCV refuses to decode an image of more pixels than this (a "decompression bomb"): read before import.
    os.environ.setdefault("OPENCV_IO_MAX_IMAGE_PIXELS", str(MAX_PIXELS))
    try:
        import cv2
    except ImportError as exc:  # the scan extra is optional
        raise ScanError(
            "quiz scan needs OpenCV and PDFium: pip install 'attnquiz[scan]' (opencv-python-headless, "
            "pypdfium2)"
        ) from exc
    return cv2
