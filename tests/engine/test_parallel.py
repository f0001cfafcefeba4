"""Issue 28: `quiz grade` and `quiz check` split a class's work across the CPUs, with the same results.

The split is `attnquiz.engine.parallel.ordered_map`: forked workers where that is safe, else here.
Each test compares the work done by workers with the same work done in one process, so a worker
that dropped, reordered or changed a result fails it; none measures time. The tests that need
workers run in a fresh interpreter: this one has usually loaded Typst (through other tests), after
which `can_fork` rightly refuses to fork.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from attnquiz.engine import parallel

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="workers are forked on Linux only"
)
ROOT = Path(__file__).resolve().parents[2]


def fresh_json(code: str) -> Any:
    """What ``code``, run in a new interpreter with this test module importable, prints as JSON."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _square_and_where(offset: int, task: int) -> tuple[int, int]:
    return task * task + offset, os.getpid()


def _fails_at_seven(offset: int, task: int) -> int:
    if task == 7:
        raise ValueError(f"task {task} is refused")
    return task + offset


def _dies_at_five(offset: int, task: int) -> int:
    if task == 5:
        os.kill(os.getpid(), 9)  # as the out-of-memory killer or another `kill -9` would
    return task + offset


def children(parent: int | None = None) -> list[int]:
    """The live (not zombie) child processes of ``parent`` (this process by default)."""
    me = str(os.getpid() if parent is None else parent)
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def test_results_come_in_task_order_from_workers() -> None:
    found = fresh_json(
        """
        import json, os
        from attnquiz.engine import parallel
        from tests.engine.test_parallel import _square_and_where
        results = list(parallel.ordered_map(_square_and_where, 5, list(range(60)), jobs=2, chunk=3))
        print(json.dumps({"values": [v for v, _ in results], "pids": sorted({p for _, p in results}),
                          "me": os.getpid()}))
        """
    )
    assert found["values"] == [t * t + 5 for t in range(60)]
    assert found["me"] not in found["pids"]  # done by workers, not here


def test_tasks_are_read_as_the_work_goes() -> None:
    """A generator of tasks (a class's rows read from its file) is read a few chunks ahead of the
    results, never whole before the first one."""
    found = fresh_json(
        """
        import json, os
        from attnquiz.engine import parallel
        from tests.engine.test_parallel import _square_and_where
        drawn = []
        def tasks():
            for task in range(400):
                drawn.append(task)
                yield task
        results = parallel.ordered_map(_square_and_where, 0, tasks(), jobs=2, chunk=3)
        first = next(results)
        ahead = len(drawn)
        rest = list(results)
        print(json.dumps({"first": first[0], "ahead": ahead, "values": [v for v, _ in rest],
                          "pids": sorted({p for _, p in rest}), "me": os.getpid()}))
        """
    )
    assert found["first"] == 0
    assert found["ahead"] <= 5 * 3  # two chunks a worker sent, one more once a result is back
    assert found["values"] == [t * t for t in range(1, 400)]
    assert found["me"] not in found["pids"]


@pytest.mark.parametrize(
    ("jobs", "tasks", "min_tasks"),
    [(1, 60, 2), (2, 1, 2), (2, 10, 11)],
    ids=["one job", "one task", "too few tasks"],
)
def test_small_or_single_work_runs_here(jobs: int, tasks: int, min_tasks: int) -> None:
    results = list(
        parallel.ordered_map(_square_and_where, 0, list(range(tasks)), jobs=jobs, min_tasks=min_tasks)
    )
    assert [value for value, _ in results] == [t * t for t in range(tasks)]
    assert {pid for _, pid in results} == {os.getpid()}


def test_no_fork_while_another_thread_runs() -> None:
    """A forked copy of a threaded process can deadlock on a lock another thread held (the web
    server has threads): there the work runs here."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not parallel.can_fork()
        results = list(parallel.ordered_map(_square_and_where, 0, list(range(20)), jobs=2))
    finally:
        stop.set()
        other.join()
    assert {pid for _, pid in results} == {os.getpid()}


def test_no_fork_once_typst_is_loaded() -> None:
    """Found by this test suite: a worker forked after Typst compiled here waited for ever for the
    compiler's threads, which a forked copy does not have."""
    assert fresh_json(
        """
        import json
        from attnquiz.engine import parallel
        before = parallel.can_fork()
        from attnquiz.engine.export.pdf.worksheets import compile_typst
        compile_typst("x")
        print(json.dumps([before, parallel.can_fork()]))
        """
    ) == [True, False]


def test_a_workers_error_reaches_the_caller_and_no_worker_is_left() -> None:
    found = fresh_json(
        """
        import json
        from attnquiz.engine import parallel
        from tests.engine.test_parallel import children, _fails_at_seven, _square_and_where
        try:
            list(parallel.ordered_map(_fails_at_seven, 0, list(range(40)), jobs=2))
            error = None
        except ValueError as exc:
            error = str(exc)
        after_error = children()
        early = parallel.ordered_map(_square_and_where, 0, list(range(200)), jobs=2)
        first = next(early)[0]
        early.close()
        print(json.dumps({"error": error, "after_error": after_error, "first": first,
                          "after_close": children()}))
        """
    )
    assert found["error"] == "task 7 is refused"
    assert found["after_error"] == []
    assert found["first"] == 0
    assert found["after_close"] == []  # a caller that stops early leaves no worker either


