"""Reading a formula in the symbols an item declares (``12d^2 + 13d``, ``T*(T - 1)/2``) into a tree.

Names run together (``4nd``) are split where only one reading exists, and products without ``*``
are read where nothing else is meant; the tree, its limits and its cost are
`attnquiz.engine.answers.formula_tree`'s.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from fractions import Fraction

from attnquiz.engine.answers.arithmetic import read_literal
from attnquiz.engine.answers.formula_tree import (
    MAX_FORMULA_DEGREE,
    MAX_FORMULA_EXPONENT,
    MAX_FORMULA_NODES,
    MAX_SYMBOL_LENGTH,
    Tree,
    degree,
    formula_cost,
    shown,
)
from attnquiz.engine.answers.parse import (
    CONSTANTS,
    FUNCTIONS,
    MAX_DEPTH,
    MAX_LENGTH,
    Invalid,
    ReadError,
    Token,
    bad_char_reason,
    canonical_name,
    clip,
    prepare,
    remembered,
    tokenize,
)
from attnquiz.engine.answers.symbol_names import canonical_symbol, similar_symbols, spell_dimensions


def example_formula(symbols: Sequence[str]) -> str:
    """A formula in an item's own symbols, for help text: 3*d_model^2 + d_ff."""
    first = symbols[0] if symbols else "d"
    last = symbols[-1] if symbols else "d"
    return f"3*{first}^2 + {last}"


def formula_instructions(symbols: Sequence[str]) -> str:
    """What to type for a formula in these symbols, with examples in them (not in a ``d`` the
    question does not have)."""
    names = ", ".join(symbols)
    first = symbols[0] if symbols else "d"
    top = symbols[-1] if len(symbols) > 1 else first
    products = f"3{first}, 3 {first} or 3*{first}" if len(first) == 1 else f"3 {first} or 3*{first}"
    below = f"{top}/(2*{first})" if top != first else f"1/(2*{first})"
    return (
        f"Give a formula in {names}: products as {products}, powers as {first}^2 or {first}**2, "
        f"fractions as {top}/2, with brackets around a product below the line ({below}); any equivalent "
        "form is right."
    )


def _pieces(word: str, declared: dict[str, str]) -> list[tuple[str, ...]]:
    """Up to two ways of reading ``word`` as declared names written one after another (``Nd`` as N, d),
    in linear time: each position is tried once, against names of at most `MAX_SYMBOL_LENGTH`.

    A piece is a declared name in any spelling `canonical_symbol` folds, except that it neither
    starts nor ends with ``_`` nor holds ``__`` (so ``d_k`` is never d, k).
    """
    n = len(word)
    longest = max((len(key) for key in declared), default=0)
    # ways[i]: up to two readings of word[i:], each as (name, end of the name, reading at the end)
    ways: list[list[tuple[str, int, int]]] = [[] for _ in range(n + 1)]
    complete = [0] * (n + 1)
    complete[n] = 1
    for i in range(n - 1, -1, -1):
        if word[i] == "_":
            continue
        key = ""
        j = i
        while j < n and len(key) < longest and len(ways[i]) < 2:
            ch = word[j]
            if ch == "_":
                if j + 1 >= n or word[j + 1] == "_":
                    break
                j += 1
                continue
            key += ch
            j += 1
            name = declared.get(key)
            if name is None or not complete[j]:
                continue
            for k in range(complete[j]):
                if len(ways[i]) < 2:
                    ways[i].append((name, j, k))
        complete[i] = len(ways[i])
    readings: list[tuple[str, ...]] = []
    for first in range(complete[0]):
        names: list[str] = []
        i, k = 0, first
        while i < n:
            name, i, k = ways[i][k]
            names.append(name)
        readings.append(tuple(names))
    return readings


def _readings(word: str, declared: dict[str, str]) -> list[tuple[str, ...]]:
    """The distinct readings of a name as written: the declared name it spells, and the declared
    names it is written as one after another (at most two are found: two already make it ambiguous)."""
    found: list[tuple[str, ...]] = []
    whole = declared.get(canonical_symbol(word))
    if whole is not None:
        found.append((whole,))
    if len(word) <= MAX_LENGTH:
        for reading in _pieces(word, declared):
            if reading not in found:
                found.append(reading)
    return found[:2]


