"""What a generator returns (a Variant) and what every consumer uses (a Question: a variant of an item)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from msgspec import Struct, field
from msgspec.structs import force_setattr, replace

from attnquiz.engine.answers.carry import with_rounded_steps
from attnquiz.engine.answers.kinds import (
    Answer,
    ChoiceAnswer,
    ExplainAnswer,
    ExpressionAnswer,
    Mistake,
    Part,
    PartsAnswer,
    ShapeAnswer,
    answer_json,
)
from attnquiz.engine.answers.values import values_close
from attnquiz.engine.figures import Figure, check_figures, figure_json


class Variant(Struct, frozen=True):
    """One concrete instance of a question family, as its generator built it.

    ``prompt``, ``solution`` steps and ``hint`` are Markdown with TeX maths in ``$...$`` (the
    subset `attnquiz.engine.markup.tex` understands). ``inputs`` are the drawn inputs (JSON-able), shown by
    ``quiz show --json`` and used to tell variants apart.

    Mistakes whose value would be graded as the answer are dropped, and so are later mistakes
    with the value of an earlier one: a wrong answer is named by the first misconception that
    produces it.
    """

    prompt: str
    answer: Answer
    solution: Sequence[str]
    mistakes: Sequence[Mistake] = ()
    inputs: Mapping[str, Any] = field(default_factory=dict)
    hint: str = ""
    # Figures drawn from this variant's numbers (`attnquiz.engine.figures`): heatmaps and line
    # plots, each with the prompt or with the worked solution. Checked when the variant is built.
    figures: Sequence[Figure] = ()
    # A question in parts: the prompt without its parts (a renderer that lays the parts out itself
    # shows this, then each part). ``prompt`` and ``solution`` then hold every part, labelled (a),
    # (b), ..., so that a renderer that knows nothing of parts still shows all of the question.
    # Made by `__post_init__` from ``prompt`` (whatever is given), and not compared (`__eq__`).
    stem: str = ""
    # The mistakes as the generator listed them, before `kept_mistakes` (the item's, then each
    # part's with its label), so that `duplicates` can say which were dropped for another's value.
    # Made by `__post_init__`, and not compared either.
    listed: tuple[tuple[str, Answer, tuple[Mistake, ...]], ...] = ()

    def __post_init__(self) -> None:
        force_setattr(self, "solution", tuple(self.solution))
        listed = [("", self.answer, tuple(self.mistakes))]
        if isinstance(self.answer, PartsAnswer):
            listed += [(p.label, p.answer, tuple(p.mistakes)) for p in self.answer.parts]
        force_setattr(self, "listed", tuple(listed))
        force_setattr(self, "mistakes", kept_mistakes(self.answer, self.mistakes))
        force_setattr(self, "inputs", {k: _jsonable(v) for k, v in self.inputs.items()})
        force_setattr(self, "figures", check_figures(self.figures))
        stem = self.prompt
        if isinstance(self.answer, PartsAnswer):
            parts = tuple(_kept_part(p) for p in self.answer.parts)
            # Where a later part from the rounded earlier ones differs from its exact answer, its
            # worked solution says so, so that the key never contradicts itself.
            parts = with_rounded_steps(parts) or parts
            force_setattr(self, "answer", replace(self.answer, parts=parts))
            # Idempotent, since `replace` runs this again on a composed prompt.
            suffix = "".join(f"\n\n**({p.label})** {p.prompt}" for p in parts)
            stem = self.prompt.removesuffix(suffix)
            force_setattr(self, "prompt", stem + suffix)
            steps = tuple(f"**({p.label})** {step}" for p in parts for step in p.solution)
            solution = tuple(self.solution)
            own = solution[: len(solution) - len(steps)] if solution[-len(steps) :] == steps else solution
            force_setattr(self, "solution", own + steps if steps else own)
        force_setattr(self, "stem", stem)

    def _compared(self) -> tuple[Any, ...]:
        return (self.prompt, self.answer, self.solution, self.mistakes, self.inputs, self.hint, self.figures)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._compared() == self._compared()

    def __hash__(self) -> int:
        return hash(self._compared())  # a TypeError, as ``inputs`` is a dict: a variant is not hashed

    @property
    def duplicates(self) -> list[tuple[str, str, str]]:
        """The listed mistakes dropped because an earlier one has their value, as (part label or "",
        dropped tag, the earlier tag): `quiz check` reports them at their lines (the author listed
        both, and the second can never be named)."""
        found: list[tuple[str, str, str]] = []
        for label, answer, mistakes in self.listed:
            dropped: list[tuple[str, str]] = []
            _sorted_mistakes(answer, mistakes, dropped)
            found += [(label, tag, earlier) for tag, earlier in dropped]
        return found

    def listed_mistakes(self) -> list[tuple[str, Answer, Mistake]]:
        """Every listed mistake with where it belongs ("" or "(a) ") and the answer it is written like."""
        listed: list[tuple[str, Answer, Mistake]] = [("", self.answer, m) for m in self.mistakes]
        for part in self.parts:
            listed += [(f"({part.label}) ", part.answer, m) for m in part.mistakes]
        return listed

    @property
    def parts(self) -> tuple[Part, ...]:
        """The parts (a), (b), ... of a question in parts; () for a question with one answer."""
        return self.answer.parts if isinstance(self.answer, PartsAnswer) else ()

    def texts(self) -> Iterator[str]:
        """Every piece of Markdown the variant shows: prompt, steps, hint, feedback, options and a
        concept question's model answer and key points."""
        yield self.prompt
        yield from self.solution
        yield self.hint
        for mistake in self.mistakes:
            yield mistake.feedback
        answers: list[tuple[Answer, Sequence[Mistake]]] = [(p.answer, p.mistakes) for p in self.parts]
        if not answers:
            answers = [(self.answer, ())]
        for part in self.parts:
            yield part.prompt
            yield from part.solution
        for answer, mistakes in answers:
            for mistake in mistakes:
                yield mistake.feedback
            if isinstance(answer, ChoiceAnswer):
                for option in answer.options:
                    yield option.text
                    yield option.why
            if isinstance(answer, ExplainAnswer):  # a concept question: the model answer and key points
                yield answer.value
                yield from answer.points


