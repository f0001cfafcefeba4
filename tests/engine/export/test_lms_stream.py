"""LMS files are written as they are made: many small writes of the same bytes as the file made whole
(a Moodle file compacted question by question), from a class whose sheets are built when read and
never all kept."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.export import files
from attnquiz.engine.export.lms import json_export, moodle, moodle_file, qti
from attnquiz.engine.plan.class_plan import ClassSheets, plan_class


class _CountingFile(io.BytesIO):
    """A file that counts its writes and remembers the largest."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0
        self.largest = 0

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self.writes += 1
        self.largest = max(self.largest, len(data))
        return super().write(data)


# Canvas's zip: the compressor hands out its output in blocks of tens of kB, so a bigger class.
@pytest.mark.parametrize(("fmt", "students"), [("moodle", 40), ("json", 40), ("qti", 400)])
def test_an_lms_file_is_streamed_in_small_writes(fmt: str, students: int) -> None:
    plan = plan_class(banks.load("week1"), students=students, master_seed=3, count=5)
    out = _CountingFile()
    files.write_lms(plan, fmt, out)  # type: ignore[arg-type]
    data = out.getvalue()
    assert out.writes > 5
    assert out.largest < len(data) / 5  # never the whole file (nor a fifth of it) in one piece
    if fmt == "moodle":
        whole = "\n".join(moodle_file.compact(line) for line in moodle.lines(plan, [])) + "\n"
        assert data == whole.encode("utf-8")
    elif fmt == "json":
        document = json_export.document(plan)
        assert data == (json.dumps(document, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
        assert len(json.loads(data)["questions"]) == 5 * 40
    else:
        assert data == qti.package(plan).data
        assert zipfile.ZipFile(io.BytesIO(data)).testzip() is None


def test_sheets_are_built_when_read_and_rebuilt_the_same() -> None:
    plan = plan_class(banks.load("week1"), students=1000, master_seed=9)
    assert isinstance(plan.sheets, ClassSheets)
    assert len(plan.sheets) == 1000
    last = plan.sheets[-1]
    assert last.student == 1000
    assert last == plan.sheets[999]
    assert [q.code for q in plan.by_item()[3][1][997:]] == [s.questions[3].code for s in plan.sheets[997:]]
    with pytest.raises(IndexError):
        plan.sheets[1000]


def test_json_of_a_one_item_one_variant_export_is_well_formed() -> None:
    plan = plan_class(banks.load("week1"), students=1, master_seed=1, count=1)
    data = json.loads(json_export.dumps(plan))
    assert len(data["questions"]) == 1
    assert data["variants"] == 1
