"""Writing exports: file names per format, one file per student with split, clear errors for a wrong -o."""

from __future__ import annotations

from pathlib import Path

import pytest

from attnquiz.engine.export import files
from attnquiz.engine.export.worksheet import ExportError

from .samples import sample_plan


def test_worksheet_formats_write_sheets_and_key_into_a_folder(tmp_path: Path) -> None:
    written = files.write(sample_plan(2), "md", tmp_path / "out")
    assert [p.name for p in written.files] == ["worksheets.md", "key.md"]
    assert all(p.read_text(encoding="utf-8") for p in written.files)


def test_split_writes_one_sheet_and_key_per_student_and_key_none_skips_it(tmp_path: Path) -> None:
    split = files.write(sample_plan(3), "html", tmp_path / "a", split=True)
    names = [p.name for p in split.files]
    assert names == [
        "worksheet-01.html",
        "key-01.html",
        "worksheet-02.html",
        "key-02.html",
        "worksheet-03.html",
        "key-03.html",
    ]
    no_key = files.write(sample_plan(2), "pdf", tmp_path / "b", key=None)
    assert [p.name for p in no_key.files] == ["worksheets.pdf"]
    assert no_key.files[0].read_bytes().startswith(b"%PDF-")


def test_lms_formats_write_one_file(tmp_path: Path) -> None:
    for fmt, name in (("moodle", "s.xml"), ("qti", "s.zip"), ("json", "s.json")):
        written = files.write(sample_plan(1), fmt, tmp_path / "sub" / name)  # type: ignore[arg-type]
        assert written.files == [tmp_path / "sub" / name]
        assert written.files[0].stat().st_size > 0
    assert files.default_output("qti", "week1") == Path("week1-canvas.zip")


def test_a_wrong_kind_of_output_is_an_error(tmp_path: Path) -> None:
    a_file = tmp_path / "x.pdf"
    a_file.write_text("", encoding="utf-8")
    with pytest.raises(ExportError, match="is a file"):
        files.write(sample_plan(1), "pdf", a_file)
    with pytest.raises(ExportError, match="is a folder"):
        files.write(sample_plan(1), "moodle", tmp_path)
