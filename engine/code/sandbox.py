"""Run a student's code in a sandbox built from the platform's own means, and read back what it returned.

The code runs in a child process of the same interpreter (``-I -S -B``: no user site, no environment
variables of Python's, no current folder on the path), started with:

- resource limits: CPU seconds, address space, file size, open files and processes;
- a wall-clock limit, after which the whole process group is killed;
- a scrubbed environment (no secret of the user's reaches it) and no inherited descriptor;
- an empty private working folder (deleted afterwards) and its output in a capped file beside it;
- new user and network namespaces where the kernel lets an unprivileged process make them: no
  network at all;
- inside, before the student's code runs (`attnquiz.engine.code.sandbox_child`): no new privileges,
  Landlock where the kernel has it (files read only under the interpreter's folders, written only
  in the working folder, no TCP, no signal out) and a seccomp filter (no fork, exec, socket, ptrace
  or kill).

Nothing comes back but JSON on a pipe, parsed as data with a size cap: nothing from the child is
ever unpickled or evaluated. `environment` says which of these protections this machine gives.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib.util
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHILD = Path(__file__).with_name("sandbox_child.py")
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000
_INSIDE_UID = 1000
"""The user id the child has inside its user namespace: not 0, so that it holds no capability there
once it runs the interpreter."""


@dataclass(frozen=True, slots=True)
class Limits:
    """What the student's code may use. Generous: a right answer is never stopped by a limit."""

    cpu_seconds: int = 10
    wall_seconds: float = 30.0
    memory_bytes: int = 2 << 30
    output_bytes: int = 1 << 20
    result_bytes: int = 8 << 20
    processes: int = 16
    open_files: int = 64


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True, slots=True)
class Failure:
    """An exception of the student's code: its type, its last line, and where in their code."""

    type: str
    message: str
    line: int | None = None
    text: str = ""

    def describe(self) -> str:
        """The exception as one line: ``ZeroDivisionError: division by zero (line 4: return a / b)``."""
        where = f" (line {self.line}: {self.text})" if self.line and self.text else ""
        where = where or (f" (line {self.line})" if self.line else "")
        return f"{self.message}{where}"


@dataclass(frozen=True, slots=True)
class Returned:
    """What one call returned, as data: an array (values as floats, with dtype and shape), a number,
    a tuple of those, or something else described in words."""

    kind: str  # "array", "number", "tuple" or "other"
    values: tuple[float, ...] = ()
    shape: tuple[int, ...] = ()
    dtype: str = ""
    items: tuple[Returned, ...] = ()
    what: str = ""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What came of running the code: ``stopped`` says why the process was stopped ("" when it ran to
    the end), ``load`` an exception while defining the code, ``results`` each test's value or failure."""

    stopped: str = ""
    load: Failure | None = None
    missing: str = ""
    results: tuple[Returned | Failure, ...] = ()
    output: str = ""
    protections: dict[str, str] = field(default_factory=dict)


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


@functools.cache
def namespaces_allowed() -> bool:
    """Whether this kernel lets this process make new user and network namespaces (tried in a child)."""
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", "pass"],
            preexec_fn=_enter_namespaces,
            close_fds=True,
            env={},
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _enter_namespaces() -> None:
    """In the child before exec: new user and network namespaces, mapped to one ordinary user id."""
    uid, gid = os.getuid(), os.getgid()
    libc = _libc()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "unshare")
    Path("/proc/self/setgroups").write_text("deny")
    Path("/proc/self/uid_map").write_text(f"{_INSIDE_UID} {uid} 1")
    Path("/proc/self/gid_map").write_text(f"{_INSIDE_UID} {gid} 1")


def _read_folders() -> list[str]:
    """The folders the code may read: the interpreter's and its libraries' (numpy's among them)."""
    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    for name in ("stdlib", "platstdlib", "purelib", "platlib"):
        with contextlib.suppress(KeyError):
            found.add(sysconfig.get_paths()[name])
    found.update(_module_paths())
    found.update(
        ("/usr/lib", "/lib", "/lib64", "/usr/lib64", "/etc/ld.so.cache", "/dev/null", "/dev/urandom")
    )
    return sorted(found)


