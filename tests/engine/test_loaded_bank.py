"""A loaded bank and its items stay read-only, equal by value and unhashable, as the frozen
dataclasses they replaced were: a cached bank is shared by every question built from it."""

from __future__ import annotations

import inspect
import pickle

import pytest

from attnquiz.engine.bank import finding
from attnquiz.engine.bank.loaded import Bank, BankItem
from attnquiz.engine.registry import is_builtin


def test_a_bank_and_its_items_cannot_be_changed() -> None:
    bank = finding.load("week1")
    item = bank.items[0]
    with pytest.raises(AttributeError):
        bank.title = "changed"
    with pytest.raises(AttributeError):
        item.line = 0
    with pytest.raises(AttributeError):
        del item.bank
    assert bank.title != "changed"
    assert item.line > 0


def test_equal_by_value_after_a_round_trip_and_never_a_key() -> None:
    bank = finding.load("week1")
    again = pickle.loads(pickle.dumps(bank, protocol=pickle.HIGHEST_PROTOCOL))
    assert isinstance(again, Bank)
    assert again is not bank
    # Items with a built-in generator compare equal once read back; a concept item's spec is made
    # anew for it (a function of its own), so it is equal only to itself, as with dataclasses.
    built_in = [i for i, item in enumerate(bank.items) if is_builtin(item.spec)]
    assert len(built_in) > 40
    assert all(again.items[i] == bank.items[i] for i in built_in)
    assert again.items[3] == bank.items[3]
    assert again.items[3] != bank.items[4]
    assert again.get(bank.items[3].id).question(7).variant == bank.items[3].question(7).variant
    for value in (bank, bank.items[0]):
        with pytest.raises(TypeError):
            hash(value)


def test_found_at_changes_the_origin_only() -> None:
    bank = finding.load("week1")
    moved = bank.found_at("QUIZ_PATH")
    assert moved.origin == "QUIZ_PATH"
    assert bank.origin == "built-in"
    assert moved != bank
    assert moved.found_at(bank.origin) == bank
    assert all(isinstance(item, BankItem) for item in moved.items)
    assert moved.items == bank.items


@pytest.mark.parametrize("kind", [Bank, BankItem])
def test_equality_compares_every_field_the_constructor_takes(kind: type[Bank] | type[BankItem]) -> None:
    # A field added to __init__ but not to _FIELDS would be left out of equality and of found_at.
    taken = tuple(inspect.signature(kind.__init__).parameters)[1:]
    assert taken == kind._FIELDS
