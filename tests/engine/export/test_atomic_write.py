"""Writing outputs all or nothing: a kill or an error part-way never leaves a half-written file under a
final name, and never leaves a new worksheet file beside an old key."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from attnquiz.engine.export import files
from attnquiz.engine.plan.class_plan import ExportError

from .samples import sample_plan

# Writes an export of the sample class into argv[1], killing itself (SIGKILL, as the OOM killer or
# `kill -9` would) at the argv[2]-th call of the chosen point: while a file's bytes are half written,
# or after a file is complete but before the other is.
_KILLED_EXPORT = """
import os, signal, sys
from pathlib import Path
from tests.engine.export.samples import sample_plan
from attnquiz.engine.export import files

folder, when, at = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
calls = 0
real_fdopen, real_fsync = os.fdopen, os.fsync

def die_at_call():
    global calls
    calls += 1
    if calls == at:
        os.kill(os.getpid(), signal.SIGKILL)

class HalfWriter:
    def __init__(self, handle):
        self.handle = handle
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        self.handle.close()
    def write(self, data):
        self.handle.write(data[: len(data) // 2])
        self.handle.flush()
        die_at_call()
        self.handle.write(data[len(data) // 2 :])
    def flush(self):
        self.handle.flush()
    def fileno(self):
        return self.handle.fileno()

if when == "mid-write":
    os.fdopen = lambda fd, mode: HalfWriter(real_fdopen(fd, mode))
else:
    def fsync(fd):
        real_fsync(fd)
        die_at_call()
    os.fsync = fsync
files.write(sample_plan(int(sys.argv[4])), "md", folder)
"""


def _final_files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if not p.name.startswith(".")}


@pytest.mark.parametrize(
    ("when", "at"), [("mid-write", 1), ("mid-write", 2), ("after-file", 1), ("after-file", 2)]
)
def test_an_export_killed_part_way_leaves_the_earlier_export_whole(
    tmp_path: Path, when: str, at: int
) -> None:
    old = files.worksheet_files(sample_plan(2), "md")
    for name, data in old.items():
        (tmp_path / name).write_bytes(data)
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [sys.executable, "-c", _KILLED_EXPORT, str(tmp_path), when, str(at), "3"],
        cwd=root, env=env, capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()
    # Killed before every file was complete: the final names still hold the old export, untouched.
    assert _final_files(tmp_path) == old


def test_a_real_export_killed_at_any_moment_has_no_half_written_file(tmp_path: Path) -> None:
    """`quiz export` as a user runs it, SIGKILLed at several moments: whatever has a final name is whole."""
    from attnquiz.engine.bank import finding as banks
    from attnquiz.engine.plan.class_plan import plan_class

    plan = plan_class(banks.load("week1"), students=40, master_seed=8)
    whole = files.worksheet_files(plan, "md")
    moodle = files.lms_file(plan, "moodle")[0]
    for n, delay in enumerate((0.05, 0.3, 0.6, 0.9, 1.2, 1.6, 2.2)):
        folder = tmp_path / str(n)
        command = [
            sys.executable,
            "-m",
            "attnquiz",
            "export",
            "week1",
            "--students",
            "40",
            "--seed",
            "8",
            "--all",
        ]
        for fmt, target in (("md", folder / "sheets"), ("moodle", folder / "w.xml")):
            process = subprocess.Popen([*command, "-f", fmt, "-o", str(target)], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)  # fmt: skip
            try:
                process.wait(timeout=delay)
            except subprocess.TimeoutExpired:
                process.send_signal(signal.SIGKILL)
                process.wait(timeout=30)
        for name, data in _final_files(folder / "sheets").items() if (folder / "sheets").exists() else []:
            assert data == whole[name], f"{name} is half-written after a kill at {delay} s"
        if (folder / "w.xml").exists():
            assert (folder / "w.xml").read_bytes() == moodle


def test_an_error_part_way_replaces_nothing_and_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = files.worksheet_files(sample_plan(2), "md")
    for name, data in old.items():
        (tmp_path / name).write_bytes(data)
    real_fsync = os.fsync
    calls = []

    def full_disk_on_second(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", full_disk_on_second)
    with pytest.raises(ExportError, match=r"cannot write .*: No space left on device"):
        files.write(sample_plan(3), "md", tmp_path)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == old  # no .part file either


def test_a_replaced_file_keeps_its_permissions_and_a_new_one_is_readable(tmp_path: Path) -> None:
    target = tmp_path / "w.json"
    files.save({target: b"{}"})
    assert target.stat().st_mode & 0o777 == 0o644
    target.chmod(0o600)
    files.save({target: b"[]"})
    assert target.read_bytes() == b"[]"
    assert target.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    ("make", "output", "message"),
    [
        (lambda tmp: (tmp / "file").write_text("x"), "file/x.xml", "file is a file, not a folder"),
        (lambda tmp: None, "missing/dir/x.xml", None),  # made, as a worksheet folder is
        (lambda tmp: None, "/dev/full", "cannot write /dev/full: No space left on device"),
    ],
)
def test_output_paths_give_one_clear_error(
    tmp_path: Path, make: object, output: str, message: str | None
) -> None:
    assert callable(make)
    make(tmp_path)
    target = Path(output) if output.startswith("/") else tmp_path / output
    if output.startswith("/dev/") and not target.exists():
        pytest.skip(f"{output} does not exist here")
    if message is None:
        files.save({target: b"<quiz/>"})
        assert target.read_bytes() == b"<quiz/>"
        return
    with pytest.raises(ExportError) as raised:
        files.save({target: b"<quiz/>"})
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)
    assert target == Path("/dev/full") or not target.exists()


def test_a_streamed_pdf_export_killed_part_way_has_no_half_written_file(tmp_path: Path) -> None:
    """The PDF is joined into its temporary file piece by piece while later pieces compile: a kill at
    any moment leaves the final names empty, or holding the whole export."""
    import time

    # A whole bank for 6 students: 7 pieces, most of the run spent compiling and joining them, made
    # by two worker processes (killed with the export's process: see test_pdf_workers for what
    # becomes of them).
    command = [sys.executable, "-m", "attnquiz", "export", "week1", "--students", "6", "--seed", "8"]
    command += ["--all", "--jobs", "2"]
    started = time.monotonic()
    subprocess.run([*command, "-o", str(tmp_path / "whole")], check=True, capture_output=True, timeout=300)
    took = time.monotonic() - started  # the kills land through the run, however loaded the machine is
    whole = _final_files(tmp_path / "whole")
    assert sorted(whole) == ["key.pdf", "worksheets.pdf"]
    seen_part = False
    # Each run is killed a set time after its first temporary file appears (polled, not guessed
    # from the first run's length, which a cold bank cache or a busy machine makes unreliable).
    for n, fraction in enumerate((0.0, 0.05, 0.1, 0.2, 0.35, 0.5)):
        folder = tmp_path / str(n)
        process = subprocess.Popen([*command, "-o", str(folder)], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)  # fmt: skip
        deadline = time.monotonic() + 300
        while process.poll() is None and time.monotonic() < deadline:
            if folder.exists() and any(p.name.endswith(".part") for p in folder.iterdir()):
                break
            time.sleep(0.005)
        time.sleep(took * fraction)
        if process.poll() is None:
            seen_part = seen_part or any(p.name.endswith(".part") for p in folder.iterdir())
            process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        if folder.exists():
            for name, data in _final_files(folder).items():
                assert data == whole[name], (
                    f"{name} is half-written after a kill {fraction:.0%} of a run after it began writing"
                )
    assert seen_part, "no kill landed while the PDF was being written: the test proved nothing"
