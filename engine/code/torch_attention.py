"""The starred assignment of Day 13 (§5): a `SelfAttention(nn.Module)` in PyTorch, graded against NumPy.

The student writes the notes' class: ``__init__(self, d_model, d_k)`` makes ``W_q``, ``W_k`` and
``W_v`` as ``nn.Linear(d_model, d_k, bias=False)``; ``forward(self, x, mask=None)`` returns
``(out, weights)`` for ``x`` of shape (B, T, d_model), hiding the keys where ``mask`` is 0. Inside the
sandbox the trusted `HARNESS` builds the module, sets its three projections to the variant's drawn
matrices and calls it on each test; the outputs are compared with the NumPy reference
(`attnquiz.engine.code.reference.self_attention`) and with the notes' named mistakes as mutants.

Quiz's own process never imports PyTorch: the reference and the mutants are NumPy, and the item is
offered only where PyTorch is installed (`attnquiz.engine.extras`).

The sizes are drawn with T = d_k and d_model ≠ d_k. With T = d_k, ``Q @ K`` (the forgotten
transpose) is a product PyTorch computes rather than refuses, so the mistake is recognised by its
numbers: an exception's text is PyTorch's in the student's run and NumPy's in the mutant's, and
could not be compared. With d_model ≠ d_k, scaling by √d_model where √d_k belongs changes the
numbers, and a projection made ``nn.Linear(d_model, d_model)`` cannot take the variant's weights.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attnquiz.engine.code import reference as ref
from attnquiz.engine.code.task_model import MASK_AFTER, MASK_ZERO, Args, CodeTask, Mutant

# The harness is the trusted half of a test, sent to the sandbox as text and run there (the sandbox's
# child runs with the standard library, numpy and the packages the task preloads; not quiz).
#
# It SETS the module's weights to the variant's drawn matrices rather than reading out the ones the
# module made for itself: the expected outputs (the reference's and each mutant's) are then fixed by
# the variant's seed and computed in quiz's own process before the sandbox runs, never from data the
# student's code sent back; nothing depends on PyTorch's random initialisation; and a projection of
# the wrong size or with a bias, which would make its own numbers agree with itself, is said plainly.
HARNESS = '''
import torch

# Run before the sandbox locks itself in (the harness is compiled and run then, like an import):
# PyTorch probes the processor once, reading /proc/cpuinfo, which Landlock refuses afterwards.
torch.backends.cpu.get_cpu_capability()

ROLES = {
    "q": ("W_q", "Wq", "W_Q", "WQ", "q_proj", "query"),
    "k": ("W_k", "Wk", "W_K", "WK", "k_proj", "key"),
    "v": ("W_v", "Wv", "W_V", "WV", "v_proj", "value"),
}


def _found(module, names):
    for name in names:
        layer = getattr(module, name, None)
        if isinstance(layer, (torch.nn.Module, torch.Tensor)):
            return name, layer
    return None


def _projections(module, d_k):
    """The three projections, by the notes' names (W_q or Wq...), else the module's nn.Linear
    layers in the order it made them: three (q, k, v), or one of width 3 d_k (q, k, v side by side)."""
    named = {role: _found(module, names) for role, names in ROLES.items()}
    if all(named.values()):
        return named
    linears = [(n, m) for n, m in module.named_children() if isinstance(m, torch.nn.Linear)]
    if len(linears) == 3:
        return dict(zip("qkv", linears))
    if len(linears) == 1 and linears[0][1].out_features == 3 * d_k:
        return {"qkv": linears[0]}
    raise ValueError(
        "SelfAttention needs its three projections as in the notes: self.W_q, self.W_k and self.W_v, "
        "each nn.Linear(d_model, d_k, bias=False)"
    )


def _set(name, layer, matrix, d_model, d_k):
    """Give a projection the weights of ``matrix`` (d_model, d_out), Q = x @ matrix."""
    d_out = matrix.shape[1]
    if isinstance(layer, torch.nn.Linear):
        if layer.bias is not None:
            raise ValueError(
                f"self.{name} has a bias; the notes' projections have none: "
                "nn.Linear(d_model, d_k, bias=False)"
            )
        if (layer.in_features, layer.out_features) != (d_model, d_out):
            raise ValueError(
                f"self.{name} maps {layer.in_features} features to {layer.out_features}; with d_model = "
                f"{d_model} and d_k = {d_k} it must map {d_model} to {d_out}: nn.Linear(d_model, d_k)"
            )
        target, value = layer.weight, matrix.T  # nn.Linear keeps W as (out, in) and computes x @ W.T
    elif isinstance(layer, torch.Tensor) and tuple(layer.shape) in {(d_model, d_out), (d_out, d_model)}:
        target = layer
        value = matrix if tuple(layer.shape) == (d_model, d_out) else matrix.T
    else:
        raise ValueError(f"self.{name} is not an nn.Linear(d_model, d_k) projection")
    with torch.no_grad():
        target.copy_(torch.from_numpy(value.copy()))


def run(namespace, x, W_q, W_k, W_v, mask=None):
    """One test: build the student's SelfAttention, give it the variant's weights, call it on x."""
    d_model, d_k = W_q.shape
    torch.manual_seed(0)
    module = namespace["SelfAttention"](d_model=d_model, d_k=d_k)
    found = _projections(module, d_k)
    if "qkv" in found:
        name, layer = found["qkv"]
        import numpy

        _set(name, layer, numpy.concatenate([W_q, W_k, W_v], axis=1), d_model, d_k)
    else:
        for role, matrix in (("q", W_q), ("k", W_k), ("v", W_v)):
            name, layer = found[role]
            _set(name, layer, matrix, d_model, d_k)
    inputs = torch.tensor(x, dtype=torch.float32)
    with torch.no_grad():
        if mask is None:
            return module(inputs)
        return module(inputs, mask=torch.tensor(mask, dtype=torch.float32))
'''

SOLUTION = """import math
import torch
import torch.nn as nn
import torch.nn.functional as F


