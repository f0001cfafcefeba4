"""The sandbox against hostile code: each attack is stopped with a clear message and nothing outside
the sandbox is touched. Limits are generous and nothing here depends on timing beyond them."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import numpy as np
import pytest

from attnquiz.engine.code import sandbox
from attnquiz.engine.code.sandbox import Failure, Limits, Outcome, Returned

# Small CPU limit so that an endless loop ends soon; the wall limit far above it.
TIGHT = Limits(cpu_seconds=3, wall_seconds=120.0, memory_bytes=1 << 30, output_bytes=64 << 10)


def _landlock() -> bool:
    return sandbox.run("def f():\n    return 1\n", "f", [[]]).protections.get("landlock", "").startswith("on")


needs_landlock = pytest.mark.skipif(not _landlock(), reason="this kernel has no Landlock")


def _one(source: str, args: list[object] | None = None, limits: Limits = TIGHT) -> Outcome:
    return sandbox.run(source, "f", [args or []], limits)


def _error(outcome: Outcome) -> Failure:
    assert not outcome.stopped, outcome.stopped
    assert len(outcome.results) == 1
    result = outcome.results[0]
    assert isinstance(result, Failure), result
    return result


def test_a_function_runs_and_its_arrays_come_back_as_data() -> None:
    source = "import numpy as np\ndef f(a):\n    return a * 2, np.float32(1.5)\n"
    outcome = sandbox.run(source, "f", [[np.arange(6.0).reshape(2, 3)]])
    (result,) = outcome.results
    assert isinstance(result, Returned)
    assert result.kind == "tuple"
    array, number = result.items
    assert (array.kind, array.shape, array.values) == ("array", (2, 3), (0, 2, 4, 6, 8, 10))
    assert (number.kind, number.dtype, number.values) == ("array", "float32", (1.5,))


def test_an_exception_gives_its_last_line_and_the_line_of_the_code() -> None:
    source = "def f(a, b):\n    x = 1\n    return a @ b\n"
    failure = _error(sandbox.run(source, "f", [[np.ones((3, 2)), np.ones((3, 2))]]))
    assert failure.type == "ValueError"
    assert failure.line == 3
    assert failure.text == "return a @ b"
    assert "mismatch" in failure.message


def test_syntax_errors_and_missing_functions_are_reported() -> None:
    outcome = _one("def f(:\n    pass\n")
    assert outcome.load is not None
    assert outcome.load.type == "SyntaxError"
    assert outcome.load.line == 1
    assert _one("def g():\n    return 1\n").missing == "f"


def test_fork_bomb() -> None:
    source = "import os\ndef f():\n    while True:\n        os.fork()\n"
    failure = _error(_one(source))
    assert failure.type in {"PermissionError", "BlockingIOError"}, failure


def test_subprocess_and_exec_are_refused() -> None:
    source = "import subprocess\ndef f():\n    return subprocess.run(['true']).returncode\n"
    assert _error(_one(source)).type == "PermissionError"


def test_endless_loop_is_stopped_as_too_slow() -> None:
    outcome = _one("def f():\n    while True:\n        pass\n")
    assert "too slow" in outcome.stopped


def test_memory_bomb() -> None:
    source = "def f():\n    return len(bytearray(50 * 2**30))\n"
    assert _error(_one(source)).type == "MemoryError"
    outcome = _one(
        "import numpy as np\ndef f():\n    x = [np.ones(10**7) for _ in range(10**4)]\n    return 1\n"
    )
    assert "memory" in (outcome.stopped + repr(outcome.results)).lower()


def test_huge_output_is_capped() -> None:
    outcome = _one("def f():\n    while True:\n        print('x' * 10000)\n")
    failure = _error(outcome)
    assert "File too large" in failure.message
    assert len(outcome.output) < 2 * TIGHT.output_bytes


def test_no_network() -> None:
    source = "import socket\ndef f():\n    s = socket.create_connection(('127.0.0.1', 9), timeout=5)\n"
    failure = _error(_one(source))
    assert failure.type in {"PermissionError", "OSError", "ConnectionRefusedError"}
    assert failure.line == 3


def test_the_environment_holds_no_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUIZ_TEST_SECRET", "hunter2")
    source = (
        "import os\ndef f():\n    return float('QUIZ_TEST_SECRET' in os.environ or len(os.listdir('.')))\n"
    )
    (result,) = _one(source).results
    assert isinstance(result, Returned)
    assert result.values == (0.0,)


@needs_landlock
def test_reading_the_users_ssh_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY")
    monkeypatch.setenv("HOME", str(home))
    source = f"def f():\n    return len(open({str(home / '.ssh' / 'id_rsa')!r}).read())\n"
    assert _error(_one(source)).type == "PermissionError"
    expanded = "import os\ndef f():\n    return len(open(os.path.expanduser('~/.ssh/id_rsa')).read())\n"
    assert _error(_one(expanded)).type in {"FileNotFoundError", "PermissionError"}


@needs_landlock
def test_writing_and_deleting_outside_its_folder(tmp_path: Path) -> None:
    keep = tmp_path / "keep.txt"
    keep.write_text("mine")
    write = f"def f():\n    open({str(tmp_path / 'new.txt')!r}, 'w').write('x')\n    return 1\n"
    assert _error(_one(write)).type == "PermissionError"
    delete = f"import os\ndef f():\n    os.remove({str(keep)!r})\n    return 1\n"
    assert _error(_one(delete)).type == "PermissionError"
    assert keep.read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]
    # its own folder is writable, and is gone afterwards
    inside = (
        "import os\ndef f():\n    open('scratch.txt', 'w').write('x')\n"
        "    return float(len(os.listdir('.')))\n"
    )
    (result,) = _one(inside).results
    assert isinstance(result, Returned)
    assert result.values == (1.0,)


def test_signalling_the_parent() -> None:
    source = "import os, signal\ndef f():\n    os.kill(os.getppid(), signal.SIGKILL)\n    return 1\n"
    assert _error(_one(source)).type == "PermissionError"
    group = (
        "import os, signal\ndef f():\n    os.killpg(os.getpgid(os.getppid()), signal.SIGTERM)\n    return 1\n"
    )
    assert _error(_one(group)).type == "PermissionError"
    assert os.getpid() > 0  # still here


def test_ctypes_cannot_get_around_it() -> None:
    crash = "import ctypes\ndef f():\n    return ctypes.cast(8, ctypes.POINTER(ctypes.c_int))[0]\n"
    assert "segmentation fault" in _one(crash).stopped
    kill = (
        "import ctypes, os, signal\ndef f():\n"
        "    libc = ctypes.CDLL(None)\n    return float(libc.kill(os.getppid(), signal.SIGKILL))\n"
    )
    (result,) = _one(kill).results
    assert isinstance(result, Returned)
    assert result.values == (-1.0,)


def test_exit_and_keyboard_interrupt_are_the_codes_own() -> None:
    assert _error(_one("import sys\ndef f():\n    sys.exit(3)\n")).type == "SystemExit"
    outcome = _one("import os\ndef f():\n    os._exit(0)\n")
    assert "without a result" in outcome.stopped


def test_a_forged_result_is_read_as_data_only() -> None:
    source = "import os\nos.write(1, b'{')\ndef f():\n    raise RecursionError('x' * 10**6)\n"
    failure = _error(_one(source))
    assert failure.type == "RecursionError"
    assert len(failure.message) <= 500


def test_environment_line_names_each_protection() -> None:
    line = sandbox.environment()
    for word in ("rlimits", "network namespace", "Landlock", "seccomp"):
        assert word in line
    assert signal.SIGKILL  # the parent process is unharmed by every test above


def test_more_attacks_are_refused() -> None:
    # a thread (clone), a unix socket, io_uring's set-up, memfd + exec, and a 32-bit system call
    thread = "import threading\ndef f():\n    threading.Thread(target=print).start()\n    return 1\n"
    assert "can't start new thread" in _error(_one(thread)).message
    unix = "import socket\ndef f():\n    socket.socket(socket.AF_UNIX)\n    return 1\n"
    assert _error(_one(unix)).type == "PermissionError"
    uring = (
        "import ctypes\ndef f():\n    libc = ctypes.CDLL(None, use_errno=True)\n"
        "    params = ctypes.create_string_buffer(120)\n    return float(libc.syscall(425, 8, params))\n"
    )
    (result,) = _one(uring).results
    assert isinstance(result, Returned)
    assert result.values == (-1.0,)
    memfd = "import os\ndef f():\n    return os.memfd_create('x')\n"
    assert _error(_one(memfd)).type == "PermissionError"
    proc = "def f():\n    return len(open('/proc/1/environ', 'rb').read())\n"
    assert _error(_one(proc)).type == "PermissionError"


def test_the_code_cannot_forge_a_crash_of_the_parent_with_its_results() -> None:
    # Garbage or a huge document on the results descriptor is read as data, capped, and refused.
    source = (
        "import os\n"
        "def f():\n"
        "    for fd in range(3, 64):\n"
        "        try:\n"
        "            os.write(fd, b'[' * 100000)\n"
        "        except OSError:\n"
        "            pass\n"
        "    os._exit(0)\n"
    )
    outcome = _one(source)
    assert outcome.stopped
    assert not outcome.results


def test_a_huge_return_value_is_refused_not_sent() -> None:
    source = "import numpy as np\ndef f():\n    return np.zeros(5_000_000)\n"
    (result,) = _one(source).results
    assert isinstance(result, Returned)
    assert result.kind == "other"
    assert "too large" in result.what


def test_its_folder_is_removed_even_when_the_code_locks_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    source = (
        "import os\ndef f():\n    os.makedirs('a/b')\n    open('a/b/x', 'w').write('x')\n"
        "    os.chmod('a/b', 0)\n    os.chmod('a', 0)\n    return 1\n"
    )
    (result,) = _one(source).results
    assert isinstance(result, Returned)
    assert list(tmp_path.iterdir()) == []
