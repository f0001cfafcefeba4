"""Formula answers under attack, and the reader's new readings (issues 25, 26 and 28).

- A hostile corpus (towers of powers, huge digits and magnitudes, deep nesting, long names, names
  that are prefixes of each other): every entry is invalid (or, where it is a harmless formula,
  wrong) with a reason, never an exception, and its cost is bounded before anything is computed.
- Names run together (``4nd``, ``12Nd^2``) read as their product when that is the only reading;
  an ambiguous run, and ``n/6d``, are invalid with both readings named.
- A symbol named ``e`` is never eaten by scientific notation.
- Equivalence is decided without sympy, by exact evaluation at random points: equal forms are
  always equal, a changed coefficient is never equal, and the verdicts agree with sympy's on
  random rational functions.
- ``{{ expr }}`` inside a formula writes plain digits (24576, never 24,576).
- A compiled formula item pickles, so formula banks are cached.
"""

from __future__ import annotations

import pickle
import random
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnquiz.engine.answers import formula_tree, parse, read_formulas, symbolic
from attnquiz.engine.answers.kinds import ExpressionAnswer, Mistake
from attnquiz.engine.answers.values import Formula
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loaded import Bank
from attnquiz.engine.bank.loader import load_bank_text
from attnquiz.engine.formula.expressions import compile_expression
from attnquiz.engine.grading.grade import grade, grade_answer

BLOCK = ExpressionAnswer("12*d^2 + 13*d", ("d",))
BLOCK_MISTAKES = (
    Mistake("layernorm-forgotten", Formula.of("12d^2 + 9d", ["d"]), "LayerNorm forgotten."),
    Mistake("weights-only", Formula.of("12d^2", ["d"]), "Biases and LayerNorm forgotten."),
)
ISSUE_TOWER = "((((((((10)^8)^8)^8)^8)^8)^8)^8)^8*d+12d^2+13d"

# (response, the words the reason must hold). Every one is invalid.
INVALID = [
    (ISSUE_TOWER, "too large to grade"),
    ("((((10)^8)^8)^8)^8*d", "too large to grade"),
    ("(((((2^8)^8)^8)^8)^8)*d", "too large to grade"),
    ("(((((d+1)^8)^8)^8)^8)", "degree"),
    ("(((d+1)/(d+2))^8)^8", "degree"),
    ("9**9**9", "power of a power"),
    ("9^9^9*d", "power of a power"),
    ("(9^9)^9*d", "exponent 9"),
    ("2^100000*d", "exponent 100000"),
    ("d^-9", "exponent -9"),
    ("1e308^2*d", "too large"),
    ("(1e300)^2*d + 12d^2 + 13d", "too large to grade"),
    ("1e300*1e300*d", "too large to grade"),
    ("1e300/1e-300*d", "too large to grade"),
    ("(1e-999)^2*d", "too close to zero"),
    ("1e-1001*d", "too close to zero"),
    ("1e99999999*d", "too large"),
    ("9" * 1999, "too large"),
    ("d*" + "9" * 400, "too large"),
    ("1" * 5000, "too long"),
    ("(" * 60 + "d" + ")" * 60, "nested too deeply"),
    ("-" * 80 + "d", "nested too deeply"),
    ("d" * 3000, "too long"),
    ("d" * 1999, "too long"),
    ("x" * 1999, "no symbol"),
    ("+".join(["d"] * 500), "too long"),
    ("1/0*d", "Division by zero"),
    ("d/(2 - 2)", "Division by zero"),
    ("0^-2*d", "Division by zero"),
    ("__import__('os').system('true')", "no symbol `__import__`"),
    ("d('os')", "without quotes"),
    ("d; import os", "one expression"),
    ("sqrt(d)", "cannot be used"),
    ("exp(d)", "cannot be used"),
    ("d^(1/2)", "whole number"),
    ("d^d", "whole number"),
    ("d\x00", "control character"),
    ("d\u202e + 1", "character"),
    ("12d^2 + 13d 🙂", "character"),
    ("", "empty"),
    ("12d^2 +", "ends too early"),
    ("[d, d]", "one expression"),
    ("2/3d", "two ways"),
]
# Harmless formulas, however odd they look: graded, and wrong (they are not 12d^2 + 13d).
WRONG = [
    "((2^8)^8)^8*d",
    "1e-999*d",
    "(" * 49 + "d" + ")" * 49,
    "d/(d-d)",
    "+".join(f"{'9' * 60}/(d+{k})" for k in range(25)),
    "+".join(["d"] * 190),
    "1/(" * 20 + "d" + ")" * 20,
]


