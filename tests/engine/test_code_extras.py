"""An item that needs an optional extra (the PyTorch code question) where the extra is missing: listed,
not offered by practice, said plainly when named or graded, and `quiz check` passes with a warning.

PyTorch is made to look missing (`attnquiz.engine.extras.installed` answers False), so these tests
run, and mean the same, whether or not it is installed here.
"""

from __future__ import annotations

import pytest

from attnquiz.engine import extras
from attnquiz.engine.answers.kinds import CodeAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.check.checks import check_item
from attnquiz.engine.code.grading import checked, grade_code
from attnquiz.engine.code.torch_attention import SOLUTION
from attnquiz.engine.practice.planning import SelectionError, plan_practice

ITEM = "self-attention-torch"
WHY = "needs PyTorch, not installed here (pip install 'attnquiz[torch]')"


@pytest.fixture
def no_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extras, "installed", lambda package: package != "torch")


def test_the_reason_names_the_extra_to_install(no_torch: None) -> None:
    assert extras.unavailable(["torch"]) == WHY
    assert extras.unavailable([]) == ""
    assert banks.load("code").get(ITEM).unavailable == WHY
    assert banks.load("code").get("attention").unavailable == ""


def test_practice_does_not_offer_it_and_says_why_when_it_is_named(no_torch: None) -> None:
    bank = banks.load("code")
    for seed in range(5):
        plan = plan_practice(bank, seed=seed, count=30)
        assert ITEM not in {planned.entry.id for planned in plan.questions}
    with pytest.raises(SelectionError, match=r"pip install 'attnquiz\[torch\]'"):
        plan_practice(bank, seed=1, items=[ITEM])


def test_grading_it_runs_nothing_and_costs_nothing(no_torch: None) -> None:
    answer = banks.load("code").get(ITEM).question(3).answer
    assert isinstance(answer, CodeAnswer)
    graded = grade_code(answer, SOLUTION)
    assert graded.status == "invalid"
    assert WHY in graded.feedback
    assert checked(answer) == []  # the NumPy reference and mutants need no PyTorch


def test_quiz_check_passes_with_a_warning(no_torch: None) -> None:
    bank = banks.load("code")
    report = check_item(bank, bank.get(ITEM), variants=3)
    assert report.ok, report.failures
    assert report.kind == "code"
    assert any(WHY in warning for warning in report.warnings), report.warnings


def test_with_its_extra_installed_it_is_offered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extras, "installed", lambda package: True)
    bank = banks.load("code")
    assert bank.get(ITEM).unavailable == ""
    plan = plan_practice(bank, seed=1, items=[ITEM])
    assert [planned.entry.id for planned in plan.questions] == [ITEM]
