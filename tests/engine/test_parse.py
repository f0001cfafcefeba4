"""engine.parse: every answer form is read as documented, and hostile text is refused by its limits."""

from __future__ import annotations

import ast
import inspect
import math
from fractions import Fraction

import pytest

from attnquiz.engine.answers import (
    parse,
    read_choices,
    read_formulas,
    read_matrices,
    read_numbers,
    read_shapes,
    symbol_names,
)
from attnquiz.engine.answers.parse import Invalid, Number
from attnquiz.engine.markup import markdown as md


def read(text: str, *, allow_percent: bool = False) -> Number:
    result = read_numbers.number(text, allow_percent=allow_percent)
    assert isinstance(result, Number), result
    return result


def refused(text: str, *, allow_percent: bool = False) -> Invalid:
    result = read_numbers.number(text, allow_percent=allow_percent)
    assert isinstance(result, Invalid), result
    md.check(result.reason)
    return result


# -- numbers -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1.93", 1.93),
        ("-0.5", -0.5),
        (".5", 0.5),
        ("+2", 2),
        ("5.", 5),
        ("1e-3", 0.001),
        ("1.2E+3", 1200),
        ("3/4", 0.75),
        ("589,824", 589824),
        ("589 824", 589824),
        ("589_824", 589824),
        ("1,048,576", 1048576),
        ("1 048 576", 1048576),
        ("1,234.5", 1234.5),
        ("589\u202f824", 589824),  # narrow no-break space, the SI grouping
        ("\u22120.5", -0.5),  # unicode minus
        ("768×768", 589824),
        ("768·768", 589824),
        ("768^2", 589824),
        ("768**2", 589824),
        ("768²", 589824),
        ("10⁻³", 0.001),
        ("pi", math.pi),
        ("π", math.pi),
        ("PI", math.pi),
        ("e", math.e),
        ("2pi", 2 * math.pi),
        ("2π", 2 * math.pi),
        ("2(3+4)", 14),
        ("(1+2)(3+4)", 21),
        ("2sqrt(2)", 2 * math.sqrt(2)),
        ("2√2", 2 * math.sqrt(2)),
        ("√(16)", 4),
        ("sqrt(2)", math.sqrt(2)),
        ("Sqrt(4)", 2),
        ("exp(1)", math.e),
        ("log(e)", 1),
        ("ln(e^2)", 2),
        ("log10(1000)", 3),
        ("log2(8)", 3),
        ("tanh(2)", math.tanh(2)),
        ("2*tanh(2)", 2 * math.tanh(2)),
        ("sin(0)", 0),
        ("cos(0)", 1),
        ("tan(0)", 0),
        ("abs(-3)", 3),
        ("e^2/(e^2+1)", math.e**2 / (math.e**2 + 1)),
        ("-2^2", -4),
        ("2^-2", 0.25),
        ("2^3^2", 512),
        ("(1/2)^-3", 8),
        ("4^(1/2)", 2),
        ("--3", 3),
        ("2 + 3 * 4", 14),
        ("(2 + 3) * 4", 20),
        ("7/2*2", 7),
        ("  1.93\n", 1.93),
        ("1.93\r\n", 1.93),
    ],
)
def test_numbers_and_expressions_are_read(text: str, value: float) -> None:
    assert read(text).value == pytest.approx(value, rel=1e-12, abs=1e-15)


def test_rational_arithmetic_is_exact_so_counts_are_exact() -> None:
    assert read("0.1+0.2").exact == Fraction(3, 10)
    assert read("4*768^2+4*768").exact == 2362368
    assert read("12*(4*768^2+4*768)+2*768").exact == 28349952
    assert read("sqrt(4/9)").exact == Fraction(2, 3)
    assert read("2^100").exact == 2**100
    assert read("pi").exact is None


def test_a_literal_records_the_place_of_its_last_significant_digit() -> None:
    cases = {
        "1.93": (-2, 3),
        "1.90": (-2, 3),
        "2": (0, 1),
        "590000": (4, 2),  # trailing zeros of a whole number: the benefit of the doubt
        "5.9e5": (4, 2),
        "1.2E+3": (2, 2),
        "0.00034": (-5, 2),
        "-0.5": (-1, 1),
        "589,824": (0, 6),
    }
    for text, (place, sigfigs) in cases.items():
        number = read(text)
        assert (number.last_place, number.sigfigs) == (place, sigfigs), text
        assert number.is_literal
    assert not read("2*tanh(2)").is_literal
    assert not read("(1.93)").is_literal


