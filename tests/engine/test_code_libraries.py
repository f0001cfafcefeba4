"""Right solutions written with the libraries students reach for — SciPy's softmax, PyTorch on NumPy
arrays — are right: the sandbox lets them import, and the tolerance takes their float32 or float64.

Each library is optional: its cases skip, with the reason, where it is not installed.
"""

from __future__ import annotations

import pytest

from attnquiz.engine.answers.kinds import CodeAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.code.grading import grade_code

SCIPY: dict[str, str] = {
    "attention": """
import numpy as np
from scipy.special import softmax

def attention(Q, K, V):
    return softmax(Q @ K.T / np.sqrt(K.shape[1]), axis=1) @ V
""",
    "attention-weights": """
import numpy as np
import scipy.special

def attention_weights(Q, K):
    return scipy.special.softmax((Q @ K.T) / np.sqrt(Q.shape[-1]), axis=-1)
""",
    "stable-softmax": """
from scipy.special import softmax as scipy_softmax

def softmax(x):
    return scipy_softmax(x, axis=-1)
""",
    "masked-softmax": """
import numpy as np
from scipy.special import logsumexp

def masked_softmax(scores, mask):
    masked = np.where(mask, scores, -np.inf)
    out = np.zeros_like(scores, dtype=float)
    for i, row in enumerate(masked):
        if mask[i].any():
            out[i] = np.exp(row - logsumexp(row))
    return out
""",
}

TORCH: dict[str, str] = {
    "attention": """
import math
import torch

def attention(Q, K, V):
    q, k, v = (torch.as_tensor(a, dtype=torch.float64) for a in (Q, K, V))
    w = torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=-1)
    return (w @ v).numpy()
""",
    "attention-weights": """
import torch
import torch.nn.functional as F

def attention_weights(Q, K):
    q = torch.tensor(Q, dtype=torch.float32)
    k = torch.tensor(K, dtype=torch.float32)
    return F.softmax(q @ k.transpose(0, 1) / q.shape[1] ** 0.5, dim=1).numpy()
""",
    "layer-norm": """
import torch
import torch.nn.functional as F

def layer_norm(x, gamma, beta, eps=1e-5):
    t = torch.as_tensor(x, dtype=torch.float64)
    g = torch.as_tensor(gamma, dtype=torch.float64)
    b = torch.as_tensor(beta, dtype=torch.float64)
    return F.layer_norm(t, t.shape[-1:], g, b, eps).numpy()
""",
}


def _answer(item: str, seed: int) -> CodeAnswer:
    answer = banks.load("code").get(item).question(seed).answer
    assert isinstance(answer, CodeAnswer)
    return answer


LIBRARIES = {
    "scipy": (SCIPY, "SciPy is not installed: its solutions cannot be run here"),
    "torch": (TORCH, "PyTorch is an optional extra: pip install 'attnquiz[torch]'"),
}


@pytest.mark.parametrize("seed", [3, 17])
@pytest.mark.parametrize(
    ("library", "item"),
    [(library, item) for library, (solutions, _) in LIBRARIES.items() for item in sorted(solutions)],
)
def test_a_solution_written_with_a_library_is_right(library: str, item: str, seed: int) -> None:
    solutions, missing = LIBRARIES[library]
    pytest.importorskip(library, reason=missing)
    graded = grade_code(_answer(item, seed), solutions[item])
    assert (graded.status, graded.score) == ("correct", 1.0), graded.feedback


def test_a_scipy_solution_with_the_wrong_axis_is_named() -> None:
    """The library does not hide the mistake: SciPy's softmax over axis 0 is softmax over the queries."""
    pytest.importorskip("scipy", reason="SciPy is not installed: its solutions cannot be run here")
    wrong = SCIPY["attention"].replace("axis=1", "axis=0")
    graded = grade_code(_answer("attention", 3), wrong)
    assert graded.status == "wrong"
    assert graded.mistake is not None
    assert graded.mistake.tag == "softmax-over-queries"