@pytest.mark.parametrize(("response", "words"), INVALID, ids=[f"invalid-{i}" for i in range(len(INVALID))])
def test_a_hostile_formula_is_invalid_with_its_reason(response: str, words: str) -> None:
    result = grade_answer(BLOCK, response, BLOCK_MISTAKES)
    assert result.status == "invalid", (response[:60], result.feedback)
    assert words in result.feedback, (response[:60], result.feedback)
    assert result.score == 0


@pytest.mark.parametrize("response", WRONG, ids=[f"wrong-{i}" for i in range(len(WRONG))])
def test_an_odd_but_harmless_formula_is_graded(response: str) -> None:
    result = grade_answer(BLOCK, response, BLOCK_MISTAKES)
    assert result.status == "wrong", (response[:60], result.feedback)


def test_the_issue_s_tower_is_refused_unbuilt_and_named() -> None:
    result = grade_answer(BLOCK, ISSUE_TOWER, BLOCK_MISTAKES)
    assert result.status == "invalid"
    # The smallest part that is too large is named, in short: (10^8)^8 is 1e64, ((10^8)^8)^8 is 1e512.
    assert "`((10^8)^8)^8` is too large to grade (the limit is 1e300)" in result.feedback


def test_every_accepted_formula_has_a_bounded_cost() -> None:
    # What the reader accepts, however large, stays inside the bounds symbolic relies on.
    heavy = [
        "((2^8)^8)^8*d",
        "+".join(f"{'9' * 60}/(d+{k})" for k in range(25)),
        "(" + "+".join(f"{'9' * 30}*d" for _ in range(20)) + ")^8",
        "1/(" * 20 + "d" + ")" * 20,
    ]
    for text in heavy:
        tree = read_formulas.formula(text, ("d",))
        assert not isinstance(tree, parse.Invalid), (text[:40], tree)
        cost = formula_tree.formula_cost(tree)
        assert max(cost.top_bits, cost.bottom_bits) <= formula_tree.MAX_FORMULA_BITS
        assert cost.work <= formula_tree.MAX_FORMULA_WORK
        assert cost.poly_degree <= formula_tree.MAX_FORMULA_POLY_DEGREE
        # The bound holds for the numbers actually computed, at every point of the comparison.
        for k in range(symbolic.MAX_POINTS):
            value = symbolic._value(tree, k)
            assert value is not None
            assert value[0].bit_length() <= cost.top_bits
            assert value[1].bit_length() <= cost.bottom_bits


# ---------------------------------------------------------------------------------------------
# Names run together, prefixes of each other, and exponents
# ---------------------------------------------------------------------------------------------


def test_names_that_are_prefixes_of_each_other_split_in_linear_time() -> None:
    # d, d_d, d_d_d: 31 characters took 72 s with the old splitter (it tried every split).
    prefixes = ExpressionAnswer("d", ("d", "d_d", "d_d_d"))
    for length in (31, 301, 1999):
        text = ("dd" * length)[:length] + "x"
        result = grade_answer(prefixes, text)
        assert result.status == "invalid"
    # Unbroken runs of d have many readings: the first two found are named.
    result = grade_answer(prefixes, "ddd")
    assert result.status == "invalid"
    assert "can be read as" in result.feedback
    assert grade_answer(prefixes, "d_d_d").read_as == "d_d_d"