def test_echo_shows_the_normalised_expression_and_its_value() -> None:
    assert read("2 * tanh(2)").echo() == "2*tanh(2) = 1.92806"
    assert read("589,824").echo() == "589824"
    assert read("2pi").echo() == "2*pi = 6.28319"
    assert read("35%", allow_percent=True).echo() == "35% = 0.35"


def test_percent_only_where_allowed_and_only_after_one_number() -> None:
    assert read("35%", allow_percent=True).value == pytest.approx(0.35)
    assert read("-2.5%", allow_percent=True).value == pytest.approx(-0.025)
    assert read("35%", allow_percent=True).percent
    assert "percent" in refused("35%").reason
    assert "percent" in refused("35%+1", allow_percent=True).reason
    assert "percent" in refused("%35", allow_percent=True).reason
    assert "percent" in refused("(35)%", allow_percent=True).reason


def test_a_decimal_comma_is_refused_with_a_request_for_a_point() -> None:
    assert "point (0.35)" in refused("0,35").reason
    assert "point (1.2345)" in refused("1,2345").reason
    assert "threes" in refused("1234,567").reason


def test_implicit_multiplication_only_where_unambiguous() -> None:
    assert "ambiguous" in refused("1/2pi").reason
    assert "ambiguous" in refused("1/2(3)").reason
    assert "operator" in refused("pi(2)").reason
    assert "Unknown name `x`" in refused("2x").reason


def test_several_numbers_where_one_is_expected_are_invalid_and_echoed() -> None:
    result = refused("1.93 1.94")
    assert "single number" in result.reason
    assert result.read_as == "[1.93, 1.94]"
    assert refused("2 pi").read_as == "[2, 3.14159]"
    assert refused("[1.93]").read_as == "[1.93]"
    assert "single number" in refused("1.93, 2").reason
    assert "single number" in refused("1\n2").reason


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("abc", "Unknown name `abc`"),
        ("__import__('os')", "Unknown name `__import__`"),
        ("os.system('ls')", "Unknown name `os`"),
        ("factorial(10**7)", "Unknown name `factorial`"),
        ("lambda: 1", "Unknown name `lambda`"),
        ("sqrt2", "sqrt(2)"),
        ("E", "Did you mean `e`?"),
        ("sqr(2)", "Did you mean `sqrt`?"),
        ("nan", "finite"),
        ("inf", "finite"),
        ("Infinity", "finite"),
        ("∞", "finite"),
        ("1/0", "Division by zero"),
        ("0^-1", "Division by zero"),
        ("sqrt(-1)", "negative"),
        ("log(0)", "logarithm"),
        ("log(-2)", "logarithm"),
        ("(-8)^(1/3)", "not a real number"),
        ("9**9**9", "too large"),
        ("10^10^10", "too large"),
        ("2^10000", "too large"),
        ("exp(1000)", "too large"),
        ("1e400", "too large"),
        ("1e300*10", "too large"),
        ("1e9999999999", "exponent"),
        ("9" * 400, "too large"),
        ("1.2.3", "more than one point"),
        ("1 +", "ends too early"),
        ("*2", "missing before"),
        ("(1+2", "not closed"),
        ("1+2)", "no bracket to close"),
        ("(1]", "closed by"),
        ("sqrt 2", "parentheses"),
        ("2 ² ", "nothing to raise"),
        ("'1.93'", "quotes"),
        ("1.93\x00", "control character"),
        ("1\x1b[31m", "control character"),
        ("$1.93$", "U+0024"),
        ("1 = 1", "`=`"),
        ("α", "U+03B1"),
    ],
)
def test_unreadable_numbers_are_invalid_with_a_reason(text: str, words: str) -> None:
    assert words in refused(text).reason


# -- issue 12: every string is a value or invalid with a reason ------------------------------------


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (".5.", "more than one point"),
        (".9.9", "more than one point"),
        ("1.2.3", "more than one point"),
        ("1.234.567", "group thousands with commas or spaces"),
        ("1e5.5", "exponent after `e` is a whole number"),
        ("[.5., 1]", "`.5.` is not a number"),
        ("pi/1e-400", "too large"),
        ("sqrt(2)/1e-400", "too large"),
        ("e/1e-400", "too large"),
        ("1e-999999", "too close to zero"),
        ("0.000" + "0" * 1100 + "1", "too close to zero"),
        ("0,622", "point (0.622)"),
        ("-0,622", "point (0.622)"),
        ("00,622", "point"),
        ("0,62", "point (0.62)"),
    ],
)
def test_malformed_and_extreme_numbers_are_invalid_with_a_reason(text: str, words: str) -> None:
    assert words in refused(text).reason