def test_a_class_graded_by_workers_gets_the_marks_of_one_process() -> None:
    found = fresh_json(
        """
        import json, os
        from attnquiz.engine.bank import finding as banks
        from attnquiz.engine.classwork.grading import grade_text
        from attnquiz.engine.classwork.marks_writer import marks_csv
        from tests.engine.test_parallel import class_answers
        bank = banks.load("week1")
        text = class_answers(students=40)  # 40 rows × every item: above the cells that pay for workers
        forked = []
        fork = os.fork
        def counted_fork():
            pid = fork()
            if pid:
                forked.append(pid)
            return pid
        os.fork = counted_fork
        split = grade_text(bank, text, master_seed=2026, jobs=2)
        os.fork = fork
        alone = grade_text(bank, text, master_seed=2026, jobs=1)
        print(json.dumps({
            "forked": len(forked),
            "same_marks": marks_csv(split) == marks_csv(alone),
            "same_summary": split.summary() == alone.summary(),
            "problems": [row.problem for row in split.rows],
            "problems_alone": [row.problem for row in alone.rows],
        }))
        """
    )
    assert found["forked"] == 2
    assert found["same_marks"]
    assert found["same_summary"]
    assert found["problems"] == found["problems_alone"]
    assert found["problems"][:-2] == [""] * 40
    assert all(found["problems"][-2:])  # the student twice and the code that is no code


def test_a_class_of_code_cells_is_graded_by_workers_from_a_few_rows() -> None:
    # Each code cell runs a sandbox: a handful of rows already go to the workers, with the same marks.
    found = fresh_json(
        """
        import csv, io, json, os
        from attnquiz.engine.bank import finding as banks
        from attnquiz.engine.classwork.grading import grade_text
        from attnquiz.engine.classwork.marks_writer import marks_csv
        right = (
            "import numpy as np\\n\\ndef attention(Q, K, V):\\n    s = Q @ K.T / np.sqrt(Q.shape[-1])\\n"
            "    w = np.exp(s - s.max(axis=-1, keepdims=True))\\n"
            "    return w / w.sum(axis=-1, keepdims=True) @ V\\n"
        )
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["student", "attention"])
        for student in range(1, 5):
            writer.writerow([student, right if student % 2 else right.replace("axis=-1", "axis=0")])
        bank = banks.load("code")
        forked = []
        fork = os.fork
        def counted_fork():
            pid = fork()
            if pid:
                forked.append(pid)
            return pid
        os.fork = counted_fork
        split = grade_text(bank, out.getvalue(), master_seed=2026, students=4, jobs=2)
        os.fork = fork
        alone = grade_text(bank, out.getvalue(), master_seed=2026, students=4, jobs=1)
        print(json.dumps({
            "forked": len(forked),
            "same_marks": marks_csv(split) == marks_csv(alone),
            "mistakes": [row.cells[0].mistake for row in split.rows],
        }))
        """
    )
    assert found["forked"] == 2
    assert found["same_marks"]
    assert found["mistakes"] == [None, "softmax-over-queries", None, "softmax-over-queries"]


def test_a_bank_checked_by_workers_gives_the_report_of_one_process() -> None:
    found = fresh_json(
        """
        import json
        from attnquiz.engine.bank import finding as banks
        from attnquiz.engine.check.checks import check_bank
        bank = banks.load("week1")
        seen = []
        split = check_bank(bank, variants=2, jobs=2, progress=lambda done, total, item: seen.append(
            f"{done}/{total} {item}"))
        alone = check_bank(bank, variants=2, jobs=1)
        print(json.dumps({"same": split.to_json() == alone.to_json(), "seen": seen,
                          "expected": [f"{n}/{len(bank.items)} {e.id}" for n, e in enumerate(bank.items, 1)],
                          "ok": split.ok}))
        """
    )
    assert found["same"]
    assert found["seen"] == found["expected"]  # progress in bank order
    assert found["ok"]


def class_answers(students: int) -> str:
    """The bench's class on every week-1 item (right answers, known mistakes, junk and blanks), then
    rows that cannot be graded (a student twice, a code that is no code)."""
    from bench.run import class_answers as bench_class

    with tempfile.TemporaryDirectory() as work:
        text = bench_class(Path(work), students).read_text(encoding="utf-8")
    width = len(next(csv.reader(io.StringIO(text))))
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["3", "Student 3 again", "", *[""] * (width - 3)])
    writer.writerow(["", "Nobody", "ZZZZ-ZZZZ", *[""] * (width - 3)])
    return text + out.getvalue()


def test_a_worker_killed_from_outside_is_one_clear_error_and_no_worker_is_left() -> None:
    found = fresh_json(
        """
        import json
        from attnquiz.engine import parallel
        from tests.engine.test_parallel import children, _dies_at_five
        try:
            list(parallel.ordered_map(_dies_at_five, 0, list(range(40)), jobs=2))
            error = None
        except parallel.WorkerDiedError as exc:
            error = str(exc)
        print(json.dumps({"error": error, "left": children()}))
        """
    )
    assert found["error"] is not None
    assert "--jobs 1" in found["error"]
    assert found["left"] == []
