"""The PyTorch code question (the notes' SelfAttention module), graded in the sandbox against the NumPy
reference: the notes' class is right, each named mistake written in PyTorch is named, right classes
written differently are right, and the sandbox keeps every protection with PyTorch loaded.

Skipped where PyTorch is not installed (`tests/engine/test_code_extras.py` covers that case).
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="PyTorch is an optional extra: pip install 'attnquiz[torch]'")

from attnquiz.engine.answers.kinds import CodeAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.code import sandbox
from attnquiz.engine.code.grading import grade_code
from attnquiz.engine.code.torch_attention import HARNESS, SOLUTION

ITEM = "self-attention-torch"


def _answer(seed: int = 3) -> CodeAnswer:
    answer = banks.load("code").get(ITEM).question(seed).answer
    assert isinstance(answer, CodeAnswer)
    return answer


def test_the_notes_class_is_right_through_the_sandbox() -> None:
    for seed in (3, 11):
        answer = _answer(seed)
        assert answer.reference == SOLUTION
        graded = grade_code(answer, answer.reference)
        assert graded.status == "correct", graded.feedback
        assert graded.feedback.startswith("Right: your class passes")


# Each named mistake of the notes, made in the notes' own class.
MISTAKES = [
    (" / math.sqrt(self.d_k)", "", "no-scale"),
    ("self.d_k = d_k", "self.d_k = d_model", "scale-by-d-model"),
    ("math.sqrt(self.d_k)", "self.d_k", "scale-by-d"),
    ("dim=-1", "dim=1", "softmax-over-queries"),
    (", dim=-1", "", "softmax-over-batch"),  # F.softmax without dim picks dim 0 on a 3-D tensor
    ("K.transpose(-2, -1)", "K", "no-transpose"),
    ("weights @ V", "weights @ K", "keys-not-values"),
    ("self.W_k(x), self.W_v(x)", "self.W_q(x), self.W_q(x)", "one-projection"),
    ("return out, weights", "return out", "output-only"),
    ("if mask is not None:", "if False:", "mask-ignored"),
    ('float("-inf")', "0.0", "masked-score-zero"),
    ("mask == 0", "mask == 1", "mask-inverted"),
    (
        "        weights = F.softmax(scores, dim=-1)  # rows sum to 1\n",
        "        weights = F.softmax(Q @ K.transpose(-2, -1) / math.sqrt(self.d_k), dim=-1)\n"
        "        if mask is not None:\n            weights = weights * mask\n",
        "mask-after-softmax",
    ),
]


@pytest.mark.parametrize(("old", "new", "tag"), MISTAKES, ids=[m[2] for m in MISTAKES])
def test_each_mistake_in_pytorch_is_named(old: str, new: str, tag: str) -> None:
    assert old in SOLUTION
    graded = grade_code(_answer(), SOLUTION.replace(old, new))
    assert graded.mistake is not None, graded.feedback
    assert graded.mistake.tag == tag, graded.feedback
    assert graded.status in {"wrong", "partial"}


HEAD = "import math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"
PROJECTIONS = """
class SelfAttention(nn.Module):
    def __init__(self, d_model, d_k):
        super().__init__()
        self.W_q = nn.Linear(d_model, d_k, bias=False)
        self.W_k = nn.Linear(d_model, d_k, bias=False)
        self.W_v = nn.Linear(d_model, d_k, bias=False)
"""
RIGHT = {
    "torch.softmax": HEAD
    + PROJECTIONS
    + """
    def forward(self, x, mask=None):
        Q, K, V = self.W_q(x), self.W_k(x), self.W_v(x)
        scores = torch.matmul(Q, K.transpose(1, 2)) / Q.size(-1) ** 0.5
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        weights = torch.softmax(scores, dim=2)
        return torch.bmm(weights, V), weights
""",
    "scaled_dot_product_attention": HEAD
    + PROJECTIONS
    + """
    def forward(self, x, mask=None):
        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        keep = None if mask is None else mask.bool()
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
        scores = q @ k.mT / math.sqrt(q.shape[-1])
        if keep is not None:
            scores = scores.masked_fill(~keep, float("-inf"))
        return out, scores.softmax(-1)
""",
    "einsum with parameters": HEAD
    + """
class SelfAttention(nn.Module):
    def __init__(self, d_model, d_k):
        super().__init__()
        self.W_q = nn.Parameter(torch.randn(d_model, d_k))
        self.W_k = nn.Parameter(torch.randn(d_model, d_k))
        self.W_v = nn.Parameter(torch.randn(d_model, d_k))

    def forward(self, x, mask=None):
        Q = torch.einsum("btd,dk->btk", x, self.W_q)
        K = torch.einsum("btd,dk->btk", x, self.W_k)
        V = torch.einsum("btd,dk->btk", x, self.W_v)
        s = torch.einsum("bik,bjk->bij", Q, K) / math.sqrt(Q.size(-1))
        if mask is not None:
            s = torch.where(mask == 0, torch.tensor(float("-inf")), s)
        w = torch.softmax(s, dim=-1)
        return torch.einsum("bij,bjk->bik", w, V), w
""",
    "the recap's names, Wq Wk Wv": SOLUTION.replace("W_q", "Wq").replace("W_k", "Wk").replace("W_v", "Wv"),
    "one packed projection": HEAD
    + """
