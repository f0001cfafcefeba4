"""An export interrupted at any moment leaves no file: signals wait through the moments that matter,
SIGTERM is Ctrl-C's clean-up too, and a kill that nothing catches is cleaned up by the next export.

Each test sends its signal itself, at the moment it names: nothing depends on timing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from attnquiz.engine.export import stopping
from attnquiz.engine.export.files import Staging, save

needs_signals = pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signals")


@needs_signals
def test_a_signal_waits_until_the_held_block_ends() -> None:
    reached: list[str] = []

    def interrupted_inside() -> None:
        with stopping.held():
            os.kill(os.getpid(), signal.SIGINT)
            reached.append("the end of the block")  # not interrupted yet

    with pytest.raises(KeyboardInterrupt):
        interrupted_inside()
    assert reached == ["the end of the block"]


@needs_signals
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_staging_removes_every_temporary_file(tmp_path: Path, how: signal.Signals) -> None:
    (tmp_path / "key.md").write_bytes(b"the old key")

    def export() -> None:
        with Staging() as stage:
            stage.write(tmp_path / "worksheets.md", b"new sheets")
            with stage.open(tmp_path / "key.md") as out:
                out.write(b"half a new key")
                os.kill(os.getpid(), how)
            stage.commit()

    with pytest.raises((KeyboardInterrupt, stopping.Terminated)):
        export()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["key.md"]
    assert (tmp_path / "key.md").read_bytes() == b"the old key"
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # put back as it was


@needs_signals
def test_a_signal_during_the_renames_lands_after_all_of_them(tmp_path: Path) -> None:
    def export() -> None:
        with Staging() as stage:
            stage.write(tmp_path / "worksheets.md", b"sheets")
            stage.write(tmp_path / "key.md", b"key")
            first, _ = stage.staged[0]
            original = Path.replace

            def replace_then_interrupt(self: Path, target: Path) -> Path:
                done = original(self, target)
                if self == first:
                    os.kill(os.getpid(), signal.SIGINT)  # between the two renames
                return done

            Path.replace = replace_then_interrupt  # type: ignore[method-assign,assignment]
            try:
                stage.commit()
            finally:
                Path.replace = original  # type: ignore[method-assign]

    with pytest.raises(KeyboardInterrupt):
        export()
    # Both files were renamed together: never the new sheets with the old (or no) key.
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == {
        "worksheets.md": b"sheets",
        "key.md": b"key",
    }


def test_a_temporary_file_of_a_killed_export_is_removed_by_the_next(tmp_path: Path) -> None:
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    dead_pid = int(gone.stdout)
    left = tmp_path / f".key.md.{dead_pid}.abc123.part"
    left.write_bytes(b"half a key, its export killed")
    running = tmp_path / f".key.md.{os.getppid()}.def456.part"
    running.write_bytes(b"another export still writing")
    other = tmp_path / f".notes.md.{dead_pid}.ghi789.part"
    other.write_bytes(b"not a file this export writes")
    save({tmp_path / "key.md": b"the whole key"})
    assert not left.exists()
    assert running.exists()
    assert other.exists()
    assert (tmp_path / "key.md").read_bytes() == b"the whole key"


# A worker started as an export starts one, reporting how SIGINT is handled at the first line of
# code it runs (before `pdf_workers.serve` sets anything itself).
_FIRST_HANDLER = """
import signal
from attnquiz.engine.export.pdf import workers as pdf_workers

def report(there):
    there.send(repr(signal.getsignal(signal.SIGINT)))

if __name__ == "__main__":
    ctx = pdf_workers.context()
    here, there = ctx.Pipe()
    worker = ctx.Process(target=report, args=(there,))
    worker.start()
    print(here.recv())
    worker.join()
"""


@needs_signals
def test_a_pdf_worker_ignores_ctrl_c_from_its_very_start(tmp_path: Path) -> None:
    """Ctrl-C at a terminal reaches every process of the export's group, a worker too, even while it
    is still starting: it must never die of it with a traceback (the export says "interrupted"
    itself). The fork server's preload sets SIGINT ignored, so each worker is forked ignoring it."""
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork server: spawn workers start with the parent's mask (pdf_workers)")
    script = tmp_path / "first_handler.py"
    script.write_text(_FIRST_HANDLER)
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [sys.executable, str(script)], cwd=root, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == repr(signal.SIG_IGN), done.stdout


@needs_signals
def test_the_signal_tests_hold_when_the_suite_starts_with_ctrl_c_ignored() -> None:
    """A shell starts a background command (`nohup pytest &`) with SIGINT ignored, which every process
    after it inherits: the suite's conftest gives Ctrl-C back its handler, so these tests still test
    quiz (found when the README's test command ran under nohup: five signal tests saw nothing)."""
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            str(Path(__file__)),
            "-k",
            "held_block",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