def _kept_part(part: Part) -> Part:
    return replace(part, mistakes=kept_mistakes(part.answer, part.mistakes))


def kept_mistakes(answer: Answer, mistakes: Iterable[Mistake]) -> tuple[Mistake, ...]:
    """The mistakes a variant keeps: not graded as the answer (even as written at the precision
    asked for), finite, and each with a value of its own (the first misconception names a value).

    This runs for every variant drawn (and for every redraw of a generator that checks its
    mistakes), so the answer's methods are looked up once rather than per mistake.
    """
    listed = tuple(mistakes)
    # A generator checks its mistakes (`keeps_all`) and then builds the variant with the same answer
    # and the same mistakes, often with more after them: the decision for the ones already decided
    # is taken from the last call (the same objects, immutable, held here so none is another's id).
    last = _LAST_KEPT.get("last")
    if (
        last is not None
        and last[0] is answer
        and len(last[1]) <= len(listed)
        and all(a is b for a, b in zip(last[1], listed, strict=False))
    ):
        kept = _sorted_mistakes(answer, listed[len(last[1]) :], None, list(last[2]))
    else:
        kept = _sorted_mistakes(answer, listed, None)
    _LAST_KEPT["last"] = (answer, listed, kept)
    return kept


_LAST_KEPT: dict[str, tuple[Answer, tuple[Mistake, ...], tuple[Mistake, ...]]] = {}
"""The last call of `kept_mistakes`: its answer, the mistakes listed and those kept (one entry,
replaced whole, so a thread reads one call's entry or another's, never a mix)."""


def _sorted_mistakes(
    answer: Answer,
    mistakes: Iterable[Mistake],
    duplicates: list[tuple[str, str]] | None,
    kept: list[Mistake] | None = None,
) -> tuple[Mistake, ...]:
    """`kept_mistakes`, adding (tag, the earlier tag) to ``duplicates`` for each mistake dropped
    because an earlier one has its value; ``kept``: those already kept of the mistakes before these."""
    matches = answer.matches
    tolerance = answer.tolerance
    # For these kinds a value is written as it is, so "as written" cannot match where the value did not.
    as_is = isinstance(answer, ChoiceAnswer | ShapeAnswer | ExpressionAnswer | PartsAnswer)
    rounded = tolerance.rounded
    kept = [] if kept is None else kept
    for mistake in mistakes:
        value = mistake.value
        if _is_nonfinite(value) or matches(value):
            continue
        written = value if as_is else _written(value, rounded)
        # A value equal to the one just checked is graded as it is (0.5 and 0.50, 3 and 3.0): only a
        # value that rounding changed is checked again.
        rounds = written is not value and written != value
        if rounds and matches(written):
            # Outside the tolerance, but written at the precision asked for it reads as the answer.
            continue
        if kept:
            # As written at the precision asked for, it may read as an earlier one too (14.65 and 14.74
            # both write 14.7): the student's text can then name only the earlier misconception.
            earlier = next(
                (
                    k
                    for k in kept
                    if values_close(tolerance, k.value, value)
                    or (rounds and values_close(tolerance, k.value, written))
                ),
                None,
            )
            if earlier is not None:
                if duplicates is not None:
                    duplicates.append((mistake.tag, earlier.tag))
                continue
        kept.append(mistake)
    return tuple(kept)


