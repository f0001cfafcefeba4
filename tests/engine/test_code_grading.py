"""Code questions graded by running them: the reference is right and every mutant is named as itself on
many seeds (0 confusions), equivalent right solutions are right, and the student's mistakes, shapes and
exceptions are said in the course's words."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from attnquiz.engine.answers.kinds import CodeAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.code.grading import checked, grade_code
from attnquiz.engine.code.sandbox import Limits
from attnquiz.engine.code.tasks import TASKS


def _answer(name: str, draw: int) -> CodeAnswer:
    code_task = TASKS[name]
    return CodeAnswer(
        name, code_task.function, code_task.signature, code_task.stub(), code_task.source(), draw
    )


@pytest.mark.parametrize("name", sorted(TASKS))
def test_reference_right_and_every_mutant_named_on_100_seeds(name: str) -> None:
    for draw in range(100):
        assert checked(_answer(name, draw)) == [], (name, draw)


# Right solutions written differently: loops, einsum, float32, float64, other axes spelled otherwise.
RIGHT: dict[str, list[str]] = {
    "attention": [
        """
import numpy as np
def attention(Q, K, V):
    d = Q.shape[1]
    out = np.zeros((Q.shape[0], V.shape[1]))
    for i in range(Q.shape[0]):
        s = [sum(Q[i, c] * K[j, c] for c in range(d)) / d ** 0.5 for j in range(K.shape[0])]
        m = max(s)
        e = [np.exp(x - m) for x in s]
        total = sum(e)
        for j in range(K.shape[0]):
            out[i] += e[j] / total * V[j]
    return out
""",
        """
import numpy as np
def attention(Q, K, V):
    s = np.einsum("td,sd->ts", Q, K) / np.sqrt(Q.shape[-1])
    w = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("ts,sv->tv", w / w.sum(-1, keepdims=True), V)
""",
        """
import numpy as np
def attention(Q, K, V):
    Q, K, V = (a.astype(np.float32) for a in (Q, K, V))
    s = Q @ K.T / np.float32(np.sqrt(Q.shape[-1]))
    w = np.exp(s - s.max(axis=1)[:, None])
    return (w / w.sum(axis=1)[:, None]) @ V
""",
        """
import numpy as np
def softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    return np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)
def attention(Q, K, V):
    return softmax(np.matmul(Q, K.T) * (1.0 / np.sqrt(K.shape[-1]))).astype(np.float64) @ V
""",
        """
import numpy as np
from math import sqrt
def attention(Q, K, V):
    s = Q.dot(K.transpose()) / sqrt(Q.shape[-1])
    w = np.exp(s - np.logaddexp.reduce(s, axis=-1, keepdims=True))
    return w @ V
""",
    ],
    "stable-softmax": [
        "import numpy as np\ndef softmax(x):\n    return np.exp(x - np.logaddexp.reduce(x, axis=1, "
        "keepdims=True))\n",
        "import numpy as np\ndef softmax(x):\n    x = x.astype(np.float32)\n    e = np.exp(x - x.max(1, "
        "keepdims=True))\n"
        "    return e / e.sum(1, keepdims=True)\n",
    ],
    "causal-mask": [
        "import numpy as np\ndef causal_mask(T):\n    return np.arange(T)[None, :] <= np.arange(T)[:, "
        "None]\n",
        "def causal_mask(T):\n    return [[1.0 if j <= i else 0.0 for j in range(T)] for i in range(T)]\n",
    ],
    "masked-softmax": [
        """
import numpy as np
def masked_softmax(scores, mask):
    out = np.zeros(scores.shape)
    for i in range(scores.shape[0]):
        keep = mask[i]
        if keep.any():
            s = scores[i][keep]
            e = np.exp(s - s.max())
            out[i][keep] = e / e.sum()
    return out
""",
    ],
    "split-heads": [
        "import numpy as np\ndef split_heads(X, h):\n    return np.stack(np.split(X, h, axis=1))\n",
        "import numpy as np\ndef split_heads(X, h):\n    d = X.shape[1] // h\n"
        "    return np.array([X[:, i * d:(i + 1) * d] for i in range(h)])\n",
    ],
    "merge-heads": [
        "import numpy as np\ndef merge_heads(Z):\n    return np.concatenate(list(Z), axis=-1)\n",
        "import numpy as np\ndef merge_heads(Z):\n    return np.einsum('htd->thd', Z).reshape(Z.shape[1], "
        "-1)\n",
    ],
    "positional-encoding": [
        """