def _exponent_like(declared: dict[str, str]) -> bool:
    """Whether a symbol could be read as scientific notation (e, E, e1, E_2): then numbers in the
    formula have no exponent, so that 2e+2f is 2*e + 2*f and never 200*f."""
    return any(re.fullmatch(r"[eE][0-9]*", key) is not None for key in declared)


def _split_runs(tokens: list[Token], declared: dict[str, str]) -> list[Token]:
    """Names written one after another (``Nd``, ``hd_k``) as separate names, where that is the only
    reading; a name with two readings is refused, naming both."""
    out: list[Token] = []
    for tok in tokens:
        if tok.kind != "name" or canonical_name(tok.text) in FUNCTIONS:
            out.append(tok)
            continue
        readings = _readings(tok.text, declared)
        if len(readings) > 1:
            shown = " or as ".join("`" + "*".join(reading) + "`" for reading in readings)
            raise ReadError(
                f"`{clip(tok.text)}` at character {tok.pos + 1} can be read as {shown}: write the one you "
                "mean, with `*` between symbols."
            )
        if len(readings) == 1 and len(readings[0]) > 1:
            if len(readings[0]) > MAX_FORMULA_NODES:
                raise ReadError(
                    f"The formula is too long (more than {MAX_FORMULA_NODES} terms and operations)."
                )
            for k, name in enumerate(readings[0]):
                out.append(Token("name", name, tok.pos, tok.space if k == 0 else False))
            continue
        out.append(tok)
    return out


