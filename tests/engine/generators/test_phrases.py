"""Every randomised phrase of the generators states only what the course notes say.

A generator may vary the wording of a prompt (an example width, a model's name, a layout), not its
facts. For each item whose prompt varies, this lists the phrases it may use and the values each may
state, and checks the prompt of many seeds against them: a phrase must be one of those listed and
say a listed value, and a claim the notes contradict (``often d_ff = 2 d_model``, ``the base model
has N = 24``) never appears. The values are the notes' (/work/shared/seeds: the base model has six
layers, d_model = 512, d_ff = 2048 = 4 d_model, 8 heads; its published count is 65M) or an
example plainly marked as one ("say", "for instance").
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from attnquiz.engine.bank import finding as banks
from attnquiz.engine.bank.loaded import Bank

SEEDS = range(120)

# item → [(a pattern of the phrase, what its groups may be)]; every seed's prompt must match one.
PHRASES: dict[str, list[tuple[str, Callable[[re.Match[str]], bool]]]] = {
    "ffn-params-formula": [
        (r"in the base model \$d_\{\\text\{ff\}\} = (\d+) d_\{\\text\{model\}\}\$", lambda m: m[1] == "4"),
        (
            r"the base model has \$d_\{\\text\{model\}\} = (\d+)\$ and \$d_\{\\text\{ff\}\} = (\d+)\$",
            lambda m: (m[1], m[2]) == ("512", "2048"),
        ),
        (
            r"(\w+) times as wide in the base model: \$d_\{\\text\{ff\}\} = (\d+) d_\{\\text\{model\}\}\$",
            lambda m: (m[1], m[2]) == ("four", "4"),
        ),
    ],
    "stack-params-formula": [
        (r"the base model has \$N = (\d+)\$", lambda m: m[1] == "6"),
        (r"(\w+) in the base model\)", lambda m: m[1] == "six"),
        (r"the notes' base model stacks \$N = (\d+)\$", lambda m: m[1] == "6"),
    ],
    # Examples marked as examples: any common head count or width is true to say.
    "w-o-params-formula": [(r"\$h\$ heads \(say (\d+)\)", lambda m: m[1] in {"4", "8", "12", "16"})],
    "attention-dense-ratio-formula": [
        (r"\(for instance \$d = (\d+)\$\)", lambda m: m[1] in {"512", "768", "1024"})
    ],
    "score-entries-formula": [
        (r"stores its scores as \[B, h, T, T\]\.", lambda m: True),
        (r"stores its scores as one \$T \\times T\$ matrix per sequence and head\.", lambda m: True),
    ],
    # Published counts (the notes: the base model's 65M; the others are the papers' own figures).
    "base-model-gap": [
        (
            r"the paper reports (\d+)M",
            lambda m: m[1] in {"65", "110", "117", "213", "340"},
        )
    ],
}

# What a prompt may never say, whichever seed: claims the notes contradict.
FALSE = [
    (r"often \$d_\{\\text\{ff\}\} = [0-35-9]", "the notes' FFN is 4 d_model wide"),
    (r"base model has \$N = (?!6\$)\d+", "the base model has six layers"),
    (r"\bor so\b", "a fact of the notes is stated, not guessed at"),
]

PUBLISHED = {
    "the base Transformer": "65",
    "BERT-base": "110",
    "GPT": "117",
    "the big Transformer": "213",
    "BERT-large": "340",
}


@pytest.fixture(scope="module")
def week1() -> Bank:
    return banks.load("week1")


@pytest.mark.parametrize("item", sorted(PHRASES))
def test_each_randomised_phrase_states_what_the_notes_say(week1: Bank, item: str) -> None:
    entry = week1.get(item)
    used: set[str] = set()
    for seed in SEEDS:
        prompt = entry.question(seed).variant.prompt
        found = [(pattern, m) for pattern, _ in PHRASES[item] if (m := re.search(pattern, prompt))]
        assert found, f"{item} seed {seed}: no listed phrase in {prompt!r}"
        for pattern, match in found:
            check = dict(PHRASES[item])[pattern]
            assert check(match), f"{item} seed {seed}: {match[0]!r} states a value the notes do not"
            used.add(pattern)
    # The wording does vary (else the list is out of date), and every listed phrase is in use.
    assert used == {pattern for pattern, _ in PHRASES[item]}, item


@pytest.mark.parametrize("item", sorted(PHRASES))
def test_no_prompt_makes_a_claim_the_notes_contradict(week1: Bank, item: str) -> None:
    entry = week1.get(item)
    for seed in SEEDS:
        prompt = entry.question(seed).variant.prompt
        for pattern, why in FALSE:
            assert not re.search(pattern, prompt), f"{item} seed {seed}: {why}: {prompt!r}"


def test_a_published_count_is_the_models_own(week1: Bank) -> None:
    entry = week1.get("base-model-gap")
    for seed in SEEDS:
        prompt = entry.question(seed).variant.prompt
        match = re.search(
            r"Your own count of (.+?) comes to [\d.]+M parameters; the paper reports (\d+)M", prompt
        )
        assert match, prompt
        assert PUBLISHED[match[1]] == match[2], prompt


def test_bert_checkpoints_have_their_published_sizes() -> None:
    from attnquiz.engine.generators.snippet_shapes import BERT_MODELS

    # (layers, heads, d_model) as the checkpoints' configurations give them; the notes' own run is
    # bert-base-uncased: "12 layers, each (1, 12 heads, T, T)".
    assert BERT_MODELS["bert-base-uncased"] == (12, 12, 768)
    assert BERT_MODELS["bert-large-uncased"] == (24, 16, 1024)
    assert BERT_MODELS["distilbert-base-uncased"] == (6, 12, 768)
    for name, (layers, heads, width) in BERT_MODELS.items():
        sizes = re.fullmatch(r"google/bert_uncased_L-(\d+)_H-(\d+)_A-(\d+)", name)
        if sizes:
            assert (layers, width, heads) == tuple(int(g) for g in sizes.groups()), name
