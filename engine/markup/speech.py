"""A formula as a screen reader says it: ``d_k`` as "d sub k", ``\\frac{a}{b}`` as "fraction a over b
end fraction" (the spoken form MathML's ``alttext`` carries, issue 31).

Built from `attnquiz.engine.markup.tex`'s checked formula tree, so every node has one spoken form: a
subscript "sub ... end sub" when it is more than one symbol (so "s sub t minus 1 end sub" is not
heard as "s sub t, minus 1"), powers "squared", "cubed", "to the power ...", a fraction with its
ends said, a root, an accent after its letter, a matrix row by row. Operators are said in words;
letters, digits and Greek letters are left as they are (every screen reader names them).
"""

from __future__ import annotations

from attnquiz.engine.markup import tex as markup
from attnquiz.engine.markup.tex import Accent, Frac, Group, Matrix, Node, Scripts, Sqrt, Sym

_WORDS = {
    "+": "plus",
    "-": "minus",
    "−": "minus",
    "±": "plus or minus",
    "=": "equals",
    "≠": "is not equal to",
    "≈": "is approximately",
    "<": "is less than",
    ">": "is greater than",
    "≤": "is at most",
    "≥": "is at least",
    "×": "times",
    "·": "times",
    "⋅": "times",
    "*": "times",
    "∗": "times",
    "/": "divided by",
    "→": "to",
    "↦": "maps to",
    "∈": "in",
    "∝": "is proportional to",
    "≡": "is equivalent to",
    "⇒": "implies",
    "⇔": "if and only if",
    "Σ": "sum",
    "∑": "sum",
    "∏": "product",
    "∞": "infinity",
    "′": "prime",
    "!": "factorial",
    "ᵀ": "transpose",
    "…": "dots",
    "⋯": "dots",
    "|": "bar",
    "(": "(",
    ")": ")",
}
_ACCENTS = {"hat": "hat", "bar": "bar", "tilde": "tilde", "vec": "vector"}
_POWERS = {"2": "squared", "3": "cubed"}


@markup.by_formula
def speech(math: markup.Math) -> str:
    """The formula's spoken form, words separated by single spaces."""
    # The formula's own items, not its root group: $abc$ is a product of letters, not a word.
    return " ".join(word for item in math.tree.items for word in _words(item))


def _simple(node: Node) -> bool:
    """One symbol (a letter, a number, a name): said with no "end" after it."""
    if isinstance(node, Group):
        return len(node.items) == 1 and _simple(node.items[0])
    return isinstance(node, Sym)


def _words(node: Node) -> list[str]:
    if isinstance(node, Sym):
        if node.kind in ("number", "ident", "func", "text"):
            return [node.text] if node.text.strip() else []
        text = node.text.strip()
        return [_WORDS.get(text, text)] if text else []
    if isinstance(node, Group):
        if len(node.items) >= 3 and all(_letter(item) for item in node.items):
            # \mathrm{softmax} is a group of letters: a word, not s o f t m a x.
            return ["".join(item.text for item in node.items if isinstance(item, Sym))]
        return [word for item in node.items for word in _words(item)]
    if isinstance(node, Scripts):
        out = _words(node.base)
        if out and out[0] in ("sum", "product") and _simple(node.base):
            # A large operator's limits: "sum from i equals 1 to n".
            if node.sub is not None:
                out += ["from", *_words(node.sub)]
            if node.sup is not None:
                out += ["to", *_words(node.sup)]
            return [*out, "of"]
        if node.sub is not None:
            sub = _words(node.sub)
            out += ["sub", *sub] if _simple(node.sub) else ["sub", *sub, "end sub"]
        if node.sup is not None:
            sup = _words(node.sup)
            if sup == ["transpose"] or (len(sup) == 1 and sup[0] in ("⊤", "T") and _transposes(node)):
                out.append("transpose")
            elif len(sup) == 1 and sup[0] in _POWERS:
                out.append(_POWERS[sup[0]])
            elif _simple(node.sup):
                out += ["to the power", *sup]
            else:
                out += ["to the power", *sup, "end power"]
        return out
    if isinstance(node, Frac):
        if _simple(node.num) and _simple(node.den):
            return [*_words(node.num), "over", *_words(node.den)]
        return ["fraction", *_words(node.num), "over", *_words(node.den), "end fraction"]
    if isinstance(node, Sqrt):
        body = _words(node.body)
        end = [] if _simple(node.body) else ["end root"]
        if node.index is None:
            return ["square root of", *body, *end]
        return ["root", *_words(node.index), "of", *body, *end]
    if isinstance(node, Accent):
        return [*_words(node.body), _ACCENTS.get(node.name, node.name)]
    return _matrix(node)


def _letter(node: Node) -> bool:
    return isinstance(node, Sym) and node.kind == "ident" and len(node.text) == 1 and "a" <= node.text <= "z"


def _transposes(node: Scripts) -> bool:
    """``K^T`` of a capital letter is a transpose (``T`` as an exponent of a number is not)."""
    base = node.base.items[0] if isinstance(node.base, Group) and len(node.base.items) == 1 else node.base
    return isinstance(base, Sym) and base.kind == "ident" and base.text[:1].isupper()


def _matrix(node: Matrix) -> list[str]:
    rows, cols = len(node.rows), max((len(row) for row in node.rows), default=0)
    out = ["matrix", f"{rows} by {cols}"]
    for number, row in enumerate(node.rows, 1):
        out += [f"row {number}:", ", ".join(" ".join(_words(cell)) for cell in row) + ";"]
    out.append("end matrix")
    return out


__all__ = ["speech"]