class SelfAttention(nn.Module):
    def __init__(self, d_model, d_k):
        super().__init__()
        self.W_q = nn.Linear(d_model, d_k, bias=False)
        self.W_k = nn.Linear(d_model, d_k, bias=False)
        self.W_v = nn.Linear(d_model, d_k, bias=False)
        self.d_k = d_k

    def forward(self, x, mask=None):  # x: (B, T, d_model)
        Q, K, V = self.W_q(x), self.W_k(x), self.W_v(x)  # each (B, T, d_k)
        scores = Q @ K.transpose(-2, -1) / math.sqrt(self.d_k)  # (B, T, T)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        weights = F.softmax(scores, dim=-1)  # rows sum to 1
        out = weights @ V  # (B, T, d_k)
        return out, weights
"""
"""The notes' own class (Day 13 §5), the worked solution and the answer key."""

STUB = """import math
import torch
import torch.nn as nn
import torch.nn.functional as F


class SelfAttention(nn.Module):
    def __init__(self, d_model, d_k):
        super().__init__()
        ...

    def forward(self, x, mask=None):  # x: (B, T, d_model)
        ...
"""

TASK = (
    "Implement self-attention in PyTorch (the Day 13 assignment): a class `SelfAttention(nn.Module)` "
    "whose `__init__(self, d_model, d_k)` makes the projections `self.W_q`, `self.W_k` and `self.W_v`, "
    "each `nn.Linear(d_model, d_k, bias=False)`, and whose `forward(self, x, mask=None)` takes `x` of "
    "shape (B, T, d_model) and returns `(out, weights)`: the (B, T, d_k) output "
    "$\\operatorname{softmax}(Q K^\\top / \\sqrt{d_k})\\,V$ and the (B, T, T) attention weights, each "
    "row summing to 1. Where `mask` (a (T, T) tensor of 1s and 0s, like "
    "`torch.tril(torch.ones(T, T))`) is 0, the key is hidden: its score is set to $-\\infty$ before "
    "the softmax. The grader gives your projections the variant's weights, with $Q = x W_q$ "
    "(an `nn.Linear` stores $W_q^\\top$)."
)

# ---- feedback, in the words of the notes, for PyTorch code -----------------------------------

