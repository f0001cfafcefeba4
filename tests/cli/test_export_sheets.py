"""What `quiz export` puts on a worksheet by default (one item of each topic), what --all and a
selection change, the key a teacher gets by default (the marking grid), and --jobs."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

from pypdf import PdfReader
from typer.testing import CliRunner

from attnquiz.engine.bank import finding as banks
from attnquiz.main import app

runner = CliRunner()


def _json_items(tmp_path: Path, *extra: str) -> list[str]:
    target = tmp_path / "w.json"
    result = runner.invoke(app, ["export", "week1", "--seed", "4", "-f", "json", "-o", str(target), *extra])
    assert result.exit_code == 0, result.output
    return list(json.loads(target.read_text(encoding="utf-8"))["items"])


_TEMPLATE_COLUMN = re.compile(r"(?:\d+[a-z] )?(\S+)(?: mark \(\d+-\d+\))?")


def _column_item(column: str) -> str:
    match = _TEMPLATE_COLUMN.fullmatch(column)
    assert match is not None, column
    return match.group(1)


def _template_items(*extra: str) -> list[str]:
    result = runner.invoke(app, ["grade", "week1", "--template", "--students", "2", "--seed", "4", *extra])
    assert result.exit_code == 0, result.output
    columns = next(csv.reader(io.StringIO(result.stdout)))[3:]
    # An item in parts has a column per part ("3a id"), a concept question a mark column besides its
    # answer ("id mark (0-4)"): the items, once each, in order.
    return list(dict.fromkeys(_column_item(column) for column in columns))


def test_a_worksheet_holds_one_item_of_each_topic_by_default(tmp_path: Path) -> None:
    bank = banks.load("week1")
    result = runner.invoke(
        app, ["export", "week1", "--students", "2", "--seed", "4", "-f", "md", "-o", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    assert "one item of each topic; --all for every item" in result.stdout
    items = _template_items()
    topics = [bank.get(item).item.topic for item in items]
    assert sorted(topics) == sorted({entry.item.topic for entry in bank.items})  # each topic once
    assert [e.id for e in bank.items if e.id in items] == items  # in bank order
    text = (tmp_path / "worksheets.md").read_text(encoding="utf-8")
    assert text.count(f"Question {len(topics)}") == 2  # a question per topic, 2 students
    assert f"Question {len(topics) + 1}" not in text
    # The printed template command rebuilds the same columns; another seed draws other items.
    assert "--template --seed 4 --students 2 -o answers.csv" in result.stdout
    assert _template_items() != _template_items("--seed", "5") or len(items) == len(bank.items)


def test_all_and_a_selection_override_the_default_and_lms_files_hold_every_item(tmp_path: Path) -> None:
    bank = banks.load("week1")
    every = [e.id for e in bank.items]
    assert _template_items("--all") == every
    assert len(_template_items("--count", "5")) == 5
    assert _template_items("--topic", "complexity") == [
        e.id for e in bank.items if e.item.topic == "complexity"
    ]
    assert _json_items(tmp_path) == every  # an LMS bank: every item, the quiz there draws
    both = runner.invoke(app, ["export", "week1", "--all", "--count", "3", "-o", str(tmp_path)])
    assert both.exit_code == 2


def test_the_default_key_is_the_marking_grid_and_jobs_are_accepted(tmp_path: Path) -> None:
    args = ["export", "week1", "--students", "3", "--seed", "4", "-o", str(tmp_path), "--jobs", "2"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    grid = PdfReader(tmp_path / "key.pdf")
    assert "marking grid" in grid.pages[0].extract_text()
    assert grid.pages[0].mediabox.width > grid.pages[0].mediabox.height  # landscape
    full = runner.invoke(app, [*args[:-2], "--key", "full", "-o", str(tmp_path / "full")])
    assert full.exit_code == 0, full.output
    assert "Wrong answers to recognise" in "".join(
        p.extract_text() for p in PdfReader(tmp_path / "full" / "key.pdf").pages
    )
    for jobs in ("0", "-1", "257", "two"):
        refused = runner.invoke(app, [*args[:-2], "--jobs", jobs])
        assert refused.exit_code == 2, (jobs, refused.output)
        assert "--jobs" in refused.output
