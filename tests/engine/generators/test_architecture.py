"""Week 1 architecture items: originals against the notes, variants against the formulas, shape numerics."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from attnquiz.engine import numerics
from attnquiz.engine.answers import parse, read_numbers, read_shapes
from attnquiz.engine.answers.kinds import IntegerAnswer, NumericAnswer, ShapeAnswer, VectorAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loaded import Bank, BankItem, NoOriginalError
from attnquiz.engine.generators import cost, counts, encoder, heads, rnn
from attnquiz.engine.generators.common import HEADS_FOR_WIDTH, MODEL_WIDTHS
from attnquiz.engine.variant import Question, Variant
from tests.engine.generators.grading_checks import assert_grades_as_itself

SEEDS = range(120)


@pytest.fixture(scope="module")
def bank() -> Bank:
    return banks.load("week1")


def mistakes_of(question: Question | Variant) -> dict[str, Any]:
    variant = question.variant if isinstance(question, Question) else question
    return {m.tag: m.value for m in variant.mistakes}


# ---------------------------------------------------------------------------------------------
# Originals: the notes' answers and the catalogue's wrong values, exactly
# ---------------------------------------------------------------------------------------------

ORIGINALS = [
    pytest.param(
        "concat-width",
        ("T", 512),
        {"heads-full-width": ("T", 4096), "one-head": ("T", 64)},
        id="concat-width",
    ),
    pytest.param("head-size", 64, {"heads-full-width": 768}, id="head-size"),
    pytest.param(
        "mha-head-shapes",
        (2, 4, 5, 4),
        {"no-transpose": (2, 5, 4, 4), "heads-full-width": (2, 4, 5, 16)},
        id="mha-head-shapes",
    ),
    pytest.param("w-o-hand-example", (4, 6), {"forgot-w-o": (1, 2, 3, 4)}, id="w-o-hand-example"),
    pytest.param(
        "w-o-params",
        589_824,
        {"counted-bias": 590_592, "all-four-projections": 2_359_296},
        id="w-o-params",
    ),
    pytest.param("w-q-one-head", 32_768, {"whole-w-q": 262_144}, id="w-q-one-head"),
    pytest.param(
        "mha-params",
        1_050_624,
        {"no-biases": 1_048_576, "forgot-w-o": 787_968, "shared-qkv": 525_312},
        id="mha-params",
    ),
    pytest.param(
        "mha-weights",
        1_048_576,
        {"heads-add-weights": 8_388_608, "forgot-w-o": 786_432, "shared-qkv": 524_288},
        id="mha-weights",
    ),
    pytest.param(
        "ffn-params", 2_099_712, {"no-biases": 2_097_152, "expand-only": 1_050_624}, id="ffn-params"
    ),
    pytest.param(
        "encoder-layer-params",
        3_152_384,
        {
            "weights-only": 3_145_728,
            "no-norms": 3_150_336,
            "no-ffn-biases": 3_149_824,
            "forgot-w-o": 2_889_728,
            "cross-attention-in-encoder": 4_204_032,
        },
        id="encoder-layer-params",
    ),
    pytest.param("n-layer-params", 18_914_304, {"shared-layer-weights": 3_152_384}, id="n-layer-params"),
    pytest.param(
        "block-params-12d2", 3_280, {"weights-only": 3_072, "no-norms": 3_216}, id="block-params-12d2"
    ),
    pytest.param(
        "weights-independent-of-length",
        3_152_384,
        {"linear-in-length": 315_238_400},
        id="weights-independent-of-length",
    ),
    pytest.param(
        "encoder-output-shape",
        (50, 512),
        {"ffn-width": (50, 2048), "head-width": (50, 64), "layers-stacked-along-t": (300, 512)},
        id="encoder-output-shape",
    ),
    pytest.param(
        "padded-batch-volume", 6_400, {"one-sentence": 1_280, "width-dropped": 100}, id="padded-batch-volume"
    ),
    pytest.param("ffn-shapes", (2, 5, 64), {"block-output": (2, 5, 16)}, id="ffn-shapes"),
    pytest.param("score-entries", 1_152, {"one-head": 576, "one-sequence": 288}, id="score-entries"),
    pytest.param("score-entries-longer", 4_608, {"linear-in-length": 2_304}, id="score-entries-longer"),
    pytest.param("attention-dense-crossover", 4_608, {"qk-only": 9_216}, id="attention-dense-crossover"),
]


def answer_value(question: Question) -> Any:
    answer = question.answer
    if isinstance(answer, ShapeAnswer):
        return answer.dims
    if isinstance(answer, VectorAnswer):
        return answer.values
    assert isinstance(answer, IntegerAnswer | NumericAnswer)
    return answer.value


@pytest.mark.parametrize(("item_id", "expected", "wrong"), ORIGINALS)
def test_original_gives_the_notes_answer_and_the_catalogued_mistakes(
    bank: Bank, item_id: str, expected: Any, wrong: dict[str, Any]
) -> None:
    question = bank.get(item_id).original()
    assert answer_value(question) == expected
    found = mistakes_of(question)
    for tag, value in wrong.items():
        assert found.get(tag) == value, f"{tag}: {found.get(tag)!r} != {value!r}"


def test_original_formatted_answers_read_back_as_the_answer(bank: Bank) -> None:
    assert bank.get("w-o-params").original().answer.format() == "589,824"
    for item_id in ("w-o-params", "encoder-layer-params", "n-layer-params", "padded-batch-volume"):
        answer = bank.get(item_id).original().answer
        read = read_numbers.number(answer.format())
        assert isinstance(read, parse.Number)
        assert answer.matches(read.value)
    for item_id in ("concat-width", "encoder-output-shape", "mha-head-shapes"):
        answer = bank.get(item_id).original().answer
        dims = read_shapes.shape(answer.format())
        assert not isinstance(dims, parse.Invalid)
        assert answer.matches(dims)


def test_shape_instructions_do_not_show_the_answer(bank: Bank) -> None:
    for item_id in ("concat-width", "encoder-output-shape", "mha-head-shapes", "ffn-shapes"):
        answer = bank.get(item_id).original().answer
        assert answer.format() not in answer.instructions()


def test_w_o_original_cannot_tell_mixing_from_adding_but_variants_can(bank: Bank) -> None:
    entry = bank.get("w-o-hand-example")
    # The notes' W^O adds the heads, so "heads-added" equals the answer and is dropped.
    assert "heads-added" not in mistakes_of(entry.original())
    for seed in SEEDS:
        assert "heads-added" in mistakes_of(entry.question(seed)), f"seed {seed}"


def test_w_q_one_head_does_not_offer_the_slide_typo(bank: Bank) -> None:
    # 32,178 is a typo on a slide, not the result of any misconception, so it is no mistake value.
    assert 32_178 not in mistakes_of(bank.get("w-q-one-head").original()).values()


def test_rnn_decay_original_reproduces_the_key_results_figure(bank: Bank) -> None:
    question = bank.get("rnn-gradient-decay").original()
    assert isinstance(question.answer, NumericAnswer)
    assert question.answer.format() == "2.0e-09"
    assert question.answer.matches(2e-9)
    assert not question.answer.matches(3e-9)
    assert question.variant.inputs == {"per_step": 0.67, "steps": 50}


def test_items_without_numbers_in_the_notes_have_no_original_but_a_note(bank: Bank) -> None:
    entry = bank.get("rnn-decay-steps")
    assert not entry.has_original
    assert entry.item.note
    with pytest.raises(NoOriginalError):
        entry.original()


# ---------------------------------------------------------------------------------------------
# The notes' other worked numbers, straight from the generators
# ---------------------------------------------------------------------------------------------


def rng() -> np.random.Generator:
    return np.random.default_rng(0)


def test_ffn_count_of_the_bigger_model() -> None:
    variant = counts.ffn_param_count(rng(), d_model=768, d_ff=3072)
    assert variant.answer == IntegerAnswer(4_722_432)
    assert mistakes_of(variant)["no-biases"] == 4_718_592
    assert mistakes_of(variant)["expand-only"] == 2_362_368


def test_head_size_of_the_original_transformer() -> None:
    assert heads.head_size(rng(), d_model=512, heads=8).answer == IntegerAnswer(64)


def test_mha_shape_check_03_concat_and_scores() -> None:
    concat = heads.mha_head_shapes(rng(), batch=2, tokens=5, d_model=16, heads=4, ask="concat")
    assert concat.answer == ShapeAnswer((2, 5, 16))
    assert mistakes_of(concat)["heads-not-merged"] == (2, 4, 5, 4)
    scores = heads.mha_head_shapes(rng(), batch=2, tokens=5, d_model=16, heads=4, ask="scores")
    assert scores.answer == ShapeAnswer((2, 4, 5, 5))
    assert mistakes_of(scores)["keys-transposed-first"] == (2, 4, 4, 4)


def test_shape_tracking_block_output_and_weights() -> None:
    def ask(what: Any) -> Variant:
        return encoder.ffn_shapes(rng(), batch=2, tokens=5, d_model=16, d_ff=64, ask=what)

    assert ask("output").answer == ShapeAnswer((2, 5, 16))
    assert ask("w1").answer == ShapeAnswer((16, 64))
    assert mistakes_of(ask("w1"))["transposed"] == (64, 16)
    assert ask("w2").answer == ShapeAnswer((64, 16))


def test_padded_batch_lists_lengths_and_names_ignored_padding() -> None:
    variant = encoder.padded_batch_volume(rng(), sentences=4, padded_length=20, d_model=64)
    lengths = variant.inputs["lengths"]
    assert len(lengths) == 4
    assert max(lengths) == 20
    assert mistakes_of(variant)["ignored-padding"] == sum(lengths) * 64
    assert variant.answer == IntegerAnswer(4 * 20 * 64)


def test_rnn_steps_is_the_least_whole_number_of_steps() -> None:
    variant = rnn.rnn_decay_steps(rng(), per_step=0.5, threshold=0.001)
    assert variant.answer == IntegerAnswer(10)  # 0.5^9 ≈ 0.00195, 0.5^10 ≈ 0.000977
    assert mistakes_of(variant)["off-by-one"] == 9


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="divisible"):
        heads.head_size(rng(), d_model=512, heads=7)
    with pytest.raises(ValueError, match="layer"):
        encoder.encoder_output_shape(rng(), layers=6, layer=7)
    with pytest.raises(ValueError, match="multiple"):
        counts.params_vs_length(rng(), t_short=10, t_long=15)
    with pytest.raises(ValueError, match="per_step"):
        rnn.rnn_gradient_decay(rng(), per_step=1.5, steps=10)


# ---------------------------------------------------------------------------------------------
# Every variant: realistic inputs and an answer that agrees with the closed-form formula
# ---------------------------------------------------------------------------------------------


def realistic(inputs: dict[str, Any]) -> None:
    d = inputs.get("d_model")
    if d is not None:
        assert d in MODEL_WIDTHS or d in (16, 32), d
    h = inputs.get("heads")
    if h is not None and d is not None:
        assert h in HEADS_FOR_WIDTH[d], (d, h)
        assert h >= 2, (d, h)
    f = inputs.get("d_ff")
    if f is not None and d is not None:
        assert f in (2 * d, 4 * d, 8 * d), (d, f)
    for key in ("tokens", "padded_length", "t_short"):
        if key in inputs:
            assert 6 <= inputs[key] <= 512, inputs


def layer(d: int, f: int) -> int:
    return 4 * d * d + 2 * d * f + f + 9 * d


FORMULAS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "concat-width": lambda p: ("T", p["d_model"]),
    "head-size": lambda p: p["d_model"] // p["heads"],
    "w-o-params": lambda p: p["d_model"] ** 2,
    "w-q-one-head": lambda p: p["d_model"] ** 2 // p["heads"],
    "mha-params": lambda p: 4 * p["d_model"] ** 2 + 4 * p["d_model"],
    "mha-weights": lambda p: 4 * p["d_model"] ** 2,
    "ffn-params": lambda p: 2 * p["d_model"] * p["d_ff"] + p["d_ff"] + p["d_model"],
    "encoder-layer-params": lambda p: layer(p["d_model"], p["d_ff"]),
    "n-layer-params": lambda p: p["layers"] * layer(p["d_model"], p["d_ff"]),
    "block-params-12d2": lambda p: 12 * p["d_model"] ** 2 + 13 * p["d_model"],
    "weights-independent-of-length": lambda p: layer(p["d_model"], p["d_ff"]),
    "encoder-output-shape": lambda p: (p["tokens"], p["d_model"]),
    "padded-batch-volume": lambda p: p["sentences"] * p["padded_length"] * p["d_model"],
    "score-entries": lambda p: p["batch"] * p["heads"] * p["tokens"] ** 2,
    "score-entries-longer": lambda p: p["batch"] * p["heads"] * (p["factor"] * p["tokens"]) ** 2,
    "attention-dense-crossover": lambda p: 6 * p["d_model"],
    "w-o-hand-example": lambda p: tuple(
        float(v) for v in np.asarray(p["head_outputs"]).reshape(-1) @ np.asarray(p["w_o"])
    ),
}


@pytest.mark.parametrize("item_id", sorted(FORMULAS))
def test_every_variant_matches_its_formula_with_realistic_inputs(bank: Bank, item_id: str) -> None:
    entry = bank.get(item_id)
    formula = FORMULAS[item_id]
    for seed in SEEDS:
        question = entry.question(seed)
        inputs = dict(question.variant.inputs)
        if item_id not in ("score-entries", "score-entries-longer", "block-params-12d2"):
            realistic(inputs)
        expected = formula(inputs)
        assert question.answer.matches(expected), f"seed {seed}: {answer_value(question)} != {expected}"


def test_rnn_variants_decay_geometrically(bank: Bank) -> None:
    decay = bank.get("rnn-gradient-decay")
    steps = bank.get("rnn-decay-steps")
    for seed in SEEDS:
        p = decay.question(seed).variant.inputs
        assert decay.question(seed).answer.matches(p["per_step"] ** p["steps"])
        assert answer_value(decay.question(seed)) >= 1e-12
        q = steps.question(seed)
        g, limit, k = q.variant.inputs["per_step"], q.variant.inputs["threshold"], answer_value(q)
        assert g**k < limit <= g ** (k - 1), f"seed {seed}"


def test_shape_items_never_draw_a_length_equal_to_a_width(bank: Bank) -> None:
    for seed in SEEDS:
        p = bank.get("encoder-output-shape").question(seed).variant.inputs
        assert p["tokens"] != p["d_model"]
        q = bank.get("mha-head-shapes").question(seed).variant.inputs
        assert q["tokens"] not in (q["d_model"], q["d_model"] // q["heads"], q["heads"])


ARCHITECTURE_IDS = [*FORMULAS, "mha-head-shapes", "ffn-shapes", "rnn-gradient-decay", "rnn-decay-steps"]


@pytest.mark.parametrize("item_id", ARCHITECTURE_IDS)
def test_prompts_leave_the_precision_to_the_instructions(bank: Bank, item_id: str) -> None:
    entry: BankItem = bank.get(item_id)
    for seed in range(20):
        prompt = entry.question(seed).variant.prompt.lower()
        assert "decimal place" not in prompt
        assert "significant figure" not in prompt


def test_variants_cover_every_question_form(bank: Bank) -> None:
    asked = {bank.get("mha-head-shapes").question(s).variant.inputs["ask"] for s in SEEDS}
    assert asked == {"heads", "scores", "concat"}
    asked = {bank.get("ffn-shapes").question(s).variant.inputs["ask"] for s in SEEDS}
    assert asked == {"hidden", "output", "w1", "w2"}


# ---------------------------------------------------------------------------------------------
# The shape and FLOP numerics these items rely on
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("b", "t", "d", "h"), [(2, 5, 16, 4), (1, 7, 12, 3), (3, 4, 8, 8)])
def test_split_and_merge_shapes_agree_with_the_arrays(b: int, t: int, d: int, h: int) -> None:
    x = np.zeros((b, t, d))
    split = numerics.split_heads(x, h)
    assert numerics.split_heads_shape((b, t, d), h) == split.shape
    assert numerics.merge_heads_shape(split.shape) == numerics.merge_heads(split).shape
    assert numerics.scores_shape(split.shape, split.shape) == (split @ np.swapaxes(split, -1, -2)).shape


def test_symbolic_shapes_keep_their_symbols() -> None:
    assert numerics.split_heads_shape(("T", 512), 8) == (8, "T", 64)
    assert numerics.merge_heads_shape((8, "T", 64)) == ("T", 512)
    assert numerics.encoder_stack_shape(("B", "T", 512), heads=8, d_ff=2048, layers=6) == ("B", "T", 512)


def test_shape_numerics_refuse_what_does_not_fit() -> None:
    with pytest.raises(ValueError, match="inner sizes"):
        numerics.matmul_shape((5, 16), (64, 16))
    with pytest.raises(ValueError, match="divisible"):
        numerics.encoder_layer_shape((5, 16), heads=3, d_ff=64)
    with pytest.raises(ValueError, match="do not fit"):
        numerics.scores_shape((2, 5, 4), (2, 5, 8))
    with pytest.raises(ValueError, match="whole multiple"):
        numerics.crossover_length(100, 7)


def test_flop_pieces_give_the_notes_crossover() -> None:
    d = 768
    dense = numerics.projection_flops_per_token(d) + numerics.ffn_flops_per_token(d, 4 * d)
    assert dense == numerics.dense_flops_per_token(d) == 24 * d * d
    assert numerics.score_flops_per_token(1, d) == numerics.attention_score_flops_per_token(1, d)
    assert numerics.crossover_length(dense, d) == numerics.attention_dense_crossover(d) == 4_608
    assert numerics.crossover_length(dense, d, products=1) == 9_216


def test_cost_generator_uses_the_same_numbers_as_the_numerics() -> None:
    variant = cost.attention_dense_crossover(rng(), d_model=1024)
    assert variant.answer == IntegerAnswer(6 * 1024)
    assert math.isclose(mistakes_of(variant)["forgot-ffn"], 2 * 1024)


# ---------------------------------------------------------------------------------------------
# Grading: the answer grades correct, each mistake as itself, a nudged answer wrong
# ---------------------------------------------------------------------------------------------


def nudged(question: Question) -> str:
    answer = question.answer
    if isinstance(answer, IntegerAnswer):
        return f"{answer.value + 1}"
    if isinstance(answer, NumericAnswer):
        return f"{answer.value * 1.5!r}"
    if isinstance(answer, ShapeAnswer):
        return "[" + ", ".join(str(d) for d in (*answer.dims[:-1], 3 * int(answer.dims[-1]) + 1)) + "]"
    assert isinstance(answer, VectorAnswer)
    return "[" + ", ".join(str(v + 7) for v in answer.values) + "]"


@pytest.mark.parametrize("item_id", ARCHITECTURE_IDS)
def test_answers_and_mistakes_grade_as_themselves(bank: Bank, item_id: str) -> None:
    assert_grades_as_itself(bank.get(item_id), range(40), nudged)