NO_SCALE = (
    r"You left out the $1/\sqrt{d_k}$: the scores of long vectors grow like $\sqrt{d_k}$ and make the "
    "softmax peaky. Divide `Q @ K.transpose(-2, -1)` by `math.sqrt(self.d_k)`."
)
SCALE_BY_D_MODEL = (
    r"You scaled by $\sqrt{d_{model}}$; the scale is $\sqrt{d_k}$, the width of the queries and keys "
    "(`self.d_k = d_k`, not `d_model`)."
)
SCALE_BY_D = r"You divided by $d_k$; the scale is $\sqrt{d_k}$: `math.sqrt(self.d_k)`."
WRONG_AXIS = (
    "Your softmax runs over the queries (`dim=1` or `dim=-2`, down each column). Softmax runs over "
    "the keys for each query: `F.softmax(scores, dim=-1)`, so that each row sums to 1."
)
OVER_BATCH = (
    "Your softmax runs over the batch (`dim=0`). `F.softmax(scores)` without `dim` does that too: on "
    "a 3-D tensor it picks dim 0. Give it `dim=-1`, the keys."
)
NO_TRANSPOSE = (
    "`Q @ K` multiplies (T, d_k) by (T, d_k): it only runs because here T = d_k, and it is not the "
    "scores. Transpose the keys' last two axes: `Q @ K.transpose(-2, -1)`, (T, d_k) @ (d_k, T)."
)
KEYS_NOT_VALUES = "The weighted sum is over the values, not the keys: `weights @ V`."
ONE_PROJECTION = (
    "$W_q$, $W_k$ and $W_v$ are three separately learned matrices: K comes from `self.W_k(x)` and V "
    "from `self.W_v(x)`, not all three from `self.W_q(x)`."
)
OUTPUT_ONLY = "Return both, as the notes' `forward` does: `return out, weights`."
MASK_IGNORED = (
    "Your `forward` ignores the mask: where `mask == 0` the score must become $-\\infty$ before the "
    'softmax: `scores.masked_fill(mask == 0, float("-inf"))`.'
)
MASK_INVERTED = (
    "You hid the keys the mask keeps: its 1s are what a token may see. Fill where `mask == 0`, not "
    "where it is 1."
)


# ---- the mutants, in NumPy --------------------------------------------------------------------


