"""Text to numbers: token ids from a vocabulary and back, and the shapes of embedding matrices."""

from __future__ import annotations

from typing import Literal

import numpy as np

from attnquiz.engine import numerics
from attnquiz.engine.answers.kinds import ChoiceAnswer, Mistake, Option, ShapeAnswer, VectorAnswer, symbols
from attnquiz.engine.answers.tolerance import EXACT
from attnquiz.engine.generators.common import group, pick, vec
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant

D_MODEL = r"d_{\text{model}}"
SENTENCES = (
    "the cat sat on the mat",
    "I love AI",
    "attention is all you need",
    "the dog chased the cat",
    "we read the book",
    "she likes green tea",
    "the model predicts the next word",
    "time flies like an arrow",
)
EXTRA_WORDS = ("a", "bird", "runs", "blue", "and", "fast", "tree", "sun", "old", "sings")


def _draw_vocab(rng: np.random.Generator) -> tuple[str, dict[str, int]]:
    """A short sentence and a small vocabulary holding its words and a few others, ids shuffled."""
    sentence = str(pick(rng, SENTENCES))
    words = list(dict.fromkeys(sentence.split()))
    extras = [w for w in EXTRA_WORDS if w not in words]
    words += [extras[i] for i in rng.choice(len(extras), size=int(rng.integers(1, 4)), replace=False)]
    ids = rng.permutation(len(words))
    return sentence, {w: int(i) for w, i in zip(words, ids, strict=True)}


def _vocab_text(vocab: dict[str, int]) -> str:
    return ", ".join(f'"{w}" → {i}' for w, i in sorted(vocab.items(), key=lambda item: item[1]))


def _given_vocab(
    sentence: str | None, vocab: dict[str, int] | None, rng: np.random.Generator
) -> tuple[str, dict[str, int]]:
    if (sentence is None) != (vocab is None):
        raise ValueError("give the sentence and its vocabulary together")
    if sentence is not None and vocab is not None:
        if len(set(vocab.values())) != len(vocab):
            raise ValueError("two words of the vocabulary share an id")
        return sentence, dict(vocab)
    return _draw_vocab(rng)


@generator
def token_ids(
    rng: np.random.Generator,
    /,
    *,
    sentence: str | None = None,
    vocab: dict[str, int] | None = None,
) -> Variant:
    """Token ids of a sentence from a word-level vocabulary."""
    while True:
        text, table = _given_vocab(sentence, vocab, rng)
        tokens = text.split()
        ids = numerics.encode_tokens(tokens, table)
        # Ids that happen to count 0, 1, 2, ... would make positions read as the right answer.
        if sentence is not None or list(ids) != list(range(len(tokens))):
            break
    repeated = len(set(tokens)) < len(tokens)
    prompt = (
        f"A tokenizer splits text at spaces and maps each token to an id with the vocabulary "
        f'{_vocab_text(table)}. Turn the sentence "{text}" into token ids.'
    )
    lookups = ", ".join(f'"{t}" → {i}' for t, i in zip(tokens, ids, strict=True))
    solution = [
        "Split the sentence into tokens: " + ", ".join(f'"{t}"' for t in tokens) + ".",
        f"Look each token up in the vocabulary: {lookups}.",
        "Ids: ["
        + ", ".join(str(i) for i in ids)
        + "]"
        + (": a repeated word gets the same id every time." if repeated else "."),
    ]
    mistakes = [
        Mistake(
            "positions-not-ids",
            vec(range(len(tokens))),
            "Those are the tokens' positions in the sentence. An id comes from the vocabulary and "
            "is the same for a word wherever it appears.",
        )
    ]
    return Variant(
        prompt=prompt,
        answer=VectorAnswer(vec(ids), EXACT),
        solution=solution,
        mistakes=mistakes,
        inputs={"sentence": text, "vocab": table},
        hint="Split first, then look each piece up.",
    )


@generator
def decode_ids(
    rng: np.random.Generator,
    /,
    *,
    ids: list[int] | None = None,
    vocab: dict[str, int] | None = None,
    options: int = 4,
) -> Variant:
    """Which text a sequence of token ids decodes to, through the reversed vocabulary (one choice)."""
    if (ids is None) != (vocab is None):
        raise ValueError("give the ids and their vocabulary together")
    if ids is not None and vocab is not None:
        table, sequence = dict(vocab), [int(i) for i in ids]
    else:
        text, table = _draw_vocab(rng)
        sequence = numerics.encode_tokens(text.split(), table)
    words = numerics.decode_ids(sequence, table)
    size = len(table)
    inverse = {i: w for w, i in table.items()}
    right = " ".join(words)
    slips = {
        " ".join(reversed(words)): "That reads the ids from right to left; they decode in order.",
        " ".join(inverse[(i + 1) % size] for i in sequence if (i + 1) % size in inverse): (
            "That takes the word after each id's entry; id i is exactly the word the vocabulary maps to i."
        ),
        " ".join(inverse[(i - 1) % size] for i in sequence if (i - 1) % size in inverse): (
            "That counts the vocabulary's entries from 1, so it takes the word before each id's "
            "entry; ids count from 0 and id i is the word the vocabulary maps to i."
        ),
    }
    distractors = [(t, why) for t, why in slips.items() if t != right and len(t.split()) == len(words)]
    while len(distractors) < options - 1:
        shuffled = " ".join(words[j] for j in rng.permutation(len(words)))
        if shuffled != right and shuffled not in dict(distractors):
            distractors.append((shuffled, "Those are the right words in the wrong order."))
    picked = [distractors[j] for j in range(options - 1)]
    shown = [(right, True, ""), *((t, False, why) for t, why in picked)]
    order = rng.permutation(len(shown))
    answer = ChoiceAnswer(
        tuple(Option(f'"{shown[j][0]}"', shown[j][1], shown[j][2]) for j in order),
        multiple=False,
    )
    prompt = (
        f"A tokenizer has the vocabulary {_vocab_text(table)}. Which text do the token ids "
        "[" + ", ".join(str(i) for i in sequence) + "] decode to?"
    )
    solution = [
        "Reverse the vocabulary so that it maps ids to tokens: "
        + ", ".join(f'{i} → "{inverse[i]}"' for i in sorted(inverse))
        + ".",
        "Decode the ids in order: "
        + ", ".join(f'{i} → "{w}"' for i, w in zip(sequence, words, strict=True))
        + ".",
        f'Joined with spaces: "{right}", option {", ".join(sorted(answer.correct_letters))}.',
    ]
    return Variant(
        prompt=prompt,
        answer=answer,
        solution=solution,
        inputs={"ids": sequence, "vocab": table, "shown": [shown[j][0] for j in order]},
        hint="Turn the vocabulary around: id → token.",
    )


