"""Reading every page of the scans, in order, by a pool of processes (one per CPU).

A page scanned more than once whose scans read differently is read again, keeping its fields' crops
for the review."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from attnquiz.engine.scan.class_answers import MAX_SCANS_SHOWN
from attnquiz.engine.scan.layout import Layout, ScanError
from attnquiz.engine.scan.page import read_image
from attnquiz.engine.scan.page_files import RENDER_DPI, load_grey, page_cap, pages_of
from attnquiz.engine.scan.page_read import PageRead, same_reading

Progress = Callable[[int, int], None]


_WORKER: dict[str, Layout] = {}  # the layout a worker process reads pages against, set once at its start


def _init_worker(layout: Layout) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle
    _WORKER["layout"] = layout


def _read_task(task: tuple[str, int, int]) -> PageRead:
    return read_page(Path(task[0]), task[1], _WORKER["layout"], task[2])


def read_page(
    path: Path, index: int, layout: Layout, dpi: int = RENDER_DPI, keep_crops: bool = False
) -> PageRead:
    """Read page ``index`` of ``path`` (a problem on the page, never an exception, for a bad page)."""
    source = f"{path}" + (f" page {index + 1}" if path.suffix.lower() == ".pdf" else "")
    try:
        gray, one_bit = load_grey(path, index, dpi)
    except ScanError as exc:
        return PageRead(source, index, problem=str(exc))
    except Exception as exc:  # PDFium's or OpenCV's error on one damaged page: that page's problem
        said = " ".join(str(exc).split())[-160:]
        return PageRead(source, index, problem=f"this page could not be read ({type(exc).__name__}: {said})")
    return read_image(gray, layout, source, index, bilevel=one_bit, keep_crops=keep_crops)


def read_scans(
    paths: Sequence[Path],
    layout: Layout,
    *,
    jobs: int | None = None,
    progress: Progress | None = None,
    dpi: int = RENDER_DPI,
) -> list[PageRead]:
    """Read every page of every scan, in order, with ``jobs`` processes (default: every CPU)."""
    tasks = pages_of(paths, page_cap(layout))
    if progress is not None:
        progress(0, len(tasks))
    from attnquiz.engine.parallel import default_jobs

    jobs = default_jobs() if jobs is None else jobs
    out: list[PageRead] = []
    if jobs <= 1 or len(tasks) < 4:
        for done, (path, index) in enumerate(tasks, 1):
            out.append(read_page(path, index, layout, dpi))
            if progress is not None:
                progress(done, len(tasks))
        return _with_duplicate_crops(out, tasks, layout, dpi)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    with ProcessPoolExecutor(jobs, mp_context=context, initializer=_init_worker, initargs=(layout,)) as pool:
        work = [(str(path), index, dpi) for path, index in tasks]
        for done, page in enumerate(pool.map(_read_task, work, chunksize=2), 1):
            out.append(page)
            if progress is not None:
                progress(done, len(tasks))
    return _with_duplicate_crops(out, tasks, layout, dpi)


def _with_duplicate_crops(
    pages: list[PageRead], tasks: Sequence[tuple[Path, int]], layout: Layout, dpi: int
) -> list[PageRead]:
    """``pages`` with every field's crop kept on each scan of a page scanned more than once whose scans
    read differently: the review shows both crops of each field that differs. Those few pages are
    read again (keeping every page's crops from the start would hold a large class's in memory)."""
    scans: dict[tuple[int, int], list[int]] = {}
    for k, page in enumerate(pages):
        if page.student is not None and page.sheet_page is not None:
            scans.setdefault((page.student, page.sheet_page), []).append(k)
    for ks in scans.values():
        if len(ks) < 2 or all(same_reading(pages[ks[0]], pages[k]) for k in ks[1:]):
            continue
        for k in ks[:MAX_SCANS_SHOWN]:
            again = read_page(tasks[k][0], tasks[k][1], layout, dpi, keep_crops=True)
            pages[k].field_crops = again.field_crops
    return pages
