"""The walkthrough items (issue 16): originals reproduce the catalogue, every variant grades as itself,
the NumPy snippets a variant shows really print its answer, and the reference numerics behind them."""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Iterator

import numpy as np
import pytest

from attnquiz.engine import numerics
from attnquiz.engine.answers.kinds import Answer, ChoiceAnswer, Mistake, Part, PartsAnswer, ShapeAnswer
from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loaded import BankItem, NoOriginalError
from attnquiz.engine.generators import snippet_shapes, winograd
from attnquiz.engine.grading import grade as grading
from attnquiz.engine.variant import Question

SEEDS = range(120)
WEEK1 = (
    "alignment-table-shape",
    "attention-from-scratch-shape",
    "qk-transpose-shape",
    "self-attention-module-shapes",
    "toy-self-attention-shape",
    "bert-attentions-shape",
    "rnn-context-shape",
    "path-length",
    "winograd-too-big",
    "winograd-too-small",
    "winograd-it-position",
    "base-model-params",
    "base-model-gap",
)
ITEMS = [banks.load("week1").get(i) for i in WEEK1] + [banks.load("week2").get("causal-visible-words")]


def entry_id(entry: BankItem) -> str:
    return f"{entry.bank}/{entry.id}"


def questions(entry: BankItem, seeds: range = SEEDS) -> Iterator[Question]:
    yield from (entry.question(seed) for seed in seeds)
    if entry.has_original:
        yield entry.original()


def answers_with_mistakes(question: Question) -> list[tuple[str, Answer, tuple[Mistake, ...]]]:
    answer = question.answer
    if isinstance(answer, PartsAnswer):
        return [(f"({p.label})", p.answer, tuple(p.mistakes)) for p in answer.parts]
    return [("", answer, tuple(question.variant.mistakes))]


# ---------------------------------------------------------------------------------------------
# The originals: the catalogue's answers (reference/seed_items.yaml), at the precision it states
# ---------------------------------------------------------------------------------------------

ORIGINALS = [
    (
        "week1",
        "alignment-table-shape",
        "[T_target, T_source]",
        {"weights-over-decoder-states": "[T_source, T_target]"},
    ),
    ("week1", "attention-from-scratch-shape", "[1, 2, 3, 4]", {"weights-not-output": "[1, 2, 3, 3]"}),
    ("week1", "qk-transpose-shape", "[3, 3]", {"kt-q-not-q-kt": "[2, 2]"}),
    ("week1", "self-attention-module-shapes", "(a) [1, 6, 16] | (b) [1, 6, 6]", {}),
    ("week1", "toy-self-attention-shape", "[4, 8]", {"weights-not-output": "[4, 4]"}),
    ("week1", "bert-attentions-shape", "(a) 12 | (b) [1, 12, T, T]", {}),
    ("week1", "rnn-context-shape", "(a) [5] | (b) [5]", {}),
    ("week1", "winograd-it-position", "9", {"words-before": "8"}),
    ("week1", "base-model-params", "63.0", {"layers-share-weights": "26.3"}),
    ("week1", "base-model-gap", "(a) 2.0 | (b) 3.08", {}),
    ("week2", "causal-visible-words", "(a) 12 | (b) 13", {}),
]


@pytest.mark.parametrize(("bank", "item_id", "expected", "wrong"), ORIGINALS, ids=[o[1] for o in ORIGINALS])
def test_the_original_gives_the_catalogue_answer(
    bank: str, item_id: str, expected: str, wrong: dict[str, str]
) -> None:
    question = banks.load(bank).get(item_id).original()
    assert question.answer.format() == expected
    by_tag = {m.tag: m.format(question.answer) for m in question.variant.mistakes}
    for tag, value in wrong.items():
        assert by_tag[tag] == value


def test_the_winograd_originals_are_the_essays_sentences() -> None:
    bank = banks.load("week1")
    big, small = bank.get("winograd-too-big").original(), bank.get("winograd-too-small").original()
    for question, right in ((big, "The trophy"), (small, "The suitcase")):
        assert "because it was too" in question.variant.prompt
        answer = question.answer
        assert isinstance(answer, ChoiceAnswer)
        assert [o.text for o in answer.options] == ["The trophy", "The suitcase"]  # in the sentence's order
        assert [o.text for o in answer.options if o.correct] == [right]


def test_the_gap_solution_says_the_printed_numbers_are_not_within_three_percent() -> None:
    question = banks.load("week1").get("base-model-gap").original()
    answer = question.answer
    assert isinstance(answer, PartsAnswer)
    assert answer.parts[1].answer.format() == "3.08"
    assert "3.08 % is more than 3 %, so the claim does not hold" in question.variant.solution[-1]
    held = [
        q
        for q in questions(banks.load("week1").get("base-model-gap"), range(60))
        if "claim holds" in q.variant.solution[-1]
    ]
    assert held  # variants where the claim is true exist too


def test_path_length_has_no_original_and_says_why() -> None:
    with pytest.raises(NoOriginalError, match="in general"):
        banks.load("week1").get("path-length").original()