class _FormulaReader:
    """Recursive descent over a formula's tokens, building a tree (the grammar of `Expr`).

    Products may be written without ``*`` where nothing else is meant: ``12d``, ``12 d``,
    ``4 d_model^2``, ``d(12d + 13)``, ``h d_k``, ``(d + 1)(d + 2)``, ``d² h``, and declared names run
    together (``4nd``, ``12Nd^2``: `_split_runs` has split them). A product without ``*`` right after a
    divisor (``n/6d``) is refused, naming its two readings.
    """

    def __init__(self, tokens: list[Token], symbols: dict[str, str]) -> None:
        self.tokens = tokens
        self.symbols = symbols  # canonical spelling → the declared name
        self.seen: dict[str, str] = {}  # a name as written → its declared name ("" for none), read once
        self.i = 0
        self.depth = 0
        self.nodes = 0

    def peek(self) -> Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def node(self, tree: Tree) -> Tree:
        self.nodes += 1
        if self.nodes > MAX_FORMULA_NODES:
            raise ReadError(f"The formula is too long (more than {MAX_FORMULA_NODES} terms and operations).")
        return tree

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ReadError(f"The formula is nested too deeply (more than {MAX_DEPTH} levels).")

    def read(self) -> Tree:
        tree = self.sum()
        tok = self.peek()
        if tok is not None:
            raise ReadError(self._leftover(tok))
        return tree

    def _op(self, ops: str) -> Token | None:
        tok = self.peek()
        if tok is not None and tok.kind == "op" and tok.text in ops:
            self.i += 1
            return tok
        return None

    def sum(self) -> Tree:
        terms = [self.product()]
        while (tok := self._op("+-")) is not None:
            term = self.product()
            terms.append(term if tok.text == "+" else self.node(("neg", term)))
        return terms[0] if len(terms) == 1 else self.node(("add", tuple(terms)))

    def product(self) -> Tree:
        tree = self.signed()
        factors = [tree]
        after_divisor = False  # the last factor read is the divisor of a `/`
        while (tok := self.peek()) is not None:
            if tok.kind == "op" and tok.text in "*/":
                self.i += 1
                right = self.signed()
                if tok.text == "/":
                    left = factors[0] if len(factors) == 1 else self.node(("mul", tuple(factors)))
                    factors = [self.node(("div", left, right))]
                    after_divisor = True
                else:
                    factors.append(right)
                    after_divisor = False
            elif self._implicit(tok):
                if after_divisor:
                    raise ReadError(self._ambiguous_quotient(factors[0]))
                factors.append(self.signed())
            else:
                break
        return factors[0] if len(factors) == 1 else self.node(("mul", tuple(factors)))

    def _ambiguous_quotient(self, quotient: Tree) -> str:
        """The reason for ``n/6d``: its two readings, n/(6*d) and (n/6)*d."""
        left, divisor = quotient[1], quotient[2]
        assert isinstance(left, tuple)
        assert isinstance(divisor, tuple)
        more: list[Tree] = []
        while (tok := self.peek()) is not None and self._implicit(tok):
            more.append(self.signed())
        together: Tree = ("div", left, ("mul", (divisor, *more)))
        apart: Tree = ("mul", (quotient, *more))
        return (
            f"A product written without `*` right after a `/` can be read two ways: as "
            f"`{shown(together)}` or as `{shown(apart)}`. Write the "
            "one you mean, with brackets."
        )

    def _implicit(self, tok: Token) -> bool:
        """Whether ``tok`` starts a factor multiplied without ``*``."""
        if self.i == 0:
            return False
        prev = self.tokens[self.i - 1]
        starts = tok.kind == "name" or (tok.kind == "open" and tok.text == "(")
        if not starts or (tok.kind == "name" and not self._symbol(tok.text)):
            return False
        # 12d, 12 d, d(…), h d_k, (…)(…), (…)d, d²h; never a number after a name (d 2 is unclear).
        return prev.kind in {"num", "sup", "name"} or (prev.kind == "close" and prev.text == ")")

    def _symbol(self, text: str) -> str | None:
        found = self.seen.get(text)
        if found is None:
            found = self.seen[text] = self.symbols.get(canonical_symbol(text), "")
        return found or None

    def signed(self) -> Tree:
        tok = self._op("+-")
        if tok is None:
            return self.power()
        self.enter()
        inner = self.signed()
        self.depth -= 1
        return inner if tok.text == "+" else self.node(("neg", inner))

    def power(self) -> Tree:
        base = self.atom()
        tok = self.peek()
        if tok is not None and tok.kind == "sup":
            self.i += 1
            return self.node(("pow", base, self._exponent(tok.text, tok)))
        if self._op("^") is None:
            return base
        sign = self._op("+-")
        tok = self.peek()
        if tok is None or tok.kind != "num":
            raise ReadError(
                "An exponent in a formula is a whole number written as digits, e.g. d^2: a power of a "
                "symbol or of an expression cannot be graded."
            )
        self.i += 1
        text = tok.text if sign is None else sign.text + tok.text
        after = self.peek()
        if after is not None and after.kind == "op" and after.text == "^":
            raise ReadError("A power of a power is not read in a formula: write the exponent as one number.")
        return self.node(("pow", base, self._exponent(text, tok)))

    def _exponent(self, text: str, tok: Token) -> int:
        if not re.fullmatch(r"[+-]?\d{1,6}", text):
            raise ReadError(
                f"The exponent at character {tok.pos + 1} is not a whole number: a formula uses whole "
                "powers such as d^2."
            )
        value = int(text)
        if abs(value) > MAX_FORMULA_EXPONENT:
            raise ReadError(
                f"The exponent {value} is too large to grade (a formula here uses powers up to "
                f"{MAX_FORMULA_EXPONENT})."
            )
        return value

    def atom(self) -> Tree:
        tok = self.peek()
        if tok is None:
            raise ReadError("The formula ends too early: a term is missing at the end.")
        if tok.kind == "num":
            self.i += 1
            lit = read_literal(tok.text)
            return self.node(("num", Fraction(lit.value)))
        if tok.kind == "name":
            self.i += 1
            name = self._symbol(tok.text)
            if name is None:
                raise ReadError(self._unknown(tok.text))
            return self.node(("sym", name))
        if tok.kind == "open" and tok.text == "(":
            self.i += 1
            self.enter()
            inner = self.sum()
            closing = self.peek()
            if closing is None:
                raise ReadError(f"A `(` is not closed (opened at character {tok.pos + 1}).")
            if closing.kind != "close" or closing.text != ")":
                raise ReadError(self._leftover(closing))
            self.i += 1
            self.depth -= 1
            return inner
        raise ReadError(self._leftover(tok))

    def _unknown(self, text: str) -> str:
        names = ", ".join(dict.fromkeys(self.symbols.values()))
        if canonical_name(text) in FUNCTIONS or text in CONSTANTS:
            return (
                f"`{clip(text)}` cannot be used in this formula: it uses only {names}, numbers, `+ - * / ^`."
            )
        meant = similar_symbols(text, tuple(dict.fromkeys(self.symbols.values())))
        guess = f" Did you mean {' or '.join(meant)}?" if meant else ""
        return f"This question has no symbol `{clip(text)}` (case matters).{guess} Its symbols are {names}."

    def _leftover(self, tok: Token) -> str:
        where = f"at character {tok.pos + 1}"
        if tok.kind == "bad":
            return bad_char_reason(tok)
        if tok.kind == "name" and self._symbol(tok.text) is None:
            return self._unknown(tok.text)
        if tok.kind == "close":
            return f"Unexpected `{tok.text}` {where}: there is no bracket to close."
        if tok.kind in {"open", "sep", "nl"}:
            example = example_formula(tuple(dict.fromkeys(self.symbols.values())))
            return f"Unexpected `{tok.text}` {where}: a formula is one expression, e.g. {example}."
        if tok.kind == "op":
            return f"Unexpected `{tok.text}` {where}: a term is missing before it."
        return f"Missing operator before `{clip(tok.text)}` {where}: write `*` for a product."


