"""`quiz export` and `quiz grade` driven as an instructor drives them."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.plan.class_plan import plan_class
from attnquiz.main import app

runner = CliRunner()


def _ids(n: int = 3) -> list[str]:
    return [entry.id for entry in banks.load("week1").items[:n]]


def test_markdown_worksheets_and_key_into_a_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["export", "week1", "--students", "2", "--seed", "5", "-f", "md", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["key.md", "worksheets.md"]
    assert "Master seed 5" in result.stdout
    plan = plan_class(banks.load("week1"), students=2, master_seed=5)
    text = (out / "worksheets.md").read_text(encoding="utf-8")
    assert all(f"`{sheet.code}`" in text for sheet in plan.sheets)


def test_pdf_with_split_brief_key_and_letter_paper(tmp_path: Path) -> None:
    args = ["export", "week1", "--students", "2", "--seed", "1", "--items", ",".join(_ids(2))]
    result = runner.invoke(
        app, [*args, "--split", "--key", "brief", "--paper", "us-letter", "-o", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["key-01.pdf", "key-02.pdf", "worksheet-01.pdf", "worksheet-02.pdf"]


def test_a_random_seed_is_printed_so_the_class_can_be_graded(tmp_path: Path) -> None:
    result = runner.invoke(app, ["export", "week1", "-f", "json", "-o", str(tmp_path / "w.json"), "-n", "2"])
    assert result.exit_code == 0, result.output
    assert "chosen at random; keep it" in result.stdout
    data = json.loads((tmp_path / "w.json").read_text(encoding="utf-8"))
    assert f"Master seed {data['master_seed']}" in result.stdout
    assert len(data["items"]) == 2


def test_lms_formats_with_variants(tmp_path: Path) -> None:
    for fmt, name in (("moodle", "w.xml"), ("qti", "w.zip")):
        args = ["export", "week1", "--variants", "2", "--seed", "3", "-f", fmt, "-o", str(tmp_path / name)]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        assert (tmp_path / name).stat().st_size > 0


def test_original_questions_leave_out_items_without_one_in_one_warning(tmp_path: Path) -> None:
    result = runner.invoke(app, ["export", "week1", "--original", "-f", "md", "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert result.stderr.count("warning: left out") == (
        1 if any(not e.has_original for e in banks.load("week1").items) else 0
    )
    assert "Past-paper questions" in (tmp_path / "worksheets.md").read_text(encoding="utf-8")


def test_usage_errors_exit_2_and_user_errors_exit_1(tmp_path: Path) -> None:
    both = runner.invoke(app, ["export", "week1", "--students", "2", "--variants", "3"])
    assert both.exit_code == 2
    split = runner.invoke(app, ["export", "week1", "-f", "moodle", "--split"])
    assert split.exit_code == 2
    seeded = runner.invoke(app, ["export", "week1", "--original", "--seed", "1"])
    assert seeded.exit_code == 2
    unknown = runner.invoke(app, ["export", "week1", "--items", "no-such-item", "-o", str(tmp_path)])
    assert unknown.exit_code == 1
    assert unknown.stderr.startswith("quiz: bank 'week1' has no item 'no-such-item'")
    assert "Traceback" not in unknown.output


def test_grade_a_class_from_the_template(tmp_path: Path) -> None:
    items = _ids(3)
    template = tmp_path / "answers.csv"
    made = runner.invoke(
        app,
        [
            "grade",
            "week1",
            "--template",
            "--students",
            "3",
            "--seed",
            "2026",
            "--items",
            ",".join(items),
            "-o",
            str(template),
        ],
    )
    assert made.exit_code == 0, made.output
    plan = plan_class(banks.load("week1"), students=3, master_seed=2026, items=items)
    rows = list(csv.reader(io.StringIO(template.read_text(encoding="utf-8"))))
    for row, sheet in zip(rows[1:], plan.sheets, strict=True):
        row[3:] = [q.answer.format() for q in sheet.questions]
    rows[3][3] = ""  # student 3 left the first question blank
    rows.append(["7", "Stranger", "", "", "", ""])  # not in the class
    with template.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(rows)
    marks = tmp_path / "marks.csv"
    result = runner.invoke(
        app, ["grade", "week1", str(template), "--seed", "2026", "--students", "3", "-o", str(marks)]
    )
    assert result.exit_code == 1  # one row could not be graded
    assert f"{template}:5: unknown student 7" in result.stderr
    written = list(csv.DictReader(io.StringIO(marks.read_text(encoding="utf-8"))))
    assert [r["total"] for r in written] == ["3", "3", "2", ""]
    assert written[3]["notes"].startswith("not graded: unknown student 7")
    assert "3 students graded" in result.stdout


def test_grade_json_and_clean_exit(tmp_path: Path) -> None:
    items = _ids(2)
    plan = plan_class(banks.load("week1"), students=2, master_seed=6, items=items)
    lines = ["code," + ",".join(items)]
    lines += [
        sheet.code + "," + ",".join(f'"{q.answer.format()}"' for q in sheet.questions)
        for sheet in plan.sheets
    ]
    answers = tmp_path / "a.csv"
    answers.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["grade", "week1", str(answers), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["summary"]["mean_total"] == 2
    assert [row["total"] for row in data["rows"]] == [2, 2]


def test_grade_usage_errors(tmp_path: Path) -> None:
    assert runner.invoke(app, ["grade", "week1"]).exit_code == 2
    assert runner.invoke(app, ["grade", "week1", "--template", "--seed", "1"]).exit_code == 2
    missing = runner.invoke(app, ["grade", "week1", str(tmp_path / "none.csv")])
    assert missing.exit_code == 1
    assert "cannot read the answers file" in missing.stderr


def test_moodle_and_json_can_go_to_standard_output() -> None:
    result = runner.invoke(
        app, ["export", "week1", "-f", "json", "--variants", "1", "--seed", "4", "-n", "1", "-o", "-"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["master_seed"] == 4
    assert "Master seed 4" in result.stderr
    assert runner.invoke(app, ["export", "week1", "-f", "pdf", "-o", "-"]).exit_code == 2


_EXPORT_ALL = """
import sys
from pathlib import Path
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.export.files import write
from attnquiz.engine.plan.class_plan import plan_class
plan = plan_class(banks.load("week1"), students=2, master_seed=31, count=4)
for fmt in ("md", "pdf", "html"):
    write(plan, fmt, Path(sys.argv[1]) / fmt)
for fmt, name in (("moodle", "w.xml"), ("json", "w.json"), ("qti", "w.zip")):
    write(plan, fmt, Path(sys.argv[1]) / name)
"""


def test_the_same_seed_gives_the_same_bytes_in_another_process(tmp_path: Path) -> None:
    folders = []
    for hash_seed in ("1", "2"):
        folder = tmp_path / hash_seed
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        subprocess.run([sys.executable, "-c", _EXPORT_ALL, str(folder)], check=True, env=env, timeout=120)
        folders.append(
            {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
        )
    first, second = folders
    assert len(first) == 9
    assert first == second