@pytest.mark.parametrize(
    ("answer", "symbols", "response", "read_as"),
    [
        ("12*N*d^2", ("N", "d"), "12Nd^2", "12*N*d^2"),
        ("12*N*d^2", ("N", "d"), "12Nd²", "12*N*d^2"),
        ("4*n*d", ("n", "d"), "4nd", "4*n*d"),
        ("4*n*d", ("n", "d"), "4dn", "4*d*n"),
        ("n/(6*d)", ("n", "d"), "4nd/(24d^2)", "4*n*d/(24*d^2)"),
        ("B*h*T^2", ("B", "h", "T"), "BhT^2", "B*h*T^2"),
        ("h*d_k", ("h", "d_k"), "hd_k", "h*d_k"),
        ("N*(12*d^2 + 13*d)", ("N", "d"), "12Nd^2 + 13Nd", "12*N*d^2 + 13*N*d"),
    ],
)
def test_declared_names_run_together_read_as_their_product(
    answer: str, symbols: tuple[str, ...], response: str, read_as: str
) -> None:
    result = grade_answer(ExpressionAnswer(answer, symbols), response)
    assert result.status == "correct", result.feedback
    assert result.read_as == read_as


@pytest.mark.parametrize(
    ("symbols", "response", "readings"),
    [
        (("d", "k", "d_k"), "dk + d_k", ("`d_k`", "`d*k`")),
        (("h", "d", "k", "d_k"), "hdk", ("`h*d_k`", "`h*d*k`")),
        (("n", "d"), "n/6d", ("`n/(6*d)`", "`n/6*d`")),
        (("n", "d"), "n/6 d", ("`n/(6*d)`", "`n/6*d`")),
        (("T",), "T/2(T-1)", ("`T/(2*(T - 1))`", "`T/2*(T - 1)`")),
    ],
)
def test_an_ambiguous_run_is_invalid_and_both_readings_are_named(
    symbols: tuple[str, ...], response: str, readings: tuple[str, str]
) -> None:
    result = grade_answer(ExpressionAnswer(symbols[0], symbols), response)
    assert result.status == "invalid"
    for reading in readings:
        assert reading in result.feedback, result.feedback


def test_an_underscore_says_which_name_is_meant() -> None:
    answer = ExpressionAnswer("d*k + d_k", ("d", "k", "d_k"))
    assert grade_answer(answer, "d*k + d_k").status == "correct"
    assert grade_answer(answer, "kd + d_k").status == "correct"
    assert grade_answer(answer, "d_kd + dk").status == "invalid"  # the second run is ambiguous
    assert grade_answer(answer, "d_k d + d k").read_as == "d_k*d + d*k"


def test_a_product_after_an_explicit_star_following_a_divisor_is_not_ambiguous() -> None:
    # n/6*d d is (n/6)*d*d whichever way a product without * binds.
    answer = ExpressionAnswer("n*d^2/6", ("n", "d"))
    assert grade_answer(answer, "n/6*d d").status == "correct"
    assert grade_answer(answer, "n/6*dd").status == "correct"


@pytest.mark.parametrize("symbol", ["e", "E"])
def test_a_symbol_named_e_is_never_read_as_an_exponent(symbol: str) -> None:
    answer = ExpressionAnswer(f"2*{symbol} + 2*f", (symbol, "f"))
    result = grade_answer(answer, f"2{symbol}+2f")
    assert result.status == "correct", result.feedback
    assert result.read_as == f"2*{symbol} + 2*f"
    assert grade_answer(answer, "200f").status == "wrong"
    assert grade_answer(answer, f"2{symbol} + 2f").status == "correct"
    # Without such a symbol, scientific notation is read as before.
    assert grade_answer(ExpressionAnswer("200*f", ("f",)), "2e+2f").status == "correct"


