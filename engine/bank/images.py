"""Image files next to a bank: ``![alt text](figures/file.png)`` in prompts and solutions.

A bank may show PNG, JPEG and SVG files from its own folder (or a folder below it). Each file is
checked when the bank loads (and again when it is rendered, since it may have changed since):

- the path is relative, below the bank's folder (no ``..`` out of it, no symlink out of it), not a
  URL, and ends in ``.png``, ``.jpg``/``.jpeg`` or ``.svg``;
- the file exists, is readable and holds at most `MAX_IMAGE_BYTES`;
- its bytes are a whole picture of the kind its name says, within a pixel budget: a PNG or JPEG
  decoded far enough to know its size and that it is not cut short or damaged
  (`attnquiz.engine.bank.image_raster`), an SVG parsed and rebuilt from an allow-list of elements and
  attributes, nothing outside the file referred to (`attnquiz.engine.bank.image_svg`): the rebuilt
  bytes are what every renderer embeds, never the file's own. An SVG is embedded in HTML pages and
  LMS questions: it must be an inert picture.

A package file name (`ImageFile.name`) is the content's digest with at most a sanitised part of
the file's name: ``[A-Za-z0-9._-]`` only, whatever the bank called the file.

Renderers ask for the images of the question they are rendering through `using` (the bank's folder)
and `resolve`; a file that cannot be read at render time is shown as its alt text and the reason.
"""

from __future__ import annotations

import base64
import contextvars
import functools
import hashlib
import os
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import ParamSpec, TypeVar

from attnquiz.engine.bank import image_raster, image_svg
from attnquiz.engine.markup.image_refs import SUFFIXES as SUFFIXES
from attnquiz.engine.markup.image_refs import ImageError as ImageError
from attnquiz.engine.markup.image_refs import check_src as check_src

MAX_IMAGE_BYTES = 2 * 1024 * 1024
"""The largest image file a bank may show (2 MiB): it is embedded in every page that shows it."""

P = ParamSpec("P")
R = TypeVar("R")

_EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/svg+xml": ".svg"}


@dataclass(frozen=True)
class ImageFile:
    """A checked image: the path the text gives, its media type and its bytes."""

    src: str
    mime: str
    data: bytes
    # The file's size and modification time (ns) when read, after ``src``: a cached bank whose
    # images no longer match is read again (`unchanged`).
    stamp: tuple[str, int, int]

    @property
    def name(self) -> str:
        """A file name for packages (Moodle, QTI, Typst): the content's digest and the suffix, so that
        two images never share a name and one image shown twice is stored once."""
        digest = hashlib.sha256(self.data).hexdigest()[:16]
        path = PurePosixPath(self.src)
        # Only [A-Za-z0-9._-] reaches a package: the name goes into HTML, XML, Typst and zip paths.
        stem = re.sub(r"[^A-Za-z0-9_-]+", "-", path.stem).strip("-")[:40]
        return f"{stem + '-' if stem else ''}{digest}{_EXTENSIONS[self.mime]}"

    def data_uri(self) -> str:
        """The image as a ``data:`` URI (for HTML)."""
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"


def load(folder: Path, src: str) -> ImageFile:
    """The checked image ``src`` of a bank in ``folder``; raises ImageError saying what is wrong."""
    mime = check_src(src)
    path, info = _stat(folder, src)
    if not path.is_file():
        raise ImageError(f"image {src!r}: not a file")
    if info.st_size > MAX_IMAGE_BYTES:
        raise ImageError(
            f"image {src!r}: the file has {info.st_size:,} bytes; an image may have at most "
            f"{MAX_IMAGE_BYTES:,} (2 MiB)"
        )
    return _read(str(path), info.st_mtime_ns, info.st_size, src, mime)


