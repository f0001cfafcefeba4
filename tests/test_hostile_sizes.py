"""Every file with a size cap is refused by its size before its bytes are read.

The files are sparse (5 GiB that take no disk): a reader that reads first and compares after spends
gigabytes of memory, or dies of MemoryError, before it says no. Memory is measured (the Python
allocations of a read, and a command's resident peak from the kernel's rusage); time only with a
generous bound, printed for the record.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.file_text import read_bank_bytes
from attnquiz.engine.bank.loaded import Bank
from attnquiz.engine.capped import TooLarge, read_capped
from attnquiz.engine.classwork import grading as classgrade
from attnquiz.engine.errors import QuizError
from attnquiz.engine.scan.layout import load_layout
from attnquiz.engine.scan.page_files import load_page
from attnquiz.engine.scan.review import load_review
from attnquiz.engine.scan.settle import answers_text

HUGE = 5 << 30
QUIZ = [sys.executable, "-c", "from attnquiz.main import main; main()"]
RESIDENT_LIMIT = 100 << 20  # a refusal's whole command, interpreter and imports included
ALLOCATED_LIMIT = 4 << 20  # what refusing one file may allocate


def sparse(path: Path, size: int = HUGE) -> Path:
    with path.open("wb") as handle:
        handle.truncate(size)
    return path


@cache
def week1() -> Bank:
    return banks.load("week1")


READERS: dict[str, tuple[str, Callable[[Path], object]]] = {
    "answers file": ("answers.csv", lambda p: classgrade.grade_file(week1(), p)),
    "bank": ("bank.yaml", lambda p: read_bank_bytes(p, str(p))),
    "answer-sheet layout": ("answer-sheets.json", load_layout),
    "review file": ("answers.review.json", load_review),
    "scanned answers": ("answers.csv", answers_text),
    "scanned page": ("page.png", lambda p: load_page(p, 0)),
}


@pytest.mark.parametrize("what", list(READERS))
def test_a_huge_sparse_file_is_refused_by_its_size(tmp_path: Path, what: str) -> None:
    name, read = READERS[what]
    path = sparse(tmp_path / name)
    week1()  # loaded before the allocations are counted
    tracemalloc.start()
    try:
        with pytest.raises(QuizError) as refused:
            read(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    said = str(refused.value).splitlines()[0]  # a bank's error adds a summary line of its own
    assert "5,368,709,120" in said or "larger than" in said, said
    assert peak < ALLOCATED_LIMIT, f"{what}: {peak:,} bytes allocated to refuse it"


def test_a_file_that_only_grows_as_it_is_read_is_cut_at_the_cap(tmp_path: Path) -> None:
    # A pipe (or /dev/zero) has no size to look at: the read itself stops one byte past the cap.
    with pytest.raises(TooLarge) as refused:
        read_capped(Path("/dev/zero"), 1000)
    assert refused.value.size is None
    assert "at most 1,000" in refused.value.said("a file")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = subprocess.Popen([sys.executable, "-c", f"open({str(fifo)!r}, 'wb').write(b'x' * 5000)"])
    with pytest.raises(TooLarge):
        read_capped(fifo, 1000)
    writer.wait(timeout=60)
    exact = tmp_path / "exact"
    exact.write_bytes(b"y" * 1000)
    assert read_capped(exact, 1000) == b"y" * 1000


def test_quiz_grade_refuses_a_5_gib_answers_file_with_little_memory(tmp_path: Path) -> None:
    answers = sparse(tmp_path / "answers.csv")
    began = time.monotonic()
    process = subprocess.Popen(
        [*QUIZ, "grade", "week1", str(answers)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    out, err = process.communicate(timeout=120)
    took = time.monotonic() - began
    # communicate() reaped the child; its rusage is read from a fresh child that only runs it.
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, resource, subprocess, sys; "
            "subprocess.run(sys.argv[1:], capture_output=True); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
            *QUIZ,
            "grade",
            "week1",
            str(answers),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    resident = int(probe.stdout.strip()) * 1024  # kilobytes on Linux
    print(
        f"5 GiB sparse answers file refused in {took:.2f} s (start-up included), {resident >> 20} MB resident"
    )
    assert process.returncode == 1
    assert err.strip().count("\n") == 0
    assert "5,368,709,120 bytes" in err
    assert "Traceback" not in err + out
    assert resident < RESIDENT_LIMIT
    assert took < 60  # reading 5 GiB first takes far longer, or ends in MemoryError


def test_quiz_check_refuses_a_5_gib_bank(tmp_path: Path) -> None:
    bank = sparse(tmp_path / "huge.yaml")
    command = [*QUIZ, "check", str(bank)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 1
    assert "larger than 1,000,000 bytes" in result.stderr + result.stdout
    assert "Traceback" not in result.stderr
