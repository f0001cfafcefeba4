"""The pages the scans hold (PDF, PNG and JPEG files, or folders of them), each loaded as a grey image."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from attnquiz.engine.capped import TooLarge, read_capped
from attnquiz.engine.scan.layout import Layout, ScanError
from attnquiz.engine.scan.opencv import MAX_PIXELS, opencv

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


RENDER_DPI = 200  # a scanned PDF's pages are rasterised at this resolution
MAX_SCAN_BYTES = 64 << 20  # one page's PNG or JPEG (a page at 600 dpi is a few MB)


IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")


def scan_files(paths: Sequence[Path]) -> list[Path]:
    """The scans named: each file as given, and a folder's PDF, PNG and JPEG files (what a scanner's
    "scan to folder" writes; its other files are left alone), in the natural order of their names
    (page-2 before page-10)."""

    def natural(path: Path) -> list[tuple[int, int | str]]:
        return [
            (0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", path.name.lower())
        ]

    out: list[Path] = []
    for path in paths:
        if not path.is_dir():
            out.append(path)
            continue
        try:
            found = [
                p for p in path.iterdir() if p.suffix.lower() in (".pdf", *IMAGE_SUFFIXES) and p.is_file()
            ]
        except OSError as exc:
            raise ScanError(f"{path}: cannot read the folder ({exc.strerror or exc})") from exc
        if not found:
            raise ScanError(f"{path}: a folder with no PDF, PNG or JPEG file in it")
        out += sorted(found, key=natural)
    return out


def page_cap(layout: Layout) -> int:
    """The most pages one run reads: every page of the sheets scanned four times over, and a hundred
    strays; a file of thousands of pages more is a wrong file, not a class, and would run for hours."""
    return 4 * len(layout.pages) + 100


def pages_of(paths: Sequence[Path], cap: int | None = None) -> list[tuple[Path, int]]:
    """Every page to read: (file, page index) for each page of a PDF, (file, 0) for an image; a folder
    stands for the scans in it. More than ``cap`` pages in all is refused, before any is read."""
    out: list[tuple[Path, int]] = []

    def check(path: Path) -> None:
        if cap is not None and len(out) > cap:
            raise ScanError(
                f"{path}: the scans hold {len(out)} pages or more, but at most {cap} are read in one run "
                "(four times the answer sheets' pages, and some strays): is it the right file? Scan the "
                "class in smaller batches"
            )

    for path in scan_files(paths):
        suffix = path.suffix.lower()
        if suffix == ".pdf":
            try:
                import pypdfium2 as pdfium
            except ImportError as exc:
                raise ScanError("reading a PDF needs pypdfium2: pip install 'attnquiz[scan]'") from exc
            try:
                document = pdfium.PdfDocument(str(path))
            except (pdfium.PdfiumError, OSError) as exc:
                raise ScanError(f"{path}: not a readable PDF ({exc})") from exc
            out += [(path, k) for k in range(min(len(document), (cap or len(document)) + 1))]
            document.close()
            check(path)
        elif suffix in IMAGE_SUFFIXES:
            if not path.is_file():
                raise ScanError(f"{path}: no such file")
            out.append((path, 0))
            check(path)
        else:
            raise ScanError(f"{path}: a scan is a PDF, PNG or JPEG file")
    return out


def load_page(path: Path, index: int, dpi: int = RENDER_DPI) -> npt.NDArray[np.uint8]:
    """One page as a grey image."""
    return load_grey(path, index, dpi)[0]


def load_grey(path: Path, index: int, dpi: int = RENDER_DPI) -> tuple[npt.NDArray[np.uint8], bool]:
    """One page as a grey image, and whether it is known to be black and white: a PDF page whose scan
    is a 1-bit image (a black-and-white scanner's CCITT or JBIG2 page), which rendering smooths into
    greys that `is_bilevel` cannot tell from a greyscale scan's."""
    import numpy as np

    cv2 = opencv()
    if path.suffix.lower() == ".pdf":
        import pypdfium2 as pdfium
        import pypdfium2.raw as pdfium_raw

        document = pdfium.PdfDocument(str(path))
        try:
            page = document[index]
            one_bit = any(
                image.get_metadata().bits_per_pixel == 1
                for image in page.get_objects(filter=[pdfium_raw.FPDF_PAGEOBJ_IMAGE], max_depth=2)
            )
            width, height = page.get_size()
            # A page of absurd size is rendered smaller (its marks are then simply not found), never in GBs.
            scale = min(dpi / 72, (MAX_PIXELS / max(1.0, width * height)) ** 0.5)
            bitmap = page.render(scale=scale, grayscale=True)
            image = np.array(bitmap.to_numpy(), dtype=np.uint8)
        finally:
            document.close()
        return (image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)), one_bit
    try:
        data = np.frombuffer(read_capped(path, MAX_SCAN_BYTES), dtype=np.uint8)
    except TooLarge as exc:
        raise ScanError(f"{path}: {exc.said('a scanned page')}") from None
    except OSError as exc:
        raise ScanError(f"{path}: cannot read it ({exc.strerror or exc})") from exc
    try:
        image = cv2.imdecode(data, cv2.IMREAD_GRAYSCALE)
    except cv2.error as exc:  # e.g. more pixels than OPENCV_IO_MAX_IMAGE_PIXELS
        raise ScanError(f"{path}: not a readable image ({str(exc).strip()[-120:]})") from exc
    if image is None:
        raise ScanError(f"{path}: not a readable image")
    return np.asarray(image, dtype=np.uint8), False
