"""The generators' figures over many seeds: each draws this variant's own numbers (the ones its answer
is computed from), and every renderer draws it."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np
import pytest

from attnquiz.engine import numerics
from attnquiz.engine.answers.kinds import MatrixAnswer, NumericAnswer, VectorAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loaded import Bank
from attnquiz.engine.export.figures import markdown as figure_markdown
from attnquiz.engine.export.figures import svg as figure_svg
from attnquiz.engine.export.figures import text as figure_text
from attnquiz.engine.export.figures import typst as figure_typst
from attnquiz.engine.figures import Heatmap, LinePlot, figure_json
from attnquiz.engine.variant import Question

SEEDS = range(40)


@cache
def bank(name: str) -> Bank:
    return banks.load(name)


def instances(bank_name: str, item: str) -> list[Question]:
    entry = bank(bank_name).get(item)
    out = [entry.question(seed) for seed in SEEDS]
    if entry.original_kwargs is not None:
        out.append(entry.original())
    return out


def heatmaps(question: Question) -> list[Heatmap]:
    return [f for f in question.variant.figures if isinstance(f, Heatmap)]


def lines(question: Question) -> list[LinePlot]:
    return [f for f in question.variant.figures if isinstance(f, LinePlot)]


def values(figure: Heatmap) -> np.ndarray:
    return np.array([list(row) for row in figure.values])


def target(q: Question) -> Any:
    """The answer's value: a number, a vector's entries or a matrix's rows."""
    answer = q.answer
    if isinstance(answer, VectorAnswer):
        return np.array(answer.values)
    if isinstance(answer, MatrixAnswer):
        return np.array(answer.rows)
    assert isinstance(answer, NumericAnswer)
    return answer.value


def softmax_row(q: Question) -> None:
    (figure,) = heatmaps(q)
    expected = numerics.softmax(np.asarray(q.variant.inputs["scores"], dtype=float))
    np.testing.assert_allclose(values(figure)[0], expected, atol=1e-12)
    np.testing.assert_allclose(values(figure)[0], target(q), atol=1e-12)


def self_attention(q: Question) -> None:
    (figure,) = heatmaps(q)
    x = np.asarray(q.variant.inputs["x"], dtype=float)
    np.testing.assert_allclose(values(figure), numerics.softmax(numerics.attention_scores(x, x)), atol=1e-12)
    row = q.variant.inputs["token"] - 1
    np.testing.assert_allclose(values(figure)[row], target(q), atol=1e-12)


def sdpa_outputs(q: Question) -> None:
    (figure,) = heatmaps(q)
    qm, km, vm = (np.asarray(q.variant.inputs[k], dtype=float) for k in ("q", "k", "v"))
    np.testing.assert_allclose(
        values(figure), numerics.softmax(numerics.attention_scores(qm, km)), atol=1e-12
    )
    np.testing.assert_allclose(values(figure) @ vm, target(q), atol=1e-12)


def sdpa_token(q: Question) -> None:
    (figure,) = heatmaps(q)
    x = np.asarray(q.variant.inputs["x"], dtype=float)
    row = values(figure)[q.variant.inputs["token"] - 1]
    np.testing.assert_allclose(row @ x, target(q), atol=1e-12)


def causal_weights(q: Question) -> None:
    scores, weights = heatmaps(q)
    s = np.asarray(q.variant.inputs["scores"], dtype=float)
    hidden = ~numerics.causal_mask(len(s))
    assert scores.mask is not None
    assert weights.mask is not None
    assert (np.array(scores.mask) == hidden).all()
    assert (np.array(weights.mask) == hidden).all()
    np.testing.assert_array_equal(values(scores), s)
    np.testing.assert_allclose(values(weights), target(q), atol=1e-12)
    assert scores.cell_text(0, 1) == "−∞"
    assert weights.cell_text(0, 1) == "0"


def causal_matrix(q: Question) -> None:
    (figure,) = heatmaps(q)
    np.testing.assert_array_equal(values(figure), target(q))
    assert figure.mask is not None
    assert (np.array(figure.mask) == (values(figure) == 0)).all()


def padding(q: Question) -> None:
    (figure,) = heatmaps(q)
    np.testing.assert_allclose(values(figure)[0], target(q), atol=1e-12)
    real = q.variant.inputs["real"]
    assert figure.mask is not None
    assert list(figure.mask[0]) == [j >= real for j in range(len(figure.cols))]
    assert all("pad" in c for c in figure.cols[real:])
    assert not any("pad" in c for c in figure.cols[:real])


