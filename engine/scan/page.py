"""Reading one page image: warped onto its layout, named by its QR code (or by hand), its fields read."""

from __future__ import annotations

from typing import TYPE_CHECKING

from attnquiz.engine.scan.bubbles import is_bilevel, read_fields
from attnquiz.engine.scan.corners import corner_marks, warp
from attnquiz.engine.scan.layout import PX_PER_PT, Layout, PageSpec
from attnquiz.engine.scan.opencv import opencv
from attnquiz.engine.scan.page_read import PageRead
from attnquiz.engine.scan.pictures import crop_png, png
from attnquiz.engine.scan.qr import decode_qr

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


MIN_SIDE = 200  # pixels: a page image narrower than this is no page (an A4 page at 150 dpi: 1240 x 1754)
MAX_ASPECT = 4.0  # a page image longer than this many times its width is a strip, not a page


def read_image(
    gray: npt.NDArray[np.uint8],
    layout: Layout,
    source: str,
    index: int,
    identity: tuple[int, int] | None = None,
    bilevel: bool = False,
    keep_crops: bool = False,
) -> PageRead:
    """Read one page image (grey, any resolution and orientation up to a few degrees, or upside down).

    ``identity`` (student, page of the sheet) settles a page whose QR code could not be read;
    ``bilevel``: the page is known to be black and white (a PDF's 1-bit image); ``keep_crops``: keep
    every field's crop in ``field_crops``. Whatever
    the image, the answer is a page read or a page with a one-line problem, never an exception."""
    shape = getattr(gray, "shape", ())
    if len(shape) != 2 or min(shape) < MIN_SIDE or max(shape) > MAX_ASPECT * min(shape):
        size = " x ".join(str(n) for n in reversed(shape)) or "no"
        return PageRead(source, index, problem=f"not a page: an image of {size} pixels")
    try:
        return _read_image(gray, layout, source, index, identity, bilevel, keep_crops)
    except Exception as exc:  # OpenCV's and NumPy's errors on a page nobody foresaw
        # One page's problem, said in one line; the rest of the batch is read and written.
        reason = " ".join(str(exc).split())[-160:]
        return PageRead(
            source, index, problem=f"this page could not be read ({type(exc).__name__}: {reason})"
        )


def _read_image(
    gray: npt.NDArray[np.uint8],
    layout: Layout,
    source: str,
    index: int,
    identity: tuple[int, int] | None = None,
    bilevel: bool = False,
    keep_crops: bool = False,
) -> PageRead:
    cv2 = opencv()
    result = PageRead(source, index)
    width, height = layout.page_size
    size = (round(width * PX_PER_PT), round(height * PX_PER_PT))
    if identity is None or gray.shape[:2] != (size[1], size[0]):
        marks = corner_marks(gray, layout)
        if marks is None:
            result.problem = (
                "the four black corner squares were not all found (is the page cut off or folded?)"
            )
            result.image = png(_shrink(gray))
            return result
        page = warp(gray, marks, layout, size)
    else:
        page = gray
    spec: PageSpec | None = None
    if identity is not None:
        spec = layout.pages.get(identity)
        if spec is None:
            result.problem = f"the answer sheets have no page {identity[1]} for student {identity[0]}"
            result.image = png(page)
            return result
    else:
        any_spec = next(iter(layout.pages.values()))
        for turned in (page, cv2.rotate(page, cv2.ROTATE_180)):
            text = decode_qr(turned, any_spec.qr)
            if text:
                page = turned
                break
        else:
            result.problem = "the QR code could not be read: whose page is it?"
            result.image, result.resampled = png(page), True
            return result
        parts = text.split("|")
        if len(parts) != 6 or parts[0] != "QUIZSHEET1":
            result.problem = f"the QR code ({text[:60]!r}) is not a quiz answer sheet's"
            result.image, result.resampled = png(page), True
            return result
        if parts[1] != layout.export:
            result.problem = (
                f"this page belongs to another export ({parts[1]}, the layout file is {layout.export}): "
                "scan it with that export's answer-sheets.json"
            )
            result.image = png(page)  # the page as the scan mapped it: the instructor sees what it is
            return result
        try:
            key = (int(parts[2]), int(parts[4]))
        except ValueError:
            key = (-1, -1)
        spec = layout.pages.get(key)
        if spec is None or spec.code != parts[3]:
            result.problem = f"the QR code names a page the layout file does not have ({text[:60]!r})"
            result.image, result.resampled = png(page), True
            return result
    result.student, result.sheet_page = spec.student, spec.sheet_page
    read_fields(page, spec, layout, result, bilevel or is_bilevel(gray))
    if keep_crops:
        result.field_crops = {f.id: crop_png(page, f.box) for f in spec.fields if f.kind != "student"}
    return result


def _shrink(gray: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    cv2 = opencv()
    height, width = gray.shape[:2]
    factor = min(1.0, 1600 / max(height, width))
    return (
        gray if factor == 1.0 else cv2.resize(gray, None, fx=factor, fy=factor, interpolation=cv2.INTER_AREA)
    )
