"""Prompt and solution text: Markdown with TeX maths in ``$...$`` and ``$$...$$``, parsed into a small tree.

Generators write a deliberately small TeX subset (the commands in ``SYMBOLS``, ``FUNCTIONS`` and
the structures below), so that every renderer can honour all of it: the terminal (Unicode, here),
and the HTML, Typst and LMS renderers of `attnquiz.engine.export`. Anything outside the subset is a
`MarkupError`, which the bank tests catch for every generator.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from functools import lru_cache

from msgspec import Struct


class MarkupError(ValueError):
    """Text that uses TeX outside the supported subset, or unbalanced braces or dollars."""


# ---------------------------------------------------------------------------------------------
# The subset
# ---------------------------------------------------------------------------------------------

GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ",
    "nu": "ν", "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ",
    "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ",
    "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ",
    "Omega": "Ω",
}  # fmt: skip
SYMBOLS = {
    **GREEK,
    "top": "ᵀ", "cdot": "·", "times": "×", "approx": "≈", "le": "≤", "leq": "≤", "ge": "≥",
    "geq": "≥", "ne": "≠", "neq": "≠", "to": "→", "rightarrow": "→", "leftarrow": "←",
    "mapsto": "↦", "in": "∈", "notin": "∉", "sum": "Σ", "prod": "∏", "infty": "∞", "ldots": "…",
    "dots": "…", "cdots": "⋯", "pm": "±", "mid": "|", "odot": "⊙", "oplus": "⊕", "partial": "∂",
    "nabla": "∇", "propto": "∝", "sim": "∼", "equiv": "≡", "lfloor": "⌊", "rfloor": "⌋",
    "lceil": "⌈", "rceil": "⌉", "langle": "⟨", "rangle": "⟩", "{": "{", "}": "}", "%": "%",
    "$": "$", "_": "_", "&": "&", "#": "#", ",": " ", ";": " ", ":": " ", "!": "", "quad": "  ",
    "qquad": "    ", " ": " ", "ell": "ℓ", "circ": "∘", "emptyset": "∅", "cup": "∪", "cap": "∩",
    "subset": "⊂", "setminus": "∖", "forall": "∀", "exists": "∃", "neg": "¬", "land": "∧",
    "lor": "∨", "Rightarrow": "⇒", "iff": "⇔", "checkmark": "✓",
}  # fmt: skip
FUNCTIONS = {"tanh", "exp", "log", "ln", "sin", "cos", "max", "min", "arg", "det", "dim", "lim"}
FONT_COMMANDS = {"mathrm", "mathbf", "mathit", "mathbb", "mathcal", "boldsymbol", "operatorname"}
TEXT_COMMANDS = {"text", "textrm", "textbf", "textit", "mathrm"}
ACCENTS = {"hat": "\u0302", "bar": "\u0304", "tilde": "\u0303", "vec": "\u20d7"}
MATRIX_ENVIRONMENTS = {"bmatrix": ("[", "]"), "pmatrix": ("(", ")"), "matrix": ("", "")}
DELIMITER_SIZES = {"left", "right", "big", "Big", "bigl", "bigr", "Bigl", "Bigr"}
BLACKBOARD = {"R": "ℝ", "N": "ℕ", "Z": "ℤ", "Q": "ℚ", "E": "𝔼"}


# ---------------------------------------------------------------------------------------------
# The tree
# ---------------------------------------------------------------------------------------------


class Sym(Struct, frozen=True):
    """A letter, number, operator or symbol (``kind`` is ident, number, op, func or text)."""

    text: str
    kind: str = "ident"


class Group(Struct, frozen=True):
    """A sequence of nodes (a brace group, or a whole formula)."""

    items: tuple[Node, ...]


class Scripts(Struct, frozen=True):
    """A base with a subscript and/or a superscript."""

    base: Node
    sub: Node | None
    sup: Node | None


class Frac(Struct, frozen=True):
    """numerator over denominator."""

    num: Node
    den: Node


class Sqrt(Struct, frozen=True):
    """A square root (or an n-th root when ``index`` is given)."""

    body: Node
    index: Node | None = None


class Accent(Struct, frozen=True):
    """A hat, bar, tilde or arrow over a node."""

    name: str
    body: Node


class Matrix(Struct, frozen=True):
    """A matrix environment: rows of cells, and its delimiters."""

    rows: tuple[tuple[Node, ...], ...]
    left: str
    right: str


Node = Sym | Group | Scripts | Frac | Sqrt | Accent | Matrix


class Text(Struct, frozen=True):
    """Plain Markdown text between formulas."""

    text: str


class Math(Struct, frozen=True):
    """A formula; ``display`` for ``$$...$$``."""

    tree: Group
    display: bool
    source: str


Segment = Text | Math


# ---------------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------------

_TOKEN = re.compile(r"\\([A-Za-z]+|.)|(\d+(?:\.\d+)?)|([A-Za-z])|(\s+)|(.)", re.DOTALL)


MAX_DEPTH = 32
"""How deep groups, fractions, roots and scripts may nest in one formula: every renderer walks the
tree recursively (and Typst lays it out recursively), so a deeper formula is refused when read."""


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.depth = 0
        self.tokens: list[tuple[str, str]] = []
        for m in _TOKEN.finditer(source):
            command, number, letter, space, other = m.groups()
            if command is not None:
                self.tokens.append(("cmd", command))
            elif number is not None:
                self.tokens.append(("num", number))
            elif letter is not None:
                self.tokens.append(("letter", letter))
            elif space is None:
                self.tokens.append(("char", other))
        self.pos = 0

    def fail(self, message: str) -> MarkupError:
        return MarkupError(f"{message} in ${self.source}$")

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise self.fail("unexpected end of formula")
        self.pos += 1
        return token

    def parse(self) -> Group:
        group = self.sequence(stop=None)
        if self.peek() is not None:
            raise self.fail(f"unexpected {self.peek()[1]!r}")  # type: ignore[index]
        return group

    def sequence(self, stop: set[str] | None) -> Group:
        items: list[Node] = []
        while (token := self.peek()) is not None:
            kind, value = token
            if kind == "char" and value == "}":
                if stop is None or "}" not in stop:
                    raise self.fail("unbalanced }")
                break
            if stop is not None and ((kind == "char" and value in stop) or (kind == "cmd" and value in stop)):
                break
            if kind == "char" and value in "^_":
                self.take()
                base = items.pop() if items else Sym("")
                items.append(self.scripts(base, value))
                continue
            items.append(self.atom())
        return Group(tuple(items))

    def scripts(self, base: Node, first: str) -> Scripts:
        sub: Node | None = None
        sup: Node | None = None
        if isinstance(base, Scripts):
            sub, sup = base.sub, base.sup
            base = base.base
        arg = self.argument()
        if first == "_":
            if sub is not None:
                raise self.fail("double subscript")
            sub = arg
        else:
            if sup is not None:
                raise self.fail("double superscript")
            sup = arg
        token = self.peek()
        if token is not None and token[0] == "char" and token[1] in "^_" and token[1] != first:
            self.take()
            return self.scripts(Scripts(base, sub, sup), token[1])
        return Scripts(base, sub, sup)

    def deeper(self) -> None:
        """One level further in (a group or argument, a root's index, a matrix): refused past
        `MAX_DEPTH`, so that no renderer's recursion over the tree can run out of stack."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise MarkupError(
                f"the formula nests more than {MAX_DEPTH} deep (groups, fractions, roots, scripts,"
                f" matrices) in ${_clip(self.source)}$"
            )

    def argument(self) -> Node:
        self.deeper()
        try:
            return self._argument()
        finally:
            self.depth -= 1

    def _argument(self) -> Node:
        token = self.peek()
        if token is None:
            raise self.fail("missing argument")
        if token == ("char", "{"):
            self.take()
            group = self.sequence(stop={"}"})
            if self.peek() != ("char", "}"):
                raise self.fail("missing }")
            self.take()
            return group
        if token[0] == "num":
            # `x^23` means x²3 in TeX: only the first digit is the script.
            self.take()
            if len(token[1]) > 1:
                self.tokens.insert(self.pos, ("num", token[1][1:]))
            return Sym(token[1][0], "number")
        return self.atom()

    def text_argument(self) -> str:
        # \text{...} keeps its spaces, so read it from the source rather than the tokens.
        if self.peek() != ("char", "{"):
            raise self.fail("expected {")
        depth = 0
        out = []
        self.take()
        depth = 1
        while True:
            kind, value = self.take()
            if (kind, value) == ("char", "{"):
                depth += 1
            elif (kind, value) == ("char", "}"):
                depth -= 1
                if depth == 0:
                    break
            out.append((kind, value))
        return _rejoin_text(out)

    def atom(self) -> Node:
        return self._atom()

    def _atom(self) -> Node:
        kind, value = self.take()
        if kind == "num":
            return Sym(value, "number")
        if kind == "letter":
            return Sym(value, "ident")
        if kind == "char":
            if value == "{":
                self.pos -= 1
                return self.argument()
            if value in "&":
                raise self.fail("& outside a matrix")
            return Sym(value, "op")
        return self.command(value)

    def command(self, name: str) -> Node:
        if name in SYMBOLS:
            return Sym(SYMBOLS[name], "op" if name not in GREEK else "ident")
        if name in FUNCTIONS:
            return Sym(name, "func")
        if name == "frac" or name == "tfrac" or name == "dfrac":
            return Frac(self.argument(), self.argument())
        if name == "sqrt":
            index: Node | None = None
            if self.peek() == ("char", "["):
                self.take()
                self.deeper()
                index = self.sequence(stop={"]"})
                self.depth -= 1
                if self.peek() != ("char", "]"):
                    raise self.fail("missing ]")
                self.take()
            return Sqrt(self.argument(), index)
        if name in ACCENTS:
            return Accent(name, self.argument())
        if name in TEXT_COMMANDS and name != "mathrm":
            return Sym(self.text_argument(), "text")
        if name == "operatorname":
            return Sym(self.text_argument(), "func")
        if name in FONT_COMMANDS:
            body = self.argument()
            if name == "mathbb" and isinstance(body, Group) and len(body.items) == 1:
                only = body.items[0]
                if isinstance(only, Sym) and only.text in BLACKBOARD:
                    return Sym(BLACKBOARD[only.text], "ident")
            return body
        if name in DELIMITER_SIZES:
            token = self.take()
            if token[0] == "cmd":
                return (
                    Sym(SYMBOLS.get(token[1], token[1]), "op")
                    if token[1] in SYMBOLS or token[1] in "{}|"
                    else self._unknown(token[1])
                )
            return Sym("" if token[1] == "." else token[1], "op")
        if name == "begin":
            self.deeper()
            matrix = self.environment()
            self.depth -= 1
            return matrix
        if name == "\\":
            raise self.fail("\\\\ outside a matrix")
        return self._unknown(name)

    def _unknown(self, name: str) -> Node:
        raise self.fail(f"unsupported TeX command \\{name}")

    def environment(self) -> Matrix:
        env = self.text_argument()
        if env not in MATRIX_ENVIRONMENTS:
            raise self.fail(f"unsupported environment {env!r}")
        rows: list[tuple[Node, ...]] = []
        cells: list[Node] = []
        while True:
            cell = self.sequence(stop={"&", "\\", "end"})
            cells.append(cell)
            kind, value = self.take()
            if (kind, value) == ("char", "&"):
                continue
            if (kind, value) == ("cmd", "\\"):
                rows.append(tuple(cells))
                cells = []
                continue
            if (kind, value) == ("cmd", "end"):
                if self.text_argument() != env:
                    raise self.fail(f"\\begin{{{env}}} ended by another environment")
                if any(isinstance(c, Group) and c.items for c in cells) or len(cells) > 1:
                    rows.append(tuple(cells))
                break
            raise self.fail(f"unexpected {value!r} in a matrix")
        if not rows or len({len(r) for r in rows}) != 1:
            raise self.fail("matrix rows of different lengths")
        left, right = MATRIX_ENVIRONMENTS[env]
        return Matrix(tuple(rows), left, right)


