"""The ASGI app of `quiz serve`: practice, review, stats and the authors' preview, over the engine's own API.

A practice session here is the `attnquiz.engine.practice.session.Session` that `quiz run` drives, with the
same planning (`plan_practice`, `plan_review`), grading and history (one transaction per answer,
through `Store.record`). Pages are plain HTML forms with POST-redirect-GET, so reading and answering
work without JavaScript; the script only counts an exam's time down and reloads the preview.

Every handler runs on the server's one event-loop thread (none is a threadpool function): a
session and its SQLite connection are only ever used from the thread that opened them. What may
take long (grading a typed response, importing a bank's plugins, the preview's variants, pages
that load banks) is done or tried first in a forked child with a CPU-time limit
(`attnquiz.web.isolation`), so one request never stalls the others.
"""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from starlette.applications import Starlette
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from attnquiz.engine.bank import finding as bank_files
from attnquiz.engine.errors import BankError, QuizError, excerpt
from attnquiz.engine.typed_numbers import whole, whole_in
from attnquiz.web import isolation, render
from attnquiz.web.assets import Assets
from attnquiz.web.history import HistoryVersion
from attnquiz.web.security import Guard, GuardMiddleware
from attnquiz.wording import when

if TYPE_CHECKING:
    from attnquiz.engine.bank.loaded import Bank
    from attnquiz.engine.grading.grade import Grade
    from attnquiz.engine.practice.session import Plan, Session, Slot
    from attnquiz.engine.practice.store import Store

HERE = Path(__file__).resolve().parent
MAX_SESSIONS = 32
"""Sessions kept in memory; beyond it the oldest is closed (its answers are already in the history)."""
MAX_RESPONSE = 10_000
"""The most of an unreadable response put back in the answer field."""
MAX_FORM_FIELDS = 200
TIME_UP_GRACE = 30.0
"""Seconds after a timed exam's end during which the answer its page sends is still taken: the page
submits what is in the box when its clock runs out, and the request takes a moment to arrive."""
CHILD_PAGE_MODULES = (
    "numpy.random",
    "platformdirs",
    "attnquiz.engine.practice.review",
    "attnquiz.engine.practice.session",
    "attnquiz.engine.practice.store",
    "attnquiz.web.history",
)
"""The modules that the pages rendered in a child import (`QuizApp.prepare`)."""
_START = "start"
"""The CSRF scope of the forms that are not a session's (start a practice or a review)."""


@dataclass(frozen=True)
class BankRef:
    """A bank the server offers: its key in URLs and how `attnquiz.engine.bank.finding` finds it."""

    key: str
    ref: str


@dataclass
class WebSession:
    """A session driven from the browser, and what its next page must say."""

    id: str
    session: Session
    store: Store | None
    bank_key: str | None
    invalid: tuple[int, str, Grade] | None = None
    """The last response that could not be read: the question, the text (kept in the field), why."""
    saved: int | None = None
    """The exam question whose answer was just saved (said once on the next page)."""
    hints: dict[int, list[str]] = field(default_factory=dict)
    """The hints shown so far, per question: its hint, then the steps of its worked solution."""
    warnings: list[str] = field(default_factory=list)
    part_done: tuple[int, Any] | None = None
    """A question in parts: the part just answered (its `PartGrade`), said on the next page."""
    rated: tuple[int, str, datetime | None] | None = None
    """A concept question just rated: its position, the rating and when it is due (said once)."""
    reading: tuple[int, str, str, str] | None = None
    """How an answer is read (*Show how it reads*): the question, the text, its reading, why not."""
    typed: dict[int, str] = field(default_factory=dict)
    """What was in a question's box when it was left by a button that neither saves nor grades it
    (a hint; ending a practice session, which asks first): put back when the question is shown."""

    @property
    def scope(self) -> str:
        return f"session:{self.id}"

    def close(self) -> None:
        """Close the history (everything recorded is already committed), and let an exam not handed
        in be taken up elsewhere (its state stays on disk, offered on the home page)."""
        from attnquiz.engine.practice.exam_state import ExamKeeper

        if isinstance(self.session.on_change, ExamKeeper):
            self.session.on_change.release()
        if self.store is not None:
            self.store.close()
            self.store = None


@dataclass
class ServeSettings:
    """What `quiz serve` was asked for."""

    banks: tuple[str, ...] = ()
    db: Path | None = None
    time_limit: int = isolation.PAGE_SECONDS
    """CPU seconds a page that loads banks or builds variants, or a plugin's import, may take."""
    scan: Path | None = None
    """The answers file of a `quiz scan` whose review the /scan page settles (None: no such page)."""


