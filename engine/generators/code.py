"""Code questions: write a NumPy function (attention, softmax, masks, heads, ...) or a PyTorch module.

Each generator draws one number, the seed of the variant's tests (`attnquiz.engine.code.tasks`), and
phrases the task: the signature, the stub, the example's inputs and the answer on them. The answer is
a `CodeAnswer`, graded by running the student's function in the sandbox; the named mistakes are the
task's mutants. The reference solution is the worked solution.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attnquiz.engine.answers.kinds import CodeAnswer, Mistake
from attnquiz.engine.code.task_model import CodeTask, shapes_of
from attnquiz.engine.code.tasks import task
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant


def _literal(value: Any, indent: int = 0) -> str:
    """An input as Python source (what the student would type to try it), continued lines lined up
    under the first after ``indent`` characters."""
    if isinstance(value, np.ndarray):
        text = np.array2string(value, separator=", ", precision=4, suppress_small=True, max_line_width=88)
        return "np.array(" + text.replace("\n", "\n" + " " * (indent + len("np.array("))) + ")"
    if isinstance(value, float):
        return repr(round(value, 6))
    return repr(value)


def _output(value: Any, names: str = "") -> str:
    """What the reference returns, as the student would print it; a tuple's values under their
    ``names`` (``out, weights``)."""
    if isinstance(value, tuple) and names:
        return "\n".join(
            f"{name} =\n{_output(item)}" for name, item in zip(names.split(", "), value, strict=True)
        )
    if isinstance(value, np.ndarray):
        return np.array2string(
            np.asarray(value, dtype=float), separator=", ", precision=4, suppress_small=True
        )
    return repr(value)


def _fence(source: str) -> str:
    return f"```python\n{source.rstrip()}\n```"


def code_variant(rng: np.random.Generator, name: str) -> Variant:
    """The variant of the code task ``name`` for ``rng``."""
    code_task: CodeTask = task(name)
    draw = int(rng.integers(0, 2**62))
    example = code_task.tests(draw)[0]
    names = [a.split("=")[0] for a in code_task.arguments]
    with np.errstate(all="ignore"):
        output = code_task.reference(*example)
    shapes = shapes_of(code_task.arguments, example)
    answer = CodeAnswer(
        task=name,
        function=code_task.function,
        signature=code_task.signature,
        stub=code_task.stub(),
        reference=code_task.source(),
        draw=draw,
        what=code_task.what,
        library=code_task.library,
    )
    if code_task.example is not None:
        call, returned = code_task.example(example)
        shown = f"For example,\n\n{_fence(call)}\n\ngives\n\n{_fence(_output(output, returned))}"
    else:
        call = "\n".join(f"{n} = {_literal(v, len(n) + 3)}" for n, v in zip(names, example, strict=False))
        shown = (
            f"For example, with\n\n{_fence(call)}\n\n"
            f"`{code_task.function}({', '.join(names[: len(example)])})` returns\n\n{_fence(_output(output))}"
        )
    prompt = (
        f"{code_task.task}\n\nStart from this stub:\n\n{_fence(answer.stub)}\n\n{shown}\n\n"
        "It is also run on hidden tests, including edge cases."
    )
    mistakes = []
    for mutant in code_task.mutants:
        feedback = mutant.feedback
        for arg, shape in shapes.items():
            feedback = feedback.replace("{shape:" + arg + "}", shape)
        mistakes.append(Mistake(mutant.tag, frozenset({mutant.tag}), feedback))
    return Variant(
        prompt=prompt,
        answer=answer,
        solution=(f"A reference solution:\n\n{_fence(answer.reference)}",),
        mistakes=mistakes,
        inputs={"draw": draw},
    )


@generator
def code_attention(rng: np.random.Generator, /) -> Variant:
    """Write scaled dot-product attention, softmax(Q Kᵀ / √d_k) V, in NumPy."""
    return code_variant(rng, "attention")


@generator
def code_attention_weights(rng: np.random.Generator, /) -> Variant:
    """Write the attention weights softmax(Q Kᵀ / √d_k) in NumPy."""
    return code_variant(rng, "attention-weights")


@generator
def code_softmax(rng: np.random.Generator, /) -> Variant:
    """Write a numerically stable row softmax in NumPy."""
    return code_variant(rng, "softmax")


@generator
def code_causal_mask(rng: np.random.Generator, /) -> Variant:
    """Write a decoder's causal mask in NumPy."""
    return code_variant(rng, "causal-mask")


@generator
def code_masked_softmax(rng: np.random.Generator, /) -> Variant:
    """Write a masked softmax (hidden keys get 0; a fully masked row gets zeros) in NumPy."""
    return code_variant(rng, "masked-softmax")


@generator
def code_split_heads(rng: np.random.Generator, /) -> Variant:
    """Write the split of (T, d_model) into h heads, (h, T, d_k), in NumPy."""
    return code_variant(rng, "split-heads")


@generator
def code_merge_heads(rng: np.random.Generator, /) -> Variant:
    """Write the merge of h heads (h, T, d_k) back into (T, h·d_k) in NumPy."""
    return code_variant(rng, "merge-heads")


@generator
def code_positional_encoding(rng: np.random.Generator, /) -> Variant:
    """Write the sinusoidal positional encoding in NumPy."""
    return code_variant(rng, "positional-encoding")


@generator
def code_layer_norm(rng: np.random.Generator, /) -> Variant:
    """Write LayerNorm over each token's features in NumPy."""
    return code_variant(rng, "layer-norm")


@generator
def code_additive_scores(rng: np.random.Generator, /) -> Variant:
    """Write Bahdanau's additive attention scores in NumPy."""
    return code_variant(rng, "additive-scores")


@generator
def code_encoder_layer_params(rng: np.random.Generator, /) -> Variant:
    """Write a function counting one encoder layer's parameters."""
    return code_variant(rng, "encoder-layer-params")


@generator
def code_self_attention_torch(rng: np.random.Generator, /) -> Variant:
    """Implement the notes' SelfAttention module in PyTorch (the Day 13 assignment)."""
    return code_variant(rng, "self-attention-torch")