def pe_vector(q: Question) -> None:
    (plot,) = lines(q)
    pos, d = q.variant.inputs["position"], q.variant.inputs["d_model"]
    at = plot.x.index(float(pos))  # the position asked for is a point of the curves
    for series in plot.series:
        dim = int(series.label.split()[1])
        assert series.values[at] == pytest.approx(target(q)[dim], abs=1e-12)
        for x, y in zip(plot.x[::17], series.values[::17], strict=True):
            assert y == pytest.approx(numerics.sinusoidal_encoding(x, d)[dim], abs=1e-12)


def pe_pair(q: Question) -> None:
    (plot,) = lines(q)
    pos = q.variant.inputs["position"]
    at = plot.x.index(float(pos))
    pair = [s.values[at] for s in plot.series]
    np.testing.assert_allclose(pair, target(q), atol=1e-12)
    assert len(plot.x) <= 400


def pe_similarity(q: Question) -> None:
    (plot,) = lines(q)
    k = q.variant.inputs["offset"]
    at = plot.x.index(float(k))
    np.testing.assert_allclose([s.values[at] for s in plot.series], target(q), atol=1e-12)
    first, second = plot.series
    np.testing.assert_allclose(first.values, second.values, atol=1e-9)  # the curves coincide


def it_referent(q: Question) -> None:
    scores, weights = heatmaps(q)
    assert scores.where == "prompt"
    assert weights.where == "solution"
    s = np.asarray(q.variant.inputs["scores"], dtype=float)
    np.testing.assert_array_equal(values(scores), s)
    np.testing.assert_allclose(values(weights), numerics.softmax(s), atol=1e-12)
    referent = {"animal": 1, "trophy": 1, "street": 5}[q.variant.inputs["sentence"]]
    assert values(weights)[-1, referent] == pytest.approx(target(q), abs=1e-12)
    assert scores.rows[-1] == "it"


def saturation(q: Question) -> None:
    (plot,) = lines(q)
    assert plot.where == "prompt"
    z = np.asarray(q.variant.inputs["pattern"], dtype=float)
    unscaled, scaled = plot.series
    for x, y in zip(plot.x, unscaled.values, strict=True):
        assert y == pytest.approx(float(numerics.softmax(math.sqrt(2.0**x) * z).max()), abs=1e-12)
    assert scaled.values == pytest.approx([float(numerics.softmax(z).max())] * len(plot.x))
    d_k = q.variant.inputs["d_k"]
    at = plot.x.index(math.log2(d_k)) if math.log2(d_k) in plot.x else None
    if at is not None:
        assert unscaled.values[at] == pytest.approx(target(q), abs=1e-12)


CASES: list[tuple[str, str, Callable[[Question], None]]] = [
    ("week1", "softmax-refresher", softmax_row),
    ("week1", "additive-weights", softmax_row),
    ("week1", "self-attention-identity", self_attention),
    ("week1", "sdpa-two-tokens", sdpa_outputs),
    ("week1", "sdpa-three-tokens", sdpa_token),
    ("week1", "sdpa-three-tokens-row2", sdpa_token),
    ("week1", "it-referent-weight", it_referent),
    ("week1", "unscaled-saturation", saturation),
    ("week2", "causal-mask-weights", causal_weights),
    ("week2", "causal-mask-matrix", causal_matrix),
    ("week2", "padding-mask-weights", padding),
    ("week2", "pe-vector", pe_vector),
    ("week2", "pe-pair", pe_pair),
    ("week2", "pe-relative-offset", pe_similarity),
]


@pytest.mark.parametrize(("bank_name", "item", "check"), CASES, ids=[c[1] for c in CASES])
def test_each_figure_draws_the_variants_own_numbers(
    bank_name: str, item: str, check: Callable[[Question], None]
) -> None:
    for question in instances(bank_name, item):
        assert question.variant.figures, f"{item} seed {question.seed} has no figure"
        check(question)


@pytest.mark.parametrize(("bank_name", "item"), [(c[0], c[1]) for c in CASES], ids=[c[1] for c in CASES])
def test_each_figure_renders_in_every_format(bank_name: str, item: str) -> None:
    for question in instances(bank_name, item)[:8]:
        for figure in question.variant.figures:
            assert figure_json(figure)["kind"] in ("heatmap", "line")
            assert figure_svg.svg(figure).startswith("<svg")
            assert figure_typst.figure(figure).startswith("#block(")
            assert "|" in figure_markdown.figure(figure)
            for width in (40, 80):
                text = figure_text.plain_text(figure, width)
                assert max(len(line) for line in text.splitlines()) <= width


def test_the_originals_reproduce_the_catalogue_answers() -> None:
    assert bank("week1").get("it-referent-weight").original().answer.format() == "0.98"
    assert bank("week1").get("unscaled-saturation").original().answer.format() == "0.99"
