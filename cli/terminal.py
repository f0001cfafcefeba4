"""The terminal's streams: Unicode where the output can encode it, ASCII renderings where it cannot.

quiz writes maths as Unicode (√dₖ, Wᵀ, 50 × 512, →). An output that cannot encode a character
(``PYTHONIOENCODING=ascii``, a Latin-1 or cp1252 console, ``LC_ALL=C``) would otherwise stop a
command with UnicodeEncodeError in the middle of a session. `prepare_streams` installs an encoding
error handler on stdout and stderr, so every writer (rich, typer, print, input's prompt) falls back,
character by character, to what the stream can encode: ``sqrt(d_k)``, ``W^T``, ``50 x 512``, ``->``.
Characters the stream can encode are left alone (Latin-1 keeps ``×`` and ``²``).

Standard input is decoded with replacement characters: bytes that are not valid in its encoding
become U+FFFD, so they are reported as unreadable and never go back out as invalid UTF-8.

Only the standard library is imported here: this runs before every command, `quiz --help` included.
"""

from __future__ import annotations

import codecs
import functools
import io
import os
import re
import sys
import unicodedata
from typing import IO, TextIO

ERRORS = "quiz-ascii"
"""The name of the encoding error handler (``str.encode(encoding, ERRORS)``)."""

_SUPERSCRIPTS = dict(
    zip(
        "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᵀ′",
        "0123456789+-=()abcdefghijklmnoprstuvwxyzT'",
        strict=True,
    )
)
_SUBSCRIPTS = dict(zip("₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ", "0123456789+-=()aehijklmnoprstuvx", strict=True))
_SCRIPTED = frozenset(_SUPERSCRIPTS) | frozenset(_SUBSCRIPTS)

# One character → its ASCII spelling. Letters become names (α → alpha), operators their usual
# ASCII forms, box and bar characters the nearest ASCII shape.
_ASCII = {
    # operators and relations
    "×": "x", "·": "*", "⋅": "*", "∙": "*", "−": "-", "–": "-", "—": "--", "‐": "-", "‑": "-",
    "→": "->", "←": "<-", "↔": "<->", "⇒": "=>", "⇐": "<=", "⇔": "<=>", "↦": "|->",
    "≈": "~=", "≃": "~=", "≅": "~=", "∼": "~", "≤": "<=", "≥": ">=", "≠": "!=", "≡": "==", "±": "+/-",
    "∓": "-/+", "∝": "~", "∈": "in", "∉": "not in", "∞": "inf", "…": "...", "⋯": "...", "÷": "/",
    "∑": "sum", "∏": "prod", "∂": "d", "∇": "grad", "∘": "o", "⊙": "(.)", "⊗": "(x)", "⊕": "(+)",
    "≪": "<<", "≫": ">>", "⌊": "floor(", "⌋": ")", "⌈": "ceil(", "⌉": ")", "∣": "|", "‖": "||",
    "§": "sec. ",
    "√": "sqrt", "∛": "cbrt", "∜": "root4", "′": "'", "″": "''", "°": " deg", "ℝ": "R", "ℕ": "N",
    # brackets and quotes
    "⟨": "<", "⟩": ">", "‘": "'", "’": "'", "‚": "'", "“": '"', "”": '"', "„": '"', "«": "<<", "»": ">>",
    "‹": "<", "›": ">",
    # tall brackets of matrices
    "⎡": "[", "⎢": "[", "⎣": "[", "⎤": "]", "⎥": "]", "⎦": "]",
    "⎛": "(", "⎜": "(", "⎝": "(", "⎞": ")", "⎟": ")", "⎠": ")",
    # marks, bars and boxes
    "✓": "+", "✔": "+", "✗": "x", "✘": "x", "◐": "~", "●": "*", "○": "o", "•": "*", "█": "#",
    "▓": "#", "▒": ":", "░": ".", "─": "-", "━": "-", "│": "|", "┃": "|", "═": "=", "\u00a0": " ",
    "\u2009": " ", "\u202f": " ", "\u200b": "",
    # Greek
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ϵ": "epsilon", "ζ": "zeta",
    "η": "eta", "θ": "theta", "ι": "iota", "κ": "kappa", "λ": "lambda", "μ": "mu", "ν": "nu", "ξ": "xi",
    "π": "pi", "ρ": "rho", "σ": "sigma", "τ": "tau", "υ": "upsilon", "φ": "phi", "ϕ": "phi", "χ": "chi",
    "ψ": "psi", "ω": "omega", "Γ": "Gamma", "Δ": "Delta", "Θ": "Theta", "Λ": "Lambda", "Ξ": "Xi",
    "Π": "Pi", "Σ": "Sigma", "Φ": "Phi", "Ψ": "Psi", "Ω": "Omega",
}  # fmt: skip


