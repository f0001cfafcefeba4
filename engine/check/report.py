"""The report of ``quiz check``: a bank's items, each with its failures grouped by check (as JSON too).

Below the checks (`attnquiz.engine.check.checks`) and the parent side of a check in a child process
(`attnquiz.engine.check.child`), which rebuilds the child's reports from their JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from attnquiz.engine.errors import Issue, excerpt
from attnquiz.engine.seeding import ORIGINAL_CODE, variant_code

Progress = Callable[[int, int, str], None]
"""Called as ``progress(done, total, item_id)`` after each item."""


@dataclass(frozen=True, slots=True)
class Failure:
    """One way an item fails: which check, what went wrong first, the seed that reproduces it (or
    ``original``; neither for a combination of a formula's parameters that no seed tried drew),
    and how many variants fail that way."""

    check: str
    message: str
    seed: int | None
    count: int = 1
    original: bool = False

    @property
    def code(self) -> str | None:
        """The variant code of the reproducing seed (``original`` for the past paper's instance)."""
        if self.original:
            return ORIGINAL_CODE
        return variant_code(self.seed) if self.seed is not None else None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Failure:
        """The failure that `to_json` wrote (from the child process that checks a bank with plugins)."""
        return cls(data["check"], data["message"], data["seed"], data["count"], data["original"])

    def to_json(self) -> dict[str, Any]:
        """The failure as ``quiz check --json`` prints it."""
        return {
            "check": self.check,
            "message": self.message,
            "seed": self.seed,
            "original": self.original,
            "variant_code": self.code,
            "count": self.count,
        }


@dataclass
class ItemReport:
    """What the checks found for one item."""

    item: str
    kind: str
    generator: str
    variants: int = 0
    distinct: int = 0
    original: bool = False
    combinations: int | None = None
    """For a formula item: how many combinations of its parameters were all tried (None: too many)."""
    boundaries: int | None = None
    """For a formula item with too many combinations to try: how many combinations of its
    parameters' extremes (each range's ends, each choice's smallest and largest) were tried."""
    failures: list[Failure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether every check passed."""
        return not self.failures

    @property
    def sampled(self) -> bool:
        """Whether a formula item's combinations were sampled (seeds and extremes), not all tried."""
        return self.kind == "formula" and self.combinations is None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ItemReport:
        """The item's report that `to_json` wrote."""
        return cls(
            item=data["item"],
            kind=data["kind"],
            generator=data["generator"],
            variants=data["variants"],
            distinct=data["distinct"],
            original=data["original_checked"],
            combinations=data["combinations"],
            boundaries=data.get("boundaries"),
            failures=[Failure.from_json(f) for f in data["failures"]],
            warnings=list(data["warnings"]),
        )

    def to_json(self) -> dict[str, Any]:
        """The item's report as ``quiz check --json`` prints it."""
        return {
            "item": self.item,
            "kind": self.kind,
            "generator": self.generator,
            "ok": self.ok,
            "variants": self.variants,
            "distinct": self.distinct,
            "original_checked": self.original,
            "combinations": self.combinations,
            "sampled": self.sampled,
            "boundaries": self.boundaries,
            "failures": [f.to_json() for f in self.failures],
            "warnings": list(self.warnings),
        }


@dataclass
class BankReport:
    """What the checks found for a bank: its load errors, or a report per item."""

    bank: str
    path: str
    variants: int
    title: str = ""
    errors: list[Issue] = field(default_factory=list)
    items: list[ItemReport] = field(default_factory=list)
    source: str | None = None
    """The bank's text when it has load errors and may be quoted (see `BankError`), for excerpts."""
    environment: str = ""
    """For a bank with code items: which protections the sandbox has on this machine."""

    @property
    def ok(self) -> bool:
        """Whether the bank loaded and every item passed every check."""
        return not self.errors and all(item.ok for item in self.items)

    @property
    def failures(self) -> int:
        """The number of failures (load errors count one each)."""
        return len(self.errors) + sum(len(item.failures) for item in self.items)

    def to_json(self) -> dict[str, Any]:
        """The report as ``quiz check --json`` prints it."""
        return {
            "bank": self.bank,
            "title": self.title,
            "path": self.path,
            "variants": self.variants,
            "ok": self.ok,
            "errors": [
                {
                    "file": i.file,
                    "line": i.line,
                    "field": i.field,
                    "message": i.message,
                    "text": str(i),
                    "excerpt": excerpt(self.source, i),
                }
                for i in self.errors
            ],
            "items": [item.to_json() for item in self.items],
            **({"environment": self.environment} if self.environment else {}),
        }


__all__ = ["BankReport", "Failure", "ItemReport", "Progress"]
