"""JSON export: every variant with the fields of `quiz show --json`, byte-identical for a seed."""

from __future__ import annotations

import json

from attnquiz.engine.export.lms import json_export

from .samples import sample_plan


def test_every_variant_has_the_show_json_fields() -> None:
    plan = sample_plan(3)
    data = json.loads(json_export.dumps(plan))
    assert data["bank"] == "samples"
    assert data["master_seed"] == 2026
    assert data["variants"] == 3
    expected = [q.to_json() for _, questions in plan.by_item() for q in questions]
    assert data["questions"] == json.loads(json.dumps(expected))
    first = data["questions"][0]
    for field in ("prompt", "answer", "mistakes", "solution", "seed", "variant_code"):
        assert field in first
    assert first["answer"]["tolerance"] == {"decimals": 2}


def test_same_seed_same_bytes() -> None:
    assert json_export.dumps(sample_plan(2)) == json_export.dumps(sample_plan(2))
