"""Concept questions (``kind: explain``): a prompt, a model answer and its key points, as a generator.

An explain item has one instance: every seed (and ``--original``) gives the same question, so that
``--seed`` and ``--original`` are harmless. Its texts are checked at load like every prompt (the
Markdown and TeX subset of `attnquiz.engine.markup.tex`), each problem at its own line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from attnquiz.engine.answers.kinds import ExplainAnswer
from attnquiz.engine.markup import plain
from attnquiz.engine.registry import GeneratorSpec
from attnquiz.engine.variant import Variant

if TYPE_CHECKING:
    import numpy as np

    from attnquiz.engine.schema import ExplainItem

Loc = tuple[str | int, ...]


class Explain(Struct, frozen=True):
    """A compiled explain item: its texts, which `generate` returns as the one variant there is."""

    item_id: str
    prompt: str
    answer: str
    points: tuple[str, ...]
    hint: str = ""
    file: str = "?"

    @classmethod
    def of(cls, item: ExplainItem, file: str = "?") -> Explain:
        """The explain item of a validated bank entry."""
        return cls(
            item_id=item.id,
            prompt=item.prompt,
            answer=item.answer,
            points=tuple(item.points),
            hint=item.hint,
            file=file,
        )

    def generate(self, rng: np.random.Generator, /, **_kwargs: Any) -> Variant:
        """The question (the same whatever ``rng``: a concept question draws nothing)."""
        return Variant(
            prompt=self.prompt,
            answer=ExplainAnswer(self.answer, self.points),
            solution=(),
            hint=self.hint,
        )

    def summary(self) -> str:
        """One line about the item, for listings: the start of its prompt."""
        text = " ".join(plain.to_terminal(self.prompt).split())
        return text if len(text) <= 100 else text[:99] + "…"

    def spec(self) -> GeneratorSpec:
        """The item as a generator spec, so that a bank item runs it like any generator."""
        # No inputs: its (empty) params model is built only if something validates with it, so a
        # cached bank's concept items never import pydantic.
        return GeneratorSpec(
            name="explain", fn=self.generate, summary=self.summary(), module=self.file, fields={}
        )

    def texts(self) -> list[tuple[Loc, str]]:
        """Every Markdown text of the item with where it is in the item."""
        found: list[tuple[Loc, str]] = [(("prompt",), self.prompt), (("answer",), self.answer)]
        found += [(("points", i), p) for i, p in enumerate(self.points)]
        if self.hint:
            found.append((("hint",), self.hint))
        return found


def check_explain(
    item: ExplainItem, file: str, issue: Callable[[Loc, str, int | None], None]
) -> Explain | None:
    """The compiled item, or None after reporting each text outside the supported Markdown and TeX
    (with the line in the text, when the reader names the line a Markdown problem is on)."""
    from attnquiz.engine.markup import markdown as md
    from attnquiz.engine.markup import tex as markup

    explain = Explain.of(item, file)
    ok = True
    for loc, text in explain.texts():
        try:
            md.check(text)
        except markup.MarkupError as exc:
            row = getattr(exc, "line", None)
            issue(loc, str(exc), row if isinstance(row, int) else None)
            ok = False
    return explain if ok else None
