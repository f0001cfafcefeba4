"""The import paths plugins use keep working when the engine's folders move.

docs/authoring.md documents these names for instructors' own generator modules; a plugin written
against them must keep loading, and each name must be the engine's own object (not a copy that
grading would not recognise).
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from attnquiz.engine.answers import kinds
from attnquiz.engine.answers import rounding as answers_rounding

PLUGIN_NAMES = [
    ("attnquiz.engine.answers", "Mistake", kinds),
    ("attnquiz.engine.answers", "Tolerance", kinds),
    ("attnquiz.engine.answers", "NumericAnswer", kinds),
    ("attnquiz.engine.answers", "IntegerAnswer", kinds),
    ("attnquiz.engine.answers", "VectorAnswer", kinds),
    ("attnquiz.engine.answers", "MatrixAnswer", kinds),
    ("attnquiz.engine.answers", "ShapeAnswer", kinds),
    ("attnquiz.engine.answers", "ExpressionAnswer", kinds),
    ("attnquiz.engine.answers", "ChoiceAnswer", kinds),
    ("attnquiz.engine.answers", "Option", kinds),
    ("attnquiz.engine.answers", "Formula", kinds),
    ("attnquiz.engine.answers", "Part", kinds),
    ("attnquiz.engine.answers", "PartsAnswer", kinds),
    ("attnquiz.engine.answers", "ExplainAnswer", kinds),
    ("attnquiz.engine.answers", "symbols", kinds),
    ("attnquiz.engine.rounding", "rounded_early", answers_rounding),
    ("attnquiz.engine.rounding", "ROUNDED_EARLY", answers_rounding),
]


@pytest.mark.parametrize(("module", "name", "home"), PLUGIN_NAMES)
def test_a_documented_plugin_name_is_the_engines_own(module: str, name: str, home: object) -> None:
    assert getattr(importlib.import_module(module), name) is getattr(home, name)


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("attnquiz.engine.numerics", "softmax"),
        ("attnquiz.engine.registry", "generator"),
        ("attnquiz.engine.variant", "Variant"),
        ("attnquiz.engine.figures", "Heatmap"),
        ("attnquiz.engine.figures", "LinePlot"),
        ("attnquiz.engine.figures", "Series"),
        ("attnquiz.engine.generators.common", "tex_matrix"),
        ("attnquiz.engine.generators.common", "tex_vector"),
        ("attnquiz.engine.generators.formulas", "checked"),
    ],
)
def test_the_paths_the_guide_imports_from_exist(module: str, name: str) -> None:
    assert callable(getattr(importlib.import_module(module), name))


def test_a_plugin_of_the_old_paths_builds_and_grades(tmp_path: Path) -> None:
    """A generator module written as the guide writes one, with the early-rounding helper imported
    from its old place, registers, builds a variant and is graded like a built-in one."""
    from attnquiz.engine.bank.loader import load_bank_file
    from attnquiz.engine.grading.grade import grade

    folder = tmp_path
    (folder / "old_paths.py").write_text(
        "import numpy as np\n"
        "from attnquiz.engine.answers import Mistake, NumericAnswer, Tolerance\n"
        "from attnquiz.engine.registry import generator\n"
        "from attnquiz.engine.rounding import rounded_early\n"
        "from attnquiz.engine.variant import Variant\n\n\n"
        "@generator\n"
        "def old_paths_tanh_sum(rng: np.random.Generator, /) -> Variant:\n"
        "    '''The sum of two tanh values.'''\n"
        "    x = rng.uniform(0.5, 2.0, size=2).round(1)\n"
        "    tol = Tolerance.decimals(2)\n"
        "    total = float(np.tanh(x).sum())\n"
        "    slips = rounded_early(tol, np.tanh(x), sum, 'the $\\\\tanh$ values')\n"
        "    return Variant(\n"
        "        prompt=f'Compute $\\\\tanh({x[0]}) + \\\\tanh({x[1]})$.',\n"
        "        answer=NumericAnswer(total, tol),\n"
        "        mistakes=[Mistake('no-tanh', float(x.sum()), 'You added the inputs.'), *slips],\n"
        "        solution=['Add the two tanh values.'],\n"
        "        inputs={'x': x.tolist()},\n"
        "    )\n",
        encoding="utf-8",
    )
    (folder / "old.yaml").write_text(
        "bank: old-paths\ntitle: Old paths\nplugins: [old_paths.py]\nitems:\n"
        "  - id: tanh-sum\n    source: a plugin of quiz 0.2\n    topic: tanh\n"
        "    generator: old_paths_tanh_sum\n",
        encoding="utf-8",
    )
    bank = load_bank_file(folder / "old.yaml", plugins=True)
    question = bank.items[0].question(3)
    right = grade(question, question.answer.format())
    wrong = grade(question, str(sum(question.variant.inputs["x"])))
    assert (right.status, right.score) == ("correct", 1.0)
    assert wrong.mistake is not None
    assert wrong.mistake.tag == "no-tanh"
