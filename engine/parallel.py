"""Whole-class work (``quiz grade``, ``quiz check``) split across the CPUs, results in order.

Work is handed to processes forked from this one, so each worker has the loaded bank without
pickling it or loading it again, and only each task's input and result cross between processes.
Forking is used only where it is safe and cheap: on Linux, in a process with one thread (a
forked copy of a threaded process can deadlock on a lock another thread held) that has not loaded
Typst (whose compiler's own threads are not there in a copy), and for enough tasks to pay for the
workers. Anywhere else the same function runs here, one task after another,
and gives the same results: the split never changes what is computed, only where.

Workers ignore Ctrl-C (the terminal sends it to the whole process group): this process alone
stops, cancels what is not started and ends its workers (SIGTERM, which a worker never handles as
this process may), so a Ctrl-C prints one message, not a traceback per worker.
"""

from __future__ import annotations

import collections
import itertools
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from attnquiz.engine.errors import QuizError

Context = TypeVar("Context")
Task = TypeVar("Task")
Result = TypeVar("Result")

_SHARED: dict[str, tuple[Callable[[Any, Any], Any], Any]] = {}
"""The function and its context in a worker, under "work": set before the fork, so inherited,
never pickled."""


def default_jobs() -> int:
    """Processes at once when not told: every CPU this process may use."""
    count = getattr(os, "process_cpu_count", None)  # Python 3.13: the CPUs this process may use
    if count is not None:
        return max(1, count() or 1)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS and Windows have no affinity
        return max(1, os.cpu_count() or 1)


def can_fork() -> bool:
    """Whether workers may be forked from this process now: on Linux, with no other Python thread,
    and before Typst was loaded here (its compiler keeps native threads that a forked copy lacks,
    and a worker compiling a figure then waits for them for ever)."""
    return sys.platform.startswith("linux") and threading.active_count() == 1 and "typst" not in sys.modules


def ordered_map(
    function: Callable[[Context, Task], Result],
    context: Context,
    tasks: Iterable[Task],
    *,
    jobs: int,
    min_tasks: int = 2,
    chunk: int = 1,
) -> Iterator[Result]:
    """``function(context, task)`` for each task, yielded in the order of ``tasks``.

    With ``jobs`` > 1, at least ``min_tasks`` tasks and `can_fork`, the tasks run in ``jobs``
    forked workers, ``chunk`` tasks to a message; otherwise here. ``function`` must be a module's
    top-level function (a worker finds it by name); each task and result is pickled, ``context``
    never is. An exception raised by ``function`` reaches the caller as from a call made here, so
    it must survive pickling: catch the ones that carry more than a message inside ``function``.

    ``tasks`` is read as the work goes (a generator reading a file row by row is fine): no more
    than a few chunks a worker are read ahead of the result the caller is at, so a class of any
    size never has all its tasks, nor all its results, in memory at once.
    """
    source = iter(tasks)
    if jobs <= 1 or not can_fork():
        for task in source:
            yield function(context, task)
        return
    # Enough tasks to pay for the workers? Only the first few are read to know.
    head = list(itertools.islice(source, max(2, min_tasks, jobs)))
    if len(head) < max(2, min_tasks):
        for task in head:
            yield function(context, task)
        return
    import multiprocessing
    from concurrent.futures import Future, ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    _SHARED["work"] = (function, context)
    workers = min(jobs, len(head))
    pool = ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("fork"), initializer=_worker_signals
    )
    chunks = _chunks(itertools.chain(head, source), max(1, chunk))
    sent: collections.deque[Future[list[Any]]] = collections.deque()
    finished = False
    try:
        # Each worker has one chunk at work and one waiting: busy, and never far ahead of the caller.
        # The workers are forked at the first submit with Ctrl-C and SIGTERM held back until each has
        # its own handling of them (`_worker_signals`): a signal that lands while a worker starts
        # reaches this process alone, never a worker running this process's handlers.
        held = signal.pthread_sigmask(signal.SIG_BLOCK, _WORKER_SIGNALS)
        try:
            for part in itertools.islice(chunks, _AHEAD * workers):
                sent.append(pool.submit(_run_chunk, part))
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
        while sent:
            results = sent.popleft().result()
            for part in itertools.islice(chunks, 1):
                sent.append(pool.submit(_run_chunk, part))
            yield from results
        finished = True
    except BrokenProcessPool as exc:  # a worker killed from outside (out of memory, kill -9)
        raise WorkerDiedError(
            "a worker process died before its work was done (out of memory, or killed): nothing was "
            "written; run the command again, or with --jobs 1 to work in one process"
        ) from exc
    finally:
        _SHARED.clear()
        if finished:
            pool.shutdown(wait=True)
        else:  # stopped (Ctrl-C, an error, the caller gave up): no task more, and no worker left
            processes = list(getattr(pool, "_processes", {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for worker in processes:
                worker.terminate()
            for worker in processes:
                worker.join()


_AHEAD = 2
"""Chunks sent to the workers per worker before the first result is taken back."""


def _chunks(tasks: Iterator[Task], size: int) -> Iterator[list[Task]]:
    """The tasks ``size`` at a time (the last chunk may be shorter)."""
    while part := list(itertools.islice(tasks, size)):
        yield part


class WorkerDiedError(QuizError):
    """A worker process ended before it returned its work: said in one line, never a traceback."""


_WORKER_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def _worker_signals() -> None:
    """A worker ignores Ctrl-C and ends at SIGTERM (`ordered_map`'s clean-up terminates it), whatever
    handlers this process had when it was forked: one that turns SIGTERM into an exception (a file
    being staged) would be caught with the task's error, and the worker would live on."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _WORKER_SIGNALS)  # held back at the fork: now handled


def _run_chunk(tasks: list[Any]) -> list[Any]:
    function, context = _SHARED["work"]  # set before this worker was forked
    return [function(context, task) for task in tasks]


__all__ = ["WorkerDiedError", "can_fork", "default_jobs", "ordered_map"]
