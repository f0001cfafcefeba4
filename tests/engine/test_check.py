"""`quiz check`'s engine: each check passes on sound items and catches the fault it is there for."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from attnquiz.engine.bank.loaded import Bank
from attnquiz.engine.bank.loader import load_bank_file
from attnquiz.engine.bank.starter import starter_bank
from attnquiz.engine.check import checks as check_module
from attnquiz.engine.check.checks import BankReport, ItemReport, check_bank, check_item, check_path
from attnquiz.engine.errors import GeneratorRunError

PLUGIN = '''
"""Generators with one fault each, for the checks to find."""

import numpy as np

from attnquiz.engine.answers.kinds import ChoiceAnswer, Mistake, NumericAnswer, Option

from attnquiz.engine.answers.tolerance import Tolerance
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant

TWO = Tolerance.decimals(2)
calls = [0]


def _number(value: float, prompt: str = "Compute $x$.") -> Variant:
    return Variant(prompt=prompt, answer=NumericAnswer(value, TWO), solution=["$x$"])


@generator
def sound(rng: np.random.Generator, /, *, low: int = 1) -> Variant:
    """A sound item: a drawn number, with a mistake that is recognised."""
    x = int(rng.integers(low, 50))
    return Variant(
        prompt=f"What is ${x} + {x}$?",
        answer=NumericAnswer(2 * x, TWO),
        solution=[f"${x} + {x} = {2 * x}$"],
        mistakes=[Mistake("squared", x * x + 0.5, "That multiplies instead of adding.")],
    )


@generator
def flaky(rng: np.random.Generator, /) -> Variant:
    """Fails whenever it draws a zero."""
    x = int(rng.integers(0, 4))
    if x == 0:
        raise ValueError("drew a zero")
    return _number(1 / x, f"What is $1/{x}$?")


@generator
def restless(rng: np.random.Generator, /) -> Variant:
    """Not deterministic: it counts its calls."""
    calls[0] += 1
    return _number(float(calls[0] % 7), f"Count {calls[0]}.")


@generator
def bad_tex(rng: np.random.Generator, /) -> Variant:
    """Writes TeX outside the supported subset."""
    return _number(float(rng.integers(1, 9)), r"Compute $\\unknowncommand{x}$.")


@generator
def twins(rng: np.random.Generator, /) -> Variant:
    """Shows the same statement twice."""
    options = (Option("Heads attend.", True), Option("heads attend", True), Option("No.", False))
    return Variant(prompt="Which?", answer=ChoiceAnswer(options), solution=["A and B."])


@generator
def stray_mistake(rng: np.random.Generator, /) -> Variant:
    """Lists a mistake that no response can give (a letter that is not an option)."""
    options = (Option("Yes.", True), Option("No.", False))
    return Variant(
        prompt="Which?",
        answer=ChoiceAnswer(options, multiple=False),
        solution=["A."],
        mistakes=[Mistake("ghost", frozenset({"Z"}), "There is no option Z.")],
        inputs={"n": int(rng.integers(9))},
    )


@generator
def constant(rng: np.random.Generator, /) -> Variant:
    """Ignores its random stream."""
    return _number(1.5, "What is $3/2$?")
'''


def write_bank(tmp_path: Path, items: str, name: str = "checked") -> Path:
    (tmp_path / "faults.py").write_text(PLUGIN, encoding="utf-8")
    path = tmp_path / f"{name}.yaml"
    text = f"bank: {name}\ntitle: Checked\nplugins: [faults.py]\nitems:\n" + textwrap.indent(
        textwrap.dedent(items).strip() + "\n", "  "
    )
    path.write_text(text, encoding="utf-8")
    return path


def generator_item(item_id: str, generator: str, extra: str = "") -> str:
    return f"- {{id: {item_id}, source: s, topic: t, generator: {generator}{extra}}}\n"


def one_item(tmp_path: Path, generator: str, variants: int = 30) -> ItemReport:
    bank = load_bank_file(plugins=True, path=write_bank(tmp_path, generator_item("it", generator)))
    return check_item(bank, bank.items[0], variants)


def test_the_starter_bank_passes_every_check(tmp_path: Path) -> None:
    path = tmp_path / "starter.yaml"
    path.write_text(starter_bank(str(path)), encoding="utf-8")
    report = check_path(str(path), variants=25)
    assert report.ok, [(i.item, i.failures) for i in report.items]
    assert [i.item for i in report.items] == ["ffn-params", "additive-score", "why-scale-scores"]
    assert [i.kind for i in report.items] == ["formula", "generator", "generator"]
    assert all(i.variants == 25 for i in report.items)
    assert [i.original for i in report.items] == [True, True, False]
    assert all(i.distinct > 1 for i in report.items)


def test_a_sound_generator_passes_and_reports_as_json(tmp_path: Path) -> None:
    bank = load_bank_file(
        plugins=True, path=write_bank(tmp_path, generator_item("sound", "sound", ", original: {low: 3}"))
    )
    report = check_bank(bank, 20)
    assert report.ok
    data = report.to_json()
    assert data["ok"] is True
    assert data["variants"] == 20
    item = data["items"][0]
    assert item == {
        "item": "sound",
        "kind": "generator",
        "generator": "sound",
        "ok": True,
        "variants": 20,
        "distinct": item["distinct"],
        "original_checked": True,
        "combinations": None,
        "sampled": False,
        "boundaries": None,
        "failures": [],
        "warnings": [],
    }
    assert 1 < item["distinct"] <= 20


def test_a_generator_that_fails_for_some_seeds_is_reported_with_a_seed_and_a_count(tmp_path: Path) -> None:
    report = one_item(tmp_path, "flaky", variants=40)
    assert not report.ok
    [failure] = report.failures
    assert failure.check == "generate"
    assert "ValueError: drew a zero" in failure.message
    assert failure.seed is not None
    assert f"seed={failure.seed}" in failure.message
    assert 1 < failure.count < 40
    assert report.variants == 40 - failure.count
    assert failure.to_json()["variant_code"] == failure.code


def test_a_generator_that_is_not_deterministic_is_caught(tmp_path: Path) -> None:
    report = one_item(tmp_path, "restless", variants=5)
    assert {f.check for f in report.failures} == {"deterministic"}
    assert report.failures[0].count == 5


def test_text_outside_the_supported_tex_is_caught_by_the_renderers(tmp_path: Path) -> None:
    report = one_item(tmp_path, "bad_tex", variants=5)
    checks = {f.check for f in report.failures}
    assert "render:terminal" in checks
    terminal = next(f for f in report.failures if f.check == "render:terminal")
    assert "unknowncommand" in terminal.message
    assert terminal.seed == 0
    assert terminal.count == 5


def test_a_choice_with_the_same_statement_twice_is_caught(tmp_path: Path) -> None:
    report = one_item(tmp_path, "twins", variants=3)
    [failure] = report.failures
    assert failure.check == "options"
    assert failure.message == "options A and B say the same thing"


def test_a_mistake_no_response_can_give_is_caught(tmp_path: Path) -> None:
    report = one_item(tmp_path, "stray_mistake", variants=3)
    [failure] = report.failures
    assert failure.check == "mistake"
    assert failure.message.startswith("mistake 'ghost': typing Z grades invalid")


def test_an_item_with_a_single_variant_gets_a_warning_not_a_failure(tmp_path: Path) -> None:
    report = one_item(tmp_path, "constant", variants=10)
    assert report.ok
    assert report.distinct == 1
    assert "all 10 seeds give the same question" in report.warnings[0]


def test_a_formula_mistake_that_gives_the_answer_for_some_seeds_is_reported(tmp_path: Path) -> None:
    items = """
    - id: heads
      kind: formula
      source: s
      topic: t
      params:
        d: {choice: [256, 512]}
        h: {choice: [1, 2, 4, 8, 16, 32]}
      prompt: "$W^O$ for $d = {{d}}$, $h = {{h}}$?"
      answer: {kind: integer, value: "d^2"}
      mistakes:
        - {tag: heads-full-width, value: "h*d^2", feedback: "Each head is only {{d/h}} wide."}
      solution: ["${{d}}^2$"]
    """
    bank = load_bank_file(plugins=True, path=write_bank(tmp_path, items))
    report = check_item(bank, bank.items[0], 60)
    [failure] = report.failures
    assert failure.check == "mistake"
    assert "mistake 'heads-full-width' gives the answer itself" in failure.message
    assert ", h=1, seed=" in failure.message
    assert bank.items[0].question(failure.seed or 0).variant.inputs["h"] == 1
    assert 1 <= failure.count < 60


def test_a_nudge_that_grades_correct_and_a_response_that_is_not_invalid_are_failures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A grader that accepted these would be too lenient: the checks must say so.
    monkeypatch.setattr(check_module, "_nudged", lambda answer: answer.format())
    monkeypatch.setattr(check_module, "INVALID_RESPONSE", "1")
    report = one_item(tmp_path, "constant", variants=2)
    assert {f.check for f in report.failures} == {"nudge", "invalid"}
    nudge = next(f for f in report.failures if f.check == "nudge")
    assert nudge.message == "1.50, beyond the tolerance of the answer 1.50, grades correct"


def test_load_errors_make_a_report_of_their_own(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(
        "bank: broken\ntitle: Broken\nitems:\n  - {id: a, source: s, topic: t, generator: nope}\n"
    )
    report = check_path(str(path))
    assert not report.ok
    assert report.items == []
    assert [(i.line, i.field) for i in report.errors] == [(4, "items[0].generator")]
    assert report.to_json()["errors"][0]["message"] == "unknown generator 'nope'"
    assert report.failures == 1


def test_the_shipped_banks_pass_their_checks_for_a_few_seeds() -> None:
    from attnquiz.engine.bank import finding as banks

    for found in banks.discover():
        if found.origin != "built-in":
            continue
        report: BankReport = check_bank(banks.load(found.name), variants=3)
        failures = [(i.item, f.check, f.seed, f.message) for i in report.items for f in i.failures]
        assert failures == [], found.name


def test_variants_must_be_at_least_one(tmp_path: Path) -> None:
    bank: Bank = load_bank_file(plugins=True, path=write_bank(tmp_path, generator_item("sound", "sound")))
    with pytest.raises(Exception, match="at least 1"):
        check_bank(bank, 0)


def test_every_combination_of_a_formula_is_tried_and_a_rare_failure_gets_a_seed(tmp_path: Path) -> None:
    items = """
    - id: rare
      kind: formula
      source: s
      topic: t
      params:
        x: {range: [0, 2000]}
      prompt: "x = {{x}}"
      answer: {value: "1/(x - 1234)"}
      solution: ["{{x}}"]
    """
    bank = load_bank_file(plugins=True, path=write_bank(tmp_path, items))
    entry = bank.items[0]
    report = check_item(bank, entry, 5)
    assert report.combinations == 2001
    [failure] = report.failures
    assert failure.check == "combination"
    assert failure.seed is not None
    assert failure.seed >= 5
    assert not failure.original
    assert failure.message.endswith(f"division by zero (x=1234, seed={failure.seed})")
    with pytest.raises(GeneratorRunError, match="x=1234"):
        entry.question(failure.seed)


def test_a_mistake_that_gives_the_answer_only_in_rare_combinations_is_found(tmp_path: Path) -> None:
    items = """
    - id: heads
      kind: formula
      source: s
      topic: t
      params:
        d: {range: [64, 1024], step: 64}
        h: {choice: [1, 2, 4, 8, 16, 32, 64]}
      where: ["d/h >= 16"]
      prompt: "$W^O$ for $d = {{d}}$, $h = {{h}}$?"
      answer: {kind: integer, value: "d^2"}
      mistakes:
        - {tag: heads-full-width, value: "h*d^2", feedback: "Each head is only {{d/h}} wide."}
      solution: ["${{d}}^2$"]
    """
    bank = load_bank_file(plugins=True, path=write_bank(tmp_path, items))
    seeded_only = [s for s in range(2) if bank.items[0].question(s).variant.inputs["h"] == 1]
    assert seeded_only == [], "pick an item whose first seeds miss h = 1"
    report = check_item(bank, bank.items[0], 2)
    assert report.combinations is not None
    assert report.combinations > 50
    [failure] = report.failures
    assert failure.check == "mistake"
    assert "h=1" in failure.message
    assert failure.count == 16  # every d with h = 1


def test_too_many_combinations_are_not_listed(tmp_path: Path) -> None:
    items = """
    - id: wide
      kind: formula
      source: s
      topic: t
      params:
        x: {range: [1, 1000000]}
      prompt: "x = {{x}}"
      answer: {kind: integer, value: "2*x"}
      solution: ["{{2*x}}"]
    """
    bank = load_bank_file(plugins=True, path=write_bank(tmp_path, items))
    report = check_item(bank, bank.items[0], 5)
    assert report.ok
    assert report.combinations is None
    # It says plainly that it sampled: seeds and the extremes, not every combination.
    assert report.sampled
    assert report.boundaries == 2
    [warning] = report.warnings
    assert warning.startswith("more than 20,000 combinations of its parameters: sampled 5 seeds")
    assert report.to_json()["sampled"] is True


RARE = """
- id: rare-zero
  kind: formula
  source: s
  topic: t
  params:
    a: {{range: [{low}, 400]}}
    b: {{range: [1, 300]}}
    c: {{choice: [{choices}]}}
  prompt: "What is {{{{b}}}} over {{{{a}}}}, times {{{{c}}}}?"
  answer: {{value: "{answer}"}}
  solution: ["{{{{c*b/a}}}}"]