# (d_model, vocabulary size, model) of published models.
EMBEDDING_MODELS = (
    (512, 37000, "the original Transformer (base)"),
    (768, 30522, "BERT-base"),
    (1024, 30522, "BERT-large"),
    (768, 50257, "GPT-2 small"),
    (1024, 50257, "GPT-2 medium"),
    (512, 32128, "T5-small"),
    (768, 32128, "T5-base"),
)
SENTENCE_TOKENS = (3, 5, 6, 8, 10, 12, 16, 20, 32, 50, 64, 128, 256, 512)


@generator
def embedding_shape(
    rng: np.random.Generator,
    /,
    *,
    part: Literal["sequence", "table"] = "sequence",
    tokens: int | None = None,
    d_model: int | None = None,
    vocab_size: int | None = None,
    model: str | None = None,
) -> Variant:
    """Shape of a sentence's embedding matrix [T, d_model], or of the embedding table [V, d_model]."""
    if d_model is None or (part == "table" and vocab_size is None):
        d, v, name = pick(rng, EMBEDDING_MODELS)
        d = d_model if d_model is not None else d
        v = vocab_size if vocab_size is not None else v
        name = model if model is not None else name
    else:
        d, v, name = d_model, vocab_size, model
    t = tokens if tokens is not None else int(pick(rng, [n for n in SENTENCE_TOKENS if n != d]))
    if t == d or (v is not None and v in (t, d)):
        raise ValueError(
            "tokens, d_model and the vocabulary size must differ, or the shapes cannot tell them apart"
        )
    vocab = f" and a vocabulary of {v:,} tokens" if v is not None else ""
    setup = (
        rf"{name[:1].upper() + name[1:]}, with ${D_MODEL} = {d}${vocab},"
        if name
        else rf"A model with ${D_MODEL} = {d}${vocab}"
    )
    if part == "sequence":
        question = (
            f"{setup} embeds a sentence of {t} tokens. What is the shape of the matrix of token "
            "embeddings that enters the first layer?"
        )
        answer: tuple[int, ...] = (t, d)
        solution = [
            "The embedding table holds one learned vector of width "
            rf"${D_MODEL} = {d}$ per token of the vocabulary.",
            f"Each of the {t} token ids selects one row of it, so the sentence becomes one row per "
            rf"token: $[T, {D_MODEL}] = [{t}, {d}]$.",
            "Positional encodings of the same shape are added to it; the shape stays "
            f"[{t}, {d}] through every layer.",
        ]
        mistakes = [
            Mistake(
                "transposed",
                (d, t),
                r"That is transposed: the notes' convention is one row per token, $[T, d_{\text{model}}]$.",
            )
        ]
        if v is not None:
            mistakes += [
                Mistake(
                    "vocab-table",
                    (v, d),
                    "That is the embedding table of the whole vocabulary. A sentence only uses the "
                    "rows of its own tokens.",
                ),
                Mistake(
                    "one-hot-rows",
                    (t, v),
                    "That is the one-hot matrix of the ids. The embedding lookup turns each id into a "
                    rf"dense vector of width ${D_MODEL}$.",
                ),
            ]
    else:
        if v is None:
            raise ValueError("the table needs a vocabulary size")
        question = f"{setup} embeds a sentence of {t} tokens. What is the shape of its token-embedding table?"
        answer = (v, d)
        solution = [
            rf"The table has one learned row of width ${D_MODEL} = {d}$ for every token of the vocabulary.",
            # No thousands separator inside the shape, where "32,128" would read as two dimensions.
            rf"So it is $[V, {D_MODEL}] = [{v}, {d}]$, whatever the sentence: "
            rf"${group(v)} \cdot {d} = {group(v * d)}$ parameters.",
            f"The sentence's {t} ids select {t} of its rows, giving a [{t}, {d}] matrix.",
        ]
        mistakes = [
            Mistake(
                "sequence-not-table",
                (t, d),
                "That is the sentence's embedding matrix. The table holds a row for every token of "
                "the vocabulary, not just this sentence's.",
            ),
            Mistake(
                "transposed",
                (d, v),
                r"That is transposed: the table has one row per vocabulary token, $[V, d_{\text{model}}]$.",
            ),
        ]
    return Variant(
        prompt=question,
        answer=ShapeAnswer(answer, symbols=symbols(d_model=d)),
        solution=solution,
        mistakes=mistakes,
        inputs={"part": part, "tokens": t, "d_model": d, "vocab_size": v, "model": name},
        hint="Ask what each row of the matrix stands for.",
    )