import math
import numpy as np
def positional_encoding(T, d_model):
    pe = np.zeros((T, d_model), dtype=np.float32)
    for p in range(T):
        for i in range(0, d_model, 2):
            angle = p / math.pow(10000, i / d_model)
            pe[p, i] = math.sin(angle)
            pe[p, i + 1] = math.cos(angle)
    return pe
""",
        """
import numpy as np
def positional_encoding(T, d_model):
    div = np.exp(np.arange(0, d_model, 2) * (-np.log(10000.0) / d_model))
    ang = np.arange(T)[:, None] * div
    return np.stack([np.sin(ang), np.cos(ang)], axis=-1).reshape(T, d_model)
""",
    ],
    "layer-norm": [
        "import numpy as np\ndef layer_norm(x, gamma, beta, eps=1e-5):\n"
        "    mu = x.mean(-1, keepdims=True)\n    sd = np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + "
        "eps)\n"
        "    return (x - mu) / sd * gamma + beta\n",
        "import numpy as np\ndef layer_norm(x, gamma, beta, eps=1e-5):\n    x = x.astype(np.float32)\n"
        "    return gamma * (x - x.mean(1)[:, None]) / np.sqrt(x.var(1)[:, None] + eps) + beta\n",
    ],
    "additive-scores": [
        "import numpy as np\ndef additive_scores(s, H, W, U, v):\n"
        "    return np.array([v @ np.tanh(W @ s + U @ h) for h in H])\n",
    ],
    "encoder-layer-params": [
        "def encoder_layer_params(d_model, d_ff):\n    d = d_model\n"
        "    return 4 * (d * d + d) + (d * d_ff + d_ff) + (d_ff * d + d) + 2 * (2 * d)\n",
    ],
    "attention-weights": [
        "import numpy as np\ndef attention_weights(Q, K):\n    s = np.einsum('ik,jk->ij', Q, K) / "
        "np.sqrt(K.shape[1])\n"
        "    return np.exp(s - np.logaddexp.reduce(s, axis=1, keepdims=True))\n",
    ],
}


def _question(item: str, seed: int = 3) -> tuple[CodeAnswer, object]:
    question = banks.load("code").get(item).question(seed)
    assert isinstance(question.answer, CodeAnswer)
    return question.answer, question


@pytest.mark.parametrize(
    ("item", "index"), [(item, i) for item, sources in RIGHT.items() for i in range(len(sources))]
)
def test_equivalent_right_solutions_are_right(item: str, index: int) -> None:
    answer, _ = _question(item)
    graded = grade_code(answer, RIGHT[item][index])
    assert graded.status == "correct", graded.feedback
    assert graded.score == 1.0


def test_the_reference_itself_is_right_through_the_sandbox() -> None:
    for item in ("attention", "masked-softmax", "encoder-layer-params"):
        answer, _ = _question(item, 11)
        assert grade_code(answer, answer.reference).status == "correct"


NAMED = [
    (
        "attention",
        "import numpy as np\ndef attention(Q, K, V):\n    s = Q @ K.T\n"
        "    w = np.exp(s - s.max(1, keepdims=True))\n    return w / w.sum(1, keepdims=True) @ V\n",
        "no-scale",
    ),
    (
        "attention",
        "import numpy as np\ndef attention(Q, K, V):\n    s = Q @ K.T / np.sqrt(Q.shape[1])\n"
        "    w = np.exp(s)\n    return w / w.sum(1, keepdims=True) @ V\n",
        "unstable-softmax",
    ),
    (
        "attention",
        "import numpy as np\ndef attention(Q, K, V):\n    s = Q @ K / np.sqrt(Q.shape[1])\n"
        "    w = np.exp(s - s.max(1, keepdims=True))\n    return w / w.sum(1, keepdims=True) @ V\n",
        "no-transpose",
    ),
    (
        "masked-softmax",
        "import numpy as np\ndef masked_softmax(scores, mask):\n    s = np.where(mask, scores, -np.inf)\n"
        "    e = np.exp(s - s.max(-1, keepdims=True))\n    return e / e.sum(-1, keepdims=True)\n",
        "masked-row-nan",
    ),
    (
        "layer-norm",
        "import numpy as np\ndef layer_norm(x, gamma, beta, eps=1e-5):\n"
        "    return gamma * (x - x.mean(-1, keepdims=True)) / x.std(-1, keepdims=True) + beta\n",
        "no-epsilon",
    ),
    (
        "causal-mask",
        "import numpy as np\ndef causal_mask(T):\n    return np.triu(np.ones((T, T), bool))\n",
        "wrong-triangle",
    ),
]


@pytest.mark.parametrize(("item", "source", "tag"), NAMED)
def test_a_students_mistake_is_named(item: str, source: str, tag: str) -> None:
    answer, _ = _question(item)
    graded = grade_code(answer, source)
    assert graded.mistake is not None
    assert graded.mistake.tag == tag, graded.feedback
    assert graded.status in {"wrong", "partial"}


def test_the_shape_error_in_the_course_words() -> None:
    answer, _ = _question("attention")
    graded = grade_code(answer, NAMED[2][1])
    assert "the inner sizes must match; transpose K" in graded.feedback
    assert "@ (" in graded.feedback  # the example's shapes, as (T, d_k) @ (T, d_k)


def test_an_exception_names_its_line_and_a_wrong_shape_says_both_shapes() -> None:
    answer, _ = _question("attention")
    raising = "import numpy as np\ndef attention(Q, K, V):\n    x = 1\n    return Q @ V.T\n"
    graded = grade_code(answer, raising)
    assert graded.status == "wrong"
    assert "at line 4" in graded.feedback
    assert "inner sizes must match" in graded.feedback
    shaped = "import numpy as np\ndef attention(Q, K, V):\n    return Q @ K.T\n"
    graded = grade_code(answer, shaped)
    assert "the answer has shape" in graded.feedback


def test_partial_credit_by_test() -> None:
    answer, _ = _question("layer-norm")
    # right except on the constant row: a named mistake, most tests passed
    graded = grade_code(answer, NAMED[4][1])
    assert graded.status == "partial"
    assert 0 < graded.score < 1


def test_unreadable_missing_and_empty_code_are_invalid() -> None:
    answer, _ = _question("stable-softmax")
    for source in (
        "",
        "   \n",
        "def softmax(x:\n    return x\n",
        "def other(x):\n    return x\n",
        "x" * 200_000,
    ):
        assert grade_code(answer, source).status == "invalid", source[:40]


def test_too_slow_is_said() -> None:
    answer, _ = _question("stable-softmax")
    graded = grade_code(
        answer,
        "def softmax(x):\n    while True:\n        pass\n",
        limits=Limits(cpu_seconds=2, wall_seconds=120),
    )
    assert graded.status == "wrong"
    assert "too slow" in graded.feedback


def test_a_bank_without_code_items_imports_no_sandbox() -> None:
    probe = (
        "import sys\nfrom attnquiz.engine.bank import finding as banks\n"
        "q = banks.load('week1').items[0].question(1)\n"
        "from attnquiz.engine.grading.grade import grade\ngrade(q, '1')\n"
        "print(any(m.startswith('attnquiz.engine.code.') for m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=300
    )
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize("form", ["md", "html", "moodle", "stack", "qti", "json"])
def test_every_export_of_a_code_item_works(form: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "quiz"),
            "export",
            "code",
            "--all",
            "--students",
            "2",
            "--seed",
            "7",
            "--format",
            form,
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    if form == "moodle":
        root = ET.parse(out).getroot()
        essays = [q for q in root.findall("question") if q.get("type") == "essay"]
        assert len(essays) == 2 * len(TASKS)
        grader = essays[0].findtext("graderinfo/text") or ""
        assert "Reference solution" in grader
        assert "def attention(Q, K, V):" in grader
        assert "Moodle does not run code" in done.stderr
    if form == "md":
        sheet = (out / "worksheets.md").read_text()
        assert "def attention(Q, K, V):\n    ...\n" in sheet  # the stub
        assert "def attention(Q, K, V):" in (out / "key.md").read_text()


def test_quiz_check_of_the_code_bank_passes_and_names_the_sandbox() -> None:
    from attnquiz.engine.check.checks import check_bank

    report = check_bank(banks.load("code"), variants=5)
    assert report.ok, [(i.item, i.failures) for i in report.items if not i.ok]
    assert {item.kind for item in report.items} == {"code"}
    for word in ("network namespace", "Landlock", "seccomp", "rlimits"):
        assert word in report.environment
    assert report.to_json()["environment"] == report.environment