@functools.cache
def _module_paths() -> tuple[str, ...]:
    """The folders numpy (and PyTorch, when installed) are imported from, found without importing them."""
    paths: list[str] = []
    for name in ("numpy", "torch", "scipy"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            folder = str(Path(spec.origin).resolve().parent.parent)
            if folder not in paths:
                paths.append(folder)
    return tuple(paths)


def _remove(box: Path) -> None:
    """Delete the sandbox's folder, even where the code took its own rights away (``chmod 0``)."""
    # os.walk goes top-down: each folder's subfolders are opened up before it descends into them.
    for folder, subfolders, _ in os.walk(box):
        for name in subfolders:
            with contextlib.suppress(OSError):
                (Path(folder) / name).chmod(0o700)
    shutil.rmtree(box, ignore_errors=True)


def _child_setup(limits: Limits, namespaces: bool) -> None:
    """In the child before exec: namespaces first (the process count then counts this namespace's
    processes only), then the resource limits."""
    if namespaces:
        _enter_namespaces()
    # CPU: the soft limit sends SIGXCPU (reported as too slow), the hard one a second later SIGKILL.
    _lower(resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 1)
    for which, value in (
        (resource.RLIMIT_AS, limits.memory_bytes),
        (resource.RLIMIT_FSIZE, limits.output_bytes),
        (resource.RLIMIT_NOFILE, limits.open_files),
        (resource.RLIMIT_NPROC, limits.processes),
        (resource.RLIMIT_CORE, 0),
    ):
        _lower(which, value, value)


def _lower(which: int, soft: int, hard: int) -> None:
    """Set a limit, never above the one this process already has (a process may only lower its hard
    limit: quiz serve's page processes run under their own CPU limit)."""
    _, current = resource.getrlimit(which)
    if current != resource.RLIM_INFINITY:
        soft, hard = min(soft, current), min(hard, current)
    resource.setrlimit(which, (soft, hard))


def _encode(value: Any) -> Any:
    """A test input as JSON data (arrays with their dtype and shape)."""
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        return {"array": value.ravel().tolist(), "dtype": str(value.dtype), "shape": list(value.shape)}
    if isinstance(value, tuple):
        return {"tuple": [_encode(v) for v in value]}
    return value


def _returned(data: Any, depth: int = 0) -> Returned:
    """A returned value read from the child's JSON, checked field by field (it is the child's word)."""
    if not isinstance(data, dict) or depth > 4:
        return Returned("other", what="something unreadable")
    if "number" in data and isinstance(data["number"], int | float) and not isinstance(data["number"], bool):
        return Returned("number", values=(float(data["number"]),))
    if "array" in data:
        values, shape = data.get("array"), data.get("shape")
        if (
            isinstance(values, list)
            and isinstance(shape, list)
            and all(isinstance(n, int) and n >= 0 for n in shape)
            and all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
        ):
            size = 1
            for n in shape:
                size *= n
            if size == len(values):
                return Returned(
                    "array",
                    values=tuple(float(v) for v in values),
                    shape=tuple(shape),
                    dtype=str(data.get("dtype", ""))[:20],
                )
        return Returned("other", what="an array that could not be read")
    if "tuple" in data and isinstance(data["tuple"], list):
        return Returned("tuple", items=tuple(_returned(v, depth + 1) for v in data["tuple"][:16]))
    return Returned("other", what=str(data.get("other", "something else"))[:80])


def _failure(data: Any) -> Failure:
    if not isinstance(data, dict):
        return Failure("Error", "an error that could not be read")
    line = data.get("line")
    return Failure(
        type=str(data.get("type", "Error"))[:80],
        message=str(data.get("message", ""))[:500],
        line=line if isinstance(line, int) and not isinstance(line, bool) else None,
        text=str(data.get("text", ""))[:200],
    )


def _drain(stream: Any, cap: int, into: list[bytes]) -> None:
    """Read ``stream`` to its end, keeping at most ``cap`` bytes (the rest is read and dropped, so the
    child never blocks on a full pipe and the parent never holds more than the cap)."""
    kept = 0
    while True:
        chunk = stream.read(65536)
        if not chunk:
            return
        if kept < cap:
            into.append(chunk[: cap - kept])
        kept += len(chunk)
        if kept > cap:
            into.append(b"\0")  # marks the result as over the cap


_SIGNALS = {
    signal.SIGXCPU: "used more than {cpu} s of CPU time: too slow (an endless loop?)",
    signal.SIGKILL: "was killed (too much memory or time?)",
    signal.SIGSEGV: "crashed (segmentation fault: ctypes or a C extension touched memory it does not own)",
    signal.SIGSYS: "made a system call the sandbox refuses",
    signal.SIGXFSZ: "wrote more than the output limit",
    signal.SIGABRT: "aborted",
    signal.SIGBUS: "crashed (bus error)",
}


def run(
    source: str,
    function: str,
    tests: Sequence[Sequence[Any]],
    limits: Limits = DEFAULT_LIMITS,
    *,
    harness: str = "",
    preload: Sequence[str] = (),
) -> Outcome:
    """Run ``function`` of ``source`` on each test's arguments in a fresh sandbox; what came of it.

    ``harness`` is trusted code that puts the student's code to one test instead of calling
    ``function`` (it defines ``run(namespace, *args)``; it is compiled and its top level run before
    the lock, where PyTorch may still read ``/proc/cpuinfo``); ``preload`` names the packages the
    child imports while still trusted, as it does numpy. The child refuses to run if a thread other
    than its own exists then: Landlock and seccomp bind the thread that applies them, so every
    protection holds only for a process of one thread (hence one BLAS and OpenMP thread)."""
    namespaces = namespaces_allowed()
    box = Path(tempfile.mkdtemp(prefix="quiz-sandbox-"))
    try:
        workdir = box / "work"
        workdir.mkdir(mode=0o700)
        request = {
            "source": source,
            "function": function,
            "tests": [[_encode(a) for a in case] for case in tests],
            "paths": list(_module_paths()),
            "read": [*_read_folders(), str(CHILD)],
            "workdir": str(workdir),
            "result_fd": 0,
            "harness": harness,
            "preload": list(preload),
        }
        output_path = box / "output.txt"
        read_end, write_end = os.pipe()
        request["result_fd"] = write_end
        payload = json.dumps(request).encode()
        with output_path.open("wb") as output:
            try:
                # The child keeps the write end of the results pipe (named in the request), nothing else.
                process = subprocess.Popen(
                    [sys.executable, "-I", "-S", "-B", str(CHILD)],
                    stdin=subprocess.PIPE,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    cwd=workdir,
                    env=_environment(workdir),
                    close_fds=True,
                    pass_fds=(write_end,),
                    start_new_session=True,
                    # preexec_fn: the namespaces and limits must be set between fork and exec, where no
                    # thread of ours runs (the reader threads start after the fork).
                    preexec_fn=functools.partial(_child_setup, limits, namespaces),  # noqa: PLW1509
                )
            finally:
                os.close(write_end)
        kept: list[bytes] = []
        with os.fdopen(read_end, "rb") as results:
            reader = threading.Thread(target=_drain, args=(results, limits.result_bytes, kept), daemon=True)
            reader.start()
            stopped = _feed_and_wait(process, payload, limits)
            reader.join(timeout=10)
        output_text = _read_capped(output_path, limits.output_bytes)
    finally:
        _remove(box)
    return _outcome(process.returncode, stopped, b"".join(kept), limits, output_text, namespaces)


def _environment(workdir: Path) -> dict[str, str]:
    """A scrubbed environment: nothing of the user's (no token, no key), one BLAS thread."""
    return {
        "HOME": str(workdir),
        "TMPDIR": str(workdir),
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "PYTHONHASHSEED": "0",
    }


def _feed_and_wait(process: subprocess.Popen[bytes], payload: bytes, limits: Limits) -> str:
    """Write the request, wait up to the wall limit; why the child was stopped ("" if it ended)."""
    assert process.stdin is not None
    writer = threading.Thread(target=_write_request, args=(process.stdin, payload), daemon=True)
    writer.start()
    try:
        process.wait(timeout=limits.wall_seconds)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        process.wait()
        return f"took longer than {limits.wall_seconds:g} s: too slow (an endless loop?)"
    finally:
        _kill_group(process)  # anything the code left running in its group goes with it
    writer.join(timeout=5)
    return ""


def _write_request(stdin: Any, payload: bytes) -> None:
    with contextlib.suppress(OSError):  # a child that died (or never reads) closes the pipe
        stdin.write(payload)
    with contextlib.suppress(OSError):
        stdin.close()


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _read_capped(path: Path, cap: int) -> str:
    with contextlib.suppress(OSError), path.open("rb") as handle:
        data = handle.read(cap + 1)
        text = data[:cap].decode("utf-8", "replace")
        if len(data) > cap or path.stat().st_size >= cap:
            text += f"\n[output cut at {cap:,} bytes]"
        return text
    return ""


def _outcome(
    code: int | None, stopped: str, raw: bytes, limits: Limits, output: str, namespaces: bool
) -> Outcome:
    protections = {"network namespace": "on" if namespaces else "not allowed by this kernel"}
    if stopped:
        return Outcome(stopped=stopped, output=output, protections=protections)
    if len(raw) > limits.result_bytes:
        return Outcome(stopped="returned more data than the limit", output=output, protections=protections)
    data: Any = None
    if raw:
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            data = None
    if code is not None and code < 0 and not isinstance(data, dict):
        why = (
            _SIGNALS.get(signal.Signals(-code), f"was stopped by signal {-code}")
            if -code in signal.valid_signals()
            else "was stopped"
        )
        if "output limit" in why or output.endswith("bytes]"):
            why = f"printed more than {limits.output_bytes:,} bytes of output"
        return Outcome(
            stopped="your code " + why.format(cpu=limits.cpu_seconds), output=output, protections=protections
        )
    if not isinstance(data, dict):
        last = output.strip().splitlines()[-1:] if output.strip() else []
        memory = any("MemoryError" in line for line in last)
        why = (
            f"ran out of memory (the limit is {limits.memory_bytes >> 20:,} MB)"
            if memory
            else f"stopped without a result (exit status {code}){': ' + last[0][:200] if last else ''}"
        )
        return Outcome(stopped="your code " + why, output=output, protections=protections)
    status = data.get("status")
    if isinstance(status, dict):
        protections.update({str(k)[:40]: str(v)[:120] for k, v in list(status.items())[:8]})
    if "load" in data:
        return Outcome(load=_failure(data["load"]), output=output, protections=protections)
    if "missing" in data:
        return Outcome(missing=str(data["missing"])[:80], output=output, protections=protections)
    results = data.get("results")
    if not isinstance(results, list):
        return Outcome(stopped="your code sent back no results", output=output, protections=protections)
    parsed: list[Returned | Failure] = [
        _failure(r["error"])
        if isinstance(r, dict) and "error" in r
        else _returned(r.get("value") if isinstance(r, dict) else None)
        for r in results
    ]
    return Outcome(results=tuple(parsed), output=output, protections=protections)


@functools.cache
def environment() -> str:
    """One line on which protections this machine gives the sandbox (for ``quiz check``)."""
    outcome = run("def f():\n    return 1.0\n", "f", [[]])
    found = dict(outcome.protections)
    if outcome.stopped or outcome.load:
        return f"sandbox: does not run here ({outcome.stopped or outcome.load})"
    found.setdefault("landlock", "not reported")
    found.setdefault("seccomp", "not reported")
    limits = DEFAULT_LIMITS
    return (
        f"sandbox: rlimits on (CPU {limits.cpu_seconds} s, memory {limits.memory_bytes >> 20} MB, "
        f"output {limits.output_bytes >> 10} KB, {limits.processes} processes, {limits.open_files} files), "
        f"wall {limits.wall_seconds:g} s; network namespace {found['network namespace']}; "
        f"Landlock {found['landlock']}; seccomp {found['seccomp']}"
    )
