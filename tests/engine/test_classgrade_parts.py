"""quiz grade and questions in parts: a column per part headed `3a ITEM`, carry-forward applied."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attnquiz.engine.answers.kinds import PartsAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loaded import Bank
from attnquiz.engine.check.parts import perturbed
from attnquiz.engine.classwork.answers_file import AnswersFileError
from attnquiz.engine.classwork.grading import grade_text
from attnquiz.engine.classwork.marks_writer import marks_csv
from attnquiz.engine.plan.class_plan import plan_class
from attnquiz.engine.plan.columns import template_csv
from attnquiz.main import app

runner = CliRunner()
ITEMS = ["additive-score", "params-chain", "w-o-params"]


@pytest.fixture(scope="module")
def bank() -> Bank:
    return banks.load("week1")


def _template(bank: Bank, students: int = 3, seed: int = 11) -> list[list[str]]:
    plan = plan_class(bank, students=students, master_seed=seed, items=ITEMS)
    return list(csv.reader(io.StringIO(template_csv(plan))))


def _csv(rows: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def test_the_template_heads_a_part_column_with_the_question_number_and_label(bank: Bank) -> None:
    header = _template(bank)[0]
    labels = bank.get("params-chain").question(0).variant.answer.labels  # type: ignore[union-attr]
    order = [e.id for e in bank.items if e.id in ITEMS]  # the sheets' order: the bank's
    number = order.index("params-chain") + 1
    expected: list[str] = []
    for item in order:
        expected += [f"{number}{label} {item}" for label in labels] if item == "params-chain" else [item]
    assert header == ["student", "name", "code", *expected]
    assert len(labels) >= 3


def _filled(bank: Bank, heading: str = "new") -> tuple[str, list[PartsAnswer]]:
    """Every answer right except (a) of the chain, which is wrong but readable: the later parts are
    written as they follow from that wrong (a)."""
    plan = plan_class(bank, students=3, master_seed=11, items=ITEMS)
    rows = list(csv.reader(io.StringIO(template_csv(plan))))
    chains: list[PartsAnswer] = []
    for row, sheet in zip(rows[1:], plan.sheets, strict=True):
        by_item = {q.item_id: q for q in sheet.questions}
        answer = by_item["params-chain"].answer
        assert isinstance(answer, PartsAnswer)
        chains.append(answer)
        from attnquiz.engine.grading.single import answer_value, read_value

        wrong = answer.parts[0].answer_for(perturbed(answer.parts[0].answer)).format()
        values = {"a": read_value(answer.parts[0].answer, wrong)}
        cells = [wrong]
        for part in answer.parts[1:]:
            assert part.recompute is not None
            used = [values.get(u, answer_value(answer.part(u).answer)) for u in part.uses]
            target = part.answer_for(part.recompute(*used)) if part.uses else part.answer
            values[part.label] = answer_value(target)
            cells.append(target.format())
        row[3:] = [
            cell
            for q in sheet.questions
            for cell in (cells if q.item_id == "params-chain" else [q.answer.format()])
        ]
    if heading == "old":
        rows[0] = [f"{c.split(' ')[1]} ({c.split(' ')[0][-1]})" if " " in c else c for c in rows[0]]
    return _csv(rows), chains


@pytest.mark.parametrize("heading", ["new", "old"])
def test_grading_reads_the_part_columns_and_carries_errors_forward(bank: Bank, heading: str) -> None:
    text, chains = _filled(bank, heading)
    marks = grade_text(bank, text, master_seed=11)
    assert not marks.problems, [r.problem for r in marks.problems]
    for row, chain in zip(marks.rows, chains, strict=True):
        parts = [c for c in row.cells if "params-chain" in c.item]
        assert len(parts) == len(chain.parts)
        assert parts[0].status == "wrong"
        # Every later part follows from the wrong (a), by carry-forward: right (full marks by default).
        assert [c.status for c in parts[1:]] == ["correct"] * (len(parts) - 1)
        assert row.total == len(row.cells) - 1
    # The marks keep the file's own headings.
    header = marks_csv(marks).splitlines()[0]
    assert ("a params-chain" if heading == "new" else "params-chain (a)") in header


def test_a_part_heading_without_its_item_is_refused_with_the_fix(bank: Bank) -> None:
    text = "student,code,2a\n1,0000-0001,64\n"
    refused = r"answers.csv:1: column '2a' names a part but not its question"
    with pytest.raises(AnswersFileError, match=refused):
        grade_text(bank, text, master_seed=11)


def test_the_template_message_counts_the_part_columns(tmp_path: Path) -> None:
    target = tmp_path / "answers.csv"
    args = ["grade", "week1", "--template", "--students", "2", "--seed", "11", "-o", str(target)]
    result = runner.invoke(app, [*args, "--items", ",".join(ITEMS)])
    assert result.exit_code == 0, result.output
    header = next(csv.reader(io.StringIO(target.read_text(encoding="utf-8"))))
    columns = len(header) - 3
    assert columns > 3
    assert f"2 rows, {columns} answer columns for 3 questions, 1 of them in parts" in result.output
    plain = runner.invoke(app, [*args, "--items", "additive-score"])
    assert "2 rows, 1 answer column for 1 question." in plain.output


def test_a_question_in_parts_is_built_once_per_row_not_once_per_part_column(
    bank: Bank, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each part has its own column; the row's variant of the chain is built once for all of them
    (a class of 3000 took twice as long when every part column rebuilt it)."""
    from attnquiz.engine.bank.loaded import BankItem
    from attnquiz.engine.seeding import QuestionStreams

    text, _ = _filled(bank)
    built: list[tuple[str, int]] = []
    real = BankItem.question

    def counted(self: BankItem, seed: int, streams: QuestionStreams | None = None) -> object:
        built.append((self.id, seed))
        return real(self, seed, streams)

    monkeypatch.setattr(BankItem, "question", counted)
    marks = grade_text(bank, text, master_seed=11)
    assert not marks.problems
    assert len(built) == len(set(built)) == 3 * len(ITEMS)  # 3 students, each item once
