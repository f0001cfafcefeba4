"""Every exam-style item the course notes catalogue (reference/seed_items.yaml, 105 of them) is in a bank.

A worked problem is in a bank when its catalogue id is in some item's `tags`; a past-paper item (whose
catalogue id is the paper's citation, "2026 T1 Quiz 1, Q13") when an item cites it as its `source`.
No tag looks like a catalogue id without being one (a typo would silently uncover an item).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loaded import BankItem

DATA = Path(__file__).parent / "data" / "catalogue_ids.txt"
CATALOGUE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "seed_items.yaml"
NOTES_ID = re.compile(r"^s\d{3}-")


def catalogue_ids() -> list[str]:
    lines = DATA.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


def items() -> list[BankItem]:
    return [entry for name in ("week1", "week2") for entry in banks.load(name).items]


def covered(ids: list[str], entries: list[BankItem]) -> dict[str, list[str]]:
    """Catalogue id → the bank items that hold it (in their tags, or as their source for a past paper)."""
    found: dict[str, list[str]] = {i: [] for i in ids}
    for entry in entries:
        where = f"{entry.bank}/{entry.id}"
        for tag in entry.item.tags:
            if tag in found:
                found[tag].append(where)
        if entry.item.source in found and not NOTES_ID.match(entry.item.source):
            found[entry.item.source].append(where)
    return found


def test_the_copy_of_the_catalogue_ids_is_complete() -> None:
    ids = catalogue_ids()
    assert len(ids) == 105
    assert len(set(ids)) == 105
    assert sum(bool(NOTES_ID.match(i)) for i in ids) == 87  # 18 past-paper citations, 87 worked problems


@pytest.mark.skipif(not CATALOGUE.is_file(), reason="the course notes' catalogue is not next to the project")
def test_the_copy_matches_the_catalogue() -> None:
    catalogue = yaml.safe_load(CATALOGUE.read_text(encoding="utf-8"))
    assert [item["id"] for item in catalogue["items"]] == catalogue_ids()


def test_every_catalogued_item_is_in_a_bank() -> None:
    found = covered(catalogue_ids(), items())
    missing = [i for i, where in found.items() if not where]
    assert not missing, f"{len(missing)} catalogued items are in no bank: {missing}"


def test_no_tag_looks_like_a_catalogue_id_that_is_not_one() -> None:
    ids = set(catalogue_ids())
    strays = [
        (f"{e.bank}/{e.id}", tag)
        for e in items()
        for tag in e.item.tags
        if NOTES_ID.match(tag) and tag not in ids
    ]
    assert not strays


def test_the_coverage_check_sees_a_missing_id_and_a_past_paper_source() -> None:
    entries = items()
    found = covered(["s999-not-catalogued", "2026 T1 Quiz 1, Q13", "s004-causal-word-12"], entries)
    assert found["s999-not-catalogued"] == []
    assert "week1/additive-score" in found["2026 T1 Quiz 1, Q13"]  # cited by its source
    assert "week2/causal-visible-words" in found["s004-causal-word-12"]  # by its tags


@pytest.mark.parametrize(
    ("catalogue_id", "kinds"),
    [
        ("s000-check-yourself-1", {"explain"}),
        ("s003-interview-1", {"explain"}),
        ("s004-winograd-too-big", {"choice", "explain"}),
        ("s003-bert-attentions-shape", {"parts"}),
        ("s003-common-error-qk-transpose", {"shape"}),
    ],
)
def test_concept_items_are_explained_and_code_items_ask_for_shapes(
    catalogue_id: str, kinds: set[str]
) -> None:
    entries = [e for e in items() if catalogue_id in e.item.tags]
    assert {e.question(0).answer.kind for e in entries} == kinds