def softmax(scores: Any, axis: int = -1) -> Any:
    """Softmax over ``axis``, safe for large scores; a row whose scores are all −∞ gives ``nan``, as
    PyTorch's does."""
    e = np.exp(scores - scores.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def attend(
    x: Any,
    w_q: Any,
    w_k: Any,
    w_v: Any,
    mask: Any = None,
    *,
    scale: str = "sqrt-d_k",
    axis: int = -1,
    transpose: bool = True,
    values: str = "v",
    masking: str = "-inf",
) -> tuple[Any, Any]:
    """The notes' forward with one of its steps done another way (the reference when every keyword
    is left as it is): ``scale`` ``sqrt-d_k``, ``none``, ``sqrt-d_model`` or ``d_k``; the softmax's
    ``axis``; ``transpose`` the keys or not; the ``values`` summed (``v``, ``k`` or ``q-for-all``, one
    projection for all three); ``masking`` ``-inf``, ``ignored``, ``zero``, ``after`` or ``inverted``."""
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    if values == "q-for-all":
        k = v = q
    scores = q @ (np.swapaxes(k, -2, -1) if transpose else k)
    divisor = {
        "sqrt-d_k": np.sqrt(w_q.shape[-1]),
        "none": 1.0,
        "sqrt-d_model": np.sqrt(w_q.shape[0]),
        "d_k": float(w_q.shape[-1]),
    }[scale]
    scores = scores / divisor
    if mask is not None and masking != "ignored":
        if masking in {"-inf", "inverted"}:
            scores = np.where((mask == 0) if masking == "-inf" else (mask == 1), -np.inf, scores)
        elif masking == "zero":
            scores = np.where(mask == 0, 0.0, scores)
    weights = softmax(scores, axis)
    if mask is not None and masking == "after":
        weights = weights * mask
    return weights @ (k if values == "k" else v), weights


SELF_ATTENTION_MUTANTS = (
    Mutant("no-scale", lambda *a: attend(*a, scale="none"), NO_SCALE),
    Mutant("scale-by-d-model", lambda *a: attend(*a, scale="sqrt-d_model"), SCALE_BY_D_MODEL),
    Mutant("scale-by-d", lambda *a: attend(*a, scale="d_k"), SCALE_BY_D),
    Mutant("softmax-over-queries", lambda *a: attend(*a, axis=-2), WRONG_AXIS),
    Mutant("softmax-over-batch", lambda *a: attend(*a, axis=0), OVER_BATCH),
    Mutant("no-transpose", lambda *a: attend(*a, transpose=False), NO_TRANSPOSE),
    Mutant("keys-not-values", lambda *a: attend(*a, values="k"), KEYS_NOT_VALUES),
    Mutant("one-projection", lambda *a: attend(*a, values="q-for-all"), ONE_PROJECTION),
    Mutant("output-only", lambda *a: attend(*a)[0], OUTPUT_ONLY),
    Mutant("mask-ignored", lambda *a: attend(*a, masking="ignored"), MASK_IGNORED),
    Mutant("masked-score-zero", lambda *a: attend(*a, masking="zero"), MASK_ZERO),
    Mutant("mask-after-softmax", lambda *a: attend(*a, masking="after"), MASK_AFTER),
    Mutant("mask-inverted", lambda *a: attend(*a, masking="inverted"), MASK_INVERTED),
)


# ---- the tests ------------------------------------------------------------------------------


def _normal(rng: np.random.Generator, shape: tuple[int, ...], scale: float = 1.0) -> Any:
    return np.round(rng.normal(0.0, scale, size=shape), 3)


def _unmasked(rng: np.random.Generator) -> Args:
    """A batch x (B, T, d_model) and the three (d_model, d_k) weights, with T = d_k ≠ d_model (see
    the module's docstring), and no mask."""
    while True:
        batch, d_k, d_model = int(rng.integers(1, 3)), int(rng.integers(2, 6)), int(rng.integers(2, 7))
        if d_model not in {d_k, d_k * d_k}:  # √d_model = d_k would make two scalings one
            break
    x = _normal(rng, (batch, d_k, d_model))
    weights = tuple(_normal(rng, (d_model, d_k), 0.8) for _ in range(3))
    return (x, *weights, None)


def _masked(rng: np.random.Generator) -> list[Args]:
    """Two tests with the notes' causal mask, ``torch.tril(torch.ones(T, T))``."""
    cases = []
    for _ in range(2):
        x, w_q, w_k, w_v, _ = _unmasked(rng)
        t = x.shape[1]
        cases.append((x, w_q, w_k, w_v, np.tril(np.ones((t, t)))))
    return cases


def _matrix(name: str, value: Any) -> str:
    text = np.array2string(value, separator=", ", precision=4, suppress_small=True, max_line_width=88)
    lines = (f"{name} = np.array(" + text.replace("\n", "\n" + " " * (len(name) + 12)) + ")").splitlines()
    return "\n".join(line.rstrip() for line in lines)


def example(args: Args) -> tuple[str, str]:
    """The example as a student would try it: the inputs and the call (the first test has no mask)."""
    x, w_q, w_k, w_v, _ = args
    d_model, d_k = w_q.shape
    lines = [
        "import numpy as np",
        "import torch",
        "",
        _matrix("W_q", w_q),
        _matrix("W_k", w_k),
        _matrix("W_v", w_v),
        _matrix("x", x),
        "",
        f"attn = SelfAttention(d_model={d_model}, d_k={d_k})",
        "with torch.no_grad():  # nn.Linear keeps the transpose, (d_k, d_model)",
        "    attn.W_q.weight.copy_(torch.tensor(W_q.T))",
        "    attn.W_k.weight.copy_(torch.tensor(W_k.T))",
        "    attn.W_v.weight.copy_(torch.tensor(W_v.T))",
        "out, weights = attn(torch.tensor(x, dtype=torch.float32))",
    ]
    return "\n".join(lines), "out, weights"


SELF_ATTENTION = CodeTask(
    "self-attention-torch",
    "SelfAttention",
    ("x", "W_q", "W_k", "W_v", "mask"),
    TASK,
    ref.self_attention,
    SELF_ATTENTION_MUTANTS,
    _unmasked,
    _masked,
    hidden=5,
    needs=("torch",),
    harness=HARNESS,
    solution=SOLUTION,
    stub_text=STUB,
    call="SelfAttention(d_model, d_k)",
    definition="class SelfAttention(nn.Module):",
    library="PyTorch",
    what="class",
    example=example,
)
"""The task, as `attnquiz.engine.code.tasks.TASKS` lists it."""
