"""MathML Core from `attnquiz.engine.markup.tex`'s formula tree, for HTML that typesets maths with no
JavaScript.

Browsers with MathML Core (Chromium 109+, Firefox, Safari) lay these out natively. The tree is
already parsed and checked, so every node maps to one MathML element: identifiers ``mi``,
numbers ``mn``, operators ``mo``, ``mfrac``, ``msqrt``/``mroot``, ``msub``/``msup``,
``mover`` accents and ``mtable`` matrices between stretchy fences.
"""

from __future__ import annotations

from html import escape

from attnquiz.engine.markup import speech as math_speech
from attnquiz.engine.markup import tex as markup
from attnquiz.engine.markup.tex import Accent, Frac, Group, Matrix, Node, Scripts, Sqrt, Sym

_SPACES = {" ": "0.1667em", "  ": "1em", "    ": "2em"}
# \sum is read as the letter Σ; the n-ary summation sign is the one fonts draw large.
_OPERATOR_TEXT = {"-": "\u2212", "*": "\u2217", "Σ": "\u2211"}
_ACCENT_MARKS = {"hat": "^", "bar": "\u00af", "tilde": "~", "vec": "\u2192"}
_LARGE_OPERATORS = {"Σ", "∏"}


@markup.by_formula
def formula(math: markup.Math) -> str:
    """One formula as a ``<math>`` element (``display="block"`` for ``$$...$$``)."""
    body = _node(math.tree, math.display)
    display = ' display="block"' if math.display else ""
    # alttext: the spoken form, for a screen reader that does not read MathML (issue 31).
    spoken = escape(math_speech.speech(math))
    return f'<math{display} alttext="{spoken}">{body}</math>'


def _node(node: Node, display: bool, script: bool = False) -> str:
    if isinstance(node, Sym):
        return _sym(node, script)
    if isinstance(node, Group):
        return _group(node, display, script)
    if isinstance(node, Scripts):
        return _scripts(node, display, script)
    if isinstance(node, Frac):
        return f"<mfrac>{_node(node.num, display, script)}{_node(node.den, display, script)}</mfrac>"
    if isinstance(node, Sqrt):
        if node.index is None:
            return f"<msqrt>{_node(node.body, display, script)}</msqrt>"
        return f"<mroot>{_node(node.body, display, script)}{_node(node.index, display, True)}</mroot>"
    if isinstance(node, Accent):
        mark = _ACCENT_MARKS[node.name]
        return f'<mover accent="true">{_node(node.body, display, script)}<mo>{escape(mark)}</mo></mover>'
    return _matrix(node, display)


def _group(node: Group, display: bool, script: bool) -> str:
    if len(node.items) == 1 and isinstance(node.items[0], Sym) and node.items[0].text == ",":
        # TeX's {,} (as in 589{,}824) is a comma with no space after it.
        return '<mo lspace="0" rspace="0">,</mo>'
    parts: list[str] = []
    previous: Node | None = None
    for item in node.items:
        if isinstance(item, Sym) and _is_unary(item, previous):
            # TeX reads a sign after an operator or an opening bracket as unary ([2, -1], = -0.4);
            # MathML Core would space it as binary minus, so say so.
            parts.append(f'<mo lspace="0" rspace="0">{escape(_OPERATOR_TEXT.get(item.text, item.text))}</mo>')
        else:
            parts.append(_node(item, display, script))
        previous = item
        if isinstance(item, Sym) and item.kind == "func":
            parts.append("<mo>\u2061</mo>")  # function application: the spacing of sin x
    # Every node renders as exactly one element, as script and fraction slots require.
    if len(parts) == 1:
        return parts[0]
    return "<mrow>" + "".join(parts) + "</mrow>"


_SIGNS = {"-", "+", "±"}
_CLOSING = {")", "]", "|", "}", "⌋", "⌉", "⟩", "!", "′"}


def _is_unary(item: Sym, previous: Node | None) -> bool:
    """A sign at the start of a group, or after an operator other than a closing bracket."""
    if not (item.kind == "op" and item.text in _SIGNS):
        return False
    if previous is None:
        return True
    return isinstance(previous, Sym) and previous.kind == "op" and previous.text not in _CLOSING


def _sym(node: Sym, script: bool) -> str:
    text = node.text
    if node.kind == "number":
        return f"<mn>{escape(text)}</mn>"
    if node.kind == "text":
        return f"<mtext>{escape(text)}</mtext>"
    if node.kind == "func":
        return f"<mi>{escape(text)}</mi>"
    if node.kind == "ident":
        return f"<mi>{escape(text)}</mi>"
    if text in _SPACES:
        return f'<mspace width="{_SPACES[text]}"/>'
    if not text:
        return "<mrow></mrow>"
    if text == "ᵀ":
        return "<mi>\u22a4</mi>"
    text = _OPERATOR_TEXT.get(text, text)
    if text in "[]()|{}⌊⌋⌈⌉⟨⟩":
        # Delimiters written inline keep their size, as in TeX without \left/\right.
        return f'<mo stretchy="false">{escape(text)}</mo>'
    if script:
        # TeX sets no space around operators in sub- and superscripts (s_{t-1}, not s_{t - 1}).
        return f'<mo lspace="0" rspace="0">{escape(text)}</mo>'
    return f"<mo>{escape(text)}</mo>"


def _scripts(node: Scripts, display: bool, script: bool) -> str:
    base = _node(node.base, display, script)
    sub = _node(node.sub, display, True) if node.sub is not None else None
    sup = _node(node.sup, display, True) if node.sup is not None else None
    large = display and isinstance(node.base, Sym) and node.base.text in _LARGE_OPERATORS
    if sub is not None and sup is not None:
        tag = "munderover" if large else "msubsup"
        return f"<{tag}>{base}{sub}{sup}</{tag}>"
    if sub is not None:
        tag = "munder" if large else "msub"
        return f"<{tag}>{base}{sub}</{tag}>"
    tag = "mover" if large else "msup"
    return f"<{tag}>{base}{sup}</{tag}>"


def _matrix(node: Matrix, display: bool) -> str:
    rows = "".join(
        "<mtr>" + "".join(f"<mtd>{_node(cell, display)}</mtd>" for cell in row) + "</mtr>"
        for row in node.rows
    )
    table = f"<mtable>{rows}</mtable>"
    if not node.left and not node.right:
        return table
    left = f'<mo fence="true" stretchy="true">{escape(node.left)}</mo>' if node.left else ""
    right = f'<mo fence="true" stretchy="true">{escape(node.right)}</mo>' if node.right else ""
    return f"<mrow>{left}{table}{right}</mrow>"


__all__ = ["formula"]