def _written(value: Any, rounded: Callable[[float], float]) -> Any:
    """A mistake's numbers rounded the way the answer's tolerance writes them (as a student types it)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return rounded(float(value))
    if isinstance(value, tuple):
        # Plain floats (every entry of a vector or matrix row) inline: this runs for every redraw.
        return tuple(rounded(v) if type(v) is float else _written(v, rounded) for v in value)
    return value


def _is_nonfinite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, tuple):
        for v in value:
            if (not math.isfinite(v)) if type(v) is float else _is_nonfinite(v):
                return True
    return False


_PLAIN = (int, float, str, bool, type(None))


def _jsonable(value: Any) -> Any:
    if type(value) in _PLAIN:  # exact types: a numpy scalar (a float subclass) still goes via tolist
        return value
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


class Question(Struct, frozen=True):
    """A variant of one bank item, with everything needed to show, grade, store and rebuild it."""

    bank: str
    item_id: str
    source: str
    topic: str
    seed: int | None
    code: str
    variant: Variant
    # The item's notes that apply to this instance (its original, or a variant), by audience: only
    # ``student_note`` is shown to students; ``instructor_note`` goes to quiz show and answer keys.
    student_note: str = ""
    instructor_note: str = ""
    # The bank's folder: where the images of its texts are found (`attnquiz.engine.bank.images`).
    folder: str = ""  # not compared (`__eq__`)

    def _compared(self) -> tuple[Any, ...]:
        return (
            self.bank,
            self.item_id,
            self.source,
            self.topic,
            self.seed,
            self.code,
            self.variant,
            self.student_note,
            self.instructor_note,
        )

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._compared() == self._compared()

    def __hash__(self) -> int:
        return hash(self._compared())

    def _image_figures(self) -> list[dict[str, Any]]:
        """The images of the prompt (with its parts and options) and of the solution, each once."""
        from attnquiz.engine.markup.markdown import image_sources

        variant = self.variant
        prompt = [variant.prompt, variant.hint]
        if isinstance(variant.answer, ChoiceAnswer):
            prompt += [o.text for o in variant.answer.options]
        out: list[dict[str, Any]] = []
        seen: set[tuple[str, str]] = set()
        for where, texts in (("prompt", prompt), ("solution", list(variant.solution))):
            for text in texts:
                if "![" not in text:
                    continue
                for alt, src in image_sources(text):
                    if (where, src) not in seen:
                        seen.add((where, src))
                        path = str(Path(self.folder) / src) if self.folder else None
                        out.append({"kind": "image", "where": where, "file": src, "alt": alt, "path": path})
        return out

    @property
    def is_original(self) -> bool:
        """Whether this is the past paper's own instance rather than a seeded variant."""
        return self.seed is None

    @property
    def answer(self) -> Answer:
        """The variant's answer."""
        return self.variant.answer

    def to_json(self) -> dict[str, Any]:
        """The fields ``quiz show --json`` and the JSON export print."""
        variant = self.variant
        return {
            "bank": self.bank,
            "item": self.item_id,
            "source": self.source,
            "topic": self.topic,
            "seed": self.seed,
            "original": self.is_original,
            "variant_code": self.code,
            "prompt": variant.prompt,
            "instructions": variant.answer.instructions(),
            "answer": answer_json(variant.answer),
            "answer_text": variant.answer.format(),
            "mistakes": [m.to_json() for m in variant.mistakes],
            "solution": list(variant.solution),
            "hint": variant.hint,
            "params": dict(variant.inputs),
            "student_note": self.student_note,
            "instructor_note": self.instructor_note,
            # Figures as data, so that a script can draw them: {"kind": "heatmap" | "line", ...}.
            # and the image files its texts show: {"kind": "image", "file": …, "alt": …, "where": …}.
            "figures": [figure_json(f) for f in variant.figures] + self._image_figures(),
            # Only a question in parts has the key, so that one-answer questions print as before.
            **(_parts_json(variant) if variant.parts else {}),
        }


def _parts_json(variant: Variant) -> dict[str, Any]:
    return {"stem": variant.stem, "parts": [p.to_json() for p in variant.parts]}
