"""Winograd sentences (the essay): what "it" refers to where one word switches it, and where "it" stands.

Resolving "it" takes the meaning of the whole sentence, not its position: the point of attention.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from attnquiz.engine.answers.kinds import ChoiceAnswer, IntegerAnswer, Mistake, Option
from attnquiz.engine.generators.common import pick
from attnquiz.engine.registry import generator
from attnquiz.engine.variant import Variant

# ---------------------------------------------------------------------------------------------
# Winograd sentences (the essay): what "it" means, and where it stands
# ---------------------------------------------------------------------------------------------

# (sentence with {} for the switch word, first noun, second noun, word that makes "it" the first noun,
# word that makes it the second noun, why for the first, why for the second).
WINOGRAD: tuple[tuple[str, str, str, str, str, str, str], ...] = (
    (
        "The trophy did not fit in the brown suitcase because it was too {}.",
        "the trophy",
        "the suitcase",
        "big",
        "small",
        "a suitcase being too big would not stop something fitting inside it",
        "a trophy being too small would not stop it fitting",
    ),
    (
        "The table did not fit through the doorway because it was too {}.",
        "the table",
        "the doorway",
        "wide",
        "narrow",
        "a wide doorway would let the table through",
        "a narrow table would pass through easily",
    ),
    (
        "The sculpture rolled off the shelf because it was not {}.",
        "the sculpture",
        "the shelf",
        "anchored",
        "level",
        "what rolls off needs anchoring, not the shelf it stands on",
        "a shelf that is not level lets things roll off it",
    ),
    (
        "The large ball crashed right through the table because it was made of {}.",
        "the ball",
        "the table",
        "steel",
        "styrofoam",
        "a steel table would stop the ball",
        "a styrofoam ball could not crash through a table",
    ),
    (
        "The delivery truck zoomed past the school bus because it was going so {}.",
        "the truck",
        "the bus",
        "fast",
        "slow",
        "the one that zooms past is the fast one",
        "the one being passed is the slow one",
    ),
)

Twist = Literal["first", "second"]


def _words(sentence: str) -> list[str]:
    return sentence.split()


def pronoun_position(sentence: str, pronoun: str = "it") -> int:
    """The 1-based position of ``pronoun`` among the sentence's words (split on spaces)."""
    for k, word in enumerate(_words(sentence), start=1):
        if word.strip(".,;:!?\"'").lower() == pronoun:
            return k
    raise ValueError(f"no {pronoun!r} in {sentence!r}")


@generator
def winograd_referent(
    rng: np.random.Generator,
    /,
    *,
    pair: int | None = None,
    twist: Twist | None = None,
) -> Variant:
    """What "it" refers to in a Winograd sentence, where one word switches the answer."""
    k = int(pair) if pair is not None else int(rng.integers(len(WINOGRAD)))
    if not 0 <= k < len(WINOGRAD):
        raise ValueError(f"pair is 0 to {len(WINOGRAD) - 1}, not {k}")
    text, first, second, word_first, word_second, why_first, why_second = WINOGRAD[k]
    which: Twist = twist if twist is not None else pick(rng, ("first", "second"))
    word, other_word = (word_first, word_second) if which == "first" else (word_second, word_first)
    right, wrong = (first, second) if which == "first" else (second, first)
    why = why_first if which == "first" else why_second
    sentence = text.format(word)
    options = [Option(first.capitalize(), which == "first"), Option(second.capitalize(), which == "second")]
    options = [
        Option(o.text, o.correct, "" if o.correct else f"Here {why}, so “it” is {right}.") for o in options
    ]
    if (pair is None or twist is None) and rng.random() < 0.5:
        options.reverse()
    position = pronoun_position(sentence)
    prompt = f"“{sentence}” What does “it” refer to?"
    solution = [
        f"“It” is {right}: {why}.",
        f"Change “{word}” to “{other_word}” and “it” means {wrong} instead, though “it” still stands at word "
        f"{position}. Resolving it takes the meaning of the whole sentence, not the position: attention "
        "lets “it” look at every other word and weigh them by relevance.",
    ]
    return Variant(
        prompt=prompt,
        answer=ChoiceAnswer(tuple(options), multiple=False),
        solution=solution,
        inputs={"pair": k, "twist": which},
        hint=f"Which of the two would being “{word}” explain?",
    )


@generator
def winograd_it_position(
    rng: np.random.Generator,
    /,
    *,
    sentence: str | None = None,
) -> Variant:
    """The word position of "it" in a Winograd sentence (the same for both versions of the sentence)."""
    if sentence is not None:
        text = str(sentence)
        switch = ""
    else:
        template, _, _, word_first, word_second, _, _ = WINOGRAD[int(rng.integers(len(WINOGRAD)))]
        text = template.format(word_first)
        switch = f" (or “{word_second}” in place of “{word_first}”)"
    position = pronoun_position(text)
    prompt = (
        f"In the sentence “{text}”{switch}, at which word does “it” stand? Count the words from 1, "
        "splitting at spaces."
    )
    solution = [
        "Counting the words: "
        + ", ".join(f"{w.strip('.,')} ({i})" for i, w in enumerate(_words(text), start=1) if i <= position)
        + ".",
        f"So “it” is word {position}, and it stays there whichever word changes its meaning: attention "
        "follows meaning, not position.",
    ]
    mistakes = [
        Mistake(
            "words-before",
            position - 1,
            "That is the number of words before “it” (or a count from 0). Count from 1 and include “it”.",
        ),
    ]
    return Variant(
        prompt=prompt,
        answer=IntegerAnswer(position),
        solution=solution,
        mistakes=mistakes,
        inputs={"sentence": text},
        hint="Number the words 1, 2, 3, … until you reach “it”.",
    )