def _clip(source: str, limit: int = 60) -> str:
    """The start of a long formula, for a message that stays one readable line."""
    return source if len(source) <= limit else source[:limit] + "…"


def _rejoin_text(tokens: list[tuple[str, str]]) -> str:
    # Tokens dropped the spaces; \text arguments are short phrases, so rejoin words with spaces.
    words: list[str] = []
    for kind, value in tokens:
        piece = (
            "\\" + value
            if kind == "cmd" and value not in SYMBOLS
            else SYMBOLS.get(value, value)
            if kind == "cmd"
            else value
        )
        if words and kind in {"letter", "num"} and words[-1][-1:].isalnum():
            words[-1] += piece
        else:
            words.append(piece)
    text = " ".join(words)
    return re.sub(r" ([,.;:)])", r"\1", text).replace("( ", "(")


@lru_cache(maxsize=4096)
def parse_math(source: str) -> Group:
    """The tree of one formula (without its dollars)."""
    return _Parser(source).parse()


_FORMULA_CACHE = 8192
"""Formulas whose renderings each `by_formula` cache keeps (then it starts afresh): a bank's
formulas, many the same in every variant (``$v_a$``, ``$\\tanh$``), many times over."""


def by_formula(render: Callable[[Math], str]) -> Callable[[Math], str]:
    """``render`` remembered per formula, by its source and display: a formula's tree is made from
    its source alone (`parse_math`), so the same source renders the same (`quiz check` renders
    every variant's texts in every format, and an export renders the same formulas per variant)."""
    cache: dict[tuple[str, bool], str] = {}

    @functools.wraps(render)
    def cached(math: Math) -> str:
        key = (math.source, math.display)
        found = cache.get(key)
        if found is None:
            if len(cache) >= _FORMULA_CACHE:
                cache.clear()
            found = cache[key] = render(math)
        return found

    return cached


