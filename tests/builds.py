"""Counting how often a test's code builds each variant (`BankItem.question`, per item and seed)."""

from __future__ import annotations

from collections import Counter

import pytest

from attnquiz.engine.bank.loaded import BankItem
from attnquiz.engine.seeding import QuestionStreams
from attnquiz.engine.variant import Question


def counted_builds(monkeypatch: pytest.MonkeyPatch) -> Counter[tuple[str, int]]:
    """From now on in the test, each build of a variant is counted under (item id, seed)."""
    builds: Counter[tuple[str, int]] = Counter()
    build = BankItem.question

    def question(self: BankItem, seed: int, streams: QuestionStreams | None = None) -> Question:
        builds[self.id, seed] += 1
        return build(self, seed, streams)

    monkeypatch.setattr(BankItem, "question", question)
    return builds