@pytest.mark.parametrize("text", [".5.", ".9.9", "[.5., 1]", "pi/1e-400", "1e-999999", "1e5.5"])
def test_malformed_numbers_are_invalid_in_every_reader(text: str) -> None:
    assert isinstance(read_matrices.structure(text), Invalid)
    assert isinstance(read_shapes.shape(text), Invalid)


def test_tiny_and_huge_literals_within_the_float_range_are_read() -> None:
    assert read("5e-324").value == 5e-324
    assert read("1e-400").value == 0.0  # read exactly, then rounded to a float
    assert read("1e-400").exact == Fraction(1, 10**400)
    assert read("1e-300/1e300").value == 0.0
    assert read("1e300").value == 1e300
    assert read("1e-300/1e-300").value == 1
    assert read("pi/1e-200").value == pytest.approx(math.pi * 1e200)


def test_the_work_on_tiny_exponents_is_bounded() -> None:
    # 199 terms of 1e-999999 fit in 2,000 characters; each is refused before 10**999999 is built.
    text = "+".join(["1e-999999"] * 199)
    assert len(text) <= parse.MAX_LENGTH
    assert "too close to zero" in refused(text).reason
    # Exact tiny values stay cheap: 10**1000 has 3,322 bits.
    assert read("+".join(["1e-999"] * 199)).value == 0.0


@pytest.mark.parametrize(
    ("text", "value", "echo"),
    [
        ("٢٥.٥", 25.5, "25.5"),  # Arabic-Indic digits
        ("٢٥٫٥", 25.5, "25.5"),  # with the Arabic decimal separator
        ("۲۵.۵", 25.5, "25.5"),  # extended Arabic-Indic (Persian)
        ("१.७६", 1.76, "1.76"),  # Devanagari
        ("𝟏.𝟕𝟔", 1.76, "1.76"),  # mathematical bold
        ("１.７６", 1.76, "1.76"),  # fullwidth digits, ASCII point
        ("１．７６", 1.76, "1.76"),  # fullwidth digits and point, as a full-width input method types
        ("－１．５", -1.5, "-1.5"),  # fullwidth minus
        ("７６８＾２", 589824, "768^2 = 589824"),
        ("589\u3000824", 589824, "589824"),  # ideographic space groups like a space
    ],
)
def test_digits_of_every_script_are_read_as_ascii_digits(text: str, value: float, echo: str) -> None:
    number = read(text)
    assert number.value == value
    assert number.echo() == echo


def test_only_digits_and_fullwidth_ascii_are_folded() -> None:
    # Superscripts are powers, not digits; other look-alikes are named, not guessed.
    assert read("768²").value == 589824
    assert "U+2460" in refused("①").reason  # circled digit one: a number form, not a decimal digit
    assert "U+2082" in refused("1₂").reason  # subscript two
    assert isinstance(read_matrices.structure("[١, ٢]"), tuple)
    assert read_choices.letters("Ａ，Ｃ", "ABCD", multiple=True) == frozenset("AC")


def test_limits_refuse_hostile_input_before_any_work() -> None:
    assert "too long" in refused("9" * 1_000_000).reason
    assert "too long" in refused("(" * 10_000 + "1" + ")" * 10_000).reason
    assert "nested too deeply" in refused("(" * 60 + "1" + ")" * 60).reason
    assert "nested too deeply" in refused("-" * 60 + "1").reason
    assert "nested too deeply" in refused("2^" * 60 + "2").reason
    assert "nested too deeply" in refused("sqrt(" * 60 + "2" + ")" * 60).reason
    assert "too large" in refused("9" * 1999).reason
    # Exactly at the limits the text is still read.
    assert read("(" * 49 + "1" + ")" * 49).value == 1
    assert read("1+" * 999 + "1").value == 1000


def test_big_exact_values_continue_as_floats_instead_of_growing() -> None:
    number = read("(1/3)^2000")
    assert number.exact is None or number.exact.denominator.bit_length() <= 4096
    assert read("(123456789/987654321)^300").value > 0
    assert read("10^-400").value == 0


