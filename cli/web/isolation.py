"""Work of `quiz serve` that could take long, done in a forked child process with a CPU-time limit.

The server is one event loop: whatever a handler computes, every other client waits for. Most of it
is bounded (reading a form, rendering a page of a session), but three things run code whose cost
the server cannot know in advance: grading a typed response (a student can type anything), loading
banks (a bank's plugins are Python code, imported the first time), and building variants for the
preview (a generator of the bank's plugins). Threads do not help with any of them: Python code and
a big-number power in C hold the interpreter's lock, and a thread can never be stopped.

So such work runs in a child forked from the server (it shares the server's state as it is at that
moment, copy-on-write, with nothing to serialise), under ``RLIMIT_CPU``: the kernel stops a child
after `ANSWER_SECONDS` or `PAGE_SECONDS` of computing, however loaded the machine is and wherever
the code is stuck (``10**10**9`` included), while the event loop goes on serving everyone else. A
page that has no state of its own (the home page, the preview, review, stats) is rendered in the
child and its bytes sent back; for a response to grade, the child grades a copy of the session
without its history and says whether that finished, then the server grades the response itself
(the same work, known now to be short). A child is always waited for, never left as a zombie.

Forking is safe here because the server process runs one thread (the event loop): nothing it
forks can hold a lock another thread owns.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import resource
import signal
import sys
import time
from collections import OrderedDict
from collections.abc import Callable, Coroutine, Hashable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

T = TypeVar("T")

ANSWER_SECONDS = 5
"""CPU seconds that grading one response may take before it is called unreadable (costs nothing)."""
PAGE_SECONDS = 20
"""CPU seconds for a page that loads banks or builds variants (as long as `quiz check` gives four
generations): a plugin that loops at import or in a generator stops there, with a message."""
WALL_FACTOR = 6
"""A child that neither finishes nor uses its CPU seconds (asleep, blocked) is killed after this
many times its CPU limit in wall-clock seconds, plus `WALL_MARGIN`."""
WALL_MARGIN = 10.0
MAX_CHILDREN = 4
"""Children at a time; more requests of this kind wait their turn (bounded memory and processes)."""

_SLOTS: dict[asyncio.AbstractEventLoop, asyncio.Semaphore] = {}


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """What a child's work came to: its value, an exception's description, or that it was stopped."""

    kind: Literal["done", "raised", "stopped"]
    value: T | None = None
    error: str = ""
    exception: BaseException | None = None


def _semaphore() -> asyncio.Semaphore:
    """The children of the running loop (a semaphore belongs to one loop)."""
    return _SLOTS.setdefault(asyncio.get_running_loop(), asyncio.Semaphore(MAX_CHILDREN))


async def in_child(work: Callable[[], T], *, cpu_seconds: int) -> Outcome[T]:
    """Run ``work`` in a forked child with ``cpu_seconds`` of CPU time; its result is pickled back.

    An exception that pickles comes back as the exception (kind "raised"); a child that runs out
    of time, is killed or dies comes back as kind "stopped" with the reason.
    """
    async with _semaphore():
        return await _fork(work, cpu_seconds)


async def _fork(work: Callable[[], T], cpu_seconds: int) -> Outcome[T]:
    loop = asyncio.get_running_loop()
    read_end, write_end = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the server's event loop
        os.close(read_end)
        _child(work, write_end, cpu_seconds)
    os.close(write_end)
    os.set_blocking(read_end, False)
    received = bytearray()
    finished: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        try:
            chunk = os.read(read_end, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if chunk:
            received.extend(chunk)
        elif not finished.done():
            finished.set_result(None)

    loop.add_reader(read_end, readable)
    timed_out = False
    try:
        await asyncio.wait_for(finished, cpu_seconds * WALL_FACTOR + WALL_MARGIN)
    except TimeoutError:
        timed_out = True
    finally:
        loop.remove_reader(read_end)
        os.close(read_end)
        if timed_out or not finished.done():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    if timed_out:
        await _reap(pid)
        return Outcome("stopped", error=f"it took longer than {cpu_seconds * WALL_FACTOR + WALL_MARGIN:g} s")
    try:
        kind, payload = pickle.loads(bytes(received))
    except Exception:  # killed part-way (its CPU seconds, memory, a signal): nothing whole came back
        status = await _reap(pid)
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU:
            return Outcome("stopped", error=f"it took more than {cpu_seconds} s of computing")
        return Outcome("stopped", error=f"the process doing it died ({_how(status)})")
    # The whole result is here: the answer need not wait for the child's exit (tearing down a copy
    # of the server takes a while on a busy machine); it is reaped meanwhile.
    reaping = asyncio.get_running_loop().create_task(_reap(pid))
    _REAPING.add(reaping)
    reaping.add_done_callback(_REAPING.discard)
    if kind == "done":
        return Outcome("done", value=payload)
    if isinstance(payload, BaseException):
        return Outcome("raised", error=str(payload), exception=payload)
    return Outcome("raised", error=str(payload))


_REAPING: set[asyncio.Task[int]] = set()
"""Children being reaped after their result came (a task must be referenced until it is done)."""


Handler = Callable[[Any], Coroutine[Any, Any, Any]]
"""A Starlette endpoint: a request in, a response out."""
MAX_REMEMBERED = 64
RACY_SECONDS = 2.0
"""A page that read a file changed this shortly before the page was asked for is not kept: a
file system whose clock ticks coarsely can give two writes in one tick the same times, so only a
file that had settled when its page was made is known by its times alone (git's rule for its index)."""

FileIdentity = tuple[int, int, int, int, int]
"""A file as stat sees it: device, inode, size, modification and change time (ns)."""


def file_identity(path: str | os.PathLike[str]) -> FileIdentity | None:
    """``path``'s identity now (any write or rename moves its change time), or None if it is gone."""
    try:
        info = Path(path).stat()
    except OSError:
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


@dataclass(frozen=True)
class _Made:
    """A page made in a child, and what it holds while: its files unchanged, its moment not come."""

    page: tuple[int, bytes, list[tuple[bytes, bytes]]]
    files: tuple[tuple[str, FileIdentity | None], ...]
    until: float | None

    def still_right(self) -> bool:
        if self.until is not None and time.time() >= self.until:
            return False
        return all(file_identity(path) == known for path, known in self.files)


@dataclass
class _Declared:
    files: list[str]
    until: list[float]


_declaring: list[_Declared] = []
"""What the page being made in this child has declared (empty anywhere else)."""


def depends_on(files: Iterable[str | os.PathLike[str]] = (), *, until: float | None = None) -> None:
    """Said by a page made in a child (`page_in_child` with ``reuse``): the files it read, and the
    moment (seconds since the epoch) until which it holds. The server sends the page again only
    while each of those files is unchanged and that moment has not come. A handler run in the
    server itself (the home page of a refused start form) declares nothing: nothing is kept."""
    if _declaring:
        _declaring[-1].files.extend(os.fspath(f) for f in files)
        if until is not None:
            _declaring[-1].until.append(until)


def page_in_child(
    handler: Handler,
    *,
    cpu_seconds: int,
    remember: Callable[[Any], Hashable | None] | None = None,
    reuse: Callable[[Any], Hashable | None] | None = None,
) -> Handler:
    """An endpoint that renders ``handler``'s page in a child (`in_child`), for a page with no
    state of its own to change: the response's bytes come back, an HTTP error stays one.

    A page that was stopped is remembered under ``remember(request)`` (the bank's files as they
    are, say): asking again gets the same answer at once, without running the stuck code again,
    until the key changes.

    ``reuse(request)``, for a page that is a function of that key (the page asked for, and what
    it reads as it is now) and of what the handler declares with `depends_on`: a page made under
    the key is sent again, without a child, while the key is unchanged and the files and moment the
    page declared still hold. A child costs 4 ms to fork and end, and more to load the banks
    again; eight clients at once would queue for children making a page that has not changed.
    """
    from starlette.exceptions import HTTPException
    from starlette.responses import Response

    stopped: OrderedDict[Hashable, str] = OrderedDict()
    made: OrderedDict[Hashable, _Made] = OrderedDict()

    def response_of(page: tuple[int, bytes, list[tuple[bytes, bytes]]]) -> Response:
        status, body, headers = page
        response = Response(body, status_code=status)
        response.raw_headers = list(headers)
        return response

    async def endpoint(request: Any) -> Any:
        key = remember(request) if remember is not None else None
        if key is not None and key in stopped:
            raise HTTPException(503, stopped[key])
        asked = time.time_ns()
        # Keyed as things were before the page is made: a change while it is being made changes
        # the key, so the next request makes the page again.
        reused = reuse(request) if reuse is not None else None
        if reused is not None:
            known = made.get(reused)
            if known is not None and known.still_right():
                made.move_to_end(reused)
                return response_of(known.page)
            made.pop(reused, None)
        outcome = await in_child(lambda: _rendered(handler, request), cpu_seconds=cpu_seconds)
        if outcome.kind == "done":
            assert outcome.value is not None
            page, files, until = outcome.value
            settled = all(
                identity is not None and max(identity[3], identity[4]) < asked - RACY_SECONDS * 1e9
                for _, identity in files
            )
            if reused is not None and settled:
                made[reused] = _Made(page, files, until)
                while len(made) > MAX_REMEMBERED:
                    made.popitem(last=False)
            return response_of(page)
        if isinstance(outcome.exception, HTTPException):
            raise outcome.exception
        if outcome.kind == "stopped":
            message = (
                f"This page was stopped: {outcome.error}. A bank's plugin or generator may loop; "
                "quiz check on the bank says where. The server goes on serving everything else."
            )
            if key is not None:
                stopped[key] = message
                while len(stopped) > MAX_REMEMBERED:
                    stopped.popitem(last=False)
        else:
            message = f"This page could not be made: {outcome.error}"
        raise HTTPException(503, message)

    return endpoint


_Rendered = tuple[
    tuple[int, bytes, list[tuple[bytes, bytes]]], tuple[tuple[str, FileIdentity | None], ...], float | None
]


def _rendered(handler: Handler, request: Any) -> _Rendered:
    """Run a page handler that never waits on anything (it reads no body) to its response, with
    what it declared it depends on (`depends_on`): each file's identity as the page was made."""
    declared = _Declared([], [])
    _declaring.append(declared)
    try:
        coroutine = handler(request)
        try:
            coroutine.send(None)
        except StopIteration as stop:
            response = stop.value
            page = (response.status_code, bytes(response.body), list(response.raw_headers))
            files = tuple((path, file_identity(path)) for path in dict.fromkeys(declared.files))
            return page, files, min(declared.until, default=None)
    finally:
        _declaring.pop()
    coroutine.close()
    name = getattr(handler, "__name__", handler)
    raise RuntimeError(f"{name} waits on I/O: it cannot be rendered in a child")


def _child(work: Callable[[], Any], write_end: int, cpu_seconds: int) -> None:
    status = 0
    try:
        # The server's signal handling is not the child's: Ctrl-C or SIGTERM ends it at once, and
        # nothing it receives wakes the server's loop (its wake-up pipe is the server's too).
        signal.set_wakeup_fd(-1)
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGXCPU):
            signal.signal(number, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
        try:
            payload = pickle.dumps(("done", work()))
        except BaseException as exc:  # everything is reported to the parent, which decides
            try:
                payload = pickle.dumps(("raised", exc))
            except Exception:
                payload = pickle.dumps(("raised", f"{type(exc).__name__}: {exc}"))
        view = memoryview(payload)
        while view:
            view = view[os.write(write_end, view) :]
        os.close(write_end)  # the parent's end of file: it starts waiting for the exit now
    except BaseException:
        status = 1
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(status)


async def _reap(pid: int) -> int:
    """The child's exit status, waited for without blocking the loop for long."""
    delay = 0.0005
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return 0
        if done:
            return status
        await asyncio.sleep(delay)
        delay = min(delay * 1.5, 0.01)  # a child that has sent its result exits within moments


def _how(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit status {os.WEXITSTATUS(status)}"


__all__ = [
    "ANSWER_SECONDS",
    "MAX_CHILDREN",
    "PAGE_SECONDS",
    "Outcome",
    "depends_on",
    "file_identity",
    "in_child",
    "page_in_child",
]
