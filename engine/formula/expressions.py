"""Expressions of formula items (answers, mistakes, ``where:`` conditions, placeholders), never eval'd.

A formula item's expressions are read by the tokenizer of `attnquiz.engine.answers.parse`, the reader of
student
responses, and computed with its bounded arithmetic (exact fractions while only rationals are
involved, the same limits on length, nesting, exponents and magnitudes), so ``9^9^9`` fails at
once here as it does in a response. What instructors may write on top of a response is kept in
this module and those it builds on (`attnquiz.engine.formula.values`, `.arithmetic`, `.nodes`), so
that students gain none of it:

- names of parameters (``d``, ``d_model``), looked up in the variables of the variant;
- comparisons ``< <= > >= == !=`` (chained as in ``1 <= h <= 16``) and ``and``, ``or``, ``not``,
  ``true``, ``false``, for ``where:`` conditions;
- lists ``[a, b]`` (vectors; ``[[a, b], [c, d]]`` for matrices), with ``+ - * /`` entry by
  entry or with a number, and functions of whole numbers and lists (see ``FUNCTIONS`` in
  `attnquiz.engine.formula.arithmetic`).

Grammar (``^`` is right-associative and binds tighter than a sign, so ``-2^2`` is -4)::

    expr       := conjunct ("or" conjunct)*
    conjunct   := negation ("and" negation)*
    negation   := "not" negation | comparison
    comparison := sum (("<" | "<=" | ">" | ">=" | "==" | "!=") sum)*
    sum        := product (("+" | "-") product)*
    product    := signed (("*" | "/") signed)*
    signed     := ("+" | "-") signed | power
    power      := postfix ("^" signed)?
    postfix    := atom [superscript]
    atom       := number | name | function "(" expr ("," expr)* ")" | "(" expr ")"
                | "[" [expr ("," expr)*] "]" | "√" postfix

An expression is compiled once into closures (no Python ``eval``, ``exec`` or ``compile``), so a
bank's names are checked when it loads and each variant only runs the closures.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from attnquiz.engine.answers import parse
from attnquiz.engine.answers.arithmetic import read_literal

# The reader of student responses; its tokenizer, literals and bounded arithmetic are reused
# as they are, which is what keeps the two languages equally safe.
from attnquiz.engine.answers.parse import ReadError, Token, match_brackets, tokenize
from attnquiz.engine.formula.arithmetic import FUNCTIONS
from attnquiz.engine.formula.nodes import (
    AllOf,
    AnyOf,
    Binary,
    Call,
    Chain,
    Const,
    ListOf,
    Negated,
    Not,
    Plus,
    Run,
    Variable,
)
from attnquiz.engine.formula.values import MAX_LIST, Env, ExpressionError, Value, guarded, sentence

CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e}
KEYWORDS = frozenset({"and", "or", "not", "true", "false"})
_COMPARISONS = ("<=", ">=", "==", "!=", "<", ">")
RESERVED = frozenset(FUNCTIONS) | frozenset(CONSTANTS) | KEYWORDS
"""Names a parameter cannot take."""


# ---------------------------------------------------------------------------------------------
# Compiling
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Expression:
    """A compiled expression: its text, the variables it reads, and how to compute it."""

    text: str
    names: frozenset[str]
    _run: Run = field(repr=False, compare=False)

    def evaluate(self, variables: Env) -> Value:
        """The value for these variables; an ExpressionError says why it cannot be computed."""
        missing = sorted(self.names - variables.keys())
        if missing:
            raise ExpressionError(f"unknown name{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
        return self._run(variables)


def _const(value: Value) -> Run:
    return Const(value)


def _describe(tok: Token) -> str:
    return parse.describe_char(tok.text) if tok.kind == "bad" else f"`{tok.text}`"


def _tokens(text: str) -> list[Token]:
    """The reader's tokens, with comparisons joined (``<=``) and new lines taken as spaces."""
    raw = tokenize(text, grouping=False)
    tokens: list[Token] = []
    i = 0
    pending_space = False
    while i < len(raw):
        tok = raw[i]
        if tok.kind == "nl":
            pending_space = True
            i += 1
            continue
        space = tok.space or pending_space
        pending_space = False
        if tok.kind == "bad" and tok.text in "<>=!":
            nxt = raw[i + 1] if i + 1 < len(raw) else None
            pair = tok.text + "=" if nxt is not None and nxt.text == "=" and nxt.pos == tok.pos + 1 else ""
            if pair:
                tokens.append(Token("op", pair, tok.pos, space))
                i += 2
                continue
            if tok.text in "<>":
                tokens.append(Token("op", tok.text, tok.pos, space))
                i += 1
                continue
            hint = "write `==` to compare" if tok.text == "=" else "write `not` or `!=`"
            raise ExpressionError(f"unexpected `{tok.text}` at character {tok.pos + 1}: {hint}")
        if tok.kind == "bad":
            if tok.text in "'\"`":
                raise ExpressionError(
                    f"unexpected quote at character {tok.pos + 1}: an expression is numbers, names "
                    "and operators (quote the whole expression in YAML, not parts of it)"
                )
            raise ExpressionError(f"unexpected character {_describe(tok)} at character {tok.pos + 1}")
        if tok.text == "%":
            raise ExpressionError(
                f"unexpected `%` at character {tok.pos + 1}: write mod(a, b) for a remainder"
            )
        if tok.text in "{}":
            raise ExpressionError(
                f"unexpected `{tok.text}` at character {tok.pos + 1}: use [ ] for lists and ( ) for grouping"
            )
        if tok.text == ";":
            raise ExpressionError(f"unexpected `;` at character {tok.pos + 1}: separate entries with commas")
        tokens.append(Token(tok.kind, tok.text, tok.pos, space))
        i += 1
    return tokens


