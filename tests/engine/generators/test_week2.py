"""Week 2 items: originals against the notes, variants against closed forms, grading, and their numerics."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from attnquiz.engine import numerics
from attnquiz.engine.answers.kinds import (
    ChoiceAnswer,
    IntegerAnswer,
    MatrixAnswer,
    NumericAnswer,
    ShapeAnswer,
    VectorAnswer,
)
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loaded import Bank, BankItem, NoOriginalError
from attnquiz.engine.generators import decoder, flops, masks, normalisation, positions, tokens
from attnquiz.engine.generators.common import MODEL_WIDTHS
from attnquiz.engine.grading import grade as grading
from attnquiz.engine.variant import Question, Variant
from tests.engine.generators.grading_checks import assert_grades_as_itself

SEEDS = range(120)


@pytest.fixture(scope="module")
def bank() -> Bank:
    return banks.load("week2")


def mistakes_of(question: Question | Variant) -> dict[str, Any]:
    variant = question.variant if isinstance(question, Question) else question
    return {m.tag: m.value for m in variant.mistakes}


def shown_mistakes(question: Question) -> dict[str, str]:
    """Each mistake written at the answer's precision, as the notes and the catalogue print them."""
    return {m.tag: m.format(question.answer) for m in question.variant.mistakes}


def rng() -> np.random.Generator:
    return np.random.default_rng(0)


# ---------------------------------------------------------------------------------------------
# Originals: the notes' answers at the notes' precision, and the catalogue's wrong values
# ---------------------------------------------------------------------------------------------

ORIGINALS = [
    pytest.param(
        "pe-vector",
        "[0.841, 0.540, 0.010, 1.000]",
        {
            "sin-cos-swapped": "[0.540, 0.841, 1.000, 0.010]",
            "exponent-i-over-d": "[0.841, 0.540, 0.100, 0.995]",
        },
        id="s003-wp-sinusoidal-pos0-pos1",
    ),
    pytest.param(
        "pe-pair", "[0.909, -0.416]", {"sin-cos-swapped": "[-0.416, 0.909]"}, id="s003-yt-pe-position-2"
    ),
    pytest.param(
        "pe-denominator",
        "100",
        {"exponent-i-over-d": "10.0", "frequency-not-denominator": "0.0100"},
        id="s003-wp-sinusoidal-denominator",
    ),
    pytest.param(
        "causal-mask-weights",
        "[[1.000, 0.000, 0.000], [0.269, 0.731, 0.000], [0.090, 0.245, 0.665]]",
        {
            "softmax-over-queries": "[[0.333, 0.000, 0.000], [0.333, 0.500, 0.000], [0.333, 0.500, 1.000]]",
            "no-mask": "[[0.090, 0.245, 0.665], [0.090, 0.245, 0.665], [0.090, 0.245, 0.665]]",
            "masked-score-zero": "[[0.576, 0.212, 0.212], [0.245, 0.665, 0.090], [0.090, 0.245, 0.665]]",
            "no-renormalise": "[[0.090, 0.000, 0.000], [0.090, 0.245, 0.000], [0.090, 0.245, 0.665]]",
        },
        id="s003-wp-causal-mask",
    ),
    pytest.param(
        "causal-mask-matrix",
        "[[1, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0], [1, 1, 1, 0, 0, 0], "
        "[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1]]",
        {},
        id="s003-causal-mask-T6",
    ),
    pytest.param(
        "masked-entry-count",
        "15",
        {"counted-visible": "21", "both-triangles": "30"},
        id="causal-mask-T6-count",
    ),
    pytest.param(
        "padding-mask-weights",
        "[0.378, 0.622, 0.000]",
        {"pad-not-masked": "[0.140, 0.231, 0.629]", "pad-score-zero": "[0.307, 0.506, 0.186]"},
        id="s003-yt-padding-mask",
    ),
    pytest.param(
        "layernorm-vector",
        "[-1.342, -0.447, 0.447, 1.342]",
        {"sample-std": "[-1.162, -0.387, 0.387, 1.162]"},
        id="s003-wp-layernorm-1234",
    ),
    pytest.param("layernorm-constant", "[0.000, 0.000, 0.000, 0.000]", {}, id="s003-yt-layernorm-constant"),
    pytest.param("residual-add", "[1.10, 1.80]", {"forgot-x": "[0.10, -0.20]"}, id="s003-yt-residual"),
    pytest.param("skip-slopes", "[0.100, 1.10]", {"no-skip": "[0.100, 0.100]"}, id="s003-wp-skip-connection"),
    pytest.param(
        "decoder-layer-params",
        "4,204,032",
        {"forgot-cross-attention": "3,152,384", "weights-only": "4,194,304"},
        id="decoder-layer-512-2048",
    ),
    pytest.param(
        "decoder-stack-params",
        "25,224,192",
        {"shared-layer-weights": "4,204,032", "forgot-cross-attention": "18,914,304"},
        id="decoder-stack-6-layers",
    ),
    pytest.param(
        "dense-flops-per-token", "14,155,776", {"multiply-adds": "7,077,888"}, id="s002-dense-24d2-at-768"
    ),
    pytest.param(
        "score-flops-per-token", "14,155,776", {"qk-only": "7,077,888"}, id="s002-scores-4nd-at-crossover"
    ),
    pytest.param("flops-crossover", "4,608", {"qk-only": "9,216"}, id="s002-fig-attention-dense-crossover"),
    pytest.param("score-growth", "4", {"linear-in-length": "2"}, id="s000-score-entries-doubling"),
    pytest.param(
        "masked-score-entries",
        "1,152",
        {"linear-in-length": "96", "forgot-heads": "576", "forgot-batch": "288"},
        id="s000-score-entries",
    ),
    pytest.param(
        "blocks-params", "3,280", {"weights-only": "3,072", "no-norms": "3,216"}, id="s002-block-params-3280"
    ),
    pytest.param("token-ids", "[0, 1, 2]", {}, id="s003-wp-text-to-numbers"),
    pytest.param(
        "sentence-matrix-shape", "[6, 512]", {"transposed": "[512, 6]"}, id="s003-sentence-matrix-6x512"
    ),
]


