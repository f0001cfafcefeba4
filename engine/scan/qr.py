"""Decoding the QR code that names a resampled page (export, student, variant, page of the sheet)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from attnquiz.engine.scan.layout import PX_PER_PT
from attnquiz.engine.scan.opencv import opencv

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


def decode_qr(image: npt.NDArray[np.uint8], qr: tuple[float, float, float]) -> str:
    """The text of the QR code at ``qr`` (x, y, size in points) of a resampled page, "" when none is read
    (each decoder tried on the crop, then on sharpened and enlarged copies of it)."""
    cv2 = opencv()
    x, y, size = qr
    pad = 12.0
    top, left = max(0, int((y - pad) * PX_PER_PT)), max(0, int((x - pad) * PX_PER_PT))
    crop = image[top : int((y + size + pad) * PX_PER_PT), left : int((x + size + pad) * PX_PER_PT)]
    detectors = [cv2.QRCodeDetector()]
    if hasattr(cv2, "QRCodeDetectorAruco"):  # a second decoder, more tolerant of blur and noise
        detectors.append(cv2.QRCodeDetectorAruco())

    def attempts() -> Iterator[npt.NDArray[np.uint8]]:
        # Made one at a time: a clean scan is decoded at the first, most pages never need the others.
        yield crop
        yield cv2.threshold(crop, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)[1]
        yield cv2.GaussianBlur(crop, (3, 3), 0)
        for factor in (2.0, 1.5, 3.0):
            bigger = cv2.resize(crop, None, fx=factor, fy=factor, interpolation=cv2.INTER_CUBIC)
            yield bigger
            yield cv2.threshold(bigger, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)[1]

    for detector in detectors:
        for candidate in attempts():
            try:
                text, _, _ = detector.detectAndDecode(candidate)
            except cv2.error:
                text = ""
            if text:
                return str(text)
    return ""
