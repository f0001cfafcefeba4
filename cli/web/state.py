"""The state behind the pages of `quiz serve`: the banks offered, the sessions in memory, their plumbing.

`QuizState` holds the settings, the guard, the sessions and the templates, and the plumbing the pages
share (rendering a page, finding a bank or a session, reading a form with its CSRF token, starting and
ending a session). Each group of pages is a class of its own module built on it (`home_pages`,
`session_pages`, `exam_pages`, `review_pages`, `preview_pages`); `attnquiz.web.app.QuizApp` puts them
together.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse

from attnquiz.engine.bank import finding as bank_files
from attnquiz.engine.errors import QuizError
from attnquiz.web import isolation, render
from attnquiz.web.history import HistoryVersion
from attnquiz.web.security import Guard
from attnquiz.wording import when

if TYPE_CHECKING:
    from attnquiz.engine.grading.outcome import Grade
    from attnquiz.engine.practice.planning import Plan
    from attnquiz.engine.practice.session import Session
    from attnquiz.engine.practice.store import Store


HERE = Path(__file__).resolve().parent
MAX_SESSIONS = 32
"""Sessions kept in memory; beyond it the oldest is closed (its answers are already in the history)."""
MAX_FORM_FIELDS = 200
CHILD_PAGE_MODULES = (
    "numpy.random",
    "platformdirs",
    "attnquiz.engine.practice.history_file",
    "attnquiz.engine.practice.history_records",
    "attnquiz.engine.practice.planning",
    "attnquiz.engine.practice.review",
    "attnquiz.engine.practice.session",
    "attnquiz.engine.practice.store",
    "attnquiz.web.history",
)
"""The modules that the pages rendered in a child import (`QuizState.prepare`)."""
START = "start"
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


class QuizState:
    """The state behind the pages (sessions in memory, history on disk), and the plumbing they share."""

    def __init__(self, settings: ServeSettings, guard: Guard) -> None:
        self.settings = settings
        self.guard = guard
        self.sessions: OrderedDict[str, WebSession] = OrderedDict()
        self.refs = _bank_refs(settings.banks)
        self.history_version = HistoryVersion(history_path(settings.db))
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
            start_csrf=self.guard.csrf_token(START),
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

        from attnquiz.engine.practice.history_file import StoreError
        from attnquiz.engine.practice.session import Session
        from attnquiz.engine.practice.store import open_store

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
        return self.register(web)

    def register(self, web: WebSession) -> WebSession:
        """Keep ``web`` among the sessions in memory, the oldest closed beyond `MAX_SESSIONS`."""
        self.sessions[web.id] = web
        while len(self.sessions) > MAX_SESSIONS:
            _, oldest = self.sessions.popitem(last=False)
            oldest.close()
        return web

    def _bank_file(self, bank_key: str | None) -> str:
        """The file of the bank offered as ``bank_key`` ("" when there is none to name)."""
        if bank_key is None:
            return ""
        try:
            return str(bank_files.find(self.bank_ref(bank_key).ref).path)
        except (QuizError, HTTPException):
            return ""

    def offering(self, bank: str, bank_ref: str, bank_path: str) -> BankRef | None:
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

    def finish_session(self, web: WebSession, ending: Any) -> None:
        web.session.finish(ending)
        web.warnings.extend(web.session.take_warnings())
        web.close()

    def close(self) -> None:
        """Close every session's history (the server is stopping)."""
        for web in self.sessions.values():
            web.close()
        self.history_version.close()


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


def found_files(quiz: QuizState) -> tuple[str, ...]:
    """The file each offered bank's name finds now, or why none is found."""
    found = []
    for ref in quiz.refs:
        try:
            found.append(str(bank_files.find(ref.ref).path))
        except QuizError as exc:
            found.append(f"{ref.ref}: {exc}")
    return tuple(found)


def history_path(db: Path | None) -> Path | None:
    """The history file the pages read, or None where there is none to find (no home folder)."""
    from attnquiz.engine.practice.history_file import StoreError, default_path

    try:
        return default_path(db)
    except StoreError:
        return None


def _clock(seconds: float) -> str:
    total = max(0, int(seconds + 0.999))
    minutes, secs = divmod(total, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _when(moment: datetime | None) -> str:
    """When a review falls due (`attnquiz.wording.when`); nothing for an item with no due date."""
    return "" if moment is None else when(moment)


__all__ = [
    "CHILD_PAGE_MODULES",
    "HERE",
    "MAX_FORM_FIELDS",
    "MAX_SESSIONS",
    "START",
    "BankRef",
    "QuizState",
    "ServeSettings",
    "WebSession",
    "found_files",
    "history_path",
]
