"""Choices: the letters ticked, scored by the item's scheme, with each wrong tick's reason in the feedback."""

from __future__ import annotations

from collections.abc import Sequence

from attnquiz.engine.answers import parse, read_choices
from attnquiz.engine.answers.kinds import ChoiceAnswer, Mistake
from attnquiz.engine.grading.outcome import Grade, Status, correct, invalid


def choice_score(answer: ChoiceAnswer, selected: frozenset[str]) -> float:
    """The score of a set of ticked letters under the item's scheme.

    With C the correct letters, S the ticked ones and N the number of options:

    - ``net`` (the default; PrairieLearn's net-correct, Canvas's rule): +1/|C| per right tick,
      -1/|C| per wrong tick, floored at 0: max(0, (|S∩C| - |S∖C|) / |C|);
    - ``all-or-nothing``: 1 if S = C, else 0;
    - ``each-answer``: each option is a true/false decision worth 1/N: 1 - (|S∖C| + |C∖S|) / N.

    A single-choice item scores 1 or 0 whatever its scheme: a wrong pick is simply wrong.
    """
    unknown = selected - set(answer.letters)
    if unknown:
        raise ValueError(f"letters {', '.join(sorted(unknown))} are not options of this item")
    correct = answer.correct_letters
    if selected == correct:
        return 1.0
    if not answer.multiple or answer.scoring == "all-or-nothing":
        return 0.0
    right, wrong = len(selected & correct), len(selected - correct)
    if answer.scoring == "net":
        return max(0.0, (right - wrong) / len(correct))
    missed = len(correct - selected)
    return 1.0 - (wrong + missed) / len(answer.options)


def grade_choice(answer: ChoiceAnswer, response: str, mistakes: Sequence[Mistake]) -> Grade:
    """Grade a single or multiple choice: partial when the score is strictly between 0 and 1."""
    selected = read_choices.letters(response, answer.letters, multiple=answer.multiple)
    if isinstance(selected, parse.Invalid):
        return invalid(answer, selected.reason, selected.read_as)
    read = ", ".join(sorted(selected))
    score = choice_score(answer, selected)
    if score == 1.0:
        return correct(read)
    status: Status = "partial" if score > 0 else "wrong"
    mistake = next((m for m in mistakes if isinstance(m.value, frozenset) and m.value == selected), None)
    lines: list[str] = []
    if mistake is not None:
        lines.append(mistake.feedback)
    for letter, option in zip(answer.letters, answer.options, strict=True):
        if letter in selected and not option.correct:
            verdict = "is not the answer" if not answer.multiple else "is false"
            lines.append(f"**{letter}** {verdict}" + (f": {option.why}" if option.why else "."))
    missed = len(answer.correct_letters - selected)
    if answer.multiple and missed:
        lines.append(f"{missed} true option{'s are' if missed != 1 else ' is'} not ticked.")
    if status == "partial":
        lines.insert(0, f"Partly right: score {score:.2f}.")
    return Grade(status, score, "\n\n".join(lines), mistake, read)


__all__ = ["choice_score", "grade_choice"]
