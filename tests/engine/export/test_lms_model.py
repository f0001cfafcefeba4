"""The LMS model (`lms_model.build`): what every writer reads. Its carry-forward recomputes a later
part's target from earlier values by the reference numerics; its blanks' weights sum to one."""

from __future__ import annotations

from functools import cache

import pytest

from attnquiz.engine.answers.kinds import PartsAnswer
from attnquiz.engine.answers.values import values_close
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.export.lms import model as lms_model
from attnquiz.engine.plan.class_plan import ClassPlan, plan_class


@cache
def _plan(bank: str) -> ClassPlan:
    return plan_class(banks.load(bank), students=5, master_seed=11)


@pytest.mark.parametrize("bank", ["week1", "week2"])
def test_carry_forward_recomputes_each_later_part_from_the_earlier_values(bank: str) -> None:
    chains = 0
    for _, questions in _plan(bank).by_item():
        for question in questions:
            answer = question.answer
            if not isinstance(answer, PartsAnswer):
                continue
            model = lms_model.build(question)
            assert model.form == "parts"
            assert sum(b.weight for b in model.blanks) == pytest.approx(1.0)
            values = {p.label: p.answer.json_value() for p in answer.parts}
            for group, part in zip(model.groups, answer.parts, strict=True):
                assert group.uses == part.uses
                if not group.uses:
                    with pytest.raises(ValueError, match="uses no earlier part"):
                        group.target_for([])
                    continue
                chains += 1
                # From the exact earlier answers, the recomputed target is the part's own answer.
                target = group.target_for([values[u] for u in group.uses])
                assert values_close(part.answer.tolerance, target.json_value(), part.answer.json_value())
    assert chains


def test_a_formula_or_a_product_shape_is_marked_by_hand_and_nothing_else_is() -> None:
    seen: set[str] = set()
    for _, questions in _plan("week1").by_item():
        model = lms_model.build(questions[0])
        if model.by_hand:
            seen.add(questions[0].item_id)
            assert set(model.by_hand) <= set(lms_model.BY_HAND)
    assert "block-params-formula" in seen
    assert "concat-shape-symbols" in seen
    assert "additive-score" not in seen
    assert "sdpa-chain" not in seen
