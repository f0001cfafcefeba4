"""The inside of the sandbox: run as a script (``python -I -S sandbox_child.py``), never imported by quiz.

It reads one request (JSON) on standard input: the student's source, the function to call, the test
inputs, the folders numpy is read from and the folder it may write in. It imports numpy while it is
still trusted, then locks itself in with the kernel's own means, in this order:

1. ``PR_SET_NO_NEW_PRIVS`` (no set-uid program can give rights back);
2. Landlock (where the kernel has it): files can be read only under the interpreter's folders and
   written only in the private work folder; no TCP; no signal to, or ptrace of, a process outside
   (the parent above all);
3. seccomp (x86-64): no new process or thread, no exec, no socket, no ptrace, no signal — a fork
   bomb fails at its first fork even where the process count limit does not bind (a root user's
   processes are exempt from ``RLIMIT_NPROC``).

Packages a task needs beyond numpy (PyTorch) are imported, and a task's trusted harness compiled,
before the lock too; the child then makes sure it is still one thread, since Landlock and seccomp
bind only the thread that applies them.

Only then does it compile and run the student's code, test by test. Results go back as JSON on
the descriptor the request names (never a pickle: the parent parses them as data). The student's
``print`` goes to the standard output the parent gave (a file capped by ``RLIMIT_FSIZE``).

This file uses the standard library only (and numpy once a request asks for it): it runs with
``-S``, without quiz on its path.
"""

from __future__ import annotations

import ctypes
import importlib
import json
import os
import signal
import struct
import sys
import traceback
from pathlib import Path
from typing import Any

RESULT_FD = [3]
SOURCE_NAME = "answer.py"
HARNESS_NAME = "<quiz harness>"

# Landlock (linux/landlock.h)
_LANDLOCK_CREATE_RULESET_VERSION = 1
_SYS_LANDLOCK_CREATE_RULESET = 444  # the same number on every architecture
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_RULE_PATH_BENEATH = 1
_FS_EXECUTE = 1 << 0
_FS_WRITE_FILE = 1 << 1
_FS_READ_FILE = 1 << 2
_FS_READ_DIR = 1 << 3
_FS_REMOVE_DIR = 1 << 4
_FS_REMOVE_FILE = 1 << 5
_FS_MAKE_CHAR = 1 << 6
_FS_MAKE_DIR = 1 << 7
_FS_MAKE_REG = 1 << 8
_FS_MAKE_SOCK = 1 << 9
_FS_MAKE_FIFO = 1 << 10
_FS_MAKE_BLOCK = 1 << 11
_FS_MAKE_SYM = 1 << 12
_FS_REFER = 1 << 13  # ABI 2
_FS_TRUNCATE = 1 << 14  # ABI 3
_FS_IOCTL_DEV = 1 << 15  # ABI 5
_NET_BIND_TCP = 1 << 0  # ABI 4
_NET_CONNECT_TCP = 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
_SCOPE_SIGNAL = 1 << 1

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_AUDIT_ARCH_X86_64 = 0xC000003E
_SECCOMP_RET_ALLOW = 0x7FFF0000
_SECCOMP_RET_ERRNO = 0x00050000
_SECCOMP_RET_KILL_PROCESS = 0x80000000
_EPERM = 1
# x86-64 system calls the student's code has no business making.
_DENIED_X86_64 = {
    56: "clone",
    57: "fork",
    58: "vfork",
    59: "execve",
    322: "execveat",
    435: "clone3",
    41: "socket",
    53: "socketpair",
    42: "connect",
    101: "ptrace",
    62: "kill",
    200: "tkill",
    234: "tgkill",
    129: "rt_sigqueueinfo",
    297: "rt_tgsigqueueinfo",
    310: "process_vm_readv",
    311: "process_vm_writev",
    272: "unshare",
    308: "setns",
    165: "mount",
    155: "pivot_root",
    169: "reboot",
    424: "pidfd_send_signal",
    434: "pidfd_open",
    438: "pidfd_getfd",
    # io_uring runs socket and connect operations that seccomp never sees; the rest are kernel
    # interfaces a function has no use for.
    425: "io_uring_setup",
    426: "io_uring_enter",
    427: "io_uring_register",
    321: "bpf",
    298: "perf_event_open",
    248: "add_key",
    250: "keyctl",
    323: "userfaultfd",
    319: "memfd_create",
}


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def landlock(read: list[str], write: list[str]) -> str:
    """Restrict this process with Landlock; what was done, as one phrase for the report."""
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(
        _SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), _LANDLOCK_CREATE_RULESET_VERSION
    )
    if abi < 0:
        return f"not available ({os.strerror(ctypes.get_errno())})"
    fs = (1 << 13) - 1
    if abi >= 2:
        fs |= _FS_REFER
    if abi >= 3:
        fs |= _FS_TRUNCATE
    if abi >= 5:
        fs |= _FS_IOCTL_DEV
    net = _NET_BIND_TCP | _NET_CONNECT_TCP if abi >= 4 else 0
    scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL if abi >= 6 else 0
    fields = [fs] + ([net] if abi >= 4 else []) + ([scoped] if abi >= 6 else [])
    attr = struct.pack(f"{len(fields)}Q", *fields)
    buffer = ctypes.create_string_buffer(attr, len(attr))
    ruleset = libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, buffer, ctypes.c_size_t(len(attr)), 0)
    if ruleset < 0:
        return f"not applied (create_ruleset: {os.strerror(ctypes.get_errno())})"
    reading = _FS_EXECUTE | _FS_READ_FILE | _FS_READ_DIR
    writing = fs & ~(_FS_MAKE_CHAR | _FS_MAKE_BLOCK | _FS_EXECUTE)
    for paths, access in ((read, reading), (write, writing)):
        for path in paths:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # a folder that does not exist needs no rule
            # A rule on a file may only carry file rights.
            allowed = (
                access if Path(path).is_dir() else access & (_FS_EXECUTE | _FS_READ_FILE | _FS_WRITE_FILE)
            )
            rule = _PathBeneath(allowed, fd)
            done = libc.syscall(
                _SYS_LANDLOCK_ADD_RULE, ruleset, _LANDLOCK_RULE_PATH_BENEATH, ctypes.byref(rule), 0
            )
            os.close(fd)
            if done < 0:
                os.close(ruleset)
                return f"not applied (add_rule {path}: {os.strerror(ctypes.get_errno())})"
    if libc.syscall(_SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0) < 0:
        error = os.strerror(ctypes.get_errno())
        os.close(ruleset)
        return f"not applied (restrict_self: {error})"
    os.close(ruleset)
    extras = (", TCP" if abi >= 4 else "") + (", signals" if abi >= 6 else "")
    return f"on (ABI {abi}: files{extras})"


