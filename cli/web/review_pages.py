"""The review page (what falls due, and a review started from it) and the stats page of `quiz serve`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from attnquiz.engine.bank import finding as bank_files
from attnquiz.engine.errors import QuizError
from attnquiz.web import isolation
from attnquiz.web.forms import field_int, new_seed, query_int, see
from attnquiz.web.state import START, QuizState, found_files
from attnquiz.web.vetting import vetted

if TYPE_CHECKING:
    from attnquiz.engine.bank.loaded import Bank
    from attnquiz.engine.practice.planning import Plan
    from attnquiz.engine.practice.store import Store


RELATIVE_SECONDS = 30.0
"""How old a page's "in 5 min" may be when it is sent again (a page in the browser ages too)."""


class ReviewPages(QuizState):
    """The review and stats pages, and the form that starts a review."""

    def _loaded_banks(self) -> tuple[list[Bank], list[str]]:
        loaded, problems = [], []
        for ref in self.refs:
            try:
                loaded.append(bank_files.load(ref.ref, plugins=True))
            except QuizError as exc:
                problems.append(f"bank {ref.key} is skipped: {str(exc).splitlines()[-1]}")
        return loaded, problems

    async def review_page(self, request: Request) -> Response:
        from attnquiz.engine.practice import review
        from attnquiz.engine.practice.history_file import StoreError, default_path
        from attnquiz.engine.practice.history_records import utc_now
        from attnquiz.engine.practice.store import Store

        loaded, problems = self._loaded_banks()
        path = default_path(self.settings.db)
        now = utc_now()
        due_rows: list[dict[str, Any]] = []
        upcoming: list[dict[str, Any]] = []
        started: set[tuple[str, str]] = set()
        cards: list[Any] = []
        if path.exists():
            try:
                with Store.open(path, explicit=self.settings.db is not None) as store:
                    cards = store.cards([b.name for b in loaded])
            except StoreError as exc:
                problems.append(str(exc))
                cards = []
            titles = {(b.name, e.id): e.source for b in loaded for e in b.items}
            for card in cards:
                started.add((card.bank, card.item))
                row = {
                    "bank": card.bank,
                    "item": card.item,
                    "topic": card.topic,
                    "due": card.due,
                    "source": titles.get((card.bank, card.item), ""),
                }
                (due_rows if review.is_due(card, now) else upcoming).append(row)
        unstarted = sum((b.name, e.id) not in started for b in loaded for e in b.items)
        # The page holds while the banks' and plugins' files and the history are as they are (the
        # key of `review_key`, and the files said here), until a card falls due or the day ends;
        # "in 5 min" is at most `RELATIVE_SECONDS` old. A bank that failed to load is tried again.
        until = review.next_change(cards, now).timestamp()
        soon = now.timestamp() + 3600 + RELATIVE_SECONDS
        if any(row["due"].timestamp() < soon for row in upcoming[:10]):
            until = min(until, now.timestamp() + RELATIVE_SECONDS)
        isolation.depends_on(
            [b.path for b in loaded] + [str(f) for b in loaded for f in b.plugins],
            until=now.timestamp() if problems else until,
        )
        return self.page(
            request,
            "review.html",
            due=due_rows,
            upcoming=upcoming[:10],
            unstarted=unstarted,
            problems=problems,
            history=str(path),
            nothing=_nothing_due(request),
        )

    async def review_start(self, request: Request) -> Response:
        from attnquiz.engine.practice.history_file import StoreError
        from attnquiz.engine.practice.history_records import utc_now
        from attnquiz.engine.practice.planning import plan_review
        from attnquiz.engine.practice.store import open_store

        form = await self.form(request, START)
        try:
            limit = field_int(form, "limit", 1, 500) or 20
            new = field_int(form, "new", 0, 500)
        except QuizError as exc:
            raise HTTPException(400, f"{exc}.") from None
        seed, now = new_seed(), utc_now()

        def planned() -> Plan | None:
            loaded, _ = self._loaded_banks()
            if not loaded:
                return None
            try:
                store: Store | None = open_store(self.settings.db)
            except StoreError:
                store = None
            try:
                return plan_review(
                    loaded, store, seed=seed, now=now, limit=limit, new_per_day=new if new is not None else 10
                )
            finally:
                if store is not None:
                    store.close()

        try:
            plan = await vetted(
                planned, self.settings.time_limit, "loading the banks and choosing the reviews"
            )
        except QuizError as exc:
            raise HTTPException(503, f"{exc} (a plugin that loops?).") from None
        if plan is None:
            raise HTTPException(400, "No bank could be loaded.")
        if not plan.questions:
            return see("/review?nothing=1")
        web = self.add_session(plan, None)
        return see(f"/s/{web.id}")

    async def stats(self, request: Request) -> Response:
        from attnquiz.web.history import collect

        days = _stats_days(request)
        report = collect(self.settings.db, days=days)
        # The page holds while the history is as it is (the key of `stats_key`) until a card falls
        # due or the day ends; a damaged or unreadable history is read again at every request.
        if report.warning:
            isolation.depends_on(until=0.0)
        elif report.holds_until is not None:
            isolation.depends_on(until=report.holds_until.timestamp())
        return self.page(request, "stats.html", report=report, days=days)


def review_key(quiz: QuizState, request: Request) -> tuple[object, ...] | None:
    """What the review page depends on besides the clock and the files it says it read: whether it
    says that nothing was due, the history's version and which file each bank's name finds."""
    version = quiz.history_version.now()
    if version is None:
        return None
    return ("review", _nothing_due(request), version, found_files(quiz))


def stats_key(quiz: QuizState, request: Request) -> tuple[object, ...] | None:
    """What the stats page depends on besides the clock: the days it shows and the history's
    version (None when that cannot be told: the page is made afresh)."""
    version = quiz.history_version.now()
    return None if version is None else ("stats", _stats_days(request), version)


def _stats_days(request: Request) -> int:
    """The days the stats page's chart shows (14 unless asked for, from 1 to 3650)."""
    return query_int(request, "days", 1, 3650) or 14


def _nothing_due(request: Request) -> bool:
    """Whether the review page is shown after a review that found nothing to ask."""
    return request.query_params.get("nothing") == "1"


__all__ = ["RELATIVE_SECONDS", "ReviewPages", "review_key", "stats_key"]