# ---------------------------------------------------------------------------------------------
# Every variant: the key grades correct, each listed mistake is named by its own tag
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("entry", ITEMS, ids=entry_id)
def test_every_variant_grades_as_itself(entry: BankItem) -> None:
    for question in questions(entry):
        for where, answer, mistakes in answers_with_mistakes(question):
            right = grading.grade_answer(answer, answer.format(), mistakes)
            assert right.status == "correct", (question.code, where, right.feedback)
            for mistake in mistakes:
                got = grading.grade_answer(answer, mistake.format(answer), mistakes)
                assert got.status == "wrong", (question.code, where, mistake.tag)
                assert got.mistake is not None, (question.code, mistake.tag)
                assert got.mistake.tag == mistake.tag, (question.code, mistake.tag)


@pytest.mark.parametrize("entry", ITEMS, ids=entry_id)
def test_variants_draw_fresh_inputs(entry: BankItem) -> None:
    prompts = {q.variant.prompt for q in questions(entry, range(40))}
    assert len(prompts) >= 5


def test_whole_question_grading_of_a_parts_walkthrough() -> None:
    question = banks.load("week1").get("self-attention-module-shapes").question(3)
    answer = question.answer
    assert isinstance(answer, PartsAnswer)
    out, weights = (p.answer.format() for p in answer.parts)
    assert grading.grade(question, f"{out} | {weights}").status == "correct"
    swapped = grading.grade(question, f"{weights} | {out}")
    assert swapped.status == "wrong"
    assert "weights-not-output" in swapped.feedback or "shape of the weights" in swapped.feedback


# ---------------------------------------------------------------------------------------------
# The snippets: run the NumPy code a variant shows and read what it prints
# ---------------------------------------------------------------------------------------------

CODE = re.compile(r"```python\n(.*?)\n```", re.DOTALL)
PRINTED_SHAPE = re.compile(r"\(([\d, ]*)\)")


def run_snippet(prompt: str) -> str:
    """Run the one Python code block of a prompt and return what it prints."""
    blocks = CODE.findall(prompt)
    assert len(blocks) == 1, prompt
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(blocks[0], "<snippet>", "exec"), {"__name__": "snippet"})
    return out.getvalue()


def printed_shapes(line: str) -> list[tuple[int, ...]]:
    return [tuple(int(d) for d in m.split(",") if d.strip()) for m in PRINTED_SHAPE.findall(line)]


NUMPY_SNIPPETS = [
    "qk-transpose-shape",
    "toy-self-attention-shape",
    "attention-from-scratch-shape",
    "rnn-context-shape",
]


@pytest.mark.parametrize("item_id", [*NUMPY_SNIPPETS, "alignment-table-shape"])
def test_the_numpy_snippet_prints_the_answer(item_id: str) -> None:
    entry = banks.load("week1").get(item_id)
    for question in questions(entry, range(25)):
        answer = question.answer
        if isinstance(answer, ShapeAnswer) and answer.symbolic:
            continue  # the symbolic alignment table's code reads len(source): not runnable on its own
        last = run_snippet(question.variant.prompt).strip().splitlines()[-1]
        expected = (
            [tuple(p.answer.dims) for p in answer.parts if isinstance(p.answer, ShapeAnswer)]
            if isinstance(answer, PartsAnswer)
            else [tuple(answer.dims)]
            if isinstance(answer, ShapeAnswer)
            else []
        )
        assert printed_shapes(last) == expected, (question.code, last)


def test_the_common_error_snippet_really_raises_before_the_fix() -> None:
    for seed in range(25):
        printed = run_snippet(banks.load("week1").get("qk-transpose-shape").question(seed).variant.prompt)
        assert printed.startswith(
            "ValueError: matmul: Input operand 1 has a mismatch in its core dimension 0"
        )


def test_the_torch_snippet_prints_the_answer() -> None:
    pytest.importorskip("torch")
    question = banks.load("week1").get("self-attention-module-shapes").original()
    last = run_snippet(question.variant.prompt).strip().splitlines()[-1]
    assert last == "torch.Size([1, 6, 16]) torch.Size([1, 6, 6])"


# ---------------------------------------------------------------------------------------------
# Reference numerics behind the walkthroughs
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("length", [2, 3, 30, 200])
def test_an_rnn_context_has_the_hidden_size_whatever_the_length(length: int) -> None:
    rng = np.random.default_rng(length)
    states = numerics.rnn_encoder_states(
        rng.normal(size=(length, 8)), rng.normal(size=(8, 5)), rng.normal(size=(5, 5)), np.zeros(5)
    )
    assert states.shape == (length, 5)
    assert states[-1].shape == numerics.rnn_context_shape(length, 5) == (5,)
    assert np.all(np.abs(states) < 1)  # tanh states