"""


@pytest.mark.parametrize(
    ("low", "choices", "answer", "values"),
    [
        (0, "1, 2, 3", "c*b/a", "a=0, b=1, c=1"),  # a range's lower end
        (1, "1, 2, 3", "c*b/(a - 400)", "a=400, b=1, c=1"),  # a range's upper end
        (1, "2, 5, -3", "b/((a - 1) + (c + 3))", "a=1, b=1, c=-3"),  # a choice's least value, listed last
        (1, "2, 9, 5", "b/((a - 1) + (9 - c))", "a=1, b=1, c=9"),  # a choice's largest value, in the middle
    ],
    ids=["range-low", "range-high", "choice-min", "choice-max"],
)
def test_the_extremes_of_too_many_combinations_are_tried(
    tmp_path: Path, low: int, choices: str, answer: str, values: str
) -> None:
    # 120,000 combinations: too many to list, and seeds 0-99 all miss the one that divides by zero.
    items = RARE.format(low=low, choices=choices, answer=answer)
    bank = load_bank_file(plugins=True, path=write_bank(tmp_path, items))
    report = check_item(bank, bank.items[0], 100)
    assert report.combinations is None
    assert not report.ok
    failure = report.failures[0]
    assert failure.check == "combination"
    assert f"division by zero ({values}" in failure.message
    assert report.sampled
    assert report.boundaries == 8


def test_a_statement_group_with_one_member_is_a_warning(tmp_path: Path) -> None:
    items = """
    - id: pick
      source: s
      topic: t
      generator: statements
      params:
        options: 3
        pool:
          - {text: "Softmax weights sum to one.", true: true, group: sums}
          - {text: "Softmax weights need not sum to one.", true: false, group: sums}
          - {text: "Scores are divided by the square root of d_k.", true: true, group: scaling}
          - {text: "Scores are divided by d_k.", true: false, group: scalling}
          - {text: "Attention weights are never negative.", true: true}
    """
    bank = load_bank_file(plugins=True, path=write_bank(tmp_path, items))
    report = check_item(bank, bank.items[0], 10)
    assert report.ok
    assert len(report.warnings) == 2
    assert report.warnings[0].startswith(
        "params.pool[2]: group 'scaling' has only this statement (did you mean 'scalling'?)"
    )
    assert report.warnings[1].startswith(
        "params.pool[3]: group 'scalling' has only this statement (did you mean 'scaling'?)"
    )
