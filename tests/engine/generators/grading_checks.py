"""The grading check every generator test module runs on its items: key right, mistakes named, nudge wrong."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from attnquiz.engine.bank.loaded import BankItem
from attnquiz.engine.grading import grade as grading
from attnquiz.engine.variant import Question


def assert_grades_as_itself(
    entry: BankItem, seeds: Iterable[int], nudge: Callable[[Question], str] | None = None
) -> None:
    """Over ``seeds`` and the original: the key grades correct, a nudged answer (when given) grades
    wrong, and each listed mistake, written as the answer is written, is named by its own tag."""
    questions = [entry.question(seed) for seed in seeds]
    if entry.has_original:
        questions.append(entry.original())
    for question in questions:
        where = question.code
        right = grading.grade(question, question.answer.format())
        assert right.status == "correct", (where, right.feedback)
        if nudge is not None:
            wrong = grading.grade(question, nudge(question))
            assert wrong.status == "wrong", (where, nudge(question))
        for mistake in question.variant.mistakes:
            got = grading.grade(question, mistake.format(question.answer))
            assert got.status == "wrong", (where, mistake.tag)
            assert got.mistake is not None, (where, mistake.tag)
            assert got.mistake.tag == mistake.tag, (where, mistake.tag, got.mistake.tag)