# An escaped \$ is a literal dollar: it neither opens nor closes a formula.
_MATH = re.compile(r"(?<!\\)\$\$(.+?)(?<!\\)\$\$|(?<!\\)\$((?:\\\$|[^$])+?)(?<!\\)\$", re.DOTALL)


@lru_cache(maxsize=4096)
def parse(text: str) -> tuple[Segment, ...]:
    """Split Markdown text into plain text and formulas, parsing every formula."""
    segments: list[Segment] = []
    pos = 0
    for m in _MATH.finditer(text):
        if m.start() > pos:
            segments.append(Text(text[pos : m.start()]))
        display = m.group(1) is not None
        source = m.group(1) if display else m.group(2)
        segments.append(Math(parse_math(source.strip()), display, source))
        pos = m.end()
    rest = text[pos:]
    if "$" in rest.replace("\\$", ""):
        raise MarkupError(f"unmatched $ in {text!r}")
    if rest:
        segments.append(Text(rest))
    return tuple(segments)


# `<` and `&` too: with them escaped no raw HTML, autolink (<javascript:…>) or entity can form.
_MARKDOWN_SPECIAL = frozenset("\\`*_<>$|&")
# A bracket starts a link only where a `]` is followed by `(`, `[` or `:` (an inline, full reference
# or definition); there brackets are escaped too, elsewhere [0.5, 1] stays readable.
_LINK_CLOSE = re.compile(r"\][(\[:]")


