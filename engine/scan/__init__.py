"""Scanned answer sheets read back into the answers.csv that `quiz grade` reads.

A scan is a PDF (rasterised by pypdfium2, PDFium's own renderer: no system binary) or a PNG or
JPEG image. Each page is read on its own, so pages are read by a pool of processes, one per CPU
(`batch`; the files and their pages: `page_files`; one page from start to end: `page`):

1. the four solid corner squares are found (OpenCV contours: square, solid, of the expected size,
   nearest each corner of the image) and a perspective transform maps them onto their places in
   the layout (`layout`), which undoes rotation, scale, skew and perspective at once; the page is
   resampled at `PX_PER_PT` pixels a point (`corners`);
2. the QR code names the page (export, student, variant, page of the sheet); a page upside down is
   turned over; a page whose code cannot be read is never guessed: it goes to the review with its
   image, and ``quiz scan --fix`` asks whose page it is (`qr`);
3. every bubble's darkness is measured inside it (relative to the paper and to the corner squares'
   ink), and in four small diagonal sectors just outside it, where the arms of a cross-out reach;
   a bubble is *filled*, *empty*, *cancelled* (crossed out) or *unclear* (faint, erased, half
   crossed) (`bubbles`; the digits written above a number's columns: `handwriting`);
4. each field is decided (`fields`): any unclear bubble, two filled bubbles in one digit column, a gap
   in a number, or two options of a single choice send the field to the review with a cropped
   image (`pictures`), and its cell in ``answers.csv`` reads ``?review N`` (which `quiz grade` cannot
   read and counts as invalid) until it is settled.

The class's pages become ``answers.csv`` and the review file in `class_answers` (the review file's
items: `review`); `settle` writes what the instructor decides (``quiz scan --fix``, `quiz serve`).

Why OpenCV (opencv-python-headless) and not scikit-image: one wheel with no further dependencies
has everything this needs — PNG/JPEG decoding and encoding, contours, the perspective warp, and a
QR code decoder — where scikit-image needs SciPy, imageio and a separate QR decoder (pyzbar wants
the system's zbar library). OpenCV's wheel is larger (about 150 MB installed, against about 130
MB for scikit-image with SciPy, plus a decoder), but it is one well-kept package that also decodes
QR codes robustly, so it is an optional extra: ``pip install attnquiz[scan]`` (`opencv`).
"""
