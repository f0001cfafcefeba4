"""The pictures the review shows: a page or a field's box as a PNG, and crops stacked under their labels."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from attnquiz.engine.scan.layout import PX_PER_PT
from attnquiz.engine.scan.opencv import opencv

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


def png(image: npt.NDArray[np.uint8]) -> bytes:
    """``image`` encoded as a PNG (empty if OpenCV cannot encode it)."""
    cv2 = opencv()
    ok, data = cv2.imencode(".png", image)
    return bytes(data.tobytes()) if ok else b""


def crop_png(page: npt.NDArray[np.uint8], box: tuple[float, float, float, float]) -> bytes:
    """The PNG of ``box`` (x, y, width, height in points) of a resampled page, with a margin around it."""
    x, y, w, h = box
    pad = 8.0
    top, left = max(0, int((y - pad) * PX_PER_PT)), max(0, int((x - pad) * PX_PER_PT))
    return png(page[top : int((y + h + pad) * PX_PER_PT), left : int((x + w + pad) * PX_PER_PT)])


MAX_LABEL = 70  # characters of a label written above a crop (a file name is cut to its end)


def _label(text: str) -> str:
    """``text`` as a crop's label shows it: printable ASCII (OpenCV's fonts have no other), its end kept."""
    shown = "".join(c if " " <= c <= "~" else "?" for c in text)
    return shown if len(shown) <= MAX_LABEL else "..." + shown[-(MAX_LABEL - 3) :]


def stacked(parts: Sequence[tuple[str, bytes]]) -> bytes:
    """One PNG of the crops ``parts`` (label, PNG) one below the other, each under its label: both scans
    of a field read differently, or a vector's entries. A part that is no image is left out."""
    import numpy as np

    cv2 = opencv()
    blocks: list[npt.NDArray[np.uint8]] = []
    for label, data in parts:
        image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_GRAYSCALE) if data else None
        if image is None:
            continue
        if label:
            strip = np.full((26, max(image.shape[1], 8 * len(_label(label)) + 12)), 255, np.uint8)
            cv2.putText(strip, _label(label), (6, 18), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0,), 1, cv2.LINE_AA)
            blocks.append(strip)
        blocks += [np.asarray(image, np.uint8), np.full((6, 1), 255, np.uint8)]
    if not blocks:
        return b""
    width = max(b.shape[1] for b in blocks)
    padded = [np.pad(b, ((0, 0), (0, width - b.shape[1])), constant_values=255) for b in blocks]
    return png(np.vstack(padded[:-1]))
