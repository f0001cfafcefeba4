"""Week-1 variants are fair: no misconception gives the right answer by luck, and no draw is degenerate."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from attnquiz.engine.answers.rounding import ROUNDED_EARLY
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.generators import rnn
from attnquiz.engine.variant import Variant

BANK = banks.load("week1")
SEEDS = range(150)
NUMERIC = [entry.id for entry in BANK.items if entry.spec.name != "statements"]
# With h = 4 heads, four full-width heads give W_O the same count as all four projections: the one
# number is named once, with feedback that names both ways of reaching it.
SHARED_VALUES = {("w-o-params", "heads-full-width")}


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
        # An early-rounding slip exists only where the rounding changes the answer (by design).
        lost = [tag for tag in dropped if (item, tag) not in SHARED_VALUES and tag != ROUNDED_EARLY]
        assert not lost, f"seed {seed}: {lost} gave the answer or another mistake's value"


def inputs(item: str) -> Iterator[dict[str, Any]]:
    entry = BANK.get(item)
    for seed in SEEDS:
        yield dict(entry.question(seed).variant.inputs)


def test_additive_scores_have_no_zero_term() -> None:
    for p in inputs("additive-score"):
        h, s, v = (np.asarray(p[k]) for k in ("h", "s_proj", "v"))
        assert h.any(), p
        assert (h + s).all(), p
        assert v.all(), p


def test_drawn_vectors_are_never_zero() -> None:
    for p in inputs("values-not-keys"):
        assert np.asarray(p["k"]).any(axis=1).all(), p
    for p in inputs("additive-context"):
        assert np.asarray(p["h"]).any(axis=1).all(), p


def test_sdpa_variants_give_every_token_its_own_output() -> None:
    for seed in SEEDS:
        rows = BANK.get("sdpa-two-tokens").question(seed).answer.format()
        first, second = rows.split("], [")
        assert first.strip("[") != second.strip("]"), f"seed {seed}: {rows}"


def test_head_shapes_use_several_heads_and_distinct_axes() -> None:
    for p in inputs("attention-shapes"):
        if p["symbolic"]:
            continue
        b, t, d_model = p["shape_x"]
        assert b >= 2
        assert d_model not in (b, t)
        assert t != b


def test_score_tensors_have_distinct_batch_heads_and_length() -> None:
    for item in ("score-entries", "score-entries-longer"):
        for p in inputs(item):
            assert p["batch"] >= 2
            assert len({p["batch"], p["heads"], p["tokens"]}) == 3, p


def test_linear_decay_counts_the_boundary_step_exactly() -> None:
    # Losing 0.3 per step leaves exactly 0.1 after 3 steps, which is not below 0.1: the 4th step is.
    variant = rnn.rnn_decay_steps(np.random.default_rng(0), per_step=0.7, threshold=0.1)
    assert {m.tag: m.value for m in variant.mistakes}["linear-decay"] == 4


def test_choice_sources_follow_the_banks_citation_style() -> None:
    for entry in BANK.items:
        source = entry.item.source
        assert not source.startswith("Week 1 notes"), source
        if "mistakes" in source:
            assert source.endswith(", mistakes list"), source
