"""Week-2 variants are fair: no misconception gives the right answer by luck, and no draw is degenerate."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from attnquiz.engine.answers.kinds import ChoiceAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.generators import positions
from attnquiz.engine.variant import Variant

BANK = banks.load("week2")
SEEDS = range(150)
NUMERIC = [entry.id for entry in BANK.items if entry.spec.name != "statements"]


@pytest.fixture
def dropped(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tags of the mistakes that variants drop (equal to the answer, or to an earlier mistake)."""
    tags: list[str] = []
    original = Variant.__post_init__

    def recording(self: Variant) -> None:
        listed = list(self.mistakes)
        original(self)
        if self.prompt:  # generators' own trial variants have no prompt
            kept = {id(m) for m in self.mistakes}
            tags.extend(m.tag for m in listed if id(m) not in kept)

    monkeypatch.setattr(Variant, "__post_init__", recording)
    return tags


@pytest.mark.parametrize("item", NUMERIC)
def test_every_listed_mistake_survives_in_drawn_variants(item: str, dropped: list[str]) -> None:
    entry = BANK.get(item)
    for seed in SEEDS:
        dropped.clear()
        entry.question(seed)
        assert not dropped, f"seed {seed}: {dropped} gave the answer or another mistake's value"


def inputs(item: str) -> Iterator[dict[str, Any]]:
    entry = BANK.get(item)
    for seed in SEEDS:
        yield dict(entry.question(seed).variant.inputs)


def test_pair_zero_lists_no_exponent_slips() -> None:
    # Pair 0 has exponent 0 whatever factor the formula has, so those slips give the right values.
    variant = positions.pe_pair(np.random.default_rng(0), d_model=4, position=2, pair=0)
    assert {m.tag for m in variant.mistakes} == {"sin-cos-swapped", "degrees-not-radians"}


def test_layernorm_constants_and_residual_inputs_are_never_zero() -> None:
    for p in inputs("layernorm-constant"):
        assert p["value"] != 0, p
    for p in inputs("residual-add"):
        assert np.asarray(p["x"]).any(), p


def test_cross_attention_lengths_differ_from_the_widths() -> None:
    for item in ("cross-attention-scores", "cross-attention-output"):
        for p in inputs(item):
            d_k = p["d_model"] // p["heads"]
            assert len({p["t_target"], p["t_source"], d_k, p["d_model"]}) == 4, p


def test_score_entry_counts_have_distinct_batch_heads_and_length() -> None:
    for item in ("masked-score-entries", "cross-score-entries"):
        for p in inputs(item):
            assert p["batch"] >= 2
            used = [p["batch"], p["heads"], p["t_target"], *([p["t_source"]] if "t_source" in p else [])]
            assert len(set(used)) == len(used), p


def test_score_flops_use_more_than_two_heads() -> None:
    for p in inputs("score-flops-per-token"):
        assert p["heads"] > 2, p


def test_cross_attention_choices_never_count_themselves() -> None:
    for seed in SEEDS:
        answer = BANK.get("family-cross-attention").question(seed).answer
        assert isinstance(answer, ChoiceAnswer)
        texts = [o.text for o in answer.options]
        assert not any("three of them" in t or t == "None of them" for t in texts), texts