@pytest.mark.parametrize(("item_id", "expected", "wrong"), ORIGINALS)
def test_original_gives_the_notes_answer_and_the_catalogued_mistakes(
    bank: Bank, item_id: str, expected: str, wrong: dict[str, str]
) -> None:
    question = bank.get(item_id).original()
    assert question.answer.format() == expected
    found = shown_mistakes(question)
    for tag, value in wrong.items():
        assert found.get(tag) == value, f"{tag}: {found.get(tag)!r} != {value!r}"


def test_original_exact_values(bank: Bank) -> None:
    # The values behind the notes' rounded figures, where they are exact.
    assert bank.get("pe-denominator").original().answer.matches(100.0)
    assert bank.get("masked-entry-count").original().answer == IntegerAnswer(15)
    assert bank.get("decoder-layer-params").original().answer == IntegerAnswer(4_204_032)
    assert bank.get("flops-crossover").original().answer == IntegerAnswer(4_608)
    assert bank.get("blocks-params").original().answer == IntegerAnswer(3_280)
    assert bank.get("score-growth").original().answer == IntegerAnswer(4)
    assert bank.get("sentence-matrix-shape").original().answer == ShapeAnswer((6, 512))
    constant = bank.get("layernorm-constant").original().answer
    assert isinstance(constant, VectorAnswer)
    assert constant.values == (0.0, 0.0, 0.0, 0.0)
    mask = bank.get("causal-mask-matrix").original().answer
    assert isinstance(mask, MatrixAnswer)
    # The notes print the first three rows: token 3 sees tokens 1, 2, 3 only.
    assert mask.rows[:3] == ((1, 0, 0, 0, 0, 0), (1, 1, 0, 0, 0, 0), (1, 1, 1, 0, 0, 0))


