"""An exam in progress kept on disk and taken up again: the same questions, answers (parts too) and
clock; damaged or hostile state files and edited banks refused with a reason, never a traceback."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.practice.exam_state import (
    ExamInUse,
    ExamKeeper,
    ResumeError,
    SavedExam,
    exams_folder,
    keep,
    resume,
    saved_exams,
)
from attnquiz.engine.practice.planning import plan_practice
from attnquiz.engine.practice.session import Session
from attnquiz.engine.practice.store import Store
from tests.engine.test_session import FakeClock


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "history.sqlite3")
    yield opened
    opened.close()


def started(store: Store, clock: FakeClock) -> Session:
    """A timed week1 exam whose second question is in parts (params-chain)."""
    week1 = banks.load("week1", plugins=True)
    plan = plan_practice(
        week1, seed=5, items=["additive-score", "params-chain", "mha-params"], exam=True, time_limit=600
    )
    session = Session(plan, store=store, clock=clock.monotonic, now=clock.now)
    keep(session, bank_path=week1.path)
    return session


def test_an_exam_comes_back_with_its_questions_answers_parts_and_clock(store: Store) -> None:
    clock = FakeClock()
    session = started(store, clock)
    session.show()
    clock.advance(30)
    first = session.question(session.slots[0])
    session.answer(first.answer.format())
    session.show()
    parts = session.question(session.slots[1]).variant.parts
    session.answer(parts[0].answer.format())  # (a) of the question in parts, the rest still to come
    clock.advance(45)
    session.go(1)
    before = session.remaining()
    assert before is not None

    (saved,), problems = saved_exams(store.path)
    assert problems == []
    assert (saved.answered, saved.questions, saved.remaining) == (1, 3, before)
    clock.advance(1000)  # the time away does not count: the exam's clock stopped when it was left
    with pytest.raises(ExamInUse, match="being taken elsewhere"):
        resume(saved, banks.load("week1", plugins=True), store, clock=clock.monotonic)
    left(session)
    again, draft = resume(saved, banks.load("week1", plugins=True), store, clock=clock.monotonic)
    assert draft == ""
    assert again.id == session.id
    assert again.remaining() == before
    assert again.index == 0
    assert [s.question.code if s.question else None for s in again.slots[:2]] == [
        s.question.code if s.question else None for s in session.slots[:2]
    ]
    assert again.slots[0].grade is not None
    assert again.slots[0].grade.status == "correct"
    assert again.slots[1].part_responses == session.slots[1].part_responses
    assert again.slots[1].grade is None
    second = again.slots[1]
    # Answering on: (b) and the rest of the question in parts follow from the kept (a).
    again.go(2)
    assert again.pending_part(again.slots[1]) == parts[1]
    for part in parts[1:]:
        again.answer(part.answer.format())
    assert second.status == "correct"
    summary = again.finish("submitted")
    assert summary.score == 2
    assert "--seed" not in summary.repeat  # a handed-in exam is repeated with fresh variants
    assert saved_exams(store.path) == ([], [])


def test_an_exam_whose_bank_changed_is_refused(store: Store, tmp_path: Path) -> None:
    clock = FakeClock()
    source = banks.load("week1", plugins=True)
    session = started(store, clock)
    session.show()
    session.answer(session.question(session.slots[0]).answer.format())
    left(session)
    (saved,), _ = saved_exams(store.path)
    data = dict(saved.data)
    data["slots"] = [dict(s) for s in data["slots"]]
    data["slots"][0]["code"] = "ZZZZ-ZZZZ"
    with pytest.raises(ResumeError, match="not the same question any more"):
        resume(_written(saved, data), source, store)
    data["slots"][0]["item"] = "no-such-item"
    with pytest.raises(ResumeError, match="the bank changed"):
        resume(_written(saved, data), source, store)


def left(session: Session) -> None:
    """The process running ``session`` ends (its lock goes; its state stays)."""
    keeper = session.on_change
    assert isinstance(keeper, ExamKeeper)
    keeper.release()


def _written(saved: SavedExam, data: dict[str, Any]) -> SavedExam:
    """``saved`` with its state file changed to ``data`` (`resume` reads the file again)."""
    saved.path.write_text(json.dumps(data), encoding="utf-8")
    return replace(saved, data=data)


def test_a_saved_exam_runs_in_one_place_at_a_time(store: Store) -> None:
    clock = FakeClock()
    session = started(store, clock)
    session.show()
    session.answer(session.question(session.slots[0]).answer.format())
    (saved,), _ = saved_exams(store.path)
    week1 = banks.load("week1", plugins=True)
    with pytest.raises(ExamInUse):
        resume(saved, week1, store)  # its first runner still runs it
    left(session)
    again, _ = resume(saved, week1, store)
    with pytest.raises(ExamInUse):
        resume(saved, week1, store)  # now the second one does
    again.finish("submitted")
    assert saved_exams(store.path) == ([], [])
    assert not saved.path.with_suffix(".lock").exists()  # handed in: nothing is left behind
    with pytest.raises(ResumeError, match="handed in"):
        resume(saved, week1, store)
    assert not saved.path.with_suffix(".lock").exists()


GOOD_SLOT = {
    "item": "additive-score",
    "seed": 1,
    "code": None,
    "answered": False,
    "response": "",
    "graded_parts": None,
    "part_responses": [],
    "earlier_parts": [],
    "seconds": 0.0,
    "hints": 0,
}
GOOD = {
    "format": 1,
    "id": "0123456789abcdef",
    "bank": "week1",
    "bank_ref": "week1",
    "bank_path": "",
    "title": "t",
    "seed": 1,
    "repeat": "quiz run week1 --exam",
    "time_limit": 600,
    "remaining": 300,
    "elapsed": 300,
    "index": 0,
    "saved_at": "2026-03-02T12:00:00+00:00",
    "draft": None,
    "slots": [GOOD_SLOT],
}


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "not JSON"),
        (b"\xff\xfe", "not JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "not JSON|not an exam state"),
        (b"x" * (5 * 1024 * 1024), "larger than"),
        (json.dumps({**GOOD, "format": 2}).encode(), "not an exam state"),
        (json.dumps({**GOOD, "slots": []}).encode(), "questions are missing"),
        (json.dumps({**GOOD, "index": 7}).encode(), "current question"),
        (json.dumps({**GOOD, "remaining": 1e300}).encode(), "remaining is not a time"),
        (json.dumps({**GOOD, "remaining": -1}).encode(), "remaining is not a time"),
        (json.dumps({**GOOD, "elapsed": "soon"}).encode(), "elapsed"),
        (json.dumps({**GOOD, "id": "../../etc"}).encode(), "names are missing"),
        (json.dumps({**GOOD, "saved_at": "yesterday"}).encode(), "its time"),
        (json.dumps({**GOOD, "draft": {"position": "x"}}).encode(), "unsaved line"),
        (json.dumps({**GOOD, "slots": [{**GOOD_SLOT, "seed": -4}]}).encode(), "question is damaged"),
        (json.dumps({**GOOD, "slots": [{**GOOD_SLOT, "part_responses": [1]}]}).encode(), "damaged"),
        (json.dumps({**GOOD, "slots": ["x"]}).encode(), "damaged"),
    ],
)
def test_a_damaged_state_file_is_reported_and_never_resumed(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    history = tmp_path / "history.sqlite3"
    folder = exams_folder(history)
    folder.mkdir(mode=0o700)
    (folder / "0123456789abcdef.json").write_bytes(content)
    (folder / "good.json").write_text(json.dumps(GOOD), encoding="utf-8")
    found, problems = saved_exams(history)
    assert [e.id for e in found] == ["0123456789abcdef"]  # the good one is still listed
    assert len(problems) == 1
    assert re.search(reason, problems[0]), problems


def test_no_folder_means_no_saved_exam(tmp_path: Path) -> None:
    assert saved_exams(tmp_path / "history.sqlite3") == ([], [])