class QuizApp:
    """The pages and the state behind them (sessions in memory, history on disk)."""

    def __init__(self, settings: ServeSettings, guard: Guard) -> None:
        self.settings = settings
        self.guard = guard
        self.sessions: OrderedDict[str, WebSession] = OrderedDict()
        self.refs = _bank_refs(settings.banks)
        self.history_version = HistoryVersion(_history_path(settings.db))
        self.templates = Environment(
            loader=FileSystemLoader(HERE / "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.templates.globals.update(
            md=render.markdown,
            inline=render.inline,
            figures=render.figures,
            labels=render.LABELS,
            marks=render.MARKS,
            percent=render.percent,
            score=render.score,
            clock=_clock,
            when=_when,
        )

    def prepare(self) -> None:
        """Import what the pages rendered in a child use, and compile every template, here in the
        server, once. A child forked from the server starts with them (copy-on-write); otherwise
        each child imported and compiled them again, some 30 ms per page, and threw them away
        when it ended. This runs only the server's own code, never a bank's: banks are still
        loaded in the children."""
        import importlib

        from attnquiz.engine.generators import MODULES
        from attnquiz.engine.registry import load_builtin_generators

        for module in CHILD_PAGE_MODULES:
            importlib.import_module(module)
        builtin = load_builtin_generators()  # a bank read from the cache names its generators
        for generator in MODULES:
            builtin.get(generator)
        for name in self.templates.list_templates(extensions=["html"]):
            self.templates.get_template(name)

    # -- plumbing -------------------------------------------------------------------------------

    def page(self, request: Request, template: str, code: int = 200, **context: Any) -> HTMLResponse:
        body = self.templates.get_template(template).render(
            path=request.url.path,
            start_csrf=self.guard.csrf_token(_START),
            scan_page=self.settings.scan is not None,
            **context,
        )
        return HTMLResponse(body, status_code=code)

    def bank_ref(self, key: str) -> BankRef:
        for ref in self.refs:
            if ref.key == key:
                return ref
        raise HTTPException(404, f"quiz serve offers no bank {key!r}")

    def web_session(self, sid: str) -> WebSession:
        found = self.sessions.get(sid)
        if found is None:
            raise HTTPException(404, "This session has ended or the server was restarted: start a new one.")
        return found

    async def form(self, request: Request, scope: str) -> FormData:
        """The POSTed form, refused (403) unless it carries the CSRF token of the page that sent it."""
        form = await request.form(max_files=0, max_fields=MAX_FORM_FIELDS)
        if not self.guard.csrf_ok(scope, form.get("csrf")):
            raise HTTPException(403, "This form is out of date or from another site: reload the page.")
        return form

    def add_session(self, plan: Plan, bank_key: str | None) -> WebSession:
        import secrets

        from attnquiz.engine.practice.session import Session
        from attnquiz.engine.practice.store import StoreError, open_store

        warnings: list[str] = []
        store: Store | None
        try:
            store = open_store(self.settings.db)
        except StoreError as exc:
            store = None
            warnings.append(f"{exc}. This session runs without history.")
        session = Session(plan, store=store)
        if session.exam:
            from attnquiz.engine.practice.exam_state import keep

            # Kept on disk beside the history after every answer and move, as `quiz run` keeps it:
            # a server stopped or killed loses nothing answered, and the exam is offered again.
            keep(session, bank_path=self._bank_file(bank_key))
        web = WebSession(secrets.token_urlsafe(16), session, store, bank_key)
        web.warnings.extend(warnings)
        return self._register(web)

    def _register(self, web: WebSession) -> WebSession:
        self.sessions[web.id] = web
        while len(self.sessions) > MAX_SESSIONS:
            _, oldest = self.sessions.popitem(last=False)
            oldest.close()
        return web

    def _running(self, exam: str) -> WebSession | None:
        """The session of this server running the saved exam ``exam`` (None: none)."""
        return next(
            (w for w in self.sessions.values() if w.session.id == exam and not w.session.finished), None
        )

    def _bank_file(self, bank_key: str | None) -> str:
        """The file of the bank offered as ``bank_key`` ("" when there is none to name)."""
        if bank_key is None:
            return ""
        try:
            return str(bank_files.find(self.bank_ref(bank_key).ref).path)
        except (QuizError, HTTPException):
            return ""

    def _offering(self, bank: str, bank_ref: str, bank_path: str) -> BankRef | None:
        """The bank this server offers that a saved exam was taken from: the same file, else the same
        name when that file is gone (None: not one of the banks it was started with: a bank's code
        runs in quiz serve only when it was named to it)."""
        if not (bank_path and Path(bank_path).is_file()):
            return next((r for r in self.refs if bank_ref in (r.key, r.ref) or bank == r.key), None)
        for ref in self.refs:
            try:
                found = bank_files.find(ref.ref).path
            except QuizError:
                continue
            if Path(bank_path) == Path(found).resolve():
                return ref
        return None

    def close(self) -> None:
        """Close every session's history (the server is stopping)."""
        for web in self.sessions.values():
            web.close()
        self.history_version.close()

    # -- home and starting ------------------------------------------------------------------------

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
        from attnquiz.engine.practice.session import parse_duration, plan_practice

        form = await self.form(request, _START)
        ref = self.bank_ref(_text(form, "bank"))
        try:
            count = _int(form, "count", 1, 500)
            seed = _int(form, "seed", 0, 2**32 - 1)
            original = form.get("original") == "on"
            exam = form.get("mode") == "exam"
            time_text = _text(form, "time").strip()
            limit = parse_duration(time_text) if exam and time_text else None
            topic = _text(form, "topic") or None
            items = [i.strip() for i in _text(form, "items").split(",") if i.strip()][:100]
            if original and seed is not None:
                raise QuizError("the past papers' own questions have no seed: leave the seed empty")
            chosen = seed if seed is not None else _new_seed()

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

            plan = await _vetted(
                planned, self.settings.time_limit, f"bank {ref.key}: preparing its questions"
            )
        except QuizError as exc:
            return await self.home(request, error=str(exc).splitlines()[-1], status=400)
        web = self.add_session(plan, ref.key)
        return _see(f"/s/{web.id}")

    async def resume_exam(self, request: Request) -> Response:
        """An exam kept on disk (left in a terminal, or by a server stopped or killed) taken up again
        here: its questions, saved answers and time left (`attnquiz.engine.practice.exam_state.resume`)."""
        import secrets

        from attnquiz.engine.practice import exam_state
        from attnquiz.engine.practice.store import StoreError, open_store

        form = await self.form(request, _START)
        wanted = _text(form, "exam")
        running = self._running(wanted)
        if running is not None:
            return _see(f"/s/{running.id}")
        history = _history_path(self.settings.db)
        found = exam_state.saved_exams(history)[0] if history is not None else []
        chosen = next((e for e in found if e.id == wanted), None)
        if chosen is None:
            gone = "That exam is no longer kept: it was handed in, or set aside."
            return await self.home(request, error=gone, status=404)
        ref = self._offering(chosen.bank, chosen.bank_ref, chosen.data["bank_path"])
        if ref is None:
            return await self.home(request, error=_not_offered(chosen.bank_ref), status=400)

        def rebuilt() -> Bank:
            return bank_files.load(ref.ref, plugins=True)

        try:
            # The bank's code rebuilds the questions: tried first in a child, as a session's planning is
            # (without the history, and without keeping anything: the child's lock goes with it).
            tried = await isolation.in_child(
                lambda: _done(exam_state.resume(chosen, rebuilt(), None, timed=False)),
                cpu_seconds=self.settings.time_limit,
            )
            if tried.kind == "stopped":
                raise QuizError(f"bank {ref.key}: rebuilding the exam was stopped: {tried.error}")
            running = self._running(wanted)
            if running is not None:
                return _see(f"/s/{running.id}")  # resumed here meanwhile (a second click)
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
        self._register(web)
        return _see(f"/s/{web.id}")

    # -- a session ------------------------------------------------------------------------------

    async def question(self, request: Request) -> Response:
        from attnquiz.engine.practice.session import hint_steps

        web = self.web_session(request.path_params["sid"])
        session = web.session
        if session.exam and session.time_up and not session.finished:
            self.finish_session(web, "time-up")
        if not session.finished:
            await _buildable(web, self.settings.time_limit)
        current = session.show() if not session.finished else None
        web.warnings.extend(session.take_warnings())
        if session.exam and not session.finished and (current is None or session.current is None):
            # Every question has an answer: look them over, go back to any, or hand the exam in.
            return _see(f"/s/{web.id}/submit")
        if current is None or session.current is None:
            if not session.finished:
                self.finish_session(web, "completed")
            return _see(f"/s/{web.id}/summary")
        slot = session.current
        invalid = web.invalid if web.invalid is not None and web.invalid[0] == slot.position else None
        part_done = web.part_done if web.part_done is not None and web.part_done[0] == slot.position else None
        web.part_done = None
        part = session.pending_part(slot)
        saved, web.saved = web.saved, None
        rated, web.rated = web.rated, None
        warnings, web.warnings = web.warnings, []
        if _rating_due(session):
            # A concept question answered in practice: the model answer and key points, then the
            # student's own rating of their answer, which schedules the review (`Session.rate`).
            from attnquiz.engine.grading.grade import SELF_RATINGS

            return self.page(
                request,
                "rate.html",
                web=web,
                session=session,
                slot=slot,
                q=current,
                ratings=SELF_RATINGS,
                intervals=_intervals(web, current, _stored_card(web, current)),
                warnings=warnings,
                csrf=self.guard.csrf_token(web.scope),
            )
        return self.page(
            request,
            "question.html",
            web=web,
            session=session,
            slot=slot,
            q=current,
            choice=_choice(part.answer if part is not None else current.answer),
            part=part,
            prefill=_prefill(session, slot),
            kept=session.kept_parts(slot),
            saved_parts=_saved_parts(session, slot),
            carried=_carried(current, part),
            part_done=part_done[1] if part_done is not None else None,
            part_remarks=_remarks(part_done[1].grade) if part_done is not None else [],
            invalid=invalid,
            hints=web.hints.get(slot.position, []),
            more_hints=len(hint_steps(current)) > len(web.hints.get(slot.position, [])),
            typed=web.typed.get(slot.position, "") if invalid is None else "",
            reading=_reading_shown(web, slot),
            readable=_readable(part.answer if part is not None else current.answer),
            draft=_draft_key(web, slot),
            saved=saved,
            rated=rated,
            concept=_concept(current.answer),
            code_answer=current.answer if current.answer.kind == "code" else None,
            concept_limit=_concept_limit(),
            remaining=session.remaining(),
            warnings=warnings,
            csrf=self.guard.csrf_token(web.scope),
        )

    def _current(self, web: WebSession, form: FormData) -> Slot | None:
        """The current question, if the form was sent from its page (not from an older one)."""
        current = web.session.current
        if current is None or _text(form, "position") != str(current.position):
            return None
        return current

    def _keep_typed(self, web: WebSession, form: FormData) -> bool:
        """An exam's answer in the form of the question being left (by Next, Go to, Submit or the
        clock), saved as *Save answer* saves it, when it was typed or changed on that page.

        Returns:
            False when it could not be read: the page is shown again with why (nothing is lost).
        """
        session = web.session
        if not session.exam or session.finished:
            return True
        slot = self._current(web, form)
        if slot is None:
            return True
        web.typed.pop(slot.position, None)  # the box is sent now: what it held is saved, or said why not
        response = _response(form)
        if not response.strip() or response == _prefill(session, slot):
            return True  # nothing typed, or the saved answer as it was
        if session.time_up and session.overtime() > TIME_UP_GRACE:
            web.warnings.append(
                f"Your change to question {slot.position} came after the time was up: it was not saved."
            )
            return True
        result = session.answer(response)
        web.warnings.extend(session.take_warnings())
        if not result.counts:
            if session.time_up:  # no page comes back to say why: the summary says it was not saved
                reason = result.feedback.strip().splitlines()[0] if result.feedback.strip() else ""
                web.warnings.append(
                    f"Your answer to question {slot.position} could not be read when the time ran out, "
                    f"so it was not saved. {reason}".strip()
                )
            web.invalid = (slot.position, response[:MAX_RESPONSE], result)
            return False
        web.invalid = None
        if slot.answered:
            web.saved = slot.position
        elif result.parts:
            web.part_done = (slot.position, result.parts[0])
        return True

    async def answer(self, request: Request) -> Response:
        web = self.web_session(request.path_params["sid"])
        form = await self.form(request, web.scope)
        session = web.session
        if session.exam and session.time_up and not session.finished:
            # The answer of a page sent as the time ran out still counts (see TIME_UP_GRACE).
            self._keep_typed(web, form)
            self.finish_session(web, "time-up")
        slot = self._current(web, form)
        if slot is None or _rating_due(session):  # sent from an older page (Back button), or after the end
            return _see(f"/s/{web.id}")
        response = _response(form)
        result = await _graded(session, response)
        web.warnings.extend(session.take_warnings())
        if not result.counts:
            # Kept to refill the field (a huge paste is cut: the page need not carry it back).
            web.invalid = (slot.position, response[:MAX_RESPONSE], result)
            return _see(f"/s/{web.id}")
        web.invalid = None
        web.typed.pop(slot.position, None)
        if _rating_due(session):  # a concept question: compare with the model answer, then rate
            return _see(f"/s/{web.id}")
        if _text(form, "then") == "end" and not session.exam:
            # Checked on the way out (the page that asks before a session ends): its feedback, then
            # the summary. A question in parts left part-way counts with the rest blank.
            self.finish_session(web, "quit")
            return _see(f"/s/{web.id}/feedback/{slot.position}")
        if not slot.answered:
            # A part of a question in parts: the next part is asked on the same page.
            web.part_done = (slot.position, result.parts[0]) if result.parts else None
            return _see(f"/s/{web.id}")
        if session.exam:
            web.saved = slot.position
            return _see(f"/s/{web.id}")
        return _see(f"/s/{web.id}/feedback/{slot.position}")

    async def rate(self, request: Request) -> Response:
        """A concept question's self-rating (again, hard, good, easy): it schedules the item's review."""
        web = self.web_session(request.path_params["sid"])
        form = await self.form(request, web.scope)
        slot = self._current(web, form)
        if slot is None or not _rating_due(web.session):  # an older page, or already rated
            return _see(f"/s/{web.id}")
        from attnquiz.engine.grading.grade import SELF_RATINGS

        rating = _text(form, "rating")
        if rating not in SELF_RATINGS:
            raise HTTPException(400, f"A rating is one of {', '.join(SELF_RATINGS)}.")
        web.session.rate(rating)
        web.warnings.extend(web.session.take_warnings())
        web.rated = (slot.position, rating, slot.next_due)
        return _see(f"/s/{web.id}")

    async def skip(self, request: Request) -> Response:
        web = self.web_session(request.path_params["sid"])
        form = await self.form(request, web.scope)
        slot = self._current(web, form)
        if slot is None or _rating_due(web.session):
            return _see(f"/s/{web.id}")
        if web.session.exam:
            # Next question: what was typed in the box is saved first (saving moves on by itself).
            if self._keep_typed(web, form) and web.session.current is slot:
                web.session.skip()  # nothing was saved, or a part was (which stays on its question)
            web.warnings.extend(web.session.take_warnings())
            return _see(f"/s/{web.id}")
        web.typed.pop(slot.position, None)
        web.session.skip()
        web.warnings.extend(web.session.take_warnings())
        return _see(f"/s/{web.id}/feedback/{slot.position}")

    async def hint(self, request: Request) -> Response:
        from attnquiz.engine.practice.session import hint_steps

        web = self.web_session(request.path_params["sid"])
        form = await self.form(request, web.scope)
        slot = self._current(web, form)
        if slot is not None:
            _keep_in_box(web, slot, form)
        if slot is not None and not web.session.exam:
            shown = web.hints.setdefault(slot.position, [])
            steps = hint_steps(web.session.question(slot))
            if len(shown) < len(steps):
                web.session.hint()  # counted: a hinted answer is never rated Easy
                shown.append(steps[len(shown)])
            elif not steps and not shown:
                shown.append("This question has no hint.")
        return _see(f"/s/{web.id}")

    async def read(self, request: Request) -> Response:
        """How the answer in the box is read, before it is graded (nothing is graded or saved): as
        JSON for the page's script while typing, else the question again with the reading shown
        (the *Show how it reads* button)."""
        web = self.web_session(request.path_params["sid"])
        form = await self.form(request, web.scope)
        session = web.session
        slot = self._current(web, form)
        wants_json = _text(form, "format") == "json"
        if slot is None or session.finished or _rating_due(session):
            return JSONResponse({"read_as": "", "problem": ""}) if wants_json else _see(f"/s/{web.id}")
        part = session.pending_part(slot)
        expected = part.answer if part is not None else session.question(slot).answer
        response = _text(form, "response")[:MAX_RESPONSE]
        read_as, problem = "", ""
        if response.strip() and _readable(expected):
            tried = await isolation.in_child(
                lambda: _reading(expected, response), cpu_seconds=isolation.ANSWER_SECONDS
            )
            if tried.kind == "done" and tried.value is not None:
                read_as, problem = tried.value
            else:
                problem = "It is too long or too deep to read: write it more simply."
        if wants_json:
            return JSONResponse({"read_as": read_as, "problem": problem})
        web.typed[slot.position] = response
        web.reading = (slot.position, response, read_as, problem)
        return _see(f"/s/{web.id}")

    async def another(self, request: Request) -> Response:
        """A fresh variant of the item of a question answered wrong or part-right, asked now: next in
        the session, or, when that question ended the session, as a session of its own."""
        from attnquiz.engine.practice.session import plan_practice

        web = self.web_session(request.path_params["sid"])
        form = await self.form(request, web.scope)
        session = web.session
        slot = _slot_at(session, _text(form, "position"))
        if slot is None or not _another_offered(session, slot):
            raise HTTPException(404, "There is no such answer to follow with another question.")
        entry = slot.planned.entry
        seed = _new_seed()
        if not session.finished:
            added = session.another(slot.position)
            web.hints = _moved_down(web.hints, added.position)
            web.typed = _moved_down(web.typed, added.position)
            return _see(f"/s/{web.id}")
        ref = self._ref_of_bank(web, entry.bank)
        if ref is None:
            raise HTTPException(404, f"quiz serve does not offer bank {entry.bank!r} to practise from.")

        def planned() -> Plan:
            bank = bank_files.load(ref.ref, plugins=True)
            return plan_practice(bank, seed=seed, bank_ref=ref.ref, items=[entry.id], count=1)

        try:
            plan = await _vetted(planned, self.settings.time_limit, f"bank {ref.key}: preparing its question")
        except QuizError as exc:
            raise HTTPException(400, str(exc).splitlines()[-1]) from None
        fresh = self.add_session(plan, ref.key)
        return _see(f"/s/{fresh.id}")

    async def again(self, request: Request) -> Response:
        """A session ended (an exam handed in) asked again with fresh variants: the same items, mode
        and time limit, a new seed, so that the questions just solved, answers shown, are not the
        ones asked again."""
        from attnquiz.engine.practice.session import plan_practice

        web = self.web_session(request.path_params["sid"])
        await self.form(request, web.scope)
        session = web.session
        if not session.finished or web.bank_key is None:
            raise HTTPException(404, "Only a session that has ended can be repeated with fresh variants.")
        ref = self.bank_ref(web.bank_key)
        items = list(dict.fromkeys(p.entry.id for p in session.plan.questions))
        seed = _new_seed()

        def planned() -> Plan:
            return plan_practice(
                bank_files.load(ref.ref, plugins=True),
                seed=seed,
                bank_ref=ref.ref,
                items=items,
                count=len(session.plan.questions),
                exam=session.exam,
                time_limit=session.plan.time_limit,
            )

        try:
            plan = await _vetted(
                planned, self.settings.time_limit, f"bank {ref.key}: preparing its questions"
            )
        except QuizError as exc:
            raise HTTPException(400, str(exc).splitlines()[-1]) from None
        fresh = self.add_session(plan, ref.key)
        return _see(f"/s/{fresh.id}")

    def _ref_of_bank(self, web: WebSession, name: str) -> BankRef | None:
        """The bank offered under which a session's bank ``name`` is found (a review's banks too)."""
        if web.bank_key is not None:
            return self.bank_ref(web.bank_key)
        return next((r for r in self.refs if name in (r.key, r.ref)), None)

    async def leave(self, request: Request) -> Response:
        """An exam question left by a header link (Practice, Review, Stats, Preview): what is in its
        box is saved as the exam's own buttons save it, then the link is followed."""
        web = self.web_session(request.path_params["sid"])
        form = await self.form(request, web.scope)
        target = _text(form, "to")
        if not self._keep_typed(web, form):
            return _see(f"/s/{web.id}")  # the typed answer cannot be read: say why, here
        return _see(target if target in _HEADER_LINKS else "/")

    async def go(self, request: Request) -> Response:
        web = self.web_session(request.path_params["sid"])
        form = await self.form(request, web.scope)
        session = web.session
        if session.exam and not session.finished:
            if not self._keep_typed(web, form):
                return _see(f"/s/{web.id}")  # the typed answer cannot be read: say why, here
            target = whole(_text(form, "go"))
            try:
                if target is None:
                    raise ValueError(f"there is no question {_text(form, 'go')[:20]!r} to go to")
                session.go(target)
            except ValueError as exc:
                web.warnings.append(str(exc))
        return _see(f"/s/{web.id}")

    async def finish(self, request: Request) -> Response:
        web = self.web_session(request.path_params["sid"])
        form = await self.form(request, web.scope)
        session = web.session
        if not session.finished and not session.exam and _text(form, "confirm") != "yes":
            slot = self._current(web, form)
            typed = _response(form)
            if slot is not None and typed.strip() and not _rating_due(session):
                # An answer in the box: ask whether to check it before the session ends.
                _keep_in_box(web, slot, form)
                return self.page(
                    request,
                    "end.html",
                    web=web,
                    session=session,
                    slot=slot,
                    typed=typed[:MAX_RESPONSE],
                    choices=[str(v) for v in form.getlist("choice")],
                    draft=_draft_key(web, slot),
                    csrf=self.guard.csrf_token(web.scope),
                )
        if not session.finished:
            time_up_sent = _text(form, "reason") == "time-up"
            kept = self._keep_typed(web, form)
            if session.exam and session.time_up:
                self.finish_session(web, "time-up")
            elif time_up_sent:
                # The page's clock ran out a moment before the server's: show the question again,
                # whose page submits once more when its (server-given) time is up.
                return _see(f"/s/{web.id}")
            elif not kept:
                return _see(f"/s/{web.id}")  # the typed answer cannot be read: say why before handing in
            elif session.exam and session.unanswered() and _text(form, "confirm") != "yes":
                # Handing in with questions unanswered is asked first, as the terminal asks.
                return _see(f"/s/{web.id}/submit?ask=1")
            else:
                self.finish_session(web, "submitted" if session.exam else "quit")
        return _see(f"/s/{web.id}/summary")

    async def submit_page(self, request: Request) -> Response:
        """An exam's answers before it is handed in: which have an answer (and what it is), a way back
        to each, and the Submit button (which, with questions unanswered, says how many)."""
        web = self.web_session(request.path_params["sid"])
        session = web.session
        if not session.exam or session.finished:
            return _see(f"/s/{web.id}/summary" if session.finished else f"/s/{web.id}")
        if session.time_up:
            self.finish_session(web, "time-up")
            return _see(f"/s/{web.id}/summary")
        rows = []
        for slot in session.slots:
            if slot.broken is not None:
                continue
            question = session.question(slot)
            rows.append({"slot": slot, "q": question, "in_progress": session.part_in_progress(slot)})
        warnings, web.warnings = web.warnings, []
        return self.page(
            request,
            "submit.html",
            web=web,
            session=session,
            rows=rows,
            missing=session.unanswered(),
            ask=request.query_params.get("ask") == "1",
            back=session.current.position if session.current is not None else None,
            remaining=session.remaining(),
            warnings=warnings,
            csrf=self.guard.csrf_token(web.scope),
        )

    async def rerate(self, request: Request) -> Response:
        """A scored practice answer rated by the student (a guess is rated again): its review is
        scheduled from that rating instead of the one its grade earned (`Session.rerate`)."""
        web = self.web_session(request.path_params["sid"])
        form = await self.form(request, web.scope)
        from attnquiz.engine.grading.grade import SELF_RATINGS

        rating = _text(form, "rating")
        position = whole(_text(form, "position"))
        if rating not in SELF_RATINGS or position is None:
            raise HTTPException(400, f"A rating is one of {', '.join(SELF_RATINGS)}.")
        session = web.session
        if not 1 <= position <= len(session.slots) or not session.can_rerate(session.slots[position - 1]):
            raise HTTPException(404, "There is no such answer to rate.")
        session.rerate(position, rating)
        web.warnings.extend(session.take_warnings())
        return _see(f"/s/{web.id}/feedback/{position}?rated={rating}")

    def finish_session(self, web: WebSession, ending: Any) -> None:
        web.session.finish(ending)
        web.warnings.extend(web.session.take_warnings())
        web.close()

    async def feedback(self, request: Request) -> Response:
        web = self.web_session(request.path_params["sid"])
        session = web.session
        position = int(request.path_params["position"])
        if not 1 <= position <= len(session.slots) or session.exam:
            raise HTTPException(404, "There is no such answer to show.")
        slot = session.slots[position - 1]
        if not (slot.answered or slot.skipped) or slot.question is None:
            return _see(f"/s/{web.id}")
        warnings, web.warnings = web.warnings, []
        return self.page(
            request,
            "feedback.html",
            web=web,
            session=session,
            slot=slot,
            q=slot.question,
            grade=slot.grade,
            remarks=_remarks(slot.grade) if slot.grade is not None else [],
            warnings=warnings,
            can_rerate=session.can_rerate(slot),
            another=_another_offered(session, slot),
            intervals=_intervals(web, slot.question, slot.card_before) if session.can_rerate(slot) else {},
            rated=request.query_params.get("rated", ""),
            csrf=self.guard.csrf_token(web.scope),
        )

    async def summary(self, request: Request) -> Response:
        web = self.web_session(request.path_params["sid"])
        session = web.session
        if not session.finished:
            return _see(f"/s/{web.id}")
        warnings, web.warnings = web.warnings, []
        results = []
        if session.exam:
            for slot in session.slots:
                if slot.broken is not None:
                    continue
                question = session.question(slot)
                results.append(
                    {
                        "slot": slot,
                        "q": question,
                        "remarks": _remarks(slot.grade) if slot.grade is not None else [],
                    }
                )
        # Each row's question, so that a concept question's model answer is rendered (its TeX too).
        questions = {s.position: s.question for s in session.slots if s.question is not None}
        return self.page(
            request,
            "summary.html",
            web=web,
            summary=session.summary(),
            results=results,
            warnings=warnings,
            questions=questions,
            again=web.bank_key is not None,
            csrf=self.guard.csrf_token(web.scope),
        )

    # -- review and stats -----------------------------------------------------------------------

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
        from attnquiz.engine.practice.store import Store, StoreError, default_path, utc_now

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
            titles = {(b.name, e.id): e.item.source for b in loaded for e in b.items}
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
        from attnquiz.engine.practice.session import plan_review
        from attnquiz.engine.practice.store import StoreError, open_store, utc_now

        form = await self.form(request, _START)
        try:
            limit = _int(form, "limit", 1, 500) or 20
            new = _int(form, "new", 0, 500)
        except QuizError as exc:
            raise HTTPException(400, f"{exc}.") from None
        seed, now = _new_seed(), utc_now()

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
            plan = await _vetted(
                planned, self.settings.time_limit, "loading the banks and choosing the reviews"
            )
        except QuizError as exc:
            raise HTTPException(503, f"{exc} (a plugin that loops?).") from None
        if plan is None:
            raise HTTPException(400, "No bank could be loaded.")
        if not plan.questions:
            return _see("/review?nothing=1")
        web = self.add_session(plan, None)
        return _see(f"/s/{web.id}")

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

    # -- preview for authors --------------------------------------------------------------------

    async def preview_index(self, request: Request) -> Response:
        return self.page(request, "preview_index.html", refs=self.refs)

    def _preview_bank(self, ref: BankRef) -> tuple[Bank | None, list[dict[str, Any]], str]:
        """The bank, or its load errors (one per problem: file:line: field: message, and its excerpt)."""
        try:
            return bank_files.load(ref.ref, plugins=True), [], ""
        except BankError as exc:
            issues = [{"line": str(i), "excerpt": "\n".join(excerpt(exc.source, i))} for i in exc.issues]
            return None, issues, exc.summary
        except QuizError as exc:
            return None, [{"line": str(exc), "excerpt": ""}], ""

    async def preview_bank(self, request: Request) -> Response:
        return self._preview(request, item=None)

    async def preview_item(self, request: Request) -> Response:
        return self._preview(request, item=request.path_params["item"])

    def _preview(self, request: Request, *, item: str | None) -> Response:
        """A bank's items (``item`` None) or one of them, at the seed asked for, or its load errors."""
        ref = self.bank_ref(request.path_params["bank"])
        bank, issues, summary = self._preview_bank(ref)
        seed = _query_int(request, "seed", 0, 2**32 - 1)
        seed = 1 if seed is None else seed
        cards = []
        if bank is not None and item is None:
            cards = [_preview_card(entry, seed) for entry in bank.items]
        elif bank is not None and item is not None:
            try:
                cards = [_preview_card(bank.get(item), seed)]
            except QuizError as exc:
                raise HTTPException(404, str(exc)) from None
        return self.page(
            request,
            "preview_bank.html",
            ref=ref,
            bank=bank,
            issues=issues,
            summary=summary,
            cards=cards,
            seed=seed,
            stamp=_stamp(ref),
            one=item is not None,
        )

    async def preview_stamp(self, request: Request) -> Response:
        ref = self.bank_ref(request.path_params["bank"])
        return JSONResponse({"stamp": _stamp(ref)})

    async def not_found(self, request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        detail = exc.detail if isinstance(exc, HTTPException) else "Something went wrong."
        return self.page(request, "error.html", status, status=status, detail=detail)


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _bank_refs(given: tuple[str, ...]) -> list[BankRef]:
    """The banks offered: those named on the command line, else every bank found (as `quiz review`)."""
    refs: list[str] = list(given)
    if not refs:
        for found in bank_files.discover():
            refs.append(found.name if found.origin == "built-in" else str(found.path))
    out: list[BankRef] = []
    taken: set[str] = set()
    for ref in refs:
        base = Path(ref).stem if bank_files.looks_like_path(ref) else ref
        key = "".join(c if c.isalnum() or c in "-_" else "-" for c in base) or "bank"
        candidate, n = key, 2
        while candidate in taken:
            candidate, n = f"{key}-{n}", n + 1
        taken.add(candidate)
        out.append(BankRef(candidate, ref))
    return out


def _stamp(ref: BankRef) -> str:
    """What changes when the bank's file does: its size, time and a hash of its bytes."""
    try:
        path = bank_files.find(ref.ref).path
        info = path.stat()
        with path.open("rb") as handle:
            digest = hashlib.sha256(handle.read(bank_files.MAX_BANK_BYTES + 1)).hexdigest()[:16]
    except (OSError, QuizError):
        return "missing"
    return f"{info.st_mtime_ns}-{info.st_size}-{digest}"


def _preview_card(entry: Any, seed: int) -> dict[str, Any]:
    """One item as the preview shows it: the variant for ``seed`` and the original, or why they fail."""
    card: dict[str, Any] = {"entry": entry, "seed": seed, "variant": None, "original": None, "errors": []}
    try:
        card["variant"] = entry.question(seed)
    except QuizError as exc:
        card["errors"].append(f"seed {seed}: {exc}")
    if entry.has_original:
        try:
            card["original"] = entry.original()
        except QuizError as exc:
            card["errors"].append(f"original: {exc}")
    return card


T = TypeVar("T")


async def _vetted(work: Callable[[], T], seconds: int, what: str) -> T:
    """``work()`` (loading banks with their plugins, planning a session: their code may loop), once a
    child has shown that it ends within ``seconds`` of computing; else QuizError saying ``what`` was
    stopped. An error the child met is met again here, and raised as it is."""
    tried = await isolation.in_child(lambda: _done(work()), cpu_seconds=seconds)
    if tried.kind == "stopped":
        raise QuizError(f"{what} was stopped: {tried.error}")
    return work()


async def _buildable(web: WebSession, seconds: int) -> None:
    """Build the question to show in a child first, the first time it is shown, when the bank's own
    code builds it: a generator of the bank's plugins that loops would stop the whole server. A
    question whose building was stopped is left out of the session, as one whose variant fails to
    build is (`Session.show`), and said."""
    session = web.session
    while (slot := session.current) is not None and slot.question is None and slot.broken is None:
        if not _bank_code(slot.planned.entry):
            return  # quiz's own generators: bounded, and not worth a process
        tried = await isolation.in_child(lambda: _done(session.show()), cpu_seconds=seconds)
        if tried.kind != "stopped":
            return
        slot.broken = f"building its variant was stopped: {tried.error}"
        web.warnings.append(f"question {slot.position} is left out: {slot.broken}")


def _bank_code(entry: Any) -> bool:
    """Whether building ``entry``'s variant runs what a bank wrote: a plugin's generator, or a formula
    item's expressions (quiz's own generators are known to end)."""
    return entry.formula is not None or not entry.spec.module.startswith("attnquiz.")


def _done(_: object) -> None:
    """Nothing to send back from a child whose work was only to show that it ends."""


def _dry_answer(session: Session, response: str) -> None:
    """Grade ``response`` on a child's copy of the session, recording nothing (the copy's history is
    the server's SQLite connection, which a child must not touch)."""
    session.store = None
    session.answer(response)


async def _graded(session: Session, response: str) -> Grade:
    """The grade of ``response``, after a child has graded a copy in at most `ANSWER_SECONDS` of
    computing; when it could not, the response is unreadable (it costs nothing) and says why."""
    from attnquiz.engine.grading.grade import Grade

    seconds = isolation.ANSWER_SECONDS
    tried = await isolation.in_child(lambda: _dry_answer(session, response), cpu_seconds=seconds)
    if tried.kind == "done":
        return session.answer(response)  # the grader bounds what it reads, and says how long it was
    reason = (
        f"This answer was not graded: reading it {tried.error.removeprefix('it ')}."
        if tried.kind == "stopped"
        else f"This answer could not be graded ({tried.error})."
    )
    advice = "Write it more simply (a number, or a short formula)."
    return Grade("invalid", 0.0, f"{reason} {advice}", None, "")


def _preview_key(quiz: QuizApp, request: Request) -> tuple[str, str, tuple[str, ...]] | None:
    """What a preview page depends on, to remember one that was stopped: the page asked for, the
    bank's file and its plugins' files as they are now (editing any of them tries again)."""
    ref = request.path_params.get("bank", "")
    try:
        found = bank_files.find(quiz.bank_ref(ref).ref)
        plugins = bank_files.load(str(found.path)).plugins
        stamps = tuple(f"{p}:{p.stat().st_mtime_ns}:{p.stat().st_size}" for p in (found.path, *plugins))
    except (OSError, QuizError, HTTPException):
        return None
    return (request.url.path + "?" + request.url.query, ref, stamps)


def _home_key(quiz: QuizApp, request: Request) -> tuple[object, ...]:
    """What the home page depends on besides the bank files it says it read (`isolation.depends_on`):
    which file each offered bank's name finds now (a QUIZ_PATH file may come to hide a built-in one)
    and the sessions it offers to carry on."""
    sessions = tuple((u["id"], u["answered"], u["count"]) for u in _unfinished(quiz))
    return ("home", _found_files(quiz), sessions, _kept_stamps(quiz))


def _unfinished(quiz: QuizApp) -> list[dict[str, Any]]:
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


def _kept_exams(quiz: QuizApp) -> tuple[list[dict[str, Any]], list[str]]:
    """The exams kept on disk beside the history (left in a terminal, or by a server that stopped)
    that this server is not running, to resume, and a line for each saved exam that cannot be."""
    from attnquiz.engine.practice import exam_state

    history = _history_path(quiz.settings.db)
    if history is None:
        return [], []
    running = {w.session.id for w in quiz.sessions.values() if not w.session.finished}
    found, problems = exam_state.saved_exams(history)
    kept = []
    for exam in found:
        if exam.id in running:
            continue
        ref = quiz._offering(exam.bank, exam.bank_ref, exam.data["bank_path"])
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


def _kept_stamps(quiz: QuizApp) -> tuple[tuple[str, int, int], ...]:
    """What the kept exams' part of the home page depends on: their folder (who may write to it) and
    their files as they are now."""
    from attnquiz.engine.practice.exam_state import exams_folder

    history = _history_path(quiz.settings.db)
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


def _stats_key(quiz: QuizApp, request: Request) -> tuple[object, ...] | None:
    """What the stats page depends on besides the clock: the days it shows and the history's
    version (None when that cannot be told: the page is made afresh)."""
    version = quiz.history_version.now()
    return None if version is None else ("stats", _stats_days(request), version)


def _review_key(quiz: QuizApp, request: Request) -> tuple[object, ...] | None:
    """What the review page depends on besides the clock and the files it says it read: whether it
    says that nothing was due, the history's version and which file each bank's name finds."""
    version = quiz.history_version.now()
    if version is None:
        return None
    return ("review", _nothing_due(request), version, _found_files(quiz))


def _found_files(quiz: QuizApp) -> tuple[str, ...]:
    """The file each offered bank's name finds now, or why none is found."""
    found = []
    for ref in quiz.refs:
        try:
            found.append(str(bank_files.find(ref.ref).path))
        except QuizError as exc:
            found.append(f"{ref.ref}: {exc}")
    return tuple(found)


def _stats_days(request: Request) -> int:
    """The days the stats page's chart shows (14 unless asked for, from 1 to 3650)."""
    return _query_int(request, "days", 1, 3650) or 14


def _nothing_due(request: Request) -> bool:
    """Whether the review page is shown after a review that found nothing to ask."""
    return request.query_params.get("nothing") == "1"


def _history_path(db: Path | None) -> Path | None:
    """The history file the pages read, or None where there is none to find (no home folder)."""
    from attnquiz.engine.practice.store import StoreError, default_path

    try:
        return default_path(db)
    except StoreError:
        return None


RELATIVE_SECONDS = 30.0
"""How old a page's "in 5 min" may be when it is sent again (a page in the browser ages too)."""


def _response(form: FormData) -> str:
    """The answer a question's form holds: the options ticked, or the text typed."""
    chosen = [str(v) for v in form.getlist("choice")]
    # A text area sends its line breaks as CR LF (the HTML form rule): kept as the terminal keeps them.
    return ", ".join(chosen) if chosen else _text(form, "response").replace("\r\n", "\n")


_HEADER_LINKS = frozenset({"/", "/review", "/stats", "/preview", "/scan"})
"""Where an exam's header links lead: the only places its question's page is left for by `leave`."""


def _stored_card(web: WebSession, question: Any) -> Any:
    """The question's item's review card as the history holds it now (None: new, or no history)."""
    from attnquiz.engine.practice.store import StoreError

    if web.store is None:
        return None
    try:
        return web.store.card(question.bank, question.item_id)
    except StoreError:
        return None


def _intervals(web: WebSession, question: Any, card: Any) -> dict[str, str]:
    """When each rating (again, hard, good, easy) would bring the item back, rated now from ``card``
    (the card it had before this answer): the review scheduler's own answer, shown on its button.
    An interval of days is said as "about": FSRS spreads those by a day or a few."""
    from attnquiz.engine.practice import review
    from attnquiz.engine.practice.store import utc_now

    now = utc_now()
    due = review.due_after_each(
        card, bank=question.bank, item=question.item_id, topic=question.topic, when=now
    )
    said = {}
    for name, moment in due.items():
        days = (moment - now).total_seconds() / 86400
        said[str(name)] = f"in about {round(days)} days" if days >= FUZZED_DAYS else when(moment)
    return said


FUZZED_DAYS = 2.5
"""From this many days on, FSRS spreads an interval at random (by a day or a few)."""


def _reading(expected: Any, response: str) -> tuple[str, str]:
    """How ``response`` is read as an answer of ``expected``'s kind, and why it cannot be, if it
    cannot: a formula by the parser alone (nothing is compared with the answer), any other kind by
    the grader, of which only the reading is kept (never whether it is right)."""
    from attnquiz.engine.answers import formula_tree, parse, read_formulas
    from attnquiz.engine.answers.kinds import ExpressionAnswer
    from attnquiz.engine.grading.grade import grade_answer

    if isinstance(expected, ExpressionAnswer):
        tree = read_formulas.formula(response, expected.symbols)
        if isinstance(tree, parse.Invalid):
            return tree.read_as, tree.reason
        return formula_tree.formula_text(tree), ""
    graded = grade_answer(expected, response)
    if graded.status == "invalid":
        return graded.read_as, graded.feedback.splitlines()[0] if graded.feedback else "It cannot be read."
    return graded.read_as, ""


def _readable(expected: Any) -> bool:
    """Whether an answer of ``expected``'s kind is typed (and so has a reading to show): not options
    to tick, nor a concept question's own words."""
    return _choice(expected) is None and _concept(expected) is None


def _reading_shown(web: WebSession, slot: Slot) -> tuple[str, str] | None:
    """The reading to show under the question's box (once), if it was asked for there."""
    reading, web.reading = web.reading, None
    if reading is None or reading[0] != slot.position:
        return None
    return reading[2], reading[3]


V = TypeVar("V")


def _moved_down(kept: dict[int, V], position: int) -> dict[int, V]:
    """What is kept per question, after a question was put in at ``position`` (those from it on
    move one place down)."""
    return {(p + 1 if p >= position else p): v for p, v in kept.items()}


def _slot_at(session: Session, text: str) -> Slot | None:
    """The session's question at the position a form sent (None: no such position)."""
    if not (text.isascii() and text.isdigit()) or len(text) > 6:
        return None
    position = int(text)
    return session.slots[position - 1] if 1 <= position <= len(session.slots) else None


def _another_offered(session: Session, slot: Slot) -> bool:
    """Whether the feedback on ``slot`` offers "another like this": a practice or review answer that
    was wrong or part-right, and not already followed by another variant of its item."""
    if session.exam or slot.status not in {"wrong", "partial"}:
        return False
    following = session.slots[slot.position] if slot.position < len(session.slots) else None
    return following is None or following.planned.entry.id != slot.planned.entry.id or following.answered


def _draft_key(web: WebSession, slot: Slot) -> str:
    """The name under which the browser keeps a draft of the question's box: the session, the
    question, the part asked and the variant (a fresh variant or the next part starts empty)."""
    session = web.session
    part = session.pending_part(slot)
    return f"{web.id}:{slot.position}:{part.label if part is not None else ''}:{session.question(slot).code}"


def _keep_in_box(web: WebSession, slot: Slot, form: FormData) -> None:
    """Keep what the form's box holds, to put back when the question is shown again."""
    typed = _response(form)
    if typed.strip():
        web.typed[slot.position] = typed[:MAX_RESPONSE]
    else:
        web.typed.pop(slot.position, None)


def _prefill(session: Session, slot: Slot) -> str:
    """What an exam's answer field holds when its question is shown again: the saved answer (of the
    part asked next, for a question in parts), or nothing."""
    if not session.exam or not slot.answered:
        return ""
    parts = session.question(slot).variant.parts
    if not parts:
        return slot.response
    done = len(slot.part_responses)
    if done >= len(parts):
        return slot.part_responses[0]  # a question answered whole is revised from (a)
    earlier = slot.earlier_parts
    return earlier[done] if done < len(earlier) else ""


def _saved_parts(session: Session, slot: Slot) -> list[tuple[str, str]]:
    """A question in parts answered part-way: the parts answered so far (label, response), shown
    above the box of the next one, so that coming back to the question shows every saved part."""
    if not session.part_in_progress(slot):
        return []
    parts = session.question(slot).variant.parts
    return [(p.label, r) for p, r in zip(parts, slot.part_responses, strict=False)]


def _carried(question: Any, part: Any) -> str:
    """How a part that uses earlier parts is marked (error carried forward), or "" for other parts."""
    if part is None or not part.uses:
        return ""
    from attnquiz.engine.answers.kinds import carried_share

    labels = " and ".join(f"({label})" for label in part.uses)
    # What it promises follows the item's carried_score, as the worksheets' sentence does.
    score = getattr(question.answer, "carried_score", 1.0)
    if score <= 0:
        return f"This part uses your answer to {labels}: it earns its marks only if that answer was right."
    said = (
        f"This part uses your answer to {labels}: if that was wrong, this part is marked against the "
        "value that follows from what you wrote there (error carried forward)"
    )
    if score >= 1:
        return f"{said}, so a mistake is not counted twice."
    return f"{said}, and earns {carried_share(score)} its marks that way."


def _rating_due(session: Session) -> bool:
    """Whether practice waits for the student's rating of a concept answer (an exam rates none: its
    concept answers are rated in `quiz review`)."""
    return not session.exam and session.awaiting_rating


def _concept_limit() -> int:
    """The longest concept answer the grader takes (a longer one is invalid): the text area says so."""
    from attnquiz.engine.grading.grade import EXPLAIN_MAX_LENGTH

    return EXPLAIN_MAX_LENGTH


def _concept(answer: Any) -> Any:
    """The answer if it is a concept question's (a text area, then the model answer), else None."""
    from attnquiz.engine.answers.kinds import ExplainAnswer

    return answer if isinstance(answer, ExplainAnswer) else None


def _choice(answer: Any) -> Any:
    """The answer if it is a choice (options to tick), else None (a text field)."""
    from attnquiz.engine.answers.kinds import ChoiceAnswer

    return answer if isinstance(answer, ChoiceAnswer) else None


_REDUNDANT = {"Correct.", "Not correct: that is not the answer, within the precision asked for."}


def _remarks(grade: Grade) -> list[str]:
    """The grader's feedback and the named mistake's explanation (Markdown), without repeating the verdict."""
    remarks = [grade.feedback] if grade.feedback.strip() and grade.feedback.strip() not in _REDUNDANT else []
    mistake = grade.mistake
    if mistake is not None and mistake.feedback and mistake.feedback not in grade.feedback:
        remarks.append(mistake.feedback)
    return remarks


def _text(form: FormData, name: str) -> str:
    value = form.get(name)
    return value if isinstance(value, str) else ""


def _int(form: FormData, name: str, low: int, high: int) -> int | None:
    """A whole number field (None when empty), refused when it is not one or is out of range."""
    text = _text(form, name).strip()
    return whole_in(text, low, high, name) if text else None


def _query_int(request: Request, name: str, low: int, high: int) -> int | None:
    value = whole(request.query_params.get(name, ""))
    return value if value is not None and low <= value <= high else None


def _new_seed() -> int:
    import secrets

    return secrets.randbelow(2**32)


def _see(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def _clock(seconds: float) -> str:
    total = max(0, int(seconds + 0.999))
    minutes, secs = divmod(total, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _when(moment: datetime | None) -> str:
    """When a review falls due (`attnquiz.wording.when`); nothing for an item with no due date."""
    return "" if moment is None else when(moment)


def build_app(settings: ServeSettings, guard: Guard) -> tuple[GuardMiddleware, QuizApp]:
    """The app behind its guard (outermost, so even an error page is guarded and carries the headers),
    and the state it serves (closed by the caller at the end)."""
    quiz = QuizApp(settings, guard)
    quiz.prepare()

    def isolated(handler: Any, remember: Any = None, reuse: Any = None) -> Any:
        return isolation.page_in_child(
            handler, cpu_seconds=settings.time_limit, remember=remember, reuse=reuse
        )

    def preview_key(request: Request) -> Any:
        return _preview_key(quiz, request)

    def home_key(request: Request) -> Any:
        return _home_key(quiz, request)

    def stats_key(request: Request) -> Any:
        return _stats_key(quiz, request)

    def review_key(request: Request) -> Any:
        return _review_key(quiz, request)

    routes = [
        Route("/", isolated(quiz.home, reuse=home_key)),
        Route("/start", quiz.start, methods=["POST"]),
        Route("/resume", quiz.resume_exam, methods=["POST"]),
        Route("/s/{sid}", quiz.question),
        Route("/s/{sid}/answer", quiz.answer, methods=["POST"]),
        Route("/s/{sid}/skip", quiz.skip, methods=["POST"]),
        Route("/s/{sid}/rate", quiz.rate, methods=["POST"]),
        Route("/s/{sid}/hint", quiz.hint, methods=["POST"]),
        Route("/s/{sid}/go", quiz.go, methods=["POST"]),
        Route("/s/{sid}/finish", quiz.finish, methods=["POST"]),
        Route("/s/{sid}/leave", quiz.leave, methods=["POST"]),
        Route("/s/{sid}/another", quiz.another, methods=["POST"]),
        Route("/s/{sid}/read", quiz.read, methods=["POST"]),
        Route("/s/{sid}/again", quiz.again, methods=["POST"]),
        Route("/s/{sid}/submit", quiz.submit_page),
        Route("/s/{sid}/rerate", quiz.rerate, methods=["POST"]),
        Route("/s/{sid}/feedback/{position:int}", quiz.feedback),
        Route("/s/{sid}/summary", quiz.summary),
        Route("/review", isolated(quiz.review_page, reuse=review_key)),
        Route("/review/start", quiz.review_start, methods=["POST"]),
        Route("/stats", isolated(quiz.stats, reuse=stats_key)),
        Route("/preview", quiz.preview_index),
        Route("/preview/{bank}", isolated(quiz.preview_bank, preview_key)),
        Route("/preview/{bank}/stamp", quiz.preview_stamp),
        Route("/preview/{bank}/{item}", isolated(quiz.preview_item, preview_key)),
        Assets(HERE / "static").route("/static"),
    ]
    if settings.scan is not None:
        from attnquiz.web import scan_review

        review = scan_review.ScanReviewPage(
            answers=settings.scan,
            review=scan_review.default_review(settings.scan),
            render=quiz.page,
            read_form=quiz.form,
            csrf=guard.csrf_token(scan_review.SCOPE),
            cpu_seconds=settings.time_limit,
        )
        routes[-1:-1] = scan_review.routes(review)
    app = Starlette(
        routes=routes,
        exception_handlers={HTTPException: quiz.not_found, 500: quiz.not_found},
    )
    return GuardMiddleware(app, guard), quiz


__all__ = ["BankRef", "QuizApp", "ServeSettings", "WebSession", "build_app"]