_TERM = re.compile(r"[A-Za-z0-9_.]+")


@remembered
def formula(text: str, symbols: tuple[str, ...]) -> Tree | Invalid:
    """Read a formula in the declared ``symbols`` (any spelling `canonical_symbol` folds: ``d_model``,
    ``dmodel``, ``d_{model}``, ``dₘₒdₑₗ``) into a tree, or say why it cannot be graded.

    Every tree returned has passed `formula_cost`: comparing it takes bounded work.
    """
    if len(text) > MAX_LENGTH:
        return Invalid(f"The response is too long ({len(text):,} characters; the limit is {MAX_LENGTH:,}).")
    long = next((name for name in symbols if len(name) > MAX_SYMBOL_LENGTH), None)
    if long is not None:
        return Invalid(
            f"The symbol `{clip(long)}` is too long: a symbol's name has at most {MAX_SYMBOL_LENGTH} "
            "characters."
        )
    declared = {canonical_symbol(name): name for name in symbols}
    if len(declared) < len(symbols):
        spelled: dict[str, list[str]] = {}
        for name in symbols:
            spelled.setdefault(canonical_symbol(name), []).append(name)
        same = next(names for names in spelled.values() if len(names) > 1)
        return Invalid(
            f"The symbols {' and '.join(f'`{clip(name)}`' for name in same[:2])} are one name written two "
            "ways (d_k is dk): declare each symbol once."
        )
    if len(_TERM.findall(text)) > MAX_FORMULA_NODES:  # counted before any token is made
        return Invalid(f"The formula is too long (more than {MAX_FORMULA_NODES} terms and operations).")
    try:
        clean = prepare(spell_dimensions(text))
        tokens = tokenize(clean, grouping=False, exponents=not _exponent_like(declared))
        tree = _FormulaReader(_split_runs(tokens, declared), declared).read()
        if degree(tree) > MAX_FORMULA_DEGREE:
            return Invalid(
                f"The formula's degree is above {MAX_FORMULA_DEGREE}: no answer here is a polynomial of "
                "such a high degree."
            )
        formula_cost(tree)
    except ReadError as err:
        return Invalid(err.reason, err.read_as)
    return tree
