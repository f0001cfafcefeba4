"""Planning a session: which questions a practice, exam or review session asks, with what seeds, how long.

A plan holds items and seeds, nothing generated yet: a session builds each question as it is shown
(`Planned.build`). It also holds the command that asks the same questions again.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Literal

import numpy as np
from msgspec import Struct

from attnquiz.engine.errors import QuizError
from attnquiz.engine.practice import review
from attnquiz.engine.practice.history_records import utc_now
from attnquiz.engine.seeding import derive_seed
from attnquiz.engine.typed_numbers import whole

if TYPE_CHECKING:
    from attnquiz.engine.bank.loaded import Bank, BankItem
    from attnquiz.engine.practice.store import Store
    from attnquiz.engine.variant import Question

Mode = Literal["practice", "exam", "review"]

DEFAULT_COUNT = 10
"""Questions in a practice session when --count is not given (fewer if the selection is smaller)."""


class SelectionError(QuizError):
    """The options select no questions (an unknown topic, no original instances, ...)."""


class Planned(Struct, frozen=True):
    """One question of a plan: an item and the seed of its variant (None: the past paper's own)."""

    entry: BankItem
    seed: int | None
    reason: str = ""
    prebuilt: Question | None = None

    def build(self) -> Question:
        """The question (generated now unless the planner already built it)."""
        if self.prebuilt is not None:
            return self.prebuilt
        return self.entry.original() if self.seed is None else self.entry.question(self.seed)


class Plan(Struct, frozen=True):
    """What a session will ask, and how to ask it again."""

    title: str
    mode: Mode
    seed: int
    questions: tuple[Planned, ...]
    banks: tuple[str, ...]
    repeat: str
    bank_ref: str | None = None
    time_limit: float | None = None

    def __len__(self) -> int:
        return len(self.questions)


def format_duration(seconds: float) -> str:
    """A duration as the options write it and the summary shows it: ``20m``, ``1h30m``, ``45s``."""
    total = round(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{hours}h" if hours else "", f"{minutes}m" if minutes else "", f"{secs}s" if secs else ""]
    return "".join(parts) or "0s"


# ASCII digits only (re.ASCII): \d would take any script's digits, and more than int reads.
_DURATION = re.compile(r"^(?:(\d{1,6})h)?(?:(\d{1,6})m(?:in)?)?(?:(\d{1,6})s)?$", re.ASCII)
_CLOCK = re.compile(r"\d{1,6}(:\d{1,2}){1,2}", re.ASCII)


def parse_duration(text: str) -> float:
    """Seconds in ``20m``, ``1h30m``, ``90s``, ``45`` (minutes) or ``1:30:00`` / ``20:00``.

    Raises:
        SelectionError: the text is not a duration, or is zero or longer than a day.
    """
    cleaned = text.strip().lower().replace(" ", "")
    seconds: float | None = None
    minutes = whole(cleaned)
    if minutes is not None:
        seconds = minutes * 60.0
    elif _CLOCK.fullmatch(cleaned):
        parts = [int(p) for p in cleaned.split(":")]
        while len(parts) < 3:
            parts.insert(0, 0)
        seconds = parts[0] * 3600.0 + parts[1] * 60.0 + parts[2]
    else:
        match = _DURATION.fullmatch(cleaned)
        if match and any(match.groups()):
            h, m, s = (int(g) if g else 0 for g in match.groups())
            seconds = h * 3600.0 + m * 60.0 + s
    if seconds is None:
        raise SelectionError(
            f"{text[:20]!r} is not a duration: write it like 20m, 1h30m, 90s or 45 (minutes)"
        )
    if not 1 <= seconds <= 24 * 3600:
        raise SelectionError(f"a time limit is from 1s to 24h, not {text[:20]!r}")
    return seconds


def plan_practice(
    bank: Bank,
    *,
    seed: int,
    bank_ref: str | None = None,
    topic: str | None = None,
    items: Sequence[str] = (),
    count: int | None = None,
    original: bool = False,
    exam: bool = False,
    time_limit: float | None = None,
) -> Plan:
    """Choose the questions of a ``quiz run`` session.

    Items are drawn at random (from the session seed) without repeats until every selected item
    has appeared once; a count larger than the selection goes round again with new variants. The
    variant of an item depends only on the session seed, the bank, the item and its round, so the
    same ``--seed`` gives the same questions whatever the count. ``original`` asks the past
    papers' own questions in the bank's order.

    Args:
        bank: The loaded bank.
        seed: The session's seed (printed in the header, so the session can be repeated).
        bank_ref: How the user named the bank (for the repeat command); the bank's name if None.
        topic: Only items of this topic.
        items: Only these items, in this order.
        count: How many questions (default: all originals, or up to `DEFAULT_COUNT`).
        original: The past papers' own instances instead of variants.
        exam: Exam conditions (no feedback until the end).
        time_limit: The exam's time limit in seconds.

    Raises:
        SelectionError: the options select nothing.
        ItemNotFoundError: an item id is not in the bank.
    """
    if count is not None and count < 1:
        raise SelectionError(f"--count must be at least 1, not {count}")
    pool = list(bank.items)
    if topic is not None:
        bank.check_topic(topic)
        pool = [e for e in pool if e.topic == topic]
    if items:
        chosen = [bank.get(i) for i in items]
        for entry in chosen:
            if entry.unavailable:  # named: said, not skipped in silence
                raise SelectionError(f"item {entry.id!r} {entry.unavailable}")
        pool = [e for e in chosen if e in pool]
        if not pool:
            raise SelectionError(f"none of the items {', '.join(items)} is in topic {topic!r}")
    else:
        # An item whose optional package (PyTorch) is missing is not offered: its answers could
        # not be run. `quiz list` and `quiz check` say which and why.
        pool = [e for e in pool if not e.unavailable]
        if not pool:
            raise SelectionError(
                f"no item of bank {bank.name!r} can run here: each needs a package that is not installed "
                f"(quiz list {bank.name} says which)"
            )
    if original:
        pool = [e for e in pool if e.has_original]
        if not pool:
            where = f"topic {topic!r} of " if topic else ""
            raise SelectionError(
                f"no item of {where}bank {bank.name!r} has an original instance; drop --original for variants"
            )

    if original:
        picked = pool[:count] if count is not None else pool
        planned = tuple(Planned(e, None) for e in picked)
    else:
        wanted = count if count is not None else (len(pool) if items else min(DEFAULT_COUNT, len(pool)))
        order_rng = np.random.default_rng(derive_seed(seed, bank.name, "order"))
        sequence: list[BankItem] = []
        while len(sequence) < wanted:
            if items:
                sequence.extend(pool)
            else:
                sequence.extend(pool[i] for i in order_rng.permutation(len(pool)))
        rounds: dict[str, int] = {}
        planned_list = []
        for entry in sequence[:wanted]:
            k = rounds.get(entry.id, 0)
            rounds[entry.id] = k + 1
            planned_list.append(Planned(entry, derive_seed(seed, bank.name, entry.id, k)))
        planned = tuple(planned_list)

    mode: Mode = "exam" if exam or time_limit is not None else "practice"
    words = ["quiz", "run", bank_ref or bank.name]
    if topic:
        words += ["--topic", topic]
    for item_id in items:
        words += ["--item", item_id]
    if count is not None:
        words += ["--count", str(count)]
    if original:
        words.append("--original")
    if mode == "exam":
        words.append("--exam")
    if time_limit is not None:
        words += ["--time", format_duration(time_limit)]
    if not original:
        words += ["--seed", str(seed)]
    return Plan(
        # A bank from QUIZ_PATH or a path says which file it is (it may share a built-in bank's name).
        title=bank.title if bank.origin in {"built-in", ""} else f"{bank.title}  ({bank.path})",
        mode=mode,
        seed=seed,
        questions=planned,
        banks=(bank.name,),
        repeat=shlex.join(words),
        bank_ref=bank_ref or bank.name,
        time_limit=time_limit,
    )


def plan_review(
    banks: Sequence[Bank],
    store: Store | None,
    *,
    seed: int,
    now: datetime | None = None,
    limit: int = review.REVIEW_LIMIT,
    new_per_day: int = review.NEW_PER_DAY,
) -> Plan:
    """Choose the questions of a ``quiz review`` session: what is due, new items mixed in, fresh variants.

    Without a store (no history) every item is new.
    """
    moment = now or utc_now()
    cards = store.cards([b.name for b in banks]) if store is not None else []
    new_today = store.cards_created_since(review.start_of_day(moment)) if store is not None else 0
    queue = review.review_queue(
        banks, cards, now=moment, new_today=new_today, limit=limit, new_per_day=new_per_day
    )
    planned = []
    for slot in queue:
        recent = store.recent_seeds(slot.bank, slot.entry.id) if store is not None else []
        item_seed = derive_seed(seed, slot.bank, slot.entry.id)
        try:
            question = review.fresh_question(slot.entry, item_seed, recent)
        except Exception:  # a variant that cannot be built: the session reports it
            planned.append(Planned(slot.entry, item_seed, slot.reason))
            continue
        planned.append(Planned(slot.entry, question.seed, slot.reason, question))
    names = tuple(b.name for b in banks)
    title = banks[0].title if len(banks) == 1 else "Banks " + ", ".join(names)
    return Plan(
        title=title,
        mode="review",
        seed=seed,
        questions=tuple(planned),
        banks=names,
        repeat="quiz review",
    )


__all__ = [
    "DEFAULT_COUNT",
    "Mode",
    "Plan",
    "Planned",
    "SelectionError",
    "format_duration",
    "parse_duration",
    "plan_practice",
    "plan_review",
]
