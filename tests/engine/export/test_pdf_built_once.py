"""Issue 28: made in one process (here: no bank for a worker to rebuild the class from), the
worksheets and the key of a PDF export build each student's variants once, with the same bytes as
when each document built its own."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.export.files import write as write_files
from attnquiz.engine.export.pdf import worksheets as pdf
from attnquiz.engine.export.pdf.piece import RecentSheets
from attnquiz.engine.plan.class_plan import KeyStyle, Sheet, plan_class
from tests.builds import counted_builds


def _export(tmp_path: Path, key: KeyStyle) -> dict[str, bytes]:
    plan = plan_class(banks.load("week1"), students=9, master_seed=2026, count=6)
    written = write_files(plan, "pdf", tmp_path, key=key, jobs=1)
    return {path.name: path.read_bytes() for path in written.files}


@pytest.mark.parametrize("key", ["full", "grid"])
def test_each_variant_is_built_once_and_the_files_are_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: KeyStyle
) -> None:
    builds = counted_builds(monkeypatch)
    once = _export(tmp_path / "once", key)
    assert len(once) == 2  # worksheets and key
    assert builds, "the export built no variant"
    assert set(builds.values()) == {1}, [k for k, n in builds.items() if n > 1]
    assert len(builds) == 9 * 6
    builds.clear()

    def every_time(sheets: Sequence[Sheet], keep: int) -> Sequence[Sheet]:
        return sheets  # what the export did before: each piece builds the sheets it reads

    monkeypatch.setattr(pdf, "RecentSheets", every_time)
    again = _export(tmp_path / "again", key)
    assert max(builds.values()) >= 2  # the previous behaviour did build twice
    assert again == once


def test_recent_sheets_keeps_only_the_last_ones_read() -> None:
    reads: list[int] = []

    class Counting(Sequence[Sheet]):
        def __len__(self) -> int:
            return 10

        def __getitem__(self, index: int) -> Sheet:  # type: ignore[override]
            reads.append(index)
            return Sheet(index + 1, None, "original", ())

    recent = RecentSheets(Counting(), keep=3)
    assert [recent[i].student for i in (0, 1, 2, 0, 3, 4, 0, -1)] == [1, 2, 3, 1, 4, 5, 1, 10]
    assert reads == [0, 1, 2, 3, 4, 9]  # 0 read again while kept; 1 and 2 dropped in order
    assert len(recent.kept) == 3
    assert recent.builds == len(reads)
    assert [s.student for s in recent[8:10]] == [9, 10]
