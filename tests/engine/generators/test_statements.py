"""The `statements` generator: pool checks at load time, fair draws, groups, and the paper's own order."""

from __future__ import annotations

import collections
from typing import Any

import numpy as np
import pydantic
import pytest

from attnquiz.engine.bank.loader import load_bank_text
from attnquiz.engine.errors import BankError
from attnquiz.engine.generators.statements import Pool, _feasible
from attnquiz.engine.markup import markdown as md
from attnquiz.engine.registry import GeneratorSpec, load_builtin_generators


def _spec() -> GeneratorSpec:
    spec = load_builtin_generators().get("statements")
    assert spec is not None
    return spec


SPEC = _spec()


def pool(*specs: tuple[str, bool] | dict[str, Any]) -> list[dict[str, Any]]:
    """Statements from (text, truth) pairs or full dicts."""
    return [
        s if isinstance(s, dict) else {"text": s[0], "true": s[1], "why": f"because {s[0]}"} for s in specs
    ]


def run(seed: int, **params: Any) -> Any:
    """Validate params as a bank would, then build the variant of ``seed``."""
    kwargs = SPEC.validate_params(params)
    return SPEC.fn(np.random.default_rng(seed), **kwargs)


THREE_THREE = pool(("t1", True), ("t2", True), ("t3", True), ("f1", False), ("f2", False), ("f3", False))


# --------------------------------------------------------------------------------------------
# Pool checks (they run when the bank loads)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("statements_", "message"),
    [
        (pool(("a", True), ("b", True)), "at least one true and one false"),
        (pool(("a", False), ("b", False)), "at least one true and one false"),
        (
            pool(("Heads add weights.", False), ("x", True), ("heads  add WEIGHTS", False)),
            "repeats statement [0]",
        ),
        (
            [
                {"text": "a", "true": True, "letter": "A"},
                {"text": "b", "true": False, "letter": "A"},
            ],
            "letter A is given to statements [0] and [1]",
        ),
        (
            [
                {"text": "a", "true": True, "letter": "A"},
                {"text": "b", "true": False, "letter": "C"},
            ],
            "without gaps (got A, C)",
        ),
        ([{"text": "a", "true": True, "letter": "a"}, {"text": "b", "true": False}], "should match pattern"),
        (pool(("$\\foo$", True), ("b", False)), "unsupported TeX command \\foo"),
        ([{"text": "a", "true": True, "why": "$x"}, {"text": "b", "true": False}], "unmatched $"),
        ([{"text": "a", "true": True, "colour": "red"}, {"text": "b", "true": False}], "Extra inputs"),
    ],
    ids=[
        "all-true",
        "all-false",
        "duplicate",
        "letter-twice",
        "letter-gap",
        "lowercase-letter",
        "bad-tex-text",
        "bad-tex-why",
        "unknown-key",
    ],
)
def test_bad_pools_are_refused_when_validated(statements_: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        SPEC.validate_params({"pool": statements_})
    assert message in str(caught.value)


BANK = """\
bank: tmp
title: Temporary
items:
  - id: pick
    source: "Test"
    topic: test
    generator: statements
    params:
      pool:
        - text: 'first'
          true: true
        - text: 'second'
          true: false
        - text: 'First.'
          true: false
"""


def test_a_pool_error_is_reported_at_the_pool_line() -> None:
    with pytest.raises(BankError) as caught:
        load_bank_text(BANK, "bank.yaml")
    assert "bank.yaml:9: items[0].params.pool: statement [2] repeats statement [0]" in str(caught.value)


def test_a_statement_error_is_reported_at_its_own_line() -> None:
    text = BANK.replace("'second'", "'$\\frac{1}$'")
    with pytest.raises(BankError) as caught:
        load_bank_text(text, "bank.yaml")
    assert "bank.yaml:12: items[0].params.pool[1].text:" in str(caught.value)


def test_plain_true_keys_load_as_the_truth_field() -> None:
    bank = load_bank_text(BANK.replace("'First.'", "'third'"), "bank.yaml")
    loaded = bank.items[0].kwargs["pool"]
    assert isinstance(loaded, Pool)
    assert [s.true for s in loaded.root] == [True, False, False]


def test_no_pool_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"needs params\.pool"):
        run(0)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"pool": THREE_THREE, "options": 7}, "options must be 2 to 6"),
        ({"pool": THREE_THREE, "options": 1}, "options must be 2 to 6"),
        (
            {"pool": pool(("t1", True), ("t2", True), ("t3", True), ("f1", False)), "multiple": False},
            "cannot fill a single-choice item of 4 options",
        ),
        ({"pool": pool(("t1", True), ("f1", False), ("f2", False)), "options": 3, "multiple": True}, None),
    ],
    ids=["too-many", "too-few", "single-needs-false", "smallest-ok"],
)
def test_option_counts_the_pool_cannot_serve_are_refused(params: dict[str, Any], message: str | None) -> None:
    if message is None:
        assert len(run(0, **params).answer.options) == params["options"]
        return
    with pytest.raises(ValueError, match=message):
        run(0, **params)