def test_a_symbol_like_e1_turns_exponents_off_too() -> None:
    answer = ExpressionAnswer("2*e_1", ("e_1",))
    assert grade_answer(answer, "2e1").status == "correct"
    assert grade_answer(ExpressionAnswer("20*x", ("x",)), "2e1 x").status == "correct"


# ---------------------------------------------------------------------------------------------
# Equivalence without sympy
# ---------------------------------------------------------------------------------------------


def tree(text: str, symbols: tuple[str, ...] = ("d",)) -> formula_tree.Tree:
    found = read_formulas.formula(text, symbols)
    assert not isinstance(found, parse.Invalid), (text, found)
    return found


@pytest.mark.parametrize(
    ("a", "b", "symbols"),
    [
        ("12d^2 + 13d", "d(12d + 13)", ("d",)),
        ("(d^2 - 1)/(d - 1)", "d + 1", ("d",)),
        ("T(T-1)/2", "T^2/2 - T/2", ("T",)),
        ("1/a + 1/b", "(a + b)/(a b)", ("a", "b")),
        ("(a+b)^8", "(b+a)^4 (a+b)^4", ("a", "b")),
        ("n/(6d)", "4nd/(24d^2)", ("n", "d")),
        ("0.1d + 0.2d", "0.3d", ("d",)),
        ("d^-2", "1/(d d)", ("d",)),
        ("(x - y)(x + y)", "x^2 - y^2", ("x", "y")),
    ],
)
def test_equal_forms_are_equal(a: str, b: str, symbols: tuple[str, ...]) -> None:
    assert symbolic.equivalent(tree(a, symbols), tree(b, symbols))


@pytest.mark.parametrize(
    ("a", "b", "symbols"),
    [
        ("12d^2 + 13d", "12d^2 + 13d + 1", ("d",)),
        ("12d^2 + 13d", "12d^2 + 13.000001d", ("d",)),
        ("12d^2 + 13d", "12d^2 + 13d + 1e-300", ("d",)),
        ("(d^2 - 1)/(d - 1)", "d - 1", ("d",)),
        ("1/a + 1/b", "1/(a + b)", ("a", "b")),
        ("x^2 - y^2", "x^2 - y^2 + (x - y)(x - 2)(y - 3)(x - 5)", ("x", "y")),
        ("d", "d/(d - d)", ("d",)),
    ],
)
def test_different_forms_are_different(a: str, b: str, symbols: tuple[str, ...]) -> None:
    assert not symbolic.equivalent(tree(a, symbols), tree(b, symbols))


def test_a_changed_coefficient_is_never_correct_for_any_formula_item() -> None:
    rng = random.Random(2026)
    for found in banks.discover():
        for entry in banks.load(found.name).items:
            answer = entry.question(0).answer
            if not isinstance(answer, ExpressionAnswer):
                continue
            for _ in range(20):
                symbol = rng.choice(answer.symbols)
                change = Fraction(rng.choice([-1, 1]) * rng.randint(1, 10**6), rng.randint(1, 10**6))
                power = rng.randint(0, 3)
                changed = f"{answer.value} + ({change})*{symbol}^{power}"
                assert grade_answer(answer, changed).status != "correct", (entry.id, changed)
                assert grade_answer(answer, f"({answer.value})*(1 + {change}/10^12)").status != "correct"


LETTERS = ("a", "b", "c")