def escape_markdown(text: str) -> str:
    """Plain text as Markdown that shows exactly that text (never emphasis, HTML, a link or an
    entity): ``3*d`` stays ``3*d`` where feedback, a worksheet or a figure's label is Markdown."""
    special = _MARKDOWN_SPECIAL_OR_BRACKET if _LINK_CLOSE.search(text) else _MARKDOWN_SPECIAL_CHARACTER
    return special.sub(r"\\\g<0>", text)


_MARKDOWN_SPECIAL_CHARACTER = re.compile("[" + re.escape("".join(sorted(_MARKDOWN_SPECIAL))) + "]")
_MARKDOWN_SPECIAL_OR_BRACKET = re.compile("[" + re.escape("".join(sorted(_MARKDOWN_SPECIAL)) + "[]") + "]")


# ---------------------------------------------------------------------------------------------
# Terminal rendering (Unicode); Markdown blocks as plain text are `attnquiz.engine.markup.plain`'s
# ---------------------------------------------------------------------------------------------

# Lower-case letters all have superscript forms except q; capitals only partly, so apart from T
# (for transposes) they stay as ^X rather than mixing Wᴷ with W^Q in one formula.
_SUPERSCRIPT = dict(
    zip(
        "0123456789+-=()abcdefghijklmnoprstuvwxyzT",
        "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᵀ",
        strict=True,
    )
) | {"ᵀ": "ᵀ", "−": "⁻", "'": "′"}
_SUBSCRIPT = dict(
    zip("0123456789+-=()aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ", strict=True)
) | {"−": "₋"}
_SPACED_OPS = {"=", "≈", "≤", "≥", "≠", "→", "∈", "⇒", "⇔", "↦", "+", "×", "−", "-", "<", ">", "±", "∝", "≡"}