# --------------------------------------------------------------------------------------------
# Draws
# --------------------------------------------------------------------------------------------


def test_multiple_select_draws_cover_every_allowed_count_and_keep_both_truths() -> None:
    counts: collections.Counter[int] = collections.Counter()
    seen: set[str] = set()
    true_positions: set[int] = set()
    for seed in range(300):
        answer = run(seed, pool=THREE_THREE, options=4).answer
        texts = [o.text for o in answer.options]
        assert len(texts) == 4 == len(set(texts))
        right = sum(o.correct for o in answer.options)
        assert 1 <= right <= 3
        counts[right] += 1
        seen.update(texts)
        true_positions.update(i for i, o in enumerate(answer.options) if o.correct)
    assert set(counts) == {1, 2, 3}
    assert min(counts.values()) > 50, counts  # about a third each
    assert seen == {s["text"] for s in THREE_THREE}
    assert true_positions == {0, 1, 2, 3}


def test_single_choice_shows_exactly_one_true_statement_and_uses_every_paraphrase() -> None:
    statements_ = pool(("t1", True), ("t2", True), ("f1", False), ("f2", False), ("f3", False), ("f4", False))
    shown_true: set[str] = set()
    positions: set[int] = set()
    for seed in range(200):
        answer = run(seed, pool=statements_, multiple=False, options=4).answer
        right = [i for i, o in enumerate(answer.options) if o.correct]
        assert len(right) == 1
        assert not answer.multiple
        shown_true.add(answer.options[right[0]].text)
        positions.add(right[0])
    assert shown_true == {"t1", "t2"}
    assert positions == {0, 1, 2, 3}


def test_the_same_rng_gives_the_same_variant() -> None:
    assert run(5, pool=THREE_THREE) == run(5, pool=THREE_THREE)
    assert len({tuple(run(s, pool=THREE_THREE).inputs["shown"]) for s in range(30)}) > 10


GROUPED = [
    {"text": "softmax over keys", "true": True, "group": "axis"},
    {"text": "softmax over queries", "true": False, "group": "axis"},
    {"text": "sum of values", "true": True, "group": "sum"},
    {"text": "sum of keys", "true": False, "group": "sum"},
    {"text": "separate matrices", "true": True, "group": "proj"},
    {"text": "one shared matrix", "true": False, "group": "proj"},
    {"text": "weights explain decisions", "true": False},
]


def test_statements_of_one_group_are_never_shown_together() -> None:
    groups = {s["text"]: s.get("group") for s in GROUPED}
    counts: collections.Counter[int] = collections.Counter()
    for seed in range(300):
        answer = run(seed, pool=GROUPED, options=4).answer
        shown = [groups[o.text] for o in answer.options if groups[o.text] is not None]
        assert len(shown) == len(set(shown)), shown
        counts[sum(o.correct for o in answer.options)] += 1
    # Three groups can each give a true statement, so 1, 2 and 3 true options all occur.
    assert set(counts) == {1, 2, 3}


def test_groups_that_make_the_item_impossible_are_refused() -> None:
    # Two groups and one loose statement cannot fill four options.
    statements_ = [*GROUPED[:4], GROUPED[6]]
    with pytest.raises(ValueError, match="3 groups"):
        run(0, pool=statements_, options=4)


