"""A folder of code submissions: each student's .py file or notebook found by its name, read with caps,
run in the sandbox on the student's variant; whatever else the folder holds is one line for that
student (or that file), and the rest of the class is graded."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.classwork.code_folder import (
    MAX_CELLS,
    MAX_NOTEBOOK_BYTES,
    MAX_PY_BYTES,
    SubmissionsError,
    grade_folder,
    notebook_cells,
    notebook_code,
    read_folder,
    student_of,
)

RIGHT = """import numpy as np


def attention(Q, K, V):
    s = Q @ K.T / np.sqrt(Q.shape[-1])
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    return w / w.sum(axis=-1, keepdims=True) @ V
"""
OVER_QUERIES = RIGHT.replace("axis=-1", "axis=0")
NO_SCALE = RIGHT.replace(" / np.sqrt(Q.shape[-1])", "")


def _notebook(*cells: tuple[str, object]) -> str:
    return json.dumps(
        {
            "nbformat": 4,
            "nbformat_minor": 5,
            "metadata": {},
            "cells": [{"cell_type": kind, "metadata": {}, "source": source} for kind, source in cells],
        }
    )


@pytest.mark.parametrize(
    ("name", "student"),
    [
        ("12.py", 12),
        ("12.ipynb", 12),
        ("student-12.py", 12),
        ("Student_12.IPYNB", 12),
        ("student 3.py", 3),
        ("007.py", 7),
        ("12.txt", None),
        ("12.py.bak", None),
        ("attention.py", None),
        ("12-attention.py", None),
        ("-12.py", None),
        ("1e3.py", None),
        ("٣.py", None),  # an Arabic-Indic digit is no student number on a sheet
        ("1234567890.py", None),
        ("\u017ftudent-3.py", None),  # a long s folds to "s" only outside ASCII matching
    ],
)
def test_a_file_names_its_student(name: str, student: int | None) -> None:
    assert student_of(name) == student


def test_a_notebook_gives_its_code_cells_in_order() -> None:
    text = _notebook(
        ("markdown", "# Attention\n"),
        ("code", ["%matplotlib inline\n", "import numpy as np\n"]),
        ("raw", "def attention(Q, K, V): return 0"),
        ("code", "def attention(Q, K, V):\n    !ls\n    return Q\n"),
    )
    assert notebook_code(text) == (
        "# cell 2\n# %matplotlib inline\nimport numpy as np\n\n"
        "# cell 4\ndef attention(Q, K, V):\n    # !ls\n    return Q\n"
    )


@pytest.mark.parametrize(
    "sources",
    [
        ["a = 1\n", "", "b = 2\nc = 3", "\n\n\nd = 4\n\n"],
        ["%time x = 1\ny = 2\n", ["z = 3\n", "w = 4"]],
        ["one", "two", "three"],
    ],
)
def test_each_cells_first_line_is_where_the_notebook_says(sources: list[object]) -> None:
    text = _notebook(("markdown", "intro"), *(("code", source) for source in sources))
    code, starts = notebook_cells(text)
    lines = code.split("\n")
    assert [number for _, number in starts] == list(range(2, 2 + len(sources)))
    for (start, number), source in zip(starts, sources, strict=True):
        first = ("".join(source) if isinstance(source, list) else str(source)).split("\n")[0]
        assert lines[start - 2] == f"# cell {number}"
        assert lines[start - 1] in {first, "# " + first}


def test_a_notebooks_error_is_said_by_its_cell_and_line(tmp_path: Path) -> None:
    bank = banks.load("code", plugins=True)
    text = _notebook(("markdown", "Answer"), ("code", RIGHT), ("code", "print('demo')\nplt.plot([1, 2])\n"))
    (tmp_path / "1.ipynb").write_text(text)
    marks, _ = grade_folder(bank, tmp_path, ["attention"], master_seed=3, students=1)
    feedback = marks.rows[0].cells[0].feedback
    assert "NameError" in feedback
    assert "(cell 3, line 2)" in feedback


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("not json", "not JSON"),
        ("[" * 200_000 + "]" * 200_000, "nested too deep"),
        ('{"cells": ' + "[" * 200_000 + "]" * 200_000 + "}", "nested too deep"),
        ("[]", "no list of cells"),
        ('{"cells": {}}', "no list of cells"),
        ('{"worksheets": [{"cells": []}], "nbformat": 3}', "format 3"),
        ('{"cells": [1]}', "cell 1 is not a cell"),
        ('{"cells": [{"cell_type": "code", "source": 5}]}', "source is not text"),
        ('{"cells": [{"cell_type": "code", "source": ["a", 5]}]}', "source is not text"),
        (json.dumps({"cells": [{"cell_type": "code", "source": ""}] * (MAX_CELLS + 1)}), "cells (at most"),
        (json.dumps({"cells": [{"cell_type": "markdown", "source": "x"}] * 100_000}), "100,000 cells"),
    ],
)
def test_what_is_not_a_notebook_is_said(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=r".") as caught:
        notebook_code(text)
    assert says in str(caught.value)


def test_a_hostile_folder_is_a_line_per_student_and_the_rest_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "subs"
    folder.mkdir()
    outside = tmp_path / "secret.py"
    outside.write_text(RIGHT)
    (folder / "1.py").write_text(RIGHT)
    (folder / "student-2.ipynb").write_text(_notebook(("code", RIGHT)))
    (folder / "3.py").write_bytes(b"def attention(Q, K, V):\n    return '\xff'\n")
    with (folder / "4.py").open("wb") as huge:  # sparse: the size is said, never read
        huge.truncate(50 * MAX_NOTEBOOK_BYTES)
    with (folder / "5.ipynb").open("wb") as huge:
        huge.truncate(MAX_NOTEBOOK_BYTES + 1)
    (folder / "6.py").symlink_to(outside)
    (folder / "7.py").write_text(RIGHT)
    (folder / "student_7.py").write_text(RIGHT)
    os.mkfifo(folder / "8.py")  # never opened for reading in a way that waits
    (folder / "9.py").mkdir()
    (folder / "10.py").write_text("x" * (MAX_PY_BYTES + 1))
    (folder / "14.py").write_text("#" * (MAX_PY_BYTES // 2))  # within the file's cap, but not code's
    (folder / "15.ipynb").write_text(_notebook(("code", "#" * 60_000), ("code", "#" * 60_000)))
    (folder / "11.ipynb").write_text('{"cells": ' * 100_000 + "[]" + "}" * 100_000)
    (folder / "13.py").symlink_to(tmp_path)
    (folder / "notes.txt").write_text("hello")
    (folder / "40.py").write_text(RIGHT)
    (folder / ".DS_Store").write_bytes(b"\x00\x01")
    (folder / ".ipynb_checkpoints").mkdir()
    (folder / "bad\udcff.py").write_text(RIGHT)
    (folder / "a\nb.py").write_text(RIGHT)  # printed on one line

    submissions, others = read_folder(folder, 15)

    said = {s.student: s.problem for s in submissions}
    assert [s.student for s in submissions] == list(range(1, 16))
    assert said[1] == ""
    assert submissions[0].source == RIGHT
    assert said[2] == ""
    assert "def attention(Q, K, V):" in submissions[1].source
    assert said[3] == "3.py: not UTF-8 text (line 2): save it as UTF-8"
    assert said[4].startswith("4.py: too large (1,000,000,000 bytes")
    assert said[5].startswith("5.ipynb: too large")
    assert said[6] == "6.py: a symbolic link: not followed (copy the file itself into the folder)"
    assert said[7] == "two submissions: 7.py and student_7.py (keep one and grade again)"
    assert said[8] == "8.py: not a regular file"
    assert said[9] == "9.py: not a regular file"
    assert said[10].startswith("10.py: too large")
    assert said[11] == "11.ipynb: not a notebook: its JSON is nested too deep"
    assert said[12] == "handed nothing in (no file in the folder)"
    assert said[13].startswith("13.py: a symbolic link")
    assert said[14] == "14.py: it holds 200,000 characters of code (at most 100,000)"
    assert said[15] == "15.ipynb: its code cells hold 120,021 characters of code (at most 100,000)"
    assert others == [
        "40.py: unknown student 40 (the class has students 1 to 15)",
        "a\\nb.py: not a submission (name it by the student number: 12.py or 12.ipynb)",
        "bad\\udcff.py: not a submission (name it by the student number: 12.py or 12.ipynb)",
        "notes.txt: not a submission (name it by the student number: 12.py or 12.ipynb)",
    ]
    assert outside.read_text() == RIGHT  # read through no link, and nothing written


def test_a_folder_of_too_many_files_is_refused_before_any_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from attnquiz.engine.classwork import code_folder

    monkeypatch.setattr(code_folder, "MAX_ENTRIES", 5)
    for n in range(1, 7):
        (tmp_path / f"{n}.py").write_text(RIGHT)
    with pytest.raises(SubmissionsError, match="more than 5 files"):
        read_folder(tmp_path, 6)


def test_what_is_not_a_folder_of_submissions_is_an_error(tmp_path: Path) -> None:
    bank = banks.load("code", plugins=True)
    file = tmp_path / "answers.py"
    file.write_text(RIGHT)
    with pytest.raises(SubmissionsError, match="not a folder"):
        grade_folder(bank, file, ["attention"], master_seed=1, students=2)
    with pytest.raises(SubmissionsError, match="cannot read the folder"):
        grade_folder(bank, tmp_path / "missing", ["attention"], master_seed=1, students=2)
    with pytest.raises(SubmissionsError, match="--items"):
        grade_folder(bank, tmp_path, [], master_seed=1, students=2)
    week1 = banks.load("week1", plugins=True)
    with pytest.raises(SubmissionsError, match="is not a code question"):
        grade_folder(week1, tmp_path, [week1.items[0].id], master_seed=1, students=2)


def test_a_class_graded_names_each_students_mistake(tmp_path: Path) -> None:
    bank = banks.load("code", plugins=True)
    (tmp_path / "1.py").write_text(RIGHT)
    (tmp_path / "2.py").write_text(OVER_QUERIES)
    (tmp_path / "3.ipynb").write_text(_notebook(("markdown", "My answer"), ("code", NO_SCALE)))
    (tmp_path / "4.py").write_text("def attention(Q, K, V):\n    return Q @ K @ V\n")
    (tmp_path / "5.py").write_text("")
    (tmp_path / "6.py").write_text(RIGHT.replace("attention", "attend"))
    marks, others = grade_folder(bank, tmp_path, ["attention"], master_seed=2026, students=6, jobs=1)
    assert others == []
    cells = {row.student: row.cells[0] for row in marks.rows}
    assert [row.name for row in marks.rows] == ["1.py", "2.py", "3.ipynb", "4.py", "5.py", "6.py"]
    assert cells["1"].status == "correct"
    assert cells["2"].mistake == "softmax-over-queries"
    assert cells["3"].mistake == "no-scale"
    assert cells["4"].status == "wrong"
    assert "inner sizes must match" in cells["4"].feedback
    assert cells["5"].status == "blank"
    assert cells["6"].status == "invalid"
    # Each student's variant is their worksheet's: the seed and the number rebuild it.
    from attnquiz.engine.plan.class_plan import student_seed
    from attnquiz.engine.seeding import variant_code

    assert [row.code for row in marks.rows] == [variant_code(student_seed(2026, n)) for n in range(1, 7)]
    summary = marks.summary()
    assert summary.graded == 6
    assert ("attention", "softmax-over-queries", 1) in summary.mistakes


def test_workers_give_the_same_marks(tmp_path: Path) -> None:
    bank = banks.load("code", plugins=True)
    for n, source in enumerate([RIGHT, OVER_QUERIES, NO_SCALE, RIGHT], start=1):
        (tmp_path / f"{n}.py").write_text(source)
    told: list[tuple[int, int]] = []
    alone, _ = grade_folder(bank, tmp_path, ["attention"], master_seed=7, students=4, jobs=1)
    shared, _ = grade_folder(
        bank, tmp_path, ["attention"], master_seed=7, students=4, jobs=2, progress=lambda *n: told.append(n)
    )
    assert alone == shared
    assert told == [(1, 4), (2, 4), (3, 4), (4, 4)]


def test_a_submission_can_neither_read_nor_change_a_classmates(tmp_path: Path) -> None:
    from tests.engine.test_sandbox import _landlock

    if not _landlock():
        pytest.skip("this kernel has no Landlock")
    bank = banks.load("code", plugins=True)
    (tmp_path / "1.py").write_text(RIGHT)
    spy = f"def attention(Q, K, V):\n    raise RuntimeError(open({str(tmp_path / '1.py')!r}).read())\n"
    vandal = (
        f"def attention(Q, K, V):\n    open({str(tmp_path / '1.py')!r}, 'w').write('gone')\n    return Q\n"
    )
    (tmp_path / "2.py").write_text(spy)
    (tmp_path / "3.py").write_text(vandal)
    marks, _ = grade_folder(bank, tmp_path, ["attention"], master_seed=5, students=3)
    feedback = [row.cells[0].feedback for row in marks.rows]
    assert marks.rows[0].cells[0].status == "correct"
    assert "PermissionError" in feedback[1]
    assert "keepdims" not in feedback[1]  # nothing of the classmate's code came back
    assert "PermissionError" in feedback[2]
    assert (tmp_path / "1.py").read_text() == RIGHT


def test_grading_where_landlock_is_missing_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    from attnquiz.engine.classwork.code_folder import unprotected
    from attnquiz.engine.code import sandbox

    real = sandbox.run

    def without_landlock(*args: object, **kwargs: object) -> sandbox.Outcome:
        outcome = real(*args, **kwargs)  # type: ignore[arg-type]
        protections = {**outcome.protections, "landlock": "not available (kernel too old)"}
        return sandbox.Outcome(
            outcome.stopped, outcome.load, outcome.missing, outcome.results, "", protections
        )

    if real("def f():\n    return 1.0\n", "f", [[]]).protections.get("landlock", "").startswith("on"):
        assert unprotected() == ""
    monkeypatch.setattr(sandbox, "run", without_landlock)
    said = unprotected()
    assert said.startswith("the sandbox has no Landlock here (not available (kernel too old))")
    assert "the other submissions" in said