class SelfAttention(nn.Module):
    def __init__(self, d_model, d_k):
        super().__init__()
        self.qkv = nn.Linear(d_model, 3 * d_k, bias=False)
        self.d_k = d_k

    def forward(self, x, mask=None):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        w = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            w = w.masked_fill(mask == 0, float("-inf"))
        w = w.softmax(dim=-1)
        return w @ v, w
""",
}


@pytest.mark.parametrize("name", sorted(RIGHT))
def test_right_classes_written_differently_are_right(name: str) -> None:
    graded = grade_code(_answer(), RIGHT[name])
    assert graded.status == "correct", graded.feedback


PROJECTIONS_AS_NOTES = """        self.W_q = nn.Linear(d_model, d_k, bias=False)
        self.W_k = nn.Linear(d_model, d_k, bias=False)
        self.W_v = nn.Linear(d_model, d_k, bias=False)
"""
PROJECTIONS_IN_A_LIST = (
    "        self.W = nn.ModuleList([nn.Linear(d_model, d_k, bias=False) for _ in 'qkv'])\n"
)


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        ("bias=False", "bias=True", "has a bias; the notes' projections have none"),
        ("nn.Linear(d_model, d_k, bias=False)", "nn.Linear(d_model, d_model, bias=False)", "must map"),
        (PROJECTIONS_AS_NOTES, PROJECTIONS_IN_A_LIST, "three projections"),
    ],
)
def test_a_projection_the_weights_cannot_go_into_is_said_plainly(old: str, new: str, said: str) -> None:
    graded = grade_code(_answer(), SOLUTION.replace(old, new))
    assert graded.status == "wrong"
    assert said in graded.feedback
    assert "your class raised" in graded.feedback


def test_missing_class_and_missing_mask_argument() -> None:
    answer = _answer()
    graded = grade_code(answer, HEAD + "def attention(x):\n    return x\n")
    assert graded.status == "invalid"
    assert "class SelfAttention(nn.Module):" in graded.feedback
    no_mask = SOLUTION.replace("def forward(self, x, mask=None):", "def forward(self, x):").replace(
        "if mask is not None:", "if False:"
    )
    graded = grade_code(answer, no_mask)
    assert graded.status == "partial"  # the tests without a mask pass
    assert "mask" in graded.feedback


# ---- the sandbox with PyTorch loaded ----------------------------------------------------------


# A harness that only calls f, after probing the processor as the task's own does before the lock.
CALL_F = (
    "import torch\ntorch.backends.cpu.get_cpu_capability()\n\n"
    "def run(namespace, *args):\n    return namespace['f'](*args)\n"
)


def _torch_run(source: str) -> sandbox.Outcome:
    limits = sandbox.Limits(cpu_seconds=20, wall_seconds=240.0)
    return sandbox.run(source, "f", [[]], limits, preload=("torch",), harness=CALL_F)


def _failure(outcome: sandbox.Outcome) -> sandbox.Failure:
    assert not outcome.stopped, outcome.stopped
    (result,) = outcome.results
    assert isinstance(result, sandbox.Failure), result
    return result


def test_pytorch_loads_before_the_lock_and_every_protection_stays_on() -> None:
    outcome = _torch_run("import torch\ndef f():\n    return float(torch.ones(3).sum())\n")
    assert outcome.results == (sandbox.Returned("number", values=(3.0,)),)
    assert outcome.output == ""  # no complaint of PyTorch's about /proc/cpuinfo
    assert "get_cpu_capability()" in HARNESS  # the task's own harness probes the processor too
    if not outcome.protections.get("landlock", "").startswith("on"):
        pytest.skip("this kernel has no Landlock")
    assert outcome.protections["seccomp"] == "on"
    for attack, error in (
        ("import os\ndef f():\n    os.fork()\n", "PermissionError"),
        ("import threading\ndef f():\n    threading.Thread(target=print).start()\n", "RuntimeError"),
        ("def f():\n    return open('/proc/cpuinfo').read()\n", "PermissionError"),
        ("import socket\ndef f():\n    socket.socket(socket.AF_UNIX)\n", "PermissionError"),
    ):
        assert _failure(_torch_run(attack)).type == error, attack


def test_more_threads_for_pytorch_stop_the_code_not_the_sandbox() -> None:
    source = "import torch\ndef f():\n    torch.set_num_threads(4)\n    a = torch.randn(600, 600)\n"
    source += "    return a @ a\n"
    outcome = _torch_run(source)
    assert outcome.stopped  # its thread pool cannot start: the code stops, nothing runs outside
    assert not outcome.results


def test_a_thread_started_before_the_lock_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without OPENBLAS_NUM_THREADS=1 and OMP_NUM_THREADS=1, numpy's BLAS starts its threads as it is
    # imported: Landlock and seccomp, which bind only the thread that applies them, would not bind
    # them. (PyTorch's own pool starts at its first product; OMP_NUM_THREADS=1 keeps it to one thread.)
    environment = sandbox._environment
    monkeypatch.setattr(
        sandbox,
        "_environment",
        lambda workdir: {k: v for k, v in environment(workdir).items() if not k.endswith("_NUM_THREADS")},
    )
    outcome = sandbox.run("def f():\n    return 1.0\n", "f", [[]], preload=("torch",))
    assert "threads before the lock" in outcome.stopped
    assert not outcome.results