@pytest.mark.parametrize(
    ("kinds", "n_true", "n_false", "expected"),
    [
        ([(True, False), (False, True)], 1, 1, True),
        ([(True, False), (False, True)], 2, 0, False),
        ([(True, True), (True, True)], 1, 1, True),
        ([(True, True), (True, True)], 2, 1, False),
        ([(True, False), (True, True), (False, True)], 2, 1, True),
        ([(True, False), (True, True), (False, True)], 1, 2, True),
        ([(True, False), (True, True), (False, True)], 3, 0, False),
        ([], 0, 0, True),
    ],
)
def test_feasibility_counts_groups_that_hold_both_truths_once(
    kinds: list[tuple[bool, bool]], n_true: int, n_false: int, expected: bool
) -> None:
    assert _feasible(kinds, n_true, n_false) is expected


# --------------------------------------------------------------------------------------------
# The paper's own order
# --------------------------------------------------------------------------------------------

LETTERED = [
    {"text": "extra true", "true": True},
    {"text": "C option", "true": True, "letter": "C"},
    {"text": "A option", "true": True, "letter": "A"},
    {"text": "extra false", "true": False},
    {"text": "B option", "true": False, "letter": "B"},
    {"text": "D option", "true": False, "letter": "D", "group": "g"},
    {"text": "A's opposite", "true": False, "group": "g"},
]


def test_paper_order_shows_the_lettered_statements_in_letter_order() -> None:
    variant = run(0, pool=LETTERED, paper_order=True)
    assert [o.text for o in variant.answer.options] == ["A option", "B option", "C option", "D option"]
    assert variant.answer.correct_letters == frozenset("AC")
    assert variant.inputs["shown"] == [2, 4, 1, 5]
    assert run(0, pool=LETTERED, paper_order=True) == run(99, pool=LETTERED, paper_order=True)


@pytest.mark.parametrize(
    ("statements_", "multiple", "message"),
    [
        (THREE_THREE, True, "at least two statements with the paper's letters"),
        (
            [
                {"text": "a", "true": True, "letter": "A"},
                {"text": "b", "true": True, "letter": "B"},
                {"text": "c", "true": False},
            ],
            False,
            "one true lettered statement, not 2",
        ),
        (
            [
                {"text": "a", "true": False, "letter": "A"},
                {"text": "b", "true": False, "letter": "B"},
                {"text": "c", "true": True},
            ],
            True,
            "none of the lettered statements is true",
        ),
    ],
    ids=["no-letters", "single-two-true", "none-true"],
)
def test_paper_order_needs_a_consistent_lettering(
    statements_: list[dict[str, Any]], multiple: bool, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        run(0, pool=statements_, paper_order=True, multiple=multiple)


# --------------------------------------------------------------------------------------------
# What the variant says
# --------------------------------------------------------------------------------------------


def test_solution_judges_every_option_with_its_why_and_names_the_answer() -> None:
    variant = run(2, pool=THREE_THREE, stem="Which are true?", hint="Think of $d_k$.")
    answer = variant.answer
    assert variant.prompt == "Which are true?"
    assert variant.hint == "Think of $d_k$."
    assert len(variant.solution) == len(answer.options) + 1
    for letter, option, step in zip("ABCD", answer.options, variant.solution, strict=False):
        verdict = "true" if option.correct else "false"
        assert step == f"**{letter}** is {verdict}. {option.why}"
    assert variant.solution[-1] == f"So the answer is {answer.format()}."
    for text in (variant.prompt, variant.hint, *variant.solution):
        md.check(text)


def test_inputs_name_the_pool_statements_shown() -> None:
    variant = run(4, pool=THREE_THREE)
    texts = [THREE_THREE[i]["text"] for i in variant.inputs["shown"]]
    assert texts == [o.text for o in variant.answer.options]


def test_a_statement_without_why_gets_a_plain_verdict() -> None:
    bare = [{"text": "t", "true": True}, {"text": "f", "true": False}]
    variant = run(0, pool=bare, options=2)
    expected = [
        f"**{letter}** is {'true' if option.correct else 'false'}."
        for letter, option in zip("AB", variant.answer.options, strict=True)
    ]
    assert list(variant.solution[:2]) == expected
