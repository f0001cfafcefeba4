"""quiz's values and formulas written as Maxima expressions, for STACK questions.

Everything here writes text that STACK's Maxima reads back as the same value: numbers with every
significant digit (``repr``, which Maxima reads as the same double), vectors as lists, matrices as
``matrix([...], ...)``, shapes as lists of numbers and dimension names, and formulas from the
reader's own tree (never from the text a bank author typed), exact fractions kept exact.

A name is written only if it is a plain Maxima identifier; one that means something to Maxima or
STACK itself (a bank's symbol ``e``, ``pi``, ``numer`` or ``simp``: a constant, or a flag that
would change how the whole question computes) is renamed (`maxima_name`: ``numer_v``).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from attnquiz.engine.answers.values import Formula

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")

# Names Maxima or STACK give a meaning of their own, so that a bank symbol so named cannot be one in
# a STACK question: constants and truth values; words of Maxima's language; the option variables
# and evaluation flags that change how Maxima computes when they hold a value (a symbol ``simp`` or
# ``numer`` set to a number would switch simplification or floating point for the whole question);
# the names of Maxima's session (its files, labels and lists of what is defined); STACK's own
# markers of a blank or unreadable input, and the names of the question's inputs (``ans1``, ...).
CONSTANTS = ("e", "i", "pi", "inf", "minf", "infinity", "und", "ind", "zeroa", "zerob", "true",
             "false", "unknown", "null", "done", "all", "none")  # fmt: skip
KEYWORDS = ("and", "or", "not", "if", "then", "else", "elseif", "do", "for", "while", "thru", "step",
            "unless", "from", "in", "next", "return", "go", "block", "lambda")  # fmt: skip
OPTION_VARIABLES = (
    "simp", "numer", "float", "bfloat", "fpprec", "fpprintprec", "keepfloat", "ratprint", "ratfac",
    "ratvars", "ratsimpexpons", "ratalgdenom", "ratexpand", "ratmx", "ratweights", "ratwtlvl",
    "algebraic", "domain", "radexpand", "logexpand", "logsimp", "lognegint", "exponentialize",
    "demoivre", "expop", "expon", "maxposex", "maxnegex", "listarith", "doallmxops", "domxexpt",
    "domxmxops", "domxnctimes", "doscmxops", "doscmxplus", "scalarmatrixp", "detout", "factorflag",
    "dontfactor", "triginverses", "trigexpand", "trigexpandplus", "trigexpandtimes", "trigsign",
    "halfangles", "sqrtdispflag", "stardisp", "display2d", "linel", "derivabbrev", "inflag",
    "partswitch", "piece", "nouns", "eval", "infeval", "pred", "detout", "sumexpand", "simpsum",
    "simpproduct", "cauchysum", "besselexpand", "gammalim", "factlim", "erfflag", "numer_pbranch",
    "keepfloat", "float2bf", "noundisp", "opsubst", "exptisolate", "exptsubst", "isolate_wrt_times",
    "letrat", "listconstvars", "listdummyvars", "mapprint", "powerdisp", "prederror", "savedef",
    "translate", "transrun", "use_fast_arrays", "debugmode", "errormsg", "ibase", "obase",
)  # fmt: skip
SESSION = ("batch", "batchload", "load", "kill", "reset", "quit", "labels", "values", "functions",
           "macros", "arrays", "myoptions", "props", "features", "facts", "context", "contexts",
           "activecontexts", "dependencies", "gradefs", "aliases", "rules", "infolists", "linenum",
           "error", "file_search", "file_search_maxima", "file_search_lisp", "maxima_tempdir",
           "maxima_userdir", "stack_seed", "QMCHAR", "EMPTYANSWER", "NULLNUM", "NULLUNITS",
           "RANDOM")  # fmt: skip
_INPUT = re.compile(r"^ans\d+$")
RESERVED = frozenset(name.lower() for name in (*CONSTANTS, *KEYWORDS, *OPTION_VARIABLES, *SESSION))
"""Every name `maxima_name` renames (compared without regard to case: STACK's students' syntax
reads ``E`` or ``PI`` much as ``e`` and ``pi``)."""

RENAMED_SUFFIX = "_v"
"""What a reserved name is written with in a STACK question (``numer`` → ``numer_v``)."""


class MaximaError(ValueError):
    """A value that has no faithful Maxima form (not finite, or a name Maxima would misread)."""


def reserved(name: str) -> bool:
    """Whether STACK or Maxima reads ``name`` as its own (a constant, a flag, an input's name, ...)."""
    return name.lower() in RESERVED or bool(_INPUT.match(name)) or name.lower().startswith("qz_")


def maxima_name(name: str) -> str:
    """A dimension or symbol name as a Maxima atom (``d_model``): a name Maxima or STACK reads as
    its own (`reserved`) is written with `RENAMED_SUFFIX` (``numer_v``; one of the export's own
    ``qz_`` variables with a ``v`` before it), which the question says; a name that is no plain
    identifier is a `MaximaError`."""
    if not _NAME.match(name):
        raise MaximaError(f"the name {name!r} has no plain Maxima form (STACK reads it otherwise)")
    if not reserved(name):
        return name
    if name.lower().startswith("qz_"):  # the export's own variables: a suffix would not free it
        return "v" + name
    return name + RENAMED_SUFFIX


def number(value: float | int) -> str:
    """A number as Maxima reads it: integers exactly, floats with every digit (``1.9280551601516338``)."""
    if isinstance(value, bool):
        raise MaximaError("a truth value is not a number")
    if isinstance(value, int):
        return str(value) if value >= 0 else f"({value})"
    if not math.isfinite(value):
        raise MaximaError(f"{value!r} is not a finite number")
    text = repr(float(value))
    if "e" in text or "E" in text:
        mantissa, _, exponent = text.lower().partition("e")
        if "." not in mantissa:
            mantissa += ".0"
        text = f"{mantissa}e{int(exponent)}"
    return f"({text})" if text.startswith("-") else text


def fraction(value: Fraction) -> str:
    """An exact rational: ``3``, ``(3/2)``, ``(-1/4)``."""
    if value.denominator == 1:
        return number(int(value.numerator))
    return f"({value.numerator}/{value.denominator})"


def vector(values: tuple[float, ...] | list[float]) -> str:
    """A vector as a Maxima list: ``[0.881, 0.119]``."""
    return "[" + ",".join(number(v) for v in values) + "]"


def matrix(rows: tuple[tuple[float, ...], ...]) -> str:
    """A matrix: ``matrix([1,2],[3,4])``."""
    return "matrix(" + ",".join(vector(row) for row in rows) + ")"


def row_matrix(values: tuple[float | int | str, ...] | list[float | int | str]) -> str:
    """A one-row matrix (the grid of boxes of a STACK matrix input for a vector or a shape)."""
    return "matrix([" + ",".join(entry(v) for v in values) + "])"


def entry(value: float | int | str) -> str:
    """One entry of a vector, matrix or shape: a number or a dimension name."""
    if isinstance(value, str):
        return maxima_name(value)
    return number(value)


def shape(dims: tuple[int | str, ...]) -> str:
    """A shape as a Maxima list of numbers and names: ``[T,512]``."""
    return "[" + ",".join(entry(d) for d in dims) + "]"


def string(text: str) -> str:
    """A Maxima string literal (for feedback or a display text), with ``\\`` and ``"`` escaped."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def formula(value: Formula) -> str:
    """A formula, from the reader's tree: sums, products, quotients, negation and whole powers."""
    return tree(value.tree)


def tree(node: tuple[object, ...]) -> str:
    """A formula tree of `attnquiz.engine.answers.read_formulas.formula` as Maxima (every operation
    parenthesised)."""
    tag = node[0]
    if tag == "num":
        value = node[1]
        if not isinstance(value, Fraction | int):
            raise MaximaError(f"a formula number {value!r} is not exact")
        return fraction(Fraction(value))
    if tag == "sym":
        return maxima_name(str(node[1]))
    if tag in {"add", "mul"}:
        children = node[1]
        assert isinstance(children, tuple)
        joiner = "+" if tag == "add" else "*"
        return "(" + joiner.join(tree(child) for child in children) + ")"
    if tag == "neg":
        return f"(-{tree(node[1])})"  # type: ignore[arg-type]
    if tag == "div":
        return f"({tree(node[1])}/{tree(node[2])})"  # type: ignore[arg-type]
    if tag == "pow":
        exponent = node[2]
        assert isinstance(exponent, int)
        return f"({tree(node[1])}^{number(exponent)})"  # type: ignore[arg-type]
    raise MaximaError(f"a formula node {tag!r} has no Maxima form")


__all__ = [
    "CONSTANTS",
    "KEYWORDS",
    "OPTION_VARIABLES",
    "RENAMED_SUFFIX",
    "RESERVED",
    "SESSION",
    "MaximaError",
    "entry",
    "formula",
    "fraction",
    "matrix",
    "maxima_name",
    "number",
    "reserved",
    "row_matrix",
    "shape",
    "string",
    "tree",
    "vector",
]