_STARTS_OPERAND = frozenset({"num", "name", "open", "sqrt"})
_ENDS_OPERAND = frozenset({"num", "name", "close", "sup"})


class _Compiler:
    """Recursive descent over the tokens, building closures (see the grammar in the module docstring)."""

    def __init__(self, tokens: list[Token], variables: Collection[str] | None) -> None:
        self.tokens = tokens
        self.i = 0
        self.depth = 0
        self.variables = variables
        self.names: set[str] = set()

    def peek(self) -> Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def enter(self) -> None:
        self.depth += 1
        if self.depth > parse.MAX_DEPTH:
            raise ExpressionError(f"the expression is nested too deeply (more than {parse.MAX_DEPTH} levels)")

    def leave(self) -> None:
        self.depth -= 1

    def at(self, kind: str, *texts: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.kind == kind and (not texts or tok.text in texts)

    def whole(self) -> Run:
        if not self.tokens:
            raise ExpressionError("the expression is empty")
        run = self.disjunction()
        tok = self.peek()
        if tok is not None:
            raise self.unexpected(tok)
        return run

    def unexpected(self, tok: Token) -> ExpressionError:
        where = f"at character {tok.pos + 1}"
        prev = self.tokens[self.i - 1] if self.i > 0 else None
        if prev is not None and prev.text == "]" and tok.text == "[" and tok.space:
            return ExpressionError(f"a comma is missing before `[` {where}: write [[a, b], [c, d]]")
        if prev is not None and tok.kind == "open" and tok.text == "[" and prev.kind in _ENDS_OPERAND:
            return ExpressionError(
                f"`[` {where} picks an entry, and indexing is not supported: write the entry's own "
                "formula (softmax([a, b])[0] is exp(a) / (exp(a) + exp(b))), or give the whole list "
                "as the answer (kind: vector)"
            )
        if prev is not None and tok.kind in _STARTS_OPERAND and prev.kind in _ENDS_OPERAND:
            return ExpressionError(
                f"missing operator between `{prev.text}` and `{tok.text}` {where}: write `*` for a product"
            )
        if tok.kind == "close":
            return ExpressionError(f"unexpected `{tok.text}` {where}")
        if tok.kind == "sep":
            return ExpressionError(f"unexpected `,` {where}: use [a, b] for a list")
        return ExpressionError(f"unexpected {_describe(tok)} {where}")

    def keyword(self, word: str) -> bool:
        if self.at("name", word):
            self.take()
            return True
        return False

    def disjunction(self) -> Run:
        parts = [self.conjunction()]
        while self.keyword("or"):
            parts.append(self.conjunction())
        if len(parts) == 1:
            return parts[0]
        return AnyOf(tuple(parts))

    def conjunction(self) -> Run:
        parts = [self.negation()]
        while self.keyword("and"):
            parts.append(self.negation())
        if len(parts) == 1:
            return parts[0]
        return AllOf(tuple(parts))

    def negation(self) -> Run:
        if not self.keyword("not"):
            return self.comparison()
        self.enter()
        inner = self.negation()
        self.leave()
        return Not(inner)

    def comparison(self) -> Run:
        first = self.sum()
        chain: list[tuple[str, Run]] = []
        while self.at("op", *_COMPARISONS):
            op = self.take().text
            chain.append((op, self.sum()))
        if not chain:
            return first
        return Chain(first, tuple(chain))

    def sum(self) -> Run:
        left = self.product()
        while self.at("op", "+", "-"):
            left = self.binary(self.take().text, left, self.product())
        return left

    def product(self) -> Run:
        left = self.signed()
        while self.at("op", "*", "/"):
            left = self.binary(self.take().text, left, self.signed())
        return left

    @staticmethod
    def binary(op: str, left: Run, right: Run) -> Run:
        return Binary(op, left, right)

    def signed(self) -> Run:
        if not self.at("op", "+", "-"):
            return self.power()
        sign = self.take().text
        self.enter()
        inner = self.signed()
        self.leave()
        if sign == "+":
            return Plus(inner)
        return Negated(inner)

    def power(self) -> Run:
        base = self.postfix()
        if not self.at("op", "^"):
            return base
        self.take()
        self.enter()
        exponent = self.signed()
        self.leave()
        return self.binary("^", base, exponent)

    def postfix(self) -> Run:
        run = self.atom()
        tok = self.peek()
        if tok is not None and tok.kind == "sup" and not tok.space:
            self.take()
            try:
                exponent = int(tok.text)
            except ValueError:
                raise ExpressionError(f"cannot read the superscript at character {tok.pos + 1}") from None
            return self.binary("^", run, _const(exponent))
        return run

    def atom(self) -> Run:
        tok = self.peek()
        if tok is None:
            prev = self.tokens[self.i - 1] if self.i > 0 else None
            after = f" after `{prev.text}`" if prev is not None else ""
            raise ExpressionError(f"the expression ends too early: a number or a name is missing{after}")
        if tok.kind == "num":
            self.take()
            return _const(guarded(lambda: read_literal(tok.text).value))
        if tok.kind == "name":
            return self.name()
        if tok.kind == "open":
            self.take()
            self.enter()
            if tok.text == "[":
                items = self.arguments("]", "a list")
                self.leave()
                return _list_of(items)
            inner = self.disjunction()
            self.close(tok, ")")
            self.leave()
            return inner
        if tok.kind == "sqrt":
            self.take()
            self.enter()
            inner = self.postfix()
            self.leave()
            return self.call("sqrt", [inner])
        if tok.kind == "op":
            raise ExpressionError(
                f"unexpected `{tok.text}` at character {tok.pos + 1}: a number is missing before it"
            )
        raise self.unexpected(tok)

    def close(self, opening: Token, text: str) -> None:
        tok = self.peek()
        if tok is None:
            raise ExpressionError(f"`{opening.text}` at character {opening.pos + 1} is not closed")
        if tok.kind != "close" or tok.text != text:
            raise self.unexpected(tok)
        self.take()

    def arguments(self, closing: str, what: str) -> list[Run]:
        """Comma-separated expressions up to ``closing`` (which is consumed)."""
        items: list[Run] = []
        if self.at("close", closing):
            self.take()
            return items
        while True:
            items.append(self.disjunction())
            tok = self.peek()
            if tok is None:
                raise ExpressionError(f"{what} is not closed: `{closing}` is missing")
            if tok.kind == "sep" and tok.text == ",":
                self.take()
                continue
            if tok.kind == "close" and tok.text == closing:
                self.take()
                return items
            raise self.unexpected(tok)

    def name(self) -> Run:
        tok = self.take()
        word = tok.text
        if word in {"true", "false"}:
            return _const(word == "true")
        if word in KEYWORDS:
            raise ExpressionError(f"`{word}` at character {tok.pos + 1} needs a condition before it")
        follows_call = self.at("open", "(") and not self.tokens[self.i].space
        if word in FUNCTIONS:
            if not self.at("open", "("):
                raise ExpressionError(f"`{word}` needs its arguments in parentheses, e.g. {word}(x)")
            opening = self.take()
            self.enter()
            args = self.arguments(")", f"the call of {word}() at character {opening.pos + 1}")
            self.leave()
            low, high = FUNCTIONS[word].arity
            if not low <= len(args) <= (high if high is not None else len(args)):
                wanted = f"{low}" if low == high else f"{low} to {high}" if high else f"at least {low}"
                plural = "" if wanted.endswith(" 1") or wanted == "1" else "s"
                raise ExpressionError(f"{word}() takes {wanted} argument{plural}, not {len(args)}")
            return self.call(word, args)
        if word in CONSTANTS:
            return _const(CONSTANTS[word])
        if follows_call:
            raise ExpressionError(f"`{word}` is not a function: {_unknown_hint(word, FUNCTIONS)}")
        if self.variables is not None and word not in self.variables:
            raise ExpressionError(_unknown_name(word, self.variables))
        self.names.add(word)
        return Variable(word)

    @staticmethod
    def call(name: str, args: list[Run]) -> Run:
        return Call(name, tuple(args))


def _list_of(items: Sequence[Run]) -> Run:
    if len(items) > MAX_LIST:
        raise ExpressionError(f"a list may hold at most {MAX_LIST} entries")
    return ListOf(tuple(items))


def _unknown_hint(word: str, known: Collection[str]) -> str:
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f"did you mean `{close[0]}`?" if close else f"functions are {', '.join(sorted(FUNCTIONS))}"


def _unknown_name(word: str, variables: Collection[str]) -> str:
    # Only names that can stand here: a function would need parentheses, which it does not have.
    close = difflib.get_close_matches(word, [*variables, *CONSTANTS], n=1, cutoff=0.6)
    hint = f" (did you mean `{close[0]}`?)" if close else ""
    known = ", ".join(sorted(variables)) if variables else "none"
    return f"unknown name `{word}`{hint}; the parameters are: {known}"


def compile_expression(text: str, variables: Collection[str] | None = None) -> Expression:
    """Read an expression once; ``variables``, when given, are the only names it may use.

    Raises:
        ExpressionError: the text is not an expression, or uses a name it may not.
    """
    if len(text) > parse.MAX_LENGTH:
        raise ExpressionError(
            f"the expression is too long ({len(text):,} characters; the limit is {parse.MAX_LENGTH:,})"
        )
    clean = parse.normalise(text).strip()
    if not clean:
        raise ExpressionError("the expression is empty")
    tokens = _tokens(clean)
    try:
        match_brackets(tokens)
    except ReadError as err:
        raise ExpressionError(sentence(err.reason)) from None
    compiler = _Compiler(tokens, variables)
    run = compiler.whole()
    return Expression(clean, frozenset(compiler.names), run)


def evaluate(text: str, variables: Env | None = None) -> Value:
    """Compile and compute an expression in one step (for one-off uses and tests)."""
    env = variables or {}
    return compile_expression(text, env.keys()).evaluate(env)


__all__ = [
    "CONSTANTS",
    "KEYWORDS",
    "RESERVED",
    "Expression",
    "compile_expression",
    "evaluate",
]