def test_original_choice_items_reproduce_the_notes(bank: Bank) -> None:
    family = bank.get("family-for-task").original()
    assert isinstance(family.answer, ChoiceAnswer)
    [right] = [o.text for o in family.answer.options if o.correct]
    assert (
        right == "(a) encoder-only (BERT-style); (b) decoder-only (GPT-style); (c) encoder–decoder (T5-style)"
    )
    assert "classify customer reviews" in family.variant.prompt
    assert "translate English to French" in family.variant.prompt

    cross = bank.get("family-cross-attention").original()
    assert isinstance(cross.answer, ChoiceAnswer)
    assert [o.text for o in cross.answer.options] == ["BERT", "GPT", "T5"]
    assert cross.answer.format() == "C"

    decoded = bank.get("decode-ids").original()
    assert isinstance(decoded.answer, ChoiceAnswer)
    assert [o.text for o in decoded.answer.options if o.correct] == ['"I love AI"']
    assert len({o.text for o in decoded.answer.options}) == 4


def test_students_notes_do_not_give_away_the_original_answer(bank: Bank) -> None:
    for entry in bank.items:
        if entry.has_original:
            original = entry.original()
            answer = original.answer
            # A one- or two-character answer (4) may well appear among the inputs (B = 4).
            if not isinstance(answer, ChoiceAnswer) and len(answer.format()) > 2:
                assert answer.format() not in original.student_note, entry.id


def test_items_without_numbers_in_the_notes_have_no_original_but_a_note(bank: Bank) -> None:
    for item_id in (
        "pe-relative-offset",
        "layernorm-affine",
        "deep-skip-slopes",
        "cross-attention-scores",
        "cross-attention-output",
        "attention-flop-share",
        "cross-score-entries",
        "embedding-table-shape",
    ):
        entry = bank.get(item_id)
        assert not entry.has_original, item_id
        assert entry.item.note, item_id
        with pytest.raises(NoOriginalError):
            entry.original()


def test_bank_covers_the_issue(bank: Bank) -> None:
    assert len(bank.items) >= 20
    assert set(bank.topics()) == {
        "positional-encoding",
        "masking",
        "residual-layernorm",
        "decoder",
        "complexity",
        "architecture-families",
        "tokenization-embedding",
    }
    for entry in bank.items:
        cited = ("Day 13 notes", "Key results", "Week 1 guide", "Essay")
        assert entry.item.source.startswith(cited), entry.id
        assert entry.item.tags, entry.id


# ---------------------------------------------------------------------------------------------
# Every variant against a closed form written out here (not through attnquiz.engine.numerics)
# ---------------------------------------------------------------------------------------------


