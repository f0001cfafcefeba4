"""A bank's own generator modules: registered for that bank only, with errors at the plugins line."""

from __future__ import annotations

from pathlib import Path

import pytest

from attnquiz.engine.bank.loader import load_bank_file
from attnquiz.engine.errors import BankError
from attnquiz.engine.registry import load_builtin_generators

GOOD = '''
"""My generators."""
import numpy as np
from attnquiz.engine.answers.kinds import IntegerAnswer
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant


@generator
def my_entries(rng: np.random.Generator, /, *, low: int = 2, high: int = 9) -> Variant:
    """Count the entries of a T x T score matrix."""
    t = int(rng.integers(low, high + 1))
    return Variant(prompt=f"How many entries has a ${t} \\\\times {t}$ matrix?",
                   answer=IntegerAnswer(t * t), solution=[f"${t}^2 = {t * t}$"])
'''

BANK = """bank: mine
title: Mine
plugins: [{plugin}]
items:
  - id: entries
    source: "My worked problem"
    topic: complexity
    generator: {name}
    params: {{high: 5}}
"""


def write(tmp_path: Path, plugin: str, body: str, name: str = "my_entries") -> Path:
    (tmp_path / plugin).write_text(body, encoding="utf-8")
    bank = tmp_path / "mine.yaml"
    bank.write_text(BANK.format(plugin=plugin, name=name), encoding="utf-8")
    return bank


def test_a_plugin_generator_serves_its_bank_only(tmp_path: Path) -> None:
    bank = load_bank_file(write(tmp_path, "gens.py", GOOD), plugins=True)
    question = bank.get("entries").question(3)
    assert question.answer.kind == "integer"
    assert "my_entries" not in load_builtin_generators()


def expect_error(tmp_path: Path, body: str, message: str, name: str = "my_entries") -> None:
    path = write(tmp_path, "gens.py", body, name)
    with pytest.raises(BankError) as caught:
        load_bank_file(path, shown_as="mine.yaml", plugins=True)
    first = str(caught.value).splitlines()[0]
    assert first.startswith("mine.yaml:3: plugins[0]: "), first
    assert message in first, first


def test_a_syntax_error_in_a_plugin_points_at_its_line(tmp_path: Path) -> None:
    expect_error(tmp_path, "x = (\n", "gens.py:1:5: syntax error")


def test_an_exception_in_a_plugin_points_at_its_line(tmp_path: Path) -> None:
    expect_error(tmp_path, "x = 1\nraise RuntimeError('boom')\n", "gens.py:2: RuntimeError: boom")


def test_a_plugin_generator_that_breaks_the_rules_is_refused(tmp_path: Path) -> None:
    expect_error(tmp_path, GOOD.replace("/, *, low", "/, low"), "must be keyword-only")


def test_a_plugin_may_not_replace_a_builtin_generator(tmp_path: Path) -> None:
    expect_error(
        tmp_path, GOOD.replace("my_entries", "additive_score"), "defined twice", name="additive_score"
    )


def test_a_missing_plugin_file_is_reported(tmp_path: Path) -> None:
    bank = tmp_path / "mine.yaml"
    bank.write_text(BANK.format(plugin="nowhere.py", name="my_entries"), encoding="utf-8")
    with pytest.raises(BankError, match=r"plugins\[0\]: cannot read"):
        load_bank_file(bank, plugins=True)