def test_the_module_never_evaluates_text_as_code() -> None:
    source = inspect.getsource(parse)
    called = {
        node.func.id
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    assert not called & {"eval", "exec", "compile", "sympify", "parse_expr", "__import__"}
    assert "import sympy" not in source
    assert "from sympy" not in source


# -- vectors and matrices ----------------------------------------------------------------------


def values(result: parse.Structure | Invalid) -> object:
    assert not isinstance(result, Invalid), result
    if isinstance(result, Number):
        return result.value
    return [values(v) if isinstance(v, tuple) else v.value for v in result]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[0.881, 0.119]", [0.881, 0.119]),
        ("(0.881, 0.119)", [0.881, 0.119]),
        ("0.881 0.119", [0.881, 0.119]),
        ("0.881, 0.119", [0.881, 0.119]),
        ("0.881,0.119", [0.881, 0.119]),
        ("{0.881, 0.119}", [0.881, 0.119]),
        ("[0.881, 0.119,]", [0.881, 0.119]),
        ("[3]", [3]),
        ("[1 -2]", [1, -2]),  # MATLAB's rule: a sign glued to a number after a space starts an entry
        ("[1 - 2]", [-1]),
        ("[1 -  2]", [-1]),
        ("[2pi 3]", [2 * math.pi, 3]),
        ("[sqrt (4), 1]", [2, 1]),
        ("[1e-3 -1e-3]", [0.001, -0.001]),
        ("[e^2/(e^2+1), 1/(e^2+1)]", [math.e**2 / (math.e**2 + 1), 1 / (math.e**2 + 1)]),
        ("[[1,2],[3,4]]", [[1, 2], [3, 4]]),
        ("[[1, 2], [3, 4]]", [[1, 2], [3, 4]]),
        ("1 2; 3 4", [[1, 2], [3, 4]]),
        ("[1 2; 3 4]", [[1, 2], [3, 4]]),
        ("1 2\n3 4", [[1, 2], [3, 4]]),
        ("1, 2\n3, 4\n", [[1, 2], [3, 4]]),
        ("[[1, 2],\n [3, 4]]", [[1, 2], [3, 4]]),
        ("[[1,2]\n[3,4]]", [[1, 2], [3, 4]]),
        ("[1,2]; [3,4]", [[1, 2], [3, 4]]),
        ("((1,2),(3,4))", [[1, 2], [3, 4]]),
        ("[1; 2]", [[1], [2]]),
        ("[1 2 3\n4 5 6]", [[1, 2, 3], [4, 5, 6]]),
        ("1.5", 1.5),
        ("(1+2)", 3),
    ],
)
def test_vectors_and_matrices_are_read(text: str, expected: object) -> None:
    found = values(read_matrices.structure(text))
    if isinstance(expected, list) and expected and isinstance(expected[0], list):
        assert isinstance(found, list)
        assert len(found) == len(expected)
        for row, want in zip(found, expected, strict=True):
            assert row == pytest.approx(want)
    else:
        assert found == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[]", "empty"),
        ("", "empty"),
        ("[1,,2]", "missing"),
        ("[,1]", "missing"),
        ("[1,2", "not closed"),
        ("[1,2)]", "closed by"),
        ("[[1,2],[3]]", "different lengths"),
        ("[[[1]]]", "Too many levels"),
        ("[1, 2], 3", "mixes numbers and rows"),
        ("[1 2]x", "Unknown name `x`"),
        ("[1 2](3)", "after a bracket"),
        ("2[1, 2]", "inside an entry"),
        ("[1, abc]", "Unknown name `abc`"),
        ("[35%]", "percent"),
        ("[" * 60 + "]" * 60, "nested too deeply"),
    ],
)
def test_unreadable_lists_are_invalid(text: str, words: str) -> None:
    result = read_matrices.structure(text)
    assert isinstance(result, Invalid), result
    assert words in result.reason
    md.check(result.reason)


def test_ragged_rows_are_echoed() -> None:
    result = read_matrices.structure("[[1, 2], [3]]")
    assert isinstance(result, Invalid)
    assert result.read_as == "[[1, 2], [3]]"