@st.composite
def rational_functions(draw: st.DrawFn, depth: int = 3) -> str:
    """Random rational functions in a, b, c, written as the reader reads them."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.booleans()):
            return draw(st.sampled_from(LETTERS))
        return str(draw(st.integers(-5, 5)))
    op = draw(st.sampled_from(["+", "-", "*", "/", "^"]))
    left = draw(rational_functions(depth - 1))
    if op == "^":
        return f"({left})^{draw(st.integers(0, 2))}"
    right = draw(rational_functions(depth - 1))
    return f"({left}){op}({right})"


@settings(max_examples=300, deadline=None, derandomize=True)
@given(rational_functions(), rational_functions())
def test_verdicts_agree_with_sympy(a_text: str, b_text: str) -> None:
    import sympy

    a = read_formulas.formula(a_text, LETTERS)
    b = read_formulas.formula(b_text, LETTERS)
    if isinstance(a, parse.Invalid) or isinstance(b, parse.Invalid):
        return
    defined_a = any(symbolic._value(a, k) is not None for k in range(symbolic.MAX_POINTS))
    defined_b = any(symbolic._value(b, k) is not None for k in range(symbolic.MAX_POINTS))
    if not (defined_a and defined_b):
        return  # a formula that divides by zero everywhere (1/(a - a)) is equal to nothing
    expected = sympy.cancel(symbolic.to_sympy(a) - symbolic.to_sympy(b)) == 0
    assert symbolic.equivalent(a, b) == expected, (a_text, b_text)
    # The same function as sympy writes it, expanded and over one denominator: equal.
    rewritten = read_formulas.formula(str(sympy.cancel(symbolic.to_sympy(a))), LETTERS)
    if not isinstance(rewritten, parse.Invalid):
        assert symbolic.equivalent(a, rewritten), (a_text, str(sympy.cancel(symbolic.to_sympy(a))))
    # A form and itself plus a small change: never equal.
    changed = read_formulas.formula(f"({b_text}) + a*b*c/7", LETTERS)
    if not isinstance(changed, parse.Invalid):
        assert not symbolic.equivalent(b, changed)


def test_sympy_is_not_imported_by_grading_a_formula_nor_by_importtime() -> None:
    code = (
        "import sys\n"
        "from attnquiz.engine.answers.kinds import ExpressionAnswer\n"
        "from attnquiz.engine.grading.grade import grade_answer\n"
        "a = ExpressionAnswer('n/(6*d)', ('n', 'd'))\n"
        "assert grade_answer(a, '4nd/(24d^2)').status == 'correct'\n"
        "assert grade_answer(a, 'n/(4d)').status == 'wrong'\n"
        "print('sympy' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert result.stdout.split() == ["False"], result.stdout
    assert "sympy" not in result.stderr


# ---------------------------------------------------------------------------------------------
# Templates and the bank cache
# ---------------------------------------------------------------------------------------------

COUNT = """
  - id: weights
    kind: formula
    source: "a made-up exercise"
    topic: parameter-count
    params:
      L: {choice: [24, 32]}
      d: {choice: [768, 1024]}
      k: {choice: [3]}
    prompt: "A stack of {{L}} layers of width {{d}}: how many weights, in $T$?"
    answer: {kind: expression, value: "2*{{L*d}}*T + {{1/k}}*T^2 - {{-k}}", symbols: [T]}
    mistakes:
      - tag: one-layer
        value: "2*{{d}}*T + {{1/k}}*T^2 - {{-k}}"
        feedback: "All {{L}} layers: {{L*d}} in all."
    solution: ["${{L}} \\\\cdot {{d}} = {{L*d}}$"]
    original: {L: 24, d: 1024}
