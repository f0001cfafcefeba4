"""What practice reads of an item, as plain data: its id, topic, source, notes, tolerance and scoring.

A bank's items are validated as pydantic models (`attnquiz.engine.schema`) when the YAML is read.
Everything a session, `quiz show` or `quiz answer` needs of an item besides its generator is here,
in frozen structs, so that a bank read back from the cache (`attnquiz.engine.bank.finding`)
builds a question without importing pydantic (a fifth of the first question's start-up); the
validated model itself is kept in the cache apart and read back only where something asks for a
field that is not here (`attnquiz.engine.bank.loaded.BankItem.item`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from msgspec import Struct

if TYPE_CHECKING:
    from attnquiz.engine.answers.kinds import Scoring
    from attnquiz.engine.answers.tolerance import Tolerance
    from attnquiz.engine.schema import Item

NoteAudience = Literal["instructors", "students"]
NoteScope = Literal["every", "original", "variants"]


class NoteFacts(Struct, frozen=True):
    """A note about an item: its text, who reads it and which instances it is about."""

    text: str
    audience: NoteAudience
    on: NoteScope


class ItemFacts(Struct, frozen=True):
    """The fields of a validated item that building, showing and grading its questions read."""

    id: str
    topic: str
    source: str
    notes: tuple[NoteFacts, ...]
    requires: tuple[str, ...]
    tolerance: Tolerance | None
    """A generator item's own tolerance for numeric answers (None: the generator's)."""
    scoring: Scoring | None
    """A generator item's own scoring of a multiple-select answer (None: the generator's). Formula
    and explain items build their answers themselves: both are None for them."""

    @classmethod
    def of(cls, item: Item) -> ItemFacts:
        """The facts of a validated item."""
        from attnquiz.engine.schema import GeneratorItem

        given = item if isinstance(item, GeneratorItem) else None
        tolerance = given.tolerance if given is not None else None
        return cls(
            id=item.id,
            topic=item.topic,
            source=item.source,
            notes=tuple(NoteFacts(n.text, n.audience, n.on) for n in item.note),
            requires=tuple(getattr(item, "requires", ())),
            tolerance=tolerance.to_tolerance() if tolerance is not None else None,
            scoring=given.scoring if given is not None else None,
        )

    def note_text(self, audience: NoteAudience, *, original: bool) -> str:
        """The notes for ``audience`` about the original (or about a variant), as one paragraph."""
        skipped = "variants" if original else "original"
        return " ".join(n.text for n in self.notes if n.audience == audience and n.on != skipped)

    def notes_not_on(self, scope: NoteScope) -> str:
        """The text of every note not only about ``scope`` (what is said when an instance is missing)."""
        return " ".join(n.text for n in self.notes if n.on != scope)
