"""The home page: the banks offered and the sessions to carry on; a practice or an exam started or resumed.

Every page of `quiz serve` links back here; it is rendered in a child (`attnquiz.web.isolation`) and
kept while the banks' files, the sessions and the kept exams are as they were (`home_key`).
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from attnquiz.engine.bank import finding as bank_files
from attnquiz.engine.errors import QuizError
from attnquiz.web import isolation
from attnquiz.web.forms import MAX_RESPONSE, field_int, field_text, new_seed, see
from attnquiz.web.state import START, QuizState, WebSession, found_files, history_path
from attnquiz.web.vetting import done, vetted

if TYPE_CHECKING:
    from attnquiz.engine.bank.loaded import Bank
    from attnquiz.engine.practice.planning import Plan


class HomePages(QuizState):
    """The home page, and the forms on it that start a session or take up an exam kept on disk."""

    async def home(self, request: Request, error: str = "", status: int = 200) -> Response:
        cards: list[dict[str, Any]] = []
        for ref in self.refs:
            try:
                isolation.depends_on([bank_files.find(ref.ref).path])  # kept while it is unchanged
                bank = bank_files.load(ref.ref)  # a listing: no plugin is imported for it
            except QuizError as exc:
                cards.append({"key": ref.key, "ref": ref.ref, "error": str(exc).splitlines()[-1]})
                continue
            cards.append(
                {
                    "key": ref.key,
                    "ref": ref.ref,
                    "error": "",
                    "title": bank.title,
                    "count": len(bank.items),
                    "topics": bank.topics(),
                    "originals": sum(e.has_original for e in bank.items),
                }
            )
        unfinished = _unfinished(self)
        if any(u["remaining"] is not None for u in unfinished):
            isolation.depends_on(until=0.0)  # an exam's clock runs: its time left is read afresh
        kept, unreadable = _kept_exams(self)
        return self.page(
            request,
            "home.html",
            status,
            cards=cards,
            error=error,
            unfinished=unfinished,
            kept=kept,
            unreadable=unreadable,
        )

    async def start(self, request: Request) -> Response:
        from attnquiz.engine.practice.planning import parse_duration, plan_practice

        form = await self.form(request, START)
        ref = self.bank_ref(field_text(form, "bank"))
        try:
            count = field_int(form, "count", 1, 500)
            seed = field_int(form, "seed", 0, 2**32 - 1)
            original = form.get("original") == "on"
            exam = form.get("mode") == "exam"
            time_text = field_text(form, "time").strip()
            limit = parse_duration(time_text) if exam and time_text else None
            topic = field_text(form, "topic") or None
            items = [i.strip() for i in field_text(form, "items").split(",") if i.strip()][:100]
            if original and seed is not None:
                raise QuizError("the past papers' own questions have no seed: leave the seed empty")
            chosen = seed if seed is not None else new_seed()

            def planned() -> Plan:
                return plan_practice(
                    bank_files.load(ref.ref, plugins=True),
                    seed=chosen,
                    bank_ref=ref.ref,
                    topic=topic,
                    items=items,
                    count=count,
                    original=original,
                    exam=exam,
                    time_limit=limit,
                )

            plan = await vetted(planned, self.settings.time_limit, f"bank {ref.key}: preparing its questions")
        except QuizError as exc:
            return await self.home(request, error=str(exc).splitlines()[-1], status=400)
        web = self.add_session(plan, ref.key)
        return see(f"/s/{web.id}")

    async def resume_exam(self, request: Request) -> Response:
        """An exam kept on disk (left in a terminal, or by a server stopped or killed) taken up again
        here: its questions, saved answers and time left (`attnquiz.engine.practice.exam_state.resume`)."""
        import secrets

        from attnquiz.engine.practice import exam_state
        from attnquiz.engine.practice.history_file import StoreError
        from attnquiz.engine.practice.store import open_store

        form = await self.form(request, START)
        wanted = field_text(form, "exam")
        running = self._running(wanted)
        if running is not None:
            return see(f"/s/{running.id}")
        history = history_path(self.settings.db)
        found = exam_state.saved_exams(history)[0] if history is not None else []
        chosen = next((e for e in found if e.id == wanted), None)
        if chosen is None:
            gone = "That exam is no longer kept: it was handed in, or set aside."
            return await self.home(request, error=gone, status=404)
        ref = self.offering(chosen.bank, chosen.bank_ref, chosen.data["bank_path"])
        if ref is None:
            return await self.home(request, error=_not_offered(chosen.bank_ref), status=400)

        def rebuilt() -> Bank:
            return bank_files.load(ref.ref, plugins=True)

        try:
            # The bank's code rebuilds the questions: tried first in a child, as a session's planning is
            # (without the history, and without keeping anything: the child's lock goes with it).
            tried = await isolation.in_child(
                lambda: done(exam_state.resume(chosen, rebuilt(), None, timed=False)),
                cpu_seconds=self.settings.time_limit,
            )
            if tried.kind == "stopped":
                raise QuizError(f"bank {ref.key}: rebuilding the exam was stopped: {tried.error}")
            running = self._running(wanted)
            if running is not None:
                return see(f"/s/{running.id}")  # resumed here meanwhile (a second click)
            bank = rebuilt()
            try:
                store = open_store(self.settings.db)
            except StoreError as exc:
                raise QuizError(f"{exc}: the exam cannot be resumed without its history") from None
            try:
                session, draft = exam_state.resume(chosen, bank, store)
            except BaseException:
                store.close()
                raise
        except exam_state.ExamInUse as exc:
            return await self.home(request, error=f"That exam cannot be resumed here: {exc}.", status=409)
        except exam_state.ResumeError as exc:
            kept = exam_state.set_aside(chosen)  # it never will be: out of the list, kept to look at
            where = f" (it is kept as {kept.name})" if kept is not None else ""
            return await self.home(request, error=f"{str(exc).splitlines()[-1]}{where}.", status=409)
        except QuizError as exc:
            return await self.home(request, error=str(exc).splitlines()[-1], status=400)
        web = WebSession(secrets.token_urlsafe(16), session, store, ref.key)
        web.warnings.extend(session.take_warnings())
        current = session.current
        if draft and current is not None:
            web.typed[current.position] = draft[:MAX_RESPONSE]  # the line being typed when it was left
        self.register(web)
        return see(f"/s/{web.id}")

    def _running(self, exam: str) -> WebSession | None:
        """The session of this server running the saved exam ``exam`` (None: none)."""
        return next(
            (w for w in self.sessions.values() if w.session.id == exam and not w.session.finished), None
        )


def home_key(quiz: QuizState, request: Request) -> tuple[object, ...]:
    """What the home page depends on besides the bank files it says it read (`isolation.depends_on`):
    which file each offered bank's name finds now (a QUIZ_PATH file may come to hide a built-in one)
    and the sessions it offers to carry on."""
    sessions = tuple((u["id"], u["answered"], u["count"]) for u in _unfinished(quiz))
    return ("home", found_files(quiz), sessions, _kept_stamps(quiz))


def _unfinished(quiz: QuizState) -> list[dict[str, Any]]:
    """The sessions of this server not ended yet (a tab closed, or left by a link), exams first:
    the home page offers to carry on with each, its saved answers and its time left."""
    found = []
    for web in reversed(quiz.sessions.values()):
        session = web.session
        if session.finished:
            continue
        found.append(
            {
                "id": web.id,
                "title": session.plan.title,
                "mode": session.plan.mode,
                "exam": session.exam,
                "answered": sum(s.answered for s in session.slots),
                "count": sum(s.broken is None for s in session.slots),
                "remaining": session.remaining(),
            }
        )
    return sorted(found, key=lambda u: not u["exam"])


def _kept_exams(quiz: QuizState) -> tuple[list[dict[str, Any]], list[str]]:
    """The exams kept on disk beside the history (left in a terminal, or by a server that stopped)
    that this server is not running, to resume, and a line for each saved exam that cannot be."""
    from attnquiz.engine.practice import exam_state

    history = history_path(quiz.settings.db)
    if history is None:
        return [], []
    running = {w.session.id for w in quiz.sessions.values() if not w.session.finished}
    found, problems = exam_state.saved_exams(history)
    kept = []
    for exam in found:
        if exam.id in running:
            continue
        ref = quiz.offering(exam.bank, exam.bank_ref, exam.data["bank_path"])
        kept.append(
            {
                "id": exam.id,
                "title": exam.title,
                "bank": exam.bank_ref,
                "answered": exam.answered,
                "count": exam.questions,
                "remaining": exam.remaining,
                "saved": _when_saved(exam.saved_at),
                "problem": "" if ref is not None else _not_offered(exam.bank_ref),
            }
        )
    return kept, [line.splitlines()[-1] for line in problems]


def _kept_stamps(quiz: QuizState) -> tuple[tuple[str, int, int], ...]:
    """What the kept exams' part of the home page depends on: their folder (who may write to it) and
    their files as they are now."""
    from attnquiz.engine.practice.exam_state import exams_folder

    history = history_path(quiz.settings.db)
    if history is None:
        return ()
    folder = exams_folder(history)
    try:
        info = folder.stat()
        stamps = [("", info.st_mode, info.st_uid)]
        with os.scandir(folder) as entries:
            for entry in entries:
                info = entry.stat(follow_symlinks=False)
                stamps.append((entry.name, info.st_mtime_ns, info.st_size))
    except OSError:
        return ()
    return tuple(sorted(stamps))


def _not_offered(bank: str) -> str:
    return f"its bank {bank} is not one this server was started with: quiz serve {bank}, or quiz run --resume"


def _when_saved(moment: datetime) -> str:
    """When a kept exam was left: ``2026-03-02 14:05`` in local time."""
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")


__all__ = ["HomePages", "home_key"]