def pe(pos: float, d: int) -> list[float]:
    out: list[float] = []
    for i in range(d // 2):
        angle = pos / 10000 ** (2 * i / d)
        out += [math.sin(angle), math.cos(angle)]
    return out


def softmax_row(scores: list[float]) -> list[float]:
    top = max(scores)
    e = [math.exp(s - top) for s in scores]
    return [v / sum(e) for v in e]


def causal(scores: list[list[float]]) -> list[list[float]]:
    t = len(scores)
    return [softmax_row(row[: r + 1]) + [0.0] * (t - r - 1) for r, row in enumerate(scores)]


def layer_norm(
    x: list[float], gamma: list[float] | None = None, beta: list[float] | None = None
) -> list[float]:
    mean = sum(x) / len(x)
    var = sum((v - mean) ** 2 for v in x) / len(x)
    g = gamma or [1.0] * len(x)
    b = beta or [0.0] * len(x)
    return [(v - mean) / math.sqrt(var + 1e-5) * gi + bi for v, gi, bi in zip(x, g, b, strict=True)]


def padded(p: dict[str, Any]) -> list[float]:
    real = p["real"]
    return softmax_row(p["scores"][:real]) + [0.0] * (len(p["scores"]) - real)


def decoder_layer(d: int, f: int) -> int:
    return 2 * (4 * d * d + 4 * d) + 2 * d * f + f + d + 6 * d


FORMULAS: dict[str, Any] = {
    "pe-vector": lambda p: tuple(pe(p["position"], p["d_model"])),
    "pe-pair": lambda p: tuple(pe(p["position"], p["d_model"])[2 * p["pair"] : 2 * p["pair"] + 2]),
    "pe-denominator": lambda p: 10000 ** (2 * p["pair"] / p["d_model"]),
    "pe-relative-offset": lambda p: tuple(
        sum(math.cos(p["offset"] / 10000 ** (2 * i / p["d_model"])) for i in range(p["d_model"] // 2))
        for _ in range(2)
    ),
    "causal-mask-weights": lambda p: tuple(tuple(r) for r in causal(p["scores"])),
    "causal-mask-matrix": lambda p: tuple(
        tuple(1.0 if j <= i else 0.0 for j in range(p["t"])) for i in range(p["t"])
    ),
    "masked-entry-count": lambda p: p["t"] * (p["t"] - 1) // 2,
    "padding-mask-weights": lambda p: tuple(padded(p)),
    "layernorm-vector": lambda p: tuple(layer_norm(p["x"])),
    "layernorm-constant": lambda p: tuple(p["beta"]),
    "layernorm-affine": lambda p: tuple(layer_norm(p["x"], p["gamma"], p["beta"])),
    "residual-add": lambda p: tuple(a + b for a, b in zip(p["x"], p["sublayer"], strict=True)),
    "skip-slopes": lambda p: (p["slope"] ** p["layers"], (1 + p["slope"]) ** p["layers"]),
    "deep-skip-slopes": lambda p: (p["slope"] ** p["layers"], (1 + p["slope"]) ** p["layers"]),
    "cross-attention-scores": lambda p: (p["t_target"], p["t_source"]),
    "cross-attention-output": lambda p: (p["t_target"], p["d_model"]),
    "decoder-layer-params": lambda p: decoder_layer(p["d_model"], p["d_ff"]),
    "decoder-stack-params": lambda p: p["layers"] * decoder_layer(p["d_model"], p["d_ff"]),
    "dense-flops-per-token": lambda p: 24 * p["d_model"] ** 2,
    "score-flops-per-token": lambda p: 4 * p["context"] * p["d_model"],
    "attention-flop-share": lambda p: p["context"] / (6 * p["d_model"] + p["context"]),
    "flops-crossover": lambda p: 2 * p["d_model"] + p["d_ff"],
    "score-growth": lambda p: p["factor"] ** 2,
    "masked-score-entries": lambda p: p["batch"] * p["heads"] * p["t_target"] ** 2,
    "cross-score-entries": lambda p: p["batch"] * p["heads"] * p["t_target"] * p["t_source"],
    "blocks-params": lambda p: p["layers"] * (12 * p["d_model"] ** 2 + 13 * p["d_model"]),
    "token-ids": lambda p: tuple(float(p["vocab"][w]) for w in p["sentence"].split()),
    "sentence-matrix-shape": lambda p: (p["tokens"], p["d_model"]),
    "embedding-table-shape": lambda p: (p["vocab_size"], p["d_model"]),
}


@pytest.mark.parametrize("item_id", sorted(FORMULAS))
def test_every_variant_matches_its_closed_form(bank: Bank, item_id: str) -> None:
    entry = bank.get(item_id)
    formula = FORMULAS[item_id]
    questions = [entry.question(seed) for seed in SEEDS]
    if entry.has_original:
        questions.append(entry.original())
    for question in questions:
        expected = formula(dict(question.variant.inputs))
        assert question.answer.matches(expected), f"{question.code}: {question.answer.format()} != {expected}"


def test_variants_draw_realistic_sizes(bank: Bank) -> None:
    for seed in SEEDS:
        for item_id in (
            "decoder-layer-params",
            "decoder-stack-params",
            "flops-crossover",
            "cross-attention-output",
        ):
            p = bank.get(item_id).question(seed).variant.inputs
            assert p["d_model"] in MODEL_WIDTHS, (item_id, p)
            if "d_ff" in p:
                assert p["d_ff"] in (2 * p["d_model"], 4 * p["d_model"], 8 * p["d_model"]), p
            if "heads" in p:
                assert p["d_model"] % p["heads"] == 0, p
        pair = bank.get("pe-pair").question(seed).variant.inputs
        # Denominators 1, 10, 100 or 1000: the exponent 2i/d is a whole number of quarters.
        assert (8 * pair["pair"]) % pair["d_model"] == 0, pair
        offsets = bank.get("pe-relative-offset").question(seed).variant.inputs
        assert offsets["starts"][0] != offsets["starts"][1]


def test_causal_weights_are_lower_triangular_rows_of_one(bank: Bank) -> None:
    for seed in SEEDS:
        answer = bank.get("causal-mask-weights").question(seed).answer
        assert isinstance(answer, MatrixAnswer)
        for i, row in enumerate(answer.rows):
            assert math.isclose(sum(row), 1.0)
            assert all(v == 0 for v in row[i + 1 :])


def test_relative_offset_dot_products_are_equal(bank: Bank) -> None:
    for seed in SEEDS:
        answer = bank.get("pe-relative-offset").question(seed).answer
        assert isinstance(answer, VectorAnswer)
        assert math.isclose(answer.values[0], answer.values[1], abs_tol=1e-12)


def test_family_variants_pair_every_task_with_its_family(bank: Bank) -> None:
    entry = bank.get("family-for-task")
    seen: set[str] = set()
    for seed in SEEDS:
        question = entry.question(seed)
        answer = question.answer
        assert isinstance(answer, ChoiceAnswer)
        assert not answer.multiple
        assert len({o.text for o in answer.options}) == len(answer.options) == 4
        p = question.variant.inputs
        assert sorted(p["families"]) == sorted(decoder.FAMILY_ORDER)
        for task, family in zip(p["tasks"], p["families"], strict=True):
            assert task in decoder.TASKS[family]
            seen.add(task)
    assert len(seen) > 6


def test_decode_ids_options_are_distinct_and_one_decodes(bank: Bank) -> None:
    for seed in SEEDS:
        question = bank.get("decode-ids").question(seed)
        answer = question.answer
        assert isinstance(answer, ChoiceAnswer)
        texts = [o.text for o in answer.options]
        assert len(set(texts)) == len(texts)
        p = question.variant.inputs
        words = numerics.decode_ids(p["ids"], p["vocab"])
        assert [o.text for o in answer.options if o.correct] == ['"' + " ".join(words) + '"']


def test_mistakes_are_recognised_in_most_variants(bank: Bank) -> None:
    # A mistake is dropped only when it coincides with the answer; the key ones survive nearly always.
    expected = {
        "causal-mask-weights": "wrong-triangle",
        "padding-mask-weights": "pad-not-masked",
        "layernorm-vector": "sample-std",
        "decoder-layer-params": "forgot-cross-attention",
        "decoder-stack-params": "shared-layer-weights",
        "pe-vector": "sin-cos-swapped",
        "residual-add": "forgot-x",
        "masked-score-entries": "mask-removes-entries",
        "cross-attention-scores": "swapped-axes",
    }
    for item_id, tag in expected.items():
        entry = bank.get(item_id)
        present = sum(tag in mistakes_of(entry.question(seed)) for seed in SEEDS)
        assert present >= 0.9 * len(SEEDS), (item_id, tag, present)


ALL_NON_STATEMENT = [*sorted(FORMULAS), "family-for-task", "decode-ids"]


@pytest.mark.parametrize("item_id", ALL_NON_STATEMENT)
def test_prompts_leave_the_precision_to_the_instructions(bank: Bank, item_id: str) -> None:
    entry: BankItem = bank.get(item_id)
    for seed in range(20):
        prompt = entry.question(seed).variant.prompt.lower()
        assert "decimal place" not in prompt
        assert "significant figure" not in prompt


# ---------------------------------------------------------------------------------------------
# Grading: the answer grades correct, each mistake as itself, a nudged answer wrong
# ---------------------------------------------------------------------------------------------


def nudged(question: Question) -> str:
    answer = question.answer
    if isinstance(answer, IntegerAnswer):
        return f"{answer.value + 1}"
    if isinstance(answer, NumericAnswer):
        return f"{answer.value * 1.5 + 1!r}"
    if isinstance(answer, ShapeAnswer):
        return "[" + ", ".join(str(d) for d in (*answer.dims[:-1], 3 * int(answer.dims[-1]) + 1)) + "]"
    if isinstance(answer, MatrixAnswer):
        return "[" + ", ".join("[" + ", ".join(str(v + 7) for v in row) + "]" for row in answer.rows) + "]"
    assert isinstance(answer, VectorAnswer)
    return "[" + ", ".join(str(v + 7) for v in answer.values) + "]"


@pytest.mark.parametrize("item_id", sorted(FORMULAS))
def test_answers_and_mistakes_grade_as_themselves(bank: Bank, item_id: str) -> None:
    assert_grades_as_itself(bank.get(item_id), range(40), nudged)


@pytest.mark.parametrize(
    "item_id", ["family-for-task", "decode-ids", "family-cross-attention", "masking-facts"]
)
def test_choice_answers_grade_correct(bank: Bank, item_id: str) -> None:
    entry = bank.get(item_id)
    for seed in range(20):
        question = entry.question(seed)
        assert grading.grade(question, question.answer.format()).status == "correct"


# ---------------------------------------------------------------------------------------------
# Generators called directly: inputs the bank does not use, and inputs they refuse
# ---------------------------------------------------------------------------------------------


def test_layernorm_constant_with_learned_shift_outputs_beta() -> None:
    variant = normalisation.layernorm_constant(
        rng(), value=3, size=3, affine=True, gamma=[2, 1, 3], beta=[0.5, -1, 0]
    )
    assert variant.answer == VectorAnswer((0.5, -1.0, 0.0), variant.answer.tolerance)
    found = mistakes_of(variant)
    assert found["ignored-beta"] == (0, 0, 0)
    assert found["gamma-not-zeroed"] == (2.5, 0, 3)


def test_deep_skip_slopes_vanish_without_skips() -> None:
    variant = normalisation.skip_slopes(rng(), slope=0.1, layers=10)
    assert isinstance(variant.answer, VectorAnswer)
    plain, skip = variant.answer.values
    assert math.isclose(plain, 1e-10)
    assert math.isclose(skip, 1.1**10)
    assert mistakes_of(variant)["added-not-multiplied"] == pytest.approx((1.0, 2.0))


def test_cross_attention_output_and_scores() -> None:
    scores = decoder.cross_attention_shape(rng(), part="scores", t_target=7, t_source=9, d_model=512, heads=8)
    assert scores.answer == ShapeAnswer((7, 9))
    assert mistakes_of(scores)["swapped-axes"] == (9, 7)
    output = decoder.cross_attention_shape(rng(), part="output", t_target=7, t_source=9, d_model=512, heads=8)
    assert output.answer == ShapeAnswer((7, 512))
    assert mistakes_of(output)["one-head-width"] == (7, 64)


def test_embedding_table_of_bert_base() -> None:
    variant = tokens.embedding_shape(rng(), part="table", tokens=12, d_model=768, vocab_size=30522)
    assert variant.answer == ShapeAnswer((30522, 768))
    assert mistakes_of(variant)["sequence-not-table"] == (12, 768)


def test_gpt2_small_blocks() -> None:
    variant = flops.blocks_param_count(rng(), layers=12, d_model=768, model="GPT-2 small")
    assert variant.answer == IntegerAnswer(85_054_464)  # 12 × 7,087,872
    assert mistakes_of(variant)["shared-layer-weights"] == 7_087_872


def test_attention_share_is_one_half_at_the_crossover() -> None:
    variant = flops.attention_flop_share(rng(), d_model=768, context=4608)
    assert variant.answer.matches(0.5)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: positions.pe_vector(rng(), d_model=5, position=1), "even"),
        (lambda: positions.pe_pair(rng(), d_model=4, position=1, pair=2), "does not exist"),
        (lambda: positions.pe_similarity(rng(), d_model=4, starts=[3, 3], offset=1), "different"),
        (lambda: masks.causal_mask_weights(rng(), scores=[[1, 2], [3, 4], [5, 6]]), "square"),
        (lambda: masks.padding_mask_weights(rng(), scores=[1, 2, 3], real=4), "cannot hold"),
        (lambda: normalisation.layernorm_vector(rng(), x=[2, 2, 2]), "not all equal"),
        (lambda: normalisation.residual_add(rng(), x=[1, 2], sublayer=[0.1]), "same shape"),
        (lambda: decoder.cross_attention_shape(rng(), t_target=8, t_source=8), "differ"),
        (lambda: decoder.family_for_task(rng(), tasks=["a", "b", "c"]), "together"),
        (lambda: tokens.token_ids(rng(), sentence="I love AI", vocab={"I": 0, "love": 1}), "vocabulary"),
        (lambda: flops.score_growth(rng(), factor=1), "2-fold"),
    ],
)
def test_bad_inputs_are_refused(call: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


# ---------------------------------------------------------------------------------------------
# The week-2 numerics
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("d", [4, 6, 16, 512])
def test_one_position_matches_the_position_table(d: int) -> None:
    table = numerics.sinusoidal_positions(7, d)
    for pos in range(7):
        np.testing.assert_allclose(numerics.sinusoidal_encoding(pos, d), table[pos], atol=1e-15)


def test_pair_denominator_and_frequency_are_reciprocal() -> None:
    for d in (4, 64, 512):
        for i in range(d // 2):
            assert math.isclose(numerics.pair_denominator(i, d) * numerics.pair_frequency(i, d), 1.0)
    assert numerics.pair_denominator(1, 4) == pytest.approx(100)
    assert numerics.pair_denominator(1, 4, pair_step=1) == pytest.approx(10)
    with pytest.raises(ValueError, match="does not exist"):
        numerics.pair_denominator(2, 4)


@pytest.mark.parametrize("d", [4, 8, 64])
def test_position_similarity_depends_only_on_the_offset(d: int) -> None:
    for k in (1, 3, 17):
        values = [numerics.position_similarity(p, p + k, d) for p in (0, 5, 20, 100)]
        expected = sum(math.cos(k * numerics.pair_frequency(i, d)) for i in range(d // 2))
        assert values == pytest.approx([expected] * 4, abs=1e-9)


def test_swapped_encoding_swaps_each_pair() -> None:
    right = numerics.sinusoidal_encoding(3, 8)
    swapped = numerics.sinusoidal_encoding(3, 8, sin_first=False)
    np.testing.assert_array_equal(swapped[0::2], right[1::2])
    np.testing.assert_array_equal(swapped[1::2], right[0::2])


def test_masks_and_counts() -> None:
    np.testing.assert_array_equal(numerics.padding_mask(4, 2), [True, True, False, False])
    with pytest.raises(ValueError, match="cannot hold"):
        numerics.padding_mask(3, 0)
    for t in (1, 2, 6, 1000):
        assert numerics.causal_masked_entries(t) == t * (t - 1) // 2


def test_normalise_agrees_with_layer_norm_and_its_slips() -> None:
    x = np.array([[1.0, 2.0, 3.0, 4.0], [3.0, -1.0, 0.0, 9.0]])
    np.testing.assert_allclose(numerics.normalise(x), numerics.layer_norm(x))
    sample = numerics.normalise(x, ddof=1)
    np.testing.assert_allclose(sample[0], [-1.1619, -0.3873, 0.3873, 1.1619], atol=1e-4)
    uncentred = numerics.normalise(x, centre=False)
    np.testing.assert_allclose(uncentred[0], x[0] / math.sqrt(1.25 + 1e-5))


def test_residual_and_stacked_slopes() -> None:
    np.testing.assert_allclose(numerics.residual([1, 2], [0.1, -0.2]), [1.1, 1.8])
    assert numerics.stacked_slope(0.1, 1, skip=False) == pytest.approx(0.1)
    assert numerics.stacked_slope(0.1, 1, skip=True) == pytest.approx(1.1)
    assert numerics.stacked_slope(0.5, 3, skip=True) == pytest.approx(3.375)
    with pytest.raises(ValueError, match="at least 1"):
        numerics.stacked_slope(0.5, 0, skip=True)


def test_token_ids_round_trip() -> None:
    vocab = {"I": 0, "love": 1, "AI": 2}
    assert numerics.encode_tokens(["I", "love", "AI"], vocab) == [0, 1, 2]
    assert numerics.decode_ids([2, 0, 1], vocab) == ["AI", "I", "love"]
    with pytest.raises(ValueError, match="not in the vocabulary"):
        numerics.encode_tokens(["you"], vocab)
    with pytest.raises(ValueError, match="share an id"):
        numerics.decode_ids([0], {"a": 0, "b": 0})