_ASCII_SUBSCRIPT_END = re.compile(r"(?:_\w+|\^\([^()]*\))$")
"""A formula so far that ends in a script spelled in ASCII (``d_model``, ``W_Q``, ``Σ^(dₖ)``)."""


def _script(text: str, table: dict[str, str], marker: str) -> str:
    if text and all(ch in table for ch in text):
        return "".join(table[ch] for ch in text)
    if len(text) == 1:
        return marker + text
    # A superscript with no Unicode form reads best in parentheses, as in a calculator: e^(0.707).
    return f"^({text})" if marker == "^" else f"_{text}"


def _needs_parens(text: str) -> bool:
    return any(ch in text for ch in " +−-·×/") and not (text.startswith("(") and text.endswith(")"))


def _starts_operand(prev: Node | None) -> bool:
    """Whether a sign after ``prev`` is unary (at the start, or after an operator or opening bracket)."""
    if prev is None:
        return True
    # Closing brackets and value-like symbols (…, ⋯, ∞) end an operand: a sign after them is binary.
    return (
        isinstance(prev, Sym)
        and prev.kind == "op"
        and prev.text not in {")", "]", "|", "!", "′", "…", "⋯", "∞"}
    )


def to_unicode(node: Node, *, display: bool = False) -> str:
    """One formula as Unicode text for a terminal."""
    if isinstance(node, Sym):
        if node.kind == "op":
            if node.text in _SPACED_OPS:
                return f" {'−' if node.text == '-' else node.text} "
            if node.text == ",":
                return ", "
            return node.text
        return node.text
    if isinstance(node, Group):
        if node.items == (Sym(",", "op"),):
            return ","  # 589{,}824: a thousands separator, not a list comma
        out = ""
        for i, item in enumerate(node.items):
            prev = node.items[i - 1] if i else None
            if isinstance(item, Sym) and item.text in {"-", "+"} and _starts_operand(prev):
                out += "−" if item.text == "-" else "+"  # unary sign: no spaces
                continue
            piece = to_unicode(item, display=display)
            function = prev.base if isinstance(prev, Scripts) else prev  # log_2 x is a function too
            after_function = (
                isinstance(function, Sym) and function.kind == "func" and not piece.startswith(("(", " "))
            )
            before_function = (
                isinstance(item, Sym)
                and item.kind == "func"
                and bool(out)
                and not out.endswith((" ", "(", "·", "×"))
            )
            if after_function or before_function:
                out += " "  # "v tanh(x)", "tanh x": a function name stands apart from its neighbours
            elif isinstance(prev, Scripts) and _ASCII_SUBSCRIPT_END.search(out) and piece[:1].isalnum():
                # A subscript spelled with "_" (no Unicode form) would run into the next name:
                # d_model d_ff, never "d_modeld_ff" (one name to a reader).
                out += " "
            out += piece
        return re.sub(r"  +", " ", out) if "  " in out and not display else out
    if isinstance(node, Scripts):
        base = to_unicode(node.base)
        if isinstance(node.base, Frac | Scripts) or (isinstance(node.base, Group) and _needs_parens(base)):
            base = f"({base})"
        if node.sub is not None:
            base += _script(to_unicode(node.sub).replace(" ", ""), _SUBSCRIPT, "_")
        if node.sup is not None:
            sup = to_unicode(node.sup).replace(" ", "")
            base += sup if sup in {"ᵀ", "′"} else _script(sup, _SUPERSCRIPT, "^")
        return base
    if isinstance(node, Frac):
        num, den = to_unicode(node.num).strip(), to_unicode(node.den).strip()
        if _needs_parens(num):
            num = f"({num})"
        # A product below the line is bracketed even where it is written without a sign: n/6d reads
        # as n/6·d to a grader (and to many readers); n/(6d) has one reading.
        product = isinstance(node.den, Group) and len(node.den.items) > 1
        if _needs_parens(den) or isinstance(node.den, Frac) or (product and not den.startswith("(")):
            den = f"({den})"
        return f"{num}/{den}"
    if isinstance(node, Sqrt):
        body = to_unicode(node.body).strip()
        root = "√"
        if node.index is not None:
            index = to_unicode(node.index).strip()
            root = {"3": "∛", "4": "∜"}.get(index, _script(index, _SUPERSCRIPT, "^") + "√")
        is_atom = re.fullmatch(r"[\w.ᵀ₀-₉ₐ-ₜ]+", body) is not None
        return f"{root}{body}" if is_atom else f"{root}({body})"
    if isinstance(node, Accent):
        body = to_unicode(node.body)
        return body + ACCENTS[node.name] if len(body) == 1 else f"{node.name}({body})"
    cells = [[to_unicode(c).strip() for c in row] for row in node.rows]
    if not display:
        left, right = node.left or "[", node.right or "]"
        return left + ", ".join(left + ", ".join(row) + right for row in cells) + right
    return "\n".join(matrix_lines(cells, node.left, node.right))


