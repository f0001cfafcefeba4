"""Writing exports: file names per format, one file per student with split, clear errors for a wrong -o."""

from __future__ import annotations

from pathlib import Path

import pytest

from attnquiz.engine.export import files
from attnquiz.engine.plan.class_plan import ExportError

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


@pytest.mark.parametrize("fmt", ["html", "md"])
@pytest.mark.parametrize("style", ["full", "brief"])
def test_a_text_export_builds_each_sheet_once_and_writes_the_same_text_as_a_whole_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: files.Format, style: str
) -> None:
    """HTML and Markdown are written sheet by sheet (a class of 1000 on the whole bank held 1.8 GB
    when each file was made whole): every sheet is built once for the worksheets and the key
    together, and the files hold exactly the text of the whole documents."""
    from attnquiz.engine.bank import finding as banks
    from attnquiz.engine.export.text import html, markdown
    from attnquiz.engine.plan.class_plan import ClassSheets, plan_class

    plan = plan_class(banks.load("week1"), students=5, master_seed=11, count=4)
    assert isinstance(plan.sheets, ClassSheets)  # built when read, never kept
    whole = {
        "html": (html.worksheets(plan, plan.sheets), html.key(plan, plan.sheets, style=style)),  # type: ignore[arg-type]
        "md": (markdown.worksheets(plan, plan.sheets), markdown.key(plan, plan.sheets, style)),  # type: ignore[arg-type]
    }[fmt]
    built: list[int] = []
    on_disk: list[int] = []  # bytes already in the export's temporary files when a sheet is built
    real = ClassSheets.__getitem__
    out = tmp_path / "out"

    def counted(self: ClassSheets, index: int) -> object:
        sheet = real(self, index)  # past the end: IndexError, which ends iterating (not a build)
        built.append(index)
        on_disk.append(sum(p.stat().st_size for p in out.glob(".*.part")) if out.exists() else 0)
        return sheet

    monkeypatch.setattr(ClassSheets, "__getitem__", counted)
    written = files.write(plan, fmt, out, key=style)  # type: ignore[arg-type]
    assert sorted(built) == list(range(5))
    texts = [p.read_text(encoding="utf-8") for p in written.files]
    assert texts == list(whole)
    # Written as it goes: by the last sheet, most of the class is on disk (less what the file
    # objects buffer), not held until the end.
    assert on_disk[-1] > sum(len(t.encode("utf-8")) for t in texts) // 2