# What a root applies to when it has no brackets: a name with its scripts (√dₖ, √2, √d_model).
# A full stop belongs to it only inside a number (√2.5), never at the end of a sentence (√dₖ.).
@functools.cache
def _root_atom() -> re.Pattern[str]:
    return re.compile(r"(?:[\wᵀ′" + "".join(_SUBSCRIPTS) + "".join(_SUPERSCRIPTS) + r"]|\.(?=\d))+")


def _scripts(text: str, start: int, table: dict[str, str], marker: str) -> tuple[str, int]:
    """The run of super- or subscript characters at ``start`` as ``^2``, ``^(-1)``, ``_k``: (text, end)."""
    end = start
    while end < len(text) and text[end] in table:
        end += 1
    plain = "".join(table[ch] for ch in text[start:end])
    if marker == "^" and plain == "'":
        return "'", end
    spelled = marker + plain if len(plain) == 1 or plain.isalnum() else f"{marker}({plain})"
    after = text[end : end + 1]
    if after.isalnum() and after not in _SCRIPTED:
        spelled += " "  # Wₐsₜ → W_a s_t, not W_as_t (one name)
    return spelled, end


def _one(text: str, start: int) -> tuple[str, int]:
    """The ASCII spelling of the unencodable character at ``start`` (and what it takes along): (text, end)."""
    ch = text[start]
    if ch in _SUPERSCRIPTS:
        return _scripts(text, start, _SUPERSCRIPTS, "^")
    if ch in _SUBSCRIPTS:
        return _scripts(text, start, _SUBSCRIPTS, "_")
    if ch in "√∛∜":
        name = _ASCII[ch]
        atom = _root_atom().match(text, start + 1)
        if atom is None:
            return name, start + 1  # √(x + 1) → sqrt(x + 1)
        return f"{name}({to_ascii(atom.group())})", atom.end()
    if ch in _ASCII:
        spelled = _ASCII[ch]
        after = text[start + 1 : start + 2]
        if len(spelled) > 1 and spelled.isalpha() and after.isalnum() and after not in _SCRIPTED:
            spelled += " "  # αx → alpha x, not alphax
        return spelled, start + 1
    if 0xD800 <= ord(ch) <= 0xDFFF:
        return "?", start + 1  # a lone surrogate: bytes that were not text to begin with
    decomposed = unicodedata.normalize("NFKD", ch)
    kept = "".join(c for c in decomposed if c.isascii() and not unicodedata.combining(c))
    return (kept or "?"), start + 1


def to_ascii(text: str) -> str:
    """``text`` with every non-ASCII character spelled in ASCII (√dₖ → sqrt(d_k), Wᵀ → W^T, × → x)."""
    if text.isascii():
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i].isascii():
            j = i
            while j < len(text) and text[j].isascii():
                j += 1
            out.append(text[i:j])
            i = j
            continue
        spelled, i = _one(text, i)
        out.append(spelled)
    return "".join(out)


def _fallback(error: UnicodeError) -> tuple[str, int]:
    """The encoding error handler: the ASCII spelling of what the stream cannot encode."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    spelled, end = _one(error.object, error.start)
    return spelled, end


codecs.register_error(ERRORS, _fallback)


def can_encode(stream: IO[str] | None, text: str) -> bool:
    """Whether ``stream`` can write ``text`` as it is (unknown streams are assumed to be UTF-8)."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def is_unicode(stream: IO[str] | None) -> bool:
    """Whether ``stream`` encodes all of Unicode (UTF-8, UTF-16, ...)."""
    encoding = (getattr(stream, "encoding", None) or "utf-8").lower().replace("_", "-")
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        return False
    return name.startswith("utf")