"""


def test_a_placeholder_inside_a_formula_writes_plain_digits() -> None:
    # L·d = 24,576 used to give 2*24,576*T, which cannot be read, and the bank broke.
    bank = load_bank_text(f"bank: counts\ntitle: Counts\nitems:\n{COUNT}", "counts.yaml")
    question = bank.get("weights").original()
    answer = question.answer
    assert isinstance(answer, ExpressionAnswer)
    assert answer.value == "2*24576*T + 1/3*T^2 - (-3)"
    assert grade_answer(answer, "49152T + T^2/3 + 3").status == "correct"
    assert list(question.variant.solution) == ["$24 \\cdot 1024 = 24{,}576$"]  # prose keeps its grouping
    assert "24,576 in all" in question.variant.mistakes[0].feedback


def test_a_compiled_formula_bank_pickles_and_grades_the_same_after() -> None:
    bank = load_bank_text(f"bank: counts\ntitle: Counts\nitems:\n{COUNT}", "counts.yaml")
    again = pickle.loads(pickle.dumps(bank, protocol=pickle.HIGHEST_PROTOCOL))
    for seed in range(5):
        before, after = bank.get("weights").question(seed), again.get("weights").question(seed)
        assert before.answer == after.answer
        assert before.variant.prompt == after.variant.prompt
    expression = compile_expression(
        "max(1, d) < 3 and not d == 2 or sqrt(+d) > 0 and [d, -d] == [d, -d]", ["d"]
    )
    copy = pickle.loads(pickle.dumps(expression))
    for d in (1, 2, 4):
        assert copy.evaluate({"d": d}) == expression.evaluate({"d": d})


def test_the_notes_spellings_are_graded_on_the_bank_s_own_items() -> None:
    # Issue 26: the solutions write 12d^2 + 13d per block, 4nd and n = 6d.
    week1 = banks.load("week1")
    stack = week1.get("stack-params-formula").question(3)
    assert isinstance(stack.answer, ExpressionAnswer)
    assert stack.answer.symbols == ("N", "d")
    right = grade(stack, "12Nd^2 + 13Nd")
    assert (right.status, right.read_as) == ("correct", "12*N*d^2 + 13*N*d")
    # The key is shown as code, so that its * are not read as emphasis.
    assert right.feedback == "Correct: that is `N*(12*d^2 + 13*d)`."
    weights = grade(stack, "12Nd^2")
    assert weights.mistake is not None
    assert weights.mistake.tag == "weights-only"
    ratio = week1.get("attention-dense-ratio-formula").question(3)
    assert grade(ratio, "4nd/(24d^2)").status == "correct"
    assert grade(ratio, "4nd/24d^2").status == "invalid"
    ambiguous = grade(ratio, "n/6d")
    assert ambiguous.status == "invalid"
    assert "`n/(6*d)`" in ambiguous.feedback
    assert "`n/6*d`" in ambiguous.feedback


def test_a_formula_bank_is_cached_on_disk_and_read_back_without_validation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It never was: a compiled expression was a closure, which cannot be pickled, and the failure
    # was swallowed. Now the entry is written, and the next process reads it instead of the YAML.
    import attnquiz.engine.bank.loader

    monkeypatch.setenv("QUIZ_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("QUIZ_NO_CACHE", raising=False)
    monkeypatch.setattr(banks, "_cache", {})
    validated: list[str] = []
    real = attnquiz.engine.bank.loader.load_bank_text

    def counting(text: str, file: str, **where: Any) -> Bank:
        validated.append(file)
        return real(text, file, **where)

    monkeypatch.setattr(attnquiz.engine.bank.loader, "load_bank_text", counting)
    path = tmp_path / "counts.yaml"
    path.write_text(f"bank: counts\ntitle: Counts\nitems:\n{COUNT}", encoding="utf-8")
    first = banks.load(str(path))
    assert len(list((tmp_path / "home" / "cache" / "banks").glob("*.pickle"))) == 1
    banks._cache.clear()
    again = banks.load(str(path))
    assert len(validated) == 1  # the second load came from the cache
    for seed in range(5):
        assert again.get("weights").question(seed).to_json() == first.get("weights").question(seed).to_json()


def test_symbols_that_are_one_name_written_two_ways_are_refused() -> None:
    with pytest.raises(ValueError, match="one name written two ways"):
        ExpressionAnswer("d_k", ("d_k", "dk"))


TRICKY = ("d", "d_d", "d_d_d", "e", "E", "k", "d_k", "N")


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.text(alphabet="dDeEkN_ 0123456789.+-*/^()²", max_size=60))
def test_any_text_in_tricky_symbols_grades_without_raising(text: str) -> None:
    result = grade_answer(ExpressionAnswer("d*d_k + e", TRICKY), text)
    assert result.status in {"correct", "wrong", "invalid"}
    assert result.feedback