def seccomp() -> str:
    """Refuse the system calls in `_DENIED_X86_64` with EPERM; what was done, as one phrase."""
    if os.uname().machine != "x86_64":
        return f"not available on {os.uname().machine}"

    def statement(code: int, jt: int, jf: int, k: int) -> bytes:
        return struct.pack("HBBI", code, jt, jf, k)

    ld_w_abs, jeq_k, ret_k = 0x20, 0x15, 0x06
    program = [statement(ld_w_abs, 0, 0, 4)]  # seccomp_data.arch
    program.append(statement(jeq_k, 1, 0, _AUDIT_ARCH_X86_64))
    program.append(statement(ret_k, 0, 0, _SECCOMP_RET_KILL_PROCESS))
    program.append(statement(ld_w_abs, 0, 0, 0))  # seccomp_data.nr
    # x32 system calls (bit 30 set) are refused outright: they would bypass the numbers below.
    program.append(statement(0x45, 0, 1, 0x40000000))  # jset
    program.append(statement(ret_k, 0, 0, _SECCOMP_RET_ERRNO | _EPERM))
    for number in sorted(_DENIED_X86_64):
        program.append(statement(jeq_k, 0, 1, number))
        program.append(statement(ret_k, 0, 0, _SECCOMP_RET_ERRNO | _EPERM))
    program.append(statement(ret_k, 0, 0, _SECCOMP_RET_ALLOW))
    code = b"".join(program)
    filters = ctypes.create_string_buffer(code, len(code))

    class _Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = _Program(len(program), ctypes.addressof(filters))
    libc = _libc()
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        return f"not applied ({os.strerror(ctypes.get_errno())})"
    return "on"


def no_new_privileges() -> None:
    """No program run from here can gain rights (needed by Landlock and seccomp without privilege)."""
    _libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def decode(value: Any, numpy: Any) -> Any:
    """A test input as the parent encoded it."""
    if isinstance(value, dict) and "array" in value:
        return numpy.array(value["array"], dtype=value["dtype"]).reshape(value["shape"])
    if isinstance(value, dict) and "tuple" in value:
        return tuple(decode(v, numpy) for v in value["tuple"])
    return value