def _stat(folder: Path, src: str) -> tuple[Path, os.stat_result]:
    """The file ``src`` names in ``folder``, resolved, and its status now; ImageError when it
    cannot be read or leads out of the folder."""
    base = folder.resolve()
    path = base / src
    try:
        resolved = path.resolve()
        resolved.relative_to(base)
    except ValueError:
        raise ImageError(f"image {src!r}: the file is a link out of the bank's folder") from None
    except OSError as exc:
        raise ImageError(f"image {src!r}: cannot read the file ({exc.strerror or exc})") from None
    try:
        return resolved, resolved.stat()
    except FileNotFoundError:
        raise ImageError(f"image {src!r}: no such file (looked for {path})") from None
    except OSError as exc:
        raise ImageError(f"image {src!r}: cannot read the file ({exc.strerror or exc})") from None


def unchanged(folder: Path, stamps: Iterable[tuple[str, int, int]]) -> bool:
    """Whether every image still has the size and modification time of its `ImageFile.stamp`."""
    for src, size, mtime_ns in stamps:
        try:
            _, info = _stat(folder, src)
        except ImageError:
            return False
        if (info.st_size, info.st_mtime_ns) != (size, mtime_ns):
            return False
    return True


@lru_cache(maxsize=256)
def _read(path: str, mtime_ns: int, size: int, src: str, mime: str) -> ImageFile:
    # The size and modification time are part of the cache key: an edited file is read again.
    try:
        with Path(path).open("rb") as handle:
            data = handle.read(MAX_IMAGE_BYTES + 1)
    except OSError as exc:
        raise ImageError(f"image {src!r}: cannot read the file ({exc.strerror or exc})") from None
    if len(data) > MAX_IMAGE_BYTES:
        raise ImageError(f"image {src!r}: the file is larger than {MAX_IMAGE_BYTES:,} bytes (2 MiB)")
    return ImageFile(src, mime, verified(src, mime, data), (src, size, mtime_ns))


def verified(src: str, mime: str, data: bytes) -> bytes:
    """The bytes to show for image ``src``: a PNG or JPEG decoded far enough to know it is whole and
    within the pixel budget (`attnquiz.engine.bank.image_raster`), an SVG rebuilt from its allowed parts
    (`attnquiz.engine.bank.image_svg`); raises ImageError saying what is wrong."""
    try:
        if mime == "image/png":
            image_raster.png_size(data)
            return data
        if mime == "image/jpeg":
            image_raster.jpeg_size(data)
            return data
        return image_svg.clean(data)
    except (image_raster.RasterError, image_svg.SvgError) as exc:
        raise ImageError(f"image {src!r}: {exc}") from None


# ---------------------------------------------------------------------------------------------
# The folder of the question being rendered
# ---------------------------------------------------------------------------------------------

_FOLDER: contextvars.ContextVar[str] = contextvars.ContextVar("attnquiz_image_folder", default="")


@contextmanager
def using(folder: str | Path) -> Iterator[None]:
    """Resolve images against ``folder`` (a bank's folder) inside the ``with`` block."""
    token = _FOLDER.set(str(folder))
    try:
        yield
    finally:
        _FOLDER.reset(token)


def current_folder() -> str:
    """The folder images are resolved against now ("" when none was given)."""
    return _FOLDER.get()


def resolve(src: str) -> ImageFile:
    """The image ``src`` of the bank being rendered; raises ImageError when it cannot be shown."""
    folder = _FOLDER.get()
    if not folder:
        check_src(src)
        raise ImageError(f"image {src!r}: no bank folder to find it in")
    return load(Path(folder), src)


def in_question_folder(render: Callable[P, R]) -> Callable[P, R]:
    """Decorate a renderer's function of one question: its images are found in the question's bank folder
    (the first argument that is a `Question`, known by its ``folder`` and ``variant``)."""

    @functools.wraps(render)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        question = next((a for a in args if hasattr(a, "folder") and hasattr(a, "variant")), None)
        folder = getattr(question, "folder", "") if question is not None else ""
        if not folder:
            return render(*args, **kwargs)
        with using(folder):
            return render(*args, **kwargs)

    return run


__all__ = [
    "MAX_IMAGE_BYTES",
    "ImageError",
    "ImageFile",
    "check_src",
    "current_folder",
    "in_question_folder",
    "load",
    "resolve",
    "using",
]