def matrix_lines(cells: list[list[str]], left: str = "[", right: str = "]") -> list[str]:
    """A matrix as aligned lines with tall brackets, numbers right-aligned in their columns."""
    widths = [max(len(row[j]) for row in cells) for j in range(len(cells[0]))]
    body = ["  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)) for row in cells]
    if not left and not right:
        return body
    if len(body) == 1:
        return [f"{left or '['} {body[0]} {right or ']'}"]
    square = left != "("
    tops = ("⎡", "⎤", "⎢", "⎥", "⎣", "⎦") if square else ("⎛", "⎞", "⎜", "⎟", "⎝", "⎠")
    lines = []
    for i, row in enumerate(body):
        if i == 0:
            opening, closing = tops[0], tops[1]
        elif i == len(body) - 1:
            opening, closing = tops[4], tops[5]
        else:
            opening, closing = tops[2], tops[3]
        lines.append(f"{opening} {row} {closing}")
    return lines


def table_lines(header: list[str], rows: list[list[str]], align: Sequence[str]) -> list[str]:
    """A table as aligned plain-text lines: header, a rule, then the rows (numbers right-aligned
    where the column says so)."""
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]

    def line(cells: list[str]) -> str:
        padded = []
        for cell, width, how in zip(cells, widths, align, strict=True):
            padded.append(
                cell.rjust(width)
                if how == "right"
                else cell.center(width)
                if how == "center"
                else cell.ljust(width)
            )
        return "  ".join(padded).rstrip()

    return [line(header), "  ".join("-" * w for w in widths), *(line(row) for row in rows)]