def encode(value: Any, numpy: Any, budget: list[int]) -> Any:
    """A returned value as plain JSON data (numbers, arrays with their dtype and shape)."""
    if isinstance(value, bool | int | float) or value is None:
        return (
            {"number": value} if not isinstance(value, bool) and value is not None else {"other": repr(value)}
        )
    if isinstance(value, numpy.generic):
        value = numpy.asarray(value)
    if isinstance(value, numpy.ndarray):
        if value.dtype.kind not in "biuf":
            return {"other": f"an array of {value.dtype}"}
        budget[0] -= value.size
        if budget[0] < 0:
            return {"other": "an array too large to send back"}
        as_float = value.astype(float)
        return {"array": as_float.ravel().tolist(), "dtype": str(value.dtype), "shape": list(value.shape)}
    if isinstance(value, list):  # a nested list of numbers is an array written by hand
        try:
            as_array = numpy.asarray(value)
        except (ValueError, TypeError, RecursionError):
            as_array = None
        if as_array is not None and as_array.dtype.kind in "biuf":
            return encode(as_array, numpy, budget)
    if isinstance(value, tuple | list):
        if len(value) > 16:
            return {"other": f"a {type(value).__name__} of {len(value)} values"}
        return {"tuple": [encode(v, numpy, budget) for v in value]}
    name = type(value).__name__
    # torch tensors and the like: their numpy view, without importing anything new
    if hasattr(value, "detach") and hasattr(value, "numpy"):
        try:
            return encode(value.detach().cpu().numpy(), numpy, budget)
        except Exception:  # a hostile object's method: say what it was
            return {"other": f"a {name} that could not be read"}
    return {"other": f"a {name}"[:80]}


def failure(exc: BaseException, source: list[str]) -> dict[str, Any]:
    """An exception as the report shows it: its last line and the line of the student's code."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == SOURCE_NAME]
    line = (
        frames[-1].lineno
        if frames
        else getattr(exc, "lineno", None)
        if isinstance(exc, SyntaxError)
        else None
    )
    if not frames and isinstance(exc, SyntaxError):
        line = exc.lineno
    text = source[line - 1].strip() if line and 0 < line <= len(source) else ""
    last = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()
    return {
        "type": type(exc).__name__,
        "message": (last[-1] if last else type(exc).__name__)[:500],
        "line": line,
        "text": text[:200],
    }


def one_thread(preloaded: bool) -> str:
    """Why this process must not run the student's code: it has more than one thread, and Landlock and
    seccomp bind only the thread that applies them (another would run outside both); "" when it has
    one. Where /proc cannot say, a process that imported only numpy runs, as it always has, and one
    that preloaded more does not."""
    try:
        count = sum(1 for _ in Path("/proc/self/task").iterdir())
    except OSError:
        return "sandbox: cannot count its threads (no /proc); the code is not run" if preloaded else ""
    if count == 1:
        return ""
    return (
        f"sandbox: {count} threads before the lock (a package started one as it loaded); the code is not run"
    )


def send(result: dict[str, Any]) -> None:
    data = json.dumps(result).encode()
    view = memoryview(data)
    while view:
        written = os.write(RESULT_FD[0], view)
        view = view[written:]


def main() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write beyond the size limit fails, not the process
    request = json.loads(sys.stdin.buffer.read())
    RESULT_FD[0] = int(request["result_fd"])
    for path in request["paths"]:
        sys.path.insert(0, path)
    import numpy

    numpy.seterr(all="ignore")  # overflow in a naive softmax is the student's to meet, not a crash
    for name in request.get("preload", []):
        importlib.import_module(name)  # trusted, like numpy: a package the task's code needs
    harness = None
    if request.get("harness"):
        trusted: dict[str, Any] = {"__name__": "harness"}
        exec(compile(request["harness"], HARNESS_NAME, "exec", dont_inherit=True), trusted)
        harness = trusted["run"]
    threads = one_thread(bool(request.get("preload")))
    if threads:
        raise SystemExit(threads)
    workdir = request["workdir"]
    os.chdir(workdir)
    no_new_privileges()
    status = {"landlock": "not asked", "seccomp": "not asked"}
    if request.get("landlock", True):
        status["landlock"] = landlock(request["read"], [workdir])
    if request.get("seccomp", True):
        status["seccomp"] = seccomp()
    source_text = request["source"]
    source = source_text.splitlines()
    namespace: dict[str, Any] = {"__name__": "answer", "__builtins__": __builtins__}
    try:
        code = compile(source_text, SOURCE_NAME, "exec", dont_inherit=True)
        exec(code, namespace)
    except BaseException as exc:  # the student's code, whatever it raises (SystemExit too)
        send({"status": status, "load": failure(exc, source)})
        return
    function = namespace.get(request["function"])
    if not callable(function):
        send({"status": status, "missing": request["function"]})
        return
    results: list[dict[str, Any]] = []
    budget = [request.get("max_values", 1_000_000)]
    for case in request["tests"]:
        args = [decode(a, numpy) for a in case]
        try:
            value = harness(namespace, *args) if harness is not None else function(*args)
            results.append({"value": encode(value, numpy, budget)})
        except BaseException as exc:  # reported per test, as the student's exception
            results.append({"error": failure(exc, source)})
    send({"status": status, "results": results})


if __name__ == "__main__":
    main()