def test_an_rnn_state_follows_the_recurrence() -> None:
    x = np.array([[1.0], [2.0]])
    states = numerics.rnn_encoder_states(x, [[0.5]], [[1.0]], [0.0])
    assert states[0, 0] == pytest.approx(np.tanh(0.5))
    assert states[1, 0] == pytest.approx(np.tanh(1.0 + np.tanh(0.5)))


def test_the_alignment_table_is_target_by_source_and_rows_sum_to_one() -> None:
    rng = np.random.default_rng(0)
    table = numerics.additive_alignment(rng.normal(size=(3, 6)), rng.normal(size=(4, 6)), rng.normal(size=6))
    assert table.shape == numerics.alignment_shape(3, 4) == (3, 4)
    np.testing.assert_allclose(table.sum(axis=1), 1.0)
    # One decoder step is the notes' additive score followed by a softmax over the encoder states.
    s, h, v = np.array([[1.0, 2.0]]), np.array([[0.0, 0.0], [1.0, -1.0]]), np.array([1.0, 1.0])
    scores = [numerics.additive_score(v, s[0], row) for row in h]
    np.testing.assert_allclose(numerics.additive_alignment(s, h, v)[0], numerics.softmax(scores))


def test_path_lengths_and_causal_visibility() -> None:
    assert numerics.path_length(2, 27, recurrent=True) == 25
    assert numerics.path_length(2, 27, recurrent=False) == 1
    assert numerics.path_length(4, 4, recurrent=True) == 0
    assert numerics.visible_positions(20, 12) == 12
    assert numerics.visible_positions(3, 1) == 1
    with pytest.raises(ValueError, match="not in a sequence"):
        numerics.visible_positions(3, 4)


def test_the_base_model_count_matches_the_catalogue_reconstruction() -> None:
    # seed_items.md: 62.98M weights only, 63.08M with biases and LayerNorm (d = 512, f = 2048, V ≈ 37k, tied).
    weights = numerics.transformer_params(512, 2048, layers=6, vocab=37_000, counted=numerics.WEIGHTS_ONLY)
    full = numerics.transformer_params(512, 2048, layers=6, vocab=37_000)
    assert weights == 62_984_192
    assert full == 63_082_496
    assert full - 37_000 * 512 == 6 * (3_152_384 + 4_204_032)  # the notes' encoder and decoder layers
    untied = numerics.transformer_params(512, 2048, layers=6, vocab=37_000, embeddings=3)
    assert untied - full == 2 * 37_000 * 512


def test_the_relative_gap_of_the_printed_numbers_is_above_three_percent() -> None:
    assert numerics.relative_gap(63.0, 65.0) == pytest.approx(0.0307692, rel=1e-5)
    assert numerics.relative_gap(63.08, 65.0) < 0.03  # the unrounded full count would be within 3 %
    with pytest.raises(ValueError, match="relative to 0"):
        numerics.relative_gap(1.0, 0.0)


@pytest.mark.parametrize(
    ("sentence", "position"),
    [
        ("The trophy did not fit in the brown suitcase because it was too big.", 11),
        ("The trophy didn't fit in the suitcase because it was too big.", 9),
        ("It was late.", 1),
    ],
)
def test_pronoun_position(sentence: str, position: int) -> None:
    assert winograd.pronoun_position(sentence) == position


def test_a_sentence_without_it_is_refused() -> None:
    with pytest.raises(ValueError, match="no 'it'"):
        winograd.pronoun_position("The cat sat on the mat.")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tokens": 3, "d_k": 3}, "does not fail"),
    ],
)
def test_impossible_inputs_are_refused(kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        snippet_shapes.qk_transpose_shape(np.random.default_rng(0), **kwargs)


def test_a_one_dimensional_shape_asks_for_one_dimension() -> None:
    answer = banks.load("week1").get("rnn-context-shape").original().answer
    assert isinstance(answer, PartsAnswer)
    assert answer.parts[0].answer.instructions() == "Give the shape as a list of 1 dimension, e.g. [3]."


@pytest.mark.parametrize("entry", ITEMS, ids=entry_id)
def test_no_listed_mistake_is_dropped_from_a_part_or_a_question(
    entry: BankItem, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A slip listed only to be dropped (it gives the answer, or another slip's value) is an unfair draw.
    from attnquiz.engine import variant

    dropped: list[str] = []
    keep_part = variant._kept_part
    keep = variant.kept_mistakes

    def part_recorder(part: Part) -> Part:
        kept = keep_part(part)
        dropped.extend(m.tag for m in part.mistakes if m not in kept.mistakes)
        return kept

    def recorder(answer: Answer, mistakes: tuple[Mistake, ...]) -> tuple[Mistake, ...]:
        listed = tuple(mistakes)
        kept = keep(answer, listed)
        dropped.extend(m.tag for m in listed if m not in kept)
        return kept

    monkeypatch.setattr(variant, "_kept_part", part_recorder)
    monkeypatch.setattr(variant, "kept_mistakes", recorder)
    for seed in range(200):
        dropped.clear()
        entry.question(seed)
        assert not dropped, (seed, dropped)