class _TextOnly:
    """A text stream without its ``buffer``: click then writes to it as it is.

    click.echo takes an ASCII stream for a misconfigured one and writes UTF-8 to its binary buffer
    instead, which an ASCII terminal shows as mojibake; without a buffer to reach for, it uses the
    text stream, whose error handler spells what ASCII cannot encode.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def __getattr__(self, name: str) -> object:
        if name == "buffer":
            raise AttributeError(name)
        return getattr(self._stream, name)


def _is_ascii(stream: TextIO) -> bool:
    try:
        return codecs.lookup(stream.encoding or "utf-8").name == "ascii"
    except LookupError:
        return False


def prepare_streams() -> None:
    """Make stdout and stderr fall back to ASCII spellings, and stdin replace undecodable bytes."""
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(errors=ERRORS)
        if _is_ascii(sys.stdout):
            sys.stdout = _TextOnly(sys.stdout)
    if isinstance(sys.stderr, io.TextIOWrapper):
        sys.stderr.reconfigure(errors=ERRORS)
        if _is_ascii(sys.stderr):
            sys.stderr = _TextOnly(sys.stderr)
    if isinstance(sys.stdin, io.TextIOWrapper):
        sys.stdin.reconfigure(errors="replace")


@functools.cache
def _control() -> re.Pattern[str]:
    # Compiled when first needed: most text is printable, and is returned before it is searched.
    return re.compile(
        # An escape sequence as a whole (CSI ... final byte; OSC/DCS/APC/PM/SOS ... BEL or ST, or up to
        # the next space when rich already took its BEL; ESC x), so that nothing of it is left behind;
        # then any other control character: C0 but tab and newline, DEL, C1, and the bidirectional
        # overrides that reorder what a reader sees.
        r"\x1b\[[0-?]*[ -/]*[@-~]?"
        r"|\x1b[\]P^_X](?:[^\x07\x1b]*(?:\x07|\x1b\\)|\S*)"
        r"|\x9b[0-?]*[ -/]*[@-~]?"
        r"|[\x90\x9d\x9e\x9f](?:[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)|\S*)"
        r"|\x1b[ -~]?"
        r"|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"
    )


def strip_control(text: str) -> str:
    """``text`` without terminal control sequences or characters (tabs and newlines are kept).

    Bank text, history rows and what a user typed are data: an OSC 52 clipboard write, a cursor
    move or a carriage return in them must not reach the terminal as a command.
    """
    if text.isprintable() or not _control().search(text):
        return text
    return _control().sub("", text)


PLAIN_ENV = "QUIZ_PLAIN"
"""The environment variable that turns on the plain terminal (``QUIZ_PLAIN=1``, as ``quiz --plain``)."""


def plain_mode() -> bool:
    """Whether output is for a screen reader (``quiz --plain`` or ``QUIZ_PLAIN`` set and not ``0``).

    Plain output has no colour or other escape sequences, no box drawing or rules, no redrawn
    lines; maths is written in words (``square root of d sub k``), tables as one line a row, and
    figures as their values.
    """
    return os.environ.get(PLAIN_ENV, "").strip().lower() not in ("", "0", "false", "no", "off")


def set_plain() -> None:
    """Turn on plain output for this process and the processes it starts."""
    os.environ[PLAIN_ENV] = "1"


@functools.cache
def _box() -> re.Pattern[str]:
    return re.compile("[\u2500-\u259f]")  # compiled when first needed: under --plain only


def unboxed(text: str) -> str:
    """``text`` with box-drawing and block characters (U+2500–U+259F) spelled in ASCII (─ → -)."""
    if not _box().search(text):
        return text
    return _box().sub(lambda m: _ASCII.get(m.group(), " "), text)


__all__ = [
    "ERRORS",
    "PLAIN_ENV",
    "can_encode",
    "is_unicode",
    "plain_mode",
    "prepare_streams",
    "set_plain",
    "strip_control",
    "to_ascii",
    "unboxed",
]