# -- shapes --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "dims"),
    [
        ("[50, 512]", (50, 512)),
        ("(50,512)", (50, 512)),
        ("50x512", (50, 512)),
        ("50X512", (50, 512)),
        ("50 x 512", (50, 512)),
        ("50 × 512", (50, 512)),
        ("50×512", (50, 512)),
        ("50 by 512", (50, 512)),
        ("50, 512", (50, 512)),
        ("[50 512]", (50, 512)),
        ("[T, 512]", ("T", 512)),
        ("T x 512", ("T", 512)),
        ("(B, T, d_model)", ("B", "T", "d_model")),
        ("[B, T, d_{model}]", ("B", "T", "d_model")),
        ("[T, 8*64]", ("T", 512)),
        ("[T_target, T_source]", ("T_target", "T_source")),
        ("512", (512,)),
        ("[4096]", (4096,)),
        ("[1,024, 3]", (1, 24, 3)),  # commas separate dimensions; grouping is for single numbers
    ],
)
def test_shapes_are_read(text: str, dims: tuple[object, ...]) -> None:
    assert read_shapes.shape(text) == dims


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[50, 512.5]", "whole number"),
        ("[0, 3]", "whole number"),
        ("[-1, 3]", "whole number"),
        ("[T, [512]]", "too many brackets"),
        ("[h+d_k, 3]", "not a dimension"),
        ("[]", "empty"),
        ("", "empty"),
        ("x" * 3000, "too long"),
    ],
)
def test_unreadable_shapes_are_invalid(text: str, words: str) -> None:
    result = read_shapes.shape(text)
    assert isinstance(result, Invalid), result
    assert words in result.reason
    md.check(result.reason)


def test_symbol_names_compare_without_subscript_marks_but_with_case() -> None:
    assert symbol_names.canonical_symbol("d_model") == symbol_names.canonical_symbol("dmodel")
    assert symbol_names.canonical_symbol("d_{model}") == symbol_names.canonical_symbol("d_model")
    assert symbol_names.canonical_symbol("T") != symbol_names.canonical_symbol("t")
    assert symbol_names.canonical_symbol("d") != symbol_names.canonical_symbol("d_model")


# -- letters -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "chosen"),
    [
        ("B", "B"),
        ("b", "B"),
        ("(b)", "B"),
        ("B.", "B"),
        ("B)", "B"),
        ("A, C, D", "ACD"),
        ("acd", "ACD"),
        ("C D A", "ACD"),
        ("A and C", "AC"),
        ("A AND C", "AC"),
        ("{A,C}", "AC"),
        ("[a, c]", "AC"),
        ("A;C", "AC"),
        ("A & C", "AC"),
        ("A, A, c", "AC"),
    ],
)
def test_letters_are_read(text: str, chosen: str) -> None:
    assert read_choices.letters(text, "ABCD", multiple=True) == frozenset(chosen)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "No option"),
        ("and", "No option"),
        ("E", "no option E"),
        ("A, F", "no option F"),
        ("xyz", "`xyz` is not a choice"),
        ("the answer is B", "`the` is not a choice"),
        ("1", "Unexpected `1`"),
        ("A\x00", "U+0000"),
        ("A" * 3000, "too long"),
    ],
)
def test_unreadable_letters_are_invalid(text: str, words: str) -> None:
    result = read_choices.letters(text, "ABCD", multiple=True)
    assert isinstance(result, Invalid), result
    assert words in result.reason
    md.check(result.reason)


def test_a_single_choice_takes_exactly_one_letter() -> None:
    assert read_choices.letters("b", "ABCD", multiple=False) == frozenset("B")
    result = read_choices.letters("A, B", "ABCD", multiple=False)
    assert isinstance(result, Invalid)
    assert "one option only" in result.reason
    assert result.read_as == "A, B"


def test_describe_char_names_characters_that_cannot_be_shown() -> None:
    assert parse.describe_char("'") == "`'`"
    assert parse.describe_char("$") == "U+0024 (dollar sign)"
    assert parse.describe_char("`") == "U+0060 (grave accent)"
    assert parse.describe_char("\x00") == "U+0000"


def test_readings_are_remembered_but_never_a_text_too_long_to_read() -> None:
    # The readers remember texts (a server grades the same answers again), but a hostile response
    # of a hundred kilobytes, refused unread, must not stay in memory: 40 of them leave it flat.
    import tracemalloc

    from attnquiz.engine.answers import parse, read_choices, read_matrices, read_numbers, read_shapes

    assert read_numbers.number("0.25") == read_numbers.number("0.25")
    assert read_formulas.formula("2 d^2", ("d",)) == read_formulas.formula("2 d^2", ("d",))
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        for n in range(40):
            text = f"{n}" + "1" * 100_000
            assert isinstance(read_numbers.number(text), parse.Invalid)
            assert isinstance(read_matrices.structure(text), parse.Invalid)
            assert isinstance(read_shapes.shape(text), parse.Invalid)
            assert isinstance(read_choices.letters(text, "ABCD", multiple=True), parse.Invalid)
            assert isinstance(read_formulas.formula(text, ("d",)), parse.Invalid)
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert after - before < 1_000_000
