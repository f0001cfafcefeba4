"""Carried-forward targets in Maxima: how a later part's answer follows from the student's earlier ones.

quiz carries an error forward by calling a part's ``recompute`` (Python over the reference
numerics) with the values the student gave for the parts it uses. A STACK question must do the
same inside its potential response tree, so each chain's step is written here once more, as a
Maxima expression of the earlier values. The constants are never retyped: they are read from the
recompute function's own closure (the numbers Python uses: e₂, V, d, h, ...), so the two can differ
only in the operation, and the tests compare both on the same responses through STACK's Maxima.

A step is found by the generator that made it (the function the ``recompute`` was defined in) and
the part's label. A chain whose step is not listed here (a plugin's, a formula item's) has no
Maxima form: `carry` returns None and the export marks that part against its own answer and says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from attnquiz.engine.answers.kinds import Part
from attnquiz.engine.export.lms import stack_maxima as mx


@dataclass(frozen=True, slots=True)
class Carry:
    """A carried-forward target: a Maxima ``expression`` of the used parts' values, defined only
    where ``guard`` holds (else quiz carries nothing: a count that is not whole, a negative
    variance)."""

    expression: str
    guard: str = "true"


Step = Callable[[Mapping[str, Any], Sequence[str]], Carry]
"""(the recompute's closure constants, the used values as Maxima expressions) → the target."""


def _n(value: Any) -> str:
    return mx.number(float(value)) if not isinstance(value, int) else mx.number(value)


def _whole(x: str) -> str:
    return f"integerp({x})"


def _additive_weight(c: Mapping[str, Any], x: Sequence[str]) -> Carry:
    score, other = x[0], _n(c["e2"])
    return Carry(f"exp({score})/(exp({score})+exp({other}))")


def _additive_context(c: Mapping[str, Any], x: Sequence[str]) -> Carry:
    first, second = (_n(v) for v in c["column"])
    return Carry(f"({x[0]})*{first}+(1-({x[0]}))*{second}")


def _row_softmax(c: Mapping[str, Any], x: Sequence[str]) -> Carry:
    del c
    # The matrix input is the answer's size; each row over the keys, as numerics.softmax does.
    s = x[0]
    return Carry(
        f"genmatrix(lambda([i,j], exp({s}[i,j])/sum(exp({s}[i,k]),k,1,length({s}[1]))), "
        f"length({s}), length({s}[1]))"
    )


def _times_values(c: Mapping[str, Any], x: Sequence[str]) -> Carry:
    vm = tuple(tuple(float(v) for v in row) for row in c["vm"])
    return Carry(f"({x[0]}) . {mx.matrix(vm)}")


def _w_q(c: Mapping[str, Any], x: Sequence[str]) -> Carry:
    return Carry(f"{_n(int(c['d']))}*({x[0]})", _whole(x[0]))


def _mha(c: Mapping[str, Any], x: Sequence[str]) -> Carry:
    return Carry(f"4*({_n(int(c['h']))}*({x[0]})+{_n(int(c['d']))})", _whole(x[0]))


def _layer(c: Mapping[str, Any], x: Sequence[str]) -> Carry:
    return Carry(f"({x[0]})+{_n(int(c['ffn']))}+{_n(int(c['norms']))}", _whole(x[0]))


def _layers(c: Mapping[str, Any], x: Sequence[str]) -> Carry:
    return Carry(f"({x[0]})*{_n(int(c['n']))}", _whole(x[0]))


def _longer(c: Mapping[str, Any], x: Sequence[str]) -> Carry:
    k = _n(int(c["k"]))
    return Carry(f"({x[0]})*{k}*{k}", _whole(x[0]))


def _visible(c: Mapping[str, Any], x: Sequence[str]) -> Carry:
    size = _n(int(c["size"]))
    return Carry(f"{size}*{size}-({x[0]})", _whole(x[0]))


def _hidden_fraction(c: Mapping[str, Any], x: Sequence[str]) -> Carry:
    size = _n(int(c["size"]))
    return Carry(f"float(({x[0]})/({size}*{size}))")


def _variance(c: Mapping[str, Any], x: Sequence[str]) -> Carry:
    values = [_n(float(v)) for v in c["arr"]]
    squares = "+".join(f"({v}-({x[0]}))^2" for v in values)
    return Carry(f"({squares})/{len(values)}")


def _normalised(c: Mapping[str, Any], x: Sequence[str]) -> Carry:
    mu, var = x
    eps = _n(float(c["eps"]))
    entries = ",".join(f"({_n(float(v))}-({mu}))/sqrt(({var})+{eps})" for v in c["arr"])
    return Carry(f"[{entries}]", f"is(({var})+{eps} > 0)")


def _percent_of_paper(c: Mapping[str, Any], x: Sequence[str]) -> Carry:
    return Carry(f"100*({x[0]})/{_n(float(c['paper_m']))}")


STEPS: dict[tuple[str, str], Step] = {
    ("additive_chain", "b"): _additive_weight,
    ("additive_chain", "c"): _additive_context,
    ("sdpa_chain", "b"): _row_softmax,
    ("sdpa_chain", "c"): _times_values,
    ("params_chain", "b"): _w_q,
    ("params_chain", "c"): _mha,
    ("params_chain", "d"): _layer,
    ("params_chain", "e"): _layers,
    ("cost_chain", "b"): _longer,
    ("causal_mask_chain", "b"): _visible,
    ("causal_mask_chain", "c"): _hidden_fraction,
    ("layernorm_chain", "b"): _variance,
    ("layernorm_chain", "c"): _normalised,
    ("param_count_gap", "b"): _percent_of_paper,
}
"""Each chain step quiz carries forward, by (generator, part label)."""


def _closure(function: Callable[..., Any]) -> dict[str, Any]:
    code = getattr(function, "__code__", None)
    cells = getattr(function, "__closure__", None) or ()
    if code is None:
        return {}
    return {name: cell.cell_contents for name, cell in zip(code.co_freevars, cells, strict=True)}


def carry(part: Part, used: Sequence[str]) -> Carry | None:
    """The Maxima target of ``part`` given the used parts' values (Maxima expressions, in the order
    of ``part.uses``), or None where the step has no Maxima form here."""
    if part.recompute is None or not part.uses:
        return None
    maker = part.recompute.__qualname__.split(".", 1)[0]
    step = STEPS.get((maker, part.label))
    if step is None:
        return None
    try:
        return step(_closure(part.recompute), used)
    except (KeyError, TypeError, ValueError):  # the generator changed its constants: no form
        return None


__all__ = ["STEPS", "Carry", "carry"]
