"""Finding a scanned page's four corner squares, and the perspective warp that maps them onto the layout."""

from __future__ import annotations

from typing import TYPE_CHECKING

from attnquiz.engine.scan.layout import PX_PER_PT, Layout
from attnquiz.engine.scan.opencv import opencv

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


def corner_marks(gray: npt.NDArray[np.uint8], layout: Layout) -> list[tuple[float, float]] | None:
    """The centres of the four corner squares in the image (top-left, top-right, bottom-left,
    bottom-right), or None when one is missing."""
    import numpy as np

    cv2 = opencv()
    height, width = gray.shape
    scale = width / layout.page_size[0]
    expected = layout.mark_size * scale
    blur = cv2.GaussianBlur(gray, (5, 5), 0)
    _, ink = cv2.threshold(blur, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    contours, _ = cv2.findContours(ink, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    found: list[tuple[float, float, float]] = []
    for contour in contours:
        area = cv2.contourArea(contour)
        if not (0.35 * expected**2 < area < 2.6 * expected**2):
            continue
        (cx, cy), (w, h), _ = cv2.minAreaRect(contour)
        if min(w, h) <= 0 or max(w, h) / min(w, h) > 1.35 or area / (w * h) < 0.82:
            continue
        found.append((cx, cy, area))
    if len(found) < 4:
        return None
    corners = [(0.0, 0.0), (width, 0.0), (0.0, height), (width, height)]
    chosen: list[tuple[float, float]] = []
    reach = 0.25 * np.hypot(width, height)
    for corner in corners:
        best = min(found, key=lambda f: np.hypot(f[0] - corner[0], f[1] - corner[1]))
        if np.hypot(best[0] - corner[0], best[1] - corner[1]) > reach:
            return None
        chosen.append((best[0], best[1]))
    if len(set(chosen)) < 4:
        return None
    return chosen


def warp(
    gray: npt.NDArray[np.uint8], marks: list[tuple[float, float]], layout: Layout, size: tuple[int, int]
) -> npt.NDArray[np.uint8]:
    """The page mapped onto its layout: the corner squares found (``marks``) onto their places, which
    undoes rotation, scale, skew and perspective at once, resampled at `PX_PER_PT` pixels a point into
    an image of ``size`` (width, height)."""
    import numpy as np

    cv2 = opencv()
    target = np.array([(x * PX_PER_PT, y * PX_PER_PT) for x, y in layout.marks], dtype=np.float32)
    transform = cv2.getPerspectiveTransform(np.array(marks, dtype=np.float32), target)
    page: npt.NDArray[np.uint8] = cv2.warpPerspective(
        gray, transform, size, flags=cv2.INTER_LINEAR, borderValue=255
    )
    return page
